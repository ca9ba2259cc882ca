"""Helpers of `opt.rules`' interchange action: which reductions over a contiguous output axis
run that axis innermost, and which of them keep a register tile of outputs.

In: a lowered STORE (backends/KERNEL_AST.md, "after lowering") not packed by `pack_store`.
Out: `interchanged(st)`, the STORE rewritten into the loop nest it runs as (None when its
reduces do not gain): its last range j marked ACCUMULATED (one accumulator per column, run
inside the reduce loops), split into blocks (outer * block + inner) or, with the row range, into
an unrolled register tile, and each reduce's last loop in passes of a few rows unrolled into its
update. backends/c/render.py prints that nest as it prints any other (`_open_columns`), and the
kernel interpreter runs it: no instruction to the printer is left in the AST.

out[.., j] = f(sum_k g(.., j, k), ..) is worth running with k outside j when a buffer read in a
reduce is contiguous in j but strided in k (the B of an integer matmul, a convolution's input
rows): the inner loop then streams rows and vectorizes, with one accumulator per j. The order
of each sum over k is unchanged, so every value is the same as in the plain loop order.

A sum over k of sums along runs (a batch norm's per-channel sum: over N, of each image's H*W
run) whose runs lie a page or more apart along k runs j between the two: per step of k, every
channel's run one after another, one stream through memory. In the plain order each run of a
page or less starts cold where the hardware prefetchers stopped: a 64x64x32x32 per-channel sum
took 1.4 ms of one core from memory, 0.58 interchanged (a contiguous sum of as much: 0.54).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from rulegrad.rules.choices import current, least_parallel_work, pick, taken
from rulegrad.rules.opt_helpers import VECTOR_LANES, along, vector_values
from rulegrad.rules.pack_helpers import (
    PARALLEL_SHARES,
    packed,
    region_threads,  # (_shared_block's threads)
    stream_threads,
    strided_inside,
)
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import free_ranges, fresh_id, local_read, range_size, stride, trips
from rulegrad.runtime.ops import LIBM_CALLS, Ops
from rulegrad.runtime.target import VECTORS_MAX, cache_bytes, page_bytes, threads, vector_lanes
from rulegrad.runtime.uop import OP_BIT, UOp, toposort

# an interchanged reduce keeps at most this many accumulators on the stack: a wider output row
# is run in blocks of at most this many columns, each block its own pass over the reduce loops
INTERCHANGE_MAX = 4096
# the output block a tiled product keeps in registers (rows x contiguous columns)
TILE_I, TILE_J = 4, 16
# (VECTOR_LANES, the fewest columns in a block: a vector's worth)
# (VECTORS_MAX, the most vectors of accumulators a reduce over rows keeps: runtime/target.py)
# a sum down the columns (an interchanged reduce with no output loop but its columns) adds
# this many rows per pass over its accumulators, in order, in a register: each accumulator is
# loaded and stored once per pass, not once per row. A 2048x2048 float32 column sum (200
# calls each): 0.28 -> 0.17 ms on two threads, 0.87 -> 0.36 on one; 8 rows per pass: 0.24
ROWS_PER_PASS = 4
_COSTLY = frozenset({Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS, Ops.SQRT, Ops.POW,
                     Ops.FDIV, Ops.RECIPROCAL})


def block_j(size: int, itemsize: int, nthreads: int | None = None) -> int:
    """With no output loop around j to split across cores (a sum down the columns of a matrix,
    a product of one row), the threads take blocks of at most this many of its `size` columns:
    a page of them (runtime/target.py's page size), or each thread's share of the row
    (`threads()`) where that is wider and fits the INTERCHANGE_MAX accumulators. Each block
    streams its own part of every row; a narrower block starts a new page on every row, where
    the hardware prefetcher stops, and a wider one streams longer runs: a 2048x2048 float32
    column sum on one core, best of 120, took 1.10 ms in blocks of 256 columns, 1.05 in
    blocks of 512, 0.70-0.83 in blocks of 1024 (a 4 KB page) and 0.54-0.65 as whole rows (a
    loaded machine); a 1x4096 by 4096x4096 product 4.6-4.8 ms of one core's time in 4 blocks
    of 1024, 3.7-4.1 in 2 of 2048 (two threads: one each, 1.1-1.2x faster). A share wider than
    the accumulators keeps the page (12000 columns: 12 blocks of 1000, not 3 of 4000, 2:1 on
    two threads). The share is of the threads that each get a page at least (4 threads share
    2560 columns as 2 blocks of 1280, not 4 of 640: `stream_threads`); `nthreads`: the threads
    that share them (a product's: those its work pays for), by default `threads()`."""
    page = page_bytes() // itemsize
    nthreads = threads() if nthreads is None else nthreads
    share = -(-size // stream_threads(size, itemsize, nthreads, page_bytes()))
    return max(page, share) if share <= INTERCHANGE_MAX else page


def prefetch_rows() -> int:
    """A block of register accumulators reads a few cache lines of each row, then the next row,
    a stride the hardware prefetchers follow late: gcc is told to fetch the row this many steps
    ahead, as many as keep the rows in flight (a block: VECTORS_MAX float32 vectors of a row)
    within a sixteenth of the L1 data cache, so none is evicted before it is read (32 KB: 8
    rows). A 64x256x256 max over the middle axis ran 1.6x faster (0.52 / 0.79 ms on 2 threads,
    3.1 / 5.4 ms on one; the kernel alone, interleaved; 4 rows ahead: 0.61 ms)."""
    return max(1, cache_bytes(1) // 16 // (VECTORS_MAX * VECTOR_LANES * 4))


class Plan(NamedTuple):
    """What `interchanged` does to a STORE (decided once by `_plan`): with a `tile` (rows,
    columns), the last two ranges split into tiles whose points are unrolled accumulators; with
    a `block`, j split into blocks of that many columns (the parallel action may thread the
    blocks); `rows` rows of the reduce's last loop unrolled into each step of its update."""

    tile: tuple[int, int] | None
    block: int | None = None
    rows: int = 1
    vectors: int | None = None  # columns in blocks of this many explicit 8-lane vectors
    prefetch: int = 0  # with `vectors`: each row's vectors fetched this many rows ahead
    narrow: bool = False  # j (no tile) unrolled: a register accumulator per column


# the range kinds a STORE's output range takes when its reduces keep one accumulator per point
# of it (the interchanged columns): "upcast" a column loop gcc vectorizes, "unroll" a register
# tile's rows or columns, "vector" a block of explicit 8-lane vectors of accumulators (a reduce
# range marked ("prefetch", n) reads each row's vectors n rows ahead)
ACCUMULATED = frozenset({"upcast", "unroll", "vector"})


def columns(st: UOp, deps: dict[UOp, frozenset[UOp]] | None = None) -> tuple[UOp, ...]:
    """The STORE's output ranges a reduce of its value depends on that are marked ACCUMULATED:
    the columns `interchanged` moved inside the reduce loops (renderer: one accumulator each)."""
    marked = [r for r in st.src[2:] if r.arg[1] in ACCUMULATED]
    if not marked or not st.src[1]._ops & OP_BIT[Ops.REDUCE]:
        return ()  # (an upcast elementwise loop: known without a walk)
    deps = free_ranges(st) if deps is None else deps
    reds = [n for n in toposort(st.src[1]) if n.op is Ops.REDUCE]
    return tuple(r for r in marked if any(r in deps[red] for red in reds))


def _short_runs(reds: list[UOp], j: UOp) -> int:
    """The length of the reduces' common last loop k when it is shorter than a vector and every
    load that moves with it reads k contiguously and j right after k's run (a max over axes 0
    and 2 of (13, 65521, 2): out[j] reads x[i, j, k], k of 2): the plain order vectorizes k, two
    lanes, and reads each row far apart one output at a time. Interchanged, j runs inside the
    reduce loops with k unrolled into each step (`_in_passes`), one stream per row along j's
    contiguous run. 0 when not so (the same order of each reduce's values either way)."""
    ks = {r.src[-1] for r in reds if len(r.src) > 1}
    if len(ks) != 1 or len(reds[0].src) < 2:
        return 0
    k = ks.pop()
    size = range_size(k)
    if size is None or not 1 < size < VECTOR_LANES:
        return 0
    found = False
    for r in reds:
        for _, sk, sj in _load_strides(r, k, j):
            if sk is None or sj is None or (sk and (sk != 1 or sj != size)):
                return 0
            found = found or sk == 1
    return size if found else 0


def _load_strides(red: UOp, k: UOp, j: UOp) -> list[tuple[UOp, int | None, int | None]]:
    """Each read of memory in the reduce's body, with how far it moves per step of k and of j."""
    return [(n, stride(n.src[0].src[1], k), stride(n.src[0].src[1], j))
            for n in toposort(red.src[0]) if n.op is Ops.LOAD and n.src[0].op is Ops.INDEX]


def _page_runs(red: UOp, j: UOp, k: UOp) -> bool:
    """True when the loads in the reduce's body that move with k move a page or more per step
    of k (a new page: where the hardware prefetchers stop) and less per step of j (a sum over
    N, H and W of an N, C, H, W tensor: each channel's run of H*W is a page further on per n,
    and the next channel's run follows it)."""
    found = False
    for n, sk, sj in _load_strides(red, k, j):
        if sk is None or sj is None:
            return False
        if sk:
            if abs(sk) * n.dtype.itemsize < page_bytes() or not 0 < abs(sj) < abs(sk):
                return False
            found = True
    return found


def reduces_over(st: UOp, j: UOp, deps: dict[UOp, frozenset[UOp]]) -> list[UOp]:
    """The reduces of a STORE's value that depend on range j."""
    return [n for n in toposort(st.src[1]) if n.op is Ops.REDUCE and j in deps[n]]


def outer_reduces(st: UOp, j: UOp, deps: dict[UOp, frozenset[UOp]]) -> list[UOp]:
    """The reduces of a STORE's value that depend on its last range j and are not inside
    another such reduce: the ones an interchange runs j inside of."""
    reds = reduces_over(st, j, deps)
    inner = {n for r in reds for n in toposort(r.src[0])[:-1] if n.op is Ops.REDUCE}
    return [r for r in reds if r not in inner]


def _reuses(red: UOp, i: UOp, j: UOp, deps: dict[UOp, frozenset[UOp]]) -> bool:
    """True when a load in the reduce's body is the same for every i or for every j (a matmul's
    A or B): a tile of i x j outputs then reads it once per tile, not once per output. A sum
    down a middle axis reads each element once whatever the order, and is better as rows."""
    return any(n.op is Ops.LOAD and (i not in deps[n] or j not in deps[n])
               for n in toposort(red.src[0]))


def _costly_outside(red: UOp, j: UOp, deps: dict[UOp, frozenset[UOp]]) -> bool:
    """True when the reduce's body computes a transcendental that does not depend on j (a
    softmax fused into the matmul after it): a tile would recompute it once per column tile,
    the row form once per (i, k)."""
    return any(n.op in _COSTLY and j not in deps[n] for n in toposort(red.src[0]))


def _repeats(red: UOp, j: UOp, deps: dict[UOp, frozenset[UOp]]) -> list[UOp]:
    """The values of the reduce's body that vary with j but not with its loops, read by one
    that does, when more of the body is theirs than varies with its loops (else none): the
    plain order computes them once per column, the interchange once per row and column (an
    argmax's max, its partials combined in the reader: 16 loads a step down 4096 x 3, 38x
    slower). `_hoisted` computes them once per column into an array. A kernel-local array is
    no such value (its element is: hoisting the array stored it whole as one element of
    another, C that did not compile: x.sort(0)[0][-1], tests/test_sort_index_58.py)."""
    own, ops = set(red.src[1:]), [n for n in toposort(red.src[0]) if n.dtype is not dtypes.index
                                   and n.op not in (Ops.CONST, Ops.DEFINE_REG, Ops.DEFINE_LOCAL)]
    varying = [n for n in ops if deps[n] & own]
    fixed = [n for n in ops if j in deps[n] and not deps[n] & own]
    if len(fixed) <= len(varying):
        return []
    return list(dict.fromkeys(s for n in varying for s in n.src if s in fixed))


def _hoisted(st: UOp) -> UOp | None:
    """The STORE with each value `_repeats` names read from a kernel-local array over a fresh
    range of j's size ("local": the renderer fills it once, where its other loops are bound);
    None when there are none, or its last range is no loop or shorter than a vector (4096 x 3:
    3 columns a step, 0.7x the plain order's speed)."""
    j = st.src[-1]
    if len(st.src) < 3 or j.arg[1] != "loop" or (range_size(j) or 0) < VECTOR_LANES:
        return None
    if not st.src[1]._ops & OP_BIT[Ops.REDUCE]:
        return None  # an elementwise kernel: nothing to hoist, known without a walk
    deps = free_ranges(st)
    reds = reduces_over(st, j, deps)
    fixed = list(dict.fromkeys(v for r in reds for v in _repeats(r, j, deps)))
    if not fixed or any(n.op in LIBM_CALLS for v in fixed for n in toposort(v)):
        return None  # (the array's fill loop calls libmvec, another reader libm: ulps apart)
    fresh = fresh_id(st)
    reads = {}
    for i, v in enumerate(fixed):
        own = UOp.range(range_size(j), fresh + i, "local")  # type: ignore[arg-type]
        array = UOp(Ops.DEFINE_LOCAL, v.dtype, (v.substitute({j: own}), own))
        reads[v] = local_read(array, j)
    return st.replace(src=(st.src[0], st.src[1].substitute(reads), *st.src[2:]))


def _plan(st: UOp) -> Plan | None:
    ranges = st.src[2:]
    if st.arg is not None or not ranges or any(range_size(r) is None for r in ranges):
        return None
    j = ranges[-1]
    if j.arg[1] != "loop":
        return None  # interchanged already, or given another action
    if not st.src[1]._ops & OP_BIT[Ops.REDUCE]:
        return None  # an elementwise kernel (no REDUCE under it, known without a walk)
    deps = free_ranges(st)
    # a reduce that does not depend on j (a kernel-local row max or sum) is computed once per
    # row outside j's loop wherever it is read: only the others are interchanged
    reds = reduces_over(st, j, deps)
    if not reds or any(range_size(k) is None for r in reds for k in r.src[1:]):
        return None
    if any(k.arg[1] != "reduce" for r in outer_reduces(st, j, deps) for k in r.src[1:]):
        return None  # (a reduce given vectors of its own keeps them)
    # each reduce's body must hold no other reduce over j: every sum gets its own k loops;
    # but a sum over runs a page apart of sums along each run (a per-channel sum over N, H, W:
    # the outer reduce over N, the inner over H*W) runs j between the two, so each step of the
    # outer loop reads every channel's run one after another, a stream through memory, not a
    # run per page; each sum keeps its order, the outer loop one row per pass
    if any(n.op is Ops.REDUCE and j in deps[n] for r in reds for n in toposort(r.src[0])[:-1]):
        outer = outer_reduces(st, j, deps)
        if len(outer) != 1 or len(outer[0].src) != 2 or packed(st, noted=False) is not None or \
                not _page_runs(outer[0], j, outer[0].src[1]):
            return None
        plan = _columns(st, j, outer, 1, deps)
        if plan is None:
            return None
        # too few channels to share as blocks (3 colours): one channel per core, as it was,
        # beats streaming them all on one (2-2.3x faster streams than runs of a page, 1.1x
        # than runs of 16 pages: less than the second core)
        big = _work(j, outer, deps) >= least_parallel_work()
        return None if len(ranges) == 1 and plan.block is None and big else plan
    if packed(st, noted=False) is not None:  # the packing action's (a float sum of products)
        return None
    short = _short_runs(reds, j)
    if short:
        return _columns(st, j, reds, short, deps)
    if not all(strided_inside(r, j, r.src[-1]) for r in reds):
        return None
    if any(_repeats(r, j, deps) for r in reds):
        return None
    # a tile binds the row index innermost: what is computed once per row (a kernel-local
    # array or reduction) would be recomputed per step of k, so those kernels keep rows
    per_row = any(n.op is Ops.DEFINE_LOCAL or (n.op is Ops.REDUCE and n not in reds)
                  for n in toposort(st.src[1]))
    # (vectors run j alone inside the reduce's loops: an array over neither, `_hoisted`'s, is
    # filled once outside them in either order)
    loops = {j, *(k for r in reds for k in r.src[1:])}
    per_row_v = any((n.op is Ops.DEFINE_LOCAL and deps[n] & loops)
                    or (n.op is Ops.REDUCE and n not in reds) for n in toposort(st.src[1]))
    if (len(reds) == 1 and not per_row and len(ranges) >= 2
            and range_size(ranges[-2]) % TILE_I == 0  # type: ignore[operator]
            and range_size(j) % TILE_J == 0 and ranges[-2] in deps[reds[0]]  # type: ignore[operator]
            and _reuses(reds[0], ranges[-2], j, deps)
            and not _costly_outside(reds[0], j, deps)):
        return Plan((TILE_I, TILE_J))
    # registers for a row's columns under an output loop; with none, for a max or min whose
    # threads share no blocks of j (one core, too little work, a prime width) and whose row
    # one block of vectors holds, read once: in memory each step loaded, blended in four ops
    # and stored each accumulator (100003 x 13 on one core: narrow_reduce's 52 partials 2.3x
    # faster). A sum's step there is one add gcc vectorizes at the target's width, rows per pass:
    # as fast or faster than 8-lane registers (100003 x 5, 7, 13, 16 on one core: 1.3-1.4x)
    # (a product of one row streams its rows: no blocks shorter than a page of them)
    streams = _product(reds)
    alone = len(ranges) == 1 and _shared_block(j, reds, deps, streams) is None
    size = range_size(j)
    mx = reds[0].arg in (Ops.MAX, Ops.MIN)
    if len(reds) == 1 and not per_row_v and (len(ranges) >= 2 or alone):
        vectors = _vectors(st, reds[0], j)
        lanes = vector_lanes(reds[0].dtype.itemsize)
        if vectors is not None and (not alone or (vectors * lanes >= size and mx)):
            return Plan(None, vectors=vectors, prefetch=prefetch_rows())
    # with no output loop around j, every reduce's rows several per pass (when they divide)
    per_pass = max(1, pick(current().rows_per_pass, ROWS_PER_PASS))
    rows = per_pass if len(ranges) == 1 and all(
        range_size(r.src[-1]) % per_pass == 0 for r in reds) else 1  # type: ignore[operator]
    plan = _columns(st, j, reds, rows, deps, streams)
    return plan._replace(narrow=True) if plan is not None and _narrow(reds, j, plan.rows) else plan


# The float columns whose `omp simd` loop gcc (12, -O3) kept as an array in memory, each
# accumulator loaded and stored every step of k: a float32 row of 5 (4 lanes and one). Over 3, 4,
# 6 or 7 (or float64's 3) it kept them in vector registers, where the unrolled scalars ran
# 0.46-0.85x its speed (packed lane by lane, or scalar under an epilogue), with AVX-512, AVX2 or
# AVX alike; clang ran both forms at one speed (0.99-1.00x). tests/test_review_64e.py
NARROW_FLOAT_COLUMNS = frozenset({5})


def _narrow(reds: list[UOp], j: UOp, rows: int) -> bool:
    """Whether a product's row is narrower than a vector (fewer columns than `vector_lanes`) and
    faster with its columns unrolled, each accumulator a register: an integer sum (its order
    free, gcc vectorizes k under the unrolled columns: 2x30000x3 int32 9.6x, 5x4099x7 2.1x, a
    product of one row in passes of rows 1.1-2.7x), or a float one one row per pass over
    `NARROW_FLOAT_COLUMNS` columns (`x @ w` of 5 columns and a long k: as "upcast" an array in
    memory around a 5-lane `omp simd` gcc ran scalar; 2x100003x5 on one core 0.5x torch eager,
    now 2.9-3.4x the old speed, with a bias and relu or gelu 2.3x). Other float rows keep
    "upcast" (see NARROW_FLOAT_COLUMNS; with 4 rows per pass even 5 columns ran 0.81x). Rows one
    at a time: a tile of rows x all the columns, each read of w shared by the tile, ran slower
    (3x100003x7 as 3x7: 0.77x, its 21 scalar accumulators packed into vectors by gcc lane by
    lane; 6x100003x5 as 6x5 0.85x of the rows alone; 7x50000x16 as 7x16: 8x the packed
    product's time)."""
    size = range_size(j)
    if len(reds) != 1 or size is None or size >= vector_lanes(reds[0].dtype.itemsize) or \
            not _product(reds):
        return False
    return reds[0].dtype.is_int or (rows == 1 and size in NARROW_FLOAT_COLUMNS)


def _product(reds: list[UOp]) -> bool:
    """Whether the reduces' bodies are a product (`_shared_block`'s streamed rows): a MUL of two
    values read from memory (each a LOAD's, cast or not). A value scaled by a constant or by an
    index expression (`(x * 2).sum(0)`, a loop counter's value) is the plain column sum's one
    stream, and a body with a libm call (`exp(x * 0.5)`) is work per element the threads share,
    as `exp(x)`'s: neither is a product."""
    body = [n for r in reds for n in toposort(r.src[0])]
    if any(n.op in LIBM_CALLS for n in body):
        return False
    read: set[UOp] = set()
    for n in body:  # (sources first: toposort's order)
        if n.op is Ops.LOAD or any(s in read for s in n.src):
            read.add(n)
    return any(n.op is Ops.MUL and n.dtype is not dtypes.index and all(s in read for s in n.src)
               for n in body)


def _work(j: UOp, reds: list[UOp], deps: dict[UOp, frozenset[UOp]]) -> int:
    """The steps of j times those of the longest reduce's loops and of the reduces over j in
    it (a reduce not over j runs once per row, outside j's loop)."""
    return range_size(j) * max(trips(k for n in toposort(r)  # type: ignore[operator]
                                     if n.op is Ops.REDUCE and j in deps[n] for k in n.src[1:])
                               for r in reds)


def _shared_block(j: UOp, reds: list[UOp], deps: dict[UOp, frozenset[UOp]],
                  streams: bool = False) -> int | None:
    """The width of the blocks of j the threads share with no output loop around it, None when
    they share none: one thread, too little work, no even split (`_block`), or, where the
    reduces `streams` rows of memory (a product of one row: a multiply-add per value read; a
    column sum or max keeps its blocks), a row whose share per thread would be under half a
    page (pack_helpers' `stream_threads`, as a streamed product's: each block would start a new
    page on every few rows, where the hardware prefetchers stop; one core streams the whole
    rows, one run: 1x2048 by 2048x512 in 2 blocks of 256 on two threads took 0.052 ms, whole
    rows on one 0.037; 1x2048 by 2048x1500 in 2 blocks of 750 took the busier thread 0.083 ms
    of CPU, whole rows on one 0.130, and 1031 columns 0.061 against 0.103). The threads are
    those whose shares of the work each pay for the parallel region (pack_helpers'
    `region_threads`, every threaded loop's model), none unless two do; the blocks are sized
    for them (work past one share's cost had taken blocks for every thread)."""
    team = region_threads(_work(j, reds, deps), threads())
    if team < 2:
        return None
    size, itemsize = range_size(j), reds[0].dtype.itemsize
    # a product's blocks as many for every thread that shares them (3 threads took 4096
    # columns as 4 blocks of 1024: one thread did two)
    spread = stream_threads(size, itemsize, team) if streams else 1  # type: ignore[arg-type]
    if streams and spread == 1:
        return None  # (shares under half a page)
    block = _block(size, block_j(size, itemsize, spread if streams else team),  # type: ignore
                   spread)
    if block is None or block > INTERCHANGE_MAX:
        return None  # (none may fit)
    return block


def _columns(st: UOp, j: UOp, reds: list[UOp], rows: int,
             deps: dict[UOp, frozenset[UOp]], streams: bool = False) -> Plan | None:
    """The interchange of reduces `reds` with one accumulator per column of j: j's blocks
    shared by the threads when no output loop is around it (`streams`: `_shared_block`'s),
    else whole or in blocks."""
    block = _shared_block(j, reds, deps, streams) if len(st.src) == 3 else None
    if block is not None:
        return Plan(None, block, rows=rows)
    size = range_size(j)
    if size <= INTERCHANGE_MAX:  # type: ignore[operator]
        return Plan(None, rows=rows)
    # a row wider than the accumulators the stack keeps: the fewest blocks of at most that
    # many, whole vectors wide, the last ending at the row's end (a prime width too), one after
    # another
    count = -(-size // INTERCHANGE_MAX)  # type: ignore[operator]
    block = -(-size // count)  # type: ignore[operator]
    return Plan(None, -(-block // VECTOR_LANES) * VECTOR_LANES, rows=rows)


def _vectors(st: UOp, red: UOp, j: UOp) -> int | None:
    """How many explicit vectors of accumulators a reduce over rows (a max or sum down a middle
    axis) keeps in registers per block of columns, of its dtype's lanes (8 float32 or int32,
    4 float64: `vector_lanes`): the most, up to VECTORS_MAX, that divide j's vectors; where j
    is not whole vectors (13 or 52 columns), one block of them all, the last vector of the row
    overlapping the one before it (its own accumulators: each column's lanes combine the same
    rows in the same order, so the same values; render.py's `_open_columns`). None when j is
    shorter than a vector, is not whole vectors and more than VECTORS_MAX of them (65 columns:
    two blocks read every row twice, 0.57-0.86x the time of one pass with its accumulators in
    memory, ab.py), or a value along j (the reduce's reads, contiguous in j, and what the store
    computes from it) has no explicit vector form: float64 lanes hold float64 values only, an
    int32 or float32 reduce's lanes float32, int32 and bool lanes (an argmax's first hit). In
    memory, every row's step loaded and stored each accumulator beside its one read (a max down
    100003 rows of 13: 0.3x the time in vectors, ab.py)."""
    size, dt = range_size(j), red.dtype
    if dt not in (dtypes.float32, dtypes.float64, dtypes.int32) or \
            red.arg not in (Ops.ADD, Ops.MAX, Ops.MIN):
        return None
    lanes = vector_lanes(dt.itemsize)
    if dt is not dtypes.float32 and red.arg is Ops.ADD:
        return None  # (a float64 or int sum's partials: rangeify.rules' `partial_lanes`)
    if dt is dtypes.int32 and all(n.dtype in (dt, dtypes.index) for n in along(red.src[0], j)):
        return None  # (ints alone: gcc's loop at the target's width, one max instruction a
        # step; 16x127x127x3 in 8-lane registers 0.53x. An argmax's float compares: 3.8x)
    if size < lanes or st.src[1].dtype is not dt:  # type: ignore[operator]
        return None
    if stride(st.src[0].src[1], j) != 1:
        return None  # (the accumulators are stored as whole vectors: j written contiguously)
    out = st.src[0].src[0]
    inside = set(toposort(red))  # the reduce's own body, and the reduce
    outside = [n for n in along(st.src[1], j) if n not in inside]
    if not vector_values(along(red.src[0], j) + outside + along(st.src[0].src[1], j), j, out,
                         (1,), dt=dtypes.float64 if dt is dtypes.float64 else dtypes.float32):
        return None
    count = -(-size // lanes)  # type: ignore[operator]
    widest = max(1, pick(current().vectors_max, VECTORS_MAX))
    if size % lanes:  # type: ignore[operator]
        return count if count <= widest else None
    return max(d for d in range(1, widest + 1) if count % d == 0)


def _block(size: int, widest: int, spread: int = 1) -> int | None:
    """The width of the column blocks threads share: size split into n >= 2 equal blocks, the
    fewest that makes them at most `widest` (`block_j`) wide (else the narrowest wider split),
    at least VECTOR_LANES wide, n a multiple of `spread` (the threads, where each must take as
    many). With no equal split (a prime width: a max down 97 rows of 1009 columns ran on one
    core), as many blocks, whole vectors wide, the last ending at the row's end
    (`split_range`), where the widest is within 1/PARALLEL_SHARES of the mean; else None (too
    narrow to share)."""
    first = -(-max(2, -(-size // widest)) // spread) * spread
    fits = [size // n for n in range(first, size // VECTOR_LANES + 1, spread) if size % n == 0]
    fits = fits or [size // n for n in range(first - spread, 1, -spread) if size % n == 0]
    if fits:
        return fits[0]
    block = -(-size // first)
    block = -(-block // VECTOR_LANES) * VECTOR_LANES
    count = -(-size // block)
    even = count > 1 and block * count <= size * (1 + 1 / PARALLEL_SHARES)
    return block if even else None


def _reordered(st: UOp) -> UOp | None:
    """The STORE with an outer output range moved last (the reorder action), when its reduces
    read contiguously along that range and strided along their own last loop, but not so along
    the last range: a sum over a middle axis whose output is transposed (x.permute(2, 0, 1)
    .sum(2): out[c, a] reads x[a, b, c]; a scan along a strided axis). Its interchange then
    runs that range inside the reduce loops, each row of the input streamed; the STORE writes
    out[c, a] strided, once per output. None when no range qualifies or the last one does."""
    ranges = st.src[2:]
    if st.arg is not None or len(ranges) < 2 or any(r.arg[1] != "loop" for r in ranges):
        return None
    if not st.src[1]._ops & OP_BIT[Ops.REDUCE] or any(range_size(r) is None for r in ranges):
        return None
    deps = free_ranges(st)

    def qualifies(c: UOp) -> bool:
        reds = reduces_over(st, c, deps)
        return bool(reds) and all(len(r.src) > 1 and strided_inside(r, c, r.src[-1])
                                  for r in reds)

    if qualifies(ranges[-1]):
        return None
    for c in reversed(ranges[:-1]):
        if qualifies(c):
            return st.replace(src=(*st.src[:2], *(r for r in ranges if r is not c), c))
    return None


def interchanged(st: UOp) -> UOp | None:
    """For a STORE not yet given an action whose reduces read contiguously along its last range
    (or along another output range, then moved last: `_reordered`; else None, no rewrite): the
    loop nest its interchange runs (`_nest`), recorded as an action (`_line`)."""
    plan, reordered = _plan(st), False
    if plan is None:
        moved = _reordered(st)
        reordered = moved is not None
        moved = _hoisted(st) if moved is None else moved
        plan = _plan(moved) if moved is not None else None
        if plan is None:
            return None
        st = moved  # type: ignore[assignment]
    taken(_line(st, plan, reordered))
    return _nest(st, plan)


def _line(st: UOp, plan: Plan, reordered: bool) -> str:
    """DEBUG=2's line for the interchange `plan` of STORE st (its ranges before the nest)."""
    ranges = st.src[2:]
    j, size = ranges[-1], range_size(ranges[-1])
    if plan.tile is not None:
        return f"TILE r{ranges[-2].arg[0]} x r{j.arg[0]} ({plan.tile[0]}x{plan.tile[1]})"
    line = f"REORDER r{j.arg[0]} last, " if reordered else ""
    line += f"INTERCHANGE r{j.arg[0]} inside the reduce loops"
    if plan.vectors is not None:
        lanes = vector_lanes(st.src[1].dtype.itemsize)
        width = min(plan.vectors * lanes, size)  # type: ignore[type-var]
        return line + (f", in blocks of {-(-width // lanes)} vectors of {lanes} accumulators in "
                       f"registers, rows fetched {plan.prefetch} ahead")
    if plan.narrow:
        line += f", its {size} columns unrolled into registers"
    if plan.block is not None and plan.block < size:  # type: ignore[operator]
        line += f", in {-(-size // plan.block)} blocks of {plan.block}"  # type: ignore[operator]
    return line + (f", {plan.rows} rows per pass" if plan.rows > 1 else "")


def _nest(st: UOp, plan: Plan) -> UOp:
    """The loop nest of STORE st's interchange `plan`: each outer reduce's last loop in passes
    of `rows` (`_in_passes`), then j marked "upcast" (one accumulator per column, inside the
    reduce loops), split into blocks of `block` columns (outer * block + inner, the outer a
    "block" loop), or with the row range before it into a register tile (each split, the inner
    parts "unroll", after the outer ones). Every sum keeps its order."""
    ranges = st.src[2:]
    fresh = itertools.count(fresh_id(st))
    value = st.src[1]
    if plan.rows > 1:
        deps = free_ranges(st)
        ks: dict[UOp, UOp] = {}
        passes = {r: _in_passes(r, plan.rows, ks)
                  for r in outer_reduces(st, ranges[-1], deps)}
        value = value.substitute(passes)  # type: ignore[arg-type]
    mapping: dict[UOp, UOp] = {}
    if plan.tile is not None:
        (io, ii), (jo, ji) = (split_range(r, n, "unroll", fresh, mapping)
                              for r, n in zip(ranges[-2:], plan.tile))
        loops = (*ranges[:-2], io, jo, ii, ji)
    elif plan.vectors is not None:  # blocks of explicit vectors, the last range's rows ahead
        k = outer_reduces(st, ranges[-1], free_ranges(st))[0].src[-1]
        mapping[k] = k.replace(arg=(k.arg[0], "prefetch", plan.prefetch))
        width = plan.vectors * vector_lanes(st.src[1].dtype.itemsize)
        if width < range_size(ranges[-1]):  # type: ignore[operator]
            jo, ji = split_range(ranges[-1], width, "vector", fresh, mapping)
            loops = (*ranges[:-1], jo, ji)
        else:
            mapping[ranges[-1]] = ji = ranges[-1].replace(arg=(ranges[-1].arg[0], "vector"))
            loops = (*ranges[:-1], ji)
    elif plan.block is not None and plan.block < range_size(ranges[-1]):  # type: ignore
        jo, ji = split_range(ranges[-1], plan.block, "upcast", fresh, mapping)
        loops = (*ranges[:-1], jo, ji)
        if range_size(ranges[-1]) % plan.block:  # type: ignore[operator]
            # the last block ends at the row's end; the columns the block before it wrote
            # (the same values, computed again) are not stored again: j + 1 > jo * block
            idx = st.src[0].substitute(mapping)
            gate = (jo * plan.block).alu(Ops.CMPLT, mapping[ranges[-1]] + 1)
            return st.replace(src=(idx.replace(src=(*idx.src, gate)),
                                   value.substitute(mapping), *loops))
    else:
        j = ranges[-1]
        mapping[j] = j.replace(arg=(j.arg[0], "unroll" if plan.narrow else "upcast"))
        loops = (*ranges[:-1], mapping[j])
    idx, value = st.src[0].substitute(mapping), value.substitute(mapping)
    return st.replace(src=(idx, value, *loops))


def split_range(r: UOp, amount: int, kind: str, fresh: itertools.count,
                mapping: dict[UOp, UOp]) -> tuple[UOp, UOp]:
    """RANGE r as outer * amount + inner: the outer a "block" loop (a new id), the inner of
    `kind` (r's id); `mapping` takes r to that sum. When amount does not divide r's size, the
    last block starts at size - amount instead (min(outer * amount, size - amount) + inner):
    every block whole, the last overlapping the one before it."""
    size = range_size(r)
    outer = UOp.range(-(-size // amount), next(fresh), "block")  # type: ignore[operator]
    inner = UOp.range(amount, r.arg[0], kind)
    start = outer * amount
    if size % amount:  # type: ignore[operator]
        start = start.alu(Ops.MIN, UOp.const(dtypes.index, size - amount))  # type: ignore
    mapping[r] = start + inner
    return outer, inner


def _in_passes(red: UOp, rows: int, ks: dict[UOp, UOp]) -> UOp:
    """The loop-form REDUCE with its last loop k in passes of `rows`: over k // rows, each
    step combining rows values in order into the accumulator (op(op(acc, x[k0]), x[k0+1])..),
    which the printer keeps in a register for the pass. The same values in the same order.
    `ks`: k -> its pass range, shared by the reduces over the same k."""
    update, k = red.src[0], red.src[-1]
    if k not in ks:  # (k's id: the reduce is the same one, its loop in passes)
        ks[k] = UOp.range(range_size(k) // rows, k.arg[0], "reduce")  # type: ignore
    loops = (*red.src[1:-1], ks[k])
    reg = update.src[0]
    value = reg.replace(src=loops)
    for step in range(rows):
        value = update.substitute({reg: value, k: ks[k] * rows + step})
    return red.replace(src=(value, *loops))
