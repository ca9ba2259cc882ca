"""Helpers of `opt.rules`' parallel action: which loop of each group of stores is split across
cores.

In: a lowered kernel (backends/KERNEL_AST.md, "after lowering") whose STOREs have their own
actions. Out: `parallel(sink)`, the SINK with a `Parallel` as its arg naming those loops by
range id, which backends/c/render.py prints as `omp parallel for` (each thread a contiguous
share of the iterations); None when no loop is worth the threads.

A group is the stores the renderer prints as one loop nest (`store_groups`, which render.py's
`render` prints by): those sharing their loops, or a STORE with an action of its own. The
threaded loop is the group's
outermost one, as printed: the first output loop, but for a register tile of an interchanged
reduce the first loop of at least 2 iterations outside it, or the tile loops over its rows,
then its columns. The group takes the threads whose shares of its work (`_work`) each pay for
the parallel region (pack_helpers' `region_threads`, the model the products' threads come from:
each share at least PARALLEL_MIN_WORK), none unless two do: the work is each load of the group
(an exp, log or sin counted as LIBM_LOADS loads) times the iterations of the loops it runs in,
up to the innermost it reads; a row's passes (its reduces, computed before the loop over its
outputs) add up.

When the outermost loop alone would share unevenly (a row sum of 3x7x100003 has 3 rows: 2:1 on
two threads), the outer loops of the nest are flattened into one threaded loop (OpenMP's
`collapse`), the fewest whose product splits evenly across the threads (runtime/target.py's
`threads()`) or gives each at least PARALLEL_SHARES iterations (pack_helpers' `balanced`).
Only loops with work inside are flattened: output loops outside a reduce or a kernel-local
array, or an interchanged reduce's outside its columns; never a vector loop, nor a register
tile's.

Packed products and flash kernels (their `Pack` and `Flash` say which of their loops take
threads) and a reduce given threads of its own (`thread_reduce`) take none here; an
interchanged reduce's columns (interchange_helpers.columns) are never threaded, its blocks
(a "block" range outside them, when it has no other output loop) may be. Threads change no value:
every iteration computes what it computed on one core. A threaded vector loop is split into
blocks in the AST (`_in_blocks`): the threads take the blocks.
"""

from __future__ import annotations

import itertools
import math

from rulegrad.rules.flash_helpers import Flash
from rulegrad.rules.interchange_helpers import columns, split_range
from rulegrad.rules.pack_helpers import Pack, balanced, idle, region_threads
from rulegrad.runtime.loops import free_ranges, fresh_id, range_size, trips
from rulegrad.runtime.ops import LIBM_CALLS, Ops
from rulegrad.runtime.record import FrozenRecord
from rulegrad.runtime.target import REDUCE_VECTORS, VECTOR_LANES, threads
from rulegrad.runtime.uop import UOp, toposort

# A kernel's work per iteration counts its loads, and an exp, log or sin (a libm call, vector
# or not) as LIBM_LOADS of them: 1M float32 from memory, two loads, a subtract and a store took
# 174 us, with an exp of the difference 367 us, a log 366, a sin 349 (one core, -O3, libmvec,
# best of 40): each call about as long as three of the loop's memory accesses (58 us each).
# Without it a softmax over rows past LOCAL_MAX_ROW (16 x 20000 when that was 16K: a sum of
# exps, then exp / sum, kernels of their own) counted 0.6M and ran on one core. A ratio of two
# operations' times, neither a size nor a width
LIBM_LOADS = 3
# loop kinds printed as vectors (rules/opt_helpers.py): a flattened loop's values are computed
# from its counter, one at a time, so none of these is flattened
_VECTOR_KINDS = frozenset({"upcast", "vector", "simd"})

# A loop both threaded and vectorized (`omp parallel for simd`) gives each thread a share of
# unknown bounds, so gcc compiles its vector loop with a peeled prologue and epilogue: relu's
# 4M-element loop cost 64M more compiler instructions threaded than not (callgrind). Threads
# over blocks of a power of two dividing the loop, each block a vector loop of a known count,
# cost 17M less than that, and each element is computed as before. (An explicit "vector" loop
# steps by whole vectors already: not split.)
VECTOR_BLOCK = 4096
VECTOR_BLOCK_MIN = 64
_BLOCKED_KINDS = frozenset({"upcast", "simd"})


