"""The kernel optimizer (rules/opt.rules, backends/c/opt.py) and the kernels it shapes.

Pooling windows and reductions over a middle axis, through the scheduler and C, against numpy
(max/min bit for bit, special values in every window position, through the semantics table's
reduce: numpy's, with -0.0 ordered below +0.0); and the actions each kernel gets, counted from
the optimized AST and the C text (never timed).
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
from special_values import assert_same_bits as _same_bits
from special_values import sprinkled

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.rules.choices import DEFAULT, Choices
from rulegrad.runtime import semantics, target
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp

SPECIAL = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.0, 3.0]


def _data(shape: tuple[int, ...], dt: type, seed: int = 0) -> np.ndarray:
    """Random values with NaN, signed zeros and infinities sprinkled over every position."""
    return sprinkled(shape, dt, seed, SPECIAL)


def _kernel(t: Tensor, choices: Choices = DEFAULT):
    """The one kernel of t's schedule: (lowered AST, optimized AST, rendered C)."""
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low, choices)
    return low, opt, render_kernel(opt, "k")


def _oracle(op: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """numpy's max/min as runtime/semantics.py defines them (a zero result's sign ordered)."""
    o = Ops.MAX if op == "max" else Ops.MIN
    out = semantics.reduce(o, x, axes, -np.inf if op == "max" else np.inf)
    return np.squeeze(out, axis=axes)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["max", "min"])
def test_pool_2x2_bits_equal_numpy(dt, op):
    x = _data((2, 3, 16, 32), dt)
    got = getattr(Tensor(x).reshape(2, 3, 8, 2, 16, 2), op)(axis=(3, 5)).numpy()
    _same_bits(got, _oracle(op, x.reshape(2, 3, 8, 2, 16, 2), (3, 5)))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["max", "min"])
def test_window_of_every_special_pair_bits_equal_numpy(dt, op):
    # every ordered pair of special values as a 2-wide window, 8 windows a row: the unrolled,
    # vectorized compare-and-blend against numpy (NaN either side, +0.0 vs -0.0 either order)
    v = np.array(SPECIAL, dtype=dt)
    x = np.stack(np.broadcast_arrays(v[:, None], v[None, :]), axis=-1)  # (8, 8, 2)
    t = getattr(Tensor(x), op)(axis=2)
    low, opt, _ = _kernel(t)
    # (float32: explicit vectors, render.py's rg_vmax_f32; float64: gcc's omp simd), along
    # the 8x8 outputs as one run (merge_store)
    assert any(a.startswith("UPCAST r1 (64 iterations") for a in actions(opt))
    _same_bits(t.numpy(), _oracle(op, x, (2,)))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_mean_pool_2x2_matches_numpy(dt):
    # the order of a float sum is not pinned (README, "What each op means"): within rounding
    x = np.random.default_rng(1).standard_normal((2, 3, 16, 32)).astype(dt)
    got = Tensor(x).reshape(2, 3, 8, 2, 16, 2).mean(axis=(3, 5)).numpy()
    np.testing.assert_allclose(got, x.reshape(2, 3, 8, 2, 16, 2).mean(axis=(3, 5)), rtol=1e-6,
                               atol=1e-6)


def _pool3(x: np.ndarray, fn) -> np.ndarray:
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    return fn(win, axis=(-2, -1))


def test_max_pool_3x3_stride_2_bits_equal_numpy():
    x = _data((2, 4, 17, 40), np.float32, seed=2)
    ref = _pool3(x, lambda w, axis: _oracle("max", w, tuple(a % w.ndim for a in axis)))
    _same_bits(Tensor(x).max_pool2d(kernel_size=3, stride=2).numpy(), ref)


def test_avg_pool_3x3_stride_2_matches_numpy():
    x = np.random.default_rng(3).standard_normal((2, 4, 17, 40)).astype(np.float32)
    got = Tensor(x).avg_pool2d(kernel_size=3, stride=2).numpy()
    np.testing.assert_allclose(got, _pool3(x, np.mean), rtol=1e-6, atol=1e-6)


def test_pool_window_is_unrolled_and_vectorized():
    x = Tensor(np.zeros((2, 4, 16, 32), np.float32))
    low, opt, rk = _kernel(x.reshape(2, 4, 8, 2, 16, 2).max(axis=(3, 5)))
    # the window's 4 values: one unrolled MAX chain, no reduce loop and no accumulator left
    assert sum(n.op is Ops.REDUCE for n in low.toposort()) == 1
    assert not any(n.op in (Ops.REDUCE, Ops.DEFINE_REG) for n in opt.toposort())
    # (from the first value: MAX(-inf, x) is x, so 3 MAXes for 4 values)
    assert sum(n.op is Ops.MAX for n in opt.toposort()) == 3
    # (the images, channels and output rows are one run of rows 2 input rows apart: merge_store)
    assert actions(opt) == ["UNROLL MAX over r4 r5 (4 values)",
                            "MERGE loops r0 r1 r2 r3 into r2 r3",
                            "UPCAST r3 (16 iterations, 2 vectors of 8)"]
    # the renderer prints what the IR says: the output column loop as 8-lane vectors, the
    # stride-2 window read as vector loads and a shuffle, no reduction
    assert "r1_v += 8)" in rk.source and "rg_vload2_f32(" in rk.source  # (C names by depth)
    assert "rg_vstore_f32(" in rk.source
    assert "reduction(" not in rk.source


@pytest.mark.parametrize("dt, op, combines", [(np.int32, "sum", 3), (np.int32, "max", 3),
                                               (np.float64, "min", 3), (np.float32, "sum", 4)])
