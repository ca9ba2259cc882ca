"""The interchange action is an AST transformation (rules/interchange_helpers.py): after it the
kernel's STORE is the loop nest it runs, its column range marked "upcast" ("vector": explicit
vectors; "unroll": a register tile) and split into blocks or tiles, a reduce's rows unrolled
into its update, and no instruction for the printer left in any arg. The C renderer prints that
nest as it prints any other, and the kernel interpreter runs the same AST: both give numpy's
bits (ints, max and min; a column sum kept row after row: numpy's running sum) on prime, tiny
and batch-1 shapes with NaN, infinities and signed zeros.
"""

from __future__ import annotations

import numpy as np
import pytest
from special_values import assert_same_bits, sprinkled

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.kernel_interp import run_kernel
from rulegrad.rules import interchange_helpers
from rulegrad.runtime import semantics, target
from rulegrad.runtime.ops import Ops

SPECIAL = (np.nan, -0.0, 0.0, np.inf, -np.inf)


def _running_sum(x: np.ndarray, axis: int) -> np.ndarray:
    out = np.zeros(np.delete(x.shape, axis), x.dtype)
    for k in range(x.shape[axis]):
        out = out + np.take(x, k, axis=axis)
    return out


def _max(x: np.ndarray, axis: int) -> np.ndarray:
    return np.squeeze(semantics.reduce(Ops.MAX, x, (axis,), -np.inf), axis=axis)


def _int_sum(shape):
    x = np.random.default_rng(3).integers(-2**31, 2**31, shape).astype(np.int32)
    return x, Tensor(x).sum(axis=0), x.sum(axis=0)


def _float_sum(shape):
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    return x, Tensor(x).sum(axis=0), _running_sum(x, 0)


def _column_max(shape):
    x = sprinkled(shape, np.float32, 5, SPECIAL, share=7)
    return x, Tensor(x).max(axis=0), _max(x, 0)


def _middle_max(shape):
    x = sprinkled(shape, np.float32, 6, SPECIAL, share=7)
    return x, Tensor(x).max(axis=1), _max(x, 1)


def _int_matmul(shape):
    m, k, n = shape
    rng = np.random.default_rng(7)
    a, b = rng.integers(-50, 50, (m, k)).astype(np.int32), rng.integers(-50, 50, (k, n))
    b = b.astype(np.int32)
    return a, Tensor(a) @ Tensor(b), a @ b


@pytest.mark.parametrize("make, shape, kinds, want", [
    (_int_sum, (36, 1000), {"upcast", "block"}, "in 2 blocks of 500, 4 rows per pass"),
    (_float_sum, (40, 1031), {"upcast", "block"}, "in 2 blocks of 520, 4 rows per pass"),
    (_column_max, (37, 1009), {"upcast", "block"}, "in 2 blocks of 512"),  # prime: overlapping
    (_float_sum, (17, 3), {"upcast"}, "INTERCHANGE r0 inside the reduce loops"),  # tiny
    (_int_matmul, (8, 24, 32), {"unroll", "block"}, "TILE r0 x r1 (4x16)"),
    (_middle_max, (3, 29, 24), {"vector"}, "in blocks of 3 vectors of 8 accumulators"),
    (_middle_max, (2, 31, 128), {"vector", "block"}, "in blocks of 8 vectors of 8"),
    (_middle_max, (1, 31, 128), {"upcast", "block"}, "in 2 blocks of 64"),  # batch 1: columns
])
def test_an_interchanged_store_is_its_loop_nest_printed_and_interpreted(monkeypatch, make, shape,
                                                                        kinds, want):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)  # (so these small kernels take threads)
    # (and share blocks shorter than a page of a row: `_shared_block`)
    monkeypatch.setattr(interchange_helpers, "page_bytes", lambda: 64)
    x, t, oracle = make(shape)
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    assert any(want in a for a in actions(opt)), actions(opt)
    # the action is in the AST: every STORE's arg is empty, its ranges say how it loops
    assert all(st.arg is None for st in opt.src)
    assert kinds <= {n.arg[1] for n in opt.toposort() if n.op is Ops.RANGE}
    got = t.numpy()
    oracle = oracle.astype(got.dtype)
    assert_same_bits(got.reshape(-1), oracle.reshape(-1))
    # the kernel interpreter runs the transformed AST on the same buffers: the same bits
    bufs = [np.zeros(b.size, b.dtype.np) for b in item.bufs]
    for i, b in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b.ensure().reshape(-1)
    run_kernel(opt, bufs)
    if np.dtype(got.dtype).kind == "f" and make in (_float_sum,):
        np.testing.assert_allclose(bufs[0], oracle.reshape(-1), rtol=1e-5, atol=1e-5)
    else:
        assert_same_bits(bufs[0], oracle.reshape(-1))


