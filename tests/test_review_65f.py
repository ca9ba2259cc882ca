"""rev65f: review of adv65 (an optimizer's setting changed between `rulegrad.jit` calls drops the
replays of its step) and rev65a (UOp's arity check).

- A setting of a subclass's own (`self.clip` of a user's SGD) was frozen by the replay: only the
  names the library declared (`lr`, `momentum`, ...) were `_Setting`s, so `opt.clip = 0.001`
  after the jit's fourth call changed nothing (0.39 off the same steps run eagerly).
- Each recording of a step appended its jit's reset to the optimizer's list, pruned only when a
  setting changed: a jit per epoch, or `jit.reset()` per epoch, grew it without bound.
The oracle is the same program run without the jit (and torch.optim for the built-in ones).
"""

from __future__ import annotations

import copy
import gc

import numpy as np
import pytest
from jit_steps import product_step

import rulegrad
from rulegrad import Tensor
from rulegrad.nn import optim
from rulegrad.nn.optim import SGD, Adam


class _Clipped(SGD):
    """A user's SGD with a setting of its own, set before super().__init__ as users do."""

    def __init__(self, params, lr: float, clip: float):
        self.clip = clip
        super().__init__(params, lr)

    def _update_param(self, i, g, shared):
        super()._update_param(i, g.clip(-self.clip, self.clip), shared)


class _Scaled(Adam):
    """A user's Adam whose own setting is a tuple (torch's `betas` style)."""

    def __init__(self, params, lr: float, scale: tuple[float, float]):
        super().__init__(params, lr)
        self.scale = scale

    def _update_param(self, i, g, shared):
        super()._update_param(i, g * self.scale[0] + self.scale[1], shared)


def _train(make, use_jit: bool, changes: dict[int, dict], steps: int = 10) -> np.ndarray:
    rng = np.random.default_rng(3)
    w = Tensor(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True).realize()
    opt = make([w])

    def body(x, y):
        opt.zero_grad()
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        opt.step(loss)
        return loss

    step = rulegrad.jit(body) if use_jit else body
    for i in range(steps):
        for name, value in changes.get(i, {}).items():
            setattr(opt, name, value)
        step(Tensor(rng.standard_normal((7, 5)).astype(np.float32)),
             Tensor(rng.standard_normal((7, 3)).astype(np.float32)))
    if use_jit:
        assert step.replays >= 2  # (the value before the change was replayed)
    return w.numpy()


@pytest.mark.parametrize("case", ["clip", "scale", "clip_and_lr"])
def test_a_subclass_setting_changed_between_jitted_steps_is_used(case):
    make, changes = {
        "clip": (lambda p: _Clipped(p, 0.1, 10.0), {5: {"clip": 0.001}}),
        "scale": (lambda p: _Scaled(p, 0.1, (1.0, 0.0)), {5: {"scale": (0.5, 0.25)}}),
        "clip_and_lr": (lambda p: _Clipped(p, 0.1, 10.0), {5: {"clip": 0.001},
                                                           7: {"lr": 0.3}}),
    }[case]
    want = _train(make, False, changes)
    got = _train(make, True, changes)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_subclass_setting_set_to_its_value_keeps_the_replay():
    """Set again to an equal value (a tuple equal but not the same object) drops nothing."""
    w = Tensor(np.ones((3, 2), np.float32), requires_grad=True).realize()
    opt = _Scaled([w], 0.1, (1.0, 0.0))

    step = rulegrad.jit(product_step(opt, w))

    for _ in range(8):
        opt.scale = (1.0, 0.0)
        opt.clip_note = "same"
        step(Tensor(np.ones((4, 3), np.float32)))
    assert step.replays == 5


def test_the_resets_kept_per_optimizer_do_not_grow_with_jits_or_resets():
    w = Tensor(np.ones((3, 2), np.float32), requires_grad=True).realize()
    opt = SGD([w], lr=0.1)
    x = Tensor(np.ones((4, 3), np.float32))
    for _ in range(12):  # a jit per epoch, dropped
        step = rulegrad.jit(product_step(opt, w))
        for _ in range(4):
            step(x)
        del step
    gc.collect()
    assert len(optim.forgets_of(opt)) <= 1
    step = rulegrad.jit(product_step(opt, w))
    for _ in range(12):  # one jit reset every epoch
        for _ in range(4):
            step(x)
        step.reset()
    assert len(optim.forgets_of(opt)) <= 2
    before = w.numpy()
    opt.lr = 0.2  # (the dead ones are skipped, the live one reset)
    for _ in range(4):
        step(x)
    np.testing.assert_allclose(w.numpy(), before - 4 * 0.2 * 4, rtol=1e-5)


def test_a_copy_changed_leaves_the_original_replayed():
    w = Tensor(np.ones((3, 2), np.float32), requires_grad=True).realize()
    opt = SGD([w], lr=0.1)
    step = rulegrad.jit(product_step(opt, w))
    x = Tensor(np.ones((4, 3), np.float32))
    for _ in range(4):
        step(x)
    replays = step.replays
    for other in (copy.copy(opt), copy.deepcopy(opt)):
        other.lr = 0.5
        other.extra = 1
    step(x)
    assert step.replays == replays + 1


def test_a_setting_set_with_no_jit_costs_one_python_call():
    """The scheduler-free path: a schedule's set with no jit recorded runs `__setattr__` alone
    (no weak dictionary's Python get, no reset); counted, not timed."""
    from call_counts import python_calls

    w = Tensor(np.ones((3, 2), np.float32), requires_grad=True).realize()
    opt = SGD([w], lr=0.1, momentum=0.9)
    calls = python_calls(lambda: [setattr(opt, "lr", 0.1 * i) for i in range(10)])
    inner = {k: n for k, n in calls.items() if not k.startswith("C:") and "test_review" not in k}
    assert inner == {"optim.py:__setattr__": 10}, inner


def test_a_nan_rate_set_again_keeps_the_replay():
    """NaN != NaN, but a NaN rate set again is the same constant: nothing recorded again."""
    w = Tensor(np.ones((3, 2), np.float32), requires_grad=True).realize()
    opt = SGD([w], lr=float("nan"))
    step = rulegrad.jit(product_step(opt, w))
    x = Tensor(np.ones((4, 3), np.float32))
    for _ in range(6):
        opt.lr = float("nan")
        step(x)
    assert step.replays == 3 and np.isnan(w.numpy()).all()
