"""Review of round 52's merge (m52): the edges of its printer changes, each against numpy.
No wrong answer was found (the report lists what was tried); these pin the edges the round's
proofs and lanes rest on: masks that are not one run of keys inside a window (win52), float64 row
vectors' NaN, infinities and -0.0 on rows shorter than two vectors (vec52), and float16 ops
the round did not list (exp, sqrt, division, select, a cast to int8) on strided reads."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


def _masks(s: int) -> dict[str, Tensor]:
    """Masks of positions (tril's, compared: the flash action reads them as its windows)."""
    one = Tensor.ones(s, s)

    def tri(diagonal: int) -> Tensor:
        return one.tril(diagonal) != 0

    return {"tril_not_eye": tri(0) & (Tensor.eye(s) == 0),  # row 0 keeps no key
            "hole": tri(0) & ~(tri(-3) & ~tri(-6)),  # keys i-5..i-3 dropped
            "two_bands": (tri(0) & ~tri(-3)) | (tri(-20) & ~tri(-23)),
            "empty_tiles": tri(-10),  # rows 0-9 keep no key: a whole tile of them
            "upper": ~tri(-1)}


@pytest.mark.parametrize("mask", ["tril_not_eye", "hole", "two_bands", "empty_tiles", "upper"])
@pytest.mark.parametrize("s,d", [(1, 3), (3, 1), (17, 3), (70, 80), (130, 1)])
@pytest.mark.parametrize("special", ["", "nan_q", "inf_k", "inf_v", "float64_scale"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_masked_softmax_with_holes_in_its_windows_matches_numpy(mask, s, d, special, dtype):
    """Masks whose kept keys per row are not one run (a hole, two bands), or none for a whole
    tile: each tile's window spans its rows' kept keys, the holes inside it still drop theirs,
    a tile of rows that keep nothing is NaN; a NaN in Q, an inf in K or V, and a float32 head
    scaled by a numpy float64 (a float64 result) too; float64 heads take 4-lane row vectors
    in the windows (vec52). Against numpy in float64."""
    rng = np.random.default_rng(s * 100 + d)
    q, k, v = (rng.standard_normal((2, s, d)).astype(dtype) for _ in range(3))
    scale = 1 / np.sqrt(d) if special == "float64_scale" else float(1 / np.sqrt(d))
    if special == "nan_q":
        q[0, s // 2, 0] = np.nan
    if special == "inf_k":
        k[1, s - 1, 0] = np.inf
    if special == "inf_v":
        v[1, s - 1, 0] = np.inf
    m = _masks(s)[mask]
    got = ((Tensor(q) @ Tensor(k).transpose(-1, -2) * scale)
           .masked_fill(~m, -np.inf).softmax(-1) @ Tensor(v)).numpy()
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    with np.errstate(invalid="ignore"):
        sc = np.where(m.numpy(), q @ k.swapaxes(-1, -2) * float(scale), -np.inf)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        want = (p / p.sum(-1, keepdims=True) @ v).astype(np.result_type(dtype, scale))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    tol = 1e-4 if dtype is np.float32 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


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
    """float16 in float32 lanes, rounded once per op as numpy: exp's is within a half's ulp;
    sqrt, division (and a difference after it: the quotient rounded first), a select of halves
    and a cast to int8 bit for bit; over contiguous, transposed and strided reads."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((n, 6)) * 8).astype(np.float16)
    y = (rng.standard_normal((n, 6)) * 8).astype(np.float16)
    views = (lambda a: a, lambda a: a.T, lambda a: a[::2, 1::2])
    for view in views:
        X, Y, xv, yv = view(Tensor(x)), view(Tensor(y)), view(x), view(y)
        cases = [(X.abs().sqrt(), np.sqrt(np.abs(xv))), (X / Y, xv / yv),
                 (X / Y - X, xv / yv - xv),
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
