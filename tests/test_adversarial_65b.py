"""adv65 (issue 31): a setting of an optimizer changed between calls of a `rulegrad.jit` step.

A replay runs no Python: the recorded kernels went on with the learning rate (or momentum)
they were recorded with, so a step schedule's `opt.lr = 0.01` set after the jit's fourth call
changed nothing (SGD, momentum, Adam all drifted from torch by 0.1-0.9 within five steps).
Setting one now drops the jit's replays of that optimizer's step (api/nn/optim.py's
`Optimizer.__setattr__`), and the jit records the step again. The oracle is torch.optim, step
by step.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from jit_steps import product_step  # noqa: E402

import rulegrad  # noqa: E402
from rulegrad import Tensor  # noqa: E402
from rulegrad.nn.optim import SGD, Adam  # noqa: E402

_OPTS = {  # name: (ours, torch's)
    "sgd": (lambda p: SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    "momentum": (lambda p: SGD(p, lr=0.1, momentum=0.9),
                 lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    "adam": (lambda p: Adam(p, lr=0.1), lambda p: torch.optim.Adam(p, lr=0.1)),
}

# (setting, its values by step): a step schedule that changes after the replays began, one that
# changes twice, and a momentum changed
_SCHEDULES = {
    "lr_step": ("lr", [0.1] * 5 + [0.01] * 5),
    "lr_twice": ("lr", [0.1] * 5 + [0.03] * 5 + [0.3] * 3),
    "momentum": ("momentum", [0.9] * 5 + [0.5] * 5),
}


# every optimizer with every lr schedule; a momentum change only where there is one
@pytest.mark.parametrize("opt, schedule", [
    *((o, s) for o in _OPTS for s in _SCHEDULES if _SCHEDULES[s][0] != "momentum"),
    ("momentum", "momentum")])
def test_a_setting_changed_between_jitted_steps_is_used(opt, schedule):
    name, values = _SCHEDULES[schedule]
    rng = np.random.default_rng(7)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    w = Tensor(w0.copy(), requires_grad=True).realize()
    tw = torch.tensor(w0.copy(), requires_grad=True)
    ours, theirs = _OPTS[opt][0]([w]), _OPTS[opt][1]([tw])

    @rulegrad.jit
    def step(x, y):
        ours.zero_grad()
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        ours.step(loss)
        return loss

    for i, v in enumerate(values):
        x = rng.standard_normal((7, 5)).astype(np.float32)
        y = rng.standard_normal((7, 3)).astype(np.float32)
        setattr(ours, name, v)
        theirs.param_groups[0][name] = v
        loss = step(Tensor(x), Tensor(y))
        theirs.zero_grad()
        want = ((torch.from_numpy(x) @ tw - torch.from_numpy(y)) ** 2).mean()
        want.backward()
        theirs.step()
        np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"step {i}")
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"step {i}")
    assert step.replays >= 2  # (the schedule's first value was replayed: the case guarded)


def test_an_unchanged_setting_keeps_the_replay():
    """The same lr set again every step (a schedule's flat part) drops nothing."""
    w = Tensor(np.ones((3, 2), np.float32), requires_grad=True).realize()
    opt = SGD([w], lr=0.1)

    step = rulegrad.jit(product_step(opt, w))

    for _ in range(8):
        opt.lr = 0.1
        step(Tensor(np.ones((4, 3), np.float32)))
    assert step.replays == 5
