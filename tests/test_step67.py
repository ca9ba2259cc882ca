"""The small training step of bench/train_step.py (an MLP, relu, log-softmax cross-entropy, SGD),
with and without `rulegrad.jit`, step by step against numpy's own step (float64, its gradients
written out by hand): over changing batches, and with a changed batch size, dtype or constant,
which must not replay the recording of another (issue 33: a program seen before replays its
kernels; a replay gives the values a fresh build gives)."""

from __future__ import annotations

import numpy as np

import rulegrad
from rulegrad import Tensor
from rulegrad.nn.optim import SGD

D, H, OUT, LR = 12, 16, 5, 0.05
NAMES = ("w1", "b1", "w2", "b2")


def _weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"w1": (rng.standard_normal((D, H)) / np.sqrt(D)).astype(np.float32),
            "b1": (rng.standard_normal(H) * 0.1).astype(np.float32),
            "w2": (rng.standard_normal((H, OUT)) / np.sqrt(H)).astype(np.float32),
            "b2": (rng.standard_normal(OUT) * 0.1).astype(np.float32)}


def _batch(rng: np.random.Generator, b: int, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((b, D)).astype(dtype)
    return x, np.eye(OUT, dtype=dtype)[rng.integers(0, OUT, b)]


def _np_step(w: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray, scale: float = 1.0
             ) -> float:
    """numpy's step in float64: the loss (before the update); `w` is updated in place."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    h = x @ w["w1"] + w["b1"]
    a = np.maximum(h, 0)
    z = a @ w["w2"] + w["b2"]
    zs = z - z.max(1, keepdims=True)
    ls = zs - np.log(np.exp(zs).sum(1, keepdims=True))
    loss = -(ls * y).sum(1).mean() * scale
    dz = (np.exp(ls) * y.sum(1, keepdims=True) - y) * scale / len(x)
    da = dz @ w["w2"].T
    dh = da * (h > 0)
    grads = {"w1": x.T @ dh, "b1": dh.sum(0), "w2": a.T @ dz, "b2": dz.sum(0)}
    for k in NAMES:
        w[k] -= LR * grads[k]
    return float(loss)


def _setup(seed: int = 0):
    w = _weights(seed)
    p = {k: Tensor(v.copy(), requires_grad=True).realize() for k, v in w.items()}
    ref = {k: v.astype(np.float64) for k, v in w.items()}
    return p, SGD([p[k] for k in NAMES], lr=LR), ref


def _train(p, opt):
    def train(x, y, scale=1.0):
        opt.zero_grad()
        logits = (x @ p["w1"] + p["b1"]).relu() @ p["w2"] + p["b2"]
        loss = -(logits.log_softmax(1) * y).sum(1).mean() * scale
        loss.backward()
        opt.step(loss)
        return loss
    return train


def _check(p, ref, loss, want: float) -> None:
    np.testing.assert_allclose(loss, want, rtol=1e-4, atol=1e-5)
    for k in NAMES:
        np.testing.assert_allclose(p[k].numpy(), ref[k], rtol=1e-4, atol=1e-5)


def test_step_without_jit_agrees_with_numpy_over_fresh_batches():
    p, opt, ref = _setup()
    train = _train(p, opt)
    rng = np.random.default_rng(1)
    # each step's batch and loss kept alive, so that no later one is at their addresses: a run
    # over the addresses of an earlier step (its kernels' arguments not refilled) reads them
    kept = []
    for _ in range(8):  # (the later steps run the step's plan: runtime/plans.py)
        x, y = _batch(rng, 9)
        kept.append((Tensor(x), Tensor(y)))
        kept.append(train(*kept[-1]))
        _check(p, ref, kept[-1].item(), _np_step(ref, x, y))


def test_jitted_step_replays_numpys_step_over_fresh_batches():
    p, opt, ref = _setup()
    step = rulegrad.jit(_train(p, opt))
    rng = np.random.default_rng(2)
    for i in range(9):
        x, y = _batch(rng, 9)
        loss = step(x, y).item()
        _check(p, ref, loss, _np_step(ref, x, y))
        assert step.replays == max(0, i - 2)
    assert step.refused == []


def _run_new_key(step, p, ref, rng, b: int, dtype, scale: float, calls: int) -> None:
    """`calls` steps of a key not seen yet: none replays before its fourth call."""
    before = step.replays
    for i in range(calls):
        x, y = _batch(rng, b, dtype)
        loss = step(x, y, scale).item()
        _check(p, ref, loss, _np_step(ref, x, y, scale))
        assert step.replays - before == max(0, i - 2)


# (batch, dtype, scale) of each key after the first: each changes one thing
CHANGES = [(9, np.float32, 1.0), (4, np.float32, 1.0), (1, np.float32, 1.0),
           (9, np.float64, 1.0), (9, np.float32, 0.5), (9, np.float32, -1.0)]


def test_jitted_step_with_a_changed_shape_dtype_or_constant_does_not_replay_another():
    """Each change is a new key: its first three calls run the step (the values numpy's), and
    a replay of the key before (whose kernels hold the old size, dtype or constant) would give
    other values. Back to the first key at the end: it replays again, right."""
    p, opt, ref = _setup(3)
    step = rulegrad.jit(_train(p, opt))
    rng = np.random.default_rng(4)
    for b, dtype, scale in CHANGES:
        _run_new_key(step, p, ref, rng, b, dtype, scale, 5)
    before = step.replays
    for _ in range(3):
        x, y = _batch(rng, 9)
        loss = step(x, y, 1.0).item()
        _check(p, ref, loss, _np_step(ref, x, y))
    assert step.replays - before == 3
    assert step.refused == []
