"""The packed, register-blocked loops of a sum of products, printed as its packing action says.

In: a STORE whose arg is a `Pack` (rules/opt.rules' `pack_store`, decided in
rules/pack_helpers.py: rows, columns, register tile, whether x is packed, which loop is
threaded). Out: its loop nest, in the renderer's scopes. out[.., rows, j] = f(sum_k x(rows, k) *
y(k, j), ..), whatever x and y are (loads, a strided view, a fused softmax, a shifted window of
an image), per iteration of the other ("batch") ranges:

    for each panel of TJ columns:
      pack y:  pb[k][jj] = y(k, panel*TJ + jj)          (0 past the last column)
      for each tile of TI rows (rows past the last one computed as it, and not stored):
        acc[TI][TJ] (vector registers) += x(row, k) * pb[k][..]     for k in order
        epilogue: f(acc, ..) stored for each (row, j) of the tile

Several row ranges (a convolution's images and pixels) are one flat row number. With several
panels on one core (or per batch iteration), y is read from a kernel-local array of all of them
(`Pack.staged`: the packing action's staged panels, filled by the renderer's local-array loops),
and each row tile runs over all of them (x packed per tile first with `pack_a`: a computed x is
then computed once per element); with the panels outer (`Pack.outer`) each is packed here into
one reused buffer and run over by every row tile. Whole panels and the last, narrower one are
loops of known counts (no column test per element).

The register block and the copy of y's panels are calls of the block library's (blocks.py)
wherever x and y are plain loads or x is packed (`_plan_block`, `copy_panel`); elsewhere they
are printed here (`fma_block`, shared with flash.py). Each output's sum still runs over k in
order, each step a fused multiply-add where the CPU has FMA, as BLAS does: the FMA contract of
runtime/semantics.py's docstring.

Threads (`Pack.parallel`): "batch" splits the outermost batch loop; "panels" the columns' panels
(each thread packs the panels it claims and runs every row tile on them); "tiles" the row tiles:
with several panels the threads share them (each packed once, by the thread that claims it,
then marked ready; no barrier), with one each thread packs it for itself. A kernel that is only
that product is launched instead (`_shared_scratch`). Each runs its action's team (`Pack.team`:
pack_helpers' `region_threads`, the threads whose shares of one region's multiply-adds pay for
it, at most the iterations they claim, `claims`), printed as `num_threads` or handed to the
launch (RenderedKernel.team). Packed panels live on the stack up to STACK_PANEL_BYTES, on the heap
beyond.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rulegrad.rules.pack_helpers import PANEL_VECTORS, Pack, split
from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.loops import free_ranges, linear_terms
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import stack_bytes
from rulegrad.runtime.uop import UOp, toposort

from .blocks import dot_name, half_pack_name, last_name, pack_name, stream_name
from .blocks import name as block_name
from .ctext import (
    TEAM,
    Guard,
    Loop,
    Region,
    RenderError,
    Scope,
    Threads,
    array,
    block_library,
    ctype,
    loop_count,
    vector_names,
)

if TYPE_CHECKING:
    from .render import KernelRenderer

# a thread's packed panels (all products), at most, and a packed tile of x's: an eighth of the
# stack budget each (runtime/target.py; 128 KB), the rest beside them for the kernel's others
STACK_PANEL_BYTES = stack_bytes() // 8


class Product:
    """One REDUCE as sum_k x * y; `pb` (on the heap or not) and `cell` name its packed panel
    and its results."""

    def __init__(self, red: UOp, x: UOp, y: UOp) -> None:
        self.red, self.x, self.y = red, x, y
        self.ks = red.src[1:]
        self.k = math.prod(loop_count(r) for r in self.ks)
        self.pb = self.cell = ""
        self.heap = False
        # the block library's call (blocks.py): x's offset table (a C name, or "0"), its
        # stride and, for x packed per tile, the step between its rows; None for a block
        # printed here (x computed, or read off the rows)
        self.block: tuple[str, str, str] | None = None
        # y read in place (`Pack.stream`): its buffer, the index of its first column's element
        # (the batch's part) and its stride along k
        self.stream: tuple[UOp, UOp, int] | None = None
        # tiled dots (`Pack.dots`): x's and y's buffers, the index of each one's element at
        # step 0 (row and column 0) and the step between its rows (x) or columns (y), each
        # read forward along k (`_dottable`)
        self.dot: tuple[UOp, UOp, int, UOp, UOp, int] | None = None

    @property
    def packs_y(self) -> bool:
        """Whether y is packed into panels (not read in place: streamed, or tiled dots)."""
        return self.stream is None and self.dot is None


def plan(r: KernelRenderer, st: UOp) -> tuple[Pack, tuple[UOp, ...], UOp, list[Product]]:
    """The STORE's packing action (rules/opt.rules' `pack_store` put a `Pack` in its arg), with
    its row and column ranges and its products."""
    pack = st.arg
    by_id = {x.arg[0]: x for x in st.src[2:]}
    rows, j = tuple(by_id[i] for i in pack.rows), by_id[pack.cols]
    prods = []
    for red in (n for n in toposort(st.src[1]) if n.op is Ops.REDUCE):
        xy = split(red, rows, j, r.deps)
        if xy is None:
            raise RenderError(f"a packed STORE whose {red.op.name} is not a product over its rows "
                              "and columns")
        prods.append(Product(red, *xy))
    return pack, rows, j, prods


def render_packed(r: KernelRenderer, st: UOp, pack: Pack, rows: tuple[UOp, ...], j: UOp,
                  prods: list[Product]) -> None:
    """Emit the packed loop nest for STORE `st` (see the module docstring), as `pack` says."""
    dt = prods[0].red.dtype
    if pack.dots and not _dottable(r, prods, rows, j):
        # (an operand the tiled dot cannot read in place, or no block library: packed)
        pack = pack.replace(dots=False, inplace=False)
    if pack.dots:
        r.choices.append("TILED DOTS from the block library")
    elif (pack.stream or pack.inplace) and not _streamable(r, prods, rows, j, pack):
        # (a y or x the block library cannot read in place: the same tile, y packed)
        pack = pack.replace(stream=0, inplace=False)
    g = _Geometry(dt, math.prod(loop_count(i) for i in rows), loop_count(j), pack)
    batch = [x for x in st.src[2:] if x is not j and x not in rows]
    team = pack.team  # (the action's: its `region_threads`, at most the threads' claims)
    if team:  # (DEBUG=2: the action's PARALLEL, on the model's team)
        r.choices.append(f"PACK on {team} threads")
    scope = batch_loops(r, batch, pack.parallel == "batch", team)
    pv = r.fresh("pn")
    # dynamic: a thread the OS takes off its core (a loaded machine) leaves its tiles to the
    # others instead of holding up the join; each tile is whole outputs, so values are the same
    grab = f", {pack.grab}" if pack.grab > 1 else ""
    threaded = pack.parallel == "tiles"  # ("panels" is below, "batch" the loops above)
    tiles_pragma = f"#pragma omp for schedule(dynamic{grab})\n" if threaded else ""
    panel_head = f"for (int64_t {pv} = 0; {pv} < {g.npanels}; {pv}++)"
    if pack.parallel == "panels":  # threads claim panels, each a thread's own, all its tiles
        _panels_threaded(r, st, scope, rows, j, prods, pv, g, team,
                         shared=not batch and _alone(r))
    elif pack.inplace and not pack.outer:  # y read in place: no panel to pack or share;
        # each row tile runs over every panel (threaded: the threads claim tiles)
        tile_claim, region = "", scope
        if threaded and not batch and _alone(r):  # launched: the counter in the scratch
            _, tile_claim = _shared_scratch(r, [], g, pack.grab, team)
        elif threaded:
            region = r.open_counter(scope, team_region(team))
        _row_tiles(r, st, region, rows, j, prods, pv, panel_head, tiles_pragma, g,
                   counter=tile_claim, grab=pack.grab)
    elif g.npanels > 1 and threaded:  # threaded: the panels shared, then row tiles
        # each panel packed once, by the thread that claims it (a counter), then marked ready;
        # a thread claims panels until none is left, then takes row tiles, and waits on a
        # panel's mark only while another thread is still copying it. No barrier: a thread the
        # OS has not started yet (a loaded machine) leaves every panel to the others, and
        # packing each panel once halves a thread's copying (512^3: a 1 MB copy a thread)
        g.ready = r.fresh("rdy")
        shared = not batch and _alone(r)
        if shared:  # the whole kernel: launched, its shared state in the launcher's scratch
            nx, tile_claim = _shared_scratch(r, prods, g, pack.grab, team)
            region = scope
        else:
            nx, tile_claim = r.fresh("nx"), ""
            _scratch(r, scope, prods, g, g.npanels)
            scope.add(f"int64_t {nx} = 0;")
            scope.add(f"unsigned char {g.ready}[{g.npanels}] = {{0}};")
            region = r.open_counter(scope, team_region(team))
        take = claim(nx)
        loop = r.open_counter(region, f"for (int64_t {pv} = {take}; {pv} < {g.npanels}; "
                                      f"{pv} = {take})")
        pack_y(r, loop, j, g.nj, prods, pv, g.tj, g.lanes)
        loop.add(f"__atomic_store_n(&{g.ready}[{pv}], 1, __ATOMIC_RELEASE);")
        r.close_loops(region)
        _row_tiles(r, st, region, rows, j, prods, pv, panel_head, tiles_pragma, g,
                   counter=tile_claim, grab=pack.grab)
        if not shared:
            r.close_loops(scope)
            _free(scope, prods)
    elif pack.staged:  # y's panels are kernel-local arrays (pack_helpers' stage_panels),
        # filled first: each row tile runs over all of them
        for p in prods:
            p.pb = _staged_copy(r, p, g.nj, g.lanes) or r.emit(p.y.src[0].src[0])
        _row_tiles(r, st, scope, rows, j, prods, pv, panel_head, "", g)
    elif threaded:  # one panel: each thread packs it for itself, then takes row tiles
        tile_claim = ""
        if not batch and _alone(r):  # launched: the tile counter in the launcher's scratch
            _, tile_claim = _shared_scratch(r, [], g, pack.grab, team)
            region = scope
        else:
            region = r.open_counter(scope, team_region(team))
        region.add(f"const int64_t {pv} = 0;")
        _scratch(r, region, prods, g, 1)
        pack_y(r, region, j, g.nj, prods, pv, g.tj, g.lanes, per_panel=True)
        _row_tiles(r, st, region, rows, j, prods, pv, "", tiles_pragma, g,
                   counter=tile_claim, grab=pack.grab)
        _free(region, prods)
    else:  # panel by panel on one core (or one panel): each packed into one buffer, reused,
        # then its row tiles (`Pack.group` panels at a time)
        def serial(v: str, count: int) -> str:
            return f"for (int64_t {v} = 0; {v} < {count}; {v}++)"

        _scratch(r, scope, prods, g, pack.group)
        _panel_groups(r, st, scope, serial, rows, j, prods, pv, g, pack.group)
        _free(scope, prods)
    r.close_loops()


def team_region(team: int) -> Region:
    """`#pragma omp parallel` on `team` threads, at most the runtime's count (ctext.TEAM, as a
    threaded loop's `num_threads`)."""
    return Region(f"#pragma omp parallel num_threads({TEAM}({team}))")


