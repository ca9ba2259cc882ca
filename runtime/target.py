"""The machine's facts the optimizer's choices are made from: vector width, cache sizes, cores.

In: the machine (Linux's /proc/cpuinfo, /sys/devices/system/cpu/cpu0/cache, the process's CPU
affinity), the C flags (`RULEGRAD_CFLAGS`) and the overrides `RULEGRAD_VECTOR_BYTES`,
`RULEGRAD_L1_BYTES`, `RULEGRAD_L2_BYTES`, `RULEGRAD_L3_BYTES` and `RULEGRAD_THREADS`.
Out: `vector_bytes()` (32 or 64), `vector_registers()` (16 or 32), `cache_bytes(level)`,
`stack_bytes()`, `page_bytes()`, `cores()`, `threads()` (and SPLIT_PARTS, the partials threads
share a long reduce in), and `machine_id()`, a short digest naming the CPU (model, flags, cores)
for a cache of choices timed on it.

The machine is read once per process (the files do not change under a running program); an
override is read at each use, so a setting may change between programs. A value that is not a
size, or a thread count below 1, is an `EnvError` naming the variable. Where a file is absent
(not Linux, a container without sysfs) the fallbacks are a common x86-64 core's: 32 KB of L1
data cache, 512 KB of L2, 8 MB of L3, AVX2.

The packed products' tiles are TILE_ROWS rows x 2 registers of columns
(`rules/pack_helpers.py`), whatever the width: with 512-bit registers a tile holds twice the
columns, so each load of x and of the packed panel feeds twice the multiply-adds. On this
project's machine (AVX-512 cores with full-width FMA) a 512^3 matmul ran 1.6x faster than with
256-bit tiles (interleaved, 80 calls each; bench/kernels.py shows the ratio to numpy's BLAS).
The default builds with -march=native, so 512-bit tiles are used where the CPU has AVX-512F; a
user's RULEGRAD_CFLAGS without -march=native targets another CPU, so the tiles stay 256-bit
(what x86-64 compilers handle for any target). `RULEGRAD_VECTOR_BYTES=32` (or 64) chooses.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

from .env import EnvError, env_bytes, env_flag, env_get, env_int
from .record import FrozenRecord

CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
CPUINFO = Path("/proc/cpuinfo")
# a common x86-64 core's caches, used where sysfs does not say (by level)
FALLBACK_CACHE = {1: 32 << 10, 2: 512 << 10, 3: 8 << 20}


class Cpu(FrozenRecord):
    """What /proc/cpuinfo says of the first CPU: its model name and its flags."""

    __slots__ = ("model", "flags")
    model: str
    flags: frozenset[str]

    def __init__(self, model: str, flags: frozenset[str]):
        self._init(model, flags)


def parse_cpuinfo(text: str) -> Cpu:
    """The first processor's `model name` and `flags` lines of /proc/cpuinfo's text (empty when
    absent: another architecture's cpuinfo names them otherwise)."""
    model, flags = "", frozenset[str]()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip()
        if key == "model name" and not model:
            model = value.strip()
        elif key == "flags" and not flags:
            flags = frozenset(value.split())
        if model and flags:
            break
    return Cpu(model, flags)


def parse_size(text: str) -> int | None:
    """sysfs's cache size (`32K`, `1024K`, `32M`, or bytes) in bytes; None if it is not one."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text[:-1] if scale > 1 else text
    return int(digits) * scale if digits.isdigit() and int(digits) > 0 else None


def read_caches(root: Path) -> dict[int, int]:
    """The data (or unified) cache sizes of one CPU by level, from sysfs's `index*/` folders
    under `root` ({level, type, size} files); a level with no readable entry is absent."""
    sizes: dict[int, int] = {}
    try:
        entries = sorted(root.glob("index*"))
    except OSError:
        return sizes
    for entry in entries:
        try:
            level = int((entry / "level").read_text().strip())
            kind = (entry / "type").read_text().strip()
            size = parse_size((entry / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size is not None:
            sizes.setdefault(level, size)
    return sizes


@cache
def cpu() -> Cpu:
    """This machine's CPU (read once)."""
    try:
        return parse_cpuinfo(CPUINFO.read_text())
    except OSError:
        return Cpu("", frozenset())


@cache
def _caches() -> dict[int, int]:
    return {**FALLBACK_CACHE, **read_caches(CACHE_DIR)}


@cache
def cores() -> int:
    """The cores this process may run on (its CPU affinity), read once."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@cache
def page_bytes() -> int:
    """The memory page size (4 KB on x86-64 Linux): the hardware prefetchers stop at its end."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return 4096


def cache_bytes(level: int) -> int:
    """The size of one core's level-`level` data cache (1, 2 or 3) in bytes:
    `RULEGRAD_L{level}_BYTES` (`48K`, `2M`, bytes) if set, else sysfs's, else the fallback."""
    name = f"RULEGRAD_L{level}_BYTES"
    value = env_bytes(name, _caches()[level])
    if value < 1:
        raise EnvError(f"{name}={env_get(name)!r}: a cache size must be at least 1 byte")
    return value


# The most partial results per output a long reduce is split into: the scheduler's
# split_reduceop divisor (rules/rangeify.rules) and the blocks of a reduce the optimizer splits
# itself (rules/thread_helpers.py's `blocked`). tinygrad's split_reduceop bound; a documented
# constant, not a benchmark's shape: the static schedule gives each thread whole partials, so any
# thread count up to 64 takes shares within 1/4 of a partial's work of each other (4 a thread)
SPLIT_PARTS = 256
# A reduce along a contiguous loop keeps REDUCE_VECTORS vectors of partial results: one
# accumulator waits on its last step (a float add's latency, four operations for a
# NaN-propagating max), several keep the vector units busy. A softmax's 1024-wide row max ran
# in a third of the time with 4 (2: half, 8: no better than 4): a latency, not a size
REDUCE_VECTORS = 4
# A reduce over at most this many values is unrolled by the optimizer (rules/opt_helpers.py's
# small_reduce: a 4x4 pooling window; a 3x3 one is 9), and a column's reduce of at most this
# many values stays in its reader's kernel (rules/rangeify.rules' strided_why: unrolled there)
UNROLL_MAX = 16
# An explicit vector: 8 float32 lanes, 256 bits, on every target (the renderer's `rg_vf32`;
# gcc splits it without AVX2). Not a machine choice: at 512 bits a contiguous loop is left to
# gcc's `omp simd` instead (`upcast`), and only strided reads keep these
AVX2_BYTES = 32
VECTOR_LANES = AVX2_BYTES // 4


def vector_lanes(itemsize: int) -> int:
    """An explicit vector's lanes of `itemsize`-byte floats: 8 float32 (a float16's widened to
    them too), 4 float64 (a row reduce's partial results: rules/opt_helpers.py)."""
    return AVX2_BYTES // max(itemsize, 4)
# The most vectors of accumulators a float32 reduce over rows keeps in registers (of 16): a
# block of 8 x 8 columns, every row of the reduce read as 8 contiguous vectors into them
VECTORS_MAX = 8
# The fewest values per output the scheduler's split_reduceop splits (tinygrad's bound): a
# shorter reduction is one kernel's loop; rangeify.rules' narrow_reduce keeps its shares shorter, so
# its partials are not split again
SPLIT_MIN_ROWS = 32768


# Work below which a loop nest runs on one core (loop iterations x loads, or a packed product's
# multiply-adds; every action's: packing, PARALLEL, THREAD, FLASH, an interchange's blocks, and
# the scheduler's questions of what the threads share): waking the thread team (microseconds)
# costs more than the split saves. A ratio of a latency to an operation's time, neither a size
# nor a width: a constant until search (RULEGRAD_BEAM's `parallel_min_work`) times it per
# machine. Read through `parallel_min_work()`, so a test patches it here, once
PARALLEL_MIN_WORK = 1 << 20


def parallel_min_work() -> int:
    """The least work a loop nest takes threads for (`PARALLEL_MIN_WORK`, read at each call)."""
    return PARALLEL_MIN_WORK


# The most bytes of arrays one kernel declares on one thread's stack, all of them together: every
# array the optimizer sizes from a cache fact (the flash kernel's panels and tiles, kernel-local
# rows, staged operands, packed panels) is capped by it, whatever the caches say. A safety bound,
# not a speed one: OpenMP's threads get glibc's default stack (2 MB where the stack limit is
# unlimited, else the limit, 8 MB by default), and a bound from L2 alone overflowed it where L2
# is large (a 16 MB L2, Apple M2's clusters, put 8 MB of a float64 row on the stack; 32 MB of L2
# gave the flash kernel 16 MB of panels): the process died (SIGSEGV). Half of the smallest.
STACK_BYTES = 1 << 20


def stack_bytes() -> int:
    """The stack budget of one kernel on one thread, in bytes (`STACK_BYTES`: see its comment)."""
    return STACK_BYTES


def block_library() -> bool:
    """Whether kernels call the block library (backends/c/blocks.py: register blocks, panel
    copies, row reductions) rather than print that code themselves (`RULEGRAD_BLOCK_LIBRARY`,
    default on): a fact of the build the packing action reads too (a streamed y is read by the
    library's blocks only)."""
    return env_flag("RULEGRAD_BLOCK_LIBRARY", True)


def threads() -> int:
    """How many threads a kernel's threaded loop is split across: `RULEGRAD_THREADS`, else
    OpenMP's own `OMP_NUM_THREADS` when it is one whole number, else the usable cores."""
    omp = (env_get("OMP_NUM_THREADS") or "").strip()
    default = int(omp) if omp.isdigit() and int(omp) > 0 else cores()
    return env_int("RULEGRAD_THREADS", default, minimum=1)


def vector_bytes() -> int:
    """The packed products' vector register width in bytes (read at each use: the setting may
    change between programs; the machine's answer is read once)."""
    text = (env_get("RULEGRAD_VECTOR_BYTES") or "").strip()
    if text:
        if text not in ("32", "64"):
            raise EnvError(f"RULEGRAD_VECTOR_BYTES={text!r}: expected 32 (256-bit vectors) "
                           f"or 64 (512-bit, AVX-512)")
        return int(text)
    flags = env_get("RULEGRAD_CFLAGS")
    if flags is not None and flags.strip() and "-march=native" not in flags.split():
        return 32
    return 64 if "avx512f" in cpu().flags else 32


def f16c() -> bool:
    """Whether kernels are built for F16C's 8-lane float16 conversions (the CPU has them and
    the flags target it: -march=native, the default), which the block library's float16 panel
    copy takes (`__F16C__`); else it widens lane by lane in software (read at each use). The
    compiler's last word on it wins: -mf16c, -mno-f16c, -mno-avx (which takes F16C with it),
    in RULEGRAD_CFLAGS or RULEGRAD_CC's words after its program; another -march, no F16C."""
    flags = (env_get("RULEGRAD_CFLAGS") or "").split() or ["-march=native"]
    on = "-march=native" in flags and "f16c" in cpu().flags
    for word in flags + (env_get("RULEGRAD_CC") or "").split()[1:]:
        if word in ("-mf16c", "-mno-f16c", "-mno-avx"):
            on = word == "-mf16c"
    return on


def vector_registers() -> int:
    """The vector registers a register tile may use: AVX-512's 32 at 512 bits, else AVX2's 16."""
    return 32 if vector_bytes() == 64 else 16


def machine_id() -> str:
    """A short digest of what makes a timing on this machine valid on another: the CPU model,
    its flags and the usable cores (a key for choices timed here)."""
    c = cpu()
    text = f"{c.model}\n{' '.join(sorted(c.flags))}\n{cores()}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
