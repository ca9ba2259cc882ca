"""max_pool2d with return_indices against torch: the index of the first of a window's maxima
(the last NaN when the window holds one: torch's kernel takes `val > max || isnan(val)`), the
value that element (so -0.0 where it comes first), and the gradient going to it alone. The
index used to be out of range for a window holding NaN, and ties shared the gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor

POOL = np.array([0.0, -0.0, 1.0, 1.0, 2.0, np.nan, -np.inf, 0.5])


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=2, stride=1, dilation=2),
                                dict(kernel_size=3, stride=2, ceil_mode=True)])
@pytest.mark.parametrize("seed", range(3))
def test_values_indices_and_gradient_are_torchs(monkeypatch, backend, kw, seed):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    rng = np.random.default_rng(seed)
    a = POOL[rng.integers(0, len(POOL), (2, 2, 7, 6))]
    t = torch.tensor(a, requires_grad=True)
    tv, ti = torch.nn.functional.max_pool2d(t, return_indices=True, **kw)
    g = rng.standard_normal(tv.shape)
    (tv * torch.from_numpy(g)).sum().backward()
    x = Tensor(a, requires_grad=True)
    v, i = x.max_pool2d(return_indices=True, **kw)
    (v * Tensor(g)).sum().backward()
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    got, want = v.numpy(), tv.detach().numpy()
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    # (an element that is the max of overlapping windows sums their gradients: to rounding)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=0)