def test_unrolled_window_starts_from_its_first_value_where_that_is_exact(dt, op, combines):
    # MAX(-inf, x), MIN(+inf, x) and 0 + x on ints are x: a 4-value window combines 3 times;
    # a float sum starts from +0.0 (0.0 + -0.0 is +0.0): 4 times
    shape = (2, 8, 2, 16, 2)
    if dt is np.int32:  # wrapping sums included
        x = np.random.default_rng(7).integers(-2**31, 2**31, shape).astype(dt)
    else:
        x = _data(shape, dt, seed=7)
    t = getattr(Tensor(x), op)(axis=(2, 4))
    low, opt, _ = _kernel(t)
    o = {"sum": Ops.ADD, "max": Ops.MAX, "min": Ops.MIN}[op]
    assert sum(n.op is o and n.dtype is t.dtype for n in opt.toposort()) == combines
    if dt is np.int32:
        ref = getattr(x, op)(axis=(2, 4)).astype(t.numpy().dtype)  # a sum wraps in its dtype
    else:
        ref = _oracle(op, x, (2, 4)) if op != "sum" else x.sum(axis=(2, 4))
    if dt is np.float32:  # a float sum's order is not pinned: within rounding
        np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6, atol=1e-6)
    else:
        _same_bits(t.numpy(), ref)


def test_large_reduce_is_not_unrolled():
    x = Tensor(np.zeros((8, 64), np.int32))
    low, opt, _ = _kernel(x.max(axis=1))
    assert opt is low and actions(opt) == []


def test_gated_loads_are_not_upcast():
    # a padded read is a gated load: kept scalar (flags.py: gcc 12.2 dropped lanes of those);
    # the peel action runs the padding's border apart, and only the ungated interior is upcast
    a = np.random.default_rng(5).standard_normal((4, 30)).astype(np.float32)
    t = Tensor(a).pad(((0, 0), (1, 1))).relu()
    low, opt, _ = _kernel(t)
    assert any(n.op is Ops.LOAD and len(n.src) > 1 for n in low.toposort())
    vector = ("upcast", "vector", "simd")
    for st in opt.src:
        gated = any(n.op is Ops.LOAD and len(n.src) > 1 for n in st.toposort())
        assert not (gated and st.src[-1].arg[1] in vector)
    assert any(st.src[-1].arg[1] in vector for st in opt.src)
    np.testing.assert_array_equal(t.numpy(), np.maximum(np.pad(a, ((0, 0), (1, 1))), 0))


def test_transpose_is_not_upcast():
    # reading a column per output step would gather every lane: left to the scalar loop (the
    # 32 lines a pass over a row reads stay in L1 for the next: no transpose tile either)
    x = np.arange(32 * 48, dtype=np.float32).reshape(32, 48)
    t = (Tensor(x).T + 1).contiguous()
    low, opt, _ = _kernel(t)
    assert actions(opt) == []
    np.testing.assert_array_equal(t.numpy(), x.T + 1)


@pytest.mark.parametrize("op", ["sum", "max"])
def test_middle_axis_reduce_runs_as_rows(op):
    x = np.random.default_rng(4).standard_normal((8, 64, 48)).astype(np.float32)
    t = getattr(Tensor(x), op)(axis=1)
    low, opt, _ = _kernel(t)
    # each element is read once whatever the order: no register tile, one row of sums per
    # batch with the contiguous axis innermost
    assert any(a.startswith("INTERCHANGE r1 inside the reduce loops") for a in actions(opt))
    assert not any(c.startswith("TILE") for c in actions(opt))
    np.testing.assert_allclose(t.numpy(), getattr(x, op)(axis=1), rtol=1e-5, atol=1e-5)


def test_matmul_keeps_its_register_tile():
    # a product reads A once per column tile and B once per row tile: the tile pays there
    # (an int matmul: float ones take the packed path of gemm.py)
    # (K = 16: a short sum of products is not unrolled either)
    a = np.arange(8 * 16, dtype=np.int32).reshape(8, 16) % 7
    b = np.arange(16 * 32, dtype=np.int32).reshape(16, 32) % 5
    t = Tensor(a) @ Tensor(b)
    low, opt, _ = _kernel(t)
    assert "TILE r0 x r1 (4x16)" in actions(opt)
    np.testing.assert_array_equal(t.numpy(), a @ b)


def test_debug_2_prints_the_actions(monkeypatch, capsys):
    monkeypatch.setenv("DEBUG", "2")
    x = np.arange(2 * 16 * 16, dtype=np.float32).reshape(2, 16, 16)
    out = Tensor(x).reshape(2, 8, 2, 8, 2).max(axis=(2, 4)).numpy()
    np.testing.assert_array_equal(out, x.reshape(2, 8, 2, 8, 2).max(axis=(2, 4)))
    err = capsys.readouterr().err
    assert "actions: UNROLL MAX over" in err and "UPCAST" in err


# ---------------------------------------------------------------- the reduction contract
# (runtime/semantics.py's docstring): a float sum is the exact sum within (n - 1) * eps *
# sum |x| whatever order the backend picks; everything else is numpy's bits


def _sum_bound(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    exact = x.astype(np.float64).sum(axis=axes)
    n = int(np.prod([x.shape[a] for a in axes]))
    eps = np.finfo(x.dtype).eps / 2
    return exact, (n - 1) * eps * np.abs(x.astype(np.float64)).sum(axis=axes)


@pytest.mark.parametrize("shape, axes", [((4, 8, 2, 16, 2), (2, 4)),   # an unrolled window
                                         ((16, 3000), (1,)),            # a long row (simd)
                                         ((300, 64), (0,))])            # down columns
def test_float_sums_within_the_reassociation_bound(shape, axes):
    # mixed signs and magnitudes, so an order outside the contract would show
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float32)
    got = Tensor(x).sum(axis=axes).numpy().astype(np.float64)
    exact, bound = _sum_bound(x, axes)
    # the final rounding to float32 is one more half ulp
    assert np.all(np.abs(got - exact) <= bound + np.abs(exact) * np.finfo(np.float32).eps)