class Parallel(FrozenRecord):
    """The parallel action on a kernel (its SINK's arg): per threaded loop nest, the ids of the
    ranges whose loops (for a register tile's rows or columns, whose tile loops) are split
    across cores; two or more are the nest's outer loops, flattened into one threaded loop.
    `teams`, per nest, the threads the model gave it (`region_threads`, at most its
    iterations): the printer's `num_threads` and the launch's team (backends/c/launch.py), so
    the team that runs is the one the model chose; () (a record of before) the runtime's
    count."""

    __slots__ = ("nests", "teams")
    nests: tuple[tuple[int, ...], ...]
    teams: tuple[int, ...]

    def __init__(self, nests: tuple[tuple[int, ...], ...], teams: tuple[int, ...] = ()) -> None:
        self._init(nests, teams)

    @property
    def ranges(self) -> frozenset[int]:
        """Every range id split across cores."""
        return frozenset(i for nest in self.nests for i in nest)

    def team(self, range_id: int) -> int:
        """The threads of the nest whose threaded loops include `range_id` (0: the runtime's
        count)."""
        return next((t for nest, t in zip(self.nests, self.teams) if range_id in nest), 0)

    def describe(self, sizes: dict[int, int]) -> list[str]:
        """DEBUG=2's lines: `PARALLEL r0 (3 iterations) on 2 threads`, flattened `PARALLEL r0
        r1 (21 iterations: 3x7) on 4 threads`; `sizes` the loops' trip counts by range id (a
        tile loop's its range's)."""
        lines = []
        for k, nest in enumerate(self.nests):
            names = " ".join(f"r{i}" for i in nest)
            total = math.prod(sizes[i] for i in nest)
            shape = f": {'x'.join(str(sizes[i]) for i in nest)}" if len(nest) > 1 else ""
            team = f" on {self.teams[k]} threads" if k < len(self.teams) else ""
            lines.append(f"PARALLEL {names} ({total} iterations{shape}){team}")
        return lines


def _flatten(loops: list[tuple[UOp, int]], nthreads: int) -> tuple[UOp, ...]:
    """The outer loops (of `loops`, outermost first, each flattenable) that take the threads:
    the fewest whose product is `balanced`, else those of the least idle time; () when their
    product stays under 2."""
    best: tuple[float, int] | None = None  # (idle time, how many loops)
    product = 1
    for k, (_, n) in enumerate(loops, 1):
        product *= n
        if product < 2:
            continue
        share = idle(product, nthreads)
        if best is None or share < best[0]:
            best = (share, k)
        if balanced(product, nthreads):
            break
    return tuple(r for r, _ in loops[:best[1]]) if best is not None else ()


def _has_inner_loops(stores: list[UOp]) -> bool:
    """Whether the stores' values run loops of their own (a reduce, a kernel-local array)
    inside the output loops: then each iteration of the last output loop has work enough to
    bind its loop values from a flattened counter."""
    return any(n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL) for st in stores
               for n in toposort(st.src[1]))


def _hoisted(stores: list[UOp]) -> list[frozenset[UOp]]:
    """The loops each reduce and kernel-local array of the stores' values runs inside: one
    computed in an outer loop's body, before an inner output loop (a row block's arrays over
    its rows, once a block, then its output rows), is computed once per iteration of them."""
    out = []
    for st in stores:
        order = toposort(st)
        deps = free_ranges(st, order)
        out += [deps[n] for n in order if n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL)]
    return out


