"""Search (`RULEGRAD_BEAM=N`): per kernel, time the optimizer's choices and keep the fastest.

In: a lowered kernel AST (before the optimizer), its buffers (sizes and dtypes), whether its
pointers may be `restrict`, and the settings the optimizer reads. Out: the `Choices`
(rules/choices.py) to optimize it with, and whether they came from search.

A beam search as tinygrad's `beam_search` (tinygrad/codegen/opt/search.py): the beam starts as
the heuristic's record; each round takes every neighbour of every record in it (one choice set
to another value of `ALTERNATIVES`, or back to the heuristic's), skips those whose optimized
kernel is one already seen (most choices change nothing for a given kernel: no compile), builds
the rest in one library (the same render and build path as every kernel), runs each once on
copies of random inputs, rejects one whose outputs differ from the heuristic kernel's, times
the others (median of `RUNS` calls), and keeps the fastest N. It stops when a round finds
nothing faster, or after `ROUNDS`. The best then runs against the heuristic's kernel once more,
interleaved, and wins only if it is faster there too (a noisy first timing picks nothing).

The inputs are the kernel's own buffers' shapes and dtypes filled with random values (floats
normal, integers 1..3, never 0: a divisor), in arrays of the search's own: a user's buffer is
never read or written, so an assign is not run twice on user data. A kernel that addresses
memory by a loaded value (a gather by an index buffer) or has a symbolic size is not searched
(random indices could read out of bounds): it keeps the heuristic.

Outputs must equal the heuristic's bit for bit (NaN equal to NaN), except in a kernel with a
float sum (REDUCE ADD), whose order is the reduction contract's (runtime/semantics.py): there
each output may differ from the heuristic's by at most 2 (n - 1) eps sum|x| (both within the
contract's bound of the exact sum), n the longest reduce's count and sum|x| estimated by the
heuristic's kernel run on the inputs' absolute values (exactly sum|x| for a sum, or sum|x y| for
a sum of products, of the inputs). NaNs and infinities must be where the heuristic's are.

The winner is stored in the kernel cache (cache.py's `rg_<key>.beam`), keyed by the kernel's
AST, the machine (runtime/target.py's `machine_id()`: CPU model, flags, cores), the compiler,
the optimizer's settings, `restrict` and N. A later process with RULEGRAD_BEAM=N reads it and
times nothing. Without RULEGRAD_BEAM no winner is read (as tinygrad): the heuristic's kernels
are the same on every run, whatever a search left in the cache. Nothing is shipped filled.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rulegrad.rules.choices import DEFAULT, Choices
from rulegrad.runtime.env import env_get
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import machine_id
from rulegrad.runtime.uop import UOp, keeping_answers, toposort

from . import cache as disk
from .build import build_library, compiler, compiler_version
from .ctext import RenderError
from .errors import CompileError
from .kernel_index import ast_text
from .opt import optimize_kernel
from .render import c_ident, render_kernel
from .threads import apply_threads

# a work threshold no kernel reaches: the choice "no threads" (or "no packing")
NEVER = 1 << 62
# the values a search tries for each choice besides the heuristic's (rules/choices.py): powers
# of two around the heuristic's threshold and sizes, never a value for one shape
ALTERNATIVES: dict[str, tuple[int, ...]] = {
    "parallel_min_work": (1 << 12, 1 << 16, 1 << 18, 1 << 22, NEVER),
    "pack_min_work": (1 << 12, 1 << 18, NEVER),
    "pack_layout": (1,),
    "grab_tiles": (1, 4, 64),
    "grabs_per_thread": (4, 64),
    "rows_per_pass": (1, 2, 8),
    "vectors_max": (2, 4),
}
ROUNDS = 3  # rounds of neighbours: each compiles once (one library for the round)
RUNS = 5  # calls per timing, after one warm-up call; the median is kept
_VERSION = "1"  # of the stored winner's meaning: a new vocabulary searches again

# winners found or read in this process, by key
_memo: dict[str, Choices] = {}
stats = {"searches": 0, "candidates": 0, "rejected": 0, "stored_hits": 0}


def forget() -> None:
    """Drop the winners held in memory (the stored ones stay): as a new process."""
    _memo.clear()


def neighbours(c: Choices) -> list[Choices]:
    """The records one choice away from `c`: each choice set to each other alternative, or
    back to the heuristic's."""
    out = []
    for name, values in ALTERNATIVES.items():
        now = getattr(c, name)
        for v in (*values, None):
            if v != now:
                out.append(c.replace(**{name: v}))
    return out


# what else makes the same kernel another program: its flags, and the block library's calls
_BUILD_SETTINGS = ("RULEGRAD_CFLAGS", "RULEGRAD_BLOCK_LIBRARY")


def kernel_key(low: UOp, restrict: bool, settings: tuple, width: int) -> str:
    """The winner's key: the kernel, the machine, the compiler and its flags, the optimizer's
    settings (`settings`: run.py's CHOICE_SETTINGS' values), `restrict` and the beam's width."""
    cc = compiler()
    build = tuple(env_get(name) for name in _BUILD_SETTINGS)
    return disk.key_of(_VERSION, ast_text(low), machine_id(), "\0".join(cc),
                       compiler_version(tuple(cc)), repr(build), repr(settings), str(restrict),
                       str(width))


