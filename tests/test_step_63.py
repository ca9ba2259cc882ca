"""The fresh-batch training step's realize as a step plan (issue 33, step 63).

An optimizer step over a fresh batch is a new graph each step, of one form: its realize (the
ASSIGNs, the gradients, the loss) is keyed by going on with its backward's walk and run by the
plan of that form (runtime/plans.py's `_run_step`): the program and its arguments, the
parameters and state written in place, no schedule items, no schedule-cache replay, no program
lookup. Counted with Python calls, never seconds; values against torch over several steps for
each way a step may differ from the last one's form.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from optimizer_runs import assert_as_torch as _assert_as_torch  # noqa: E402
from optimizer_runs import mlp_batch, mlp_loss, mlp_models  # noqa: E402
from optimizer_runs import step_both as _step  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.runtime import plans  # noqa: E402

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam", "adamw"])
def test_fresh_batches_run_the_step_plan(kind):
    """Steps over fresh batches agree with torch; from the third step of the form SGD's (with
    momentum or not) realize is the step plan's run. (Adam's too when its bias powers are
    state tensors; its values are checked either way.)"""
    ours, opt, theirs, topt = mlp_models(kind, seed=3)
    rng = np.random.default_rng(4)
    hits = []
    for _ in range(6):
        before = plans.stats["step_hits"]
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 6))
        hits.append(plans.stats["step_hits"] - before)
    if kind in ("sgd", "momentum"):
        assert hits[3:] == [1, 1, 1], hits


@pytest.mark.parametrize("batches", [(6, 6, 6, 6, 3, 6, 6, 1, 1, 6),  # a smaller last batch
                                     (1, 1, 1, 5, 5, 5, 2, 2)])
def test_batch_shape_changes(batches):
    ours, opt, theirs, topt = mlp_models("momentum", seed=5)
    rng = np.random.default_rng(6)
    for b in batches:
        _step(ours, opt, theirs, topt, *mlp_batch(rng, b))


def test_random_mask_advances():
    """A mask drawn by `Tensor.rand` each step (dropout by hand): a new host buffer each step,
    read by the plan as an input; torch's mask is the same numpy draws."""
    ours, opt, theirs, topt = mlp_models("sgd", seed=7)
    rng = np.random.default_rng(8)
    Tensor.manual_seed(11)
    draws = np.random.default_rng(11)
    for _ in range(6):
        x_np, y_np = mlp_batch(rng, 6)
        keep = (draws.random((6, 7), dtype=np.float32) >= 0.5).astype(np.float32) * 2

        def theirs_loss(p, x, y, keep=keep):
            h = torch.relu(x @ p["w1"] + p["b1"]) * torch.from_numpy(keep)
            return -(torch.log_softmax(h @ p["w2"] + p["b2"], 1) * y).sum(1).mean()

        topt.zero_grad()
        want = theirs_loss(theirs, torch.from_numpy(x_np), torch.from_numpy(y_np))
        want.backward()
        topt.step()
        opt.zero_grad()
        x, y = Tensor(x_np), Tensor(y_np)
        mask = (Tensor.rand(6, 7) >= 0.5).float() * 2
        h = (x @ ours["w1"] + ours["b1"]).relu() * mask
        loss = -((h @ ours["w2"] + ours["b2"]).log_softmax(1) * y).sum(1).mean()
        loss.backward()
        opt.step(loss)
        _assert_as_torch(loss, want, ours, theirs)


def test_parameter_replaced_and_dtype_changed():
    """A parameter given new values between steps (`assign` of an array: the same buffer), then
    replaced by a tensor of another buffer and dtype in a new optimizer."""
    ours, opt, theirs, topt = mlp_models("momentum", seed=9)
    rng = np.random.default_rng(10)
    for i in range(8):
        if i == 4:
            new = rng.standard_normal((7, 5)).astype(np.float32)
            ours["w2"].assign(Tensor(new)).realize()
            with torch.no_grad():
                theirs["w2"].copy_(torch.from_numpy(new))
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 4))
    from rulegrad.nn.optim import SGD

    ours = {k: Tensor(v.numpy().astype(np.float64), requires_grad=True).realize()
            for k, v in ours.items()}
    theirs = {k: v.detach().double().requires_grad_() for k, v in theirs.items()}
    opt, topt = SGD(list(ours.values()), lr=0.1), torch.optim.SGD(list(theirs.values()), lr=0.1)
    for _ in range(4):
        x, y = mlp_batch(rng, 4)
        _step(ours, opt, theirs, topt, x.astype(np.float64), y.astype(np.float64))


