"""How many threads the kernels run: `RULEGRAD_THREADS` (runtime/target.py's `threads()`),
set in the OpenMP runtime the kernel libraries share.

In: the setting, read before each program runs. Out: OpenMP's thread count for the calling
thread's later regions (`omp_set_num_threads`), every kernel library's: they link one runtime
(gcc's libgomp), loaded with the first of them.

OpenMP keeps the count per calling thread, so it is set per Python thread, when the setting
changed since that thread last set it: a lookup per program run otherwise. The runtime is found
by name once one is loaded (gcc's, or LLVM's for a RULEGRAD_CC of clang); with none (a
RULEGRAD_CFLAGS without -fopenmp) nothing runs threaded and nothing is set.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

from rulegrad.runtime.env import env_get
from rulegrad.runtime.target import threads

# OpenMP runtimes by their library names: gcc's, then LLVM's and Intel's
RUNTIMES = ("libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so")

_applied = threading.local()  # per Python thread: the setting its OpenMP count was set from
_runtime: Any = None  # the loaded OpenMP runtime (ctypes), found once


def openmp() -> Any | None:
    """The OpenMP runtime the kernel libraries loaded, or None while none is loaded."""
    global _runtime
    if _runtime is None:
        for name in RUNTIMES:
            try:  # RTLD_NOLOAD: only one already loaded (loading it would start another)
                lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            lib.omp_set_num_threads.argtypes = [ctypes.c_int]
            lib.omp_get_max_threads.restype = ctypes.c_int
            _runtime = lib
            break
    return _runtime


def apply_threads() -> None:
    """Make the calling thread's OpenMP regions run `threads()` threads, if RULEGRAD_THREADS
    changed since this thread last set them. (OMP_NUM_THREADS, the default's source, is not
    watched: OpenMP itself reads it once, when it loads.)"""
    now = env_get("RULEGRAD_THREADS")
    if getattr(_applied, "setting", False) == now:
        return
    n = threads()  # (a bad value is an EnvError here, and again at the next run)
    runtime = openmp()
    if runtime is None:
        return  # no OpenMP loaded yet: looked for again at the next run
    runtime.omp_set_num_threads(n)
    _applied.setting = now


def max_threads() -> int:
    """How many threads the calling thread's next OpenMP region runs (1 without OpenMP)."""
    runtime = openmp()
    return int(runtime.omp_get_max_threads()) if runtime is not None else 1
