"""Run kernels through C: schedule items in, numpy buffers written.

In: kernels as `(name, ast)` pairs (or `ScheduleItem`s with `.name`, `.ast`, `.bufs`).
Out: a `CProgram` whose kernels are called with numpy arrays (flat, C-contiguous), one per
DEFINE_GLOBAL slot, passed by address (no copy).

`compile_program` renders, lowers and builds once per distinct list of kernel ASTs: the ASTs
are hash-consed, so the same program realized again hits an in-process table and costs
neither rendering nor a compiler call. The per-call path is a Python loop over prebuilt
callables: a ctypes call (which releases the GIL while the kernel runs) with each buffer's
address, which a `Buffer` computes once (`Buffer.address`).

The table of programs is bounded (`MAX_PROGRAMS`, least recently used dropped); a library no
remaining program uses is unloaded (`build.Library`).
"""

from __future__ import annotations

import collections
import ctypes
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rulegrad.rules.choices import DEFAULT
from rulegrad.runtime import capture
from rulegrad.runtime.buffer import addresses
from rulegrad.runtime.env import env_int, raw_reader
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

from . import kernel_index
from .build import Library, build_library, probe_compiler
from .driver import LAUNCHED, MAX_ARITY, PLAIN, SCRATCH, Calls
from .launch import launcher
from .lower import lower_only
from .opt import actions, optimize_kernel, optimizer_on
from .render import RenderedKernel, c_ident, render_kernel
from .threads import apply_threads


# (CKernel and CProgram are classes of slots, not dataclasses: a dataclass writes its methods
# as source and compiles them when this module is imported, ~1 ms each of a process's first
# realize)
class CKernel:
    """One compiled kernel: call it with one numpy array per buffer slot."""

    __slots__ = ("name", "cname", "nparams", "fn", "library", "source", "var_names", "threaded",
                 "launch")

    def __init__(self, name: str, cname: str, nparams: int, fn: Callable[..., None],
                 library: Library, source: str, var_names: tuple[str, ...] = (),
                 threaded: bool = False,
                 launch: tuple[int, int, tuple[int, int], int] = (0, 0, (0, 0), 0)):
        self.name, self.cname, self.nparams = name, cname, nparams
        self.fn = fn              # takes one address (int) per buffer
        self.library = library    # kept alive (loaded) as long as this kernel
        self.source = source
        self.var_names = var_names  # symbolic sizes, passed after the buffers
        self.threaded = threaded  # it runs OpenMP threads (its own region, or launch.py's)
        # how `fn` calls it (RenderedKernel's launch, combine, shared, team): for driver.py's
        # C loop
        self.launch = launch

    def values(self, var_vals: dict[str, int] | None) -> list[int]:
        return [var_vals[v] for v in self.var_names] if self.var_names else []  # type: ignore[index]

    def __call__(self, *arrays: np.ndarray, var_vals: dict[str, int] | None = None) -> None:
        for a in arrays[: self.nparams]:
            if not a.flags.c_contiguous:
                raise ValueError(f"kernel {self.name} needs C-contiguous arrays")
        if self.threaded:
            apply_threads()
        self.fn(*[a.ctypes.data for a in arrays[: self.nparams]], *self.values(var_vals))


class CProgram:
    """The kernels of one schedule, built into one shared library."""

    __slots__ = ("kernels", "source", "key", "threaded", "touched", "__weakref__")

    def __init__(self, kernels: list[CKernel], source: str, key: tuple = (),
                 threaded: bool = False):
        self.kernels = kernels
        self.source = source
        self.key = key  # its entry in the table of programs
        self.threaded = threaded  # some kernel runs OpenMP threads (RULEGRAD_THREADS applies)
        self.touched = -1  # `_added` when it was last moved to the table's end

    @staticmethod
    def calls(kernels: Sequence[CKernel]) -> Calls | None:
        """Kernels of any programs, run in this order by one C call (`calls` below): what a
        caller holding only programs (runtime/jit.py's replay) asks the backend for."""
        return calls(kernels)

    def touch(self) -> None:
        """Mark it used (a realize plan runs it without `compile_program`): the table's least
        recently used program is the one dropped. Only an addition drops programs, so a
        program is moved at its first run after each addition: every program run since the
        last addition is then behind every one not run since, the order an addition drops by.
        A hot loop's program moves once per addition, not at every run (hashing the table's
        key twice was a tenth of a small planned run)."""
        if self.touched != _added:
            self.touched = _added
            if self.key in _programs:
                _programs.move_to_end(self.key)

    def run(self, bufs: Sequence[Sequence[np.ndarray]], timings: list[float] | None = None,
            var_vals: dict[str, int] | None = None) -> None:
        """Call each kernel with its arrays."""
        for k, arrays in zip(self.kernels, bufs):
            if timings is None:
                k(*arrays, var_vals=var_vals)
            else:
                t0 = time.perf_counter()
                k(*arrays, var_vals=var_vals)
                timings.append(time.perf_counter() - t0)

    def run_addresses(self, addrs: Sequence[Sequence[int]],
                      timings: list[float] | None = None,
                      var_vals: dict[str, int] | None = None) -> None:
        """Call each kernel with its buffers' addresses (the realize path: no conversions)."""
        if self.threaded:  # RULEGRAD_THREADS, if it changed since this thread's last run
            apply_threads()
        if var_vals:  # symbolic sizes: each kernel's values after its addresses
            addrs = [[*a, *k.values(var_vals)] for k, a in zip(self.kernels, addrs)]
        for k, a in zip(self.kernels, addrs):
            if timings is None:
                k.fn(*a)
            else:
                t0 = time.perf_counter()
                k.fn(*a)
                timings.append(time.perf_counter() - t0)


