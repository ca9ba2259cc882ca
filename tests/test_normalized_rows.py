"""Softmax's and layernorm's last step, x / s for s a value per row, computed as jax computes it:
1 / s once per row, then x * (1 / s) per element (runtime/tensor.py's `_normalized`; float16's
softmax keeps the divide). Not x / s's bits: the contract is two roundings, so within 2 ulps
of numpy's x / s, and bit for bit numpy's x * (1 / s); zeros, infinities and NaN as x / s.

The oracle is numpy on rows whose every step before the last is exact (integer rows whose sum
is 0, so the mean is 0 and the variance a sum of integers over n, rounded once with eps as numpy
rounds it), so the only rounding left to compare is the normalization's; softmax's exps are
not numpy's bits (vexp.py's core, 0.9 ulp), so its rows are compared against float64 within
the exp's and the sum's error, with inf, NaN, one-element rows and subnormal results."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

# issue 33's sweep: (shape, axis)
SWEEP = [((1, 1), -1), ((7, 13), -1), ((8192, 33), -1), ((1024, 1024), -1), ((16, 32768), -1),
         ((1, 1048576), -1), ((3, 5, 7, 11), -1), ((3, 5, 7, 11), 0), ((3, 5, 7, 11), 1)]
IDS = [f"{'x'.join(map(str, s))}_ax{a}" for s, a in SWEEP]


def _ulps(got: np.ndarray, want: np.ndarray, dt: np.dtype) -> np.ndarray:
    """|got - want| in units of dt's spacing at want (NaN and equal infinities: 0)."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    spacing = np.spacing(np.abs(want).astype(dt)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(same, 0.0, np.abs(got - want) / spacing)


