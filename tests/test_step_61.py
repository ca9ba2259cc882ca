"""The fresh-batch training step (issue 33, step 61): gradients read inside the loop keep no
batch alive.

A loop over fresh batches that reads its gradients (`p.grad.numpy()`, before or without the
step) had realize plans recorded for the first graphs of their form, before the form had a
plan of its own: each such roots plan held its graph, and with it that batch, until the table
dropped it (64 plans later); and a step whose gradients were realized already kept the last
batch alive into the next iteration (the optimizer's kept graph was not watched by its batch).
Counted with weak references to the batches' buffers, never by memory; values against torch.
"""

from __future__ import annotations

import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_step_59 import _batch, _loss, _models, _same  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.runtime.realize import buffer_of  # noqa: E402


def _read_grads(ours: dict, theirs: dict, atol: float) -> None:
    for k in ours:
        np.testing.assert_allclose(ours[k].grad.numpy(), theirs[k].grad.numpy(), rtol=1e-4,
                                   atol=atol)


@pytest.mark.parametrize("shape", [(5, 4, 3, 4), (7, 3, 2, 1), (3, 13, 5, 17)],
                         ids=lambda s: "-".join(map(str, s)))
@pytest.mark.parametrize("how", ["grads_then_step", "step_then_grads", "grads_no_step",
                                 "grads_then_step_loss"])