def _outermost(stores: list[UOp], nthreads: int) -> tuple[UOp, ...]:
    """The RANGEs whose loops take the threads when a group of `stores` is threaded: the
    first printed of at least 2 iterations (a tile loop's are tiles), or the outer loops
    `_flatten` picks; () when no loop of it can."""
    st = stores[0]
    how, ranges = st.arg, st.src[2:]
    if isinstance(how, (Pack, Flash)):
        return ()
    cols = columns(st)
    if cols and cols[0].arg[1] == "unroll":  # a register tile: its tile loops, not flattened
        return next(((r,) for r in ranges[:-len(cols)] if range_size(r) >= 2), ())  # type: ignore
    # an interchanged reduce's columns run inside its reduce loops; a plain nest's last output
    # loop is flattened only with loops inside it
    if cols:
        outer = ranges[:-len(cols)]
        if not outer:
            return ()
    else:
        outer = ranges if _has_inner_loops(stores) else ranges[:-1]
    if ranges and ranges[0].arg[1] in _VECTOR_KINDS:
        outer = ranges[:1]  # a threaded vector loop (in blocks): threaded alone
    flat: list[tuple[UOp, int]] = []
    done = _hoisted(stores)
    for r in outer or ranges[:1]:
        if r.arg[1] in _VECTOR_KINDS and flat or r.arg[1] == "scan":
            break  # (a scan's loop carries its accumulator: one thread runs it in order)
        if flat and any(r not in d and d & {f for f, _ in flat} for d in done):
            break  # (flattened with r, work done once per iteration of the loops before it
            # would run once per r: a row block's hand-offs, rules/row_block_helpers.py)
        flat.append((r, range_size(r)))  # type: ignore[arg-type]
    return _flatten(flat, nthreads)


def store_groups(sink: UOp) -> list[list[UOp]]:
    """The kernel's stores by loop nest, in order: those sharing their loops, and a STORE with
    an action of its own (packed, interchanged) alone."""
    groups: dict[tuple, list[UOp]] = {}
    for st in sink.src:
        groups.setdefault((st.src[2:], st if st.arg is not None else None), []).append(st)
    return list(groups.values())


def _work(stores: list[UOp], order: list[UOp], deps: dict[UOp, frozenset[UOp]]) -> int:
    """A group's work: each of its loads, and each libm call as LIBM_LOADS loads, times the
    iterations of the loops it runs in: its readers' loops, but a REDUCE or a DEFINE_LOCAL runs
    inside them only up to the last one it depends on (the C renderer computes a row's max and
    sum before the loop over the row's outputs), its value inside those and its own ranges. So
    a row's passes add up: multiplied as one nest, a 2 x 40009 layernorm's mean, variance and
    output loops counted 2 x 40009**3 and took threads for 2 rows of 3 short passes (0.35x the
    unthreaded kernels of their own it replaced). A load or call is counted once per iteration
    of the loops outside the innermost one it depends on (`runs`): the compiler hoists it out
    of the loops inside that (a product of one row interchanged reads x[k] once per k, outside
    its columns' loop: counted per column, 1x200x8192 weighed twice its multiply-adds and took
    two threads where 1x640x2560, the same work, took one)."""
    out = tuple(stores[0].src[2:])
    cols = frozenset(columns(stores[0]))
    where: dict[UOp, tuple[UOp, ...]] = {st: out for st in stores}
    work = 0
    for n in reversed(order):  # readers first
        loops = where.get(n)
        if loops is None:
            continue
        if n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL):
            last = [i for i, r in enumerate(loops) if r in deps[n]]
            outer = loops[:last[-1] + 1] if last else ()
            # (a "scan" REDUCE's range is one of its STORE's loops, already in `outer`: one
            # step per iteration of it. Counted again, a 2 x 3707 cumsum weighed 2 x 3707**2
            # loads and took two threads for 7414 adds: 0.1x torch on a loaded machine)
            inner = outer + tuple(r for r in n.src[1:] if r not in outer)
            if n.op is Ops.REDUCE and n.src[1:] and n.src[1].arg[1] == "scan":
                work += _chain_loads(loops, n.src[1])
            if len(where.get(n.src[0], ())) <= len(inner):
                where[n.src[0]] = inner
            continue
        weight = load_weight(n)
        if weight:
            work += weight * runs(loops, cols, deps[n])
        for s in n.src:
            if len(where.get(s, ())) <= len(loops):
                where[s] = loops
    return work


