"""rulegrad.jit: a step's kernels recorded once and replayed, against numpy's own step.

Each test runs a jitted function for more calls than it takes to start replaying (two warm-up
and recording calls, one confirming call) and checks every call's values against numpy, and
that the replay path really ran (`replays`, a count of calls, never a time)."""

from __future__ import annotations

import numpy as np
import pytest

import rulegrad
from rulegrad import Tensor
from rulegrad.nn.optim import SGD

CALLS = 8  # the first three record; the rest replay


def _linear_sgd_np(w: np.ndarray, x: np.ndarray, y: np.ndarray, lr: float):
    """numpy's step of a linear least-squares model: (loss before the update, new w)."""
    err = x @ w - y
    loss = (err * err).mean()
    grad = 2 * x.T @ err / err.size
    return loss, w - lr * grad


def test_training_step_replays_numpys_sgd_step_by_step():
    rng = np.random.default_rng(0)
    w_np = rng.standard_normal((5, 3)).astype(np.float32)
    w = Tensor(w_np.copy(), requires_grad=True).realize()
    opt = SGD([w], lr=0.1)

    @rulegrad.jit
    def step(x, y):
        opt.zero_grad()
        err = x @ w - y
        loss = (err * err).mean()
        loss.backward()
        opt.step(loss)
        return loss

    for _ in range(CALLS):
        x = rng.standard_normal((7, 5)).astype(np.float32)
        y = rng.standard_normal((7, 3)).astype(np.float32)
        loss = step(Tensor(x), Tensor(y))
        want_loss, w_np = _linear_sgd_np(w_np, x, y, 0.1)
        np.testing.assert_allclose(loss.item(), want_loss, rtol=1e-5)
        np.testing.assert_allclose(w.numpy(), w_np, rtol=1e-5, atol=1e-6)
    assert step.replays == CALLS - 3 and step.refused == []


def test_results_of_earlier_calls_keep_their_values():
    @rulegrad.jit
    def f(a, b):
        return (a * b + 1).sum(axis=0), a - b

    rng = np.random.default_rng(1)
    kept = []
    for _ in range(CALLS):
        a, b = rng.standard_normal((2, 4, 6)).astype(np.float32)
        kept.append((f(Tensor(a), Tensor(b)), a, b))
    for (s, d), a, b in kept:  # read after every call ran: none was overwritten
        np.testing.assert_allclose(s.numpy(), (a * b + 1).sum(axis=0), rtol=1e-5)
        np.testing.assert_array_equal(d.numpy(), a - b)
    assert f.replays == CALLS - 3


def test_new_shapes_and_aliased_arguments_record_again():
    @rulegrad.jit
    def f(a, b):
        return a * 2 + b

    rng = np.random.default_rng(2)
    for i in range(3 * CALLS):
        n = (3, 5, 8)[i % 3]
        a = rng.standard_normal(n).astype(np.float32)
        ta = Tensor(a)
        if i % 2:  # the same tensor twice: one buffer in both places
            np.testing.assert_allclose(f(ta, ta).numpy(), a * 3, rtol=1e-6)
        else:
            b = rng.standard_normal(n).astype(np.float32)
            np.testing.assert_allclose(f(ta, Tensor(b)).numpy(), a * 2 + b, rtol=1e-6)
    assert f.replays > 0


def test_an_array_handed_out_keeps_its_values_across_replays():
    w = Tensor(np.zeros(4, np.float32)).realize()

    @rulegrad.jit
    def bump(x):
        w.assign(w + x).realize()
        return w * 1

    seen = []
    for _ in range(CALLS):
        bump(Tensor(np.full(4, 1.0, np.float32)))
        seen.append(w.numpy())  # a read-only view; the next replay writes w in place
    for i, arr in enumerate(seen):
        np.testing.assert_array_equal(arr, np.full(4, i + 1.0, np.float32))
    assert bump.replays == CALLS - 3


@pytest.mark.parametrize("case", ["random", "host_read", "python_value", "rebinding"])
def test_steps_that_cannot_be_replayed_run_as_they_are(case):
    """What a replay would freeze (random numbers, a value read back, a Python number that
    changes, state kept by rebinding a name) is found, and such steps keep numpy's values."""
    rng = np.random.default_rng(3)
    state = {"scale": 1.0, "acc": Tensor(np.zeros(3, np.float32)).realize()}
    acc_np = np.zeros(3, np.float32)

    def f(x):
        if case == "random":
            return x + Tensor.rand(3) * 0  # the draw changes each call; its value is unused
        if case == "host_read":
            return x * 2 if x.sum().item() > 0 else x * -2
        if case == "python_value":
            state["scale"] += 1.0
            return x * Tensor([state["scale"]] * 3)
        state["acc"] = (state["acc"] + x).realize()
        return state["acc"] * 1

    jf = rulegrad.jit(f)
    scale = 1.0
    for _ in range(CALLS):
        x = rng.standard_normal(3).astype(np.float32)
        got = jf(Tensor(x)).numpy()
        if case == "random":
            want = x
        elif case == "host_read":
            want = x * 2 if x.sum() > 0 else x * -2
        elif case == "python_value":
            scale += 1.0
            want = x * np.float32(scale)
        else:
            acc_np = acc_np + x
            want = acc_np
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert jf.replays == 0 and len(jf.refused) == 1
