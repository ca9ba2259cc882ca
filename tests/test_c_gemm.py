"""Packed sums of products (backends/c/gemm.py) against numpy: every shape case the loop nest
has (rows and columns left over, batches split across cores or not, several reduces in one
store, a reduce over several ranges, transposed and fused operands, float64), each checked to
have really taken the packed path."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulegrad import Tensor
from rulegrad.backends.c import compile_program


def _blocks(source: str) -> int:
    """How many register blocks a kernel's C has: printed in it, or called from the block
    library (backends/c/blocks.py)."""
    return source.count("fma_f") + source.count("rg_block_")


def _packed(t: Tensor) -> bool:
    """Whether the last kernel of t's schedule was rendered as packed products."""
    return _blocks(compile_program(t.schedule()).source) > 0


def _rand(rng: np.random.Generator, *shape: int, dtype: type = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


CASES: list[tuple[str, Callable, Callable, list[tuple[int, ...]]]] = [
    # rows % 6 and columns % 16 left over, one core
    ("matmul 33x47x35", lambda a, b: a @ b, lambda a, b: a @ b, [(33, 47), (47, 35)]),
    # large enough to split the panels across cores
    ("matmul 130x100x90", lambda a, b: a @ b, lambda a, b: a @ b, [(130, 100), (100, 90)]),
    # batched, the batch loop split across cores; B read transposed (strided in j)
    ("batched a@b^T", lambda a, b: a @ b.transpose(1, 2),
     lambda a, b: a @ b.transpose(0, 2, 1), [(6, 50, 60), (6, 70, 60)]),
    # A read in place over several panels, the last 15 columns wide, row tiles across cores
    # (the last one 4 rows); and A stored transposed, so packed, with columns left over
    ("matmul 202x150x95", lambda a, b: a @ b, lambda a, b: a @ b, [(202, 150), (150, 95)]),
    # two batches (too few to split): the row tiles split inside each batch's loop, the
    # panels shared by the threads (claimed and marked ready afresh per batch)
    ("batched 2x150x100x90", lambda a, b: a @ b, lambda a, b: a @ b,
     [(2, 150, 100), (2, 100, 90)]),
    ("a^T@b 40x30x50", lambda a, b: a.T @ b, lambda a, b: a.T @ b, [(30, 40), (30, 50)]),
    # a fused epilogue (bias, relu) and a fused operand (exp of A, computed in the loop)
    ("relu(exp(a)@b+c)", lambda a, b, c: (a.exp() @ b + c).relu(),
     lambda a, b, c: np.maximum(np.exp(a) @ b + c, 0), [(40, 30), (30, 50), (50,)]),
    # a fused softmax as the left operand, large enough to split the packing and the row
    # tiles across cores (x computed once per element, then every panel)
    ("softmax(q@k^T)@v", lambda q, k, v: (q @ k.T).softmax(-1) @ v,
     lambda q, k, v: _softmax(q @ k.T) @ v, [(200, 64), (200, 64), (200, 64)]),
    # long sums: the packed panels go to the heap (plain, and with a packed costly operand)
    ("long k 8x4500x20", lambda a, b: a @ b, lambda a, b: a @ b, [(8, 4500), (4500, 20)]),
    ("long k exp(a)@b", lambda a, b: a.exp() @ b, lambda a, b: np.exp(a) @ b,
     [(10, 3000), (3000, 20)]),
    # a tile of packed A past the stack's share (6 rows x 6000 > 128 KB): on the heap
    ("long k 12x6000x40", lambda a, b: a @ b, lambda a, b: a @ b, [(12, 6000), (6000, 40)]),
    # Tensor.conv2d: one reduce over three ranges (channels, kernel rows, kernel columns)
    ("conv2d", lambda x, w: x.conv2d(w), lambda x, w: _conv_np(x, w),
     [(2, 8, 12, 20), (16, 8, 3, 3)]),
    # images and pixels as the rows (3*7*9 = 189: 3 left over), 20 output channels as columns
    ("conv2d rows left over", lambda x, w: x.conv2d(w), lambda x, w: _conv_np(x, w),
     [(3, 5, 9, 11), (20, 5, 3, 3)]),
    # a 16-wide image: the window's row is (ky * 17 + ho) % 16, which symbolic.rules'
    # mod_coeff turns into ky + ho
    ("conv2d 16x16", lambda x, w: x.conv2d(w), lambda x, w: _conv_np(x, w),
     [(2, 4, 16, 16), (8, 4, 3, 3)]),
    # threaded row tiles side by side in the output's lines (4*17*23 pixels): several taken at
    # a time, the store's pixels innermost, the last tile (4 rows) among them; with 32 output
    # channels (two panels, x packed) and with 16 (one panel, x read in place)
    ("conv2d tiles grabbed", lambda x, w: x.conv2d(w), lambda x, w: _conv_np(x, w),
     [(4, 8, 19, 25), (32, 8, 3, 3)]),
    ("conv2d one panel", lambda x, w: x.conv2d(w), lambda x, w: _conv_np(x, w),
     [(4, 8, 19, 25), (16, 8, 3, 3)]),
    # several reduces in one store: a 3x3 convolution as 9 shifted contractions
    ("conv 3x3 as 9 sums", None, None, [(2, 8, 12, 20), (16, 8, 3, 3)]),
]


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _conv_rg(x: Tensor, w: Tensor) -> Tensor:
    n, ci, h, wd = x.shape
    co = w.shape[0]
    out = None
    for ky in range(3):
        for kx in range(3):
            xs = x[:, :, ky:ky + h - 2, kx:kx + wd - 2].reshape(n, 1, ci, h - 2, wd - 2)
            ws = w[:, :, ky, kx].reshape(1, co, ci, 1, 1)
            term = (xs * ws).sum(axis=2)
            out = term if out is None else out + term
    return out


def _conv_np(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    return np.einsum("nchwyx,ocyx->nohw", win, w)


@pytest.fixture(params=["library", "printed"])
def blocks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Register blocks from the block library (the default), or printed in each kernel."""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", "1" if request.param == "library" else "0")
    run._programs.clear()  # (a program is kept by its kernels' ASTs, the same either way)
    yield request.param
    run._programs.clear()


@pytest.mark.parametrize("name,rg,ref,shapes", CASES, ids=[c[0] for c in CASES])
def test_packed_products_match_numpy(blocks: str, name: str, rg: Callable | None,
                                     ref: Callable | None, shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(len(name))
    arrays = [_rand(rng, *s) for s in shapes]
    rg, ref = (rg, ref) if rg is not None else (_conv_rg, _conv_np)
    out = rg(*(Tensor(a) for a in arrays))
    assert _packed(out), "expected the packed path"
    want = ref(*arrays)
    # rounding grows with the length of the sums: tolerance relative to the result's scale
    np.testing.assert_allclose(out.numpy(), want, rtol=2e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("name", ["matmul 33x47x35", "relu(exp(a)@b+c)",
                                  "conv2d rows left over"])
def test_rows_left_over_share_the_register_block_and_store_nothing_past_the_end(
        blocks: str, name: str) -> None:
    """When the tile does not divide the rows, the last tile runs the same register block (one
    copy in the C, not a second for the rows left over), computing its rows past the end as the
    last row, and stores none of them: the output's neighbours in memory keep their bytes."""
    _, rg, ref, shapes = next(c for c in CASES if c[0] == name)
    rng = np.random.default_rng(7)
    arrays = [_rand(rng, *s) for s in shapes]
    rg, ref = (rg, ref) if rg is not None else (_conv_rg, _conv_np)
    sched = rg(*(Tensor(a) for a in arrays)).schedule()
    prog = compile_program(sched)
    kernel = prog.source[prog.source.rindex("void k"):]
    assert _blocks(kernel) == 1, "one register block"
    bufs = [[b.ensure() for b in item.bufs] for item in sched]
    out = bufs[-1][0]
    # the output inside a larger buffer: canaries before and after it
    room = np.full(out.size + 2 * 4096, 12345.0, out.dtype)
    bufs[-1][0] = room[4096:4096 + out.size].reshape(out.shape)
    prog.run(bufs)
    assert (room[:4096] == 12345.0).all() and (room[4096 + out.size:] == 12345.0).all()
    want = ref(*arrays).reshape(-1)
    np.testing.assert_allclose(bufs[-1][0].reshape(-1), want, rtol=2e-5,
                               atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("name", ["matmul 202x150x95", "conv2d rows left over"])
def test_tiles_compute_each_rows_address_once_per_tile(name: str, monkeypatch) -> None:
    """A tile reads x through a pointer per row, set once per tile; a convolution's rows (an
    image and a pixel: a division and a remainder of the row number) are divided there too,
    never inside the loops over k or the epilogue's. (gcc at -O1 kept that arithmetic in the
    k loop, 1.25x-1.3x slower.) The values are numpy's. (The blocks printed in the kernel: the
    block library's read x through the same pointers.)"""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", "0")
    run._programs.clear()
    _, rg, ref, shapes = next(c for c in CASES if c[0] == name)
    rng = np.random.default_rng(3)
    arrays = [_rand(rng, *s) for s in shapes]
    rg, ref = (rg, ref) if rg is not None else (_conv_rg, _conv_np)
    out = rg(*(Tensor(a) for a in arrays))
    source = compile_program(out.schedule()).source
    kernel = source[source.rindex("void k"):]
    fill = kernel.index("for (int64_t q_ = 0;")
    tile_end = kernel.index("}", fill)  # the loop filling the arrays of a tile
    assert "const float *xr" in kernel[:fill], "a pointer per row"
    fma = next(line for line in kernel.splitlines() if "fma_f" in line)
    block = kernel[kernel.rindex("for (int64_t", 0, kernel.index(fma)):kernel.index(fma)]
    assert "xr" in block and " / " not in block, block  # x through its row's pointer
    divisions = [i for i in range(len(kernel)) if kernel.startswith("row_ /", i)]
    assert all(fill < i < tile_end for i in divisions)
    assert " / " not in kernel[tile_end:].split("fma_f")[-1], "no division in the epilogue"
    want = ref(*arrays)
    np.testing.assert_allclose(out.numpy(), want, rtol=2e-5, atol=1e-5 * np.abs(want).max())


def test_reduce_over_two_ranges_and_float64() -> None:
    rng = np.random.default_rng(1)
    a, b = _rand(rng, 30, 4, 20, dtype=np.float64), _rand(rng, 4, 20, 40, dtype=np.float64)
    # out[i, j] = sum over (p, q) of a[i, p, q] * b[p, q, j]: a reduce over two ranges
    out = (Tensor(a).reshape(30, 4, 20, 1) * Tensor(b).reshape(1, 4, 20, 40)).sum(axis=(1, 2))
    assert _packed(out)
    np.testing.assert_allclose(out.numpy(), np.einsum("ipq,pqj->ij", a, b), rtol=1e-12)


def test_special_values_propagate_like_numpy() -> None:
    a = np.ones((24, 48), np.float32)
    b = np.ones((48, 32), np.float32)
    a[3, 5], a[7, 0], b[2, 9] = np.nan, np.inf, -np.inf
    out = Tensor(a) @ Tensor(b)
    assert _packed(out)
    with np.errstate(invalid="ignore"):  # inf - inf: numpy warns, we say NaN like it does
        want = a @ b
    np.testing.assert_array_equal(out.numpy(), want)  # NaN, +-inf and exact integers


# ---------------------------------------------------------------------- random contractions
# The packed loops run only where they pay (MIN_WORK multiply-adds), which the fuzzer's small
# programs never reach; here the threshold is lifted so that hypothesis can draw many small
# contractions of every shape the loop nest distinguishes: batch or not, several reduce ranges,
# rows and columns left over, transposed operands, a costly fused operand, an epilogue.
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(batch=st.sampled_from([(), (3,), (2, 2)]), rows=st.integers(2, 13),
       cols=st.integers(8, 35),
       ks=st.lists(st.integers(1, 5), min_size=1, max_size=3).filter(lambda ks: max(ks) > 1),
       transpose_b=st.booleans(), exp_a=st.booleans(), relu=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_random_contractions_match_numpy(monkeypatch: pytest.MonkeyPatch, batch: tuple,
                                         rows: int, cols: int, ks: list[int],
                                         transpose_b: bool, exp_a: bool, relu: bool,
                                         dtype: type, seed: int) -> None:
    from rulegrad.rules import pack_helpers

    monkeypatch.setattr(pack_helpers, "MIN_WORK", 1)
    # (and a product over a transposed B packed too, not left as the plain dots the heuristic
    # keeps where they cost less: `_dot_cost`)
    monkeypatch.setattr(pack_helpers, "_dot_cost", lambda st, reds: math.inf)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, rows, *ks)).astype(dtype)
    b = rng.standard_normal((*batch, *ks, cols)).astype(dtype)
    nb, nk = len(batch), len(ks)
    ta, tb = Tensor(a), Tensor(b)
    if transpose_b:  # B stored with its columns first: strided reads when packing
        tb = Tensor(np.ascontiguousarray(np.moveaxis(b, -1, nb))).permute(
            *range(nb), *range(nb + 1, nb + 1 + nk), nb)
    if exp_a:
        ta, a = ta.exp(), np.exp(a)
    prod = ta.reshape(*batch, rows, *ks, 1) * tb.reshape(*batch, 1, *ks, cols)
    out = prod.sum(axis=tuple(range(nb + 1, nb + 1 + nk)))
    letters = "pqr"[:nk]
    want = np.einsum(f"...i{letters},...{letters}j->...ij", a, b)
    if relu:
        out, want = out.relu(), np.maximum(want, 0)
    assert _packed(out)
    tol = 1e-5 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(out.numpy(), want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("expr,packed", [
    ("a @ b", False),         # each row of A read forward along k: read in place
    ("a.T @ b", True),        # strided along k
    ("a.exp() @ b", True),    # computed: once per element, not once per panel
    ("(a + 1) @ b", True),    # computed (fused into the product)
    ("x.conv2d(w)", False),   # the window: each pixel's row forward along the kernel's columns
    ("x.conv2d(w, stride=2)", False),
    ("x.conv2d(w, padding=1)", False),  # read from its padded copy (Tensor.conv2d)
])
def test_left_operand_is_packed_unless_a_plain_row(expr: str, packed: bool) -> None:
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    rng = np.random.default_rng(0)
    # 64 columns: four panels; 32 output channels: two. Images 17 wide: an output row of 17
    # (padded) or 15 would waste a panel's lanes as the columns, so the pixels are the rows and
    # the window the left operand (at 15 wide, padded, the output's rows are the columns: the
    # window is packed into panels, stored along the output's contiguous axis)
    a, b = _rand(rng, 48, 48), _rand(rng, 48, 64)
    x, w = _rand(rng, 2, 8, 13, 17), _rand(rng, 32, 8, 3, 3)
    t = eval(expr, {}, {"a": Tensor(a), "b": Tensor(b), "x": Tensor(x), "w": Tensor(w)})
    low = lower_only(t.schedule()[-1].ast)
    (pack,) = [s for s in actions(optimize_kernel(low)) if s.startswith("PACK")]
    assert ("A packed" in pack) == packed, pack
    if expr.startswith("x."):
        pad, step = ("padding=1" in expr), 2 if "stride" in expr else 1
        want = _conv_np(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))) if pad else x, w)
        want = want[:, :, ::step, ::step]
    else:
        env = {"a": np.exp(a) if "exp" in expr else a, "b": b}
        want = eval(expr.replace(".exp()", ""), {}, env)
    np.testing.assert_allclose(t.numpy(), want, rtol=2e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("vector_bytes", ["32", "64"])
@pytest.mark.parametrize("n,c,hw,o", [(32, 8, 16, 8), (48, 5, 11, 8), (16, 3, 9, 12),
                                      (64, 2, 6, 8)])
def test_convolution_of_many_images_packs_its_weights(monkeypatch: pytest.MonkeyPatch,
                                                      vector_bytes: str, n: int, c: int,
                                                      hw: int, o: int) -> None:
    """Many images and few output channels: the images would fill whole panels as the
    columns, but then every pixel is a batch iteration that packs a panel of images gathered
    a plane apart, read by a few rows (the channels). The columns are the channels, the rows
    the images and pixels (three ranges), so the weights are packed once for the kernel
    (pack_helpers' `_cost`)."""
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    rng = np.random.default_rng(n + c + hw + o)
    x, w = _rand(rng, n, c, hw, hw), _rand(rng, o, c, 3, 3)
    t = Tensor(x).conv2d(Tensor(w))
    low = lower_only(t.schedule()[-1].ast)
    (pack,) = [s for s in actions(optimize_kernel(low)) if s.startswith("PACK")]
    rows = pack.split(" x columns")[0].removeprefix("PACK rows ").split()
    assert len(rows) == 3, pack
    want = _conv_np(x, w)
    np.testing.assert_allclose(t.numpy(), want, rtol=2e-5, atol=1e-5 * np.abs(want).max())


def _fill_loops(source: str) -> list[bool]:
    """For each store into a packed tile of x (`pa<n>[...] = ...`), whether the loop around it
    says `omp simd`."""
    lines = source.splitlines()
    found = []
    for n, line in enumerate(lines):
        if line.lstrip().startswith("pa") and "] = " in line:
            head = next(k for k in range(n - 1, -1, -1) if lines[k].lstrip().startswith("for ("))
            found.append(lines[head - 1].strip() == "#pragma omp simd")
    return found


@pytest.mark.parametrize("k", [784, 131])  # whole vectors, and not
def test_a_computed_left_operand_is_packed_by_a_vector_loop(k: int) -> None:
    """A layer norm fused into the product after it: x's rows are computed (a division per
    element) and packed per tile of rows, each element its own: the copy is `omp simd`, a
    vector loop (gcc's very cheap cost model left it one division at a time: a tenth of an
    MLP's first layer on one core). A padded read keeps its copy scalar (gcc 12.2 dropped lanes
    of those, see gemm.py's pack_y)."""
    rng = np.random.default_rng(k)
    x, w = _rand(rng, 40, k), (_rand(rng, k, 64) / np.sqrt(k)).astype(np.float32)
    mean = x.mean(axis=1, keepdims=True)
    scale = np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    out = ((Tensor(x) - Tensor(mean)) / Tensor(scale)) @ Tensor(w)
    source = compile_program(out.schedule()).source
    assert _blocks(source) and _fill_loops(source) == [True], _fill_loops(source)
    # each element of the packed row is what the scalar loop computes (a lane each); each
    # output's sum is over k in order, one FMA a step: within float32 rounding of float64
    xs = ((x - mean) / scale).astype(np.float32)
    want = xs.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    # a padded x: gated reads, copied one element at a time
    xp = _rand(rng, 40, k - 2)
    padded = Tensor(xp).exp().pad(((0, 0), (1, 1))) @ Tensor(w)
    src = compile_program(padded.schedule()).source
    assert _blocks(src) and _fill_loops(src) == [False], _fill_loops(src)
    want = np.pad(np.exp(xp), ((0, 0), (1, 1))).astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(padded.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("m, k, n", [(128, 256, 10), (64, 128, 10), (61, 97, 11)])
def test_a_classifier_layer_of_a_computed_input_keeps_its_few_columns_and_packs_its_rows(
        m: int, k: int, n: int) -> None:
    """relu(h + b) @ w with few columns (a classifier's 10): the columns are w's, one panel,
    and the computed rows are packed per tile by a vector loop and run by the block library's
    block (pack_helpers' `_pack_x`). Taken the other way round (h's rows as the columns) each
    panel of relu(h + b) is a gather down h's columns, an element at a time: `_cost` counts a
    contiguous copy per vector and a gathered one per element (a 128x256x10 layer: 27 -> 11 us
    of one core)."""
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    rng = np.random.default_rng(m + k + n)
    h, b, w = _rand(rng, m, k), _rand(rng, k), _rand(rng, k, n)
    t = (Tensor(h) + Tensor(b)).relu() @ Tensor(w)
    low = lower_only(t.schedule()[-1].ast)
    (pack,) = [s for s in actions(optimize_kernel(low)) if s.startswith("PACK")]
    cols = low.src[0].src[-1].arg[0]  # the output's last range: w's columns
    assert f"columns r{cols} " in pack and "A packed" in pack, pack
    source = compile_program(t.schedule()).source
    assert "rg_block_" in source and _fill_loops(source) == [True]
    want = np.maximum(h + b, 0).astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("rows, tile", [(6, 6), (7, 4), (8, 4), (13, 5), (17, 6), (25, 5),
                                        (37, 6)])
def test_row_tiles_share_the_rows_evenly(rows: int, tile: int) -> None:
    # the last tile computes a whole tile's rows whatever is left: 8 rows as 6 + 2 are 12 rows
    # of multiply-adds, as 4 + 4 are 8; the tiles are as many either way
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import optimize_kernel
    from rulegrad.rules.pack_helpers import TILE_ROWS, Pack

    rng = np.random.default_rng(rows)
    a = rng.integers(-8, 9, (rows, 300)).astype(np.float32)
    b = rng.integers(-8, 9, (300, 200)).astype(np.float32)
    t = Tensor(a) @ Tensor(b)
    (item,) = t.schedule()
    (pack,) = [s.arg for s in optimize_kernel(lower_only(item.ast)).src
               if isinstance(s.arg, Pack)]
    assert pack.tile == tile and -(-rows // tile) == -(-rows // TILE_ROWS)
    np.testing.assert_array_equal(t.numpy(), a @ b)  # whole numbers: exact in any order


@pytest.mark.parametrize("m, k, n", [(8, 300, 512), (12, 500, 512), (15, 256, 256)])
def test_a_linear_layer_of_few_rows_keeps_its_rows_as_the_rows(m: int, k: int, n: int) -> None:
    # the weights' n columns as the rows would leave the m rows a half-empty panel and read the
    # weights down their columns in every tile (8x1024x1024: 1.12x slower on one core); the
    # weights' panels are packed once, a vector a step
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import optimize_kernel
    from rulegrad.rules.pack_helpers import Pack

    rng = np.random.default_rng(m)
    a = rng.integers(-8, 9, (m, k)).astype(np.float32)
    b = rng.integers(-8, 9, (k, n)).astype(np.float32)
    t = Tensor(a) @ Tensor(b)
    (item,) = t.schedule()
    (pack,) = [s.arg for s in optimize_kernel(lower_only(item.ast)).src
               if isinstance(s.arg, Pack)]
    assert pack.rows == (0,) and pack.cols == 1
    np.testing.assert_array_equal(t.numpy(), a @ b)  # whole numbers: exact in any order


def _grouped_conv_np(x: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    ci, co = x.shape[1] // groups, w.shape[0] // groups
    return np.concatenate([_conv_np(x[:, g * ci:(g + 1) * ci], w[g * co:(g + 1) * co])
                           for g in range(groups)], axis=1)


# (x, w, groups): each group's output channels a power of two (read as shifts and masks once
# lowered) or not (divisions and remainders); prime sizes; a batch of 1
@pytest.mark.parametrize("xs,ws,groups", [((2, 6, 11, 13), (24, 3, 3, 3), 2),
                                          ((1, 8, 13, 13), (32, 2, 3, 3), 4),
                                          ((3, 12, 7, 10), (48, 4, 3, 3), 3),
                                          ((2, 16, 17, 5), (64, 4, 3, 3), 4)])
def test_grouped_convolution_splits_its_channels_and_packs(blocks: str, xs: tuple, ws: tuple,
                                                           groups: int) -> None:
    """A grouped convolution's output channel r reads its group's input channels (r // c) and
    its own weights (r % c): not a product over r, so it ran as scalar loops (4x64x28x28 in
    4 groups: 100x torch's time). The packing action splits r into the group (a batch loop)
    and the channel within it (the columns), and packs that (pack_helpers' _split_groups)."""
    rng = np.random.default_rng(sum(xs) + groups)
    x, w = _rand(rng, *xs), _rand(rng, *ws)
    out = Tensor(x).conv2d(Tensor(w), groups=groups)
    assert _packed(out), "expected the packed path"
    want = _grouped_conv_np(x, w, groups)
    np.testing.assert_allclose(out.numpy(), want, rtol=2e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("vector_bytes", ["32", "64"])
@pytest.mark.parametrize("m,k,n", [(13, 300, 1048), (15, 131, 4099), (17, 64, 2000)])
def test_few_rows_copy_their_panels_a_row_of_y_at_a_time(blocks: str, monkeypatch, threads: str,
                                                          vector_bytes: str, m: int, k: int,
                                                          n: int) -> None:
    """A product of a few rows (row tiles uneven on two threads) and many columns runs panel by
    panel (pack_helpers' panels_outer). Its panels are copied several side by side, each step
    reading a run of a row of y (`Pack.group`, blocks.py's rg_pack_* with panels > 1): the
    last group with fewer panels than the others, the last panel with fewer columns; with the
    blocks printed, each panel of a group is copied by the kernel's own loops."""
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    rng = np.random.default_rng(m + k + n)
    x, w, b = _rand(rng, m, k), _rand(rng, k, n), _rand(rng, n)
    t = (Tensor(x) @ Tensor(w) + Tensor(b)).relu()
    low = lower_only(t.schedule()[-1].ast)
    (pack,) = [s for s in actions(optimize_kernel(low)) if s.startswith("PACK")]
    assert "a row at a time" in pack, pack
    want = np.maximum(x.astype(np.float64) @ w + b, 0)
    np.testing.assert_allclose(t.numpy(), want, rtol=2e-5, atol=1e-5 * np.abs(want).max())


def _streamed_cases() -> list:
    """(name, inputs, rulegrad's program, numpy's in float64): a product of one row tile."""
    def linear(m: int, k: int, n: int):
        return (f"relu {m}x{k}x{n}", ((m, k), (k, n), (n,)),
                lambda x, w, b: (x @ w + b).relu(),
                lambda x, w, b: np.maximum(x.astype(np.float64) @ w + b, 0))
    return [
        linear(2, 1024, 4096), linear(1 + 1, 1021, 77), linear(5, 131, 4099),
        linear(6, 7, 3000), linear(3, 64, 2000),
        # x transposed (read through an offset per row), x computed (a layer norm: packed)
        ("transposed x", ((300, 4), (300, 600)), lambda x, w: x.transpose(1, 0) @ w,
         lambda x, w: x.T.astype(np.float64) @ w),
        ("layernorm x", ((3, 200), (200, 999)), lambda x, w: x.layernorm() @ w,
         lambda x, w: ((x - x.mean(-1, keepdims=True)) / np.sqrt(
             x.astype(np.float64).var(-1, keepdims=True) + 1e-5)) @ w),
        # a batch of products of few rows each (y's batch part in its first element; x
        # computed, packed per tile)
        ("batched", ((3, 4, 70), (3, 70, 530)), lambda x, w: x.relu() @ w,
         lambda x, w: np.maximum(x.astype(np.float64), 0) @ w),
    ]


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("vector_bytes", ["32", "64"])
@pytest.mark.parametrize("case", _streamed_cases(), ids=lambda c: c[0])
def test_one_row_tile_reads_y_in_place(blocks: str, monkeypatch, threads: str,
                                       vector_bytes: str, case: tuple) -> None:
    """A product of one row tile (at most TILE_ROWS rows) would read each packed panel once:
    it reads y in place instead, `Pack.stream` columns at a time, a row of y a step into sums
    in memory (blocks.py's streamed blocks): the last columns fewer than a vector, k not a
    multiple of the steps taken at once, y's rows unaligned. With the blocks printed, the same
    tile with y packed: the action says so (DEBUG=2's line), not the printer alone."""
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    _, shapes, rg, ref = case
    rng = np.random.default_rng(sum(map(sum, shapes)))
    ins = [_rand(rng, *s) for s in shapes]
    t = rg(*map(Tensor, ins))
    low = lower_only(t.schedule()[-1].ast)
    (pack,) = [s for s in actions(optimize_kernel(low)) if s.startswith("PACK")]
    assert ("streamed" in pack) == (blocks == "library"), pack
    source = compile_program(t.schedule()).source
    assert ("_stream(" in source) == (blocks == "library")
    want = ref(*ins)
    np.testing.assert_allclose(t.numpy(), want, rtol=2e-5, atol=2e-5 * np.abs(want).max())