def test_sum_of_negative_zeros_is_positive_zero():
    x = np.full((4, 16, 2), -0.0, np.float32)
    got = Tensor(x).sum(axis=2).numpy()   # an unrolled window: starts from the identity
    assert not np.signbit(got).any() and not np.signbit(x.sum(axis=2)).any()


def test_elementwise_multiply_add_is_not_fused():
    # a * b + c outside a sum of products rounds twice, as numpy, in a vectorized loop too
    rng = np.random.default_rng(6)
    a, b, c = (rng.standard_normal((8, 1024)).astype(np.float32) for _ in range(3))
    t = Tensor(a) * Tensor(b) + Tensor(c)
    low, opt, _ = _kernel(t)
    assert any(s.startswith("UPCAST") for s in actions(opt))
    np.testing.assert_array_equal(t.numpy(), a * b + c)


def _round32(q: Fraction) -> np.float32:
    """q rounded to the nearest float32, ties to even (exact: compared as fractions)."""
    f = np.float32(float(q))
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - q), int(c.view(np.uint32)) & 1))


def _chain(a: np.ndarray, b: np.ndarray, fused: bool) -> np.ndarray:
    """out[i, j] = sum over k in order, each step rounded once (fused) or twice, from 0."""
    out = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = np.float32(0)
            for k in range(a.shape[1]):
                prod = Fraction(float(a[i, k])) * Fraction(float(b[k, j]))
                if not fused:
                    prod = Fraction(float(_round32(prod)))
                acc = _round32(Fraction(float(acc)) + prod)
            out[i, j] = acc
    return out


@pytest.mark.skipif("fma" not in open("/proc/cpuinfo").read().split(),
                    reason="the CPU has no fused multiply-add")
# one panel; two (the second 4 columns wide), A read in place; two with A stored transposed
# (strided along k), so packed per tile of rows
@pytest.mark.parametrize("cols,a_packed", [(16, False), (20, False), (20, True)])
def test_sum_of_products_is_a_fused_chain_in_order(monkeypatch, cols, a_packed):
    # the FMA contract (runtime/semantics.py): the packed loops (rules/opt.rules' pack_store)
    # sum each output over k in order, each step one fused multiply-add, as BLAS; an exact
    # oracle (fractions) of that chain, which differs from the twice-rounded one here
    from rulegrad.rules import pack_helpers

    monkeypatch.setattr(pack_helpers, "MIN_WORK", 1)
    rng = np.random.default_rng(cols)
    a = (rng.standard_normal((7, 19)) * 10.0 ** rng.integers(-2, 3, (7, 19))).astype(np.float32)
    b = rng.standard_normal((19, cols)).astype(np.float32)
    ta = Tensor(np.ascontiguousarray(a.T)).T if a_packed else Tensor(a)
    t = ta @ Tensor(b)
    low, opt, _ = _kernel(t)
    (pack,) = [s for s in actions(opt) if s.startswith("PACK rows r0 x columns r1 (tile")]
    assert ("A packed" in pack) == a_packed
    want = _chain(a, b, fused=True)
    assert not np.array_equal(want, _chain(a, b, fused=False))
    np.testing.assert_array_equal(t.numpy(), want)


