"""The gradient of a max or min over a product, against numpy.

A reduce max's gradient goes to the elements equal to the max: the backward compares the
source with the max for equality. When the source is a float sum of products (a matmul, a
conv), each kernel that recomputes it may order the sum its own way (the reduction contract:
a packed or flash kernel's FMAs, a vector reduce's partial sums), and the equality then misses
every element: `(x @ w).max(0).sum()`'s gradient was 0 (the flash kernel recomputed the product
in the backward). rules/gradient_helpers.py stores such a source once, so both sides read the
same bits. numpy's gradient: the mask of its own product's maxima (random values: no ties).
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import SCHEDULERS


@pytest.fixture(params=SCHEDULERS, autouse=True)
def scheduler(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)


@pytest.mark.parametrize("m,k,n", [(4, 6, 3), (7, 33, 5), (1, 129, 7), (33, 17, 65)])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_the_gradient_of_a_max_over_a_product_is_numpys(m, k, n, op, axis):
    rng = np.random.default_rng(m * k * n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    y = a.astype(np.float64) @ b
    top = getattr(y, op)(axis=axis, keepdims=True)
    want = ((y == top) * 2 * top) @ b.T.astype(np.float64)  # d/da of sum(top ** 2)
    x = Tensor(a, requires_grad=True)
    r = getattr(x @ Tensor(b), op)(axis)
    (r * r).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-4)


def test_the_gradient_of_a_max_pool_over_a_conv_is_numpys():
    rng = np.random.default_rng(5)
    img = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    wts = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x = Tensor(img, requires_grad=True)
    out = x.conv2d(Tensor(wts))  # (2, 4, 7, 6)
    out.max(axis=(2, 3)).sum().backward()
    conv = np.zeros((2, 4, 7, 6))
    for dy in range(3):
        for dx in range(3):
            conv += np.einsum("nchw,oc->nohw", img[:, :, dy:dy + 7, dx:dx + 6].astype(np.float64),
                              wts[:, :, dy, dx])
    hit = conv == conv.max(axis=(2, 3), keepdims=True)
    want = np.zeros(img.shape)
    for dy in range(3):
        for dx in range(3):
            want[:, :, dy:dy + 7, dx:dx + 6] += np.einsum("nohw,oc->nchw", hit, wts[:, :, dy, dx])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,wshape,pool", [
    ((2, 4, 16, 16), (8, 4, 3, 3), dict(kernel_size=(2, 2))),
    ((1, 3, 20, 19), (8, 3, 3, 3), dict(kernel_size=(3, 3), stride=2)),
    ((2, 4, 12, 12), (6, 4, 3, 3), dict(kernel_size=(3, 3), stride=1)),
])
def test_the_gradient_of_max_pool2d_over_a_conv_is_torchs(shape, wshape, pool):
    """max_pool2d's gradient (all of it to each window's first maximum) compared the windows,
    recomputed, with the max of the windows computed in another kernel: over a conv, whose sums
    each kernel may order its own way, it missed elements (x.grad 15 off, w.grad 45 at
    2x4x16x16, where a `.contiguous()` after the conv gave torch's)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    img = rng.standard_normal(shape).astype(np.float32)
    wts = rng.standard_normal(wshape).astype(np.float32)
    x, w = Tensor(img, requires_grad=True), Tensor(wts, requires_grad=True)
    x.conv2d(w).max_pool2d(**pool).sum().backward()
    tx, tw = torch.tensor(img, requires_grad=True), torch.tensor(wts, requires_grad=True)
    torch.nn.functional.max_pool2d(torch.nn.functional.conv2d(tx, tw), **pool).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)
