"""Threads for launched kernels: one OpenMP region, compiled once, runs any of them.

In: a launched kernel (`render.RenderedKernel.launch` > 0): `void k(void *const *args,
int64_t lo, int64_t hi)`, which runs iterations [lo, hi) of its one threaded loop (or, a
packed product's, claims its work from counters in a scratch area given after the buffers:
`RenderedKernel.shared`). Out: a
Python callable taking the kernel's buffer addresses, as a plain kernel's ctypes function
does.

gcc spends about a third of a small kernel's build on each OpenMP region (outlining it into a
function of its own, the runtime calls, twice the assembly: relu(a*b+c) 135M instructions of
compiler and assembler with its region, 104M launched). So the region is written once, here,
built into a library of its own (cached on disk like any kernel library), and a launched
kernel's library is compiled without -fopenmp. Each thread runs the share of the iterations
that `omp parallel for`'s static schedule gives it, so the threads touch the same memory as
before, in the same order. Without OpenMP (a user's RULEGRAD_CFLAGS without -fopenmp) the
region runs once, over every iteration.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any

from rulegrad.runtime.dtype import dtypes

from .ctext import RenderedKernel

SOURCE = r"""
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
typedef void (*rg_body)(void *const *, int64_t, int64_t);
/* run fn on [0, n) as `omp parallel for schedule(static)` would: thread t of nt gets the
   t-th of nt contiguous shares, the first n % nt of them one iteration longer; a team of
   `team` threads (the model's: RenderedKernel.team; 0 the runtime's count), at most the
   runtime's count and at most n (a thread with no iteration would be woken, and joined, for
   nothing: a product's 2 blocks on a team of 4 woke 2 idle threads) */
void rg_launch(rg_body fn, void *const *args, int64_t n, int64_t team)
{
#ifdef _OPENMP
  int64_t most = omp_get_max_threads();
  if (team > 0 && team < most) most = team;
  #pragma omp parallel num_threads((int)(n < most ? (n > 0 ? n : 1) : most))
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t q = n / nt, r = n % nt;
    const int64_t lo = t * q + (t < r ? t : r), hi = lo + q + (t < r);
    if (lo < hi) fn(args, lo, hi);
  }
#else
  (void)team;
  fn(args, 0, n);
#endif
}
/* a launched kernel with a scratch area of `bytes`, the argument after the buffers, its first
   `zeroed` bytes zero: a reduce's slots (render.py's `_launched`: fn stores iteration i's value
   in slot i, then finish combines the slots in order) or a packed product's shared panels,
   claim counters and ready marks (gemm.py; no finish) */
typedef void (*rg_finish)(void *const *);
void rg_launch_scratch(rg_body fn, rg_finish finish, void **args, int64_t nargs, int64_t n,
                       int64_t bytes, int64_t zeroed, int64_t team)
{
  args[nargs] = rg_alloc((size_t)bytes);
  __builtin_memset(args[nargs], 0, (size_t)zeroed);
  rg_launch(fn, args, n, team);
  if (finish) finish(args);
  free(args[nargs]);
}
"""

# build.py's `build_library` (rendered kernels -> a loaded library), handed in by the builder,
# whose launched kernels this runs: this module never imports it back
Builder = Callable[..., Any]

_lock = threading.Lock()
_loaded: Any = None  # (library, rg_launch, rg_launch_scratch), loaded once per process


def launcher(build: Builder) -> tuple[Any, Any]:
    """`rg_launch` and `rg_launch_scratch` as ctypes functions: built with `build` (or read
    from the compile cache) on first use; the library stays loaded for the process."""
    global _loaded
    with _lock:
        if _loaded is None:
            lib = build([RenderedKernel("rg_launch", SOURCE, 0, (dtypes.uint8,), openmp=True)])
            plain, scratch = lib.function("rg_launch", 0), lib.function("rg_launch_scratch", 0)
            plain.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
            scratch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                *[ctypes.c_int64] * 5]
            _loaded = (lib, plain, scratch)
        return _loaded[1], _loaded[2]


def launched(region: tuple[Any, Any], address: int, nargs: int, iterations: int,
             finish: int = 0, slot: int = 0, shared: tuple[int, int] = (0, 0),
             team: int = 0) -> Callable[..., None]:
    """A callable running the launched kernel at `address` (taking `nargs` addresses) on the
    threads of `region` (`launcher`'s functions), a team of `team` (0: the runtime's count);
    for a reduce, then its `finish` function over slots of `slot` bytes; for a kernel of
    `shared` = (bytes, zeroed) scratch, with that scratch."""
    plain, scratch = region
    if not finish and not shared[0]:
        args = ctypes.c_void_p * nargs

        def call(*addresses: int) -> None:
            plain(address, args(*addresses), iterations, team)

        return call
    with_scratch = ctypes.c_void_p * (nargs + 1)  # the last: the scratch, allocated per call
    size, zeroed = shared if shared[0] else (iterations * slot, 0)

    def call_scratch(*addresses: int) -> None:
        scratch(address, finish, with_scratch(*addresses), nargs, iterations, size, zeroed, team)

    return call_scratch