def test_convolution_packs_images_and_pixels_as_rows():
    # the packing action's layout: output channels are the columns (20: the fewest wasted
    # lanes), images x rows x columns of pixels one flat row count (189 = 31 tiles of 6 and 3
    # rows left over), the window read in place (each row forward along the kernel's columns)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5, 9, 11)).astype(np.float32)
    w = rng.standard_normal((20, 5, 3, 3)).astype(np.float32)
    t = Tensor(x).conv2d(Tensor(w))
    low, opt, _ = _kernel(t)
    # (189 rows x 45 of x fit in L2: panel by panel, pack_helpers.panels_outer)
    assert any(a.startswith("PACK rows r0 r2 r3 x columns r1 (tile 6x16)")
               for a in actions(opt))
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    want = np.einsum("nchwyx,ocyx->nohw", win, w)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_a_packed_store_beside_another_store_is_packed_and_both_are_right():
    # a kernel writing a product and a second value over the same loops: the STORE with an
    # action of its own is its own loop nest (so DEBUG=2's PACK is what runs), the other plain
    from rulegrad.backends.c import compile_program
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.uop import UOp

    rng = np.random.default_rng(8)
    a, b = (rng.standard_normal((48, 40)).astype(np.float32),
            rng.standard_normal((40, 64)).astype(np.float32))
    (item,) = (Tensor(a) @ Tensor(b)).schedule()
    st = item.ast.src[0]
    out2 = UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), 3)
    idx2 = st.src[0].replace(src=(out2, *st.src[0].src[1:]))
    st2 = st.replace(src=(idx2, st.src[1] + UOp.const(dtypes.float32, 1.0), *st.src[2:]))
    ast = item.ast.replace(src=(st, st2))
    low = lower_only(ast)
    assert any(s.startswith("PACK") for s in actions(optimize_kernel(low)))
    prog = compile_program([("two", ast)])
    bufs = [np.zeros((48, 64), np.float32), a, b, np.zeros((48, 64), np.float32)]
    prog.run([[x.reshape(-1) for x in bufs]])
    np.testing.assert_allclose(bufs[0], a @ b, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(bufs[3], a @ b + 1, rtol=1e-5, atol=1e-4)
    assert "fma_f" in prog.source or "rg_block_" in prog.source  # a register block


# ---------------------------------------------------------------- reductions across cores
# (rules/thread_helpers.py, rules/interchange_helpers.py): which loop the threads split, read
# from the actions and the C; the values against numpy, special values included


def _reduce_ref(op: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if op != "sum":
        return _oracle(op, x, axes) if x.dtype.kind == "f" else getattr(x, op)(axis=axes)
    return x.sum(axis=axes, dtype=x.dtype if x.dtype.kind == "f" else np.int64)


def _check_reduce(op: str, x: np.ndarray, axes: tuple[int, ...], got: np.ndarray) -> None:
    ref = _reduce_ref(op, x, axes)
    if op == "sum" and x.dtype.kind == "f":  # the reduction contract: within the bound
        exact, bound = _sum_bound(x, axes)
        eps = np.finfo(x.dtype).eps
        assert np.all(np.abs(got.astype(np.float64) - exact) <= bound + np.abs(exact) * eps)
    else:
        _same_bits(np.atleast_1d(got), np.atleast_1d(ref.astype(got.dtype)))


@pytest.mark.parametrize("dt, op", [(np.float32, "sum"), (np.float32, "max"), (np.float64, "min"),
                                    (np.int32, "sum"), (np.int64, "max")])
@pytest.mark.parametrize("shape", [(3001,), (37, 129)])
def test_full_reduce_splits_its_outer_loop_across_threads(monkeypatch, dt, op, shape):

    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    if dt in (np.int32, np.int64):  # int sums wrap
        x = np.random.default_rng(9).integers(-2**31, 2**31, shape).astype(dt)
    elif op == "sum":
        x = np.random.default_rng(9).standard_normal(shape).astype(dt)
    else:
        x = _data(shape, dt, seed=9)
    t = getattr(Tensor(x), op)()
    low, opt, rk = _kernel(t)
    name = {"sum": "ADD", "max": "MAX", "min": "MIN"}[op]
    # one loop (3001) is split first, 93 blocks of 32 and a tail (split_reduce, tested in
    # test_split_reduce.py); two loops (37 x 129) thread the outer one
    loop = "r1 (93 iterations)" if len(shape) == 1 else f"r0 ({shape[0]} iterations)"
    assert [a for a in actions(opt) if a.startswith("THREAD")] == [
        f"THREAD {name} over {loop}"]
    if len(shape) > 1:  # launched (render._launched): a value per iteration, combined after
        assert rk.launch == shape[0] and rk.combine == rk.param_dtypes[0].itemsize \
            and not rk.openmp
    _check_reduce(op, x, tuple(range(len(shape))), t.numpy())


def test_split_full_sum_counts_its_inner_loop_for_threads():
    # the scheduler makes a sum of 4M values 256 sums of 16384: the outer loop alone is short,
    # the work inside it decides
    x = np.random.default_rng(10).standard_normal(1 << 22).astype(np.float32)
    t = Tensor(x).sum()
    low, opt, _ = _kernel(t)
    assert "THREAD ADD over r0 (256 iterations)" in actions(opt)
    _check_reduce("sum", x, (0,), t.numpy())


def _both_ways(monkeypatch, t_of):
    """t_of()'s kernel and values with the row reductions of the block library and printed
    in the kernel (RULEGRAD_BLOCK_LIBRARY=0): [(rendered C, values)] for each."""
    from rulegrad.backends.c import run

    out = []
    for library in ("1", "0"):
        monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", library)
        run._programs.clear()  # (a program is kept by its kernels' ASTs, the same either way)
        t = t_of()
        low, opt, rk = _kernel(t)
        out.append((actions(opt), rk.source, t.numpy()))
    run._programs.clear()
    return out


@pytest.mark.parametrize("op", ["max", "min", "sum"])
@pytest.mark.parametrize("width", [64, 85, 250, 1024])  # blocks of 4 vectors, whole vectors, values
def test_row_reduce_keeps_vectors_of_partial_results(monkeypatch, op, width):
    """A float32 max, min or sum along a contiguous row of at least 64 values keeps 4
    vectors of 8 partial results over its blocks of 32, then the whole vectors left and the
    last values (a sum's one by one, a max's as one vector overlapping the whole ones): max and
    min numpy's bits (NaN, signed zeros and infinities in every position), a sum within the
    reduction contract's bound. A row of memory calls the block library's reduction, which
    computes what the kernel prints without it, bit for bit."""
    x = _data((6, width), np.float32, seed=width) if op != "sum" else \
        np.random.default_rng(width).standard_normal((6, width)).astype(np.float32)
    (acts, lib_src, lib), (_, src, printed) = _both_ways(
        monkeypatch, lambda: getattr(Tensor(x), op)(axis=1))
    name = {"sum": "ADD", "max": "MAX", "min": "MIN"}[op]
    assert f"VECTOR {name} over r1 ({width} values: 4 vectors of 8 partial results)" in acts
    assert f"rg_reduce_{name.lower()}_f32(&p1[" in lib_src and "rg_vload_f32(" not in lib_src
    assert "[4]; for (int u_ = 0; u_ < 4; u_++)" in src and "rg_vload_f32(" in src
    _check_reduce(op, x, (1,), lib)
    _same_bits(lib, printed)


def test_computed_row_values_keep_vectors_of_partial_results(monkeypatch):
    # a value computed along the row (not a plain read) is printed in the kernel either way
    x = np.random.default_rng(13).standard_normal((5, 300)).astype(np.float32)
    def squares():
        d = Tensor(x) - 0.5
        return (d * d).sum(axis=1)  # (a sum of squares, not of products of two values)

    (acts, lib_src, lib), (_, _, printed) = _both_ways(monkeypatch, squares)
    assert "VECTOR ADD over r1 (300 values: 4 vectors of 8 partial results)" in acts
    assert "rg_reduce_" not in lib_src and "[4]; for (int u_ = 0; u_ < 4; u_++)" in lib_src
    _check_reduce("sum", (x - np.float32(0.5)) ** 2, (1,), lib)
    _same_bits(lib, printed)


def test_vector_partial_results_of_a_nan_or_zeros_row_bits_equal_numpy():
    # one NaN anywhere in the row (each of the four vectors, the leftover vector and values);
    # rows of +0.0 and -0.0 in either order: MAX gives +0.0, MIN -0.0 (runtime/semantics.py)
    width = 32 * 3 + 8 + 3
    x = np.ones((width + 2, width), np.float32)
    x[np.arange(width), np.arange(width)] = np.nan
    x[width] = np.where(np.arange(width) % 2, -0.0, 0.0)
    x[width + 1] = -0.0
    for op in ("max", "min"):
        _same_bits(getattr(Tensor(x), op)(axis=1).numpy(), _oracle(op, x, (1,)))


def test_reduce_over_two_axes_keeps_its_vectors_across_the_outer_loop():
    # rows 101 apart, 100 read of each: two loops (contiguous, they are one: merge_reduce)
    x = np.random.default_rng(12).standard_normal((5, 7, 101)).astype(np.float32)
    t = Tensor(x)[:, :, :100].sum(axis=(1, 2))
    low, opt, _ = _kernel(t)
    assert any(a.startswith("VECTOR ADD over r2 (100 values") for a in actions(opt))
    assert not any(a.startswith("MERGE") for a in actions(opt))
    _check_reduce("sum", x[:, :, :100], (1, 2), t.numpy())


def test_gated_strided_or_short_reduces_keep_one_accumulator():
    x = Tensor(np.ones((64, 64), np.float32))
    # gated along the row, and gated per row (the gate is fixed along the reduce: a vector
    # load would read the padding rows' memory)
    for t in (x.pad(((0, 0), (1, 1))).sum(axis=1), x.pad(((1, 1), (0, 0))).sum(axis=1),
              x.sum(axis=0), x[:, :7].sum(axis=1),  # (a sum shorter than a vector)
              Tensor(np.ones((8, 7), np.float32)).max(axis=1),  # (a max: shorter than a vector)
              Tensor(np.ones((8, 3), np.float64)).max(axis=1)):  # (shorter than 4 doubles)
        low, opt, _ = _kernel(t)
        assert not any(a.startswith("VECTOR") for a in actions(opt))


# (constants, not kernel arguments: whole numbers and powers of two stay literals,
# runtime/float_params.py)
@pytest.mark.parametrize("c", [0.125, 3.0, 2.0**-100, 1e30])
@pytest.mark.parametrize("op", ["max", "min"])
def test_scale_moves_out_of_a_max_with_the_same_bits(op, c):
    """max(x * c) -> max(x) * c for a positive finite c (opt.rules' max_scale): rounding is
    monotone, so the bits are numpy's max of the products, specials included (NaN, signed
    zeros, infinities, and products that overflow or underflow)."""
    x = _data((7, 100), np.float32, seed=int(c * 8) % 1000)
    x[0, :3] = [3e38, -3e38, 1e-40]  # x * 1e30 overflows, x * 2**-100 underflows
    x[1, :] = np.where(np.arange(100) % 2, -1e-38, 1e-38)  # products that round to +-0.0
    t = getattr(Tensor(x) * c, op)(axis=1)
    low, opt, _ = _kernel(t)
    assert f"UNSCALE {op.upper()} over r1 (times {c:g} after)" in actions(opt)
    _same_bits(t.numpy(), _oracle(op, x * np.float32(c), (1,)))


@pytest.mark.parametrize("c", [-2.0, 0.0, np.inf])
def test_a_scale_that_is_not_positive_and_finite_stays_inside(c):
    # max(x * -2) is -2 * min(x); x * 0 and x * inf make NaN of inf and 0, which max(x) lost
    x = _data((4, 100), np.float32, seed=5)
    t = (Tensor(x) * c).max(axis=1)
    low, opt, _ = _kernel(t)
    assert not any(a.startswith("UNSCALE") for a in actions(opt))
    with np.errstate(invalid="ignore", over="ignore"):
        _same_bits(t.numpy(), _oracle("max", x * np.float32(c), (1,)))


def test_small_or_inner_reduces_are_not_threaded_by_the_action():
    x = Tensor(np.ones((64, 64), np.float32))
    for t in (x.sum(), x.sum(axis=1)):  # too little work; a reduce inside the rows' loop
        low, opt, _ = _kernel(t)
        assert not any(a.startswith("THREAD") for a in actions(opt))


def _relu_madd(shape: tuple[int, ...]) -> tuple[Tensor, np.ndarray]:
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    return (Tensor(a) * Tensor(b) + Tensor(c)).relu(), np.maximum(a * b + c, 0)


def _relu_madd_row(shape: tuple[int, ...]) -> tuple[Tensor, np.ndarray]:
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    c = rng.standard_normal(shape[-1:]).astype(np.float32)
    return (Tensor(a) * Tensor(b) + Tensor(c)).relu(), np.maximum(a * b + c, 0)


def _int_matmul(m: int) -> tuple[Tensor, np.ndarray]:
    a = np.arange(m * 16, dtype=np.int32).reshape(m, 16) % 7
    b = np.arange(16 * 32, dtype=np.int32).reshape(16, 32) % 5
    return Tensor(a) @ Tensor(b), a @ b


def _middle_sum(n: int) -> tuple[Tensor, np.ndarray]:
    x = np.random.default_rng(6).standard_normal((n, 40, 24)).astype(np.float32)
    return Tensor(x).sum(axis=1), x.sum(axis=1)


def _loops_of(action: str) -> str:
    """A PARALLEL action without its team (`PARALLEL r0 (37 iterations)`)."""
    return re.sub(r" on \d+ threads$", "", action) if action.startswith("PARALLEL") else action


@pytest.mark.parametrize("make, arg, want", [
    (_relu_madd_row, (37, 129), "PARALLEL r0 (37 iterations)"),  # elementwise: the rows
    (_relu_madd, (37, 129), "PARALLEL r1 (4773 iterations)"),  # rows of one run: merged
    (_relu_madd, (5000,), "PARALLEL r0 (5000 iterations)"),   # one vector loop, in blocks
    (_int_matmul, 8, "PARALLEL r3 (2 iterations)"),           # a register tile: its row tiles
    (_middle_sum, 6, "PARALLEL r0 (6 iterations)"),           # interchanged: the outer rows
])
def test_parallel_action_threads_the_outermost_loop_where_the_work_pays(monkeypatch, make, arg,
                                                                        want):
    # the action's threshold lowered to these small kernels, then raised past them
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    t, ref = make(arg)
    low, opt, rk = _kernel(t)
    # (which loop; its team, `on N threads`, is tests/test_team_65.py's)
    assert [_loops_of(a) for a in actions(opt) if a.startswith("PARALLEL")] == [want]
    assert rk.launch > 0 and "PARALLEL" not in " ".join(rk.choices)  # printed as the rule says
    if make is _middle_sum:  # a float sum: the reduction contract's order
        np.testing.assert_allclose(t.numpy(), ref, rtol=1e-5, atol=1e-5)
    else:
        _same_bits(t.numpy(), ref)
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1 << 30)
    t, ref = make(arg)
    low, opt, rk = _kernel(t)
    assert not any(a.startswith("PARALLEL") for a in actions(opt))
    assert rk.launch == 0 and not rk.openmp and "omp parallel" not in rk.source


@pytest.mark.parametrize("fn", ["exp", "log", "sin"])
def test_a_libm_call_counts_as_loads_in_the_work_that_pays_for_threads(monkeypatch, fn):
    """An exp, log or sin per element costs about LIBM_LOADS loads: 16 rows of 200 of
    f(a + b) are 3,200 iterations of 2 loads (6,400, under a region's cost of 7,000) and 3 of
    them per libm call (16,000: 8,000 for each of two threads, past it), so f(a + b) takes
    threads and a - b does not (a softmax's exp kernels over rows past LOCAL_MAX_ROW ran on one
    core); numpy's values."""

    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 7_000)
    rng = np.random.default_rng(8)
    a, b = (rng.uniform(1, 2, (16, 200)).astype(np.float32) for _ in range(2))
    for t, ref, threaded in ((getattr(Tensor(a) + Tensor(b), fn)(), getattr(np, fn)(a + b), True),
                             (Tensor(a) - Tensor(b), a - b, False)):
        low, opt, _ = _kernel(t)
        acts = actions(opt)
        assert any(x.startswith("PARALLEL") for x in acts) is threaded, acts
        np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6)


