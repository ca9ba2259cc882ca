"""Optimizers (rulegrad.nn.optim) against the same updates written in numpy float64: each step
is one schedule of ASSIGNs (parameters and state) with the gradients and the loss."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn.optim import SGD, Adam

rng = np.random.default_rng(0)
X = rng.standard_normal((16, 4)).astype(np.float32)
Y = rng.standard_normal((16, 3)).astype(np.float32)
W0 = rng.standard_normal((4, 3)).astype(np.float32)
B0 = rng.standard_normal(3).astype(np.float32)
STEPS = 4


def numpy_grads(w, b):
    err = X @ w + b - Y
    return 2 * X.T @ err / err.size, 2 * err.sum(0) / err.size, float((err ** 2).mean())


def numpy_sgd(lr, momentum=0.0, wd=0.0, nesterov=False):
    ps, bufs, losses = [W0.astype(np.float64), B0.astype(np.float64)], [0.0, 0.0], []
    for _ in range(STEPS):
        *gs, loss = numpy_grads(*ps)
        losses.append(loss)
        for i, g in enumerate(gs):
            g = g + wd * ps[i]
            if momentum:
                bufs[i] = momentum * bufs[i] + g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            ps[i] = ps[i] - lr * g
    return ps, losses


def numpy_adam(lr, b1=0.9, b2=0.999, eps=1e-8):
    ps, m, v, losses = [W0.astype(np.float64), B0.astype(np.float64)], [0, 0], [0, 0], []
    for t in range(1, STEPS + 1):
        *gs, loss = numpy_grads(*ps)
        losses.append(loss)
        for i, g in enumerate(gs):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            ps[i] = ps[i] - lr * (m[i] / (1 - b1 ** t)) / (np.sqrt(v[i] / (1 - b2 ** t)) + eps)
    return ps, losses


def train(opt_cls, **kw):
    w, b = Tensor(W0.copy()), Tensor(B0.copy())
    opt = opt_cls([w, b], **kw)
    x, y = Tensor(X), Tensor(Y)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        opt.step(loss)  # the loss in the same schedule, from the weights before the update
        losses.append(loss.item())
    return [w.numpy(), b.numpy()], losses, opt


CASES = {
    "sgd": (SGD, dict(lr=0.1), lambda: numpy_sgd(0.1)),
    "sgd_momentum": (SGD, dict(lr=0.1, momentum=0.9), lambda: numpy_sgd(0.1, 0.9)),
    "sgd_nesterov_wd": (SGD, dict(lr=0.05, momentum=0.8, weight_decay=0.01, nesterov=True),
                        lambda: numpy_sgd(0.05, 0.8, 0.01, True)),
    "adam": (Adam, dict(lr=0.01), lambda: numpy_adam(0.01)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_matches_numpy(name):
    cls, kw, ref = CASES[name]
    got, losses, opt = train(cls, **kw)
    want, want_losses = ref()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    assert all(p.requires_grad for p in opt.params)  # an optimized tensor trains


def test_grad_after_step_is_this_steps_gradient():
    w, b = Tensor(W0.copy()), Tensor(B0.copy())
    opt = SGD([w, b], lr=0.5)
    ((Tensor(X) @ w + b - Tensor(Y)) ** 2).mean().backward()
    opt.step()
    gw, gb, _ = numpy_grads(W0.astype(np.float64), B0.astype(np.float64))
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.numpy(), W0 - 0.5 * gw, rtol=1e-5, atol=1e-6)


def test_step_without_backward_is_a_clear_error():
    opt = SGD([Tensor(W0.copy())], lr=0.1)
    with pytest.raises(ValueError, match="backward"):
        opt.step()
    with pytest.raises(ValueError, match="at least one"):
        SGD([], lr=0.1)


def test_update_reads_the_realized_gradient_and_writes_in_place():
    """The gradient of w1 reads w1 through the forward pass (at other elements): the update
    reads the gradient's own buffer instead, so it writes w1 in place. Without that the update
    is an assign hazard and each parameter costs a buffer and a copy kernel (19 kernels)."""
    import sys
    from pathlib import Path

    from rulegrad.runtime.schedule import create_schedule

    sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
    import train_step

    arrays = train_step.data()
    t, opt = train_step.setup(Tensor, arrays)
    xs = train_step.step_tensors(t, opt)
    names = [k.name for k in create_schedule([x.uop for x in xs])]
    assert len(names) == 15, names
    assert names.count("E_784_256") == 1  # the w1 update, no copy after it
    xs[0].realize(*xs[1:])
    # numpy float64: the same step
    a = {k: v.astype(np.float64) for k, v in arrays.items()}
    h = a["x"] @ a["w1"] + a["b1"]
    logits = np.maximum(h, 0) @ a["w2"] + a["b2"]
    z = logits - logits.max(1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    dlogits = (p - a["y"]) / len(a["x"])
    dh = (dlogits @ a["w2"].T) * (h > 0)
    want = {"w1": a["w1"] - train_step.LR * (a["x"].T @ dh),
            "b1": a["b1"] - train_step.LR * dh.sum(0),
            "w2": a["w2"] - train_step.LR * (np.maximum(h, 0).T @ dlogits),
            "b2": a["b2"] - train_step.LR * dlogits.sum(0)}
    for k, w in want.items():
        np.testing.assert_allclose(t[k].numpy(), w, rtol=1e-4, atol=1e-6, err_msg=k)


def test_assign_reading_its_target_moved_through_a_contiguous():
    """A CONTIGUOUS below the value is a buffer written before the ASSIGN's kernel: reading
    the target transposed through it is safe in place, and the value is right."""
    a_np = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    a = Tensor(a_np.copy()).realize()
    a.assign(a.T.contiguous() * 2 + a)
    np.testing.assert_array_equal(a.numpy(), a_np.T * 2 + a_np)
