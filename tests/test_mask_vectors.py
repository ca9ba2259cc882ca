"""Int and bool lanes in explicit vectors (rules/opt_helpers.py `_LANE_OPS`, printed by
backends/c/render.py's `render_vector`): a row whose value mixes int loads, compares, bool ops,
WHERE and casts with float math (a causal attention's mask) keeps its reduce in vector
accumulators. Values against numpy (softmax and attention written out in numpy, NaN where a row
is all -inf as torch gives), the action recorded on the kernel as the counted work."""

from __future__ import annotations

import math

import numpy as np
import pytest
from optimizer_actions import schedule_actions as _actions
from special_values import assert_same_bits, sprinkled

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.runtime import semantics
from rulegrad.runtime.ops import Ops

SPECIAL = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.0, 3.0]


def _vector(acts: list[str], op: str) -> bool:
    return any(a.startswith(f"VECTOR {op} over") for a in acts)


def _softmax(s: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def _attention(q, k, v, keep: np.ndarray) -> np.ndarray:
    s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2)) / math.sqrt(q.shape[-1])
    return _softmax(np.where(keep, s, -np.inf)) @ v


def _qkv(shape, dt, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dt) for _ in range(3)]


def _masks(n: int) -> dict:
    """A causal mask (true where kept) built each usual way."""
    ar = Tensor.arange(n)
    return {"tril": lambda: Tensor.ones(n, n).tril() > 0,
            "arange": lambda: ar[:, None] >= ar[None, :],
            "triu_not": lambda: Tensor.ones(n, n, dtype="bool").triu(1).logical_not()}


# ---------------------------------------------------------------- causal attention
@pytest.mark.parametrize("n", [1, 8, 97, 333])
@pytest.mark.parametrize("how", ["sdpa", "tril", "arange", "masked_fill"])
def test_causal_attention_matches_numpy_and_its_row_max_is_vectors(n, how):
    q, k, v = _qkv((2, n, 16), np.float32, seed=n)
    tq, tk, tv = (Tensor(a) for a in (q, k, v))
    if how == "sdpa":
        t = tq.scaled_dot_product_attention(tk, tv, is_causal=True)
    else:
        s = tq @ tk.transpose(-2, -1) / math.sqrt(16)
        if how == "masked_fill":
            s = s.masked_fill(Tensor.ones(n, n, dtype="bool").triu(1), -math.inf)
        else:
            s = _masks(n)[how]().where(s, -math.inf)
        t = s.softmax(-1) @ tv
    acts = _actions(t)
    keep = np.tril(np.ones((n, n), bool))
    np.testing.assert_allclose(t.numpy(), _attention(q, k, v, keep), rtol=2e-5, atol=2e-6)
    if n >= 8:  # (a row shorter than a vector keeps its scalar loop)
        assert _vector(acts, "MAX")
    # the masked lanes' -inf never reaches a vector exp (opt.rules' mask_actions); a 1 x 1
    # triangle built from positions (tril, triu: range indices) keeps its one score, a select
    # the rules fold away
    if n > 1 or how in ("tril", "arange"):
        assert any(a.startswith("MASK EXP") for a in acts)


@pytest.mark.parametrize("dt", [np.float16, np.float64])
def test_causal_attention_of_other_float_widths_matches_numpy(dt):
    q, k, v = _qkv((1, 2, 41, 8), dt, seed=3)
    t = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True)
    assert any(a.startswith("MASK EXP") for a in _actions(t))
    keep = np.tril(np.ones((41, 41), bool))
    want = _attention(q.astype(np.float64), k, v.astype(np.float64), keep)
    tol = 2e-2 if dt is np.float16 else 1e-12
    np.testing.assert_allclose(t.numpy().astype(np.float64), want, rtol=tol, atol=tol)


def test_rows_all_masked_give_nan_as_torch():
    # rows 0..2 keep nothing: softmax of all -inf is NaN (torch's too), the others exact
    n = 29
    q, k, v = _qkv((n, 8), np.float32, seed=5)
    ar = Tensor.arange(n)
    mask = ar[:, None] >= ar[None, :] + 3
    s = (Tensor(q) @ Tensor(k).T).div(math.sqrt(8))
    t = mask.where(s, -math.inf).softmax(-1)
    acts = _actions(t)
    keep = np.arange(n)[:, None] >= np.arange(n)[None, :] + 3
    want = _softmax(np.where(keep, (q.astype(np.float64) @ k.T) / math.sqrt(8), -np.inf))
    got = t.numpy()
    assert np.isnan(got[:3]).all() and not np.isnan(got[3:]).any()
    np.testing.assert_allclose(got[3:], want[3:], rtol=2e-5, atol=1e-7)
    assert _vector(acts, "MAX") and any(a.startswith("MASK EXP") for a in acts)


@pytest.mark.parametrize("keep_first", [True, False])
def test_exp_of_a_masked_value_matches_numpy(keep_first):
    # exp(where(m, x, k) - y) with the select taken out of the exp: every special value of x
    # and of the row's y (NaN, +-inf, +-0.0), both arms' orders
    x = sprinkled((6, 19), np.float32, 7, SPECIAL)
    y = sprinkled((6, 1), np.float32, 8, SPECIAL)
    m = np.random.default_rng(9).random((6, 19)) < 0.5
    k = np.float32(-np.inf)
    tm, tx, ty = Tensor(m), Tensor(x), Tensor(y)
    sel = tm.where(tx, -math.inf) if keep_first else tm.where(-math.inf, tx)
    t = (sel - ty).exp()
    assert any(a.startswith("MASK EXP") for a in _actions(t))
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.exp((np.where(m, x, k) if keep_first else np.where(m, k, x)) - y)
    got = t.numpy()  # (libm's expf and numpy's exp may differ in the last bit)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got == 0, want == 0)
    np.testing.assert_allclose(got, want, rtol=3e-7)