def test_kernels_with_threads_of_their_own_take_no_parallel_action():
    # a full sum's threads are its reduce's (THREAD); a column sum's are the parallel action's,
    # over the interchange's column blocks (a "block" range), never over its columns. The
    # optimizer's threshold alone lowered (a search's choice): at target's, lowered for the
    # scheduler too, the full sum's rows would be two kernels (split_reduceop)
    low_work = Choices(parallel_min_work=100)
    x = np.random.default_rng(7).standard_normal((37, 1000)).astype(np.float32)
    low, opt, rk = _kernel(Tensor(x).sum(), low_work)
    acts = actions(opt)
    assert any(a.startswith("THREAD") for a in acts) and rk.launch > 0, acts
    assert not any(a.startswith("PARALLEL") for a in acts), acts
    low, opt, rk = _kernel(Tensor(x).sum(axis=0), low_work)
    blocks = {n.arg[0] for n in opt.toposort() if n.op is Ops.RANGE and n.arg[1] == "block"}
    assert opt.arg.ranges == blocks and len(blocks) == 1 and rk.launch == 2, actions(opt)


@pytest.mark.parametrize("dt, op", [(np.float32, "sum"), (np.float32, "max"), (np.float64, "min"),
                                    (np.int32, "sum"), (np.float64, "sum")])
