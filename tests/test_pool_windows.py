"""Pooling windows that do not overlap (kernel <= stride, no dilation) and large windows,
against torch: values and gradients of max_pool2d, avg_pool2d, a conv2d whose stride is its
kernel, and unfold. Such windows are cut by one reshape (`_pool_apart`: the repeat trick's
gradient summed over every repeat of the input, 4225 reads per element for a 64x64 window),
and max_pool2d's gradient finds the first maximum of a window by a prefix OR of RADIX shifts
per stored step (rules/gradient_helpers.py), so windows of K = 35, 64 and 4096 elements take
several steps, with ties, NaN and -inf at every position."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor

# (shape, kernel_size, stride, padding, ceil_mode): tiny, prime, batch 1, tall, skinny, and
# windows larger than a step of the prefix OR
CASES = [
    ((1, 1, 2, 2), 2, None, 0, False),
    ((2, 3, 7, 5), 2, 3, 0, False),
    ((2, 3, 7, 5), 2, 3, 1, True),
    ((1, 2, 13, 11), (3, 2), (4, 3), 0, True),
    ((3, 1, 31, 2), (5, 1), (5, 2), 0, False),
    ((1, 1, 1, 17), (1, 4), (1, 5), 0, True),
    ((2, 2, 10, 14), (5, 7), None, 0, False),
    ((1, 1, 64, 64), 64, None, 0, False),
    ((2, 4, 16, 16), 8, None, 0, False),
    # overlapping windows (stride < kernel): avg_pool2d sums strided views (`_window_sum`)
    ((2, 3, 13, 11), 3, 1, 1, False),
    ((1, 2, 17, 19), (5, 3), 2, 1, True),
    ((2, 1, 11, 7), (3, 2), (2, 1), 0, True),
    ((1, 1, 5, 23), (1, 4), (1, 3), 0, False),
]
SPECIAL = np.array([0.0, -0.0, 1.0, 1.0, 2.0, np.nan, -np.inf, 0.5, 2.0, 2.0])


def _data(shape, seed, special):
    rng = np.random.default_rng(seed)
    if special:  # ties, zeros of both signs, NaN and -inf anywhere in a window
        return SPECIAL[rng.integers(0, len(SPECIAL), shape)]
    return rng.standard_normal(shape)


def _kw(k, s, p, c):
    return dict(kernel_size=k, stride=s, padding=p, ceil_mode=c)


def _pooled(op: str, a: np.ndarray, kw: dict, seed: int):
    """(ours, torch's) pooled values and their gradients for one upstream gradient."""
    t = torch.tensor(a, requires_grad=True)
    tv = getattr(F, op)(t, **kw)
    up = np.random.default_rng(seed).standard_normal(tv.shape)
    (tg,) = torch.autograd.grad(tv, t, torch.from_numpy(up))
    x = Tensor(a)
    v = getattr(x, op)(**kw)
    (g,) = v.gradient(x, gradient=Tensor(up))
    return (v.numpy(), tv.detach().numpy()), (g.numpy(), tg.numpy())


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("special", [False, True])
def test_max_pool2d_values_and_gradient_are_torchs(case, special):
    shape, k, s, p, c = case
    values, grads = _pooled("max_pool2d", _data(shape, 1, special), _kw(k, s, p, c), 2)
    np.testing.assert_array_equal(*values)
    if _overlap(k, s):  # an element in several windows sums their gradients in another order
        np.testing.assert_allclose(*grads, rtol=1e-12, atol=1e-15)
    else:
        np.testing.assert_array_equal(*grads)


def _overlap(k, s) -> bool:
    """Windows k at stride s (None: k) share elements on some axis."""
    def pair(v):
        return (v, v) if isinstance(v, int) else v
    return any(a > b for a, b in zip(pair(k), pair(k if s is None else s)))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_avg_pool2d_values_and_gradient_are_torchs(case):
    shape, k, s, p, c = case
    for ours, torchs in _pooled("avg_pool2d", _data(shape, 3, False), _kw(k, s, p, c), 4):
        np.testing.assert_allclose(ours, torchs, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape, k", [((2, 3, 8, 12), (2, 3)), ((1, 2, 15, 9), (5, 3)),
                                      ((3, 1, 4, 4), (4, 4))], ids=str)
def test_a_conv_whose_stride_is_its_kernel_is_torchs(shape, k):
    rng = np.random.default_rng(5)
    a, w = rng.standard_normal(shape), rng.standard_normal((4, shape[1], *k))
    ta, tw = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
    tv = F.conv2d(ta, tw, stride=k)
    up = rng.standard_normal(tv.shape)
    tga, tgw = torch.autograd.grad(tv, (ta, tw), torch.from_numpy(up))
    x, y = Tensor(a), Tensor(w)
    v = x.conv2d(y, stride=k)
    ga, gw = v.gradient(x, y, gradient=Tensor(up))
    np.testing.assert_allclose(v.numpy(), tv.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ga.numpy(), tga.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), tgw.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("size, step", [(2, 3), (3, 3), (1, 4), (4, 5)])
def test_unfold_with_windows_apart_is_torchs(size, step):
    a = np.arange(2 * 13 * 3, dtype=np.float64).reshape(2, 13, 3)
    want = torch.tensor(a).unfold(1, size, step).numpy()
    np.testing.assert_array_equal(Tensor(a).unfold(1, size, step).numpy(), want)


@pytest.mark.parametrize("shape, k, s, d", [((2, 3, 13, 17), (3, 2), (1, 2), (2, 3)),
                                            ((1, 1, 11, 7), 2, 1, 2)], ids=str)
def test_dilated_avg_pool2d_is_torchs_unfold_mean(shape, k, s, d):
    """torch's avg_pool2d has no dilation: its oracle is F.unfold's windows, averaged."""
    a = _data(shape, 6, False)
    t = torch.tensor(a, requires_grad=True)
    n, c, h, w = shape
    kk, ss, dd = (v if isinstance(v, tuple) else (v, v) for v in (k, s, d))
    oh, ow = ((i - e * (q - 1) - 1) // t_ + 1 for i, e, q, t_ in zip((h, w), dd, kk, ss))
    tv = F.unfold(t, kk, dilation=dd, stride=ss).reshape(n, c, kk[0] * kk[1], oh, ow).mean(2)
    up = np.random.default_rng(7).standard_normal(tv.shape)
    (tg,) = torch.autograd.grad(tv, t, torch.from_numpy(up))
    x = Tensor(a)
    v = x.avg_pool2d(k, stride=s, dilation=d)
    (g,) = v.gradient(x, gradient=Tensor(up))
    np.testing.assert_allclose(v.numpy(), tv.detach().numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape, k, s, d, p", [((2, 2, 13, 17), (3, 2), (1, 2), (2, 3), 1),
                                               ((1, 3, 9, 11), 3, 2, 1, 1)], ids=str)
@pytest.mark.parametrize("fill", ["special", "-inf"])
def test_overlapping_max_pool2d_with_dilation_and_all_minus_inf_is_torchs(shape, k, s, d, p, fill):
    """Overlapping windows are pooled one axis at a time: a window of -inf and padding gives
    its gradient to its first element in the image, as torch (never to padding)."""
    a = _data(shape, 8, True) if fill == "special" else np.full(shape, -np.inf)
    values, grads = _pooled("max_pool2d", a, dict(kernel_size=k, stride=s, dilation=d,
                                                  padding=p), 9)
    np.testing.assert_array_equal(*values)
    np.testing.assert_allclose(*grads, rtol=1e-12, atol=1e-15)
