"""The roofline: what a kernel moves and computes, and what this machine can do.

In: a kernel AST (backends/KERNEL_AST.md, as the scheduler made it) and its buffers. Out:
`work(ast, bufs)`, the bytes its buffers hold and the float operations it performs (counted
from the AST, never timed); `machine()`, this machine's copy bandwidth and fused-multiply-add
peak, measured once per process; `line(...)` prints a kernel's achieved rates beside them.
`DEBUG=1` and `bench/kernels.py` print them.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import free_ranges
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.target import vector_bytes
from rulegrad.runtime.uop import UOp, toposort


@dataclass(frozen=True)
class Work:
    nbytes: int  # every buffer the kernel reads or writes, once
    flops: int   # float ALU operations (MULACC 2), each REDUCE's combining op included


def work(ast: UOp, nbytes: Sequence[int]) -> Work:
    """Bytes and float operations of one kernel: each float ALU node counts once per point of
    the ranges it depends on (a node outside a reduce is computed once per output, a
    kernel-local array's values once: runtime/loops.py's free_ranges), a float REDUCE's
    combining op once per value it reduces."""
    order = toposort(ast)
    deps = free_ranges(ast, order)
    flops = 0
    for n in order:
        if n.op is Ops.REDUCE and n.dtype.is_float:
            flops += _points(deps[n] | frozenset(n.src[1:]))
        elif n.op in GroupOp.ALU and n.dtype.is_float:
            flops += _points(deps[n]) * (2 if n.op is Ops.MULACC else 1)
    return Work(int(sum(nbytes)), flops)


def _points(ranges: frozenset[UOp]) -> int:
    return math.prod(int(r.src[0].arg) for r in ranges if r.src[0].op is Ops.CONST)


@dataclass(frozen=True)
class Machine:
    copy_gbs: float   # bytes read + written per second by a large copy (numpy), in GB/s
    fma_gflops: float  # float32 multiply-adds x 2 per second, all threads, in GFLOP/s
    vector_bits: int  # the width of the vectors fma_gflops was measured in


# 12 independent accumulators per thread, in the packed loops' vector registers (256- or
# 512-bit: runtime/target.py), fused multiply-add chains long enough to hide its latency. Each
# thread adds its rate over its own CPU time, so time the thread spent preempted by other load
# is not counted against the CPU
_PEAK_SOURCE = r"""
#include <time.h>
void rg_fma_peak(void *v0)
{
  double *out = (double *)v0;
  #pragma omp parallel
  {
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    VT acc[12], m = (VT){0}, c = (VT){0};
    m += 0.999999f; c += 1e-7f;
    for (int u = 0; u < 12; u++) acc[u] = (VT){0} + (float)u;
    for (long i = 0; i < 200000; i++) {
      #pragma GCC unroll 12
      for (int u = 0; u < 12; u++) acc[u] = FMA(acc[u], m, c);
    }
    float s = 0;
    for (int u = 0; u < 12; u++) for (int l = 0; l < LANES; l++) s += acc[u][l];
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    const double sec = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    #pragma omp atomic
    out[0] += (s == s ? 1.0 : 0.0) / sec;  /* threads' rates add (s keeps the loop alive) */
  }
}
"""


@functools.cache
def machine() -> Machine:
    """This machine's copy bandwidth and FMA peak: the best of a few runs (a shared machine's
    other load only ever slows a run down)."""
    from .build import build_library
    from .ctext import RenderedKernel, vector_names

    src = np.ones(1 << 23, np.float32)  # 32 MB: past every cache
    dst = np.empty_like(src)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    copy = 2 * src.nbytes / best / 1e9
    lanes = vector_bytes() // 4
    vt, fma = vector_names(dtypes.float32, lanes)
    source = (_PEAK_SOURCE.replace("VT", vt).replace("FMA", fma)
              .replace("LANES", str(lanes)))
    lib = build_library([RenderedKernel("rg_fma_peak", source, 1, (dtypes.float64,),
                                        openmp=True)])
    fn = lib.function("rg_fma_peak", 1)
    out = np.zeros(1, np.float64)
    rate = 0.0
    for _ in range(5):
        out[:] = 0
        fn(out.ctypes.data)
        rate = max(rate, float(out[0]))  # loops per second, summed over the threads
    peak = rate * 200000 * 12 * lanes * 2 / 1e9  # loops x FMAs x lanes x 2 flops
    return Machine(copy, peak, 8 * vector_bytes())


def line(w: Work, seconds: float) -> str:
    """`12.3 GB/s (61% of copy), 4.5 GFLOP/s (3% of FMA peak)` for one kernel run."""
    m = machine()
    gbs = w.nbytes / seconds / 1e9 if seconds > 0 else 0.0
    gfl = w.flops / seconds / 1e9 if seconds > 0 else 0.0
    return (f"{gbs:7.2f} GB/s ({100 * gbs / m.copy_gbs:3.0f}% of copy {m.copy_gbs:.1f}), "
            f"{gfl:7.2f} GFLOP/s ({100 * gfl / m.fma_gflops:3.0f}% of FMA peak "
            f"{m.fma_gflops:.0f})")