def searchable(low: UOp, nbufs: int) -> bool:
    """Whether random inputs are safe and enough for this kernel: constant sizes, every buffer
    known, and no address computed from a loaded value (a gather by an index buffer)."""
    loaded: dict[UOp, bool] = {}  # whether a node's value depends on a loaded value
    for n in toposort(low):
        if n.op is Ops.DEFINE_VAR or (n.op is Ops.DEFINE_GLOBAL and n.arg >= nbufs):
            return False
        if n.op is Ops.INDEX and any(loaded[s] for s in n.src[1:]):
            return False
        loaded[n] = n.op is Ops.LOAD or any(loaded[s] for s in n.src)
    return True


def choose(name: str, low: UOp, restrict: bool, bufs: Sequence[Any] | None, settings: tuple,
           width: int) -> tuple[Choices, bool]:
    """The choices for one kernel under RULEGRAD_BEAM=width: the stored winner, or a search
    now (stored), or the heuristic's when the kernel cannot be searched; and whether they came
    from search."""
    key = kernel_key(low, restrict, settings, width)
    if key in _memo:
        return _memo[key], True
    entry = disk.lookup_choice(key)
    found = Choices.from_fields(entry.get("choices")) if entry is not None else None  # type: ignore[arg-type]
    if found is not None:
        stats["stored_hits"] += 1
        _memo[key] = found
        return found, True
    if bufs is None or not searchable(low, len(bufs)):
        return DEFAULT, False
    winner, note = search(name, low, restrict, bufs, width)
    disk.install_choice(key, {"choices": winner.set_fields(), "note": note})
    _memo[key] = winner
    return winner, True


# ---------------------------------------------------------------------------- the search
def search(name: str, low: UOp, restrict: bool, bufs: Sequence[Any], width: int
           ) -> tuple[Choices, str]:
    """The fastest record found for the kernel, and a line saying how it was found (also
    printed on stderr: a search takes seconds)."""
    stats["searches"] += 1
    start = time.perf_counter()
    arrays = inputs(bufs)
    written = sorted({n.src[0].src[0].arg for n in toposort(low)
                      if n.op is Ops.STORE and n.src[0].op is Ops.INDEX
                      and n.src[0].src[0].op is Ops.DEFINE_GLOBAL})
    heuristic = optimize_kernel(low, DEFAULT)
    (run0,) = build([heuristic], name, restrict)
    if run0 is None:  # (the heuristic's own kernel does not build: the compile reports it)
        return DEFAULT, "not searched: the heuristic's kernel does not build"
    reference = [run0(fresh(arrays))[s] for s in written]
    bounds = sum_bounds(low, run0, arrays, written, reference)
    beam: list[tuple[float, Choices, Callable]] = [(time_kernel(run0, arrays), DEFAULT, run0)]
    seen = {heuristic}
    tried = rejected = 0
    for _ in range(ROUNDS):
        new: list[tuple[Choices, UOp]] = []
        with keeping_answers():  # (the candidates of a round ask the same of the same nodes)
            for _, c, _ in beam:
                for n in neighbours(c):
                    ast = optimize_kernel(low, n)
                    if ast not in seen:
                        seen.add(ast)
                        new.append((n, ast))
        if not new:
            break
        timed = []
        for (c, _), run in zip(new, build([a for _, a in new], name, restrict)):
            tried += 1
            if run is None or not all(agrees(ref, run(fresh(arrays))[s], bound)
                                      for ref, s, bound in zip(reference, written, bounds)):
                rejected += 1
                continue
            timed.append((time_kernel(run, arrays), c, run))
        best = beam[0][0]
        beam = sorted(beam + timed, key=lambda t: t[0])[:width]
        if beam[0][0] >= best:
            break
    winner, run = beam[0][1], beam[0][2]
    ratio = 1.0
    if winner != DEFAULT:  # the finalist against the heuristic, interleaved
        theirs, ours = duel(run0, run, arrays)
        ratio = theirs / ours if ours > 0 else 1.0
        if ours >= theirs:
            winner, ratio = DEFAULT, 1.0
    stats["candidates"] += tried
    stats["rejected"] += rejected
    note = (f"BEAM {name}: {tried} candidates timed ({rejected} rejected) in "
            f"{time.perf_counter() - start:.1f} s: {winner.describe()}"
            f"{f', {ratio:.2f}x the heuristic' if winner != DEFAULT else ''}")
    print(f"  {note}", file=sys.stderr)
    return winner, note


def inputs(bufs: Sequence[Any]) -> list[np.ndarray]:
    """Random arrays of the buffers' sizes and dtypes (the search's own, never the user's)."""
    rng = np.random.default_rng(0)
    out = []
    for b in bufs:
        dt = b.dtype.np
        if dt.kind == "f":
            out.append(rng.standard_normal(b.size).astype(dt))
        elif dt.kind == "b":
            out.append(rng.random(b.size) < 0.5)
        else:  # 1..3: no division by zero, in range of every integer type
            out.append(rng.integers(1, 4, b.size).astype(dt))
    return out


