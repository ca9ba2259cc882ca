"""hunt59 (issue 31): wrong answers on programs the project had not seen. numpy is the oracle
for values and dtypes, torch for gradients.

- einsum of bools summed the products as a count (int64, `[[3, 0], ...]`) where numpy's einsum
  keeps bool: the OR of the ANDs, as our own matmul of bools already gave.
- scatter_reduce amax/amin's gradient at ties: torch splits it evenly among every element equal
  to the result, self included. Ours took a MAX of self and the src's max, so self got half and
  the tied src elements shared the other half (1/2, 1/4, 1/4 for torch's thirds); and at a
  result of -inf (a max) or +inf (a min) the identity fills of the positions no index hit tied
  too and took shares that went nowhere (self's 1/7 for torch's 1/2).
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
