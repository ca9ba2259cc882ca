"""Packed, register-blocked loops for kernels that are sums of products (matmul, convolution).

A STORE qualifies when every REDUCE in its value is a float32/float64 sum of products (in loop
form, `REDUCE(ADD(acc, x * y), *ranges)`, see KERNEL_AST.md) where, for two of the STORE's
ranges i and j (j the last, contiguous one), x does not read j and y does not read i. Then
out[.., i, j] = f(sum_k x(i, k) * y(k, j), ..) is a matrix product whatever x and y are: loads
of A and B, a transposed or strided view, a fused softmax, a shifted window of an image. The
loop nest, per iteration of the other ("batch") ranges:

    for each panel of TJ columns:
      pack y:  pb[k][jj] = y(k, panel*TJ + jj)          (0 past the last column)
      for each tile of TI rows (and one smaller tile for the rows left over):
        acc[TI][TJ] (vector registers) += x(i, k) * pb[k][..]     for k in order
        epilogue: f(acc, ..) stored for each (i, j) of the tile

y is computed once per element and read contiguously, and TI x TJ accumulators stay in vector
registers (GNU C vector types: up to 6 x 16 float32 = 12 AVX registers). x is read in the loop,
which is best when it is a load; when x computes (a fused softmax's exp, the bias and relu the
scheduler leaves to the next layer's matmul) it is computed once per element instead: every
panel is packed first, then each row tile packs pa[k][ii] = x(i, k) and runs over all panels.

Each output's sum still runs over k in order; the one difference from the plain loops is that
each step is a fused multiply-add (one rounding instead of two) where the CPU has FMA, as BLAS
does (numpy's matmul included).

Threads: when the batch loops have enough iterations (a convolution's images, attention's
heads) the outermost one is split across cores; otherwise the panel loop is (or, with packed x,
the packing and the row tiles are). Packed panels live on the stack up to STACK_PANEL_BYTES
(each thread's own inside a parallel loop), on the heap beyond (a long sum, K > 2048).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.uop import UOp, toposort

from .render import PARALLEL_MIN_WORK, Scope, _range_size, ctype

if TYPE_CHECKING:
    from .render import _KernelRenderer

VECTOR_BYTES = 32      # one AVX register; narrower machines split each vector op in two
# TI: at most 6 rows x 2 vectors = 12 accumulators (of 16 vector registers on x86); 4 or 5
# rows run as fast, so a row count one of them divides needs no second tile for the rest
TILE_ROWS = (6, 4, 5)
PANEL_VECTORS = 2      # TJ = 2 vectors of columns
MIN_WORK = 1 << 15     # multiply-adds below which the plain loops are as good
STACK_PANEL_BYTES = 1 << 17  # a thread's packed panels (all products), at most
BATCH_PARALLEL_MIN = 4       # batch iterations that split the batch loop across cores


class _Product:
    """One REDUCE as sum_k x * y; `pb` (on the heap or not) and `cell` name its packed panel
    and its results."""

    def __init__(self, red: UOp, x: UOp, y: UOp) -> None:
        self.red, self.x, self.y = red, x, y
        self.ks = red.src[1:]
        self.k = math.prod(_range_size(r) for r in self.ks)
        self.pb = self.cell = ""
        self.heap = False


def _computed(x: UOp) -> bool:
    """True when x does float arithmetic (index math, masks and casts do not count)."""
    return any(n.dtype.is_float and n.op in GroupOp.ALU for n in toposort(x))


def _split(red: UOp, i: UOp, j: UOp, deps: dict[UOp, frozenset[UOp]]) -> _Product | None:
    # the loop form of a sum (rules/lower.rules): REDUCE(ADD(acc, x * y), *ranges)
    update = red.src[0]
    if update.op is not Ops.ADD or update.src[0].op is not Ops.DEFINE_REG:
        return None
    body = update.src[1]
    if body.op is not Ops.MUL:
        return None
    for x, y in (body.src, body.src[::-1]):
        if j not in deps[x] and i not in deps[y] and i in deps[x] and j in deps[y]:
            return _Product(red, x, y)
    return None


def plan(r: _KernelRenderer, st: UOp) -> tuple[UOp, UOp, list[_Product]] | None:
    """(i, j, products) when the STORE is a sum of products this module can pack, else None."""
    ranges = st.src[2:]
    if len(ranges) < 2:
        return None
    j = ranges[-1]
    reds = [n for n in toposort(st.src[1]) if n.op is Ops.REDUCE]
    if not reds:
        return None
    dt = reds[0].dtype
    if dt not in (dtypes.float32, dtypes.float64):
        return None
    for red in reds:
        if red.arg is not Ops.ADD or red.dtype is not dt:
            return None
        if any(n.op is Ops.REDUCE for n in toposort(red.src[0])[:-1]):
            return None
    lanes = VECTOR_BYTES // dt.itemsize
    for i in reversed(ranges[:-1]):
        prods = [_split(red, i, j, r.deps) for red in reds]
        if any(p is None for p in prods):
            continue
        k_total = sum(p.k for p in prods)  # type: ignore[union-attr]
        macs = math.prod(_range_size(x) for x in ranges) * k_total
        if _range_size(j) < lanes or _range_size(i) < 2 or macs < MIN_WORK:
            return None
        return i, j, prods  # type: ignore[return-value]
    return None


def render_packed(r: _KernelRenderer, st: UOp, i: UOp, j: UOp, prods: list[_Product]) -> None:
    """Emit the packed loop nest for STORE `st` (see the module docstring)."""
    dt = prods[0].red.dtype
    g = _Geometry(dt, _range_size(i), _range_size(j))
    batch = [x for x in st.src[2:] if x is not i and x is not j]
    macs = math.prod(_range_size(b) for b in batch) * g.ni * g.nj * sum(p.k for p in prods)
    threads = r.parallel and macs >= PARALLEL_MIN_WORK
    # split the batch loop across cores when it is long enough, else the panels or row tiles
    batch_parallel = threads and bool(batch) and _range_size(batch[0]) >= BATCH_PARALLEL_MIN
    inner_pragma = "#pragma omp parallel for\n" if threads and not batch_parallel else ""
    # an x that is more than a load (a fused softmax's exp, a bias and relu the scheduler left
    # to this kernel) is computed once per element into pa, rows outside panels; a plain load
    # is read in the inner loop, panels outside rows
    pack_x = g.npanels > 1 and any(_computed(p.x) for p in prods)

    scope = r.root
    for n, b in enumerate(batch):
        scope = r.open_loop(scope, b, "#pragma omp parallel for" if batch_parallel and n == 0
                            else "")
        r.stack.append(scope)
    pv = r.fresh("pn")
    panel_head = f"for (int64_t {pv} = 0; {pv} < {g.npanels}; {pv}++)"
    if pack_x:  # every panel packed first, then row tiles over all panels
        _scratch(r, scope, prods, g.ct, g.npanels, g.tj)
        _pack_y(r, _open(scope, inner_pragma + panel_head, r), j, prods, pv, g)
        _close(r, scope)
        _row_tiles(r, st, scope, i, j, prods, pv, panel_head, inner_pragma, g)
        _free(scope, prods)
    else:  # each panel packed, then its row tiles
        panel = _open(scope, inner_pragma + panel_head, r)
        _scratch(r, panel, prods, g.ct, 1, g.tj)
        _pack_y(r, panel, j, prods, pv, g, per_panel=True)
        _row_tiles(r, st, panel, i, j, prods, pv, "", "", g)
        _free(panel, prods)
    r._close_loops()


def _scratch(r: _KernelRenderer, scope: Scope, prods: list[_Product], ct: str,
             panels: int, lanes: int) -> None:
    """The packed panels (`panels` of them, TJ = `lanes` wide) of every product, in `scope`: on
    the stack when all of them fit in STACK_PANEL_BYTES (each thread has its own when the scope
    is a parallel loop's body), else on the heap."""
    size = 4 if ct == "float" else 8
    heap = sum(p.k for p in prods) * panels * lanes * size > STACK_PANEL_BYTES
    for p in prods:
        p.pb, p.heap, count = r.fresh("pb"), heap, p.k * panels * lanes
        if heap:
            scope.add(f"{ct} *{p.pb} = ({ct} *)rg_alloc({count} * sizeof({ct}));")
        else:
            scope.add(f"{ct} {p.pb}[{count}] __attribute__((aligned(64)));")


def _free(scope: Scope, prods: list[_Product]) -> None:
    """Free the heap panels of `scope`, after everything that reads them."""
    for p in prods:
        if p.heap:
            scope.add(f"free({p.pb});")


class _Geometry:
    """Sizes of one packed kernel: C type, vector lanes, panel width, rows and columns."""

    def __init__(self, dt: DType, ni: int, nj: int) -> None:
        self.ct, self.sfx = ctype(dt), "f32" if dt is dtypes.float32 else "f64"
        self.lanes = VECTOR_BYTES // dt.itemsize
        self.tj = PANEL_VECTORS * self.lanes
        self.ni, self.nj = ni, nj
        self.npanels = -(-nj // self.tj)


def _pack_y(r: _KernelRenderer, panel: Scope, j: UOp, prods: list[_Product], pv: str,
            g: _Geometry, per_panel: bool = False) -> None:
    """pb[panel][k][jj] = y(k, panel * TJ + jj) (pb[k][jj] when it holds one panel); lanes
    past the last column are 0, so they add nothing."""
    for p in prods:
        at = "" if per_panel else f"{pv} * {p.k * g.tj} + "
        kscope, kk = _k_loops(r, panel, p)
        jscope, jj = _bind(r, kscope, j, f"{pv} * {g.tj}", g.tj, g.nj, unroll=False)
        jscope.add(f"{p.pb}[{at}{kk} * {g.tj} + {jj}] = {r.emit(p.y)};")
        _close(r, panel)
        if g.nj % g.tj:
            panel.add(f"if ({pv} == {g.npanels - 1}) for (int64_t n_ = 0; n_ < {p.k}; n_++) "
                      f"for (int c_ = {g.nj % g.tj}; c_ < {g.tj}; c_++) "
                      f"{p.pb}[{at}n_ * {g.tj} + c_] = 0;")


def _row_tiles(r: _KernelRenderer, st: UOp, parent: Scope, i: UOp, j: UOp,
               prods: list[_Product], pv: str, panel_head: str, pragma: str,
               g: _Geometry) -> None:
    """Full tiles of TI rows, then the rows left over (a smaller tile, no guards). With a
    `panel_head`, x is packed per tile and the panel loop runs inside each tile."""
    ti = next((t for t in TILE_ROWS if g.ni % t == 0), TILE_ROWS[0])
    full, rest = divmod(g.ni, ti)
    if full:
        tv = r.fresh("tl")
        tile = _open(parent, f"{pragma}for (int64_t {tv} = 0; {tv} < {full}; {tv}++)", r)
        _tile(r, st, tile, i, j, prods, f"{tv} * {ti}", ti, pv, panel_head, g)
        _close(r, parent)
    if rest:
        tile = _open(parent, "/* the last rows */", r)
        _tile(r, st, tile, i, j, prods, str(full * ti), rest, pv, panel_head, g)
        _close(r, parent)


def _tile(r: _KernelRenderer, st: UOp, tile: Scope, i: UOp, j: UOp, prods: list[_Product],
          base: str, rows: int, pv: str, panel_head: str, g: _Geometry) -> None:
    """`rows` output rows from `base`: per panel, each product's register block summed over k
    in order (x broadcast, fused-multiply-added), then the epilogue. With a `panel_head`, x is
    first packed into pa[k][row] and the panels are looped here."""
    nv, vt = PANEL_VECTORS, f"rg_v{g.sfx}"
    xs: dict[_Product, str] = {}
    if panel_head:
        for p in prods:
            pa = r.fresh("pa")
            tile.add(f"{g.ct} {pa}[{p.k * rows}] __attribute__((aligned(64)));")
            iscope, ii = _bind(r, tile, i, base, rows, None, unroll=False)
            kscope, kk = _k_loops(r, iscope, p)
            kscope.add(f"{pa}[{kk} * {rows} + {ii}] = {r.emit(p.x)};")
            _close(r, tile)
            xs[p] = pa
        tile = _open(tile, panel_head, r)
    for p in prods:
        at = f"{pv} * {p.k * g.tj} + " if panel_head else ""
        a = r.fresh("acc")
        tile.add(f"{vt} {a}[{rows}][{nv}];")
        tile.add(f"for (int u_ = 0; u_ < {rows}; u_++) for (int v_ = 0; v_ < {nv}; v_++) "
                 f"{a}[u_][v_] = ({vt}){{0}};")
        kscope, kk = _k_loops(r, tile, p)
        kscope.add(f"{vt} w_[{nv}];")
        kscope.add(f"for (int v_ = 0; v_ < {nv}; v_++) "
                   f"w_[v_] = *(const {vt} *)({p.pb} + {at}{kk} * {g.tj} + v_ * {g.lanes});")
        iscope, ii = _bind(r, kscope, i, base, rows, None)
        x = f"{xs[p]}[{kk} * {rows} + {ii}]" if p in xs else r.emit(p.x)
        iscope.add(f"const {vt} x_ = {x} - ({vt}){{0}};  /* broadcast */")
        iscope.add(f"for (int v_ = 0; v_ < {nv}; v_++) "
                   f"{a}[{ii}][v_] = rg_fma_{g.sfx}(x_, w_[v_], {a}[{ii}][v_]);")
        _close(r, tile)
        p.cell = r.fresh("acc")
        r.vartypes[p.cell] = f"{g.ct} *"
        tile.add(f"{g.ct} {p.cell}[{rows * g.tj}] __attribute__((aligned(64)));")
        tile.add(f"for (int u_ = 0; u_ < {rows}; u_++) for (int v_ = 0; v_ < {nv}; v_++) "
                 f"*({vt} *)({p.cell} + u_ * {g.tj} + v_ * {g.lanes}) = {a}[u_][v_];")
    # epilogue: each reduce's value is its cell
    iscope, ii = _bind(r, tile, i, base, rows, None, unroll=False)
    jscope, jj = _bind(r, iscope, j, f"{pv} * {g.tj}", g.tj, g.nj, unroll=False)
    for p in prods:
        name = r.fresh()
        jscope.add(r.stmt(name, g.ct, f"{p.cell}[{ii} * {g.tj} + {jj}]"))
        jscope.names[p.red] = name
    r._emit_store(st)
    _close(r, tile)


def _open(parent: Scope, header: str, r: _KernelRenderer) -> Scope:
    """A loop that binds no RANGE (a tile or panel counter), pushed on the scope stack."""
    scope = Scope(header, parent.bound)
    parent.add(scope)
    parent.open_child = scope
    r.stack.append(scope)
    return scope


def _close(r: _KernelRenderer, keep: Scope) -> None:
    """Close every scope opened inside `keep` (which stays open)."""
    depth = r.stack.index(keep)
    for s in r.stack[depth:]:
        s.open_child = None
    del r.stack[depth + 1:]


def _bind(r: _KernelRenderer, parent: Scope, rng: UOp, base: str, count: int,
          size: int | None, unroll: bool = True) -> tuple[Scope, str]:
    """`count` values of RANGE rng from `base`, unrolled; with a `size`, values past it are
    skipped (the guard binds the range, so nothing reading it is hoisted above the guard)."""
    var = r.loop_names.setdefault(rng, f"r{len(r.loop_names)}")
    head = f"for (int64_t {var}_u = 0; {var}_u < {count}; {var}_u++)"
    loop = _open(parent, f"#pragma GCC unroll {count}\n{head}" if unroll else head, r)
    guard = f"if ({base} + {var}_u < {size})" if size is not None and size % count else ""
    scope = Scope(guard, loop.bound | {rng})
    loop.add(scope)
    loop.open_child = scope
    r.stack.append(scope)
    scope.items.append(f"const int64_t {var} = {base} + {var}_u;")
    scope.names[rng] = var
    r.vartypes[var] = "int64_t"
    return scope, f"{var}_u"


def _k_loops(r: _KernelRenderer, parent: Scope, p: _Product) -> tuple[Scope, str]:
    """The reduce's loops (in its order), and the C expression of the flat step number."""
    scope, flat = parent, ""
    for k in p.ks:
        scope = r.open_loop(scope, k)
        r.stack.append(scope)
        var = scope.names[k]
        flat = f"({flat}) * {_range_size(k)} + {var}" if flat else var
    return scope, f"({flat})"


def _zero_tail(r: _KernelRenderer, panel: Scope, p: _Product, pv: str, kk: str, tj: int,
               nj: int, ct: str) -> None:
    """pb's lanes past the last column are 0 (only the last panel has any)."""
    panel.add(f"if ({pv} == {(nj - 1) // tj}) for (int64_t n_ = 0; n_ < {p.k}; n_++) "
              f"for (int64_t c_ = {nj % tj}; c_ < {tj}; c_++) "
              f"{p.pb}[({pv} * {p.k} + n_) * {tj} + c_] = 0;")


def _microkernel(panel: Scope, p: _Product, pv: str, ti: int, tj: int, lanes: int, ct: str,
                 sfx: str) -> None:
    """acc[ii][v] += pa[k][ii] * pb[panel][k][v] over k in order; then acc -> the cell."""
    nv = tj // lanes
    vt = f"rg_v{sfx}"
    lines = [
        f"{ct} {p.cell}[{ti * tj}] __attribute__((aligned(64)));",
        "{",
        f"  {vt} a_[{ti}][{nv}];",
        f"  for (int u_ = 0; u_ < {ti}; u_++) for (int v_ = 0; v_ < {nv}; v_++) "
        f"a_[u_][v_] = ({vt}){{0}};",
        f"  const {ct} *b_ = {p.pb} + {pv} * {p.k * tj};",
        f"  for (int64_t k_ = 0; k_ < {p.k}; k_++) {{",
        f"    {vt} w_[{nv}];",
        f"    for (int v_ = 0; v_ < {nv}; v_++) w_[v_] = *(const {vt} *)(b_ + k_ * {tj} + "
        f"v_ * {lanes});",
        f"    #pragma GCC unroll {ti}",
        f"    for (int u_ = 0; u_ < {ti}; u_++) {{",
        f"      const {vt} x_ = ({vt}){{0}} + {p.pa}[k_ * {ti} + u_];",
        f"      #pragma GCC unroll {nv}",
        f"      for (int v_ = 0; v_ < {nv}; v_++) a_[u_][v_] = rg_fma_{sfx}(x_, w_[v_], "
        "a_[u_][v_]);",
        "    }",
        "  }",
        f"  for (int u_ = 0; u_ < {ti}; u_++) for (int v_ = 0; v_ < {nv}; v_++) "
        f"*({vt} *)({p.cell} + u_ * {tj} + v_ * {lanes}) = a_[u_][v_];",
        "}",
    ]
    panel.add("\n".join(lines))