def fresh(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Copies for one run: every candidate starts from the same values (an assign kernel
    reads what it writes)."""
    return [a.copy() for a in arrays]


def build(asts: list[UOp], name: str, restrict: bool) -> list[Callable | None]:
    """Each kernel built (one library; one each when that fails) as a function of the arrays
    it runs on, returning them; None for one that does not render or build (a candidate the
    backend cannot print is not one)."""
    rendered: list[Any] = []
    for i, a in enumerate(asts):
        try:
            rendered.append(render_kernel(a, f"beam{i}_{c_ident(name)}", restrict=restrict))
        except RenderError:
            rendered.append(None)
    ok = [rk for rk in rendered if rk is not None]
    try:
        lib = build_library(ok) if ok else None
        return [None if rk is None else _runner(lib, rk) for rk in rendered]
    except CompileError:
        pass
    out: list[Callable | None] = []
    for rk in rendered:
        try:
            out.append(None if rk is None else _runner(build_library([rk]), rk))
        except CompileError:
            out.append(None)
    return out


def _runner(lib: Any, rk: Any) -> Callable:
    fn = lib.function(rk.cname, rk.nparams, len(rk.var_names), rk.launch, rk.combine, rk.shared,
                      rk.team)
    threaded = rk.openmp or rk.launch > 0

    def run(arrays: list[np.ndarray], _lib: Any = lib) -> list[np.ndarray]:
        # (_lib: the library stays loaded while this runner lives; its last holder unloads it)
        if threaded:
            apply_threads()
        fn(*[a.ctypes.data for a in arrays[: rk.nparams]])
        return arrays

    return run


def time_kernel(run: Callable, arrays: list[np.ndarray]) -> float:
    """The median time of RUNS calls on copies of `arrays`, after one warm-up call."""
    work = fresh(arrays)
    run(work)
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        run(work)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def duel(a: Callable, b: Callable, arrays: list[np.ndarray]) -> tuple[float, float]:
    """Median times of a and b, called in turn 2 * RUNS times (noise then hits both alike)."""
    wa, wb = fresh(arrays), fresh(arrays)
    ta, tb = [], []
    for _ in range(2 * RUNS):
        for run, work, times in ((a, wa, ta), (b, wb, tb)):
            t0 = time.perf_counter()
            run(work)
            times.append(time.perf_counter() - t0)
    return float(np.median(ta)), float(np.median(tb))


# ---------------------------------------------------------------------------- the check
def sum_bounds(low: UOp, run: Callable, arrays: list[np.ndarray], written: list[int],
               reference: list[np.ndarray]) -> list[np.ndarray | None]:
    """Per written buffer, how far a candidate's outputs may be from the heuristic's: None
    (bit for bit) unless the kernel has a float sum (or product), else 2 (n - 1) eps sum|x|
    per element (sum|x| the kernel's value on |inputs|, or the output's own size where that
    is larger: a value computed from the sum, such as a softmax's, is not linear in the
    inputs)."""
    sums = [n for n in toposort(low) if n.op is Ops.REDUCE and n.arg in (Ops.ADD, Ops.MUL)
            and n.dtype.is_float]
    if not sums:
        return [None] * len(written)
    count = max(int(np.prod([int(r.src[0].arg) for r in n.src[1:]] or [1])) for n in sums)
    absolute = run([np.abs(a) if a.dtype.kind == "f" else a.copy() for a in arrays])
    out: list[np.ndarray | None] = []
    for s, ref in zip(written, reference):
        a = absolute[s]
        if a.dtype.kind != "f":
            out.append(None)
            continue
        eps = float(np.finfo(a.dtype).eps) / 2  # unit roundoff
        with np.errstate(invalid="ignore", over="ignore"):
            scale = np.fmax(np.abs(a.astype(np.float64)), np.abs(ref.astype(np.float64)))
        out.append(2 * max(count - 1, 1) * eps * scale)
    return out


def agrees(ref: np.ndarray, out: np.ndarray, bound: np.ndarray | None) -> bool:
    """Whether a candidate's output may stand for the heuristic's: the same bits (NaN equal to
    NaN) or, with a bound, NaNs and infinities in the same places and the rest within it."""
    if ref.dtype.kind != "f":
        return bool(np.array_equal(ref, out))
    nan = np.isnan(ref)
    if not np.array_equal(nan, np.isnan(out)):
        return False
    if bound is None:
        bits = ref.view(f"u{ref.dtype.itemsize}") == out.view(f"u{ref.dtype.itemsize}")
        return bool(np.all(bits | nan))
    inf = np.isinf(ref) | np.isinf(out)
    if not np.array_equal(ref[inf], out[inf]):
        return False
    ok = ~(nan | inf)
    diff = np.abs(ref[ok].astype(np.float64) - out[ok].astype(np.float64))
    return bool(np.all(diff <= bound[ok]))
