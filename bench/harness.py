"""What every side-by-side benchmark needs: the machine's peaks, interleaved medians, peers.

In: functions to time. Out: wall-clock medians measured in one run, and the two roofs a case is
judged against: the measured FMA peak (products, convolutions) and the measured copy bandwidth
(memory-bound cases). Both roofs are measured here by small C kernels of our own, compiled with
the system's compiler, on every thread the benchmarks use: they are facts of this machine, not
constants.

Peers (torch, jax) are optional imports: a missing one is reported and skipped, never a
failure. They are bench-only (`pip install -e ".[bench]"`), never a rulegrad dependency.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence

import numpy as np

THREADS = int(os.environ.get("RULEGRAD_THREADS", "2"))
# every framework's threads sleep when idle, so that none spins while another runs
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ.setdefault("RULEGRAD_BACKEND", "c")

# Independent fused multiply-adds on every vector lane of every thread: ACC chains hide the
# FMA latency (4 cycles on most cores, 2 units per core -> at least 8 chains in flight).
_PEAK_SOURCE = r"""
#ifdef __AVX512F__
#define LANES 16
#else
#define LANES 8
#endif
typedef float vf __attribute__((vector_size(LANES * 4)));
#define ACC 12
double rg_fma_peak(long iters) {
  double total = 0;
  #pragma omp parallel reduction(+:total)
  {
    vf a[ACC], b, c;
    for (int i = 0; i < LANES; i++) { b[i] = 0.999999f; c[i] = 1e-6f; }
    for (int k = 0; k < ACC; k++) a[k] = b * (float)(k + 1);
    for (long it = 0; it < iters; it++) {
      #pragma GCC unroll 12
      for (int k = 0; k < ACC; k++) a[k] = a[k] * b + c;
    }
    for (int k = 0; k < ACC; k++) for (int i = 0; i < LANES; i++) total += a[k][i];
  }
  return total;
}
int rg_lanes(void) { return LANES; }
void rg_copy(const float *x, float *y, long n) {
  #pragma omp parallel for schedule(static)
  for (long b = 0; b < n / 4096; b++) {
    const float *p = x + b * 4096; float *q = y + b * 4096;
    #pragma omp simd
    for (int i = 0; i < 4096; i++) q[i] = p[i];
  }
}
"""


@functools.cache
def _peak_library() -> ctypes.CDLL:
    folder = tempfile.mkdtemp(prefix="rg_bench_")
    src, lib = os.path.join(folder, "peak.c"), os.path.join(folder, "peak.so")
    with open(src, "w") as f:
        f.write(_PEAK_SOURCE)
    cc = os.environ.get("CC", "gcc")
    subprocess.run([cc, "-O2", "-march=native", "-ffp-contract=fast", "-fopenmp", "-shared",
                    "-fPIC", src, "-o", lib], check=True)
    dll = ctypes.CDLL(lib)
    dll.rg_fma_peak.argtypes, dll.rg_fma_peak.restype = [ctypes.c_long], ctypes.c_double
    dll.rg_copy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
    return dll


@functools.cache
def fma_peak() -> float:
    """Float32 FLOP/s of independent FMAs on THREADS threads (2 FLOPs an FMA), best of 7."""
    dll, iters = _peak_library(), 2_000_000
    dll.rg_fma_peak(iters // 10)
    best = min(_timed(lambda: dll.rg_fma_peak(iters)) for _ in range(7))
    return THREADS * iters * 12 * dll.rg_lanes() * 2 / best


@functools.cache
def copy_bandwidth(nbytes: int = 64 << 20) -> float:
    """Bytes per second (read + written) of a parallel copy that moves `nbytes` in all (half
    read, half written: a case's working set, so that one that fits in a cache is judged
    against the cache's rate), best of 9."""
    dll = _peak_library()
    x = np.ones(max(4096, nbytes // 8 // 4096 * 4096), np.float32)
    y = np.empty_like(x)
    dll.rg_copy(x.ctypes.data, y.ctypes.data, x.size)
    best = min(_timed(lambda: dll.rg_copy(x.ctypes.data, y.ctypes.data, x.size))
               for _ in range(9))
    assert np.array_equal(x, y)
    return 2 * x.nbytes / best


def _timed(fn: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> float:
    t0 = clock()
    fn()
    return clock() - t0


def interleaved_medians(fns: Sequence[Callable[[], object]], rounds: int = 5,
                        min_seconds: float = 0.05,
                        clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """The median seconds per call of each function, over `rounds` interleaved rounds (A, B, C,
    A, B, C, ...). A round times a batch of calls of each function, enough to last about
    `min_seconds` (sized once, by a first untimed call), so short calls are not dominated by the
    timer; each batch follows one untimed call of its own function. `clock`: wall time, or
    `time.process_time` (the process's CPU time, all threads: on a machine other jobs load,
    the work done, not the time slices lost to them)."""
    batch = []
    for fn in fns:
        fn()
        batch.append(max(1, min(1000, math.ceil(min_seconds / max(_timed(fn, clock), 1e-7)))))
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, n, ts in zip(fns, batch, times):
            fn()
            t0 = clock()
            for _ in range(n):
                fn()
            ts.append((clock() - t0) / n)
    return [statistics.median(ts) for ts in times]


def torch_module():
    """torch set up at its best for this machine (THREADS threads), or None."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(THREADS)
    return torch


def jax_module():
    """jax on the CPU, or None."""
    try:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen=true "
                                           f"intra_op_parallelism_threads={THREADS}")
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", False)
    return jax


def close(got: np.ndarray, want: np.ndarray, rtol: float = 2e-3, atol: float = 2e-4) -> bool:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


def roof_share(flops: float, nbytes: float, seconds: float) -> float:
    """The share of this machine's roof a case reached: the FMA peak for products, the copy
    rate over the same number of bytes for memory-bound cases."""
    if flops:
        return flops / fma_peak() / seconds
    return nbytes / copy_bandwidth(1 << max(20, int(nbytes).bit_length())) / seconds


def geomean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else math.nan
