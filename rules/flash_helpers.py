"""Helpers of `opt.rules`' flash action: which kernels with kernel-local values and sums of
products run as a flash kernel (an attention head: scores, softmax and output per tile of rows).

In: a lowered STORE (backends/KERNEL_AST.md, "after lowering"). Out: `flashed(st)`, the STORE
with a `Flash` as its arg, which `backends/c/flash.py` prints, or None.

A STORE qualifies when it is out[.., i, c] = sum_j x(.., i, j) * y(.., j, c) (a float32 or
float64 sum, one sum of products over its last range c, the columns; the store may cast it, as
a float16 head's float32 sum of widened operands, rounded once), x holds the kernel's per-row
values (the kernel-local arrays and scalars rangeify made: each depends on the batch ranges and
the row i only), y none of them; a local array may itself be a sum of products
s(.., i, l) = sum_d a(.., i, d) * b(.., l, d) (attention's scores). Then per tile of `tile`
rows, each local product is computed by a register tile over packed panels of b, the row's
other values (max, exp, sum) as the plain renderer prints them, once per row, and the output by
a register tile over packed panels of y, whose A operand x is computed once per element. Each
sum keeps its order over its k; each step is a fused multiply-add, the FMA contract of
runtime/semantics.py (as the packing action).

A STORE with no sum of products over its columns that reads local products (an MLP block:
softmax(relu(norm(x) @ w1) @ w2)) qualifies too, with `panel` 0: the local products as register
tiles per tile of rows, then each row's other values and its store as plain loops.
"""

from __future__ import annotations

import math

from rulegrad.rules.choices import taken
from rulegrad.rules.flash_mask import key_windows
from rulegrad.rules.pack_helpers import (
    TILE_ROWS,
    batch_shares,
    panel_width,
    panels_read,
    region_threads,
    split,
)
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import free_ranges, range_size, trips
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.record import FrozenRecord
from rulegrad.runtime.target import cache_bytes, stack_bytes, threads
from rulegrad.runtime.uop import UOp, toposort