@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_reading_gradients_in_a_fresh_batch_loop_keeps_no_batch_alive(kind, how, shape):
    """Once a step's tensors (its batch, loss) are dropped, its batch's buffers are gone: no
    plan nor the optimizer holds them (before: the first two batches stayed for good, and the
    last one until the next step)."""
    d, h, c, b = shape
    ours, opt, theirs, topt = _models(kind, d, h, c, seed=21)
    rng = np.random.default_rng(22)
    gone: list[weakref.ref] = []
    atol = 1e-4 if kind == "adam" else 1e-5
    for k in range(5):
        x_np, y_np = _batch(rng, b, d, c)
        x, y = Tensor(x_np), Tensor(y_np)
        gone += [weakref.ref(buffer_of(x.uop)), weakref.ref(buffer_of(y.uop))]
        opt.zero_grad()
        loss = _loss(Tensor, ours, x, y)
        loss.backward()
        topt.zero_grad()
        want = _loss(torch, theirs, torch.from_numpy(x_np), torch.from_numpy(y_np))
        want.backward()
        if how == "step_then_grads":
            opt.step()
        else:
            _read_grads(ours, theirs, atol)
        if how == "grads_then_step":
            opt.step()
        elif how == "grads_then_step_loss":
            opt.step(loss)
        elif how == "step_then_grads":
            _read_grads(ours, theirs, atol)
        np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-4, atol=atol)
        if how != "grads_no_step":
            topt.step()
            _same(ours, theirs, loss.item(), want.item(), atol)
        del x, y, loss
        live = [i // 2 for i, r in enumerate(gone) if r() is not None]
        assert live == [], (k, live)


@pytest.mark.parametrize("n", [1, 7, 64 * 3 + 1])
def test_a_realize_plan_lets_its_batch_go_with_its_tensor(n):
    """A small graph over a tensor of host data, realized twice (a roots plan holds it, and
    serves the second time), holds that buffer no longer than the tensor lives; while it
    lives, the plan serves it. Before: the plan held it until 64 other plans came."""
    from rulegrad.runtime import plans

    x_np = np.arange(n, dtype=np.float32) - 3
    a = Tensor(x_np)
    np.testing.assert_allclose(((a * 2).relu() + 1).numpy(), np.maximum(x_np * 2, 0) + 1)
    hits = plans.stats["hits"]
    np.testing.assert_allclose(((a * 2).relu() + 1).numpy(), np.maximum(x_np * 2, 0) + 1)
    assert plans.stats["hits"] == hits + 1
    gone = weakref.ref(buffer_of(a.uop))
    del a
    assert gone() is None


def _sgd_wd(p):
    from rulegrad.nn.optim import SGD

    return SGD(p, lr=0.1, momentum=0.9, weight_decay=0.05)


KINDS = {"sgd": None, "momentum_wd": (_sgd_wd, lambda p: torch.optim.SGD(
    p, lr=0.1, momentum=0.9, weight_decay=0.05)), "adam": None, "adamw": None}


def _models_of(kind: str, d: int, h: int, c: int, seed: int) -> list:
    if KINDS[kind] is None:
        return _models(kind, d, h, c, seed)
    ours, _, theirs, _ = _models("sgd", d, h, c, seed)
    make, make_torch = KINDS[kind]
    return [ours, make(list(ours.values())), theirs, make_torch(list(theirs.values()))]


def _forward_backward(ours: dict, opt, theirs: dict, topt, x_np, y_np) -> tuple:
    """One step of torch's (zero, forward, backward, step) and ours up to the step, over the same
    batch: (our loss, torch's loss); the caller takes our step (or counts it)."""
    topt.zero_grad()  # (set_to_none: a frozen parameter's grad is None, as ours)
    want = _loss(torch, theirs, torch.from_numpy(x_np), torch.from_numpy(y_np))
    want.backward()
    topt.step()
    opt.zero_grad()
    loss = _loss(Tensor, ours, Tensor(x_np), Tensor(y_np))
    loss.backward()
    return loss, want


@pytest.mark.parametrize("sizes", [(11, 7, 5, (6, 6, 6, 2, 6, 6)), (3, 1, 2, (1, 1, 1)),
                                   (13, 17, 3, (5, 5, 4, 4, 5)), (2, 29, 7, (31, 31, 1, 31))],
                         ids=lambda s: "-".join(map(str, s[:3])) + "-b" + "".join(
                             f"_{b}" for b in s[3]))
@pytest.mark.parametrize("kind", list(KINDS))
def test_fresh_batch_steps_train_as_torch_when_the_batch_size_changes(kind, sizes):
    """Steps over fresh batches, the loss read after each, some batches smaller (the last
    batch of an epoch) and then the full size again: every loss and every parameter is
    torch's. A step whose shapes changed is another program, never the last one replayed."""
    d, h, c, sizes_ = sizes
    ours, opt, theirs, topt = _models_of(kind, d, h, c, seed=31)
    rng = np.random.default_rng(32)
    atol = 1e-4 if kind.startswith("adam") else 1e-5
    for b in sizes_:
        x_np, y_np = _batch(rng, b, d, c)
        loss, want = _forward_backward(ours, opt, theirs, topt, x_np, y_np)
        opt.step(loss)
        _same(ours, theirs, loss.item(), want.item(), atol)


@pytest.mark.parametrize("shape", [(5, 8, 3, 4), (9, 3, 2, 1), (4, 33, 5, 7)],
                         ids=lambda s: "-".join(map(str, s)))
@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_a_random_mask_is_drawn_anew_each_step(kind, shape):
    """Dropout by a mask of `Tensor.rand` in each step's graph: each step draws a new mask (the
    host generator advances; a replayed step must not reuse the last one), and the losses and
    parameters are torch's under the same masks (drawn by numpy from the same seed)."""
    d, h, c, b = shape
    ours, opt, theirs, topt = _models(kind, d, h, c, seed=41)
    rng, draw = np.random.default_rng(42), np.random.default_rng(43)
    Tensor.manual_seed(43)
    atol = 1e-4 if kind == "adam" else 1e-5
    keep = 0.5
    masks = []
    for _ in range(5):
        x_np, y_np = _batch(rng, b, d, c)
        m_np = (draw.random((b, h), dtype=np.float32) < keep).astype(np.float32) / keep
        masks.append(m_np)
        tx = torch.from_numpy(x_np)
        topt.zero_grad()
        hid = torch.relu(tx @ theirs["w1"] + theirs["b1"]) * torch.from_numpy(m_np)
        want = -(torch.log_softmax(hid @ theirs["w2"] + theirs["b2"], 1)
                 * torch.from_numpy(y_np)).sum(1).mean()
        want.backward()
        topt.step()
        x, y = Tensor(x_np), Tensor(y_np)
        opt.zero_grad()
        mask = (Tensor.rand(b, h) < keep) * (1 / keep)
        hid = (x @ ours["w1"] + ours["b1"]).relu() * mask
        loss = -((hid @ ours["w2"] + ours["b2"]).log_softmax(1) * y).sum(1).mean()
        loss.backward()
        opt.step(loss)
        _same(ours, theirs, loss.item(), want.item(), atol)
    assert len({m.tobytes() for m in masks}) == len(masks) or b * h < 4


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_warm_step_replays_its_update_with_no_tensor_op_and_follows_a_new_lr(kind):
    """From the second step over fresh batches, the optimizer's update is its last one rebuilt
    over the new gradients: no Tensor op runs in `opt.step` (before: Adam's update ran some 60
    Tensor ops, about 2,000 Python calls a step). A learning rate changed between steps (a
    schedule) is another update, traced again: the steps stay torch's."""
    from call_counts import python_calls

    ours, opt, theirs, topt = _models_of(kind, 7, 5, 3, seed=51)
    rng = np.random.default_rng(52)
    atol = 1e-4 if kind.startswith("adam") else 1e-5
    for k in range(6):
        if k == 4:  # (a schedule's new rate, on both sides)
            opt.lr = 0.03
            for g in topt.param_groups:
                g["lr"] = 0.03
        x_np, y_np = _batch(rng, 4, 7, 3)
        loss, want = _forward_backward(ours, opt, theirs, topt, x_np, y_np)
        calls = python_calls(lambda loss=loss: opt.step(loss))
        _same(ours, theirs, loss.item(), want.item(), atol)
        ops = calls["tensor.py:_binary"] + calls["tensor.py:operator"]
        if k in (0, 4):  # (traced: the update's ops run)
            assert ops > 0, k
        else:
            assert ops == 0, (k, ops)


@pytest.mark.parametrize("kind", ["adam", "adamw"])
def test_a_parameter_frozen_after_replayed_steps_counts_them_as_torch(kind):
    """Adam counts each parameter's steps (torch's per-parameter `step`): steps whose update was
    replayed count too, so a parameter frozen after them and unfrozen later has the bias
    correction of the steps it took, as torch's."""
    ours, opt, theirs, topt = _models_of(kind, 6, 4, 3, seed=61)
    rng = np.random.default_rng(62)
    for k in range(9):
        if k in (4, 6):  # w1 sits out steps 4 and 5 on both sides
            ours["w1"].requires_grad = k == 6
            theirs["w1"].requires_grad_(k == 6)
        x_np, y_np = _batch(rng, 5, 6, 3)
        loss, want = _forward_backward(ours, opt, theirs, topt, x_np, y_np)
        opt.step(loss)
        _same(ours, theirs, loss.item(), want.item(), 1e-4)


@pytest.mark.parametrize("kind", ["momentum_wd", "adam"])
def test_a_parameter_written_between_steps_is_read_by_the_replayed_update(kind):
    """A parameter given new values between steps (`w.assign(...)`, a checkpoint loaded): the
    updates after it read them, as torch's, whether or not its node changed."""
    ours, opt, theirs, topt = _models_of(kind, 6, 5, 3, seed=71)
    rng = np.random.default_rng(72)
    atol = 1e-4 if kind == "adam" else 1e-5
    for k in range(6):
        if k == 3:
            new = rng.standard_normal((6, 5)).astype(np.float32)
            ours["w1"].assign(Tensor(new)).realize()
            with torch.no_grad():
                theirs["w1"].copy_(torch.from_numpy(new))
        x_np, y_np = _batch(rng, 4, 6, 3)
        loss, want = _forward_backward(ours, opt, theirs, topt, x_np, y_np)
        opt.step(loss)
        _same(ours, theirs, loss.item(), want.item(), atol)