# ---------------------------------------------------------------- each lane op, bit for bit
def _rowmax(x: np.ndarray) -> np.ndarray:
    return np.squeeze(semantics.reduce(Ops.MAX, x, (1,), -np.inf), axis=1)


@pytest.mark.parametrize("cols", [8, 13, 64, 97])
def test_where_of_int_compare_row_max_bits_equal_numpy(cols):
    # int32 loads, + on int lanes, <, ==, OR and a bool WHERE of float lanes, with NaN, +-0.0
    # and +-inf in every position, and a partial last vector
    rows = 5
    x = sprinkled((rows, cols), np.float32, cols, SPECIAL)
    i = np.arange(rows, dtype=np.int32)[:, None] * 3 - 4
    j = np.arange(cols, dtype=np.int32)[None, :] * 2 - 7
    ti, tj = Tensor(i), Tensor(j)
    keep = ((ti + 1) < tj) | ((ti + 1) == tj)
    t = keep.where(Tensor(x), -0.0).max(axis=1)
    assert _vector(_actions(t), "MAX")
    want = _rowmax(np.where(((i + 1) < j) | ((i + 1) == j), x, np.float32(-0.0)))
    assert_same_bits(t.numpy(), want)


@pytest.mark.parametrize("cols", [21, 40])
def test_float_compares_casts_and_bool_loads_bits_equal_numpy(cols):
    # a float compare with NaN (!= holds, < does not), a bool buffer read as lanes, int -> float
    # and bool -> float casts, XOR and AND of masks, each inside a row sum's vectors
    rows = 4
    rng = np.random.default_rng(cols)
    x = sprinkled((rows, cols), np.float32, cols + 1, SPECIAL)
    y = sprinkled((rows, cols), np.float32, cols + 2, SPECIAL)
    b = rng.random((rows, cols)) < 0.5
    n = rng.integers(-5, 6, (rows, cols)).astype(np.int32)
    tx, ty, tb, tn = Tensor(x), Tensor(y), Tensor(b), Tensor(n)
    m = ((tx != ty) ^ tb) & ((tx < ty) | tb)
    t = (m.cast("float32") + tn.cast("float32") * 0.5).sum(axis=1)
    assert _vector(_actions(t), "ADD")
    with np.errstate(invalid="ignore"):
        mm = ((x != y) ^ b) & ((x < y) | b)
    want = (mm.astype(np.float32) + n.astype(np.float32) * np.float32(0.5)).sum(axis=1)
    np.testing.assert_array_equal(t.numpy(), want)  # small integers and halves: exact sums


def test_int_and_bool_results_of_float_lanes_bits_equal_numpy():
    # a float -> bool (NaN is true) cast on lanes, and a WHERE of int lanes, read back as floats
    # in a row max; float -> int (truncation) on the same rows stays scalar (a vector
    # conversion's NaN and out-of-range lanes are not the IR's cast: tests/test_review_50b.py)
    x = np.array([[0.5, -1.5, np.nan, 0.0, -0.0, 2.9, -7.2, 3.0, 1.0, -2.0, 100.25]] * 3,
                 np.float32)
    x[1] *= -1
    with np.errstate(invalid="ignore"):
        ints = np.where(np.isnan(x), 7, np.nan_to_num(x).astype(np.int32))
    want = np.where(x != 0, ints, -3).astype(np.float32).max(axis=1)
    tx = Tensor(x)
    t = tx.cast("bool").where(Tensor(ints), -3).cast("float32").max(axis=1)
    assert _vector(_actions(t), "MAX")
    assert_same_bits(t.numpy(), want)
    w = tx.cast("bool").where(tx.isnan().where(7, tx.cast("int32")), -3)
    t = w.cast("float32").max(axis=1)
    assert not _vector(_actions(t), "MAX")
    assert_same_bits(t.numpy(), want)


# ---------------------------------------------------------------- elementwise stores
def _kinds(t: Tensor) -> set[str]:
    (item,) = t.schedule()
    opt = optimize_kernel(lower_only(item.ast))
    return {n.arg[1] for n in opt.toposort() if n.op is Ops.RANGE}


@pytest.mark.parametrize("cols", [8, 13, 31, 1031])
def test_where_store_is_explicit_vectors_bits_equal_numpy(cols):
    # where(x > 0, x, y) with y broadcast over rows, and a causal mask of int positions picking
    # x or -0.0: NaN, +-0.0 and +-inf in every lane, rows ending in an overlapping vector
    rows = 3
    x = sprinkled((rows, cols), np.float32, cols, SPECIAL)
    y = sprinkled((1, cols), np.float32, cols + 1, SPECIAL)
    ar, ac = Tensor.arange(rows), Tensor.arange(cols)
    for t, want in (
            ((Tensor(x) > 0).where(Tensor(x), Tensor(y)), np.where(x > 0, x, y)),
            ((ar[:, None] >= ac[None, :]).where(Tensor(x), -0.0),
             np.where(np.arange(rows)[:, None] >= np.arange(cols)[None, :], x,
                      np.float32(-0.0)))):
        assert "vector" in _kinds(t)  # (tests run 256-bit vectors: conftest.py)
        assert_same_bits(t.numpy(), want.astype(np.float32))