def max_panel_bytes() -> int:
    """The packed panels of one head (every product's), at most: they are read again by each
    tile of rows, so they fill at most L2 (the rangeify cost rule keeps each below half of
    it: rules/flash_cost.py), and they live on the stack of the thread, so at most half of
    its budget (runtime/target.py) whatever L2 says."""
    return min(cache_bytes(2), stack_bytes() // 2)


def stack_used(sums: list[tuple[UOp, UOp, int]], arrays: list[UOp], tile: int,
               output: bool) -> int:
    """The bytes backends/c/flash.py declares on the thread's stack for one head. Each sum of
    products (its REDUCE, its columns' range and its panel width; with `output`, the last is the
    output's) has its packed panels (k x the columns in whole panels), its row operand's tile
    (tile x k), its register tile and one panel's row of weights, and its results: a local
    product's tile x the columns, the output's one panel. Each other kernel-local array of the
    rows (`arrays`: softmax's exp) has its elements, and each row pointer of a tile 8 bytes."""
    used = 0
    for n, (red, cols, w) in enumerate(sums):
        k, width = _count(red.src[1:]), -(-_count((cols,)) // w) * w
        results = w if output and n == len(sums) - 1 else width
        used += (k * width + tile * k + tile * w + w + tile * results) * red.dtype.itemsize
        used += tile * 8
    return used + sum(_count(dl.src[1:]) * dl.dtype.itemsize for dl in arrays)


def _fits(sums: list[tuple[UOp, UOp, int]], arrays: list[UOp], tile: int,
          output: bool) -> int | None:
    """What the flash kernel puts on the thread's stack (`stack_used`) when one head's packed
    panels fit `max_panel_bytes()` (L2, and half the stack budget) and the whole fits the
    budget; else None. (Under rangeify's bounds, rules/flash_cost.py, the panels' bound is the
    one that binds; the whole is checked all the same, so that no other array, nor a change
    of those bounds, can push a kernel past the budget.)"""
    panels = sum(_count(red.src[1:]) * -(-_count((cols,)) // w) * w * red.dtype.itemsize
                 for red, cols, w in sums)
    used = stack_used(sums, arrays, tile, output)
    return used if panels <= max_panel_bytes() and used <= stack_bytes() else None


def _count(ranges: tuple[UOp, ...]) -> int:
    """The iterations of `ranges` together; a symbolic one counts as more than any stack."""
    sizes = [range_size(r) for r in ranges]
    return stack_bytes() + 1 if None in sizes else math.prod(sizes)  # type: ignore[arg-type]


# the dtypes a register tile computes in: the prelude has their vectors and fused multiply-add
TILE_DTYPES = (dtypes.float32, dtypes.float64)


class Flash(FrozenRecord):
    """The flash action on a STORE (its arg): range ids of the row loop (tiled by `tile` rows)
    and of the output's columns, the range ids of the local arrays computed as register tiles
    (the local products) and each one's panel width, the output's panel width, and which loop
    is split across cores: "batch" (the outermost batch loop), "tiles" (the row tiles) or ""
    (one core). A local product may have a dtype of its own (float32 scores of a float64
    softmax): its panels, registers and array are of its dtype, and so is its panel width.
    `stack`: the bytes of arrays the kernel declares on a thread's stack (`stack_used`), at
    most the budget (runtime/target.py). `windows`: for a masked head (rules/flash_mask.py),
    the keys [lo, hi) each tile of rows visits (flat: lo0, hi0, lo1, hi1, ...), else ();
    `narrowed`: the range ids of the row's passes (its max, exps, sum and probabilities) that
    visit them too, else all keys. `team`: the threads the threaded loop runs on (pack_helpers'
    `region_threads`, the model of every threaded loop; printed as `num_threads`, or a launch's
    RenderedKernel.team), 0 with no threads or in a record of before (the runtime's count)."""

    __slots__ = ("rows", "cols", "products", "product_panels", "tile", "panel", "parallel",
                 "stack", "windows", "narrowed", "team")
    rows: int
    cols: int
    products: tuple[int, ...]
    product_panels: tuple[int, ...]
    tile: int
    panel: int  # 0: no output product (each row's store printed as plain loops)
    parallel: str
    stack: int
    windows: tuple[int, ...]
    narrowed: tuple[int, ...]
    team: int

    def __init__(self, rows: int, cols: int, products: tuple[int, ...],
                 product_panels: tuple[int, ...], tile: int, panel: int, parallel: str,
                 stack: int, windows: tuple[int, ...] = (), narrowed: tuple[int, ...] = (),
                 team: int = 0) -> None:
        self._init(rows, cols, products, product_panels, tile, panel, parallel, stack, windows,
                   narrowed, team)

    def keys_visited(self) -> int:
        """The keys the tiles visit together (each tile's window)."""
        return sum(hi - lo for lo, hi in zip(self.windows[::2], self.windows[1::2]))

    def describe(self) -> str:
        prods = " ".join(f"r{r}" + ("" if w == self.panel else f" (panels of {w})")
                         for r, w in zip(self.products, self.product_panels)) or "none"
        out = (f"output over r{self.cols} (panels of {self.panel})" if self.panel else
               f"each row's outputs over r{self.cols} as plain loops")
        what = (f"FLASH rows r{self.rows} in tiles of {self.tile}: local products over {prods}, "
                f"{out}")
        if self.windows:
            what += (f", KEY WINDOWS of the mask ({self.keys_visited()} keys over "
                     f"{len(self.windows) // 2} tiles"
                     + (f", rows' passes over r{' r'.join(map(str, self.narrowed))})"
                        if self.narrowed else ")"))
        team = f" on {self.team} threads" if self.team else ""
        return what + (f", PARALLEL {self.parallel}{team}" if self.parallel else "")


def local_product(dl: UOp, i: UOp, deps: dict[UOp, frozenset[UOp]]) -> tuple[UOp, UOp] | None:
    """(a, b) of a local array DEFINE_LOCAL(sum_d a * b, l) over one range l, a reading the row
    i and not l, b reading l and not i, and b no per-row value, in a dtype a register tile
    computes in; else None (the array is then computed per row as the plain loops do)."""
    if len(dl.src) != 2 or dl.src[0].op is not Ops.REDUCE:
        return None
    red = dl.src[0]
    if red.dtype not in TILE_DTYPES:
        return None
    ab = split(red, (i,), dl.src[1], deps)
    if ab is None or any(range_size(k) is None for k in red.src[1:]) or _per_row(ab[1]):
        return None
    return ab


def _per_row(x: UOp) -> bool:
    """Whether x reads a reduce or a kernel-local array of the rows (not a product's staged
    panels: a DEFINE_LOCAL with an arg, `panel_array`)."""
    return any(n.op is Ops.REDUCE or n.op is Ops.DEFINE_LOCAL and n.arg is None
               for n in toposort(x))


def _plan(st: UOp) -> Flash | None:
    ranges = st.src[2:]
    if st.arg is not None or len(ranges) < 2 or any(range_size(r) is None for r in ranges):
        return None
    if len(st.src[0].src) != 2:
        return None
    i, c = ranges[-2], ranges[-1]
    deps = free_ranges(st)
    outs = [n for n in toposort(st.src[1]) if n.op is Ops.REDUCE and c in deps[n]]
    if not outs:
        return _rows_plan(st, i, c, deps) if st.src[1].dtype in TILE_DTYPES else None
    # the output's sum in a dtype a register tile computes in; the store may round it (a
    # float16 head's float32 sum of widened products, cast once: runtime/semantics.py)
    if len(outs) != 1 or outs[0].dtype not in TILE_DTYPES:
        return None
    out = outs[0]
    xy = split(out, (i,), c, deps)
    if xy is None or _per_row(xy[1]) or any(range_size(k) is None for k in out.src[1:]):
        return None
    # above the output's sum the store reads no per-row value (it would be recomputed per panel)
    above = toposort(st.src[1], stop=lambda n: n is out)
    if any(n is not out and n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL) for n in above):
        return None
    # x's per-row values (kernel-local arrays and scalars) depend on the batch and the row only:
    # computed once per row; a kernel with none is a plain product (the packing action's)
    row = frozenset(ranges[:-1])
    per_row = [n for n in toposort(xy[0]) if n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL)
               and deps[n] == row]
    if not per_row:
        return None
    prods = [dl for dl in per_row
             if dl.op is Ops.DEFINE_LOCAL and local_product(dl, i, deps) is not None]
    tiled = _tiled(prods, (out, c), toposort(xy[0]), i)
    if tiled is None:
        return None
    widths, tile, stack = tiled
    work = trips(ranges) * trips(out.src[1:])
    windows, narrowed = key_windows(st, i, out, xy[0], prods, tile, deps) or ((), ())
    parallel, team = _threads(ranges, work, tile)
    return Flash(i.arg[0], c.arg[0], tuple(dl.src[1].arg[0] for dl in prods), tuple(widths[:-1]),
                 tile, widths[-1], parallel, stack, windows, narrowed, team)


def _tiled(prods: list[UOp], output: tuple[UOp, UOp] | None, nodes: list[UOp], i: UOp
           ) -> tuple[list[int], int, int] | None:
    """The panel widths of the local products `prods` and of the `output` (its sum and columns,
    if any), the tile of rows and the bytes on the stack (`_fits`; None when they do not fit),
    beside the other kernel-local arrays of `nodes`. Each product's panels are registers of its
    own dtype (a panel of float32 scores is twice the columns of the float64 output's); every
    panel is wide only where all products' are."""
    sums = [(dl.src[0], dl.src[1]) for dl in prods] + ([output] if output else [])
    columns = [range_size(cols) for _, cols in sums]
    widths = [panel_width(red.dtype, columns) for red, _ in sums]  # type: ignore[arg-type]
    arrays = [n for n in nodes if n.op is Ops.DEFINE_LOCAL and n not in prods]
    tile = min(TILE_ROWS, range_size(i))  # type: ignore[type-var]
    stack = _fits([(red, cols, w) for (red, cols), w in zip(sums, widths)], arrays, tile,
                  output is not None)
    return None if stack is None else (widths, tile, stack)


def _threads(ranges: tuple[UOp, ...], work: int, tile: int) -> tuple[str, int]:
    """Which loop takes the cores, and its team (pack_helpers' `region_threads`): none where
    fewer than two threads' shares of its region's work pay for it (every threaded loop's
    model; one share's work had taken the runtime's count: 3 heads of few rows woke 8 threads
    at RULEGRAD_THREADS=8), else the first batch loop when its iterations (heads) share among
    the threads no worse than a head's row tiles do (pack_helpers' `batch_shares`) or the
    teams over a head's tiles would not pay (one region over the batch has all its work), else
    the tiles of `tile` rows (each head's panels then packed on one thread: a copy of K and V
    against a head's two products over them)."""
    batch = ranges[:-2]
    heads, rows = range_size(batch[0]) if batch else 0, range_size(ranges[-2])
    wakes = trips(batch)
    tiles = region_threads(work // wakes, threads(), -(-rows // tile))  # type: ignore[operator]
    by_heads = region_threads(work, threads(), heads) if heads >= 2 else 1  # type: ignore
    if by_heads >= 2 and (tiles < 2 or batch_shares(heads, rows, work, wakes)):  # type: ignore
        return "batch", by_heads
    return ("tiles", tiles) if tiles >= 2 else ("", 0)


def _rows_plan(st: UOp, i: UOp, c: UOp, deps: dict[UOp, frozenset[UOp]]) -> Flash | None:
    """A store with no sum of products over its columns that reads local products (an MLP
    block: softmax(relu(norm(x) @ w1) @ w2) per row): the products as register tiles per tile of
    rows, then each row's other values and its store as the plain renderer prints them (`panel`
    0: no output product). In plain loops each local product is a dot product per column that
    reads its packed operand strided, once per row: several times slower than unfused packed
    kernels (the demo's MLP: 0.15 ms against 0.023)."""
    ranges = st.src[2:]
    row = frozenset(ranges[:-1])
    nodes = toposort(st.src[1])  # (no reduce reads the columns: the caller's `outs` is empty)
    prods = [n for n in nodes if n.op is Ops.DEFINE_LOCAL and deps[n] == row
             and local_product(n, i, deps) is not None]
    if not prods:
        return None
    tiled = _tiled(prods, None, nodes, i)
    if tiled is None:
        return None
    widths, tile, stack = tiled
    work = sum(_count(dl.src[0].src[1:]) * _count(dl.src[1:2]) for dl in prods) * trips(ranges[:-1])
    parallel, team = _threads(ranges, work, tile)
    return Flash(i.arg[0], c.arg[0], tuple(dl.src[1].arg[0] for dl in prods), tuple(widths),
                 tile, 0, parallel, stack, team=team)


def flashed(st: UOp) -> UOp | None:
    """The STORE with its flash action (a `Flash`) as arg, when it is a STORE not given an
    action yet that the flash kernel computes (see the docstring), recorded as an action; else
    None. (One plan: a masked head's windows evaluate its mask over rows x keys.)"""
    plan = _plan(st)
    if plan is None:
        return None
    taken(plan.describe())
    return _staged(st, plan).replace(arg=plan)


def _staged(st: UOp, fl: Flash) -> UOp:
    """The STORE with each product's packed operand (a local product's b, the output's y) read
    from a kernel-local array of its panels (pack_helpers' `panel_array`), which the renderer
    fills once per head, before its tiles of rows (backends/c/flash.py): the same values."""
    i, c = st.src[-2], st.src[-1]
    deps = free_ranges(st)
    widths = dict(zip(fl.products, fl.product_panels))
    sums = [(dl.src[0], dl.src[1], widths[dl.src[1].arg[0]]) for dl in toposort(st.src[1])
            if dl.op is Ops.DEFINE_LOCAL and len(dl.src) == 2 and dl.src[1].arg[0] in widths]
    if fl.panel:
        sums += [(n, c, fl.panel) for n in toposort(st.src[1]) if n.op is Ops.REDUCE
                 and c in deps[n]]
    return panels_read(st, sums, (i,))
