"""Review of round 52's merge (m52): the edges of its printer changes, each against numpy.
No wrong answer was found (the report lists what was tried); these pin the edges the round's
proofs and lanes rest on: masks that are not monotone inside a window (win52), float64 row
vectors' NaN, infinities and -0.0 on rows shorter than two vectors (vec52), and float16 ops
the round did not list (exp, sqrt, division, select, a cast to int8) on strided reads."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


def _masks(s: int):
    i, j = Tensor.arange(s).reshape(s, 1), Tensor.arange(s).reshape(1, s)
    return {"tril_not_eye": (j <= i) & (j != i),  # row 0 keeps no key
            "band_with_hole": (j <= i) & (i - j < 5) & (j != 2),
            "odd_keys": (j <= i) & ((j % 2) == 1),
            "late_rows_only": (j <= i) & (i > s // 2)}


@pytest.mark.parametrize("mask", ["tril_not_eye", "band_with_hole", "odd_keys",
                                  "late_rows_only"])
@pytest.mark.parametrize("s,d", [(1, 3), (3, 1), (17, 3), (70, 80)])
def test_masked_softmax_with_holes_in_its_windows_matches_numpy(mask, s, d):
    """Masks of positions whose kept keys per row are not one run (a hole, every other key) or
    are none: each tile's window spans its rows' kept keys, and the holes inside it still
    drop their keys (float64, against numpy's; a row that keeps no key is NaN in both)."""
    rng = np.random.default_rng(s * 100 + d)
    q, k, v = (rng.standard_normal((2, s, d)) for _ in range(3))
    m = _masks(s)[mask]
    got = ((Tensor(q) @ Tensor(k).transpose(-1, -2) * (1 / np.sqrt(d)))
           .masked_fill(~m, -np.inf).softmax(-1) @ Tensor(v)).numpy()
    sc = np.where(m.numpy(), q @ k.swapaxes(-1, -2) * (1 / np.sqrt(d)), -np.inf)
    with np.errstate(invalid="ignore"):
        p = np.exp(sc - sc.max(-1, keepdims=True))
        want = p / p.sum(-1, keepdims=True) @ v
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 6, 7, 9, 13])
def test_float64_rows_keep_nan_infinities_and_negative_zero(n):
    """A float64 row's max, min and sum in 4-lane vectors: a NaN anywhere wins the max and min,
    infinities are kept, a row of -0.0 sums to -0.0 (numpy's), rows short of a vector too. A
    row of both zeros: the max is +0.0 and the min -0.0 (our max orders -0.0 below +0.0, as
    float32's does; numpy's sign there follows its order of visits, so it is not the oracle)."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((6, n))
    a[1, n // 2] = np.nan
    a[2, -1] = np.inf
    a[3, 0] = -np.inf
    a[4] = -0.0
    a[5] = np.where(np.arange(n) % 2, 0.0, -0.0)
    t = Tensor(a)
    pos = (a == 0) & ~np.signbit(a)
    mx = np.where(a.max(1) == 0, np.where(pos.any(1), 0.0, -0.0), a.max(1))
    mn = np.where(a.min(1) == 0, np.where(((a == 0) & np.signbit(a)).any(1), -0.0, 0.0),
                  a.min(1))
    for got, want in ((t.max(1), mx), (t.min(1), mn), (t.T.max(0), mx), (t.sum(1), a.sum(1))):
        got = got.numpy()
        np.testing.assert_allclose(got, want, rtol=1e-13, equal_nan=True)
        zero = want == 0
        assert (np.signbit(got[zero]) == np.signbit(want[zero])).all(), (got, want)


@pytest.mark.parametrize("n", [3, 8, 9, 17, 77])
def test_float16_unlisted_ops_equal_numpys_bits(n):
    """float16 in float32 lanes, rounded once per op as numpy: exp's is within a half's ulp,
    sqrt, division, a select of halves and a cast to int8 bit for bit, over contiguous,
    transposed and strided reads."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((n, 6)) * 8).astype(np.float16)
    y = (rng.standard_normal((n, 6)) * 8).astype(np.float16)
    views = (lambda a: a, lambda a: a.T, lambda a: a[::2, 1::2])
    for view in views:
        X, Y, xv, yv = view(Tensor(x)), view(Tensor(y)), view(x), view(y)
        cases = [(X.abs().sqrt(), np.sqrt(np.abs(xv))), (X / Y, xv / yv),
                 ((X > Y).where(X, Y * 2), np.where(xv > yv, xv, yv * np.float16(2))),
                 ((X * 4).cast("int8"), (xv * np.float16(4)).astype(np.int8))]
        for got, want in cases:
            got = got.numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        ex = X.exp().numpy()
        assert ex.dtype == np.float16
        np.testing.assert_allclose(ex.astype(np.float32), np.exp(xv).astype(np.float32),
                                   rtol=2 ** -10)
