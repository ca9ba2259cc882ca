"""abs at its kink, against torch: the gradient is ctx * sign(x), so 0 at 0 for a finite
incoming gradient, and NaN there when the incoming gradient is infinite (sqrt(abs(x)),
log(abs(x)) and abs(x) ** 0.5 at 0: inf * 0), where the earlier where-built abs masked it to
0. The forward stays numpy's abs bit for bit (abs(-0.0) is +0.0, NaN stays NaN)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor

X = np.array([0.0, -0.0, 1.5, -2.0, 1e-30, -np.inf, np.inf], np.float64)
CHAINS = {
    "abs": (lambda t: t.abs(), lambda t: t.abs()),
    "sqrt_abs": (lambda t: t.abs().sqrt(), lambda t: t.abs().sqrt()),
    "log_abs": (lambda t: t.abs().log(), lambda t: t.abs().log()),
    "abs_pow_half": (lambda t: t.abs() ** 0.5, lambda t: t.abs() ** 0.5),
    "abs_squared": (lambda t: t.abs() * t.abs(), lambda t: t.abs() * t.abs()),
}


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("chain", list(CHAINS))
def test_abs_gradient_at_its_kink_is_torchs(monkeypatch, backend, chain):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    ours, theirs = CHAINS[chain]
    x = Tensor(X, requires_grad=True)
    ours(x).sum().backward()
    t = torch.tensor(X, requires_grad=True)
    theirs(t).sum().backward()
    # NaN exactly where torch has NaN (assert_allclose: equal_nan), the rest to rounding
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_abs_forward_is_numpys_bit_for_bit(dt):
    a = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, -3.5, 2.0, np.finfo(dt).min,
                  np.finfo(dt).smallest_subnormal, -np.finfo(dt).smallest_subnormal], dt)
    got, want = Tensor(a).abs().numpy(), np.abs(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got).any()
