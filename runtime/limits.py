"""Size checks before work: a tensor too large to hold is refused where it is made.

In: a lazy tensor's shape and dtype, as each Tensor is built. Out: nothing, or `SizeLimitError`
naming the op, the shape, its size and the limit. Every buffer a program allocates holds some
tensor's value, and a view (a pad, an expand) stands for as many elements as its shape says,
which a fused kernel then loops over: `Tensor(np.ones(2)).pad(((2**40, 2**40),)).sum()` would
loop 2**41 times. Checking the logical size of every tensor at the Tensor API refuses such a
program at once, before anything is scheduled or run.

The limit is `RULEGRAD_MAX_BUFFER_BYTES` (`64M`, `8G`, bytes), by default half of the machine's
physical memory; a tensor of at most 1 MB is always allowed.
"""

from __future__ import annotations

import os

from .dtype import DType
from .env import env_bytes, env_get
from .errors import InvalidArgument

_default: int | None = None
_ALWAYS_ALLOWED = 1 << 20  # a tensor of at most 1 MB is never refused


class SizeLimitError(InvalidArgument, MemoryError):
    """A tensor larger than RULEGRAD_MAX_BUFFER_BYTES."""


def default_limit() -> int:
    global _default
    if _default is None:
        try:
            _default = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
        except (ValueError, OSError, AttributeError):  # no sysconf: assume 16 GB of memory
            _default = 8 << 30
    return _default


_parsed: tuple[str | None, int] = ("", 0)


def max_buffer_bytes() -> int:
    """The limit in bytes (parsed again only when the variable changes: read per tensor)."""
    global _parsed
    text = env_get("RULEGRAD_MAX_BUFFER_BYTES")  # (os.environ.get: 1.5 us, per large tensor)
    if _parsed[0] != text or not _parsed[1]:
        _parsed = (text, env_bytes("RULEGRAD_MAX_BUFFER_BYTES", default_limit()))
    return _parsed[1]


def _human(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError


def check_shape(shape: tuple | None, dtype: DType, what: str) -> None:
    """Refuse a tensor of this shape (a symbolic size counts at its maximum) and `dtype` above
    the limit (`what`: the op that made it)."""
    if not shape:
        return
    numel = 1
    for s in shape:
        numel *= s if type(s) is int else int(s.vmax)
    nbytes = numel * dtype.itemsize
    if nbytes <= _ALWAYS_ALLOWED:  # most tensors: no environment read (a tenth of an op's cost)
        return
    limit = max_buffer_bytes()
    if nbytes > limit:
        raise SizeLimitError(
            f"{what} would make a tensor of shape {shape} {dtype.name}: {_human(nbytes)}, more "
            f"than the limit of {_human(limit)} (RULEGRAD_MAX_BUFFER_BYTES; half the machine's "
            "memory by default)")
