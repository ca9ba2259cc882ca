"""asin, acos and atan against numpy's values and torch's gradients. asin was Abramowitz &
Stegun 4.4.46 (2e-8 absolute: 5e-5 relative at 1e-3 in float32, 1e-5 in float64) times
sign(x), so its gradient at 0 was 0 (torch: 1), and acos and atan inherited both; atan read
x / sqrt(1 + x^2), whose x^2 overflows: atan(1e20) in float32 was 0 and atan(inf) NaN.
A float64 `interpolate` weighed its neighbours in float32 (errors of 3e-8)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor

POINTS = {
    "asin": [0.0, -0.0, 1e-3, -1e-6, 0.3, -0.4999, 0.5, -0.5, 0.7, 0.99, 0.999999, 1.0, -1.0,
             1.5, np.nan],
    "acos": [0.0, -0.0, 1e-3, -1e-6, 0.3, -0.4999, 0.5, -0.5, 0.7, 0.99, 0.999999, 1.0, -1.0,
             1.5, np.nan],
    "atan": [0.0, -0.0, 1e-3, -0.3, 1.0, -1.0, 1.0000001, 5.0, -1e10, 1e20, 1e30, np.inf,
             -np.inf, np.nan],
}
NUMPY = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan}


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", list(POINTS))
def test_inverse_trig_values_and_gradients(monkeypatch, backend, dt, fn):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    x = np.array(POINTS[fn], dt)
    with np.errstate(invalid="ignore"):
        want = NUMPY[fn](x)
    got = getattr(Tensor(x), fn)().numpy()
    assert got.dtype == want.dtype
    eps = np.finfo(dt).eps
    np.testing.assert_allclose(got, want, rtol=4 * eps, atol=0, equal_nan=True)
    num = ~np.isnan(want)  # (a NaN's sign means nothing)
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))  # -0.0 stays
    up = np.linspace(0.5, 1.5, len(x)).astype(dt)
    t = torch.tensor(x, requires_grad=True)
    getattr(torch, fn)(t).backward(torch.from_numpy(up))
    o = Tensor(x, requires_grad=True)
    getattr(o, fn)().backward(Tensor(up))
    # (near +-1 the gradient 1/sqrt(1 - x^2) is ill-conditioned: torch's has errors too)
    np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=np.sqrt(eps),
                               atol=np.finfo(dt).tiny, equal_nan=True)  # (ours: 1e-40 at 1e20)


def test_float64_interpolate_weighs_in_float64():
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 7))
    for size, corners in (((7, 5), False), ((9, 4), True), ((3, 11), False)):
        got = Tensor(x).interpolate(size, align_corners=corners).numpy()
        want = F.interpolate(torch.from_numpy(x), size, mode="bilinear",
                             align_corners=corners).numpy()
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


SMALL = [0.0, -0.0, 1e-30, -1e-9, 2e-8, 1e-5, -3e-3, 0.06, -0.3, 0.49, 0.8, -0.84]


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", ["sinh", "atanh", "erf"])
def test_odd_functions_keep_their_digits_near_zero(dt, fn):
    """(e^x - e^-x) / 2, log((1 + x) / (1 - x)) / 2 and A&S 7.1.26 cancelled: sinh, atanh
    and erf of 1e-9 were 0, and erf(1e-5) 2% off in float32. torch is the oracle."""
    x = np.array(SMALL, dt)
    t = torch.tensor(x, requires_grad=True)
    want = getattr(torch, fn)(t)
    want.backward(torch.ones_like(want))
    o = Tensor(x, requires_grad=True)
    getattr(o, fn)().backward(Tensor(np.ones_like(x)))
    got = getattr(Tensor(x), fn)().numpy()
    eps = np.finfo(dt).eps
    np.testing.assert_allclose(got, want.detach().numpy(), rtol=4 * eps, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want.detach().numpy()))
    np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=8 * eps)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_cos_is_good_to_a_few_ulps_of_one_at_any_argument(dt):
    """cos was sin(pi/2 - x), whose rounding of pi/2 - x cost |x| ulps: 2e-4 at 300 in float32,
    the range of a sinusoidal position table; sinh's infinities keep infinite gradients."""
    x = np.concatenate([np.linspace(-20, 20, 401), np.arange(0, 10000, 37.3),
                        [0.0, -0.0, np.inf, np.nan]]).astype(dt)
    with np.errstate(invalid="ignore"):
        want = np.cos(x)
    got = Tensor(x).cos().numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=8 * np.finfo(dt).eps, equal_nan=True)
    edge = np.array([np.inf, -np.inf, 30.0, -30.0], dt)
    o = Tensor(edge, requires_grad=True)
    o.sinh().backward(Tensor(np.ones_like(edge)))
    t = torch.tensor(edge, requires_grad=True)
    torch.sinh(t).backward(torch.ones_like(t))
    np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=4 * np.finfo(dt).eps)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_sin_gradient_is_cos_to_a_few_ulps_at_any_argument(dt):
    """grad_sin was SIN(pi/2 - x): the rounding of pi/2 - x cost |x| ulps (5e-4 at 1e4 in
    float32), now 1 - 2 sin(x/2)^2 as cos itself."""
    x = np.concatenate([np.linspace(-20, 20, 101), np.arange(0, 10000, 97.1), [0.0, -0.0]])
    x = x.astype(dt)
    o = Tensor(x, requires_grad=True)
    o.sin().backward(Tensor(np.ones_like(x)))
    t = torch.tensor(x, requires_grad=True)
    torch.sin(t).backward(torch.ones_like(t))
    np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=0,
                               atol=8 * np.finfo(dt).eps)
