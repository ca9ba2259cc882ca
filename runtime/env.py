"""rulegrad's environment variables, read and validated at use (never at import).

In: a variable's name and what it may hold. Out: its value, or `EnvError` naming the variable,
what it holds and what it should hold. A typo (`RULEGRAD_REWRITE_BUDGET=abc`, `DEBUG=two`) is
a clear error where the value is needed, not a traceback from `int()` or an `import rulegrad`
that fails. `environ_version()` changes with every write to os.environ and every `changed()`
(a tracing block entered or left, a user's pass added or removed): what a hot path derives from
many variables and switches (runtime/plans.py's settings) is read again only when it changed.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator

_ON = ("1", "on", "true", "yes")
_OFF = ("", "0", "off", "false", "no")

# `os.environ.get(name)` of an unset name goes Mapping.get -> __getitem__ -> encodekey -> a raised
# and caught KeyError: a few microseconds, and a schedule reads about twenty settings (a tenth
# of a small program's scheduling time). The table behind os.environ (POSIX: bytes keys) is
# read directly instead; os.environ's own writes (and monkeypatch's) keep it current.
_environ = os.environ
try:
    _data: dict | None = _environ._data  # type: ignore[attr-defined]
    _encodekey = _environ.encodekey  # type: ignore[attr-defined]
    _decodevalue = _environ.decodevalue  # type: ignore[attr-defined]
except AttributeError:
    _data = None
_keys: dict[str, object] = {}  # name -> its key in the raw table


def env_get(name: str) -> str | None:
    """`os.environ.get(name)`, at the cost of a dict lookup."""
    if _data is None or os.environ is not _environ:
        return os.environ.get(name)
    key = _keys.get(name)
    if key is None:
        key = _keys[name] = _encodekey(name)
    raw = _data.get(key)
    return None if raw is None else _decodevalue(raw)


# Every write through os.environ (`os.environ[k] = v`, `del`, `pop`, `update`, `setdefault`,
# monkeypatch.setenv: all go through __setitem__ / __delitem__) moves `generation` on, so a value
# derived from the environment is kept until the next write instead of being read per call. So
# does every other change to what the pipeline would do (`changed()`): one integer compare says
# that nothing a realize plan depends on moved (three calls per small realize did before). The
# class of the one os.environ object is swapped for a subclass that counts (no other mapping, and
# no behaviour, changes). os.putenv writes past os.environ, which rulegrad never reads anyway.
generation = 0


class _CountingEnviron(type(_environ)):  # type: ignore[misc]
    # (counted after the write: a reader in another thread that sees the new count also sees
    # the new value)
    def __setitem__(self, key: str, value: str) -> None:
        global generation
        super().__setitem__(key, value)
        generation += 1

    def __delitem__(self, key: str) -> None:
        global generation
        super().__delitem__(key)
        generation += 1


try:
    if type(_environ) is not _CountingEnviron:  # (a reload of this module counts once)
        _environ.__class__ = _CountingEnviron
except TypeError:  # an environ that is not os._Environ: no counting, every read is live
    pass
_counting = type(_environ) is _CountingEnviron


def changed() -> None:
    """Something besides os.environ that decides what the pipeline does has changed (a tracing
    block entered or left: runtime/rewrite.py; a user's pass added or removed:
    runtime/schedule.py): a value derived under `environ_version()` is derived again."""
    global generation
    generation += 1


def environ_version() -> object:
    """Something equal to its last value exactly while nothing was written to os.environ and
    nothing `changed()` (a new object per call when writes cannot be counted: os.environ
    replaced, a strange platform)."""
    if _counting and os.environ is _environ:
        return generation
    return object()


def counted_environ() -> object:
    """The os.environ object whose writes `generation` counts (None when writes cannot be
    counted): while `os.environ is counted_environ()`, `generation` is `environ_version()`, read
    inline by a hot path without a call."""
    return _environ if _counting else None


def raw_reader(names: tuple[str, ...]) -> Callable[[], tuple]:
    """A function giving the current values of `names` as one tuple, undecoded (bytes from the
    raw table on POSIX): a cache key, at the cost of a lookup per name."""
    if _data is None:
        return lambda: tuple(os.environ.get(n) for n in names)
    keys, get = tuple(map(_encodekey, names)), _data.get
    return lambda: tuple(map(get, keys)) if os.environ is _environ \
        else tuple(os.environ.get(n) for n in names)


@contextlib.contextmanager
def env_set(values: dict[str, str]) -> Iterator[None]:
    """os.environ with `values` set for the block; after it, each variable as it was (unset
    where it was unset), whatever the block raised."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class EnvError(ValueError):
    """An environment variable holds a value rulegrad cannot use."""


def env_int(name: str, default: int, minimum: int = 0) -> int:
    """A whole number of at least `minimum` (`1_000` and `1000` both read)."""
    text = env_get(name)
    if not text or not (text := text.strip()):
        return default
    try:
        value = int(text)
    except ValueError:
        raise EnvError(f"{name}={text!r}: expected a whole number (at least {minimum})") from None
    if value < minimum:
        raise EnvError(f"{name}={value}: must be at least {minimum}")
    return value


def env_flag(name: str, default: bool = False) -> bool:
    """On (`1`, `on`, `true`, `yes`) or off (`0`, `off`, `false`, `no`, empty)."""
    raw = env_get(name)
    if raw is None:
        return default
    text = raw.strip().lower()
    if text in _ON:
        return True
    if text in _OFF:
        return False
    raise EnvError(f"{name}={raw!r}: expected 1 or 0 (on/off, true/false, yes/no)")


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


def env_bytes(name: str, default: int) -> int:
    """A size in bytes: `1048576`, `64K`, `500M`, `2G`, `1.5T` (powers of 1024)."""
    text = (env_get(name) or "").strip()
    if not text:
        return default
    m = _SIZE.fullmatch(text)
    if m is None:
        raise EnvError(f"{name}={text!r}: expected a size, e.g. 500M, 2G or a number of bytes")
    unit = m.group(2).lower()
    return int(float(m.group(1)) * (1024 ** ("kmgt".index(unit) + 1) if unit else 1))
