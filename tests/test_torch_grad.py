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
