"""A tensor that needs a gradient is a variable of its own, against torch.

Graph nodes are shared by value, so a constant leaf (`Tensor(3.0)`, `Tensor.ones(3)`) or a
leaf computed from tensors that need no gradient was the very node an equal constant or
computation elsewhere in the loss builds, and backward summed both uses' gradients into it.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch")


def _ones(shape):
    return Tensor.ones(*shape), torch.ones(*shape)


# (name, make: () -> (rulegrad leaf, torch leaf), loss: (leaf, lib) -> scalar)
CASES = [
    ("scalar_times_equal_constant", lambda: (Tensor(3.0), torch.tensor(3.0)),
     lambda w, T: (w * 3.0).sum()),
    ("scalar_plus_equal_constant", lambda: (Tensor(2.0), torch.tensor(2.0)),
     lambda w, T: (w + 2.0).sum()),
    ("ones_times_one", lambda: _ones((3,)), lambda w, T: (w * 1.0).sum()),
    ("full_times_equal_full", lambda: (Tensor.full((2, 3), 2.0), torch.full((2, 3), 2.0)),
     lambda w, T: (w * w.detach() * 0 + w * 2.0).sum()),
    ("zeros_as_a_bias", lambda: (Tensor.zeros(4), torch.zeros(4)),
     lambda w, T: ((w + 0.0) * (w + 1.0)).sum()),
]


@pytest.mark.parametrize("name,make,loss", CASES, ids=[c[0] for c in CASES])
def test_a_constant_leaf_gets_its_own_gradient(name, make, loss):
    w, tw = make()
    w.requires_grad_()
    tw.requires_grad_()
    loss(w, Tensor).backward()
    loss(tw, torch).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)


def test_a_constant_leaf_made_with_requires_grad_gets_torchs_gradient():
    w = Tensor(3.0, requires_grad=True)
    tw = torch.tensor(3.0, requires_grad=True)
    (w * 3.0 + w * w).backward()
    (tw * 3.0 + tw * tw).backward()
    assert w.grad.numpy() == tw.grad.item()  # 3 + 2*3 = 9, the old code gave 6 + 6 = 12


def test_a_leaf_computed_from_plain_tensors_is_a_variable_of_its_own():
    a = np.array([1.0, 2.0, 5.0], np.float32)
    x, tx = Tensor(a), torch.tensor(a)
    y, ty = x * 2, (tx * 2).requires_grad_()
    y.requires_grad_()
    (y * (x * 2)).sum().backward()  # x * 2 again: an equal value, not the variable y
    (ty * (tx * 2)).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())


def test_a_value_computed_from_a_variable_passes_its_gradient_on():
    a = np.array([1.0, -2.0], np.float32)
    p, tp = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    q, tq = p * 2, tp * 2
    q.requires_grad_()
    tq.retain_grad()
    (q * q).sum().backward()
    (tq * tq).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy())
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy())


def test_sgd_on_a_constant_initialized_parameter_follows_torch():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((3, 4, 5)).astype(np.float32)
    w, b = Tensor.ones(5).requires_grad_(), Tensor.zeros(5).requires_grad_()
    tw, tb = torch.ones(5, requires_grad=True), torch.zeros(5, requires_grad=True)
    for x in xs:
        loss = ((Tensor(x) * w + b) * 1.0 + b * 0.0).square().mean()
        tloss = ((torch.tensor(x) * tw + tb) * 1.0 + tb * 0.0).square().mean()
        w.grad = b.grad = None
        loss.backward()
        tloss.backward()
        with torch.no_grad():
            for t in (tw, tb):
                t -= 0.1 * t.grad
                t.grad = None
        w.assign(w - w.grad * 0.1).realize()
        b.assign(b - b.grad * 0.1).realize()
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), tb.detach().numpy(), rtol=1e-5, atol=1e-7)