def test_lr_schedule():
    ours, opt, theirs, topt = mlp_models("momentum", seed=12)
    rng = np.random.default_rng(13)
    for lr in (0.1, 0.1, 0.1, 0.05, 0.05, 0.03, 0.1, 0.1, 0.25, 0.013):
        opt.lr = lr
        for g in topt.param_groups:
            g["lr"] = lr
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 5))


def test_requires_grad_toggled():
    """b1 frozen for some steps (no gradient: left as it is, as torch skips a None .grad)."""
    ours, opt, theirs, topt = mlp_models("sgd", seed=14)
    rng = np.random.default_rng(15)
    for i in range(9):
        frozen = 3 <= i < 6
        ours["b1"].requires_grad = not frozen
        theirs["b1"].requires_grad_(not frozen)
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 6))


def _scaled(scale: float):
    def loss(lib, p, x, y):
        return mlp_loss(lib, p, x, y) * scale
    return loss


def _second_loss(lib, p, x, y):
    """Another loss over the same parameters: squared error of the logits."""
    relu = (lambda t: t.relu()) if lib is Tensor else torch.relu
    logits = relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return ((logits - y) * (logits - y)).mean()


def test_second_loss_and_constants():
    """Two losses on the same parameters alternating, and graphs that differ only in a constant
    (`loss * 0.5` then `loss * 0.25`): each its own form, never the other's plan."""
    ours, opt, theirs, topt = mlp_models("momentum", seed=16)
    rng = np.random.default_rng(17)
    fns = [_scaled(0.5), _scaled(0.25), _second_loss, mlp_loss]
    for i in range(12):
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 6), loss_fn=fns[i % len(fns)])


def test_an_array_handed_out_keeps_its_values():
    """`w.numpy()` taken before a step the plan runs: the step writes w in place, and the array
    handed out keeps the old values (the plan moves w to a copy first, as the ordinary path)."""
    ours, opt, theirs, topt = mlp_models("sgd", seed=18)
    rng = np.random.default_rng(19)
    for _ in range(3):
        _step(ours, opt, theirs, topt, *mlp_batch(rng, 6))
    held = ours["w1"].numpy()
    old = held.copy()
    before = plans.stats["step_hits"]
    _step(ours, opt, theirs, topt, *mlp_batch(rng, 6))
    assert plans.stats["step_hits"] == before + 1
    np.testing.assert_array_equal(held, old)
    assert not np.array_equal(ours["w1"].numpy(), old)


COUNT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from call_counts import python_calls
from optimizer_runs import mlp_batch, mlp_loss, mlp_models
from rulegrad import Tensor
ours, opt, theirs, topt = mlp_models("momentum", seed=20)
rng = np.random.default_rng(21)
out = []
for i in range(6):
    x, y = (Tensor(a) for a in mlp_batch(rng, 6))
    opt.zero_grad()
    loss = mlp_loss(Tensor, ours, x, y)
    loss.backward()
    calls = python_calls(lambda: opt.step(loss))
    loss.item()
    out.append({k: v for k, v in calls.items() if not k.startswith("C:")})
