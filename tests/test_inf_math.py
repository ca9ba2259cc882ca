"""logaddexp, softplus, asinh and acosh at infinities, large and negative values, against
torch. logaddexp was exp(x - m) + exp(y - m) with m the max: NaN wherever m was infinite
(softplus(inf), logaddexp(0, inf)); asinh was log(x + sqrt(x^2 + 1)), which cancels for x < 0
(-inf at -1e4 in float32, NaN at -inf), and asinh/acosh squared x, which overflows (inf at
1e30 in float32)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor

INF = np.inf


@pytest.fixture(params=["c", "interp"])
def backend(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_logaddexp_and_softplus_at_infinities(backend, dt):
    a = np.array([0, INF, -INF, INF, 1, np.nan, -3, 5, -INF, 80], dt)
    b = np.array([INF, 0, -INF, INF, 1, 0, -INF, 2, 4, -80], dt)
    got = Tensor(a).logaddexp(Tensor(b)).numpy()
    want = torch.logaddexp(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dt).eps, atol=0)
    x = np.array([INF, -INF, 30, 0, -30, np.nan, 100], dt)
    # numpy's logaddexp (torch's softplus returns x itself past x = 20: 1e-15 off in float64)
    with np.errstate(invalid="ignore"):
        ref = np.logaddexp(x, 0)
    np.testing.assert_allclose(Tensor(x).softplus().numpy(), ref,
                               rtol=4 * np.finfo(dt).eps, atol=0)
    np.testing.assert_allclose(Tensor(x).softplus().numpy(),
                               F.softplus(torch.from_numpy(x)).numpy(), rtol=1e-6, atol=0)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_asinh_and_acosh_over_their_whole_range(backend, dt):
    big = np.finfo(dt).max / 4
    x = np.array([-INF, -big, -1e30, -1e4, -100, -1.5, -1e-10, -0.0, 0.0, 1e-10, 0.7, 3, 1e4,
                  1e30, big, INF, np.nan], dt)
    got = Tensor(x).asinh().numpy()
    want = torch.asinh(torch.from_numpy(x)).numpy()
    # (log(1 + a) for small a keeps ~1e-7 absolute: relative to asinh a ~ a that is ~2e-5)
    np.testing.assert_allclose(got, want, rtol=3e-5 if dt == np.float32 else 1e-12, atol=0)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    y = np.array([1, 1.5, 3, 1e4, 1e30, big, INF], dt)
    np.testing.assert_allclose(Tensor(y).acosh().numpy(), torch.acosh(torch.from_numpy(y)).numpy(),
                               rtol=3e-5 if dt == np.float32 else 1e-10, atol=0)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_asinh_and_acosh_gradients(backend, dt):
    # each branch of the piecewise form must not leak a NaN gradient where it is not chosen
    # (0 * log'(0) at x = 0, 0 * (x^2)'(inf) at inf)
    x = np.array([-INF, -1e30, -3.0, -1e-10, -0.0, 0.0, 1e-10, 0.5, 1e4, 1e30, INF], dt)
    for mine, theirs, v in ((Tensor.asinh, torch.asinh, x),
                            (Tensor.acosh, torch.acosh, np.abs(x[2:]) + 1.5)):
        t = torch.tensor(v, requires_grad=True)
        theirs(t).sum().backward()
        y = Tensor(v, requires_grad=True)
        mine(y).sum().backward()
        # (torch squares 1e30 to inf in float32 and gives 0 for 1e-30)
        np.testing.assert_allclose(y.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-29)
