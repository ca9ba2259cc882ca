"""Review of round 51's merge (m51): wrong answers found in and around its changes, each
checked against numpy or torch."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

_INT_MIN = np.iinfo(np.int32).min


@pytest.mark.parametrize("a,b", [
    (np.array([1, -2, 3, _INT_MIN], np.int32), np.array([-1, 1, 0, 1], np.int32)),
    (np.array([1, -2, 0], np.int8), np.array([-1, 1, -3], np.int8)),
    (np.array([1, -2], np.int8), np.array([255, 1], np.uint8)),
    (np.array([1, -2], np.int16), np.array([-1.0, -0.0], np.float16)),
    (np.array([1.5, -2.0, 0.0], np.float32), np.array([-1.0, 2.0, -0.0], np.float64)),
    (np.array([1.5, -2.0], np.float64), np.array([-np.nan, 2.0], np.float16)),
    (np.array([True, False]), np.array([True, True])),
    (np.array([7, 250], np.uint8), np.array([-1, 1], np.int64)),
], ids=lambda v: str(v.dtype))
def test_copysign_has_numpys_dtype_and_value(a, b):
    # an int self gave ints (copysign(int32 min, 1) was int32 min itself) and a float self
    # kept its own dtype beside a wider float other; numpy's copysign gives the pair's float
    want = np.copysign(a, b)
    for got in (Tensor(a).copysign(Tensor(b)).numpy(), Tensor(a).copysign(b[0]).numpy()[:1]):
        w = want if got.shape == want.shape else np.copysign(a[:1], b[0])
        assert got.dtype == w.dtype, (got.dtype, w.dtype)
        np.testing.assert_array_equal(got, w)
        assert (np.signbit(got) == np.signbit(w)).all()


@pytest.mark.parametrize("dt", [np.int32, np.int8, np.float16, np.float32])
@pytest.mark.parametrize("other", [-1.0, -1, 2.5, -0.0])
def test_copysign_by_a_python_number_is_weak_as_in_numpy(dt, other):
    a = np.array([1, -2, 3], dt)
    got, want = Tensor(a).copysign(other).numpy(), np.copysign(a, other)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn,slope", [("sinh", np.cosh), ("cosh", np.sinh)])
def test_sinh_and_cosh_gradients_are_finite_where_their_values_are(dt, fn, slope):
    """In the ln 2 wide window below log(2 max) the values were made finite, but their
    gradients (cosh, sinh: as large) stayed inf there: e^(x/2) / 2 * e^(x/2)'s two factors
    summed their gradients at x/2 into e^x. numpy's cosh and sinh in float64, rounded to the
    dtype, are the oracle (torch's float64 overflows there too); values and gradients."""
    top = np.log(np.finfo(dt).max)
    x = np.concatenate([np.linspace(top - 1.0, top + 0.8, 37), [0.0, 1.5, -7.25, np.inf]])
    x = np.concatenate([x, -x]).astype(dt)
    t = Tensor(x, requires_grad=True)
    y = getattr(t, fn)()
    y.sum().backward()
    with np.errstate(over="ignore"):
        want_y = getattr(np, fn)(x.astype(np.float64)).astype(dt)
        want_g = slope(x.astype(np.float64)).astype(dt)
    rtol = 4 * np.finfo(dt).eps
    np.testing.assert_allclose(y.numpy(), want_y, rtol=rtol, atol=0)
    np.testing.assert_allclose(t.grad.numpy(), want_g, rtol=rtol, atol=0)


def test_copysign_by_arrays_of_two_dtypes_gives_each_its_own():
    # numpy's answer is kept per kind of operand: an array is one kind whatever its dtype, so
    # it is made a tensor first (its dtype then keys the answer)
    a = np.array([1.5, -2.0], np.float32)
    for other in (np.array([-1.0, 1.0], np.float32), np.array([-1.0, 1.0], np.float64),
                  np.array([-1, 1], np.int8), np.array([-1.0, 1.0], np.float32)):
        got, want = Tensor(a).copysign(other).numpy(), np.copysign(a, other)
        assert got.dtype == want.dtype, (other.dtype, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
