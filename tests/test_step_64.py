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


# (a, b) shapes that broadcast: tiny, prime, batch 1, tall, skinny, either side the larger
BROADCAST_SHAPES = [((1,), (1, 1)), ((7, 13), (13,)), ((1, 64), (64,)), ((257, 3), (257, 1)),
                    ((2, 31), (1, 31)), ((6,), (4, 6)), ((3, 1, 4), (5, 1)), ((), (3, 2))]
BINARY = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.true_divide)]


@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.int32, np.float32),
                                    (np.float64, np.float32), (np.int32, np.int32)])
def test_broadcast_binaries_rebuilt_from_their_form(dtypes):
    """Each (op, dtypes, shapes) of two tensors that broadcast, over fresh operands several
    times (the nodes rebuilt from the record from the second on), either operand first,
    against numpy; `a + a.T` and `a * a.sum(1, keepdim)` (an operand's graph holds the other)
    too."""
    rng = np.random.default_rng(47)
    for sa, sb in BROADCAST_SHAPES:
        for _ in range(3):
            a = (rng.standard_normal(sa) * 4).astype(dtypes[0])
            b = (rng.standard_normal(sb) * 4 + 9).astype(dtypes[1])  # (no division by 0)
            for name, fn in BINARY:
                for x, y in ((a, b), (b, a)):
                    got = getattr(Tensor(x), name)(Tensor(y)).numpy()
                    np.testing.assert_allclose(got, fn(x, y), rtol=1e-5, atol=1e-5, err_msg=name)
                    assert got.dtype == fn(x, y).dtype, (name, got.dtype, fn(x, y).dtype)
    for _ in range(3):
        a = rng.standard_normal((5, 5)).astype(dtypes[0])
        t = Tensor(a)
        np.testing.assert_allclose((t + t.T).numpy(), a + a.T, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose((t * t.sum(1, keepdim=True)).numpy(),
                                   a * a.sum(1, keepdims=True), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_rebuilt_from_its_form(dtype):
    """relu over fresh arrays of one form several times, with NaN, infinities and -0.0 (torch's
    relu keeps NaN and -0.0), and its gradient against torch's; relu of constants alone too."""
    rng = np.random.default_rng(48)
    for shape in [(1,), (7,), (13, 5), (1, 64), (257, 3)]:
        for _ in range(3):
            a = rng.standard_normal(shape).astype(dtype)
            a.flat[0] = np.nan
            a.flat[-1] = -0.0
            if a.size > 2:
                a.flat[1] = -np.inf
            want = torch.relu(torch.from_numpy(a)).numpy()
            got = Tensor(a).relu().numpy()
            np.testing.assert_array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))
            x = Tensor(a, requires_grad=True)
            (x.relu() * 3).sum().backward()
            tx = torch.tensor(a, requires_grad=True)
            (torch.relu(tx) * 3).sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    for _ in range(3):
        np.testing.assert_array_equal(Tensor.ones(3, 2).relu().numpy(), np.ones((3, 2)))
        np.testing.assert_array_equal((-Tensor.ones(4)).relu().numpy(), np.zeros(4))


FORWARD_COUNT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from call_counts import python_calls
from rulegrad import Tensor
rng = np.random.default_rng(0)
b = Tensor(rng.standard_normal(13).astype(np.float32)).realize()
got = []
for _ in range(3):
    h = Tensor(rng.standard_normal((7, 13)).astype(np.float32))
    h.uop  # (its leaf node built outside the count)
    calls = python_calls(lambda: (h + b).relu())
    got.append(sum(v for k, v in calls.items() if not k.startswith("C:")))
print(json.dumps(got))
"""


def test_bias_and_relu_of_a_seen_form_build_from_their_records():
    """`(h + b).relu()` over a fresh h of a form seen before: a broadcast add and a relu rebuilt
    from their records, no dtype probe, broadcast or shape inference (87 Python calls before,
    now 49: under 60). (A fresh interpreter: a value left alive on another device turns the
    records off.)"""
    got = subprocess.run([sys.executable, "-c", FORWARD_COUNT, str(TESTS)],
                         capture_output=True, text=True, check=True)
    first, *warm = json.loads(got.stdout.strip().splitlines()[-1])
    assert all(n < 60 for n in warm), (first, warm)