def calls(kernels: Sequence[CKernel]) -> Calls | None:
    """The kernels, called in this order, as one C call (driver.py: a replayed step's
    launches), or None when one of them cannot be (a symbolic size, a plain kernel of more
    buffers than the C loop calls)."""
    entries = []
    region: list[int] = []  # launch.py's region functions, as the kernels' wrappers call them
    for k in kernels:
        iterations, combine, shared, team = k.launch
        if k.var_names or (not iterations and k.nparams > MAX_ARITY):
            return None
        at = k.library.address(k.cname)
        if not iterations:
            entries.append((PLAIN, k.nparams, 0, 0, 0, at, 0, 0, 0))
            continue
        if not region:
            region = [ctypes.cast(f, ctypes.c_void_p).value or 0
                      for f in launcher(build_library)]
        finish = k.library.address(f"{k.cname}_fin") if combine else 0
        if not finish and not shared[0]:
            entries.append((LAUNCHED, k.nparams, iterations, 0, 0, at, region[0], 0, team))
        else:
            size, zeroed = shared if shared[0] else (iterations * combine, 0)
            entries.append((SCRATCH, k.nparams, iterations, size, zeroed, at, region[1], finish,
                            team))
    return Calls(entries, build_library)


# hash-consed ASTs make the tuple of (ast, restrict) a stable key for a whole program, with the
# settings the optimizer reads (runtime/target.py's machine facts are fixed for the process)
# (and the compiler command: a library built with other flags, or refused flags, is no answer
# for these: a program kept from before a RULEGRAD_CFLAGS change ran with the old flags and
# never checked the new ones), and the printer's block library setting (a product kept from
# before RULEGRAD_BLOCK_LIBRARY=0 still called the library)
CHOICE_SETTINGS = ("RULEGRAD_OPT", "RULEGRAD_VECTOR_BYTES", "RULEGRAD_L1_BYTES",
                   "RULEGRAD_L2_BYTES", "RULEGRAD_L3_BYTES", "RULEGRAD_THREADS",
                   "OMP_NUM_THREADS", "RULEGRAD_BEAM", "RULEGRAD_CC", "RULEGRAD_CFLAGS",
                   "RULEGRAD_BLOCK_LIBRARY")
_choice_settings = raw_reader(CHOICE_SETTINGS)
_programs: collections.OrderedDict[tuple, CProgram] = collections.OrderedDict()
_added = 0  # programs added to the table so far (CProgram.touch)
MAX_PROGRAMS = 256


def beam_width() -> int:
    """`RULEGRAD_BEAM`: how many records a search keeps per round; 0 (or unset) no search
    (read here, not in beam.py: the search's module is imported only when one is asked for)."""
    return env_int("RULEGRAD_BEAM", 0, minimum=0)


def max_programs() -> int:
    """The table's bound: `RULEGRAD_MAX_PROGRAMS` (default 256). Each loaded library costs the
    process about five memory maps, and a process has a limit of them (vm.max_map_count)."""
    return env_int("RULEGRAD_MAX_PROGRAMS", MAX_PROGRAMS, minimum=1)