def batch_loops(r: KernelRenderer, batch: list[UOp] | tuple[UOp, ...], threaded: bool,
                team: int = 0) -> Scope:
    """The loops over the `batch` ranges, outermost first (`threaded`: split across cores, on
    `team` threads; 0 the runtime's count), and the innermost one's scope (the kernel's root
    without any)."""
    scope = r.root
    for n, b in enumerate(batch):
        scope = r.open_loop(scope, b, Threads(dynamic=True, team=team)
                            if threaded and n == 0 else "")
        r.stack.append(scope)
    return scope


def _panels_threaded(r: KernelRenderer, st: UOp, scope: Scope, rows: tuple[UOp, ...], j: UOp,
                     prods: list[Product], pv: str, g: _Geometry, team: int,
                     shared: bool) -> None:
    """The columns split across cores (`Pack.parallel` "panels": too few row tiles to share):
    each thread claims a panel, packs it into a buffer of its own and runs every row tile on
    it, waiting on no other thread. Launched when `shared` (the claim counter in the
    launcher's scratch), else an OpenMP region handing out panels dynamically; on `team`
    threads."""
    group = g.group
    if shared:
        counter, _ = _shared_scratch(r, [], g, 1, team)
        # (a claim per group of panels)
        r.shared = (-(-g.npanels // group), *r.shared[1:])  # type: ignore[index]
        region = scope
        take = claim(counter)

        def head(v: str, count: int) -> str:
            return f"for (int64_t {v} = {take}; {v} < {count}; {v} = {take})"
    else:
        region = r.open_counter(scope, team_region(team))

        def head(v: str, count: int) -> str:
            return (f"#pragma omp for schedule(dynamic)\n"
                    f"for (int64_t {v} = 0; {v} < {count}; {v}++)")
    _scratch(r, region, prods, g, group)  # (each thread's own panels)
    _panel_groups(r, st, region, head, rows, j, prods, pv, g, group)
    _free(region, prods)


def _panel_groups(r: KernelRenderer, st: UOp, region: Scope, head, rows: tuple[UOp, ...],
                  j: UOp, prods: list[Product], pv: str, g: _Geometry, group: int) -> None:
    """Panel after panel, each packed into the products' buffers (`_scratch`, `group` panels
    wide) and run over by every row tile; `head(variable, count)` is the loop's header (one
    core, or threads claiming). With `group` > 1 the loop is over groups of that many panels,
    each group's panels copied side by side a row of y at a time (blocks.py's
    `rg_pack_*`), then each panel's row tiles."""
    if group == 1:
        loop = r.open_counter(region, head(pv, g.npanels))
        pack_y(r, loop, j, g.nj, [p for p in prods if p.packs_y], pv, g.tj, g.lanes,
               per_panel=True)
        _row_tiles(r, st, loop, rows, j, prods, pv, "", "", g)
        r.close_loops(region)
        return
    gv = r.fresh("pg")
    outer = r.open_counter(region, head(gv, -(-g.npanels // group)))
    first, wide = f"{gv} * {group * g.tj}", group * g.tj
    cols = columns_left(g.nj, first, wide)
    copied = [p for p in prods if copy_panel(r, outer, p.y, p.ks, j, p.k, cols, first,
                                             f"{p.pb} + 0", g.tj, g.lanes, group=group)]
    loop = r.open_counter(outer, f"for (int64_t {pv} = {gv} * {group}; {pv} < {gv} * {group}"
                                 f" + {group} && {pv} < {g.npanels}; {pv}++)")
    buffers = {p: p.pb for p in prods}
    for p in prods:  # the panel's part of the group's buffer
        p.pb = r.fresh("pb")
        loop.add(f"{g.ct} *const {p.pb} = {buffers[p]} + ({pv} - {gv} * {group}) * "
                 f"{p.k * g.tj};")
    pack_y(r, loop, j, g.nj, [p for p in prods if p not in copied], pv, g.tj, g.lanes,
           per_panel=True)
    _row_tiles(r, st, loop, rows, j, prods, pv, "", "", g)
    r.close_loops(region)
    for p in prods:
        p.pb = buffers[p]


def _scratch(r: KernelRenderer, scope: Scope, prods: list[Product], g: _Geometry,
             panels: int) -> None:
    """The packed panels (`panels` of them, TJ wide) of every product, in `scope`: on the stack
    when all of them fit in STACK_PANEL_BYTES (each thread has its own when the scope is a
    parallel loop's body), else on the heap."""
    prods = [p for p in prods if p.packs_y]  # (y read in place: no panel)
    heap = sum(p.k for p in prods) * panels * g.tj * g.size > STACK_PANEL_BYTES
    for p in prods:
        p.pb, p.heap = r.fresh("pb"), heap
        scope.add(array(g.ct, p.pb, p.k * panels * g.tj, heap))


def claim(counter: str) -> str:
    """A thread's claim of the next number of an atomic counter (tiles, panels)."""
    return f"__atomic_fetch_add(&{counter}, 1, __ATOMIC_RELAXED)"


def gated(x: UOp) -> bool:
    """Whether x reads through a gate (a pad, a mask): gcc 12.2 has dropped lanes of those in
    the loops it vectorized (flags.py), so they are not copied as vectors."""
    return any(n.op is Ops.LOAD and len(n.src) > 1 for n in toposort(x))


def columns_left(nj: int, first: str, wide: int) -> str:
    """The count of the nj columns from `first` on, `wide` at most."""
    return f"({nj} - {first} < {wide} ? {nj} - {first} : {wide})"


# A kernel that is one threaded product over shared panels is launched (render.py's launched
# kernels: launch.py's one precompiled OpenMP region runs it on every thread) instead of
# opening an OpenMP region of its own: its panels, its two claim counters (panels, row tiles)
# and the panels' ready marks live in a scratch area the launcher allocates per call (the
# counters and marks zeroed), and each thread claims row tiles from the counter as `omp for
# schedule(dynamic)` handed them out. gcc outlined the region into a function of its own and
# expanded the runtime's calls: 19M of the 143M compiler instructions of a 256x512x512
# matmul's library, and the library is now compiled without -fopenmp.
def _alone(r: KernelRenderer) -> bool:
    """Whether the kernel is one store, none of its loops is printed yet, and it takes no
    symbolic size (a launched kernel's arguments are its buffers only)."""
    return (len(r.ast.src) == 1 and not any(isinstance(x, Scope) for x in r.root.items)
            and all(n.op is not Ops.DEFINE_VAR for n in toposort(r.ast)))


def _shared_scratch(r: KernelRenderer, prods: list[Product], g: _Geometry,
                    grab: int, team: int) -> tuple[str, str]:
    """Name the scratch area's parts (`s_`, RenderedKernel.shared): two claim counters, then
    with `prods` the panels' ready marks and each product's panels, 64-byte aligned (without,
    each thread packs its one panel for itself); launched on `team` threads
    (RenderedKernel.team). Returns the counters of panels and tiles."""
    head = -(-(16 + g.npanels) // 64) * 64  # the zeroed part: counters and marks
    nx = r.fresh("nx")
    r.root.add(f"int64_t *const {nx} = (int64_t *)s_;")
    if prods:
        r.root.add(f"unsigned char *const {g.ready} = s_ + 16;")
    at = head
    for p in prods:
        p.pb, p.heap = r.fresh("pb"), False
        r.root.add(f"{g.ct} *const {p.pb} = ({g.ct} *)(s_ + {at});")
        at += -(-p.k * g.npanels * g.tj * g.size // 64) * 64
    tiles = -(-g.ni // min(g.ti, g.ni))
    # a thread of the launch starts when it gets iterations: as many as there are claims
    r.shared = (max(-(-tiles // grab), g.npanels), at, head, team)
    return f"{nx}[0]", f"{nx}[1]"


def _free(scope: Scope, prods: list[Product]) -> None:
    """Free the heap panels of `scope`, after everything that reads them."""
    for p in prods:
        if p.heap:
            scope.add(f"free({p.pb});")


class Vec:
    """The C names of one dtype's scalars and vector registers, for a panel of `panel` columns:
    PANEL_VECTORS registers (256- or 512-bit, runtime/target.py; the action's panel says which)."""

    def __init__(self, dt: DType, panel: int) -> None:
        self.ct, self.size, self.lanes = ctype(dt), dt.itemsize, panel // PANEL_VECTORS
        self.vt, self.fma = vector_names(dt, self.lanes)


class _Geometry(Vec):
    """Sizes of one packed kernel: its C names (`Vec`), panel width, tile rows, rows and
    columns."""

    def __init__(self, dt: DType, ni: int, nj: int, pack: Pack) -> None:
        super().__init__(dt, pack.panel)
        # (streamed, a "panel" is the columns read at a time, in registers of the panel's width)
        self.tj, self.ti = pack.stream or pack.panel, pack.tile
        self.pack_x = pack.pack_a
        self.group = pack.group
        self.ready = ""  # the shared panels' ready marks, when threads share them
        self.inplace = pack.inplace
        self.ni, self.nj = ni, nj
        self.npanels = -(-nj // self.tj)


def pack_y(r: KernelRenderer, panel: Scope, j: UOp, nj: int, prods, pv: str, tj: int,
           lanes: int, per_panel: bool = False) -> None:
    """pb[panel][k][jj] = y(k, panel * TJ + jj) over the `nj` columns of range j (pb[k][jj]
    when it holds one panel), for each product p (its y, ks, k, pb); lanes past the last column
    are 0, so they add nothing. The block library's copy where it reads y (`copy_panel`)."""
    for p in prods:
        at = "" if per_panel else f"{pv} * {p.k * tj} + "
        # a panel's row is copied as vectors (gcc does not see through the index arithmetic
        # alone), unless a read is gated (`gated`)
        simd = not gated(p.y)

        def copy(scope: Scope, count: int, p=p, at: str = at, simd: bool = simd) -> None:
            if copy_panel(r, scope, p.y, p.ks, j, p.k, count, f"{pv} * {tj}",
                          f"{p.pb} + {at}0", tj, lanes):
                return
            kscope, kk = k_loops(r, scope, p.ks)
            jscope, jj = bind(r, kscope, j, f"{pv} * {tj}", count, simd=simd)
            jscope.add(f"{p.pb}[{at}{kk} * {tj} + {jj}] = {r.emit(p.y)};")
            r.close_loops(scope)
            if count < tj:
                scope.add(f"for (int64_t n_ = 0; n_ < {p.k}; n_++) "
                          f"for (int c_ = {count}; c_ < {tj}; c_++) "
                          f"{p.pb}[{at}n_ * {tj} + c_] = 0;")

        _by_panel(r, panel, pv, nj, tj, copy)


def _by_panel(r: KernelRenderer, parent: Scope, pv: str, nj: int, tj: int, body) -> None:
    """body(scope, columns) for panel `pv`: whole panels with TJ columns, the last one with
    the columns left over, each a loop of a known count with no guard (a guarded lane is a
    branch per element, and gcc copies and stores such loops element by element: 500^3 ran
    8% slower than with whole panels)."""
    full, rest = divmod(nj, tj)
    if full and rest:
        body(r.open_counter(parent, Guard(f"{pv} < {full}")), tj)
        r.close_loops(parent)
        body(r.open_counter(parent, "else"), rest)
        r.close_loops(parent)
    else:
        body(parent, tj if full else rest)


def _row_tiles(r: KernelRenderer, st: UOp, parent: Scope, i: tuple[UOp, ...], j: UOp,
               prods: list[Product], pv: str, panel_head: str, pragma: str,
               g: _Geometry, counter: str = "", grab: int = 1) -> None:
    """Tiles of TI rows in one loop (threaded, the last tile is shared out with the others
    instead of running on one core after them). When TI does not divide the rows, the last
    tile computes TI rows too, those past the end on the last row's values (its index clamped),
    and stores only the rows there are: one copy of the register block, not a second one for
    the rows left over, which cost gcc a fifth of a 512^3 matmul's build (412M -> 331M
    compiler instructions). With a `panel_head`, the panel loop runs inside each tile (x
    packed per tile first when the action packs it)."""
    ti = min(g.ti, g.ni)
    tiles = -(-g.ni // ti)
    for p in prods:
        _plan_block(r, parent, p, i, g.pack_x, ti)
    if any(p.block for p in prods):
        r.choices.append("BLOCKS from the block library")
    tv = r.fresh("tl")
    if counter:  # a launched kernel's threads claim `grab` tiles at a time from a counter
        take = claim(counter)
        if grab == 1:
            loop = r.open_counter(parent, f"for (int64_t {tv} = {take}; {tv} < {tiles}; "
                                          f"{tv} = {take})")
        else:
            cv = r.fresh("tc")
            chunk = r.open_counter(parent, f"for (int64_t {cv} = {take}; {cv} * {grab} < "
                                           f"{tiles}; {cv} = {take})")
            loop = r.open_counter(chunk, f"for (int64_t {tv} = {cv} * {grab}; {tv} < ({cv} + 1)"
                                         f" * {grab} && {tv} < {tiles}; {tv}++)")
    else:
        loop = r.open_counter(parent, f"{pragma}for (int64_t {tv} = 0; {tv} < {tiles}; {tv}++)")
    _tile(r, st, loop, i, j, prods, f"{tv} * {ti}", ti, pv, panel_head, g,
          g.ni if g.ni % ti else None)
    r.close_loops(parent)


def _tile(r: KernelRenderer, st: UOp, tile: Scope, i: tuple[UOp, ...], j: UOp,
          prods: list[Product], base: str, rows: int, pv: str, panel_head: str, g: _Geometry,
          size: int | None) -> None:
    """`rows` output rows from `base`: per panel, each product's register block summed over k
    in order (x broadcast, fused-multiply-added), then the epilogue. With a `panel_head` the
    panels are looped here, x first packed into pa[k][row] when the action packs it. With a
    `size`, rows from `size` on are computed as row size - 1 and not stored."""
    last = None if size is None else size - 1
    offsets = _RowOffsets(r, tile, i, base, rows, last)
    xs: dict[Product, str] = {}
    heap: list[str] = []  # packed tiles of x on the heap, freed after the panels
    outer = tile
    if g.pack_x:
        for p in prods:
            pa = r.fresh("pa")
            if p.k * rows * g.size > STACK_PANEL_BYTES:  # a long sum
                heap.append(pa)
            tile.add(array(g.ct, pa, p.k * rows, pa in heap))
            if len(i) > 1:  # rows of several ranges (a convolution's pixels): the k loops
                # outside, so each step's index arithmetic serves the tile's rows
                x = offsets.of(p.x)
                kscope, kk = k_loops(r, tile, p.ks)
                inner, ii = _bind_rows(r, kscope, i, base, rows, last=last,
                                       values=offsets.reads_rows(x))
                offsets.name(inner, ii)
                inner.add(f"{pa}[{kk} * {rows} + {ii}] = {r.emit(x)};")
            else:  # one row range: each row read contiguously along k (and written so for
                # the block library's block, which reads each row through a pointer: a copy gcc
                # vectorizes at less cost than one a tile's rows apart, 19M of an MLP layer's 183M)
                iscope, ii = _bind_rows(r, tile, i, base, rows, unroll=False, last=last)
                if p.block and _widen_row(r, iscope, p, f"{pa} + {ii} * {p.k}", g.lanes):
                    r.close_loops(tile)
                    xs[p] = pa
                    continue
                inner, kk = k_loops(r, iscope, p.ks)
                at = f"{ii} * {p.k} + {kk}" if p.block else f"{kk} * {rows} + {ii}"
                inner.add(f"{pa}[{at}] = {r.emit(p.x)};")
                # each step its own element: `omp simd` (render.py's `_simd_fills`). gcc's
                # very cheap cost model left a computed row scalar (an MLP's layer norm, a
                # division per element: a tenth of its first product's time on one core);
                # not with a gated read (`gated`)
                inner.fills = not gated(p.x)
            r.close_loops(tile)
            xs[p] = pa
    if panel_head:
        tile = r.open_counter(tile, panel_head)
        if g.ready:  # another thread may still be copying this panel
            tile.add(f"while (!__atomic_load_n(&{g.ready}[{pv}], __ATOMIC_ACQUIRE)) {{}}")
    for p in prods:
        at = f"{pv} * {p.k * g.tj} + " if panel_head else ""
        if p.dot is not None:
            _call_dot(r, g, tile, p, base, rows, last, pv)
            continue
        if p.block is not None:
            _call_block(r, g, tile, p, offsets, xs.get(p), rows, at, pv)
            continue

        def k_open(scope: Scope, p: Product = p) -> tuple[Scope, str]:
            if p in xs:  # both operands packed: the k loops are one flat loop over the panels
                kk = r.fresh("k")
                return r.open_counter(scope, Loop(kk, p.k)), kk
            return k_loops(r, scope, p.ks)

        def row_open(kscope: Scope, kk: str, p: Product = p) -> tuple[Scope, str, str]:
            xo = p.x if p in xs else offsets.of(p.x)
            iscope, ii = _bind_rows(r, kscope, i, base, rows, last=last,
                                    values=p not in xs and offsets.reads_rows(xo))
            offsets.name(iscope, ii)
            return iscope, ii, f"{xs[p]}[{kk} * {rows} + {ii}]" if p in xs else r.emit(xo)

        def cell(p: Product = p) -> tuple[str, int]:
            _cell(r, g, tile, p, rows)
            return p.cell, g.tj

        fma_block(r, tile, g, rows, g.tj, f"{p.pb} + {at}", k_open, row_open, cell)
    # epilogue: each reduce's value is its cell
    # the output's contiguous axis innermost: the columns (a matmul's rows), or the rows (a
    # convolution's pixels, where the columns are channels a plane apart)
    # the row's columns as one vector loop (gcc unrolls the 16 columns of a bias and relu into
    # scalar code otherwise), unless a read is gated (`gated`)
    simd = not gated(st.src[1])

    store = st.replace(src=(offsets.of(st.src[0], index=True), *st.src[1:]))
    sums = frozenset(p.red for p in prods)

    def epilogue(scope: Scope, count: int) -> None:
        if st.src[-1] in i:
            jscope, jj = bind(r, scope, j, f"{pv} * {g.tj}", count)
            cell, ii = _bind_rows(r, jscope, i, base, rows, size=size,
                                  values=offsets.reads_rows(*store.src[:2], named=sums))
        else:
            iscope, ii = _bind_rows(r, scope, i, base, rows, unroll=False, size=size,
                                    values=offsets.reads_rows(*store.src[:2], named=sums))
            cell, jj = bind(r, iscope, j, f"{pv} * {g.tj}", count, simd=simd)
        for p in prods:
            name = r.fresh()
            cell.add(r.stmt(name, g.ct, f"{p.cell}[{ii} * {g.tj} + {jj}]"))
            cell.names[p.red] = name
        offsets.name(cell, ii)
        r.emit_store(store)
        r.close_loops(scope)

    _by_panel(r, tile, pv, g.nj, g.tj, epilogue)
    r.close_loops(tile)
    offsets.fill()
    if heap:
        outer.open_child = None  # after the panel loop, which reads them
        outer.add(" ".join(f"free({pa});" for pa in heap))


def bind(r: KernelRenderer, parent: Scope, rng: UOp, base: str, count: int,
         size: int | None = None, unroll: bool = False, simd: bool = False,
         last: int | None = None, fills: bool = False) -> tuple[Scope, str]:
    """`count` values of RANGE rng from `base` (the renderer's tile of a loop: with a `last`,
    values past it are `last`), all unrolled when `unroll`, `omp simd` when `simd`; with a
    `size` that `count` does not divide, values past it are skipped (the guard binds the
    range, so nothing reading it is hoisted above the guard). The scope and the counter."""
    pragma = f"#pragma GCC unroll {count}" if unroll else ""
    loop = r.open_loop(parent, rng, pragma, base, count, last, simd)
    loop.fills = fills  # (a panel's copy, a row's stores: each value its own element)
    r.stack.append(loop)
    var = loop.names[rng]
    if size is None or size % count == 0:
        return loop, f"{var}_u"
    del loop.names[rng]
    loop.bound = loop.bound - {rng}
    guard = Scope(Guard(f"{var} < {size}"), parent.bound | {rng})
    guard.names[rng] = var
    r.stack.append(loop.open(guard))
    return guard, f"{var}_u"


def _bind_rows(r: KernelRenderer, parent: Scope, rows: tuple[UOp, ...], base: str, count: int,
               unroll: bool = True, size: int | None = None, last: int | None = None,
               values: bool = True) -> tuple[Scope, str]:
    """`count` flat rows from `base`, unrolled: each row range's value from the flat row number
    (the last range fastest), as `bind` binds one (`size`: rows past it skipped; `last`:
    rows past it are `last`; not `values`: the loop over the rows only, for code that reads no
    row range but through `_RowOffsets`; one range is bound either way, a statement gcc
    drops when nothing reads it)."""
    if len(rows) == 1:
        return bind(r, parent, rows[0], base, count, size, unroll, last=last)
    var = r.fresh("row")
    pragma = f"#pragma GCC unroll {count}" if unroll else ""
    scope = r.open_counter(parent, Loop(f"{var}_u", count, pragma=pragma))
    if size is not None:
        scope = r.open_counter(scope, Guard(f"{base} + {var}_u < {size}"))
    scope.bound = scope.bound | set(rows)
    if not values:
        return scope, f"{var}_u"
    scope.items.append(f"const int64_t {var} = {clamped(f'{base} + {var}_u', last)};")
    for rng, value in row_values(rows, var).items():
        name = r.loop_names.setdefault(rng, f"r{len(r.loop_names)}")
        scope.items.append(f"const int64_t {name} = {value};")
        scope.names[rng] = name
        r.vartypes[name] = "int64_t"
    return scope, f"{var}_u"


def row_values(rows: tuple[UOp, ...], row: str) -> dict[UOp, str]:
    """Each row range's value (C) from the flat row number `row`, the last range fastest; the
    first needs no remainder (a row, clamped or guarded, is below the rows' count)."""
    values, inner = {}, 1
    for rng in reversed(rows):
        value = row if inner == 1 else f"({row} / {inner})"
        values[rng] = value if rng is rows[0] else f"{value} % {loop_count(rng)}"
        inner *= loop_count(rng)
    return values


class _RowOffsets:
    """Addresses per row of a tile, computed once per tile, out of the k loops. An index
    affine in the row ranges is sum_r c_r * r + the rest; the row part is computed once per
    row of the tile, into an array, and the address reads it:
    - a load of x reads through a pointer per row (buffer + row part; when the row part is
      whole elements of the buffer: every c_r and the rest at least 0), `xr[row][rest]`: gcc
      at -O1 kept the row's index arithmetic in the k loop (an add per row and step, 512^3
      ran 1.25x slower than at -O2), as fast so as at -O2;
    - where rows are several ranges (a convolution's images and pixels), each row's range
      values are a division and a remainder of the flat row number, which gcc compiled for
      every row at every step (a 3x3 convolution of 16 channels: 712M compiler instructions at
      -O2, 554M with its offsets here, and at -O1 the tiles ran 1.3x slower, as fast so); the
      output's address takes an offset per row too."""

    def __init__(self, r: KernelRenderer, tile: Scope, rows: tuple[UOp, ...], base: str,
                 count: int, last: int | None):
        self.r, self.tile, self.rows, self.base, self.count, self.last = \
            r, tile, rows, base, count, last
        self.at = len(tile.items)  # where the arrays are filled: before anything reads them
        # (name, c_r, placeholder, the buffer's name for a pointer or "" for an offset, C type)
        self.arrays: list[tuple[str, dict[UOp, int], UOp, str, str]] = []
        self.done: dict[tuple[UOp, bool], UOp] = {}  # (INDEX, of a store) -> its new INDEX

    def of(self, x: UOp, index: bool = False) -> UOp:
        """x with each load's index affine in the rows read through its row's pointer (or
        offset); with `index`, x is a store's INDEX, given an offset per row when the rows are
        several ranges."""
        rows, deps = frozenset(self.rows), self.r.deps
        mapping = {}
        for n in ([x] if index else toposort(x)):
            if n.op is not Ops.INDEX or not rows & deps.get(n.src[1], rows):
                continue
            new = self.done.get((n, index)) or self._split(n, pointer=not index)
            if new is not None:
                mapping[n] = self.done[(n, index)] = new
        out = x.substitute(mapping)
        deps.update(free_ranges(out))
        return out

    def _split(self, node: UOp, pointer: bool) -> UOp | None:
        """The INDEX `node` reading its row part from an array, or None when its index is not
        affine in the rows (a remainder of a row, say) or gains nothing so."""
        buf = node.src[0]
        split_ = affine(self.r, node.src[1], self.rows)
        if split_ is None:
            return None
        coeffs, offset = split_[0], total(self.r, split_[1], node.src[1])
        pointer = (pointer and buf.op is Ops.DEFINE_GLOBAL and min(coeffs.values()) >= 0
                   and offset.vmin >= 0)  # (a pointer inside the buffer, never before it)
        if not pointer and len(self.rows) == 1:
            return None  # gcc reduces row * stride itself
        name = self.r.fresh("xr" if pointer else "ro")
        # a placeholder the row loops name `name[row]`; it reads the row ranges, so nothing
        # using it is hoisted above them (and, named nowhere else, it cannot be printed)
        ph = UOp(Ops.NOOP, buf.dtype if pointer else dtypes.index, self.rows, name)
        base = self.r.lookup(buf) if pointer else ""  # (the buffer a parameter of the kernel)
        self.arrays.append((name, coeffs, ph, base or "", ctype(buf.dtype)))
        out = node.replace(src=(ph, offset, *node.src[2:])) if pointer else \
            node.replace(src=(buf, ph + offset, *node.src[2:]))
        return out

    def reads_rows(self, *xs: UOp, named: frozenset[UOp] = frozenset()) -> bool:
        """Whether the xs still read a row range themselves, not only through the arrays or
        nodes already `named` (a tile's sums, in its epilogue): else their row loop binds
        none."""
        rows = frozenset(self.rows)
        for x in xs:
            seen = toposort(x, lambda n: n in named or (n.op is Ops.NOOP and n.arg is not None))
            if any(n in rows for n in seen):
                return True
        return False

    def name(self, scope: Scope, row: str) -> None:
        """Inside a loop over the tile's rows (`row`: its counter): each array's element."""
        for name, _, ph, _, _ in self.arrays:
            scope.names[ph] = f"{name}[{row}]"

    def fill(self) -> None:
        """The arrays, filled at the head of the tile, before whatever reads them."""
        if not self.arrays:
            return
        row = clamped(f"{self.base} + q_", self.last)
        loop = Scope(Loop("q_", self.count), self.tile.bound)
        loop.items.append(f"const int64_t row_ = {row};")
        values, decls = row_values(self.rows, "row_"), []
        for name, coeffs, _, base, ct in self.arrays:
            terms = [f"{c} * ({values[rng]})" for rng, c in coeffs.items() if c] or ["0"]
            loop.items.append(f"{name}[q_] = {base + ' + ' if base else ''}{' + '.join(terms)};")
            decls.append(f"const {ct} *{name}[{self.count}];" if base else
                         f"int64_t {name}[{self.count}];")
        self.tile.items[self.at:self.at] = [" ".join(decls), loop]


def _streamable(r: KernelRenderer, prods: list[Product], rows: tuple[UOp, ...], j: UOp,
                pack: Pack) -> bool:
    """Whether every product's y can be read in place by the block library's streamed block
    (noted in `p.stream`: a load at buf[fixed + step * sk + column], `_in_place`) and its x by
    a block (packed per tile, or `_x_block`'s row pointers)."""
    for p in prods:
        p.stream = _in_place(r, p.y, p.ks, j)
        if p.stream is None or not (pack.pack_a or _x_block(r, p, rows) is not None):
            for q in prods:
                q.stream = None
            return False
    return True


def _dottable(r: KernelRenderer, prods: list[Product], rows: tuple[UOp, ...], j: UOp) -> bool:
    """Whether every product's x and y can be read in place by the block library's tiled dot
    (noted in `p.dot`): x a plain load at buf[fixed + step + row * sx] of one row range, y at
    buf[fixed + step + column * sj] (step: the flat step of the k ranges)."""
    for p in prods:
        xs = _y_strides(r, p.x, p.ks, rows[0]) if len(rows) == 1 else None
        ys = _y_strides(r, p.y, p.ks, j)
        if xs is None or ys is None or xs[1] != 1 or ys[1] != 1:
            for q in prods:
                q.dot = None
            return False
        p.dot = (p.x.src[0].src[0], xs[0], xs[2], p.y.src[0].src[0], ys[0], ys[2])
    return True


def _call_dot(r: KernelRenderer, g: _Geometry, tile: Scope, p: Product, base: str, rows: int,
              last: int | None, pv: str) -> None:
    """p's tiled dots (blocks.py's `_dot`) of the tile's `rows` rows from `base` (those from
    `last` on read as row `last`) by panel `pv`'s columns, into p's cell."""
    xb, xf, sx, yb, yf, sj = p.dot  # type: ignore[misc]
    xr = r.fresh("xq")
    row = clamped(f"{base} + u_", last)
    tile.add(f"const {g.ct} *{xr}[{rows}]; for (int64_t u_ = 0; u_ < {rows}; u_++) "
             f"{xr}[u_] = {r.lookup(xb)} + {r.emit(xf)} + ({row}) * {sx};")
    _cell(r, g, tile, p, rows)
    first = f"{pv} * {g.tj}"
    tile.add(f"{r.call(dot_name(p.red.dtype, g.lanes, rows))}({p.k}, {xr}, {r.lookup(yb)} + "
             f"{r.emit(yf)} + ({first}) * {sj}, {sj}, {columns_left(g.nj, first, g.tj)}, "
             f"{p.cell}, {g.tj});")


def _in_place(r: KernelRenderer, y: UOp, ks: tuple[UOp, ...], j: UOp
              ) -> tuple[UOp, UOp, int] | None:
    """y's buffer, the index of its element at column 0 and step 0, and its stride along the
    flat step, when y is a plain load at buf[fixed + step * sk + column * 1], else None."""
    found = _y_strides(r, y, ks, j)
    if found is None or found[2] != 1:
        return None
    fixed, sk, _ = found
    return y.src[0].src[0], fixed, sk


def _y_strides(r: KernelRenderer, y: UOp, ks: tuple[UOp, ...], j: UOp
               ) -> tuple[UOp, int, int] | None:
    """(fixed, sk, sj) when y is a plain load at buf[fixed + step * sk + column * sj] (step: the
    flat step number of the k ranges; fixed: the batch's part), all three at least 0."""
    if not plain_load(r, y):
        return None
    idx = y.src[0].src[1]
    split_ = affine(r, idx, (j, *ks))
    if split_ is None:
        return None
    coeffs, terms = split_
    fixed, sk, sj = total(r, terms, idx), _run_stride(coeffs, ks), coeffs[j]
    if sk is None or sk < 0 or sj < 0 or fixed.vmin < 0:
        return None
    return fixed, sk, sj


def _run_stride(coeffs: dict[UOp, int], ks: tuple[UOp, ...]) -> int | None:
    """The stride of the flat step number of the k ranges `ks` (each range's coefficient the
    next one's times its count: one run of steps), else None."""
    sk, inner = coeffs[ks[-1]], 1
    for k in reversed(ks):
        if coeffs[k] != sk * inner:
            return None
        inner *= loop_count(k)
    return sk


def _staged_copy(r: KernelRenderer, p: Product, nj: int, lanes: int) -> str | None:
    """p's staged panels (pack_helpers' `panel_array`: pb[panel][k][jj] = y(k, panel * tj +
    jj), 0 past the last column) filled by the block library's copy, all panels side by side
    (`rg_pack_*`'s group), when y is a plain load, widened from float16 or not: the array's
    name, else None (the renderer's loops fill it, one element a step: for a transposed y a
    gather of one value of each of tj rows, a float16 one widened by HALF_WIDEN each)."""
    dl = p.y.src[0].src[0]
    if dl.op is not Ops.DEFINE_LOCAL:
        return None
    value, (panel, *own, jj) = dl.src[0], dl.src[1:]
    tj = loop_count(jj)
    # panel_array's gate of the last panel's lanes past the last column, which the copy writes
    # 0 itself; any other gate or select is y's own (a mask, a pad along k: rev68c) and
    # copying the load under it read past it
    gate = (panel * tj + jj).lt(nj) if nj % tj else None
    if value.op is Ops.WHERE:
        if gate is None or value.src[0] is not gate or value.src[2] is not value.const_like(0):
            return None
        value = value.src[1]
    widened = value.op is Ops.CAST
    y = value.src[0] if widened else value
    if y.op is Ops.LOAD and len(y.src) == 3 and y.src[1] is gate:
        y = y.replace(src=y.src[:1])
    if not plain_load(r, y):
        return None
    if widened and not (value.dtype is dtypes.float32 and y.dtype is dtypes.float16):
        return None
    index = y.src[0]
    found = affine(r, index.src[1], (panel, jj, *own))
    if found is None:
        return None
    coeffs, fixed = found[0], total(r, found[1], index.src[1])
    sj, sk = coeffs[jj], _run_stride(coeffs, tuple(own))
    host, inner = r.home(dl), math.prod(loop_count(o) for o in own)
    if sk is None or coeffs[panel] != tj * sj or sk < 0 or sj < 0 or fixed.vmin < 0 or \
            not r.deps[fixed] <= host.bound:
        return None
    name, ct, npanels = r.fresh("loc"), ctype(dl.dtype), loop_count(panel)
    host.add(array(ct, name, npanels * inner * tj, dl.arg == "heap"))
    if dl.arg == "heap":  # (freed after everything in its host, as the renderer's arrays)
        r.frees.append((host, name))
    fn, cast = ((half_pack_name(lanes), "(const uint16_t *)") if widened
                else (pack_name(dl.dtype, lanes), ""))
    host.add(f"{r.call(fn)}({inner}, {nj}, {cast}({r.lookup(y.src[0].src[0])} + "
             f"{r.emit(fixed)}), {sk}, {sj}, {name}, {tj}, {npanels});")
    host.names[dl] = name
    return name


def _widen_row(r: KernelRenderer, scope: Scope, p: Product, dst: str, lanes: int) -> bool:
    """x's row, a float16 load widened and read forward along the k ranges as one run, widened
    into `dst` by the block library's copy (its one row of p.k columns: F16C's 8 lanes at a
    time where the target has them), when it is that; else False (the printed loop widens it
    by HALF_WIDEN, some 18 vector operations per 8 values, again for every panel when the
    panels run outside the row tiles)."""
    x = p.x
    if not (x.op is Ops.CAST and x.dtype is dtypes.float32 and x.src[0].dtype is dtypes.float16
            and plain_load(r, x.src[0])):
        return False
    idx = x.src[0].src[0].src[1]
    found = affine(r, idx, p.ks)
    if found is None:
        return False
    start = total(r, found[1], idx)
    if _run_stride(found[0], p.ks) != 1 or start.vmin < 0:
        return False
    buf = r.lookup(x.src[0].src[0].src[0])
    scope.add(f"{r.call(half_pack_name(lanes))}(1, {p.k}, (const uint16_t *)({buf} + "
              f"{r.emit(start)}), 0, 1, {dst}, {p.k}, 1);")
    return True


def copy_panel(r: KernelRenderer, scope: Scope, y: UOp, ks: tuple[UOp, ...], j: UOp, n: int,
               cols: str, first: str, dst: str, tj: int, lanes: int, group: int = 1) -> bool:
    """One panel of y (`cols` columns from column `first`) copied into `dst` by the block
    library's copy (blocks.py), when y is a load at buf[fixed + step * sk + column * sj] (step:
    the flat step number of the k ranges; fixed: the batch's part); False otherwise. With a
    `group`, that many panels side by side (`cols` the group's columns)."""
    fn, src_t = pack_name(y.dtype, lanes), ""
    if y.op is Ops.CAST and y.dtype is dtypes.float32 and y.src[0].dtype is dtypes.float16:
        # a float16 y widened (a float16 product's operand): its halves' bits widened by the
        # copy (blocks.py's `_half_pack`)
        y, fn, src_t = y.src[0], half_pack_name(lanes), "(const uint16_t *)"
    found = _y_strides(r, y, ks, j)
    if found is None:
        return False
    fixed, sk, sj = found
    src = f"{src_t}({r.lookup(y.src[0].src[0])} + {r.emit(fixed)} + {sj} * ({first}))"
    scope.add(f"{r.call(fn)}({n}, {cols}, {src}, {sk}, {sj}, {dst}, {tj}, {group});")
    return True


def k_stride(term: UOp, k: UOp) -> str | None:
    """The stride of `term` along the range k when it is k or k times a constant, else None."""
    if term is k:
        return "1"
    if term.op is Ops.MUL and term.src[0] is k and term.src[1].op is Ops.CONST:
        return str(term.src[1].arg)
    return None


def plain_load(r: KernelRenderer, x: UOp) -> bool:
    """Whether the block library may read x (`block_library()`): a load of a kernel buffer,
    ungated, at an index (x's ranges noted in `r.deps`: an operand split off a product may be
    a new node)."""
    if not block_library():
        return False
    r.deps.update(free_ranges(x))
    return (x.op is Ops.LOAD and len(x.src) == 1 and x.src[0].op is Ops.INDEX
            and len(x.src[0].src) == 2 and x.src[0].src[0].op is Ops.DEFINE_GLOBAL)


# an offset table (int64 per step of k) lives on the stack up to this many steps; a longer sum
# keeps its block printed in the kernel
TABLE_MAX = 4096


def _plan_block(r: KernelRenderer, parent: Scope, p: Product, rows: tuple[UOp, ...],
                packed: bool, count: int) -> None:
    """Whether p's register block is the block library's (`p.block`): when x is packed per
    tile (pa[k][row]), or a load whose index is, per row, a pointer into its buffer plus an
    offset that depends on k only: k times a stride, or an offset table filled here, in
    `parent`, once for all tiles. `RULEGRAD_BLOCK_LIBRARY=0` prints every block here."""
    if not block_library() or p.dot is not None:  # (a tiled dot reads x by its own pointers)
        return
    if packed:  # rows of one range packed row after row (_tile), several a row apart per step
        p.block = ("0", "1", str(p.k)) if len(rows) == 1 else ("0", str(count), "1")
        return
    found = _x_block(r, p, rows)
    if found is None:
        return
    rest, stride = found
    if stride is not None:
        p.block = ("0", stride, "")
    else:
        table = r.fresh("xo")
        parent.add(f"int64_t {table}[{p.k}];")
        kscope, kk = k_loops(r, parent, p.ks)
        kscope.add(f"{table}[{kk}] = {r.emit(rest)};")
        r.close_loops(parent)
        p.block = (table, "0", "")


def _x_block(r: KernelRenderer, p: Product, rows: tuple[UOp, ...]
             ) -> tuple[UOp, str | None] | None:
    """When a block may read p's x in place (a plain load whose index is, per row, a pointer
    into its buffer plus an offset of k alone): that offset, and its stride when it is k times
    one (else an offset table of at most TABLE_MAX steps reads it); else None."""
    x = p.x
    if not plain_load(r, x):
        return None
    split_ = affine(r, x.src[0].src[1], rows)
    if split_ is None:
        return None
    coeffs, rest = split_[0], total(r, split_[1], x.src[0].src[1])
    if min(coeffs.values()) < 0 or rest.vmin < 0 or not r.deps[rest] <= set(p.ks):
        return None
    stride = k_stride(rest, p.ks[0]) if len(p.ks) == 1 else None
    if stride is None and p.k > TABLE_MAX:
        return None
    return rest, stride


def _call_block(r: KernelRenderer, g: _Geometry, tile: Scope, p: Product,
                offsets: _RowOffsets, packed: str | None, rows: int, at: str, pv: str) -> None:
    """p's register block as a call of the block library's, into p's cell (its streamed block
    over panel `pv`'s columns when y is read in place)."""
    table, stride, row_step = p.block  # type: ignore[misc]
    if packed is not None:  # x packed per tile: row u at pa + u * row_step
        xr = r.fresh("xq")
        tile.add(f"const {g.ct} *{xr}[{rows}]; "
                 f"for (int u_ = 0; u_ < {rows}; u_++) {xr}[u_] = {packed} + u_ * {row_step};")
    else:  # x read in place, through the tile's pointer per row
        ph = offsets.of(p.x).src[0].src[0]
        xr = next((n for n, _, placeholder, _, _ in offsets.arrays if placeholder is ph), None)
        if xr is None:  # (_plan_block asks what _RowOffsets needs for a pointer per row)
            raise RenderError("a product planned for the block library whose x has no row "
                              "pointers")
    _cell(r, g, tile, p, rows)
    if p.stream is not None:
        buf, fixed, sk = p.stream
        src = f"{r.lookup(buf)} + {r.emit(fixed)}"
        first = f"{pv} * {g.tj}"

        def streamed() -> str:  # (recorded as called only where printed: its library is built)
            fn = r.call(stream_name(p.red.dtype, g.lanes, rows))
            return (f"{fn}({p.k}, {xr}, {table}, {stride}, {src} + ({first}), {sk}, "
                    f"{columns_left(g.nj, first, g.tj)}, {p.cell}, {g.tj});")
        if not g.inplace:
            tile.add(streamed())
            return
        # a whole panel's columns read in place by the register block, y's rows sk apart; the
        # last part-full one (a whole panel's vectors would read past y's end) by the block
        # whose second vector ends at the row's last column where it has a vector's columns
        # (blocks.py's `last`), else streamed
        whole, rest = g.nj // g.tj, g.nj % g.tj
        if rest >= g.lanes:
            fn = r.call(last_name(p.red.dtype, g.lanes, rows))
            part = (f"{fn}({p.k}, {xr}, {table}, {stride}, {src} + ({first}), {sk}, {rest}, "
                    f"{p.cell}, {g.tj});")
        else:
            part = streamed() if rest else ""
        if not whole:
            tile.add(part)
            return
        block = (f"{r.call(block_name(p.red.dtype, g.lanes, rows))}({p.k}, {xr}, {table}, "
                 f"{stride}, {src} + ({first}), {sk}, {p.cell}, {g.tj});")
        tile.add(f"if ({pv} < {whole}) {block}\nelse {part}" if rest else block)
        return
    fn = r.call(block_name(p.red.dtype, g.lanes, rows))
    tile.add(f"{fn}({p.k}, {xr}, {table}, {stride}, {p.pb} + {at}0, {g.tj}, {p.cell}, "
             f"{g.tj});")


def _cell(r: KernelRenderer, g: _Geometry, tile: Scope, p: Product, rows: int) -> None:
    """p's results for the tile (`p.cell`): `rows` rows of TJ, declared in `tile`."""
    p.cell = r.fresh("acc")
    r.vartypes[p.cell] = f"{g.ct} *"
    tile.add(array(g.ct, p.cell, rows * g.tj))


def affine(r: KernelRenderer, idx: UOp, rows: tuple[UOp, ...]
           ) -> tuple[dict[UOp, int], list[UOp]] | None:
    """idx as sum_r c_r * r over the row ranges plus the rest, terms that read no row (their
    sum: `total`), or None when it is not affine in the rows (a remainder of a row, say)."""
    coeffs: dict[UOp, int] = {rng: 0 for rng in rows}

    def whole(n: UOp) -> bool:  # a row, or a term that reads none: not walked into
        return n in coeffs or not r.deps[n] & coeffs.keys()

    rest: list[UOp] = []
    # (right to left: the rest's terms summed in the order the printed C has always had)
    for n, scale in reversed(linear_terms(idx, whole)):
        if n in coeffs:
            coeffs[n] += scale
        elif whole(n):
            rest.append(n if scale == 1 else n * scale)
        else:
            return None
    for t in rest:  # (a term scaled here is a new node)
        r.deps.update(free_ranges(t))
    return coeffs, rest


def total(r: KernelRenderer, terms: list[UOp], like: UOp) -> UOp:
    """The sum of `terms` (0, of `like`'s dtype, for none), its ranges noted in `r.deps` (the
    sum is a new node)."""
    total = terms[0] if terms else like.const_like(0)
    for t in terms[1:]:
        total = total + t
    r.deps.update(free_ranges(total))
    return total


def clamped(value: str, last: int | None) -> str:
    return value if last is None else f"({value} < {last} ? {value} : {last})"


def k_loops(r: KernelRenderer, parent: Scope, ks: tuple[UOp, ...],
            keys: tuple[str, str] | None = None) -> tuple[Scope, str]:
    """A reduce's loops over `ks` (in its order), and the C expression of the flat step number;
    with `keys`, the one loop's steps from keys[0] to keys[1] (a masked head's window)."""
    scope = parent
    for k in ks:
        scope = r.open_loop(scope, k, "", *((keys[0], f"{keys[1]} - {keys[0]}") if keys else ()))
        r.stack.append(scope)
    return scope, flat(r, ks)


def flat(r: KernelRenderer, ks: tuple[UOp, ...]) -> str:
    """The flat step number of the loops over `ks`, as they are named."""
    out = ""
    for k in ks:
        out = f"({out}) * {loop_count(k)} + {r.loop_names[k]}" if out else r.loop_names[k]
    return f"({out})"


def fma_block(r: KernelRenderer, scope: Scope, v, rows: int, tj: int, w: str, k_open,
              row_open, out) -> None:
    """A register block: acc[rows][PANEL_VECTORS] in vector registers, over the steps k in
    order += x(row, k), broadcast, times the panel's row of TJ columns at `w` + k * TJ (a
    fused multiply-add), then stored at out()'s (address, row stride). `v` names the vector
    type, its fma and lanes; `k_open(scope)` opens the k loops (their scope, the flat step);
    `row_open(scope, step)` the rows (their scope, the row counter, x's C expression)."""
    nv, vt = PANEL_VECTORS, v.vt
    a = r.fresh("acc")
    scope.add(f"{vt} {a}[{rows}][{nv}];")
    scope.add(f"for (int u_ = 0; u_ < {rows}; u_++) for (int v_ = 0; v_ < {nv}; v_++) "
              f"{a}[u_][v_] = ({vt}){{0}};")
    kscope, kk = k_open(scope)
    kscope.add(f"{vt} w_[{nv}];")
    kscope.add(f"for (int v_ = 0; v_ < {nv}; v_++) "
               f"w_[v_] = *(const {vt} *)({w}{kk} * {tj} + v_ * {v.lanes});")
    iscope, ii, x = row_open(kscope, kk)
    iscope.add(f"const {vt} x_ = {x} - ({vt}){{0}};  /* broadcast */")
    iscope.add(f"for (int v_ = 0; v_ < {nv}; v_++) "
               f"{a}[{ii}][v_] = {v.fma}(x_, w_[v_], {a}[{ii}][v_]);")
    r.close_loops(scope)
    cell, ldo = out()
    scope.add(f"for (int u_ = 0; u_ < {rows}; u_++) for (int v_ = 0; v_ < {nv}; v_++) "
              f"*({vt} *)({cell} + u_ * {ldo} + v_ * {v.lanes}) = {a}[u_][v_];")


