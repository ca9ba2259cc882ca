"""misc59 (issue 31): a parameter frozen mid-training (`p.requires_grad = False` after a step) is
skipped by the next `step()`, as torch's optimizers skip a parameter whose .grad is None: it
and its state (momentum, Adam's moments) stay as they are, and the others train on. Unfrozen,
it trains again; Adam's bias correction counts its own steps, as torch's per-parameter `step`.
step() used to refuse it: "parameter(s) [1] have no gradient: call loss.backward()", though
backward() had run. A parameter that does require a gradient and has none is still an error,
now naming it. torch is the oracle for the updates; the frozen values are checked exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn.optim import SGD, Adam

rng = np.random.default_rng(59)
X = rng.standard_normal((6, 3)).astype(np.float32)
A0 = rng.standard_normal((3, 4)).astype(np.float32)
B0 = rng.standard_normal(4).astype(np.float32)
C0 = rng.standard_normal(1).astype(np.float32)
# (step, index of the parameter, requires_grad from that step on)
SCHEDULE = {1: (1, False), 2: (2, False), 4: (1, True), 5: (2, True)}
# name: (ours, its arguments, torch's, its arguments)
OPTIMIZERS = {
    "sgd": (SGD, {"lr": 0.1}, "SGD", {"lr": 0.1}),
    "sgd momentum wd": (SGD, {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}, "SGD",
                        {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    "sgd nesterov": (SGD, {"lr": 0.05, "momentum": 0.5, "nesterov": True}, "SGD",
                     {"lr": 0.05, "momentum": 0.5, "nesterov": True}),
    "adam": (Adam, {"lr": 0.01}, "Adam", {"lr": 0.01}),
    "adam betas": (Adam, {"lr": 0.01, "b1": 0.8, "b2": 0.99}, "Adam",
                   {"lr": 0.01, "betas": (0.8, 0.99)}),
}


def _loss(xs, a, b, c):
    return (((xs @ a).tanh() @ b + c) ** 2).sum()


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_parameter_frozen_then_unfrozen_trains_as_torchs(name):
    torch = pytest.importorskip("torch")
    ours_cls, kw, theirs_name, tkw = OPTIMIZERS[name]
    ours = [Tensor(v.copy()).requires_grad_() for v in (A0, B0, C0)]
    theirs = [torch.tensor(v.copy(), requires_grad=True) for v in (A0, B0, C0)]
    opt, topt = ours_cls(ours, **kw), getattr(torch.optim, theirs_name)(theirs, **tkw)
    for step in range(8):
        if step in SCHEDULE:
            i, on = SCHEDULE[step]
            ours[i].requires_grad = on
            theirs[i].requires_grad_(on)
        before = [p.numpy().copy() for p in ours]
        opt.zero_grad()
        _loss(Tensor(X), *ours).backward()
        opt.step()
        topt.zero_grad(set_to_none=True)
        _loss(torch.tensor(X), *theirs).backward()
        topt.step()
        for i, (p, t) in enumerate(zip(ours, theirs)):
            if not t.requires_grad:  # skipped: the very same values
                np.testing.assert_array_equal(p.numpy(), before[i], err_msg=f"{step} {i}")
            np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name} step {step} parameter {i}")


def test_every_parameter_frozen_is_a_step_that_changes_nothing():
    ps = [Tensor(v.copy()).requires_grad_() for v in (A0, B0)]
    opt = Adam(ps, lr=0.1)
    opt.zero_grad()
    _loss(Tensor(X), *ps, 0.0).backward()
    opt.step()
    after = [p.numpy().copy() for p in ps]
    for p in ps:
        p.requires_grad = False
    opt.zero_grad()
    opt.step()
    for p, v in zip(ps, after):
        np.testing.assert_array_equal(p.numpy(), v)


def test_a_parameter_that_trains_without_a_gradient_is_named():
    """Backward not run for it (zero_grad after backward): the error names it, index and
    shape, and says what to do."""
    ps = [Tensor(v.copy()).requires_grad_() for v in (A0, B0)]
    opt = SGD(ps, lr=0.1)
    _loss(Tensor(X), *ps, 0.0).backward()
    ps[1].grad = None
    with pytest.raises(ValueError, match=r"parameter\(s\) 1 \(shape \(4,\)\).*backward"):
        opt.step()
