"""The fresh-batch training step with no graph rebuilt (issue 33, step 64).

A learning rate that changes every step (a Python-float schedule) is a runtime scalar of the
step plan (runtime/plans.py's `_refill`), not part of its key: the plan runs every step of the
schedule once the schedule cache showed the form's kernels do not depend on the rate. Values
against torch over several steps; plan runs counted, never timed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from optimizer_runs import OPTIMIZERS, mlp_batch, mlp_models  # noqa: E402
from optimizer_runs import step_both as _step  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.nn.optim import SGD, Adam  # noqa: E402
from rulegrad.runtime import plans  # noqa: E402

TESTS = Path(__file__).resolve().parent


def _set_lr(opt, topt, lr: float) -> None:
    opt.lr = lr
    for g in topt.param_groups:
        g["lr"] = lr


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_lr_schedule_runs_the_step_plan(kind):
    """A new (liftable) rate every step, as a decaying schedule gives: against torch at every
    step, and for SGD (with momentum or not) the step plan's run from the fourth step on (two
    misses show the schedule cache the rate is free; the next records the plan). Before, the
    plan was keyed by the rate's value: never one hit."""
    ours, opt, theirs, topt = mlp_models(kind, seed=31)
    rng = np.random.default_rng(32)
    hits = []
    for i in range(9):
        _set_lr(opt, topt, 0.1 * 0.93 ** (i + 1))
        before = plans.stats["step_hits"]
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 6))
        hits.append(plans.stats["step_hits"] - before)
    if kind in ("sgd", "momentum"):
        assert hits[4:] == [1] * 5, hits


@pytest.mark.parametrize("batches", [(6, 6, 6, 6, 3, 6, 6, 1, 1, 6), (1, 1, 1, 5, 5, 5, 2)])
def test_lr_schedule_with_the_batch_shape_changing(batches):
    """A schedule over batches of changing size (a smaller last batch): each shape its own
    plan, each taking the step's rate."""
    ours, opt, theirs, topt = mlp_models("momentum", seed=33)
    rng = np.random.default_rng(34)
    for i, b in enumerate(batches):
        _set_lr(opt, topt, 0.07 + 0.013 * i)
        _step(ours, opt, theirs, topt, *mlp_batch(rng, b))


def test_rate_equal_to_weight_decay_then_apart():
    """Weight decay and the rate of one value (0.0123 each: one float argument of the lifted
    kernels) for some steps, then the rate moving away from it: the plan's shared argument
    must not give the decay the rate's new value (nor the other way round)."""
    ours, opt, theirs, topt = mlp_models("sgd", seed=35)
    params = list(ours.values())
    opt = SGD(params, lr=0.0123, momentum=0.9, weight_decay=0.0123)
    topt = torch.optim.SGD(list(theirs.values()), lr=0.0123, momentum=0.9,
                           weight_decay=0.0123)
    rng = np.random.default_rng(36)
    for lr in (0.0123, 0.0123, 0.0123, 0.0123, 0.0377, 0.0411, 0.0123, 0.0123, 0.0529, 0.0123):
        _set_lr(opt, topt, lr)
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 5))


def test_lr_schedule_of_structural_values():
    """Rates that are powers of two or whole (0.5, 0.25, 1.0: literals of the kernels, never
    lifted) between generic ones: each a program of its own value."""
    ours, opt, theirs, topt = mlp_models("sgd", seed=37)
    rng = np.random.default_rng(38)
    for lr in (0.5, 0.25, 0.0731, 0.0617, 0.25, 0.0533, 0.125, 0.0499, 0.0421, 1.0, 0.0313):
        _set_lr(opt, topt, lr * 0.2)
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 4))


def test_adam_schedule_with_weight_decay():
    """AdamW with a schedule: its own liftable constants (betas, eps, decay) beside the rate."""
    ours, _, theirs, _ = mlp_models("sgd", seed=39)
    opt = Adam(list(ours.values()), lr=0.01, weight_decay=0.013)
    topt = torch.optim.AdamW(list(theirs.values()), lr=0.01, weight_decay=0.013)
    rng = np.random.default_rng(40)
    for i in range(8):
        _set_lr(opt, topt, 0.01 * 0.9 ** i)
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 6))


def test_parameter_assigned_between_scheduled_steps():
    """A parameter given new values between steps of a schedule (`assign`), then a fresh
    parameter tensor in a new optimizer: the plan reads the parameters' buffers as they are."""
    ours, opt, theirs, topt = mlp_models("momentum", seed=41)
    rng = np.random.default_rng(42)
    for i in range(8):
        if i == 5:
            new = rng.standard_normal((7, 5)).astype(np.float32)
            ours["w2"].assign(Tensor(new)).realize()
            with torch.no_grad():
                theirs["w2"].copy_(torch.from_numpy(new))
        _set_lr(opt, topt, 0.05 + 0.011 * i)
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 4))


def test_rate_and_decay_equal_at_two_values_then_apart():
    """The rate and the decay equal at one value, then equal at another (a schedule of both:
    two schedules of the form alike once lifted, so the form is taken to be free of them),
    then apart: the lifted kernels read one argument for both, which cannot hold two values."""
    ours, _, theirs, _ = mlp_models("sgd", seed=43)
    opt = SGD(list(ours.values()), lr=0.0123, momentum=0.9, weight_decay=0.0123)
    topt = torch.optim.SGD(list(theirs.values()), lr=0.0123, momentum=0.9,
                           weight_decay=0.0123)
    rng = np.random.default_rng(44)
    for lr, wd in ((0.0123, 0.0123), (0.0377, 0.0377), (0.0377, 0.0377), (0.0411, 0.0377),
                   (0.0529, 0.0377), (0.0377, 0.0377), (0.0611, 0.0611), (0.0611, 0.0123)):
        _set_lr(opt, topt, lr)
        opt.wd = wd
        for g in topt.param_groups:
            g["weight_decay"] = wd
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 5))


COUNT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from call_counts import python_calls
from optimizer_runs import mlp_batch, mlp_loss, mlp_models
from rulegrad import Tensor
ours, opt, theirs, topt = mlp_models("momentum", seed=45)
rng = np.random.default_rng(46)
out = []
for i in range(7):
    opt.lr = 0.1 * 0.95 ** i
    x, y = (Tensor(a) for a in mlp_batch(rng, 6))
    opt.zero_grad()
    loss = mlp_loss(Tensor, ours, x, y)
    loss.backward()
    calls = python_calls(lambda: opt.step(loss))
    loss.item()
    out.append({k: v for k, v in calls.items() if not k.startswith("C:")})
print(json.dumps(out[-1]))
"""


def test_a_scheduled_warm_step_is_the_plans_run():
    """`opt.step(loss)` of a warm step whose rate changed since the last one: the step plan's
    run, no schedule items, no schedule-cache replay, no program lookup, under 650 Python calls
    as a step of a constant rate (before: the ordinary path every step, ~870). (A fresh
    interpreter: what earlier tests left alive changes the counts.)"""
    got = subprocess.run([sys.executable, "-c", COUNT, str(TESTS)], capture_output=True,
                         text=True, check=True)
    calls = json.loads(got.stdout.strip().splitlines()[-1])
    assert calls.get("plans.py:_run_step") == 1
    for name in ("schedule_item.py:__init__", "schedule_cache.py:_replay",
                 "run.py:compile_program", "run.py:run_schedule"):
        assert name not in calls, name
    assert sum(calls.values()) < 650, sum(calls.values())
