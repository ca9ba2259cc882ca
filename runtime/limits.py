"""Size checks before work: memory that cannot be held, and work that cannot be done.

Two limits, checked apart, because a lazy tensor is not a buffer:

- Memory (`check_buffer`): a buffer a program allocates (a schedule's outputs and
  intermediates, checked before the first kernel runs; `rand` and `arange`, made on the host)
  larger than `RULEGRAD_MAX_BUFFER_BYTES` (`64M`, `8G`, bytes; default half of the machine's
  physical memory) is refused. A view (an expand, a pad, a broadcast product inside a matmul
  or a convolution) allocates nothing, on any backend, and is never counted:
  `Tensor.empty(2048, 2048) @ Tensor.empty(2048, 2048)` holds three 16 MB buffers.
- Work (`check_shape`, per tensor as it is built): a lazy tensor of N elements is looped over
  N times by the kernel that computes or reads it, so a tensor larger than
  `RULEGRAD_MAX_WORK` elements (default 2**40: past a trillion iterations, many minutes of
  every core, a program that is almost surely a wrong pad or expand) is refused at once,
  before anything is scheduled: `Tensor(np.ones(2)).pad(((2**40, 2**40),)).sum()`.

Each error names the op, the shape, the size and the limit.
"""

from __future__ import annotations

import os

from .dtype import DType
from .env import env_bytes, env_get, env_int
from .errors import InvalidArgument

_default: int | None = None
ALWAYS_ALLOWED = 1 << 20  # a buffer of at most 1 MB, a tensor of 1M elements: never refused
DEFAULT_MAX_WORK = 1 << 40


class SizeLimitError(InvalidArgument, MemoryError):
    """A buffer larger than RULEGRAD_MAX_BUFFER_BYTES, or a tensor of more elements (a kernel
    of more iterations) than RULEGRAD_MAX_WORK."""


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


_parsed_work: tuple[str | None, int] = ("", 0)


def max_work() -> int:
    """The largest number of elements a tensor may have (parsed again when the variable
    changes)."""
    global _parsed_work
    text = env_get("RULEGRAD_MAX_WORK")
    if _parsed_work[0] != text or not _parsed_work[1]:
        _parsed_work = (text, env_int("RULEGRAD_MAX_WORK", DEFAULT_MAX_WORK, minimum=1))
    return _parsed_work[1]


def _human(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError


def check_shape(shape: tuple | None, dtype: DType, what: str) -> None:
    """Refuse a tensor of this shape (a symbolic size counts at its maximum) with more
    elements than `max_work` (`what`: the op that made it): a kernel would loop that often."""
    if not shape:
        return
    numel = 1
    for s in shape:
        numel *= s if type(s) is int else int(s.vmax)
    if numel <= ALWAYS_ALLOWED:  # most tensors: no environment read (a tenth of an op's cost)
        return
    limit = max_work()
    if numel > limit:
        raise SizeLimitError(
            f"{what} would make a tensor of shape {shape} {dtype.name}: {numel:,} elements, "
            f"which a kernel would loop over {numel:,} times, more than the limit of "
            f"{limit:,} iterations (RULEGRAD_MAX_WORK)")


def check_buffer(numel: int, dtype: DType, what: str) -> None:
    """Refuse to allocate a buffer of `numel` elements of `dtype` above
    RULEGRAD_MAX_BUFFER_BYTES (`what`: what it is for)."""
    nbytes = numel * dtype.itemsize
    if nbytes <= ALWAYS_ALLOWED:
        return
    limit = max_buffer_bytes()
    if nbytes > limit:
        raise SizeLimitError(
            f"{what} would allocate a buffer of {numel:,} {dtype.name}: {_human(nbytes)}, more "
            f"than the limit of {_human(limit)} (RULEGRAD_MAX_BUFFER_BYTES; half the machine's "
            "memory by default)")
