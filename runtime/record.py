"""Frozen records for the modules a process's first realize imports.

In: a class that lists its fields in `__slots__` and sets them in its own `__init__` (whose
parameters are the fields, by name) through `_init`. Out: a frozen value whose equality, hash
and repr are its fields', in their order, as a `@dataclass(frozen=True)` would give
(`View(shape=(4,), strides=(1,), offset=0, mask=None)`), and `replace(**changes)`.

Why not a dataclass: `@dataclass` writes each method as source and compiles it when its class
is made, ~0.6 ms a class (callgrind: 2-3M instructions), and the first tiny add of a fresh
process imports a dozen of them. A record costs what a plain class does.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

_set = object.__setattr__


class FrozenRecord:
    """Base of a frozen record: fields are its `__slots__`, set once in `__init__` by `_init`."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _values: Any = staticmethod(lambda self: ())

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields = cls._fields + tuple(cls.__dict__.get("__slots__", ()))  # (its bases' first)
        # (a tuple of the fields, read in C: the hash and equality of a record in a key)
        getter = attrgetter(*cls._fields) if cls._fields else (lambda self: ())
        cls._values = staticmethod(getter if len(cls._fields) != 1  # type: ignore[assignment]
                                   else lambda self, g=getter: (g(self),))

    def _init(self, *values: Any) -> None:
        for name, value in zip(self._fields, values):
            _set(self, name, value)

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (`dataclasses.replace`; `__init__` takes the fields
        by their names)."""
        return type(self)(**{**dict(zip(self._fields, self._values(self))), **changes})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen "
                             f"{type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values(self) == other._values(other)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self._values(self)))
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple:  # (pickled by its fields: no __dict__ to copy)
        return (type(self), self._values(self))
