"""Helpers of `opt.rules`' packing action: which sums of products run as packed, register-tiled
loops, and how (the tile, the panels, which operand is packed, which loop is threaded).

In: a lowered STORE (backends/KERNEL_AST.md, "after lowering"). Out: `packed(st)`, the STORE
with a `Pack` as its arg, which `backends/c/gemm.py` prints as it says, or None.

A STORE qualifies when every REDUCE in its value is a float32/float64 sum of products (loop form
`REDUCE(ADD(acc, x * y), *ranges)`; a float16 matmul's or convolution's is a float32 sum of the
operands widened, the frontend's) and its ranges split into columns j (one range, read by y and
not by x), rows (read by x and not by y: one range for a matmul, several for a convolution's
output pixels, flattened into one row count) and batch (the rest, looped outside). Then
out[.., rows, j] = f(sum_k x(rows, k) * y(k, j), ..) is a matrix product whatever x and y are.

The action changes how the sums are computed, never their order: each output's sum still runs
over k in order, each step a fused multiply-add where the CPU has one (the FMA contract of
runtime/semantics.py's docstring, as BLAS).
"""

from __future__ import annotations

import math

from rulegrad.rules.choices import current, least_parallel_work, pick, taken
from rulegrad.rules.lower_helpers import from_identity, reduce_loop
from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.loops import (
    free_ranges,
    fresh_id,
    local_read,
    range_size,
    row_major,
    stride,
    trips,
)
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.record import FrozenRecord
from rulegrad.runtime.target import (
    block_library,
    cache_bytes,
    f16c,
    page_bytes,
    stack_bytes,
    threads,
    vector_bytes,
    vector_lanes,
    vector_registers,
)
from rulegrad.runtime.uop import OP_BIT, UOp, toposort

# The register tile's geometry is not a size choice: the block library's blocks are compiled
# for it once per cache, whatever the width (backends/c/blocks.py). A panel is 2 vector
# registers of columns (16 float32 with AVX2, 32 with AVX-512: runtime/target.py), two
# independent FMA chains per broadcast of A.
PANEL_VECTORS = 2
# F16C's widening copy of a transposed float16 y, per element, over a float32 row's vector copy
# (blocks.py's `_half_pack`: 48 instructions for 8x8 elements against 16)
HALF_COPY = 3
# the vector registers of the narrowest target the tile must fit (AVX2; AVX-512 has 32, and
# keeps the same tile: its 12 accumulators already cover the FMA latency)
TILE_REGISTERS = 16
# as many rows as fit beside one broadcast of A and a panel of B: 6 rows x 2 vectors = 12
# accumulators + 2 + 1 = 15 of 16 registers. 6 rows beat 4 (8 accumulators barely cover the
# FMA latency) by about 1.3x (bench/kernels.py)
TILE_ROWS = (TILE_REGISTERS - PANEL_VECTORS - 1) // PANEL_VECTORS


