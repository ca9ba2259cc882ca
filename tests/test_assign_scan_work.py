"""An assign's search for lazy readers of its target costs work linear in the steps of a loop
(runtime/tensor.py: `readers_of`). A manual loop that keeps its lazy losses in a list and
assigns each step once walked every kept loss's graph again at each assign: quadratic in the
steps. The work is counted (graph nodes the tensor module's walks return), never timed; the
values are checked against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rulegrad.runtime.tensor as tensor_module
from rulegrad import Tensor

LR = 0.01


def _loop(steps: int, a: np.ndarray, w0: np.ndarray) -> tuple[list[Tensor], Tensor]:
    """SGD on sum((a @ w)^2), each step's loss kept lazy in a list."""
    w = Tensor(w0.copy(), requires_grad=True).realize()
    x = Tensor(a)
    losses = []
    for _ in range(steps):
        loss = ((x @ w) ** 2).sum()
        loss.backward()
        losses.append(loss)
        w.assign(w - LR * w.grad)
        w.grad = None
    return losses, w


def _torch_loop(steps: int, a: np.ndarray, w0: np.ndarray) -> tuple[list[float], np.ndarray]:
    w = torch.tensor(w0.copy(), requires_grad=True)
    x = torch.tensor(a)
    losses = []
    for _ in range(steps):
        loss = ((x @ w) ** 2).sum()
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            w -= LR * w.grad
        w.grad = None
    return losses, w.detach().numpy()


def _visits(monkeypatch, steps: int, a: np.ndarray, w0: np.ndarray) -> int:
    count = [0]
    walk = tensor_module.toposort

    def counting(root, stop=None):
        order = walk(root, stop)
        count[0] += len(order)
        return order

    monkeypatch.setattr(tensor_module, "toposort", counting)
    losses, w = _loop(steps, a, w0)
    monkeypatch.setattr(tensor_module, "toposort", walk)
    assert len(losses) == steps and w.shape == w0.shape  # (kept alive until counted)
    return count[0]


def test_reader_scan_is_linear_in_the_steps(monkeypatch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    small, large = _visits(monkeypatch, 50, a, w0), _visits(monkeypatch, 200, a, w0)
    # 4x the steps: 4x the nodes when linear, 16x when each assign walks every kept loss
    assert large < 6 * small, (small, large)


@pytest.mark.parametrize("backend", ["c", "interp"])
def test_kept_losses_match_torch(monkeypatch, backend):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 5)).astype(np.float32)
    w0 = (0.3 * rng.standard_normal((5, 3))).astype(np.float32)
    losses, w = _loop(40, a, w0)
    want_losses, want_w = _torch_loop(40, a, w0)
    got = [loss.item() for loss in losses]  # realized after every assign ran
    np.testing.assert_allclose(got, want_losses, rtol=2e-5)
    np.testing.assert_allclose(w.numpy(), want_w, rtol=2e-5, atol=1e-6)