@pytest.mark.parametrize("shape, blocks", [((37, 1000), "2 blocks of 500"),
                                           ((19, 1001), "7 blocks of 143"),  # 7 x 11 x 13
                                           ((40, 17), None)])               # prime: one core
def test_column_reduce_splits_its_columns_across_threads(monkeypatch, dt, op, shape, blocks):
    # a sum down the columns has no output loop around its columns to thread: blocks of them
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 100)
    if dt is np.int32:
        x = np.random.default_rng(11).integers(-2**31, 2**31, shape).astype(dt)
    elif op == "sum":
        x = np.random.default_rng(11).standard_normal(shape).astype(dt)
    else:
        x = _data(shape, dt, seed=11)
    t = getattr(Tensor(x), op)(axis=0, keepdim=True)
    low, opt, rk = _kernel(t)
    want = "INTERCHANGE r0 inside the reduce loops" + (f", in {blocks}" if blocks else "")
    if blocks is None and op in ("max", "min"):  # (no thread's blocks: registers, 8 float32
        # lanes a vector, 4 float64)
        vectors = "3 vectors of 8" if dt is np.float32 else "5 vectors of 4"
        want += f", in blocks of {vectors} accumulators in registers, rows fetched 8 ahead"
    else:
        want += ", 4 rows per pass" if shape[0] % 4 == 0 else ""  # (40 rows: 10 passes of 4)
    # the blocks (a range of the kernel, r2) are the loop the parallel action threads
    threads = [f"PARALLEL r2 ({blocks.split()[0]} iterations)"] if blocks else []
    assert [_loops_of(a) for a in actions(opt)] == [want, *threads]
    assert (rk.launch > 0) == (blocks is not None)  # threads: launched (launch.py)
    got = t.numpy()
    assert got.shape == (1, shape[1])
    _check_reduce(op, x, (0,), got[0])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2048, 1000), (36, 1000), (37, 1000), (40, 17)])
