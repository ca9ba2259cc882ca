"""The fresh-batch training step's Python cost (issue 33, step 62).

A Python-float learning rate schedule (a new `opt.lr` every step) traced the optimizer's update
again every step: the rate was part of the trace's key. Now the rate's constants are learnt
from two builds that differ only in the rate, and later rates replay the recorded update with
those constants set to the new value (bits kept: -0.0 is not 0.0). Counted with Python calls
(the Tensor ops run in `opt.step`), never seconds; values against torch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from call_counts import python_calls  # noqa: E402
from test_step_59 import _batch, _same  # noqa: E402
from test_step_61 import KINDS, _forward_backward, _models_of  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.nn.optim import SGD  # noqa: E402

TESTS = Path(__file__).resolve().parent

# a schedule: the rate changes every step, some rates again, one a power of two (a literal in
# the kernels, not a lifted constant)
RATES = (0.1, 0.07, 0.05, 0.03, 0.05, 0.02, 0.25, 0.013, 0.013, 0.011)


def _set_lr(opt, topt, lr: float) -> None:
    opt.lr = lr
    for g in topt.param_groups:
        g["lr"] = lr


# a tiny model at batch 1, and a prime-sized one whose last batch is smaller (its first nine
# steps the equal batches' path; a third size, 7-5-3 at batch 4, ran that path again at 13-17
# CPU-s for the four kinds: suite68)
@pytest.mark.parametrize("sizes", [(3, 1, 2, (1,) * 10),
                                   (13, 17, 5, (6, 6, 6, 6, 6, 6, 6, 6, 6, 2))],
                         ids=lambda s: "-".join(map(str, s[:3])) + f"-b{s[3][-1]}")
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_rate_schedule_replays_the_update_once_its_rate_is_known(kind, sizes):
    """A new float rate each step: after the steps that learn which constants are the rate
    (two builds of the update that differ only there; Adam's 1 - b1 rounds to float32 0.1 as
    the rate 0.1 does, so its first pair cannot tell them apart), no Tensor op runs in
    `opt.step` (before: every step traced the update again), and every step is torch's, the
    last batch smaller too."""
    d, h, c, batches = sizes
    ours, opt, theirs, topt = _models_of(kind, d, h, c, seed=81)
    rng = np.random.default_rng(82)
    atol = 1e-4 if kind.startswith("adam") else 1e-5
    traced = []
    for k, (lr, b) in enumerate(zip(RATES, batches)):
        _set_lr(opt, topt, lr)
        x_np, y_np = _batch(rng, b, d, c)
        loss, want = _forward_backward(ours, opt, theirs, topt, x_np, y_np)
        calls = python_calls(lambda loss=loss: opt.step(loss))
        _same(ours, theirs, loss.item(), want.item(), atol)
        if calls["tensor.py:_binary"] + calls["tensor.py:operator"]:
            traced.append(k)
    # the first step, the first new rate, (Adam: the second, see above), and a smaller batch
    # (other gradient shapes: another update); never the later rates
    learnt = 3 if kind.startswith("adam") else 2
    assert traced[:learnt] == list(range(learnt)), traced
    assert set(traced[learnt:]) <= ({9} if batches[-1] != batches[0] else set()), traced


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_a_replayed_rate_keeps_the_sign_of_zero_as_torch(momentum):
    """Rates -0.0 and 0.0 replayed over a parameter of signed zeros: torch's p + (-lr) * g
    leaves -0.0 with lr 0.0 and makes it 0.0 with lr -0.0; ours the same bits each step (the
    replayed constant is keyed by its bits, not by `==`)."""
    z = np.array([[-0.0, 0.0, -0.0], [0.0, -0.0, -0.0]], np.float32)
    p = Tensor(z.copy(), requires_grad=True).realize()
    tp = torch.from_numpy(z.copy()).requires_grad_()
    opt = SGD([p], lr=0.1, momentum=momentum)
    topt = torch.optim.SGD([tp], lr=0.1, momentum=momentum)
    rng = np.random.default_rng(91)
    for lr in (0.1, 0.07, 0.0, -0.0, 0.0, -0.0, 0.0):
        if lr == 0.0:  # (a fresh start of signed zeros: the steps before moved them)
            with torch.no_grad():
                tp.copy_(torch.from_numpy(z))
            p.assign(Tensor(z.copy())).realize()
        _set_lr(opt, topt, lr)
        x = rng.standard_normal((4, 2)).astype(np.float32)
        opt.zero_grad()
        (Tensor(x) @ p).sum().backward()
        opt.step()
        topt.zero_grad()
        (torch.from_numpy(x) @ tp).sum().backward()
        topt.step()
        want = tp.detach().numpy()
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-5, atol=1e-6)
        if lr == 0.0:  # (all zeros: their signs are the step's)
            np.testing.assert_array_equal(np.signbit(p.numpy()), np.signbit(want))


# (a fresh interpreter: an earlier test of this worker may keep a value on another device alive,
# and then the walk is right; the CI's full suite ran this test after one)
_WARM_CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
import numpy as np
from call_counts import python_calls
from test_step_59 import _batch, _same
from test_step_61 import _forward_backward, _models_of
from rulegrad.runtime.device import in_use

out = {{"devices": in_use["devices"]}}
for kind in ("sgd", "adam"):
    ours, opt, theirs, topt = _models_of(kind, 6, 5, 3, seed=101)
    rng = np.random.default_rng(102)
    atol = 1e-4 if kind == "adam" else 1e-5
    out[kind] = []
    for k in range(4):
        x_np, y_np = _batch(rng, 4, 6, 3)
        loss, want = _forward_backward(ours, opt, theirs, topt, x_np, y_np)
        calls = python_calls(lambda loss=loss: opt.step(loss))
        _same(ours, theirs, loss.item(), want.item(), atol)
        out[kind].append(calls["device.py:_derive"] + calls["device.py:_agreed"])
print(json.dumps(out))
"""


def test_a_warm_step_derives_no_device_of_its_fresh_gradients():
    """With no value on another device alive, a warm step's update is keyed without walking
    the fresh batch's gradients for their devices (before: each step derived the device of
    every node of the new forward and backward graphs, some 150 Python calls); the steps stay
    torch's (checked in the child), for SGD and Adam."""
    run = subprocess.run([sys.executable, "-c", _WARM_CHILD.format(tests=str(TESTS))],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["devices"] is False
    for kind in ("sgd", "adam"):
        assert out[kind][2:] == [0, 0], (kind, out[kind])
