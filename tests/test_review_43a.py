"""rev43a's review of the round's front-end (issue 31/33): gradients kept across reads
(runtime/origins.py) against the plans' promises, checked against numpy/torch. Each test
failed on the trial merge."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime import plans
from rulegrad.runtime.buffer import Buffer


@pytest.fixture(autouse=True)
def _fresh_plans(monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    plans.clear()
    yield
    plans.clear()


def _alive(uids: set[int]) -> set[int]:
    gc.collect()
    return {o.uid for o in gc.get_objects() if type(o) is Buffer and o.uid in uids}


@pytest.mark.parametrize("requires_grad", [False, True])
def test_a_loop_over_fresh_batches_that_reads_its_loss_keeps_no_batch_alive(requires_grad):
    """`print(loss.item())` in a loop over fresh batches of one shape: a form plan runs the
    loss and holds none of the graph's buffers (runtime/plans.py), so a batch dropped by the
    loop dies. With a parameter that requires a gradient the loss keeps its graph
    (runtime/origins.py) on its buffer, which the idle plan held: the last batch (of any
    size: a form plan's graph is not counted) stayed alive as long as the plan."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((16, 3)).astype(np.float32)
    w = Tensor(w0, requires_grad=requires_grad)
    uids = set()
    for _ in range(6):
        xs = rng.standard_normal((37, 16)).astype(np.float32)
        x = Tensor(xs)
        loss = ((x @ w) ** 2).mean()
        assert loss.item() == pytest.approx(float(((xs @ w0) ** 2).mean()), rel=1e-5)
        uids.add(x.uop.base.arg.uid)
        if requires_grad:  # (the kept graph still gives torch's gradient: 2 x^T (x w) / n)
            loss.backward()
            np.testing.assert_allclose(w.grad.numpy(), 2 * xs.T @ (xs @ w0) / (len(xs) * 3),
                                       rtol=1e-4, atol=1e-6)
            w.grad = None
        last = x.uop.base.arg.uid
        del x, loss
    assert plans.stats["form_hits"] > 0  # (the runs a form plan served)
    assert last not in _alive(uids)