def _layernorm(x: np.ndarray) -> np.ndarray:
    d = x - x.mean(axis=1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + np.float32(1e-5))


@pytest.mark.parametrize("k, n, products", [
    (64, 71, 4),   # passes of 4 rows: four products per step, four staged row operands
    (12, 5, 4),    # tiny
    (13, 7, 1),    # prime: no passes, one product per step
    (256, 40, 4),  # long
])
def test_an_interchanged_product_keeps_its_computed_row_operand_staged(monkeypatch, k, n,
                                                                       products):
    """A layernorm fused into the linear after it, batch 1: the product is interchanged (its
    columns inside the k loop, in passes of rows when they divide k), and stage_operands still
    reads each product's row operand from a kernel-local array (rules/stage_helpers.py): one per
    product of a pass. The C kernel and the kernel interpreter give numpy's values."""
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    rng = np.random.default_rng(k * 100 + n)
    x = rng.standard_normal((1, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    t = Tensor(x).layernorm() @ Tensor(w)
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    assert any("INTERCHANGE" in a for a in actions(opt)), actions(opt)
    staged = [d for d in opt.toposort() if d.op is Ops.DEFINE_LOCAL]
    assert len(staged) == products and not any(d.op is Ops.DEFINE_LOCAL for d in low.toposort())
    want = _layernorm(x) @ w
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4)
    bufs = [np.zeros(b.size, b.dtype.np) for b in item.bufs]
    for i, b in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b.ensure().reshape(-1)
    run_kernel(opt, bufs)
    np.testing.assert_allclose(bufs[0], want.reshape(-1), rtol=1e-4, atol=1e-4)


def _interpreted(item, opt) -> np.ndarray:
    bufs = [np.zeros(b.size, b.dtype.np) for b in item.bufs]
    for i, b in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b.ensure().reshape(-1)
    run_kernel(opt, bufs)
    return bufs[0]


@pytest.mark.parametrize("shape", [(2, 19, 3), (7, 31, 13), (1, 257, 9), (64, 33, 65),
                                   (1021, 23, 9), (3, 101, 16), (5, 40, 64)])
@pytest.mark.parametrize("kind", ["sum", "max", "int"])
def test_a_transposed_reduce_moves_its_contiguous_range_last(monkeypatch, shape, kind):
    """x.permute(2, 0, 1) reduced over its last axis: out[c, a] reads x[a, b, c], contiguous
    along the output's first range, strided along the reduce's. The reorder action moves that
    range last, so the interchange runs it inside the reduce loop (one accumulator per c, each
    row of x streamed), where each c read the whole of x a column at a time. Each sum keeps its
    order over b: a running sum's bits (ints and max: numpy's), in C and in the interpreter.
    (c of whole vectors: no accumulators kept as explicit vectors, whose store is contiguous;
    found by `rulegrad fuzz --opt`'s transposed part, 3x101x16)"""
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    if kind == "int":
        x = np.random.default_rng(8).integers(-2**31, 2**31, shape).astype(np.int32)
    elif kind == "max":
        x = sprinkled(shape, np.float32, 9, SPECIAL, share=7)
    else:  # (no NaN: which NaN an inf - inf gives is not numpy's to say)
        x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    t = Tensor(x).permute(2, 0, 1)
    t = t.max(axis=2) if kind == "max" else t.sum(axis=2)
    xt = x.transpose(2, 0, 1)
    oracle = _max(xt, 2) if kind == "max" else _running_sum(xt, 2) if kind == "sum" else \
        xt.sum(2)
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    (st,) = opt.src
    moved = low.src[0].src[2]  # (c, a): c moved after a, and marked as the columns
    assert st.src[-1].arg[0] == moved.arg[0] and st.src[-1].arg[1] in ("upcast", "vector")
    # (batch 1: the output's one range is last already, nothing to reorder)
    want = "INTERCHANGE" if len(low.src[0].src) == 3 else f"REORDER r{moved.arg[0]} last, INTER"
    assert any(want in a for a in actions(opt)), actions(opt)
    got = t.numpy()
    oracle = oracle.astype(got.dtype).reshape(-1)
    assert_same_bits(got.reshape(-1), oracle)
    if kind == "sum":  # (the interpreter sums by numpy's order, as in the test above)
        np.testing.assert_allclose(_interpreted(item, opt), oracle, rtol=1e-5, atol=1e-5)
    else:
        assert_same_bits(_interpreted(item, opt), oracle)


@pytest.mark.parametrize("shape", [(1000, 64), (300, 17), (40, 9)])
def test_a_scan_down_a_strided_axis_reads_its_rows_contiguously(shape):
    # cumsum along axis 0: each window's sum reads x[.., c] strided by a row, contiguous in c.
    # opt.rules' scan_store (before interchange_store) runs it as one accumulator per column,
    # its rows' loop kept outside the columns' (tests/test_scan_action.py has its values)
    x = np.random.default_rng(10).standard_normal(shape).astype(np.float32)
    t = Tensor(x).cumsum(0)
    fired = []
    for item in t.schedule():
        opt = optimize_kernel(lower_only(item.ast))
        fired += [st for st in opt.src if st.src[2].arg[1] == "scan" and len(st.src) == 4]
    assert fired
    np.testing.assert_allclose(t.numpy(), np.cumsum(x, 0), rtol=1e-4, atol=1e-4)


def _running_sum_02(x: np.ndarray) -> np.ndarray:
    out = np.zeros(x.shape[1], x.dtype)
    for i in range(x.shape[0]):
        for k in range(x.shape[2]):
            out = out + x[i, :, k]
    return out


# (shape, interchanged): a short reduce of a few values is unrolled instead, its outputs upcast
@pytest.mark.parametrize("shape, interchanged", [
    ((13, 65521, 2), True), ((64, 257, 3), True), ((5, 40, 4), True), ((7, 13, 5), True),
    ((17, 33, 7), True), ((31, 1000, 2), True), ((3, 1021, 3), False), ((1, 509, 2), False),
    ((1, 1, 2), False)])
@pytest.mark.parametrize("kind", ["sum", "max", "int"])
def test_a_reduce_over_a_short_last_axis_runs_its_outputs_inside_the_rows(monkeypatch, shape,
                                                                          interchanged, kind):
    """A reduce over axes 0 and 2 of (a, b, k), k shorter than a vector: out[j] reads x[i, j, k],
    k contiguous and j right after k's run. The plain order vectorized k (2-7 lanes) one output
    at a time, each reading a rows far apart (max_axes5 13x65521x2 at 0.8x torch). Interchanged,
    j runs inside the row loop with k unrolled into each step ("k rows per pass"): each row
    streamed along j. Each sum keeps its order (i, then k): a running sum's bits in C (the
    kernel interpreter sums in numpy's order: within a bound)."""
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    if kind == "int":
        x = np.random.default_rng(11).integers(-2**31, 2**31, shape).astype(np.int32)
    elif kind == "max":
        x = sprinkled(shape, np.float32, 12, SPECIAL, share=7)
    else:
        x = np.random.default_rng(13).standard_normal(shape).astype(np.float32)
    t = Tensor(x).max(axis=(0, 2)) if kind == "max" else Tensor(x).sum(axis=(0, 2))
    oracle = np.squeeze(semantics.reduce(Ops.MAX, x, (0, 2), -np.inf), axis=(0, 2)) \
        if kind == "max" else _running_sum_02(x) if kind == "sum" else x.sum(axis=(0, 2))
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    fired = [a for a in actions(opt) if "INTERCHANGE" in a]
    assert bool(fired) == interchanged, actions(opt)
    if interchanged:
        j = low.src[0].src[2].arg[0]
        assert f"INTERCHANGE r{j} inside" in fired[0] and f", {shape[2]} rows per pass" in \
            fired[0], fired
    got = t.numpy()
    oracle = oracle.astype(got.dtype).reshape(-1)
    assert_same_bits(got.reshape(-1), oracle)
    if kind == "sum":
        np.testing.assert_allclose(_interpreted(item, opt), oracle, rtol=1e-5, atol=1e-5)
    else:
        assert_same_bits(_interpreted(item, opt), oracle)


@pytest.mark.parametrize("shape", [(13, 509, 8), (3, 101, 16), (5, 40, 1)])
def test_a_reduce_over_a_vector_long_last_axis_keeps_its_rows(shape):
    # k of a vector or more vectorizes in the plain order: no interchange of its outputs
    x = np.random.default_rng(14).standard_normal(shape).astype(np.float32)
    t = Tensor(x).max(axis=(0, 2))
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    if shape[2] > 1:
        assert not any("rows per pass" in a for a in actions(opt)), actions(opt)
    assert_same_bits(t.numpy(), x.max(axis=(0, 2)))
