"""A recorded sequence of kernel calls run by one C call: a replayed step's launches (a CUDA
graph's idea, on the CPU).

In: compiled kernels (run.py's `CKernel`s), in launch order. Out: a `Calls` holding one
argument array per kernel, which the caller fills with buffer addresses (`fill`), and a call
(`Calls()`) that runs every kernel in order from C: one foreign call per step instead of one
per kernel (a ctypes call costs ~0.3 us, a launched kernel's Python wrapper and argument array
~1.5 us more; a training step launches 15 kernels of 0.3-15 us each).

The driver is one C function, written once, built into a library of its own (cached on disk
like any kernel library) and loaded once per process. It calls a plain kernel,
`void k(void *v0, ...)`, through a pointer cast to the kernel's own arity (a `switch` over the
arities up to `MAX_ARITY`; no `Calls` is made of a larger kernel), and a launched kernel
through launch.py's `rg_launch` or `rg_launch_scratch`, exactly as its Python wrapper does.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import Any

from rulegrad.runtime.dtype import dtypes

from .ctext import RenderedKernel

MAX_ARITY = 32  # plain kernels of up to this many buffers (a training step's have <= 8)

# what a call is: a plain kernel, a launched one, a launched one with scratch (launch.py)
PLAIN, LAUNCHED, SCRATCH = 0, 1, 2


def _source() -> str:
    def plain(n: int) -> str:
        params = ", ".join(["void *"] * n) or "void"
        args = ", ".join(f"a[{i}]" for i in range(n))
        return f"      case {n}: ((void (*)({params}))c->fn)({args}); break;"

    cases = "\n".join(plain(n) for n in range(MAX_ARITY + 1))
    return r"""
typedef struct rg_call {
  int64_t kind, nargs, n, bytes, zeroed, team;
  void *fn, *via, *finish;
  void **args;
} rg_call;
/* run `count` calls in order: plain kernels with their arguments, launched ones through
   launch.py's region functions (`via`), as their Python wrappers call them */
void rg_run_calls(const rg_call *c, int64_t count)
{
  for (int64_t i = 0; i < count; i++, c++) {
    void **a = c->args;
    if (c->kind == 1) {
      ((void (*)(void *, void *const *, int64_t, int64_t))c->via)(c->fn, a, c->n, c->team);
    } else if (c->kind == 2) {
      ((void (*)(void *, void *, void **, int64_t, int64_t, int64_t, int64_t, int64_t))c->via)(
          c->fn, c->finish, a, c->nargs, c->n, c->bytes, c->zeroed, c->team);
    } else {
      switch (c->nargs) {
""" + cases + r"""
      default: __builtin_trap();
      }
    }
  }
}
"""


class _Call(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int64), ("nargs", ctypes.c_int64), ("n", ctypes.c_int64),
                ("bytes", ctypes.c_int64), ("zeroed", ctypes.c_int64), ("team", ctypes.c_int64),
                ("fn", ctypes.c_void_p), ("via", ctypes.c_void_p), ("finish", ctypes.c_void_p),
                ("args", ctypes.c_void_p)]


# build.py's `build_library`, handed in by the caller (this module never imports it back)
Builder = Callable[..., Any]

_lock = threading.Lock()
_loaded: Any = None  # (library, rg_run_calls), loaded once per process


def _driver(build: Builder) -> Any:
    global _loaded
    with _lock:
        if _loaded is None:
            lib = build([RenderedKernel("rg_run_calls", _source(), 0, (dtypes.uint8,))])
            fn = lib.function("rg_run_calls", 0)
            fn.argtypes = [ctypes.c_void_p, ctypes.c_int64]
            _loaded = (lib, fn)
        return _loaded[1]


class Calls:
    """Kernel calls run in order by one C call: `fill` each kernel's buffer addresses, then
    call it (as often as wanted: the addresses stay until filled again)."""

    def __init__(self, entries: Sequence[tuple[int, int, int, int, int, int, int, int, int]],
                 build: Builder):
        """`entries`: per call, (kind, its buffers, iterations, scratch bytes, zeroed bytes,
        function address, region function address, finish address, team: RenderedKernel's,
        0 the runtime's count)."""
        self._run = _driver(build)
        # one array of addresses for every call; a call with scratch has one slot more
        self._offsets: list[int] = []
        total = 0
        for kind, nargs, *_ in entries:
            self._offsets.append(total)
            total += nargs + (kind == SCRATCH)
        self._flat = (ctypes.c_void_p * max(total, 1))()
        self._calls = (_Call * len(entries))()
        base, size = ctypes.addressof(self._flat), ctypes.sizeof(ctypes.c_void_p)
        for c, off, (kind, nargs, n, nbytes, zeroed, fn, via, finish, team) in zip(
                self._calls, self._offsets, entries):
            c.kind, c.nargs, c.n, c.bytes, c.zeroed, c.team = kind, nargs, n, nbytes, zeroed, team
            c.fn, c.via, c.finish, c.args = fn, via, finish, base + off * size
        self._address, self._count = ctypes.addressof(self._calls), len(entries)

    def fill(self, addresses: Sequence[Sequence[int]]) -> None:
        """Each call's buffer addresses, in launch order."""
        flat = self._flat
        for off, addrs in zip(self._offsets, addresses):
            flat[off:off + len(addrs)] = addrs

    def __call__(self) -> None:
        self._run(self._address, self._count)
