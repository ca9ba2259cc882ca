"""hunt59 (issue 31): wrong answers on programs the project had not seen. numpy is the oracle
for values and dtypes, torch for gradients.

- einsum of bools summed the products as a count (int64, `[[3, 0], ...]`) where numpy's einsum
  keeps bool: the OR of the ANDs, as our own matmul of bools already gave.
- scatter_reduce amax/amin's gradient at ties: torch splits it evenly among every element equal
  to the result, self included. Ours took a MAX of self and the src's max, so self got half and
  the tied src elements shared the other half (1/2, 1/4, 1/4 for torch's thirds); and at a
  result of -inf (a max) or +inf (a min) the identity fills of the positions no index hit tied
  too and took shares that went nowhere (self's 1/7 for torch's 1/2).
- lerp was `self + (end - self) * w` at every weight: at w = 1 it lost end (lerp(1e8, 1, 1) was
  0); torch's takes it from end at and above a weight of 0.5. interpolate's linear mode was a
  lerp too, so between two equal infinities inf - inf gave NaN (`[inf, inf, inf, 2]` resized to
  7 was all NaN); it is torch's weighted sum w0 * x0 + w1 * x1 now, with torch's coordinates
  past the last element (the weight kept, the element read twice).
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

RNG = np.random.default_rng(59)
B = RNG.integers(0, 2, (2, 3, 4)).astype(bool)
V = RNG.integers(0, 2, 4).astype(bool)
SQ = RNG.integers(0, 2, (5, 5)).astype(bool)

# formula, operands: every one reduces a letter (a plain permute or diagonal never summed)
EINSUMS = [
    ("ij,kj->ik", (B[0], B[1])),
    ("ij,j", (B[1], V)),  # implicit output
    ("...ij,...kj->...ik", (B, B)),
    ("bij->j", (B,)),
    ("ii", (SQ,)),  # a trace
    ("ij,ij->", (SQ, SQ.T)),
    ("bij,bkj,k->bi", (B, B, B[0, :, 0])),
]


@pytest.mark.parametrize("formula,ops", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum_of_bools_is_numpys_or_of_ands(formula, ops):
    want = np.einsum(formula, *ops)
    got = Tensor.einsum(formula, *[Tensor(o) for o in ops]).numpy()
    assert got.dtype == want.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float16])
def test_einsum_keeps_narrow_dtypes(dtype):
    """The same rule for the other dtypes: the sum wraps (or rounds) in the operands' dtype."""
    a = (B[0] * 100).astype(dtype)
    want = np.einsum("ij,kj->ik", a, a)
    got = Tensor.einsum("ij,kj->ik", Tensor(a), Tensor(a)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


INF = np.inf
# self, src, index (along dim 0 of a 1-d self): ties of self with src, ties within src,
# infinities at the identity, untouched positions
SCATTERS = [
    ([3.0, 1.0, 2.0], [3.0, 3.0, 1.0, 2.0], [0, 0, 1, 2]),
    ([5.0, 0.0, -2.0, 7.0], [5.0, 0.0, 0.0, -2.0, -2.0, -2.0], [0, 1, 1, 2, 2, 2]),
    ([-INF, 1.0, 2.0, INF], [-INF, 1.0, 2.0, 2.0, INF, INF], [0, 1, 2, 2, 3, 3]),
    ([-INF, -INF, 4.0], [-INF, -INF, -INF], [1, 1, 0]),
    ([INF, 0.5, -INF], [INF, 0.5, 0.5], [0, 1, 1]),
]


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(SCATTERS)))
def test_scatter_reduce_extremum_gradient_splits_ties_as_torch(case, dtype, reduce):
    torch = pytest.importorskip("torch")
    s, src = (np.array(v, dtype) for v in SCATTERS[case][:2])
    idx = np.array(SCATTERS[case][2])
    if reduce == "amin":
        s, src = -s, -src
    weights = np.arange(1, len(s) + 1, dtype=dtype)  # each output's gradient its own
    a, b = Tensor(s, requires_grad=True), Tensor(src, requires_grad=True)
    out = a.scatter_reduce(0, Tensor(idx), b, reduce=reduce)
    (out * Tensor(weights)).sum().backward()
    ta, tb = torch.tensor(s, requires_grad=True), torch.tensor(src, requires_grad=True)
    tout = ta.scatter_reduce(0, torch.tensor(idx), tb, reduce=reduce)
    (tout * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_extremum_gradient_2d_along_each_dim(reduce):
    """Ties of self with src and within src, along either dim of a 2-d self, with the index
    and src smaller than self (positions no index hits keep self and its gradient)."""
    torch = pytest.importorskip("torch")
    s = RNG.integers(-2, 3, (4, 5)).astype(np.float64)
    src = RNG.integers(-2, 3, (3, 4)).astype(np.float64)
    for dim in (0, 1):
        idx = RNG.integers(0, s.shape[dim], (3, 4))
        g = RNG.standard_normal(s.shape)
        a, b = Tensor(s, requires_grad=True), Tensor(src, requires_grad=True)
        (a.scatter_reduce(dim, Tensor(idx), b, reduce=reduce) * Tensor(g)).sum().backward()
        ta, tb = torch.tensor(s, requires_grad=True), torch.tensor(src, requires_grad=True)
        (ta.scatter_reduce(dim, torch.tensor(idx), tb, reduce=reduce) * torch.tensor(g)
         ).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_scatter_reduce_extremum_values_unchanged(scheduler):
    """The forward values (NaN, infinities, ints) are numpy's maximum.at / minimum.at."""
    s = np.array([1.0, np.nan, -INF, 3.0, INF, 0.0], np.float32)
    src = np.array([2.0, 0.0, -INF, np.nan, -INF, 5.0, -1.0], np.float32)
    idx = np.array([0, 1, 2, 3, 4, 4, 5])
    ints = (np.array([1, 0, -2**31, 3, 2**31 - 1, 0], np.int32),
            np.array([2, 0, -2**31, -7, -2**31, 5, -1], np.int32))
    for reduce, ufunc in (("amax", np.maximum), ("amin", np.minimum)):
        for a, b in ((s, src), ints):
            want = a.copy()
            ufunc.at(want, idx, b)
            got = Tensor(a).scatter_reduce(0, Tensor(idx), Tensor(b), reduce=reduce)
            np.testing.assert_array_equal(got.realize(scheduler=scheduler).numpy(), want)


# lerp: torch's two forms (from self below a weight of 0.5, from end at and above it), so the
# endpoints are exact: self + (end - self) * 1 gave 0 for lerp(1e8, 1, 1)
def _ends(dtype) -> tuple[np.ndarray, np.ndarray]:
    big = float(np.finfo(dtype).max) / 4
    a = np.array([big, 1.0, 3.0, 0.1, big, -2.5, 7.0, 1e-3], dtype)
    b = np.array([1.0, big, 1e-3, 0.7, -big, 2.5, 7.0, -1e-3], dtype)
    return a, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("as_tensor", [False, True], ids=["scalar", "tensor"])
def test_lerp_reaches_its_endpoints_exactly(as_tensor, dtype):
    a, b = _ends(dtype)
    for w, want in ((0.0, a), (1.0, b)):
        weight = Tensor(np.full(a.shape, w, dtype)) if as_tensor else w
        got = Tensor(a).lerp(Tensor(b), weight).numpy()
        np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("w", [0.0, 0.25, 0.4999, 0.5, 0.75, 1.0, -0.7, 1.5])
def test_lerp_is_torchs_at_every_weight(w):
    torch = pytest.importorskip("torch")
    a, b = (np.append(v, [np.inf, 3.0, -np.inf]) for v in _ends(np.float64))
    b[-3:] = [np.inf, np.inf, 2.0]
    want = torch.lerp(torch.tensor(a), torch.tensor(b), w).numpy()
    # torch's vector loop fuses its product and sum (one rounding), ours rounds twice: apart
    # by the product's rounding at most, an ulp of |end - self|
    slack = np.where(np.isfinite(want), 2.3e-16 * np.abs(b - a), 0)
    for weight in (w, Tensor(np.full(a.shape, w))):
        got = Tensor(a).lerp(Tensor(b), weight).numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        same = np.isnan(want) | (got == want) | (np.abs(got - want) <= slack)
        assert same.all(), (got, want)


def test_lerp_gradient_is_torchs_on_both_sides_of_half():
    torch = pytest.importorskip("torch")
    a, b = RNG.standard_normal(6), RNG.standard_normal(6)
    w = np.array([-0.5, 0.0, 0.3, 0.5, 0.9, 1.2])
    ta, tb, tw = (torch.tensor(v, requires_grad=True) for v in (a, b, w))
    (torch.lerp(ta, tb, tw) * torch.arange(1.0, 7.0, dtype=torch.float64)).sum().backward()
    xa, xb, xw = (Tensor(v, requires_grad=True) for v in (a, b, w))
    (xa.lerp(xb, xw) * Tensor(np.arange(1.0, 7.0))).sum().backward()
    for ours, theirs in ((xa, ta), (xb, tb), (xw, tw)):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-14)


