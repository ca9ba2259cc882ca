"""The flash kernel: an attention head's scores, softmax and output in one loop nest over tiles of
rows, printed as its flash action says.

In: a STORE whose arg is a `Flash` (rules/opt.rules' `flash_store`, decided in
rules/flash_helpers.py: the row range, the output's columns, which kernel-local arrays are sums
of products, the tile, which loop is threaded). Out: its loop nest, in the renderer's scopes.
Nothing is decided here. For out[.., i, c] = sum_j x(.., i, j) * y(.., j, c), whose x reads
kernel-local arrays, one of them s(.., i, l) = sum_d a(.., i, d) * b(.., l, d), per iteration
of the batch ranges (a head):

    staged b:  pb[panel][d][ll] = b(l = panel*TJ + ll, d)     (0 past the last l)
    staged y:  pv[panel][j][cc] = y(j, c = panel*TJ + cc)     (0 past the last c)
      (kernel-local arrays the flash action reads them from, which the renderer fills)
    for each tile of TI rows (and one smaller tile for the rows left over):
      s[TI][l]:  per panel, acc[TI][TJ] (vector registers) += a(row, d) * pb[panel][d][..]
      per row:   the row's other values as the plain renderer prints them (its max, exp into a
                 local array, sum), reading s; pa[row][j] = x(row, j) (a masked head: over the
                 tile's window of keys, `Flash.narrowed`)
      per panel of c: acc[TI][TJ] += pa[row][j] * pv[panel][j][..]; then the store per (row, c)

So every b and y element is loaded once per tile of rows, not once per row (the plain loops'
dot product per score), and both sums run as register tiles of fused multiply-adds. Each sum
keeps its order over its k; each step is a fused multiply-add where the CPU has one (the FMA
contract of runtime/semantics.py's docstring, as the packed loops of gemm.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rulegrad.rules.flash_helpers import Flash, local_product
from rulegrad.rules.pack_helpers import split
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

from .blocks import name as block_name
from .ctext import (
    Loop,
    RenderError,
    Scope,
    Threads,
    array,
    block_library,
    loop_count,
)
from .gemm import Product, Vec, batch_loops, bind, fma_block, k_loops

if TYPE_CHECKING:
    from .render import KernelRenderer



class _Product(Product):
    """One sum of products (gemm.py's `Product`: its REDUCE, the row operand `x`, the packed
    operand `y`, its packed panels `pb`), its columns' range, its panel width `tj` and the C
    names of its dtype `v` (a local product may be of another dtype than the output: float32
    scores of a float64 softmax)."""

    def __init__(self, red: UOp, x: UOp, y: UOp, cols: UOp, tj: int) -> None:
        super().__init__(red, x, y)
        self.cols, self.tj, self.v = cols, tj, Vec(red.dtype, tj)
        self.n = loop_count(cols)
        self.npanels = -(-self.n // tj)
        self.width = self.npanels * tj  # a row of its results, padded to whole panels


def render_flash(r: KernelRenderer, st: UOp) -> None:
    """Emit the flash loop nest for STORE `st`, whose arg is a `Flash`."""
    fl: Flash = st.arg
    ranges = st.src[2:]
    i, c = ranges[-2], ranges[-1]
    if (i.arg[0], c.arg[0]) != (fl.rows, fl.cols):
        raise RenderError("a flash STORE whose rows and columns are not its last two ranges")
    out: _Product | None = None
    reads = st.src[1]  # where the local products are read
    if fl.panel:
        outs = [n for n in toposort(st.src[1]) if n.op is Ops.REDUCE and c in r.deps[n]]
        xy = split(outs[0], (i,), c, r.deps) if len(outs) == 1 else None
        if xy is None:
            raise RenderError("a flash STORE whose value is not one sum of products over its rows")
        out, reads = _Product(outs[0], *xy, c, fl.panel), xy[0]
    local: list[tuple[UOp, _Product]] = []
    panels = dict(zip(fl.products, fl.product_panels))
    for dl in toposort(reads):
        if dl.op is Ops.DEFINE_LOCAL and dl.src[1].arg[0] in panels:
            ab = local_product(dl, i, r.deps)
            if ab is None:
                raise RenderError("a flash local array that is not a sum of products")
            local.append((dl, _Product(dl.src[0], *ab, dl.src[1], panels[dl.src[1].arg[0]])))
    scope = batch_loops(r, ranges[:-2], fl.parallel == "batch", fl.team)
    table = ""
    if fl.windows and out is not None:
        table = r.fresh("kw")
        scope.add(f"static const int32_t {table}[{len(fl.windows)}] = "
                  f"{{{', '.join(map(str, fl.windows))}}};")
    for p in [p for _, p in local] + ([out] if out is not None else []):
        p.pb = r.emit(p.y.src[0].src[0])  # (its panels, staged by the flash action)
    win = _window_flag(r, scope, out) if table else ""
    # tiles of TI rows; when TI does not divide the rows, the last tile computes its rows past
    # the end as the last row and stores none of them: one copy of the tile's loops, not a
    # second for the rows left over (attention 8x256x64: 640M -> 425M compiler instructions)
    n = loop_count(i)
    ti = min(fl.tile, n)
    tv, tiles = r.fresh("tl"), -(-n // ti)
    if fl.parallel == "tiles":
        threaded, head = Threads(dynamic=True, team=fl.team).loop(tv, tiles)
        tile = r.open_counter(scope, head, threaded)
    else:
        tile = r.open_counter(scope, Loop(tv, tiles))
    keys = _Keys(r, tile, table, tv, win, out, fl.narrowed) if table else None
    _tile(r, st, tile, i, local, out, f"{tv} * {ti}", ti, n - 1 if n % ti else None, keys)
    r.close_loops()


class _Keys:
    """The keys a tile of a masked head visits (its `Flash.windows`, rules/flash_mask.py): the
    C names of the scores' first and end key (`sl`, `sh`), and of the output sum's (`kl`, `kh`:
    the same, or every key when the head's V holds an inf or a NaN, `_window_flag`)."""

    def __init__(self, r: KernelRenderer, tile: Scope, table: str, tv: str, finite: str,
                 out: _Product, narrowed: tuple[int, ...]) -> None:
        self.sl, self.sh, self.kl, self.kh = (r.fresh(x) for x in ("sl", "sh", "kl", "kh"))
        self.narrowed = narrowed  # (the ranges of the row's passes over kl, kh: Flash.narrowed)
        tile.add(f"const int64_t {self.sl} = {table}[2 * {tv}], "
                 f"{self.sh} = {table}[2 * {tv} + 1];")
        tile.add(f"const int64_t {self.kl} = {finite} ? {self.sl} : 0, "
                 f"{self.kh} = {finite} ? {self.sh} : {out.k};")

    def panels(self, tj: int) -> tuple[str, str]:
        """The panels of tj keys holding the scores' keys."""
        return f"{self.sl} / {tj}", f"({self.sh} + {tj - 1}) / {tj}"


def _window_flag(r: KernelRenderer, scope: Scope, out: _Product) -> str:
    """A flag: the head's packed V is finite (x - x is 0 for every finite x, NaN for an inf or a
    NaN), so a key outside the window adds fma(+0, v, acc) = acc, nothing: it is skipped."""
    fin, q = r.fresh("fin"), r.fresh("q")
    size = out.k * out.width
    scope.add(f"int {fin} = 1; for (int64_t {q} = 0; {q} < {size}; {q}++) "
              f"{fin} &= {out.pb}[{q}] - {out.pb}[{q}] == 0;")
    return fin


def _tile(r: KernelRenderer, st: UOp, tile: Scope, i: UOp,
          local: list[tuple[UOp, _Product]], out: _Product | None, base: str, rows: int,
          last: int | None, keys: _Keys | None = None) -> None:
    """`rows` rows from `base`: the local products as register tiles, then the output as
    register tiles and its store (with a `last`, rows past it computed as it, and not stored).
    Each product's row operand x is computed per row into pa[row][k] (`_row_operand`) before
    its register tile, a plain load too (a copy of k values a row): x, and the values it reads
    (an earlier product's row, a max, an exp array, a sum), are then computed once per row, not
    once per step of the tile's k loop and panel (13 ms -> ~0.1 ms for the demo's attention)."""
    rowname: dict[UOp, tuple[str, int]] = {}
    for dl, p in local:
        s = r.fresh("sc")
        tile.add(array(p.v.ct, s, rows * p.width))
        x_of, xrows = _row_operand(r, tile, i, rowname, p, base, rows, last)
        _register_tiles(r, tile, i, p, base, rows, last, x_of,
                        lambda pv, s=s, p=p: ("", f"{s} + {pv} * {p.tj}", p.width),
                        xrows=xrows, panels=keys.panels(p.tj) if keys else None)
        rowname[dl] = (s, p.width)
    if out is None:  # each row's values and its store, as plain loops over its columns
        n = loop_count(i)
        row, ii = bind(r, tile, i, base, rows, n, fills=last is not None)
        for dl, (s, width) in rowname.items():
            row.names[dl] = f"({s} + {ii} * {width})"
        col = r.open_loop(row, st.src[-1])
        r.stack.append(col)
        r.emit_store(st)
        r.close_loops(tile)
        return
    v, tj = out.v, out.tj
    kwin = (keys.kl, keys.kh) if keys else None
    x_out, xrows = _row_operand(r, tile, i, rowname, out, base, rows, last, kwin,
                                keys.narrowed if keys else ())
    # the output: a register tile per panel of columns, then the store of each (row, column)
    cells: list[str] = []

    def epilogue(pv: str) -> tuple[str, str, int]:
        cell = r.fresh("cell")
        cells.append(cell)
        return array(v.ct, cell, rows * tj), cell, tj

    def store(panel: Scope, pv: str) -> None:
        # (rows past the end: none)
        erow, eu = bind(r, panel, i, base, rows, loop_count(i), fills=True)
        col, cu = bind(r, erow, out.cols, f"{pv} * {tj}", tj, out.n, fills=True)
        name = r.fresh()
        col.add(r.stmt(name, v.ct, f"{cells[-1]}[{eu} * {tj} + {cu}]"))
        col.names[out.red] = name
        r.emit_store(st)

    _register_tiles(r, tile, i, out, base, rows, last, x_out, epilogue, store, xrows,
                    keys=kwin)


def _row_operand(r: KernelRenderer, tile: Scope, i: UOp, rowname: dict[UOp, tuple[str, int]],
                 p: _Product, base: str, rows: int, last: int | None,
                 keys: tuple[str, str] | None = None, narrowed: tuple[int, ...] = ()):
    """pa[row][k] = x(row, k) for the tile's rows, in a row loop of its own outside every k
    loop and panel: the row's values x reads (the earlier products' rows, named here, and the
    max, exp and sum the plain renderer prints) are computed once per row; the loops over the
    `narrowed` ranges (`Flash.narrowed`: the row's max, exps, sum and pa itself) over the keys
    [keys[0], keys[1]) only, the only ones of pa the register tile reads. Returns how the
    register tile reads pa: an expression per step, and the rows' pointers for the block
    library (blocks.py), or None when it is not used."""
    pa = r.fresh("pa")
    # the rows past the end (a last tile that TI does not divide) are skipped, their pa 0 (set
    # in that tile only): the register tile computes them (and stores none), but no per-row
    # value is computed for them
    tile.add(array(p.v.ct, pa, p.k * rows))
    r.windows = dict.fromkeys(narrowed, keys) if keys else {}
    n = loop_count(i)
    if last is not None:
        tile.add(f"if ({base} + {rows} > {n}) for (int64_t u_ = {n} - ({base}); u_ < {rows}; "
                 f"u_++) for (int64_t q_ = 0; q_ < {p.k}; q_++) {pa}[u_ * {p.k} + q_] = 0;")
    row, ii = bind(r, tile, i, base, rows, n, fills=last is not None)
    for dl, (s, width) in rowname.items():
        row.names[dl] = f"({s} + {ii} * {width})"
    kscope, kk = k_loops(r, row, p.ks)
    # written along k (a row's values are computed along k: the loop vectorizes)
    kscope.add(f"{pa}[{ii} * {p.k} + {kk}] = {r.emit(p.x)};")
    kscope.fills = True
    r.close_loops(tile)
    r.windows = {}
    xrows = None
    if block_library():  # pa's rows, a row of k apart (from the first key of a window)
        xq = r.fresh("xq")
        first = f" + {keys[0]}" if keys else ""
        tile.add(f"const {p.v.ct} *{xq}[{rows}]; "
                 f"for (int u_ = 0; u_ < {rows}; u_++) {xq}[u_] = {pa} + u_ * {p.k}{first};")
        xrows = (xq, "1")

    def x_of(kk: str) -> str:  # (kk: the flat step, k_loops')
        return f"{pa}[{r.loop_names[i]}_u * {p.k} + {kk}]"
    return x_of, xrows


def _register_tiles(r: KernelRenderer, tile: Scope, i: UOp, p: _Product, base: str,
                    rows: int, last: int | None, x_of, dest, after=None,
                    xrows: tuple[str, str] | None = None, panels: tuple[str, str] | None = None,
                    keys: tuple[str, str] | None = None) -> None:
    """Per panel of p's columns: the rows' sums over k in order (x broadcast, fused-multiply-
    added with the panel's row of pb) into `dest(panel)`'s (declaration, address, row
    stride), then `after(panel scope, panel)`. With `xrows` (x's row pointers and stride) the
    block library's block computes them (blocks.py), else a block printed here: acc[rows][TJ]
    in vector registers. `panels`: the C bounds of the panels computed (else all); `keys`: of
    the one k range's steps summed (else all: a masked head's windows, _Keys)."""
    v, tj = p.v, p.tj
    pv = r.fresh("pn")
    first, end = panels or ("0", str(p.npanels))
    panel = r.open_counter(tile, Loop(pv, end, first))
    decl, out, ldo = dest(pv)
    if decl:
        panel.add(decl)
    if xrows is not None:
        xr, stride = xrows
        steps, w = str(p.k), f"{p.pb} + {pv} * {p.k * tj}"
        if keys:
            steps, w = f"{keys[1]} - {keys[0]}", f"{w} + {keys[0]} * {tj}"
        panel.add(f"{r.call(block_name(p.red.dtype, v.lanes, rows))}({steps}, {xr}, 0, {stride}, "
                  f"{w}, {tj}, {out}, {ldo});")
        if "BLOCKS from the block library" not in r.choices:
            r.choices.append("BLOCKS from the block library")
    else:
        r.printed_blocks = True

        def row_open(kscope: Scope, kk: str) -> tuple[Scope, str, str]:
            rs = r.open_loop(kscope, i, f"#pragma GCC unroll {rows}", base, rows, last)
            r.stack.append(rs)
            return rs, f"{rs.names[i]}_u", x_of(kk)

        fma_block(r, panel, v, rows, tj, f"{p.pb} + {pv} * {p.k * tj} + ",
                  lambda scope: k_loops(r, scope, p.ks, keys), row_open, lambda: (out, ldo))
    if after is not None:
        after(panel, pv)
    r.close_loops(tile)