def test_column_sum_adds_its_rows_in_order_several_per_pass(monkeypatch, dt, shape):
    """A sum down the columns adds ROWS_PER_PASS rows per pass over its accumulators when they
    divide the rows (threaded column blocks or not), each column's sum still row after row: the
    bits of a running sum in numpy, one row at a time."""
    from rulegrad.rules.interchange_helpers import ROWS_PER_PASS

    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 100)
    x = np.random.default_rng(shape[0]).standard_normal(shape).astype(dt)
    t = Tensor(x).sum(axis=0)
    low, opt, rk = _kernel(t)
    several = shape[0] % ROWS_PER_PASS == 0
    # the rows' loop runs once per pass, each step ROWS_PER_PASS of them unrolled into the sum
    (red,) = [n for n in opt.toposort() if n.op is Ops.REDUCE]
    assert int(red.src[-1].src[0].arg) == shape[0] // (ROWS_PER_PASS if several else 1)
    assert actions(opt)[0].endswith(f", {ROWS_PER_PASS} rows per pass") == several
    want = np.zeros(shape[1], dt)
    for row in x:
        want = want + row
    _same_bits(t.numpy(), want)


# ---------------------------------------------------------------- explicit vectors
# (rules/opt_helpers.py `vectorizable`, printed by render.py with rg_v* helpers): 8 float32
# lanes, stride-2 window reads as two loads and a shuffle, and a row's last vector overlapping
# the one before it; every lane computes what the scalar loop computes, bit for bit


def _kinds(opt: UOp) -> set[str]:
    return {n.arg[1] for n in opt.toposort() if n.op is Ops.RANGE}


@pytest.mark.parametrize("op", ["max", "min"])
def test_pool_with_a_partial_last_vector_bits_equal_numpy(op):
    # 13 outputs a row: a vector of 8, then one overlapping it by 3 (no scalar tail), each
    # lane reading its stride-2 window's pair; NaN, +-inf and +-0.0 in every position
    x = _data((2, 3, 10, 26), np.float32, seed=11)
    t = getattr(Tensor(x).reshape(2, 3, 5, 2, 13, 2), op)(axis=(3, 5))
    low, opt, rk = _kernel(t)
    assert "UPCAST r3 (13 iterations, 2 vectors of 8, the last overlapping)" in actions(opt)
    assert "rg_vload2_f32(" in rk.source and "#pragma omp simd" not in rk.source
    _same_bits(t.numpy(), _oracle(op, x.reshape(2, 3, 5, 2, 13, 2), (3, 5)))


@pytest.mark.parametrize("width", [17, 19, 24, 40])
def test_max_pool_3x3_stride_2_vectors_bits_equal_numpy(width):
    # 8, 9, 11 and 19 outputs a row: one whole vector, and the overlapping last one
    x = _data((2, 3, 9, width), np.float32, seed=width)
    t = Tensor(x).max_pool2d(kernel_size=3, stride=2)
    low, opt, _ = _kernel(t)
    assert "vector" in _kinds(opt)
    ref = _pool3(x, lambda w, axis: _oracle("max", w, tuple(a % w.ndim for a in axis)))
    _same_bits(t.numpy(), ref)


def test_avg_pool_3x3_stride_2_vectors_match_numpy():
    x = np.random.default_rng(12).standard_normal((2, 3, 11, 29)).astype(np.float32)
    t = Tensor(x).avg_pool2d(kernel_size=3, stride=2)
    low, opt, _ = _kernel(t)
    assert "vector" in _kinds(opt)
    np.testing.assert_allclose(t.numpy(), _pool3(x, np.mean), rtol=1e-6, atol=1e-6)


def test_vector_ops_and_broadcast_row_values_bits_equal_numpy():
    # -, /, negation and a row's max (computed once per row, broadcast to every lane) on
    # 8-lane vectors, with a partial last vector: each as numpy rounds it
    rng = np.random.default_rng(13)
    a, b = (rng.standard_normal((5, 37)).astype(np.float32) for _ in range(2))
    t = -(Tensor(a) - Tensor(a).max(axis=1, keepdim=True)) / Tensor(b)
    low, opt, rk = _kernel(t)
    assert "vector" in _kinds(opt) and "rg_vset_f32(" in rk.source
    np.testing.assert_array_equal(t.numpy(), -(a - a.max(axis=1, keepdims=True)) / b)


def test_in_place_write_is_not_an_overlapping_vector():
    # the last vector recomputes outputs of the one before it: reading the buffer it writes,
    # it would read its own results (13 = 8 + 5: lanes 5..7 twice)
    x = np.arange(3 * 13, dtype=np.float32).reshape(3, 13)
    low = lower_only((Tensor(x) * 2 + 1).schedule()[0].ast)
    (st,) = low.src
    out, load = st.src[0].src[0], next(n for n in low.toposort() if n.op is Ops.DEFINE_GLOBAL
                                       and n is not st.src[0].src[0])
    in_place = low.substitute({load: out})
    assert "vector" in _kinds(optimize_kernel(low))
    assert "vector" not in _kinds(optimize_kernel(in_place))
    a = Tensor(x.copy()).realize()
    a.assign(a * 2 + 1)
    np.testing.assert_array_equal(a.numpy(), x * 2 + 1)


