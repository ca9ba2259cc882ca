"""Review of step 64 (a step plan whose lr changes each step): adversarial cases against torch.

Two threads running one step plan with their own rates: the rate of one must never be the one
the other's run reads. The interleavings are forced with events (no timing, no counts): thread
A stops at a chosen point of its run, thread B runs a whole step, then A goes on.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from optimizer_runs import (  # noqa: E402
    RUNS,
    assert_as_torch,
    mlp_batch,
    mlp_loss,
    mlp_models,
    runs_fixture,
)

from rulegrad import Tensor  # noqa: E402
from rulegrad.nn.optim import SGD, Adam  # noqa: E402
from rulegrad.runtime import plans  # noqa: E402


def _set_lr(opt, topt, lr: float) -> None:
    opt.lr = lr
    for g in topt.param_groups:
        g["lr"] = lr


def _ours(m: list, x_np, y_np) -> Tensor:
    return _ours_with(mlp_loss, m, x_np, y_np)


def _theirs(m: list, x_np, y_np):
    return _theirs_with(mlp_loss, m, x_np, y_np)


def _two_warm_models(kind: str, seed: int) -> tuple[list, list, np.random.Generator]:
    """Two models of one form (one step plan), warmed with a rate changing every step until
    that plan runs the scheduled steps; each against torch."""
    a, b = mlp_models(kind, seed=seed), mlp_models(kind, seed=seed + 1)
    rng = np.random.default_rng(seed)
    for i in range(6):
        for m in (a, b):
            x, y = mlp_batch(rng, 6)
            _set_lr(m[1], m[3], 0.05 + 0.0137 * i)
            assert_as_torch(_ours(m, x, y), _theirs(m, x, y), m[0], m[2])
    return a, b, rng


def _race(a: list, b: list, rng, arm) -> None:
    """A's step (rate 0.3) stopped where `arm` puts its gate, B's whole step (rate 0.001) run
    meanwhile, then A's finished; both against torch."""
    xa, ya = mlp_batch(rng, 6)
    xb, yb = mlp_batch(rng, 6)
    _set_lr(a[1], a[3], 0.3)
    _set_lr(b[1], b[3], 0.001)
    a_stopped, b_done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def gate() -> None:
        if threading.current_thread().name == "A" and not a_stopped.is_set():
            a_stopped.set()
            assert b_done.wait(120)

    def run(name: str, m: list, x, y) -> None:
        try:
            if name == "B":
                assert a_stopped.wait(120)
            out[name] = _ours(m, x, y)
        except BaseException as e:  # (seen by the main thread)
            errors.append(e)
        finally:
            if name == "B":
                b_done.set()

    out: dict[str, Tensor] = {}
    undo = arm(gate)
    try:
        threads = [threading.Thread(target=run, args=("A", a, xa, ya), name="A"),
                   threading.Thread(target=run, args=("B", b, xb, yb), name="B")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        undo()
    assert not errors, errors
    assert a_stopped.is_set() and b_done.is_set()
    assert_as_torch(out["A"], _theirs(a, xa, ya), a[0], a[2])
    assert_as_torch(out["B"], _theirs(b, xb, yb), b[0], b[2])


@pytest.mark.parametrize("kind", ["sgd", "momentum"])
def test_other_threads_rate_between_refill_and_run(kind, monkeypatch):
    """A stopped after its rate was taken, before its run takes the plan's lock; B's step runs
    the plan meanwhile with its own rate. Before: `_refill` wrote A's rate into the plan's
    argument outside the lock, B's overwrote it, and A's step ran with B's rate (0.001 for
    0.3: A's weights off by ~0.08)."""
    a, b, rng = _two_warm_models(kind, 41)
    real = plans._run

    def arm(gate):
        def gated(*args):
            gate()
            return real(*args)
        monkeypatch.setattr(plans, "_run", gated)
        return lambda: monkeypatch.setattr(plans, "_run", real)

    before = plans.stats["step_hits"]
    _race(a, b, rng, arm)
    assert plans.stats["step_hits"] - before == 2  # (both steps were the plan's runs)


class _GatedProgram:
    """A plan's program whose `touch` (in `_run`, under the plan's lock, before the kernels)
    calls `gate` first."""

    def __init__(self, prog, gate):
        self._prog, self._gate = prog, gate

    def touch(self):
        self._gate()
        return self._prog.touch()

    def __getattr__(self, name):
        return getattr(self._prog, name)


def test_other_threads_rate_while_the_plan_runs():
    """A stopped inside its run, holding the plan's lock with its rate written; B's step of
    the plan meanwhile runs on buffers of its own (`_run_fresh`). Before: B's rate went into
    the plan's argument A's kernels were about to read."""
    a, b, rng = _two_warm_models("sgd", 43)
    step_plans = [p for p in list(plans._plans.values()) if p.lifted[1]]
    assert step_plans
    real = [p.prog for p in step_plans]

    def arm(gate):
        for plan, ref in zip(step_plans, real):
            plan.prog = (lambda prog: lambda: _GatedProgram(prog, gate))(ref())

        def undo():
            for plan, ref in zip(step_plans, real):
                plan.prog = ref
        return undo

    _race(a, b, rng, arm)


run = runs_fixture(RUNS)


@pytest.mark.parametrize("kind", ["momentum", "adamw"])
def test_alternating_rates_and_a_decay_equal_to_one_in_every_run(run, kind):
    """test_step_64 runs the default scheduler alone: here every (scheduler, backend, opt)
    of optimizer_runs.RUNS, a schedule that alternates between two rates, one of them equal
    to the weight decay (one lifted argument for both while equal), 0 and a negative rate
    between; a forward constant equal to a rate. Against torch at every step."""
    ours, _, theirs, _ = mlp_models("sgd", seed=45)
    if kind == "momentum":
        opt = SGD(list(ours.values()), lr=0.0123, momentum=0.9, weight_decay=0.0123)
        topt = torch.optim.SGD(list(theirs.values()), lr=0.0123, momentum=0.9,
                               weight_decay=0.0123)
    else:
        opt = Adam(list(ours.values()), lr=0.0123, weight_decay=0.0123)
        topt = torch.optim.AdamW(list(theirs.values()), lr=0.0123, weight_decay=0.0123)

    def loss_fn(lib, p, x, y):
        return mlp_loss(lib, {**p, "w1": p["w1"] * 0.0377}, x, y)

    rng = np.random.default_rng(46)
    for lr in (0.0377, 0.0123, 0.0377, 0.0123, 0.0377, 0.0, 0.0123, -0.0179, 0.0377, 0.0123):
        _set_lr(opt, topt, lr)
        x, y = mlp_batch(rng, 5)
        assert_as_torch(_ours_with(loss_fn, [ours, opt], x, y),
                        _theirs_with(loss_fn, [ours, opt, theirs, topt], x, y), ours, theirs)


def _ours_with(loss_fn, m: list, x_np, y_np) -> Tensor:
    ours, opt = m[0], m[1]
    opt.zero_grad()
    loss = loss_fn(Tensor, ours, Tensor(x_np), Tensor(y_np))
    loss.backward()
    opt.step(loss)
    return loss


def _theirs_with(loss_fn, m: list, x_np, y_np):
    theirs, topt = m[2], m[3]
    topt.zero_grad()
    want = loss_fn(torch, theirs, torch.from_numpy(x_np), torch.from_numpy(y_np))
    want.backward()
    topt.step()
    return want
