"""Data types: the scalar types rulegrad computes in, their numpy mapping, and promotion.

`dtypes.index` is the type of index arithmetic (RANGE, INDEX offsets); it is a 64-bit signed
integer in numpy and C but kept distinct so rules can tell index math from tensor data.
Promotion follows numpy (`np.result_type`), including numpy 2's weak Python scalars.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import DtypeError


class UnknownDType(ValueError, AttributeError):
    """A dtype name that does not exist: a ValueError, and an AttributeError as tinygrad's
    `getattr(dtypes, name)` raises."""


# eq=False: dtypes are singletons, so identity is equality and hashing is free
@dataclass(frozen=True, eq=False)
class DType:
    name: str
    itemsize: int
    kind: str  # 'b' bool, 'i' signed int, 'u' unsigned int, 'f' float, 'x' index
    np_name: str

    def __repr__(self) -> str:
        return f"dtypes.{self.name}"

    # a singleton (compared by `is` everywhere): a pickled or copied dtype is the very object,
    # by its name (a dataclass's own pickling made a second float32 equal to none: a pickled
    # tensor's assign refused its own dtype, and every `dtype is` test missed)
    def __reduce__(self) -> tuple:
        return (_by_name, (self.name,))

    @functools.cached_property
    def np(self) -> np.dtype:
        # made once: np.dtype(name) costs a microsecond, paid per Tensor made from host data
        return np.dtype(self.np_name)

    # (kept on the instance at the first read, as `np` is: a dtype's kind never changes, and
    # rules, gradients and tensor ops read these on most nodes; a property was a Python call
    # each time, some eighty of a training step's gradient)
    @functools.cached_property
    def is_int(self) -> bool:
        """True for signed/unsigned integers and index (not bool)."""
        return self.kind in "iux"

    @functools.cached_property
    def is_unsigned(self) -> bool:
        return self.kind == "u"

    @functools.cached_property
    def is_float(self) -> bool:
        return self.kind == "f"

    @functools.cached_property
    def is_bool(self) -> bool:
        return self.kind == "b"

    # cached: numpy's iinfo is built anew at each call (~3 us), and `rulegrad check`'s example
    # draws ask some 2.6 million times a rule set
    @functools.cached_property
    def min(self) -> int | float | bool:
        if self.kind == "b":
            return False
        if self.kind == "f":
            return float("-inf")
        return int(np.iinfo(self.np).min)

    @functools.cached_property
    def max(self) -> int | float | bool:
        if self.kind == "b":
            return True
        if self.kind == "f":
            return float("inf")
        return int(np.iinfo(self.np).max)


class dtypes:  # noqa: N801 - mirrors tinygrad's spelling
    bool = DType("bool", 1, "b", "bool")
    int8 = DType("int8", 1, "i", "int8")
    int16 = DType("int16", 2, "i", "int16")
    int32 = DType("int32", 4, "i", "int32")
    int64 = DType("int64", 8, "i", "int64")
    uint8 = DType("uint8", 1, "u", "uint8")
    uint16 = DType("uint16", 2, "u", "uint16")
    uint32 = DType("uint32", 4, "u", "uint32")
    uint64 = DType("uint64", 8, "u", "uint64")
    float16 = DType("float16", 2, "f", "float16")
    float32 = DType("float32", 4, "f", "float32")
    float64 = DType("float64", 8, "f", "float64")
    index = DType("index", 8, "x", "int64")
    void = DType("void", 0, "v", "void")
    # aliases, as tinygrad and numpy spell them
    half, float, double = float16, float32, float64
    int, long, uchar, char, short = int32, int64, uint8, int8, int16
    default_float = float32
    default_int = int32

    @staticmethod
    def all() -> tuple[DType, ...]:
        return DTYPES

    @staticmethod
    def from_np(dt: np.dtype | type) -> DType:
        try:  # (asked once per numpy dtype: its `name` costs microseconds)
            return _BY_NP[dt]
        except (KeyError, TypeError):  # (TypeError: a spec numpy reads that is no key)
            pass
        name = np.dtype(dt).name
        if name not in DTYPE_BY_NAME or name == "index":
            raise ValueError(f"unsupported numpy dtype {name!r}; supported: {DTYPE_NAMES}")
        out = DTYPE_BY_NAME[name]
        if len(_BY_NP) < 256:  # (bounded: every byte order and alias of a dtype is a key)
            _BY_NP[dt] = out
        return out

    @staticmethod
    def from_name(name: str) -> DType:
        if name in DTYPE_BY_NAME:
            return DTYPE_BY_NAME[name]
        raise UnknownDType(f"unknown dtype name {name!r}; supported: {DTYPE_NAMES}")


DTYPES: tuple[DType, ...] = (
    dtypes.bool, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
    dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.float16, dtypes.float32, dtypes.float64,
)
# every name a dtype goes by (its own, and the aliases tinygrad and numpy spell it with)
DTYPE_BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES} | {
    "index": dtypes.index, "half": dtypes.float16, "float": dtypes.float32,
    "double": dtypes.float64, "int": dtypes.int32, "long": dtypes.int64,
}
DTYPE_NAMES = ", ".join(d.name for d in DTYPES)


def _by_name(name: str) -> DType:
    """The dtype an unpickled one is (`DType.__reduce__`): each is a class attribute of
    `dtypes` by its name (void included, which no tensor has)."""
    return getattr(dtypes, name)
_BY_NP: dict[object, DType] = {}  # numpy dtypes (and types, names) seen by `from_np`

# dtype classes usable in rule patterns (`x:int`): a name -> predicate on DType
DTYPE_CLASSES: dict[str, frozenset[DType]] = {
    "ints": frozenset(d for d in DTYPES if d.is_int) | {dtypes.index},
    "sints": frozenset(d for d in DTYPES if d.kind == "i") | {dtypes.index},
    "uints": frozenset(d for d in DTYPES if d.kind == "u"),
    "floats": frozenset(d for d in DTYPES if d.is_float),
    "bools": frozenset({dtypes.bool}),
}


def to_dtype(x: DType | str | np.dtype | type) -> DType:
    """Accept a DType, its name, or a numpy dtype/type."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        return dtypes.from_name(x)
    try:
        return dtypes.from_np(x)
    except TypeError:  # (numpy's "Cannot interpret '3' as a data type" named no argument)
        raise TypeError(f"dtype must be a DType, its name or a numpy dtype, got "
                        f"{type(x).__name__} {x!r}") from None


