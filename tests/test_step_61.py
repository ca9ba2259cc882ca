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
