"""The one-walk fresh-batch step (step 59) relanded with its two failures fixed (issue 33).

A step over a fresh batch keys its schedule by going on with its backward's walk, which numbers
the graph's nodes in backward's order: that key is not the graph's own (`graph_key`'s). The
same graph keyed by a walk of its own (the next step over the same batch, once another realize
came between) missed the cache, and a whole schedule was made again (some 22,000 Python calls
instead of 1,200: tests/test_device_use.py). Now the walk's key is an alias of the graph's own
(runtime/schedule_cache.py's `_aliased`): one key, one schedule, either way. And the walk noted
by backward for the step after it lives only while its loss does: a backward with no step after
it kept its batch alive (tests/test_review_43a.py). Counted, never timed; checked against torch.
"""

from __future__ import annotations

import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from call_counts import python_calls  # noqa: E402
from test_step_59 import _batch, _loss, _models, _same, _torch_step  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.runtime import schedule_cache  # noqa: E402
from rulegrad.runtime.realize import buffer_of  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_device")


@pytest.mark.parametrize("shape", [(11, 7, 5, 6), (3, 2, 2, 1), (13, 17, 3, 5)],
                         ids=lambda s: "-".join(map(str, s)))
@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
def test_a_step_keyed_by_its_backward_walk_and_by_its_own_is_one_schedule(kind, shape):
    """Fresh batches first (each step keyed by going on with backward's walk), then one batch
    step after step with a realize of something else between (the step's roots are no longer
    the last keyed: its key is walked from scratch): no step after the first of the form makes
    a schedule. Before: the walked key missed, and the step scheduled its graph again."""
    d, h, c, b = shape
    ours, opt, theirs, topt = _models(kind, d, h, c, seed=11)
    rng = np.random.default_rng(12)
    atol = 1e-4 if kind == "adam" else 1e-5
    x_np, y_np = _batch(rng, b, d, c)
    x, y = Tensor(x_np), Tensor(y_np)
    for k in range(5):
        if k < 2:  # (a fresh batch: went on with backward's walk)
            x_np, y_np = _batch(rng, b, d, c)
            x, y = Tensor(x_np), Tensor(y_np)
        want = _torch_step(theirs, topt, x_np, y_np)
        opt.zero_grad()
        loss = _loss(Tensor, ours, x, y)
        loss.backward()
        other = np.arange(k + 3, dtype=np.float32)
        np.testing.assert_allclose((Tensor(other) * 3 - 1).numpy(), other * 3 - 1)
        before = dict(schedule_cache.stats)
        calls = python_calls(lambda loss=loss: opt.step(loss))
        _same(ours, theirs, loss.item(), want, atol)
        if k > 0:
            assert schedule_cache.stats["misses"] == before["misses"], k
            assert calls["schedule_cache.py:graph_key"] <= (k >= 2), k  # (at most its own walk)


def test_a_backward_with_no_step_after_it_keeps_no_batch():
    """A loop that calls backward over fresh batches and never steps (a probe of the loss and
    its gradients): once its tensors, the loss and the gradients go, the batch goes, with no gc
    pass. Before: backward's walk, kept for a step that never came, held the last batch. The
    last loss and gradients are torch's."""
    ours, opt, theirs, _ = _models("sgd", 5, 4, 3, seed=13)
    rng = np.random.default_rng(14)
    for k in range(4):
        x_np, y_np = _batch(rng, 4, 5, 3)
        x, y = Tensor(x_np), Tensor(y_np)
        opt.zero_grad()
        loss = _loss(Tensor, ours, x, y)
        loss.backward()
        for t in theirs.values():
            t.grad = None
        want = _loss(torch, theirs, torch.from_numpy(x_np), torch.from_numpy(y_np))
        want.backward()
        if k == 3:  # (read once the batches are checked: a realize plan recorded for a
            # value's first runs holds the buffers it read a while, with or without a step)
            np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-5)
            for name in ours:
                np.testing.assert_allclose(ours[name].grad.numpy(), theirs[name].grad.numpy(),
                                           rtol=1e-4, atol=1e-6)
            break
        gone = weakref.ref(buffer_of(x.uop))
        opt.zero_grad()
        del x, y, loss
        assert gone() is None, k