def python_scalar(value: object) -> object:
    """A numpy scalar (np.int64, np.float32, np.bool_, ...) as the Python scalar it holds, and
    anything else as it is: a creation function then picks the dtype the Python number gets
    (`arange(np.int64(5))` is int, as `arange(5)`; `full(s, np.bool_(True))` is bool)."""
    return value.item() if isinstance(value, np.generic) else value


def promote(*items: DType | bool | int | float) -> DType:
    """numpy's result type of the operands; Python scalars are weak (numpy 2, NEP 50)."""
    args = [i.np if isinstance(i, DType) else i for i in items]
    return dtypes.from_np(np.result_type(*args))


def accumulate_float(dt: DType) -> DType:
    """The float type a sum over `dt` runs in: float32 for float16, whose squares overflow past
    256 and fall to subnormals below 2.4e-4 (numpy's mean and torch's norms do the same)."""
    return dtypes.float32 if dt is dtypes.float16 else dt


def least_float(dt: DType) -> DType:
    """The float type numpy computes a float function of `dt` in (sqrt, exp, true division)."""
    if dt.is_float:
        return dt
    return dtypes.from_np(np.sqrt(np.zeros(1, dt.np)).dtype)


def unary_result(name: str, fn: Callable, dt: DType) -> DType:
    """The dtype numpy's unary `fn` gives on `dt`: with no loop for bool, numpy takes the first
    a bool casts to safely (`np.square(bool)` is int8) or its float16 (`np.round(bool)`).
    Where numpy has no loop at all (`np.sign(bool)`), a TypeError that names the op `name`."""
    try:
        return _unary_result(fn, dt)
    except TypeError:  # (numpy's "did not contain a loop with signature" names no op)
        raise DtypeError(f"{name} of a {dt.name} tensor is not defined (numpy has no "
                        f"{dt.name} {fn.__name__}); cast it first (x.int())") from None