def tile_rows(rows: int) -> int:
    """The register tile's rows for a product of `rows` rows: as few tiles as TILE_ROWS allows,
    their rows shared evenly. The last tile computes TILE_ROWS rows whether or not there are
    rows for them (gemm.py's `_row_tiles`), so 8 rows as 6 + 2 compute 12 rows of multiply-adds
    for 8; as 4 + 4, 8. The tiles are as many, each reads the same panels, and one of fewer
    rows takes no longer than a full one (a 6-row tile is the faster per row, not per tile)."""
    tiles = -(-rows // TILE_ROWS)
    return -(-rows // tiles) if rows > 0 else 1


# multiply-adds below which the plain loops are as good: packing's fixed cost (a panel copy, a
# team) against its speed-up, a ratio of times no machine file gives; search would tune it
MIN_WORK = 1 << 15
# (the work below which a loop nest runs on one core: runtime/target.py's PARALLEL_MIN_WORK,
# read through choices.least_parallel_work)
# Iterations per thread past which the one share longer than the rest (when the threads do not
# divide a threaded loop) leaves the others idle at most 1/PARALLEL_SHARES of the time: a
# fraction, not a machine fact (every action's: the parallel loops', the packed products')
PARALLEL_SHARES = 8


def balanced(iterations: int, nthreads: int) -> bool:
    """Whether `iterations` split across `nthreads` threads with little idle time: evenly, or
    with at least PARALLEL_SHARES each."""
    return iterations % nthreads == 0 or iterations >= PARALLEL_SHARES * nthreads


def idle(iterations: int, nthreads: int) -> float:
    """The longest share over the mean share of a static split: 1 when even, 4/3 for 3
    iterations on 2 threads."""
    return -(-iterations // nthreads) * nthreads / iterations


# splits of the work per thread that keep the threads' shares even (the last grab, or the last
# batch iteration, at most 1/16 or 1/2 of a share): fractions, not machine facts
GRABS_PER_THREAD = 16
BATCH_PER_THREAD = 2
# row tiles a thread takes at a time, at most, when the rows are the output's contiguous axis
# (a convolution's pixels): neighbouring tiles share the output's cache lines, and two cores
# writing one line pass it back and forth (the 8x16x32x32 conv: 1.17 -> 0.76 ms on 2 threads).
# A matmul's tiles are whole rows apart: one at a time. Measured on one shape: search's to tune
GRAB_TILES = 16


def batch_shares(batch: int, rows: int, work: int, wakes: int) -> bool:
    """Whether the threads split a loop of `batch` iterations (heads, a batch of products) of
    `work` multiply-adds in all, rather than the row tiles (TILE_ROWS each) of each iteration's
    `rows`: when the batch shares evenly (`balanced`) or no worse than the tiles, or a team
    over the tiles, woken `wakes` times (once per iteration of every batch loop), would get too
    little work each time (`least_parallel_work`; 3 images x 4 groups x 37 output rows of a
    grouped convolution woke 444 teams of 5k multiply-adds: 30x slower than torch). Each
    iteration is a large share: 3 on 2 threads ran as 2 and 1."""
    nthreads, tiles = threads(), -(-rows // tile_rows(rows))
    if balanced(batch, nthreads) or work // wakes < least_parallel_work():
        return True
    return idle(batch, nthreads) <= idle(tiles, nthreads)


def batch_parallel_min() -> int:
    """Batch iterations from which the batch loop is the threaded one: BATCH_PER_THREAD per
    thread (runtime/target.py's `threads()`: the usable cores, or RULEGRAD_THREADS)."""
    return BATCH_PER_THREAD * threads()


class Pack(FrozenRecord):
    """The packing action on a STORE (its arg): range ids of the rows (flattened in this order)
    and of the columns, the register tile (`tile` rows x `panel` columns), whether the rows'
    operand x is packed per tile (pa[k][row], read by every panel) or read in place, and which
    loop is split across cores: "batch" (the outermost batch loop), "tiles" (the row tiles,
    the panels packed once and shared), "panels" (the columns' panels, each packed by the
    thread that claims it and run over every row tile there: rows too few to share) or ""
    (one core). With `outer`, each panel is packed and run over by every row tile before the
    next panel (the "panels" split is so too; `panels_outer`), else every panel is packed
    first, then each row tile runs over all of them. With `stream` (one row tile), y is not
    packed: `stream` columns at a time are read in place, a row of y a step, into sums kept in
    memory (`stream_width`). With `inplace` (several row tiles, y small: `read_in_place`), y is
    not packed either: the register block reads each whole panel's columns in y, a row of y
    apart, and the last part-full panel is streamed. With `dots` (`x @ w.T`, both operands read
    forward along k: `_tiled`), neither is packed: each tile's rows and each panel's columns are
    the block library's tiled dot (blocks.py's `_dot`), several rows by several columns of
    vector accumulators along k."""

    __slots__ = ("rows", "cols", "tile", "panel", "pack_a", "parallel", "grab", "outer", "group",
                 "stream", "staged", "inplace", "team", "dots")
    rows: tuple[int, ...]
    cols: int
    tile: int
    panel: int
    pack_a: bool
    parallel: str
    grab: int  # row tiles a thread takes at a time ("tiles" with x packed)
    outer: bool  # the panels outside the row tiles
    group: int  # with `outer`: panels copied side by side, a row of y at a time (`panel_group`)
    stream: int  # columns read in place at a time, y not packed (`stream_width`); 0: packed
    staged: bool  # every panel first: y read from a kernel-local array of them (`stage_panels`)
    inplace: bool  # y's panels read in place by the register block (`read_in_place`)
    # the threads `parallel` runs on (`region_threads` of its region's multiply-adds, at most
    # the iterations they claim: `claims`), printed as `num_threads` or a launch's
    # RenderedKernel.team; 0 without `parallel`
    team: int
    dots: bool  # tiled dots of x's rows and y's columns, both read in place along k

    def __init__(self, rows: tuple[int, ...], cols: int, tile: int, panel: int, pack_a: bool,
                 parallel: str, grab: int = 1, outer: bool = False, group: int = 1,
                 stream: int = 0, staged: bool = False, inplace: bool = False,
                 team: int = 0, dots: bool = False) -> None:
        self._init(rows, cols, tile, panel, pack_a, parallel, grab, outer, group, stream, staged,
                   inplace, team, dots)

    def describe(self) -> str:
        rows = " ".join(f"r{r}" for r in self.rows)
        what = f"PACK rows {rows} x columns r{self.cols} (tile {self.tile}x{self.panel}"
        what += ", A packed)" if self.pack_a else ")"
        what += ", panel by panel" if self.outer and self.parallel != "panels" else ""
        what += f", panels copied {self.group} a row at a time" if self.group > 1 else ""
        what += f", y streamed {self.stream} columns at a time" if self.stream else ""
        what += ", y's panels STAGED in a local array" if self.staged else ""
        what += ", y read IN PLACE" if self.inplace and not self.dots else ""
        what += ", TILED DOTS of rows of x and of w.T" if self.dots else ""
        grab = f" ({self.grab} at a time)" if self.grab > 1 else ""
        team = f" on {self.team} threads" if self.team else ""
        return what + (f", PARALLEL {self.parallel}{grab}{team}" if self.parallel else "")


def operands(red: UOp) -> tuple[UOp, UOp] | None:
    """(x, y) of a loop-form sum of products REDUCE(ADD(acc, x * y), *ranges), else None."""
    update = red.src[0]
    if red.arg is not Ops.ADD or update.op is not Ops.ADD or not update.src:
        return None
    if update.src[0].op is not Ops.DEFINE_REG or update.src[1].op is not Ops.MUL:
        return None
    return update.src[1].src[0], update.src[1].src[1]


def has_layout(red: UOp) -> bool:
    """Whether a sum of products x * y could be packed, whatever its STORE: some output range
    is read by y and not by x (the columns) and some by x and not by y (the rows). A depthwise
    convolution's channel is read by both and its pixels by the image alone: no layout, so
    its window of a few products is unrolled as a pool's is (opt_helpers' small_reduce)."""
    xy = operands(red)
    if xy is None:
        return False
    deps, ks = free_ranges(red), frozenset(red.src[1:])
    only_x, only_y = (deps[a] - deps[b] - ks for a, b in (xy, xy[::-1]))
    return bool(only_x) and bool(only_y)


def depthwise(red: UOp) -> bool:
    """Whether a sum of products x * y is a depthwise window: two loads that share an output
    range (the channel), y reading no output range x does not, and x stepping with each of
    them (a grouped convolution's input reads its channel's group, c // g, and is packed)."""
    xy = operands(red)
    if xy is None or xy[0] is xy[1] or any(
            v.op is not Ops.LOAD or v.src[0].op is not Ops.INDEX for v in xy):
        return False
    deps, ks = free_ranges(red), frozenset(red.src[1:])
    x, y = xy if len(deps[xy[0]] - ks) >= len(deps[xy[1]] - ks) else xy[::-1]
    shared = deps[y] - ks
    return bool(shared) and shared <= deps[x] and all(
        stride(x.src[0].src[1], r) not in (0, None) for r in shared)


def split(red: UOp, rows: tuple[UOp, ...], j: UOp,
          deps: dict[UOp, frozenset[UOp]]) -> tuple[UOp, UOp] | None:
    """(x, y) ordered so that x reads every row range and not j, and y reads j and no row."""
    xy = operands(red)
    if xy is None:
        return None
    for x, y in (xy, xy[::-1]):
        if (j not in deps[x] and j in deps[y] and all(i in deps[x] for i in rows)
                and not any(i in deps[y] for i in rows)):
            return x, y
    return None


def panel_width(dt: DType, columns: list[int]) -> int:
    """A panel's columns: PANEL_VECTORS registers of dt, 512-bit where the target has them
    (runtime/target.py) and every product has at least a whole wide panel of `columns`, else
    256-bit (a narrower product's wide panel would be mostly padding)."""
    wide = PANEL_VECTORS * vector_bytes() // dt.itemsize
    return wide if all(n >= wide for n in columns) else PANEL_VECTORS * 32 // dt.itemsize


# a copied element (a panel's, or a packed tile of x's: a load and a store, gathered where the
# operand is strided) against one vector multiply-add: x86 cores retire 2 vector FMAs a cycle
# and store 1 value; a ratio of two throughputs of the core, not a size
COPY_FMAS = 2


def _cost(st: UOp, reds: list[UOp], rows: tuple[UOp, ...], j: UOp,
          deps: dict[UOp, frozenset[UOp]]) -> int:
    """The work of the packed loops with these rows and columns, in vector multiply-adds: the
    register tiles over the panels (rows past the last tile and lanes past the last column
    included), plus COPY_FMAS per element copied into a panel of y (once per iteration of the
    batch loops) or into a tile of x (when `_pack_x` packs it), and the epilogue's stores
    (`_stores`). A convolution of 8 output channels over 32 images could take the images as
    its columns (whole panels) and its 8 channels as rows, every pixel a batch iteration
    re-packing a panel of 32 images gathered a plane apart: 4-8x slower than the 8 channels as
    half-empty panels read by every pixel."""
    dt = reds[0].dtype
    nj = range_size(j)
    panel = panel_width(dt, [nj])  # type: ignore[list-item]
    npanels = -(-nj // panel)  # type: ignore[operator]
    ni = trips(rows)
    tile = tile_rows(ni)
    computed = -(-ni // tile) * tile
    batch = trips(r for r in st.src[2:] if r is not j and r not in rows)
    k = _k_total(reds)
    fmas = batch * computed * npanels * PANEL_VECTORS * k
    copies = batch * k * npanels * panel
    ys = [(split(red, rows, j, deps), red) for red in reds]
    halves = [xy is not None and not _contiguous(xy[1], j) and _half_runs(xy[1], red) and f16c()
              for xy, red in ys]
    if batch == 1 and all(half or (xy is not None and _contiguous(xy[1], j))
                          for half, (xy, _) in zip(halves, ys)):
        # y's panels packed once, each row of a panel read contiguously: copied a vector a step
        # (blocks.py's panel copy). Costed an element a step, a linear layer of 8 to 15 rows
        # took its weights' columns as its rows (its rows a half-empty panel, the weights read
        # down their columns by every tile): 8x1024x1024 1.12x, 8x4096x256 1.16x slower on
        # one core. (Packed again per batch iteration, a panel stays an element a step: below)
        # So is a float16 y read forward along k (`x @ w.T`) by the widening copy (blocks.py's
        # `_half_pack`): 8 steps of 8 columns widened by F16C and transposed in registers, 48
        # instructions for 64 elements, 3 times a float32 row's 16 (HALF_COPY). Costed an
        # element a step it ran 2x2048x512 as dots; as a float32 row's copy, 64x257x1000 took
        # w as its y (0.73x the orientation main chose, rev68c)
        copies = -(-copies // (panel // PANEL_VECTORS)) * (HALF_COPY if any(halves) else 1)
    if _pack_x(reds, rows, j, deps, npanels):
        # one row range, each row read contiguously along k: copied by a vector loop (gemm.py),
        # a vector of elements a step. A relu(h + b) of 128x256 packed so, its 10 columns a
        # half-empty panel, ran 11 us of one core; costed an element a step it lost to h's 128
        # rows as the columns, each panel a gather down h's columns, 27 us. (A panel of y stays
        # an element a step: counted per vector, a 32x8x16x16 convolution's panels of pixels,
        # packed again for every image row, won over its 8 channels and ran 10% slower.)
        xys = [split(red, rows, j, deps) for red in reds]
        vector = len(rows) == 1 and all(xy is not None and _contiguous(xy[0], red.src[-1])
                                        for xy, red in zip(xys, reds))
        copies += -(-batch * computed * k // (panel // PANEL_VECTORS)) if vector else \
            batch * computed * k
    return fmas + COPY_FMAS * (copies + _stores(st, reds, ni * batch, j, panel))


# a step of the plain loops (a vector of y loaded in place for each multiply-add into one of a
# few accumulators, x broadcast again per step) against one multiply-add of a register tile
# (12 accumulators, a load per 6): a ratio of throughputs of the core, not a size. A grouped
# convolution's 4 output channels a group as one row tile (3x16x37x16, dilation 3, groups 4),
# each panel copied for 4 rows, ran 3.3x slower packed than in its plain loops
PLAIN_FMAS = 2


def strided_inside(red: UOp, j: UOp, k: UOp) -> bool:
    """True when some load in the reduce's body is contiguous in j and strided in k: the
    interchange action's test of a reduce worth running j inside k (interchange_helpers)."""
    for n in toposort(red.src[0]):
        if n.op is Ops.LOAD and n.src[0].op is Ops.INDEX:
            off = n.src[0].src[1]
            if stride(off, j) == 1 and stride(off, k) not in (0, 1):
                return True
    return False


def _rows_of_k(y: UOp, ks: tuple[UOp, ...], j: UOp) -> tuple[int, bool] | None:
    """For y a plain load contiguous along the columns j: the elements between its rows of the
    last k range, and whether the k ranges are one flat stride of steps (not a window's taps:
    channels, rows and columns of the image apart); else None."""
    if not _plain_load(y):
        return None
    idx = y.src[0].src[1]
    step = stride(idx, ks[-1])
    if stride(idx, j) != 1 or step is None:
        return None
    inner = step
    for k in reversed(ks):
        if stride(idx, k) != inner:
            return step, False
        inner *= range_size(k)  # type: ignore[operator]
    return step, True


def _window(y: UOp, ks: tuple[UOp, ...], j: UOp) -> bool:
    """Whether y is a plain load contiguous along j whose k ranges are a window's taps
    (`_rows_of_k`), so its panels are copied tap by tap, where a block reads a flat y in place
    (gemm.py's streamed block)."""
    rows = _rows_of_k(y, ks, j)
    return rows is not None and not rows[1]


def _plain_cost(st: UOp, reds: list[UOp]) -> float:
    """The work of the product in its plain loops, in vector multiply-adds (PLAIN_FMAS each): a
    step per value of k and 256-bit vector of outputs along the output's last loop when the
    interchange action runs that loop inside the reduce's as vectors (`strided_inside`; every
    load moving along it by 0 or 1: render.py's `rg_vf32` loops), else infinite (one output a
    step, the reduce's own vectors only: packing is taken)."""
    ranges = st.src[2:]
    k = _k_total(reds)
    outputs = trips(ranges)
    v = ranges[-1]
    if stride(st.src[0].src[1], v) != 1 or not all(
            _contiguous(red.src[0], v) and strided_inside(red, v, red.src[-1]) for red in reds):
        return math.inf
    lanes = vector_lanes(reds[0].dtype.itemsize)  # (the renderer's explicit vector)
    steps = outputs // range_size(v) * -(-range_size(v) // lanes)  # type: ignore[operator]
    return PLAIN_FMAS * steps * k


# a vector read from past one core's L2 (runtime/target.py's cache sizes) against one vector
# multiply-add, and one read from past the L3's share of a thread (1/L3_SHARE of it split among
# the threads; the rest holds other data, the L3 is shared), from memory: ratios of throughputs
# of the core, not sizes. Plain dots read y once per row, so past a cache each row after the
# first reads y again from past it; packed panels larger than a cache are written once and read
# by each row tile from past it. Measured as x @ w.T, CPU time per call on two threads, dots
# over packed: y of 4 MB (past the L2, in the L3) 1.2-3.4x (6x1024x1024, 2x2048x512, 6x2048x512),
# 16 MB 0.57-0.93x (4, 5, 6x4096x1024, 6x8192x512), 32 MB 0.78x (3x8192x1024); a dot step
# (PLAIN_FMAS, a vector of each operand) about 1.2x as long past the L2, 3.4x past the share
FAR_READ_FMAS = 1
MEMORY_READ_FMAS = 8
L3_SHARE = 2
# a dot's vector of partial sums summed across its lanes once per output (shuffles and adds, each
# waiting on the last): about a vector multiply-add's slot per lane. Without it a short k over
# many columns ran as dots slower than packed (4x16x65536 0.62x, 4x33x30011 0.74x, 3x9x100003
# 0.85x, CPU time interleaved against main); with it the break-even k of 4 rows is about 4.5
# vectors (4x64x100003 ran the same either way, 4x256x4096 1.7x as dots)
DOT_LANE_SUM = 1
# a vector of float16 widened to float32 in a dot's step (ctext.HALF_WIDEN: some 18 vector
# integer and float ops, on the core's 3 vector ALU ports) against one vector multiply-add (2 a
# cycle): a ratio of throughputs of the core. Each row's dots widen w.T again, the packed loops
# once per element as they copy it: 8x30011x13 float16 x @ w.T ran as dots at 6x its float32
# dots' time (0.2x torch eager), packed 1.8x faster than as dots (CPU time, two threads). The
# software widen's, not F16C's (gcc 12 keeps `_Float16` scalar): an F16C dot ran 1.1-1.3x its
# float32 dot's time in cache, HALF_WIDEN's 6.2-7.5x (3.4-4.3x from memory; EPYC, rev67c)
HALF_WIDEN_FMAS = 5


def _dot_cost(st: UOp, reds: list[UOp]) -> float:
    """The work of the product's plain loops, in vector multiply-adds (PLAIN_FMAS each), where
    each output's sum is a dot of two rows read forward along k (`x @ w.T`: both operands
    ungated loads contiguous along k, its ranges one run: `_one_run`; a vector of k a step, then
    the vector of partial sums summed across its lanes, about a multiply-add a lane:
    DOT_LANE_SUM; a float16 operand's vector widened, HALF_WIDEN_FMAS more), plus the operand
    that does not read the outer loop (y) read again per iteration of it from past the L2
    (`_far_reads`); else infinite. A narrow w.T packs few columns into a whole panel, each
    element copied one at a time down w's columns: 2x100003x13 as a panel of 16 ran 0.45x torch
    eager on two threads."""
    if any((xy := operands(red)) is None or
           not all(_in_place(_unwidened(v), red) and _one_run(_unwidened(v), red.src[1:])
                   for v in xy) for red in reds):
        return math.inf
    outputs = trips(st.src[2:])
    lanes = vector_lanes(reds[0].dtype.itemsize)
    outer = st.src[2] if len(st.src) > 2 else None  # a scalar's store: no loop reads again
    again = 0
    for red in reds:
        deps = free_ranges(red)
        for v in operands(red):  # type: ignore[union-attr]
            # (read whole once per iteration of the outer loop)
            if outer is not None and outer not in deps[v]:
                size = trips(deps[v])
                again += (range_size(outer) - 1) * _far_reads(size, _unwidened(v).dtype)  # type: ignore
    return outputs * sum(
        (PLAIN_FMAS + HALF_WIDEN_FMAS * sum(v is not _unwidened(v) for v in operands(red)))  # type: ignore
        * -(-trips(red.src[1:]) // lanes)
        + PLAIN_FMAS * DOT_LANE_SUM * lanes for red in reds) + again


# a tiled dot's step per output and vector of k (blocks.py's `_dot`): its register tile of g
# rows by c columns loads g + c vectors per g * c multiply-adds, each load costing half a plain
# dot's step (PLAIN_FMAS: two loads per multiply-add, the loads bound it), so with g * c >= g + c
# the multiply-adds bound it: one vector multiply-add a step
TILED_FMAS = 1


def dot_shape(rows: int, registers: int, columns: int) -> tuple[int, int]:
    """The rows g and columns c of a tiled dot's register tile (blocks.py's `_dot`) for a tile
    of `rows` rows: g * c accumulators, beside g (or c) loaded vectors and one of the other
    operand, in the target's vector registers (16 on AVX2, 32 on AVX-512: 3x4 and 5x5), with
    the fewest loads per column and vector of k (the tile's rows in ceil(rows / g) even groups,
    each loading its rows' vectors once per c columns and each column's vector once)."""
    best: tuple[float, int, int] = (math.inf, 1, 1)
    for r in range(1, rows + 1):
        groups = -(-rows // r)
        g = -(-rows // groups)  # (the largest group of an even split)
        for c in range(1, columns + 1):
            if g * c + min(g, c) + 1 > registers:
                break
            best = min(best, (rows / c + groups, g, -c))
    return best[1], -best[2]


def _tiled_cost(st: UOp, reds: list[UOp], rows: tuple[UOp, ...], j: UOp) -> float:
    """The work of the product as tiled dots (`Pack.dots`: the block library's `_dot`), in
    vector multiply-adds, where its plain loops are dots (`_dot_cost` finite) of float32 or
    float64 rows (no float16 widened) over one row range: each tile's rows (`tile_rows`, the
    last tile computing whole rows) times the columns, a step per vector of k (TILED_FMAS, or
    its loads where fewer than g + c multiply-adds share them), the lanes summed per output;
    plus y read again by each tile after the first and each tile's rows of x read again by each
    panel after the first, from past the L2 (`_far_reads`); else infinite."""
    if not block_library() or len(rows) != 1 or _dot_cost(st, reds) == math.inf or any(
            v is not _unwidened(v) for red in reds for v in operands(red)):  # type: ignore
        return math.inf
    ni, nj, dt = trips(rows), range_size(j), reds[0].dtype
    tile = tile_rows(ni)
    tiles = -(-ni // tile)
    panel = panel_width(dt, [nj])  # type: ignore[list-item]
    npanels = -(-nj // panel)  # type: ignore[operator]
    lanes = vector_lanes(dt.itemsize)
    g, c = dot_shape(tile, vector_registers(), panel)
    step = max(TILED_FMAS, PLAIN_FMAS / 2 * (g + c) / (g * c))
    work = again = 0.0
    for red in reds:
        k = trips(red.src[1:])
        work += step * -(-k // lanes) + PLAIN_FMAS * DOT_LANE_SUM * lanes
        again += (tiles - 1) * _far_reads(k * nj, dt) + \
            tiles * (npanels - 1) * _far_reads(k * tile, dt)
    return tiles * tile * nj * work + again  # type: ignore[operator]


def _one_run(v: UOp, ks: tuple[UOp, ...]) -> bool:
    """Whether the load v reads its k ranges as one run, each range's step the next one's whole
    run (a k the scheduler split, flattened: `_unnested_runs`), so a dot reads it forward."""
    idx = v.src[0].src[1]
    for a, b in zip(ks, ks[1:]):
        outer, inner, size = stride(idx, a), stride(idx, b), range_size(b)
        # (a non-linear index or a symbolic range has no run: None, never a TypeError)
        if None in (outer, inner, size) or outer != size * inner:
            return False
    return True


def _unwidened(v: UOp) -> UOp:
    """v's float16 value where v widens one to float32 (a float16 matmul's operands), else v."""
    return v.src[0] if v.op is Ops.CAST and v.src[0].dtype is dtypes.float16 else v


def _far_reads(elements: int, dt: DType) -> float:
    """The cost, in vector multiply-adds, of one pass over a buffer of `elements` values of dt
    past the caches: its vectors past one core's L2 (FAR_READ_FMAS each) and past a thread's
    share of the L3 (MEMORY_READ_FMAS more each; runtime/target.py)."""
    nbytes, vector = elements * dt.itemsize, vector_lanes(dt.itemsize) * dt.itemsize
    share = cache_bytes(3) // (L3_SHARE * threads())
    return (FAR_READ_FMAS * max(0, nbytes - cache_bytes(2)) +
            MEMORY_READ_FMAS * max(0, nbytes - share)) / vector


def _far_panels(reds: list[UOp], ni: int, nj: int) -> float:
    """The packed loops' reads and writes past one core's L2 (`_far_reads`): each panel of y
    larger than the L2 written once and read by each row tile (`_cost` counts them all as from
    the cache)."""
    dt = reds[0].dtype
    panel = panel_width(dt, [nj])
    tiles = -(-ni // tile_rows(ni))
    k = _k_total(reds)
    return -(-nj // panel) * (1 + tiles) * _far_reads(k * panel, dt)


def _half_runs(y: UOp, red: UOp) -> bool:
    """Whether y is a float16 load widened, read in place and forward along red's k ranges."""
    v = _unwidened(y)
    return v is not y and _in_place(v, red) and _one_run(v, red.src[1:])


def _contiguous(v: UOp, rng: UOp) -> bool:
    """Whether v's values along `rng` are copied as vectors: no read of v is gated (copied one
    at a time, see gemm.py's pack_y) and each read that moves with rng reads the next
    element."""
    return all(_plain_load(n) and stride(n.src[0].src[1], rng) in (0, 1)
               for n in toposort(v) if n.op is Ops.LOAD)


def _stores(st: UOp, reds: list[UOp], rows: int, j: UOp, panel: int) -> int:
    """The epilogue's work, in copied elements: per output its ops and its store, a vector of
    outputs at a time where the output is contiguous along the columns, else one at a time.
    A matmul of 63x200x65 + bias, relu taken transposed (its 63 rows as the columns: 1 lane
    wasted, not 31) stored each output a row apart and ran 2x slower than with its 65 columns
    as the columns; 127x131x137 + bias, gelu 2.5x."""
    outputs = rows * range_size(j)  # type: ignore[operator]
    inside = {n for red in reds for n in toposort(red)}
    ops = 1 + sum(1 for n in toposort(st.src[1]) if n not in inside and n.op in GroupOp.ALU)
    if stride(st.src[0].src[1], j) == 1:
        return -(-outputs * ops // (panel // PANEL_VECTORS))
    return outputs * ops


def _pack_x(reds: list[UOp], rows: tuple[UOp, ...], j: UOp,
            deps: dict[UOp, frozenset[UOp]], npanels: int) -> bool:
    """Whether x is packed per row tile (pa[k][row], computed once per element and read
    contiguously by every panel): when there is more than one panel and x is not a plain load
    contiguous in k. A computed x (a fused softmax) would be computed once per panel, and a
    strided one (a transposed A) read from 6 scattered lines per step. A plain row of A is read
    in place: its 6 rows stay in L1 across the panels, and packing it costs a scalar copy of
    every element (one thread, bench/gemm.py: 512^3 3% faster in place, the 8x16x32x32
    convolution's window 5%). With one panel x is computed once per element either way, and a
    plain load is read in place; a computed x (a bias and relu left to the next layer's
    product, a classifier's 10 columns) is packed too: its values then come from a vector loop
    and its register block is the block library's, not scalar work in every step of a block
    printed around it (a 128x256x10 product of relu(h + b): 30 -> 11 us on one core)."""
    xs = [split(red, rows, j, deps) for red in reds]
    if npanels < 2:
        return any(xy is not None and xy[0].op is not Ops.LOAD for xy in xs)
    return not all(xy is not None and _in_place(xy[0], red) for xy, red in zip(xs, reds))


def _layout(st: UOp, reds: list[UOp], deps: dict[UOp, frozenset[UOp]]
            ) -> tuple[tuple[UOp, ...], UOp] | None:
    """The rows and columns of the product: of the columns j that split every reduce, the one
    whose packed loops do the least work (`_cost`: lanes wasted in the panels, rows wasted in
    the last tile, and copies), then the last (contiguous stores); with the choice
    `pack_layout` n (rules/choices.py), the n-th in that order (the cost is a model: search
    times the next one)."""
    ranges = st.src[2:]
    dt = reds[0].dtype
    lanes = 32 // dt.itemsize  # a column range fills at least one 256-bit register
    found: list[tuple[int, int, tuple[UOp, ...], UOp]] = []
    for pos, j in enumerate(ranges):
        size = range_size(j)
        xy = operands(reds[0])
        if size is None or size < lanes or xy is None:
            continue
        if j in deps[xy[0]] and j in deps[xy[1]]:
            continue
        x, y = xy if j not in deps[xy[0]] else xy[::-1]
        # rows: what x reads and y does not; the ranges both read (heads) are batch loops
        rows = tuple(i for i in ranges if i is not j and i in deps[x] and i not in deps[y])
        if not rows or any(split(red, rows, j, deps) is None for red in reds):
            continue
        found.append((_cost(st, reds, rows, j, deps), -pos, rows, j))
    found.sort(key=lambda key: key[:2])
    rank = pick(current().pack_layout, 0)
    if rank >= len(found):
        return None if not found else (found[-1][2], found[-1][3])
    return found[rank][2], found[rank][3]


def _k_total(reds: list[UOp]) -> int:
    """The multiply-adds of one output of the product: every reduce's values."""
    return sum(trips(red.src[1:]) for red in reds)


def _reduces(st: UOp) -> list[UOp] | None:
    """The STORE's reduces when all are float sums of one dtype with no reduce inside."""
    reds = [n for n in toposort(st.src[1]) if n.op is Ops.REDUCE]
    if not reds or reds[0].dtype not in (dtypes.float32, dtypes.float64):
        return None
    for red in reds:
        if red.arg is not Ops.ADD or red.dtype is not reds[0].dtype:
            return None
        if any(n.op is Ops.REDUCE for n in toposort(red.src[0])[:-1]):
            return None
    return reds


def _plan(st: UOp) -> Pack | None:
    ranges = st.src[2:]
    if st.arg is not None or len(ranges) < 2 or any(range_size(r) is None for r in ranges):
        return None
    reds = _reduces(st)
    if reds is None or any(range_size(k) is None for red in reds for k in red.src[1:]):
        return None
    deps = free_ranges(st)
    found = _layout(st, reds, deps)
    if found is None:
        return None
    rows, j = found
    batch = [r for r in ranges if r is not j and r not in rows]
    # y's panels copied again per batch iteration (a window's taps, `_window`): the copies are
    # not shared across the batch, and where the plain loops run as vectors they may be the
    # cheaper (the heuristic's choice only, not search's)
    if batch and current().pack_min_work is None and any(
            _window(xy[1], red.src[1:], j) for red in reds
            if (xy := split(red, rows, j, deps)) is not None) and \
            _cost(st, reds, rows, j, deps) > _plain_cost(st, reds):
        return None
    ni = trips(rows)
    k_total = _k_total(reds)
    macs = trips(ranges) * k_total
    if ni < 2 or macs < pick(current().pack_min_work, MIN_WORK):
        return None
    # plain dots (`_dot_cost`) or tiled ones (`_tiled_cost`) where they cost less than the
    # packed loops, each with its reads past the L2 (the heuristic's choice only, not search's)
    if not batch and current().pack_min_work is None:
        dots, tiled = _dot_cost(st, reds), _tiled_cost(st, reds, rows, j)
        if min(dots, tiled) < _cost(st, reds, rows, j, deps) + \
                _far_panels(reds, ni, range_size(j)):  # type: ignore[arg-type]
            return None if dots <= tiled else _tiled_plan(rows, j, ni, macs, reds[0].dtype)
    panel = panel_width(reds[0].dtype, [range_size(j)])  # type: ignore[list-item]
    npanels = -(-range_size(j) // panel)  # type: ignore[operator]
    # a team over the tiles or panels is woken once per iteration of every batch loop: with
    # too little work each time, the outermost batch loop is threaded however few its
    # iterations (`batch_shares`)
    wakes = trips(batch)
    # threads where two shares of the whole product each pay for the region (`region_threads`,
    # every threaded loop's model): any product past one share's cost had taken them
    if region_threads(macs, threads()) < 2:
        parallel = ""
    elif batch and range_size(batch[0]) > 1 and (  # type: ignore[operator]
            range_size(batch[0]) >= batch_parallel_min()  # type: ignore[operator]
            or macs // wakes < least_parallel_work()) \
            and batch_shares(range_size(batch[0]), ni, macs, wakes):  # type: ignore[arg-type]
        parallel = "batch"
    else:
        parallel = "tiles"
    pack_a = _pack_x(reds, rows, j, deps, npanels)
    tile = tile_rows(ni)
    tiles = -(-ni // tile)
    # each thread's share of the multiply-adds (of a region's, one per batch iteration) must pay
    # for the region (`region_threads`), whether the threads share the panels of one row tile
    # (`x @ w.T`'s panels had split at any work past the cost: 3x400x1100, 0.66M a thread on
    # two) or many row tiles: a product of 2 tiles and one of 200 decide by the same model. A
    # batch whose teams over the tiles would not pay takes the threads itself (its one region
    # has the whole product's work, which pays for two)
    if parallel == "tiles" and region_threads(macs // wakes, threads()) < 2:
        parallel = "batch" if batch and range_size(batch[0]) > 1 else ""  # type: ignore
    size = reds[0].dtype.itemsize
    x_bytes = ni * k_total * size
    outer = panels_outer(x_bytes, npanels, pack_a)
    if tiles == 1 and npanels > 1 and all(
            (xy := split(red, rows, j, deps)) is not None and _half_runs(xy[1], red)
            for red in reds):
        # a float16 y read forward along k (`x @ w.T`) under one row tile: each panel is read
        # by that tile alone, so it runs as it is copied, panel after panel, still in cache
        # (x's few rows packed again per panel: at most a tile of k per panel of tj x k);
        # every panel copied first had written and read back twice y's bytes (2x4096x1024:
        # 0.35x torch eager)
        outer, parallel = True, "panels" if parallel == "tiles" else parallel
    if parallel == "tiles" and (_by_panels(tiles, npanels, pack_a) or (
            outer and idle(npanels, threads()) <= idle(tiles, threads()))):
        parallel = "panels"
    if parallel in ("tiles", "panels"):  # (threads over the tiles run every panel in each)
        outer = parallel == "panels"
    grab = 1
    if parallel == "tiles" and ranges[-1] in rows:  # tiles side by side in the output's lines
        most = pick(current().grab_tiles, GRAB_TILES)
        share = threads() * pick(current().grabs_per_thread, GRABS_PER_THREAD)
        grab = max(1, min(most, tiles // max(1, share)))
    group = stream = 0
    inplace = False
    ys = [(red, split(red, rows, j, deps)) for red in reds]
    plain_y = all(xy is not None and xy[1].op is Ops.LOAD and _contiguous(xy[1], j)
                  for _, xy in ys)
    # the step between y's rows where the blocks can read y in place (None: they cannot)
    steps = [None if xy is None else y_row_step(xy[1], red.src[1:], j) for red, xy in ys]
    if tiles == 1 and npanels > 1 and plain_y:  # each panel would be read by one tile only
        # y read in place by the block library's streamed blocks; without the library (or a y
        # it cannot read in place: `y_row_step`), packed panel by panel into the same tile
        # (blocks printed in the kernel stream nothing)
        # (the threads whose shares of the multiply-adds pay for the region: `region_threads`;
        # a region per batch iteration)
        nthreads = region_threads(macs // wakes, threads()) if parallel else 1
        stream = stream_width(ni, size, range_size(j), panel,  # type: ignore[arg-type]
                              nthreads) if block_library() and None not in steps else 0
        tile, outer, grab = ni, True, 1
        parallel = "panels" if parallel == "tiles" else parallel
        if parallel == "panels" and stream and (stream >= range_size(j) or  # type: ignore
                                                stream_threads(range_size(j), size,  # type: ignore
                                                               nthreads) == 1):
            parallel = ""  # (one thread's runs: shares under a page, or one run of each row)
    elif plain_y and None not in steps and read_in_place(
            k_total * range_size(j) * size, tiles, range_size(j),  # type: ignore[operator]
            panel, max(steps) * size, size):  # type: ignore[type-var, operator]
        inplace, outer = True, parallel == "panels"
    elif outer and plain_y:
        group = panel_group(x_bytes, k_total * panel * size, npanels,
                            threads() if parallel == "panels" else 1)
    team = 0
    if parallel:
        # a loop whose claims pay for fewer than two threads (one row tile of one panel, or of
        # y read in place) takes none: it had been printed as a team of one, woken per batch
        # iteration (2 products of 6x4096x16 ran one region of one thread each, not the batch
        # on two)
        team = region_threads(macs if parallel == "batch" else macs // wakes, threads(),
                              claims(parallel, range_size(batch[0]) if batch else 1,  # type: ignore
                                     tiles, grab, -(-range_size(j) // (stream or panel)),  # type: ignore
                                     max(1, group), inplace))
        if team < 2 and parallel == "tiles" and batch and range_size(batch[0]) > 1:  # type: ignore
            parallel, grab = "batch", 1
            team = region_threads(macs, threads(), range_size(batch[0]))  # type: ignore[arg-type]
        if team < 2:
            parallel, grab, team = "", 1, 0
    return Pack(tuple(i.arg[0] for i in rows), j.arg[0], tile, panel, pack_a, parallel, grab,
                outer, max(1, group), stream, inplace=inplace, team=team)


def _tiled_plan(rows: tuple[UOp, ...], j: UOp, ni: int, macs: int, dt: DType) -> Pack:
    """The tiled dots' action (`Pack.dots`): row tiles of `tile_rows`, panels of a panel's
    columns, neither operand packed (y read IN PLACE), on the threads whose shares pay for the
    region (`region_threads`), which claim row tiles, or panels where they share better (a
    product of one row tile: 4x4096x1024's 64 panels)."""
    tile = tile_rows(ni)
    tiles = -(-ni // tile)
    panel = panel_width(dt, [range_size(j)])  # type: ignore[list-item]
    npanels = -(-range_size(j) // panel)  # type: ignore[operator]
    parallel = "panels" if idle(npanels, threads()) < idle(tiles, threads()) else "tiles"
    team = region_threads(macs, threads(), npanels if parallel == "panels" else tiles)
    if team < 2:
        parallel, team = "", 0
    return Pack(tuple(i.arg[0] for i in rows), j.arg[0], tile, panel, False, parallel,
                outer=parallel == "panels", inplace=True, team=team, dots=True)


def claims(parallel: str, heads: int, tiles: int, grab: int, npanels: int, group: int,
           inplace: bool) -> int:
    """The iterations the threads of a product's `parallel` loop claim: the outermost batch
    loop's `heads`, the groups of `group` panels of its `npanels`, or its row `tiles` claimed
    `grab` at a time (and, shared, the panels each thread packs: not with y read `inplace`)."""
    if parallel == "batch":
        return heads
    if parallel == "panels":
        return -(-npanels // group)
    return max(-(-tiles // grab), 1 if inplace else npanels)


def y_row_step(y: UOp, ks: tuple[UOp, ...], j: UOp) -> int | None:
    """The elements between y's rows of k, when the block library's blocks can read y in place
    (gemm.py's `_in_place`): a plain load, the next element along the columns `j`, the k
    ranges one flat stride of steps, not negative; else None (a y read backwards, `w[::-1]`,
    or a window's taps: packed)."""
    rows = _rows_of_k(y, ks, j)
    return rows[0] if rows is not None and rows[1] and rows[0] >= 0 else None


def read_in_place(y_bytes: int, tiles: int, columns: int, panel: int, row_bytes: int,
                  itemsize: int) -> bool:
    """Whether the row tiles read y's panels in place rather than packed, y a plain load contiguous
    along the columns: when y fits in one core's L2 (runtime/target.py), where each tile reads its
    panels from as packed ones would be, and the tiles are few (PARALLEL_SHARES at most), so that
    the copy, a read and a write of all of y per call that also evicts y from the L2 it fills, is a
    large share of the tiles' reads of y (36x1536x96, 6 tiles, on one core spent 25 of its 68 us
    copying); with many tiles the packed panels' contiguous rows pay for it (256x1536x96 ran 0.8x in
    place). The part-full last panel none or a vector wide at least: it is a register block's whose
    second vector ends at the row's last column (blocks.py's `last`), where a streamed one's columns
    short of a vector are scalar steps (33x1000x17 in panels of 16: 0.84x). (Streamed, at about half
    a block's speed, it had halved the tiles the copy is worth; as a block 33x1000x127, 6 tiles,
    0.94x -> 1.2-1.4x in place, 48x777x13 1.4-1.5x, against the packed panels; ab.py --cpu.) y's
    rows (`row_bytes` apart: y's own step, wider than its columns where y is a part of a wider
    array) at most 1/STREAM_SHARE of a page apart: a panel read in place steps a row of y per k, and
    rows a page apart start a page each step, where the prefetchers stop (7x96x1000: 0.72x in place;
    36x1536x64 of a w 1024 columns wide, one core: 0.6x). The block library's blocks only (they take
    the rows' step). A narrow y, one panel or less whose rows are back to back (`row_bytes`, y's
    `columns` of `itemsize`: `x @ w` with w K x 13), is read in place at any size: its panel would
    be y's own rows padded, read by the tiles as y is, so the copy buys nothing (a part-full panel
    of a vector's columns or more is a register block's, blocks.py's `last`; 8x30011x13 on two
    threads copied y into panels of 16, then ran the blocks: 0.6x torch)."""
    rest = columns % panel
    narrow = columns <= panel and row_bytes == columns * itemsize
    return block_library() and (columns >= panel or narrow) and tiles <= PARALLEL_SHARES and \
        (rest == 0 or rest >= panel // PANEL_VECTORS) and \
        (y_bytes <= cache_bytes(2) or narrow) and row_bytes <= page_bytes() // STREAM_SHARE


# the share of one core's L1 a streamed product's sums may fill (the rest holds the rows of y
# being read and x's values): a fraction, not a size
L1_SHARE = 2


# a thread's least share of a streamed product's row of y: 1/STREAM_SHARE of a page (a share,
# not a size). Half a page, measured as the busiest thread's CPU time per call on two threads
# (rev62a's sweep of 2..6 rows, 128..1024 steps, 1031..2047 float32 columns: each thread's
# share between half a page and a page): 0.34-0.91x that of one core reading the whole rows
# (6x512x1500 0.060 -> 0.043 ms, 2x1024x2047 0.136 -> 0.062), all threads' CPU 0.9-1.7x; a
# quarter page's shares (2x2048x512 + bias, gelu in runs of 32 columns) took 0.09 ms on two
# threads where one core took 0.047
STREAM_SHARE = 2


def stream_threads(columns: int, itemsize: int, nthreads: int, least: int = 0,
                   work: int | None = None) -> int:
    """The threads that share a streamed product's `columns`: the most, up to `nthreads`, whose
    shares of a row are each at least `least` bytes, by default 1/STREAM_SHARE of a page
    (runtime/target.py's page size; a shorter share starts a new page on every few rows of y,
    where the hardware prefetchers stop), and, given the product's `work` (its multiply-adds),
    whose shares of it each pay for the parallel region (`region_threads`); 1: one core reads
    the rows."""
    least = least or page_bytes() // STREAM_SHARE
    most = nthreads if work is None else region_threads(work, nthreads)
    return max(1, min(most, columns * itemsize // least))


def region_threads(work: int, nthreads: int, iterations: int = 0) -> int:
    """The threads a parallel region over `work` (loads, or a streamed product's multiply-adds:
    one value of y read each) pays for: the most, up to `nthreads`, whose shares are each at
    least the region's cost, `least_parallel_work()` (runtime/target.py's PARALLEL_MIN_WORK, or
    the searched choice). The cost model: a region ends in a join that waits for its last
    thread, and on a loaded machine that thread was descheduled and waits for a core; a share
    shorter than that cost ends before the wait it adds. 1x640x2560 (1.6M multiply-adds, 0.8M
    a thread on two) ran 0.9x torch on two threads of a loaded machine, where torch takes one.
    With `iterations` (the tiles, panels or heads its threads claim), at most that many: a
    thread with none is woken and joined for nothing (a team printed or launched on it: a
    product's, a flash kernel's)."""
    most = min(nthreads, iterations) if iterations > 0 else nthreads
    return max(1, min(most, work // least_parallel_work()))


def stream_width(rows: int, itemsize: int, columns: int, panel: int, nthreads: int) -> int:
    """The columns a product of one row tile reads of y at a time, y read in place (`Pack.stream`):
    its `rows` rows of sums in 1/L1_SHARE of one core's L1 (runtime/target.py), loaded and
    stored once per few steps of k while each row of y is read forward; whole panels (`panel`
    columns), one at least. A panel packed for one tile is y copied to be read back once
    (2x1024x4096 + bias, gelu: 1.1 ms packed in groups, 0.43 streamed, two cores).
    The runs are equal in panels, as many as the L1 needs, and a multiple of the threads that
    claim them (`stream_threads`), each 1/PARALLEL_SHARES of a thread's share but a page of a
    row at least (or the thread's share, where that is under a page) where the L1 has room:
    every thread claims as many runs, of as many panels (a 32 KB L1 put a 6-row tile's 1500
    columns in runs of 672, 672 and 156 on two threads; 1500 columns in 2 runs of 768)."""
    nthreads = stream_threads(columns, itemsize, nthreads)
    panels = -(-columns // panel)  # (counted in panels: every run whole panels)
    room = max(1, cache_bytes(1) // (L1_SHARE * rows * itemsize * panel))
    width = panels
    if nthreads > 1:
        width = -(-max(page_bytes() // itemsize, columns // (nthreads * PARALLEL_SHARES)) // panel)
    least = -(-panels // room)  # (the fewest runs whose sums fit)
    # runs at least `width` wide: as many as it fits whole (rounding up had made 2x3136 on two
    # threads 4 runs of 800 columns, each under a page; 2 of 1568 took 0.93-0.98x the CPU)
    runs = max(least, panels // width, 1)
    down = runs // nthreads * nthreads  # (wider runs, where they fit, keep the page)
    runs = down if down >= max(least, 1) else -(-runs // nthreads) * nthreads
    return -(-panels // runs) * panel  # (as many panels a run, the last part-full)


def panel_group(x_bytes: int, panel_bytes: int, npanels: int, nthreads: int) -> int:
    """With the panels outer, how many are copied side by side (y a plain load, contiguous
    along the columns): each step of the copy then reads that many panels' columns of a row
    of y, one run, where one panel's copy reads its few lines of every row, a row apart (a
    wide y: a new page per step, where the hardware prefetchers stop; 2x1024x4096 + bias,
    gelu spent 60% of its time copying). As many as fit in half of one core's L2 beside x
    (runtime/target.py; the rest holds the output and what else a tile reads), and at most
    1/PARALLEL_SHARES of a thread's share of the panels, so threads still share them
    evenly."""
    room = max(0, cache_bytes(2) - x_bytes) // 2
    share = npanels // (nthreads * PARALLEL_SHARES) if nthreads > 1 else npanels
    return max(1, min(room // max(1, panel_bytes), share))


# the share of one core's L2 the rows' operand x may fill and still be read once per panel
# (the rest holds the panel being read, and the outputs): a fraction, not a size
L2_SHARE = 2


def panels_outer(x_bytes: int, npanels: int, pack_a: bool) -> bool:
    """Whether the panels run outside the row tiles: each packed (into one panel's buffer,
    reused) and run over by every tile before the next, x read once per panel. When x's values
    fit in 1/L2_SHARE of one core's L2 (runtime/target.py): a linear layer of a few rows, whose
    y (the weights) is the memory to move. Every panel packed first is y copied whole into a
    buffer as large as y, then read back by every tile: past L2, three to four times y's
    traffic where the panels outer move it once (8x1024x4096 + bias, gelu: 1.13x faster on
    one core, 1.14x on two). A larger x stays inside the panels: a tile's rows are read from
    L1 across all of them. Not with x packed per tile (it would be packed again per panel)."""
    return not pack_a and npanels > 1 and x_bytes <= cache_bytes(2) // L2_SHARE


def _by_panels(tiles: int, npanels: int, pack_a: bool) -> bool:
    """Whether the threads split the columns' panels rather than the row tiles: the tiles
    share unevenly (17 rows are 3 tiles of 6: 2:1 on two threads) and the panels less so. Each
    thread then packs the panels it claims for itself and waits on no other thread (with row
    tiles, a thread waits on a panel another is copying: a thread the OS takes off its core
    holds every other up). Not with x packed per tile: each panel would pack x again."""
    nthreads = threads()
    if pack_a or npanels < 2 or balanced(tiles, nthreads):
        return False
    return idle(npanels, nthreads) < idle(tiles, nthreads)


def _in_place(x: UOp, red: UOp) -> bool:
    """Whether x is an ungated load contiguous along the reduce's last range: each row read
    forward one element per step (a matmul's A; a convolution's window, whose 6 rows are
    mostly 6 neighbouring pixels, one line)."""
    return _plain_load(x) and stride(x.src[0].src[1], red.src[-1]) == 1


def _plain_load(x: UOp) -> bool:
    """An ungated read of memory: LOAD(INDEX(buffer, offset))."""
    return x.op is Ops.LOAD and len(x.src) == 1 and x.src[0].op is Ops.INDEX


def _divisors(st: UOp) -> list[tuple[UOp, int, list[UOp], list[UOp]]]:
    """Each output range r of the STORE read as r // c and r % c (c dividing its size, c > 1;
    IDIV and MOD, or SHR and AND after lowering), with c and the nodes of each form."""
    ranges = {r for r in st.src[2:] if range_size(r) is not None}
    found: dict[tuple[UOp, int], tuple[list[UOp], list[UOp]]] = {}
    for n in toposort(st):
        if n.op not in (Ops.IDIV, Ops.SHR, Ops.MOD, Ops.AND) or n.src[0] not in ranges \
                or n.src[1].op is not Ops.CONST:
            continue
        c = int(n.src[1].arg)
        c = {Ops.SHR: 1 << c, Ops.AND: c + 1}.get(n.op, c)
        size = range_size(n.src[0])
        if n.op is Ops.AND and c & (c - 1) or not 1 < c < size or size % c:  # type: ignore
            continue
        quotients, remainders = found.setdefault((n.src[0], c), ([], []))
        (quotients if n.op in (Ops.IDIV, Ops.SHR) else remainders).append(n)
    return [(r, c, q, m) for (r, c), (q, m) in found.items()]


def _split_groups(st: UOp) -> tuple[UOp, Pack] | None:
    """A product whose column range is read as groups of columns (a grouped convolution's
    output channels: the input's group r // c, the weights' channel r % c within it) is not a
    product over r, but is over r % c once r is split into r // c (a batch loop: x and y both
    read it) and r % c (the columns): the STORE with r as those two loops, outer first (the
    same iterations in the same order, so the same values), and its packing action; None when
    no such split is packable."""
    if st.arg is not None or not st.src[1]._ops & OP_BIT[Ops.REDUCE]:
        return None  # (no sum in it: known without a walk)
    divisors = _divisors(st)
    if not divisors:
        return None
    fresh = fresh_id(st)
    for r, c, quotients, remainders in divisors:
        outer = UOp.range(range_size(r) // c, fresh)  # type: ignore[operator]
        inner = UOp.range(c, r.arg[0], r.arg[1])
        mapping = {**{n: outer for n in quotients}, **{n: inner for n in remainders},
                   r: outer * c + inner}
        ranges = [x for rng in st.src[2:] for x in ((outer, inner) if rng is r else (rng,))]
        new = st.replace(src=(st.src[0].substitute(mapping), st.src[1].substitute(mapping),
                              *ranges))
        plan = _plan(new)
        if plan is not None:
            return new, plan
    return None


def packed(st: UOp, noted: bool = True) -> UOp | None:
    """The STORE with its packing action (a `Pack`) as arg, planned once: for a STORE not
    packed yet whose value is a sum of products worth the packed loops (with a grouped column
    range split first: `_split_groups`); None for any other. `noted`: recorded as an action
    (not for a caller that only asks: interchange_helpers)."""
    plan = _plan(st)
    if plan is None and (flat := _unnested_runs(st)) is not None:
        if (plan := _plan(flat)) is None:
            # not packed: `x @ w`'s one run of k in plain loops (merge_reduce, interchange:
            # 1x50000x16 nested ran 0.12x torch eager, flat 1.7x); dots (`x @ w.T`) keep the
            # nest (flat they ran 0.56-0.75x its speed, 3x40000x24 and 5x50000x9, CPU
            # interleaved)
            reds = _reduces(flat)
            if reds is None or _dot_cost(flat, reds) < math.inf:
                return None
            if noted:
                ks = {r.arg[0] for n in toposort(flat.src[1]) if n.op is Ops.REDUCE
                      for r in n.src[1:]}
                taken(f"UNNEST ADD over {' '.join(f'r{i}' for i in sorted(ks))}: a product's "
                      "split k as one run")
            return flat
        st = flat
    if plan is None:
        if (found := _split_groups(st)) is None:
            return None
        st, plan = found
    npanels = -(-range_size(next(r for r in st.src[2:] if r.arg[0] == plan.cols)) // plan.panel)
    if npanels > 1 and not plan.outer and not plan.inplace and plan.parallel in ("", "batch"):
        plan = plan.replace(staged=True)
    if noted:
        taken(plan.describe())
    return stage_panels(st, plan) if plan.staged else st.replace(arg=plan)


def _unnested_runs(st: UOp) -> UOp | None:
    """The STORE with each of its nested float sums read as one run made one sum over both
    ranges, when any is: REDUCE(ADD(acc, REDUCE(ADD(acc', v), k1)), k0), both from +0.0, every
    load reading k0 as k1's whole run (its step along k0 is size(k1) steps along k1), i.e. v
    over k = k0 * size(k1) + k1 in memory order. A long k split by the scheduler into partials
    summed in the same kernel (`x @ w` of 7x50000x16: 250 partials of 200) is so; the packing
    action takes only the flat sum, and as plain loops over 7x16 outputs it ran 0.09x torch
    eager. The sum's order is the reduction contract's (lower_helpers' `unnested`); None
    when there is no such nest (only a product that then packs takes it: `packed`)."""
    swaps: dict[UOp, UOp] = {}
    for red in toposort(st.src[1]):
        update = red.src[0] if red.op is Ops.REDUCE else None
        if update is None or red.arg is not Ops.ADD or len(red.src) != 2 or \
                update.op is not Ops.ADD or len(update.src) != 2 or \
                update.src[0].op is not Ops.DEFINE_REG:
            continue
        inner = update.src[1]
        if inner.op is not Ops.REDUCE or inner.arg is not Ops.ADD or len(inner.src) != 2 or \
                inner.dtype is not red.dtype or inner.src[0].op is not Ops.ADD or \
                len(inner.src[0].src) != 2 or inner.src[0].src[0].op is not Ops.DEFINE_REG:
            continue
        if not all(from_identity(a) for a in (red, inner)):  # (+0.0, not a pick's -0.0)
            continue
        v, k0, k1 = inner.src[0].src[1], red.src[1], inner.src[1]
        if v.op is not Ops.MUL:  # (a plain sum's stay nested; a scaled one's flatten too)
            continue
        loads = [n for n in toposort(v) if n.op is Ops.LOAD]
        if not loads or any(len(n.src) != 1 or n.src[0].op is not Ops.INDEX for n in loads):
            continue
        steps = [(stride(n.src[0].src[1], k0), stride(n.src[0].src[1], k1)) for n in loads]
        if any(s1 is None or s0 != range_size(k1) * s1 for s0, s1 in steps):  # type: ignore
            continue
        swaps[red] = reduce_loop(UOp(Ops.REDUCE, red.dtype, (v, k0, k1), red.arg))
    return st.substitute(swaps) if swaps else None


def stage_panels(st: UOp, pack: Pack) -> UOp:
    """The packed STORE with each product's y read from a kernel-local array of its panels
    (`panel_array`), which the renderer fills once per iteration of the loops y reads (a
    batch's) before the row tiles, each of which then runs over every panel (gemm.py): the same
    values summed in the same order. `pack.staged`: the panels run inside the row tiles on one
    core or per batch iteration (with threads over the tiles, each panel is packed by the thread
    that claims it; with the panels outer, one at a time into one buffer)."""
    by_id = {r.arg[0]: r for r in st.src[2:]}
    rows, j, tj = tuple(by_id[i] for i in pack.rows), by_id[pack.cols], pack.panel
    reds = [n for n in toposort(st.src[1]) if n.op is Ops.REDUCE]
    # on the heap past an eighth of the stack budget, all products' panels together (gemm.py's
    # STACK_PANEL_BYTES): a thread's stack holds them beside the kernel's other arrays
    heap = _k_total(reds) * -(-range_size(j) // tj) * tj * reds[0].dtype.itemsize > \
        stack_bytes() // 8
    return panels_read(st, [(red, j, tj) for red in reds], rows, heap).replace(arg=pack)


def panels_read(st: UOp, sums: list[tuple[UOp, UOp, int]], rows: tuple[UOp, ...],
                heap: bool = False) -> UOp:
    """The STORE with the y of each sum of products in `sums` (its REDUCE, its columns' range
    and its panel width; x reads the `rows`) read from a kernel-local array of its panels
    (`panel_array`): the packing action's and the flash action's staged panels."""
    deps, mapping, fresh = free_ranges(st), {}, fresh_id(st)
    for red, cols, tj in sums:
        _, y = split(red, rows, cols, deps)  # type: ignore[misc]
        mapping[y], fresh = panel_array(y, red.src[1:], cols, tj, fresh, heap)
    return st.replace(src=(st.src[0], st.src[1].substitute(mapping), *st.src[2:]))


def panel_array(y: UOp, ks: tuple[UOp, ...], j: UOp, tj: int, fresh: int,
                heap: bool = False) -> tuple[UOp, int]:
    """y(k, j) read from a kernel-local array of its panels of tj columns, pb[panel][k][jj] =
    y(k, panel * tj + jj) and 0 past the last column (a DEFINE_LOCAL over "local" ranges from
    id `fresh`, row-major; 64-byte aligned, its rows read as vectors, on the stack or the
    `heap`); and the next free range id."""
    nj = range_size(j)
    panel, *own, jj = (UOp.range(count, fresh + n, "local") for n, count in enumerate(
        (-(-nj // tj), *(range_size(k) for k in ks), tj)))  # type: ignore[operator]
    col = panel * tj + jj
    value = y.substitute({j: col, **dict(zip(ks, own))})
    if nj % tj:  # the last panel's lanes past the last column: 0, and never read
        valid, vdeps = col.lt(nj), free_ranges(value)
        gates = {n: n.replace(src=(n.src[0], n.src[1] & valid, n.src[2]) if n.src[1:] else
                              (n.src[0], valid, n.const_like(0)))
                 for n in toposort(value) if n.op is Ops.LOAD and vdeps[n.src[0]] & {panel, jj}
                 and n.src[0].src[0].op is Ops.DEFINE_GLOBAL}
        value = value.substitute(gates)
        # (a load reads 0 where its gate fails; any other value is 0 by a select)
        value = value if value.op is Ops.LOAD else valid.where(value, value.const_like(0))
    dl = UOp(Ops.DEFINE_LOCAL, y.dtype, (value, panel, *own, jj), "heap" if heap else "aligned")
    at = j // tj * (trips(ks) * tj) + row_major(ks) * tj + j % tj
    return local_read(dl, at), fresh + 2 + len(ks)