def _zero_sum_rows(shape: tuple[int, ...], axis: int, dt: np.dtype, seed: int) -> np.ndarray:
    """Integers in [-3, 3] whose sum along `axis` is 0 (each value beside its negation, a 0 in
    an odd row): the mean is exactly 0, every square and partial sum exact (9 * 2^20 < 2^24)."""
    x = np.moveaxis(np.zeros(shape), axis, -1)
    n = x.shape[-1]
    half = np.random.default_rng(seed).integers(-3, 4, size=x.shape[:-1] + (n // 2,))
    x[..., : n // 2], x[..., n // 2: 2 * (n // 2)] = half, -half
    return np.moveaxis(x, -1, axis).astype(dt)


def _numpy_layernorm(x: np.ndarray, axis: int, divide: bool) -> np.ndarray:
    """numpy's layernorm of x in its accumulation type (float32 for float16): dev / s, or
    dev * (1 / s), rounded to x's dtype."""
    acc = np.float32 if x.dtype == np.float16 else x.dtype.type
    dev = x.astype(acc) - x.astype(acc).mean(axis, keepdims=True)
    s = np.sqrt((dev * dev).mean(axis, keepdims=True) + acc(1e-5))
    out = dev / s if divide else dev * (acc(1) / s)
    return out.astype(x.dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape, axis", SWEEP, ids=IDS)
def test_layernorm_is_numpys_multiply_by_the_reciprocal(shape, axis, dtype):
    """Every step before the last exact: the result is numpy's dev * (1 / s) bit for bit, and
    within 2 ulps of numpy's dev / s (1 in float16, where both round to 11 bits from 24)."""
    dt = np.dtype(dtype)
    x = _zero_sum_rows(shape, axis, dt, seed=sum(shape))
    got = Tensor(x).layernorm(axis).numpy()
    assert got.dtype == dt
    np.testing.assert_array_equal(got, _numpy_layernorm(x, axis, divide=False))
    ulps = _ulps(got, _numpy_layernorm(x, axis, divide=True), dt)
    assert ulps.max() <= (1 if dtype == "float16" else 2), ulps.max()


def test_layernorm_specials_are_the_divides():
    """A constant row (dev 0 over s = sqrt(eps): 0), a row with inf (NaN), a NaN row, a row of
    one element (0), a row of huge values (s near sqrt(float max), 1 / s still normal)."""
    x = np.array([[2.0, 2.0, 2.0, 2.0], [1.0, np.inf, 0.0, 1.0], [np.nan] * 4,
                  [3e18, -3e18, 1e18, -1e18]], np.float32)
    for rows, axis in ((x, -1), (x[:, :1], -1), (x, 0)):
        got = Tensor(rows).layernorm(axis).numpy()
        want = _numpy_layernorm(rows, axis, divide=True)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert _ulps(got, want, np.dtype(np.float32)).max() <= 2


def _softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# ulps against float64 per dtype: the exp's 0.9 (float32; float16's exp and every step round to
# 11 bits), the reciprocal's and the product's roundings (2), the sum's in the reduction
# contract's order (its relative error in ulps of the result, a few for these rows)
SOFTMAX_ULPS = {"float16": 12, "float32": 48, "float64": 16}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape, axis", SWEEP, ids=IDS)
def test_softmax_within_ulps_of_float64(shape, axis, dtype):
    dt = np.dtype(dtype)
    x = (np.random.default_rng(sum(shape)).standard_normal(shape) * 3).astype(dt)
    got = Tensor(x).softmax(axis).numpy()
    assert got.dtype == dt
    assert _ulps(got, _softmax64(x, axis), dt).max() <= SOFTMAX_ULPS[dtype]


def test_softmax_special_rows_are_the_divides():
    """Rows with +inf (NaN, as inf - inf), a NaN, all -inf (NaN), -inf beside finite values
    (weight +0), one element (1), and exps in the subnormals (x - max near -100: x * (1 / s)
    rounds on the subnormal grid as x / s does)."""
    inf, nan = np.inf, np.nan
    x = np.array([[1.0, inf, 0.0, 2.0], [1.0, nan, 0.0, 2.0], [-inf] * 4, [0.0, -inf, 1.0, -inf],
                  [0.0, -95.0, -100.0, -103.0], [0.0, 0.0, -88.0, -90.0]], np.float32)
    for rows, axis in ((x, -1), (x[:, :1], -1), (x, 0)):
        got = Tensor(rows).softmax(axis).numpy()
        want = _softmax64(rows, axis)
        assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
        number = ~np.isnan(want)  # (a NaN's sign is not part of the meaning)
        assert np.array_equal(np.signbit(got[number]), np.signbit(want[number]))
        assert _ulps(got, want, np.dtype(np.float32)).max() <= 2, (got, want)
    assert (Tensor(x[:, :1]).softmax(-1).numpy()[[0, 3, 4, 5]] == 1.0).all()


def _divides(t: Tensor) -> tuple[int, int]:
    """(FDIV nodes by a value that is not a constant, RECIPROCAL nodes) in t's kernels."""
    nodes = [n for k in t.schedule() for n in toposort(k.ast)]
    return (sum(n.op is Ops.FDIV and n.src[1].op is not Ops.CONST for n in nodes),
            sum(n.op is Ops.RECIPROCAL for n in nodes))


@pytest.mark.parametrize("shape", [(7, 13), (1024, 1024), (1, 40000)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_reciprocal_per_row_and_no_divide_per_element(shape, dtype):
    """softmax and layernorm divide once per row (the reciprocal, which the printer computes
    outside the row's loop) and multiply per element; a layernorm's mean divides by the
    constant n."""
    x = Tensor(np.ones(shape, dtype))
    assert _divides(x.softmax(-1)) == (0, 1)
    assert _divides(x.layernorm()) == (0, 1)


def _reciprocals(t: Tensor) -> int:
    """How many reciprocals t's kernels compute: each RECIPROCAL once per value its kernel
    stores (a kernel's reciprocal sits outside its reduce loops, over its output's loops)."""
    return sum(item.bufs[0].size * sum(n.op is Ops.RECIPROCAL for n in toposort(item.ast))
               for item in t.schedule())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, axis", [((7, 13), 0), ((1024, 1024), 0), ((8192, 33), 0),
                                         ((3, 5, 7, 11), 1), ((3, 5, 7, 11), 0)])
def test_a_column_takes_one_reciprocal(shape, axis, dtype):
    """Over axis 0 or a middle axis, s varies along the innermost loop: 1 / s is computed once
    per column (rangeify.rules' recip_column), not once per element beside a multiply; the
    layernorm is still numpy's dev * (1 / s) bit for bit (SWEEP's axes 0 and 1 above check
    softmax's values; a 1024-row column's sum is in the reduction contract's order, whose
    error bound grows with the rows)."""
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    columns = x.size // shape[axis]
    for t in (Tensor(x).softmax(axis), Tensor(x).layernorm(axis)):
        assert _reciprocals(t) == columns
    rows = _zero_sum_rows(shape, axis, np.dtype(dtype), seed=2)
    np.testing.assert_array_equal(Tensor(rows).layernorm(axis).numpy(),
                                  _numpy_layernorm(rows, axis, divide=False))