print(json.dumps(out[-1]))
"""


def test_a_warm_step_realize_is_the_plans_run():
    """`opt.step(loss)` of a warm fresh-batch step builds no schedule items, replays no
    schedule and looks up no program: before, a schedule-cache replay (~15 schedule items, a
    Buffer per intermediate through the schedule, the program's key of every kernel's AST),
    some 870 Python calls; now under 650. (A fresh interpreter: what earlier tests left alive
    changes the counts.)"""
    got = subprocess.run([sys.executable, "-c", COUNT, str(TESTS)], capture_output=True,
                         text=True, check=True)
    calls = json.loads(got.stdout.strip().splitlines()[-1])
    assert calls.get("plans.py:_run_step") == 1
    for name in ("schedule_item.py:__init__", "schedule_cache.py:_replay",
                 "run.py:compile_program", "run.py:run_schedule"):
        assert name not in calls, name
    assert sum(calls.values()) < 650, sum(calls.values())


# (a, b) shapes: tiny, prime, batch 1, tall, skinny, 1-D on either side, batched and broadcast
MATMUL_SHAPES = [((1, 1), (1, 1)), ((7, 13), (13, 5)), ((1, 64), (64, 10)), ((257, 3), (3, 2)),
                 ((2, 31), (31, 1)), ((6,), (6, 4)), ((4, 6), (6,)), ((5,), (5,)),
                 ((3, 2, 4), (4, 7)), ((2, 1, 3, 4), (5, 4, 2))]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_matmul_rebuilt_from_its_form(dtype):
    """Each form multiplied over fresh operands several times (its nodes rebuilt from the
    record from the second on), against numpy; `x @ x` and the operands swapped too."""
    rng = np.random.default_rng(22)
    for sa, sb in MATMUL_SHAPES:
        for _ in range(3):
            a = (rng.standard_normal(sa) * 4).astype(dtype)
            b = (rng.standard_normal(sb) * 4).astype(dtype)
            np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a @ b, rtol=1e-5,
                                       atol=1e-5)
            if sa[::-1] == sb:
                np.testing.assert_allclose((Tensor(b) @ Tensor(a)).numpy(), b @ a, rtol=1e-5,
                                           atol=1e-5)
        if len(sa) == 2 and sa[0] == sa[1]:
            t = Tensor(a)
            np.testing.assert_allclose((t @ t).numpy(), a @ a, rtol=1e-5, atol=1e-5)


def test_matmul_gradients_through_the_rebuilt_nodes():
    """Gradients of a product built from the record (a fresh leaf each time) against torch."""
    rng = np.random.default_rng(23)
    for _ in range(3):
        a, b = rng.standard_normal((5, 7)).astype(np.float32), \
            rng.standard_normal((7, 3)).astype(np.float32)
        x, w = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
        (x @ w).relu().sum().backward()
        tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        torch.relu(tx @ tw).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)


MATMUL_COUNT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from call_counts import python_calls
from rulegrad import Tensor
rng = np.random.default_rng(0)
w = Tensor(rng.standard_normal((13, 5)).astype(np.float32)).realize()
got = []
for _ in range(3):
    x = Tensor(rng.standard_normal((7, 13)).astype(np.float32))
    x.uop  # (its leaf node built outside the count)
    calls = python_calls(lambda: x @ w)
    got.append(sum(v for k, v in calls.items() if not k.startswith("C:")))
print(json.dumps(got))
"""


def test_matmul_of_a_seen_form_builds_from_its_record():
    """A product over fresh operands of a form seen before: its nodes rebuilt from the record,
    no shape inference, broadcast or dtype probe (85 Python calls before, now 26: under 35).
    (A fresh interpreter: a value left alive on another device turns the record off.)"""
    got = subprocess.run([sys.executable, "-c", MATMUL_COUNT, str(TESTS)], capture_output=True,
                         text=True, check=True)
    first, *warm = json.loads(got.stdout.strip().splitlines()[-1])
    assert all(n < 35 for n in warm), (first, warm)


REDUCE_SHAPES = [(1,), (7,), (1, 1), (13, 5), (1, 64), (257, 3), (2, 31), (3, 2, 4)]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_reductions_rebuilt_from_their_form(dtype):
    """sum, mean and log_softmax over every axis (and none, kept or not, a dtype given), each
    form over fresh arrays several times, against numpy."""
    rng = np.random.default_rng(24)
    # (float16 sums: numpy adds in float16, rulegrad in float32: 2^-8 of the sum apart)
    tol = dict(rtol=2e-2, atol=0.25) if dtype is np.float16 else dict(rtol=1e-5, atol=1e-5)
    for shape in REDUCE_SHAPES:
        for _ in range(3):
            a = (rng.standard_normal(shape) * 3).astype(dtype)
            for axis in [None, *range(len(shape)), *range(-len(shape), 0)]:
                for keep in (False, True):
                    np.testing.assert_allclose(Tensor(a).sum(axis, keep).numpy(),
                                               a.sum(axis, keepdims=keep), **tol)
                    np.testing.assert_allclose(Tensor(a).mean(axis, keep).numpy(),
                                               a.mean(axis, keepdims=keep), **tol)
                np.testing.assert_allclose(Tensor(a).sum(axis, dtype="float64").numpy(),
                                           a.sum(axis, dtype=np.float64), **tol)
                if axis is not None and dtype is not np.int32:
                    f = a.astype(np.float64)
                    want = f - f.max(axis, keepdims=True)
                    want -= np.log(np.exp(want).sum(axis, keepdims=True))
                    np.testing.assert_allclose(Tensor(a).log_softmax(axis).numpy(), want, **tol)