def _chain_loads(loops: tuple[UOp, ...], scan: UOp) -> int:
    """What a scan's steps weigh beside its loads: each step waits on the one before it, and
    in that wait a reduce's REDUCE_VECTORS vectors of VECTOR_LANES partial results take as
    many values; the chains run side by side (one per point of the STORE's loops inside the
    scan's: a block of rows, scan_helpers' `_interleaved`, or a scan down columns) share it.
    8 rows of 131071 in 2 blocks of 4 weigh 8 x 131071 x 9 and take two threads (1M elements:
    one core, counted as loads alone); 131 rows of 131 weigh about 131 x 131 x 9, one core."""
    at = loops.index(scan)
    chains = trips(loops[at + 1:])
    steps = trips(loops)
    return steps * (REDUCE_VECTORS * VECTOR_LANES // chains)


def load_weight(n: UOp) -> int:
    """What one computation of n weighs in a loop's work, in loads: a LOAD 1, a libm call
    LIBM_LOADS, anything else 0 (`_work`; a threaded reduce's, thread_helpers)."""
    return 1 if n.op is Ops.LOAD else LIBM_LOADS if n.op in LIBM_CALLS else 0


def runs(loops: tuple[UOp, ...], cols: frozenset[UOp], depends: frozenset[UOp]) -> int:
    """How often a value computed inside `loops` (as `_work` orders them; an interchanged
    reduce's `cols` are printed innermost, inside its reduce loops) that reads the loops
    `depends` is computed: once per iteration of its loops up to the innermost it reads."""
    printed = [r for r in loops if r not in cols] + [r for r in loops if r in cols]
    while printed and printed[-1] not in depends:
        printed.pop()
    return trips(printed)


def _threads(sink: UOp) -> tuple[tuple[tuple[int, ...], int], ...]:
    order = toposort(sink)
    if any(n.op is Ops.RANGE and range_size(n) is None for n in order):
        return ()  # (a symbolic size: the C renderer takes none)
    reduces = [n for n in order if n.op is Ops.REDUCE]
    if any(r.arg[1] == "thread" for red in reduces for r in red.src[1:]):
        return ()  # the kernel's threads are its reduce's
    deps = free_ranges(sink, order)
    chosen = []
    for stores in store_groups(sink):
        # the threads whose shares of the group's work each pay for the parallel region
        # (pack_helpers' `region_threads`, the products' model): none unless two do
        team = region_threads(_work(stores, order, deps), threads())
        loops = _outermost(stores, team) if team >= 2 else ()
        if loops:
            chosen.append((tuple(r.arg[0] for r in loops), team))
    return tuple(chosen)


def _vector_block(size: int) -> int:
    """The block of a threaded vector loop of `size` values (the largest power of two up to
    VECTOR_BLOCK dividing it), or 0 when no block of VECTOR_BLOCK_MIN or more divides it."""
    block = min(size & -size, VECTOR_BLOCK)
    return block if block >= VECTOR_BLOCK_MIN and size > block else 0


def _in_blocks(sink: UOp, nests: tuple[tuple[int, ...], ...]) -> tuple[UOp, tuple]:
    """The SINK with each threaded vector loop (a nest of one upcast range, first of its
    stores' ranges and of no other store's) split into a "block" range, which the threads take
    instead, times a vector loop of `_vector_block` values; and the nests so."""
    fresh = itertools.count(fresh_id(sink))
    stores, out = list(sink.src), []
    for nest in nests:
        group = [st for st in stores if st.src[2:] and st.src[2].arg[0] == nest[0]]
        r = group[0].src[2] if group and len(nest) == 1 else None
        if r is None or r.arg[1] not in _BLOCKED_KINDS or not _vector_block(range_size(r)) \
                or any(r in st.src[2:] for st in stores if st not in group):  # type: ignore
            out.append(nest)
            continue
        m: dict[UOp, UOp] = {}
        outer, inner = split_range(r, _vector_block(range_size(r)), r.arg[1], fresh, m)  # type: ignore
        stores = [st.replace(src=(st.src[0].substitute(m), st.src[1].substitute(m), outer, inner,
                                  *st.src[3:])) if st in group else st for st in stores]
        out.append((outer.arg[0],))
    return sink.replace(src=tuple(stores)), tuple(out)


def parallel(sink: UOp) -> UOp | None:
    """The kernel with its threaded loops named in its arg (a `Parallel`), a threaded vector
    loop in blocks; None when it has its threads already or no loop is worth them."""
    if sink.arg is not None:
        return None
    chosen = _threads(sink)
    if not chosen:
        return None
    sink, nests = _in_blocks(sink, tuple(nest for nest, _ in chosen))
    # a team of at most the nest's iterations (as threaded: blocks, or flattened loops)
    sizes = {n.arg[0]: range_size(n) for n in toposort(sink) if n.op is Ops.RANGE}
    teams = tuple(min(team, math.prod(sizes[i] for i in nest))  # type: ignore[misc]
                  for nest, (_, team) in zip(nests, chosen))
    return sink.replace(arg=Parallel(nests, teams))