def _linear_reference(x: np.ndarray, size: int, corners: bool) -> np.ndarray:
    """torch's linear resize of the last axis in float64: w0 * x[lo] + w1 * x[hi], the source
    coordinate clamped at 0 only (past the last element hi is lo, the weights kept)."""
    n, out = x.shape[-1], np.arange(size)
    src = out * (n - 1) / max(size - 1, 1) if corners else np.maximum((out + 0.5) * n / size
                                                                       - 0.5, 0)
    lo = np.floor(src).astype(int)
    hi, f = np.minimum(lo + 1, n - 1), src - lo
    with np.errstate(invalid="ignore"):
        return x[..., lo] * (1 - f) + x[..., hi] * f


@pytest.mark.parametrize("corners", [False, True])
@pytest.mark.parametrize("size", [1, 3, 5, 7, 8, 13])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpolate_of_infinite_runs_is_infinite(dtype, size, corners):
    """Between two equal infinities a linear resize is that infinity (the lerp gave inf - inf,
    NaN: `[inf, inf, inf, 2]` resized to 7 was all NaN where torch gives inf)."""
    x = np.array([[[np.inf, np.inf, np.inf, 2.0, -np.inf, -np.inf, 0.5, 1.0, np.inf]]], dtype)
    got = Tensor(x).interpolate((size,), align_corners=corners).numpy()
    want = _linear_reference(x.astype(np.float64), size, corners)
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    assert got.dtype == x.dtype


def test_interpolate_2d_infinite_plateau_is_torchs():
    torch = pytest.importorskip("torch")
    x = np.full((1, 1, 4, 5), np.inf, np.float32)
    x[..., 3, :] = 1.0
    got = Tensor(x).interpolate((7, 9)).numpy()
    want = torch.nn.functional.interpolate(torch.tensor(x), (7, 9), mode="bilinear").numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