@functools.cache
def _unary_result(fn: Callable, dt: DType) -> DType:
    with np.errstate(all="ignore"):
        return dtypes.from_np(np.asarray(fn(np.zeros(1, dt.np))).dtype)


# The ints torch's scalar argument (c10::Scalar) holds: an int64 or a uint64. A fill, a
# select's or a masked fill's value, a comparison's or an arithmetic operand past them is
# refused by torch ("int too big to convert") for every dtype, bool and float too.
SCALAR_INT_MIN, SCALAR_INT_MAX = -2 ** 63, 2 ** 64 - 1


def scalar_int(value: object, what: str, hi: int = SCALAR_INT_MAX) -> None:
    """Refuse a Python int outside [-2**63, hi] as a scalar argument, as torch refuses it (hi:
    2**64 - 1, or 2**63 - 1 for an item write, where torch reads an int64 only). Rounded to
    a float or to True, it was stored where torch refuses, and a user who meant it exactly
    never learned that it was not."""
    if type(value) is int and not SCALAR_INT_MIN <= value <= hi:
        top = "2**64 - 1" if hi == SCALAR_INT_MAX else "2**63 - 1" if hi == 2 ** 63 - 1 else hi
        raise OverflowError(f"{what}: the int {value} is outside [-2**63, {top}], what a scalar "
                            f"argument holds (torch refuses it too); pass float({value}) for "
                            "its nearest float")


def stored_scalar(value: int | float | bool, dt: DType, what: str, *,
                  strict_unsigned: bool = False, check_float: bool = True,
                  widest: int | None = SCALAR_INT_MAX) -> int | float | bool:
    """A Python number stored into a tensor of `dt` as torch stores it (a fill, a select's or a
    masked fill's scalar, a written item, a pad value): torch's checked conversion
    (c10::checked_convert), where an arithmetic operand wraps instead (`_scalar_operand`).

    - bool holds any number (nonzero is True);
    - an int type holds an int in its range, and an unsigned type a negative int down to
      -max too, wrapped to its bits (uint8: -1 is 255, -256 refused), except where
      `strict_unsigned` (torch's pad); a float is truncated if it lies in the range (NaN and
      the infinities never do);
    - a float type holds any int and float, refused past its largest finite value unless
      `check_float` is off (torch's `t[i] = 1e5` in float16 stores inf).
    Anything else raises OverflowError naming `what`: wrapping it would store a value that was
    never written (numpy's where gave `uint8.where(c, 300)` 44). So does an int outside
    [-2**63, widest] (`scalar_int`), into any dtype; `widest=None` takes any int (torch.tensor's
    data: `Tensor(2**70, dtype=float32)` is its nearest float, as torch's)."""
    if widest is not None:
        scalar_int(value, what, widest)
    if dt.kind == "b":
        return bool(value)
    if dt.is_int:
        lo, hi = dt.min, dt.max
        if isinstance(value, float):
            if lo <= value <= hi:  # (False for NaN)
                return int(value)
        else:
            v = int(value)
            if -hi <= v < 0 and dt.is_unsigned and not strict_unsigned:
                return v + (1 << (8 * dt.itemsize))
            if lo <= v <= hi:
                return v
        raise OverflowError(f"{what}: {value!r} cannot be converted to {dt.name} without "
                            f"overflow (it holds [{lo}, {hi}]; torch refuses it too)")
    if dt.is_float and check_float and abs(value) > _float_max(dt) and value - value == 0:
        raise OverflowError(f"{what}: {value!r} cannot be converted to {dt.name} without "
                            f"overflow (its largest finite value is {_float_max(dt)}; torch "
                            "refuses it too)")
    return value


@functools.cache
def _float_max(dt: DType) -> float:
    return float(np.finfo(dt.np).max)
