"""Gradients of whole programs against torch's autograd (an independent implementation): an MLP
with layernorm and a cross-entropy loss, and an attention block. torch is a test-only extra,
never a dependency of rulegrad: without it these tests are skipped, saying so."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch", reason="torch is not installed: gradient comparison "
                            "with torch skipped (pip install torch to run it)")

rng = np.random.default_rng(0)


def weights(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape) / np.sqrt(shape[0])


def mlp(lib, x, y, w1, b1, w2, b2):
    """The same program for both libraries: layernorm -> linear -> relu -> linear ->
    cross-entropy against one-hot labels."""
    mean = x.mean(-1, keepdim=True)
    d = x - mean
    h = d / ((d * d).mean(-1, keepdim=True) + 1e-5).sqrt()
    h = (h @ w1 + b1).relu() @ w2 + b2
    logp = h.log_softmax(-1) if lib == "rg" else torch.log_softmax(h, -1)
    return -(logp * y).sum(-1).mean()


def attention(lib, s, wq, wk, wv, wo):
    q, k, v = s @ wq, s @ wk, s @ wv
    scores = q @ k.transpose(0, 1) / 8.0 if lib == "torch" else q @ k.transpose() / 8.0
    att = scores.softmax(-1) if lib == "rg" else torch.softmax(scores, -1)
    return ((att @ v @ wo + s) ** 2).mean()


def compare(fn, arrays: list[np.ndarray], trainable: list[int], dtype: str, rtol: float) -> None:
    ours = [Tensor(a.astype(dtype), requires_grad=i in trainable) for i, a in enumerate(arrays)]
    loss = fn("rg", *ours)
    loss.backward()
    theirs = [torch.tensor(a.astype(dtype), requires_grad=i in trainable)
              for i, a in enumerate(arrays)]
    tloss = fn("torch", *theirs)
    tloss.backward()
    np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=rtol)
    for i in trainable:
        np.testing.assert_allclose(ours[i].grad.numpy(), theirs[i].grad.numpy(), rtol=rtol,
                                   atol=rtol * np.abs(theirs[i].grad.numpy()).max(),
                                   err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 1e-4)])
def test_mlp_gradients_match_torch(dtype, rtol):
    x = rng.standard_normal((16, 12))
    y = np.eye(5)[rng.integers(0, 5, 16)]
    arrays = [x, y, weights(12, 24), rng.standard_normal(24) * 0.1, weights(24, 5),
              rng.standard_normal(5) * 0.1]
    compare(mlp, arrays, [0, 2, 3, 4, 5], dtype, rtol)


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 1e-4)])
def test_attention_gradients_match_torch(dtype, rtol):
    arrays = [rng.standard_normal((10, 16))] + [weights(16, 16) for _ in range(4)]
    compare(attention, arrays, [0, 1, 2, 3, 4], dtype, rtol)


ACTIVATIONS = {
    "sigmoid": (lambda x: x.sigmoid(), lambda x: torch.sigmoid(x)),
    "tanh": (lambda x: x.tanh(), lambda x: torch.tanh(x)),
    "gelu_tanh": (lambda x: x.gelu(approximate="tanh"),
                  lambda x: torch.nn.functional.gelu(x, approximate="tanh")),
    "quick_gelu": (lambda x: x.quick_gelu(), lambda x: x * torch.sigmoid(1.702 * x)),
    "abs": (lambda x: x.abs(), lambda x: torch.abs(x)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradients_at_extremes_and_zero_match_torch(name):
    """Values of a few hundred overflow exp in float32: the gradient must stay finite (the
    textbook sigmoid's is exp(300) * 0 = NaN there), and at 0 it must be torch's (abs: 0)."""
    ours_fn, torch_fn = ACTIVATIONS[name]
    v = np.concatenate([rng.uniform(300, 400, 20), rng.uniform(-400, -300, 20),
                        rng.uniform(-3, 3, 20), [0.0, -0.0, 1.0, -1.0, 80.0, -80.0]])
    v = v.astype(np.float32)
    x = Tensor(v)
    out = ours_fn(x)
    (g,) = out.sum().gradient(x)
    t = torch.tensor(v, requires_grad=True)
    tout = torch_fn(t)
    (tg,) = torch.autograd.grad(tout.sum(), t)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("xv,yv", [(0.0, 0.0), (0.0, 0.3), (0.0, -0.3), (0.0, 2.0), (2.0, 0.0),
                                   (1.5, -1.2)])
def test_pow_gradients_at_zero_match_torch(xv, yv):
    """x ** y at x == 0 or y == 0: the limits torch and tinygrad take, not 0 * inf = NaN."""
    x, y = Tensor(np.array([xv], np.float32)), Tensor(np.array([yv], np.float32))
    gx, gy = (x ** y).sum().gradient(x, y)
    tx, ty = (torch.tensor([v], requires_grad=True) for v in (xv, yv))
    tgx, tgy = torch.autograd.grad((tx ** ty).sum(), (tx, ty))
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gy.numpy(), tgy.numpy(), rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 1, 3])
def test_prod_gradient_with_zeros_matches_torch(axis):
    """d prod / d x_j is the product of the others: prod / x_j only where x_j != 0."""
    a = rng.uniform(-2, 2, (3, 4, 5, 6)).astype(np.float32)
    a[0, 1, 2, :2] = 0  # two zeros in a row: both gradients 0
    a[1, 2, 3, 3] = 0  # a lone zero: its gradient is the product of the rest
    x = Tensor(a)
    (g,) = x.prod(axis=axis).sum().gradient(x)
    t = torch.tensor(a, requires_grad=True)
    tp = t.prod() if axis is None else t.prod(dim=axis)
    (tg,) = torch.autograd.grad(tp.sum(), t)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("vals", [[0.0, 100.0], [100.0, 0.0, -50.0, 300.0], [1.0, 2.0, 3.0]])
def test_logcumsumexp_gradient_with_large_later_elements(vals):
    # exp of a later, larger element (masked out of an earlier prefix) overflows: its
    # gradient must be 0 there, not 0 * inf = NaN (tinygrad's test_logcumsumexp_numerical)
    x = Tensor(np.array(vals, np.float32), requires_grad=True)
    x.logcumsumexp().sum().backward()
    t = torch.tensor(vals, requires_grad=True)
    torch.logcumsumexp(t, 0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