def compile_program(kernels: Sequence[tuple[str, UOp]] | Sequence[Any],
                    restrict: Sequence[bool] | None = None) -> CProgram:
    """Build (or fetch) the library for these kernels.

    `kernels` are `(name, ast)` pairs or objects with `.name` and `.ast`; `restrict[i]` false
    says kernel i's buffers may overlap (the same buffer in two slots), so its pointers must
    not be declared `restrict`. With `RULEGRAD_BEAM`, each kernel's choices are its searched
    winner (backends/c/beam.py), searched now when kernels come with `.bufs` (schedule
    items) and none is stored."""
    pairs = [(k.name, k.ast) if hasattr(k, "ast") else (k[0], k[1]) for k in kernels]
    bufs = [getattr(k, "bufs", None) for k in kernels]
    flags = tuple(restrict) if restrict is not None else (True,) * len(pairs)
    # the settings the optimizer's choices read are part of the key: the same kernels compile
    # to other C with the optimizer off, or for other vectors or caches
    # (a list, not a generator: one frame, not one resumption per kernel of every realize)
    key = (_choice_settings(), *[(name, ast, r) for (name, ast), r in zip(pairs, flags)])
    prog = _programs.get(key)
    if prog is not None:
        _programs.move_to_end(key)
        return prog
    probe_compiler()  # the compiler's version (the cache key) is asked while we render
    rendered: list[RenderedKernel] = []
    debug = env_int("DEBUG", 0)
    width = beam_width()
    indexed = kernel_index.usable()  # (a fresh process's kernels, printed by an earlier one)
    for i, ((name, ast), r) in enumerate(zip(pairs, flags)):
        # generated names only: an index plus the kernel name filtered to [A-Za-z0-9_]
        cname = f"k{i}_{c_ident(name)}"
        if indexed:
            ik = kernel_index.key(ast, cname, r, key[0])
            if (rk := kernel_index.lookup(ik)) is not None:
                rendered.append(rk)
                continue
        low = lower_only(ast)
        choices, searched = DEFAULT, False
        if width and optimizer_on():
            from . import beam  # (the search, and what it imports, only when it is asked for)

            choices, searched = beam.choose(name, low, r, bufs[i], key[0], width)
        opt = optimize_kernel(low, choices)
        rk = render_kernel(opt, cname, restrict=r)
        rendered.append(rk)
        if indexed:
            kernel_index.store(ik, rk)
        if debug >= 2:  # the optimizer's actions, then how they were printed
            taken = actions(opt) + list(rk.choices)
            if searched:  # the choices came from RULEGRAD_BEAM's search (or its stored winner)
                taken.append(f"BEAM {choices.describe()}")
            print(f"  {name:<30s} actions: {', '.join(taken) or 'none'}", file=sys.stderr)
    lib = build_library(rendered)
    ckernels = [CKernel(name, rk.cname, rk.nparams,
                        lib.function(rk.cname, rk.nparams, len(rk.var_names), rk.launch,
                                     rk.combine, rk.shared, rk.team), lib,
                        rk.source,
                        rk.var_names, rk.openmp or rk.launch > 0,
                        (rk.launch, rk.combine, rk.shared, rk.team))
                for (name, _), rk in zip(pairs, rendered)]
    prog = CProgram(ckernels, "\n".join(rk.source for rk in rendered), key,
                    any(k.threaded for k in ckernels))
    global _added
    _programs[key] = prog
    _added += 1
    bound = max_programs()
    while len(_programs) > bound:  # a dropped program's library is unloaded (build.Library)
        _programs.popitem(last=False)
    return prog


def run_schedule(schedule: Sequence[Any], var_vals: dict[str, int] | None = None) -> CProgram:
    """Compile and run a list of `ScheduleItem`s, allocating output buffers as needed;
    `var_vals` gives each symbolic size (DEFINE_VAR) its value for this run."""
    # (no comprehension's frame per kernel, no call per buffer whose address is known: a
    # replayed training step's kernels read some seventy buffers)
    restrict = [len(set(map(id, item.bufs))) == len(item.bufs) for item in schedule]
    prog = compile_program(schedule, restrict)
    addrs = [addresses(item.bufs[:k.nparams]) for item, k in zip(schedule, prog.kernels)]
    timings: list[float] | None = [] if env_int("DEBUG", 0) >= 1 else None  # DEBUG=1: per kernel
    prog.run_addresses(addrs, timings, var_vals)
    if capture.active is not None:  # rulegrad.jit records this step's launches
        _record_launch(schedule, prog, var_vals)
    if timings is not None:
        from . import roofline  # DEBUG=1: each kernel's rates beside the machine's

        for item, t in zip(schedule, timings):
            w = roofline.work(item.ast, [b.size * b.dtype.itemsize for b in item.bufs])
            print(f"  {item.name:<30s} {t * 1e6:9.1f} us  {roofline.line(w, t)}", file=sys.stderr)
        print(f"  {len(schedule)} kernels in {sum(timings) * 1e6:.1f} us (C)", file=sys.stderr)
    return prog


def _record_launch(schedule: Sequence[Any], prog: CProgram,
                   var_vals: dict[str, int] | None) -> None:
    if var_vals:
        capture.refuse("it has a symbolic size (its values are not replayed)")
    elif len(prog.kernels) != len(schedule):
        capture.refuse("a schedule item is not a C kernel")
    written = [frozenset(n.src[0].src[0].arg for n in toposort(item.ast)
                         if n.op is Ops.STORE and n.src[0].op is Ops.INDEX) for item in schedule]
    capture.launched(prog, [tuple(item.bufs[:k.nparams]) for item, k in
                            zip(schedule, prog.kernels)], written)