def test_vectors_need_restrict():
    # without `restrict` two parameters may be one buffer: gcc's omp simd instead
    t = Tensor(np.zeros((4, 13), np.float32)) + 1
    low, opt, rk = _kernel(t)
    assert "rg_vstore_f32(" in rk.source
    plain = render_kernel(opt, "k", restrict=False).source
    assert "rg_vstore_f32(" not in plain and "#pragma omp simd" in plain


def test_wide_stride_is_left_to_omp_simd():
    # a stride-3 read (a 3-wide window, stride 3) has no explicit vector load
    x = _data((4, 8 * 3), np.float32, seed=14)
    t = Tensor(x).reshape(4, 8, 3).max(axis=2)
    low, opt, _ = _kernel(t)
    assert "upcast" in _kinds(opt) and "vector" not in _kinds(opt)
    _same_bits(t.numpy(), _oracle("max", x.reshape(4, 8, 3), (2,)))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("width, vectors", [(48, 6), (136, 1), (128, 8)])
def test_middle_axis_reduce_in_register_vectors_bits_equal_numpy(op, width, vectors):
    # columns in blocks of `vectors` 8-lane accumulators kept in registers (48 = 6 vectors;
    # 136 = 17, a prime, one vector a block; 128 = 16, two blocks of 8), every row read into
    # them; NaN, +-inf and +-0.0 in every position, an odd number of rows
    x = _data((3, 37, width), np.float32, seed=width)
    t = getattr(Tensor(x), op)(axis=1)
    low, opt, rk = _kernel(t)
    # each row's vectors are fetched PREFETCH_ROWS rows ahead (a row is `width` values)
    from rulegrad.rules.interchange_helpers import prefetch_rows

    PREFETCH_ROWS = prefetch_rows()

    assert (f"INTERCHANGE r1 inside the reduce loops, in blocks of {vectors} vectors of 8 "
            f"accumulators in registers, rows fetched {PREFETCH_ROWS} ahead") in actions(opt)
    assert f"rg_v{op}_f32(" in rk.source
    assert "__builtin_prefetch((const void *)((uintptr_t)&p1[" in rk.source
    assert f"] + {PREFETCH_ROWS * width} * sizeof p1[" in rk.source
    _same_bits(t.numpy(), _oracle(op, x, (1,)))


def test_middle_axis_mean_in_register_vectors_matches_numpy():
    # a sum over rows into vectors, then the store's scaling on the vectors: each column's
    # sum keeps its order over the rows (within the reduction contract's rounding)
    x = np.random.default_rng(15).standard_normal((4, 29, 64)).astype(np.float32)
    t = Tensor(x).mean(axis=1)
    low, opt, _ = _kernel(t)
    assert any("accumulators in registers" in a for a in actions(opt))
    np.testing.assert_allclose(t.numpy(), x.mean(axis=1), rtol=1e-6, atol=1e-6)


def test_middle_axis_reduce_of_partial_vectors_keeps_a_register_block():
    # 44 columns are not whole vectors: 6 vector accumulators in registers, the last one
    # overlapping the one before it (each its own accumulator, by its loop counter), with
    # numpy's bits
    x = _data((3, 20, 44), np.float32, seed=16)
    t = Tensor(x).max(axis=1)
    low, opt, _ = _kernel(t)
    assert "in blocks of 6 vectors of 8 accumulators in registers" in actions(opt)[0]
    _same_bits(t.numpy(), _oracle("max", x, (1,)))


@pytest.mark.parametrize("program", ["layernorm", "softmax"])
def test_a_rows_passes_add_up_in_the_work_that_pays_for_threads(monkeypatch, program):
    """A row's reductions run one after another inside the row loop (the mean, the variance,
    then the outputs; softmax's max, its sum of exps, then the outputs): their work adds up to
    fewer than 10 loads (a libm call as LIBM_LOADS) per element of the 4 x 200 input, not the
    product of the row's loops (4 x 200**3 of them: a 2 x 40009 layernorm took threads for 2
    rows of short passes). Under a threshold of 10 per element: one core; under 1 per element
    (each element is loaded at least once): threads. numpy's values."""

    x = np.random.default_rng(9).standard_normal((4, 200)).astype(np.float32)
    make = {"layernorm": (lambda t: t.layernorm(),
                          lambda a: (a - a.mean(-1, keepdims=True))
                          / np.sqrt(a.var(-1, keepdims=True) + 1e-5)),
            "softmax": (lambda t: t.softmax(-1),
                        lambda a: np.exp(a - a.max(-1, keepdims=True))
                        / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True))}
    program_of, ref = make[program]
    # (rows in the row form: 4 rows in blocks of 4 are one block, which takes no threads, as
    # flattening it with its rows filled its arrays once per row; test_review_63c's)
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "4K")
    for per_element, threaded in ((10, False), (1, True)):
        monkeypatch.setattr(target, "PARALLEL_MIN_WORK", per_element * x.size)
        t = program_of(Tensor(x))
        low, opt, _ = _kernel(t)
        acts = actions(opt)
        assert any(a.startswith("PARALLEL") for a in acts) is threaded, (per_element, acts)
        np.testing.assert_allclose(t.numpy(), ref(x.astype(np.float64)), rtol=1e-4, atol=1e-5)
