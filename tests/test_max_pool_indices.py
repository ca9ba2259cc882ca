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


# ---------------------------------------------------------------------- without indices
# max_pool2d without return_indices: its forward is a reduce max, and its gradient went to
# every tied maximum in equal shares (amax's). Now all of it goes to the first maximum (the
# last NaN), torch's max_pool2d's, and only the backward graph picks that element
# (rules/gradient.rules' grad_pool_max). -inf windows with padding: the first element inside
# the image (torch never picks padding).
NO_INDICES = [dict(kernel_size=2), dict(kernel_size=3, stride=1),
              dict(kernel_size=3, stride=1, padding=1), dict(kernel_size=3, stride=2, padding=1),
              dict(kernel_size=2, stride=1, dilation=2), dict(kernel_size=3, stride=2,
                                                              ceil_mode=True),
              dict(kernel_size=(2, 3), stride=(1, 2))]


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("kw", NO_INDICES, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_without_indices_the_gradient_goes_to_the_first_max_as_torchs(scheduler, kw, dtype):
    from rulegrad.runtime.kernelize import using

    rng = np.random.default_rng(7)
    a = POOL[rng.integers(0, len(POOL), (2, 2, 7, 6))].astype(dtype)
    a[1, 1, :4, :4] = -np.inf  # windows of -inf only, at the padded corner too
    a[0, 1] = rng.integers(0, 2, (7, 6))  # 0/1 ties everywhere
    t = torch.tensor(a, requires_grad=True)
    tv = torch.nn.functional.max_pool2d(t, **kw)
    up = rng.standard_normal(tv.shape).astype(dtype)
    (tg,) = torch.autograd.grad(tv, t, torch.from_numpy(up))
    with using(scheduler):
        x = Tensor(a)
        v = x.max_pool2d(**kw)
        (g,) = v.gradient(x, gradient=Tensor(up))
        np.testing.assert_array_equal(v.numpy(), tv.detach().numpy())
        rtol = 1e-12 if dtype == "float64" else 1e-5  # overlapping windows add in any order
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=rtol, atol=0)


def test_without_indices_the_forward_is_the_plain_reduce_max():
    """The gradient's marker is gone before scheduling: the same kernels as the reduce max of
    the same windows (the select chain that picked the element in the forward cost 4x)."""
    a = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    x = Tensor(a)
    pooled = x.max_pool2d(kernel_size=2)
    plain = x._pool((2, 2), (2, 2)).max((-2, -1))
    ours, theirs = pooled.schedule(), plain.schedule()
    assert [k.ast for k in ours] == [k.ast for k in theirs]
