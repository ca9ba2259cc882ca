"""Review of step 59 (one walk per training step; the batch released): what it missed.

`readers_of` (runtime/tensor.py) found a step's lazy readers by a search that stops at the
first written buffer, tried before the answer kept on the root (`_graph_reads`' memo): a live
lazy value that reads no parameter (a running metric, a value kept from each batch) was searched
to its leaves at every step, the search never kept, so a loop that keeps one a step was
quadratic in its steps. Counted, never timed.
"""

from __future__ import annotations

import numpy as np
import pytest
from call_counts import python_calls

from rulegrad import Tensor
from rulegrad.nn.optim import SGD

pytestmark = pytest.mark.usefixtures("one_device")


def _chain(rng, depth: int) -> Tensor:
    """A lazy value of `depth` ops over a fresh host array: it reads no parameter."""
    a = Tensor(rng.standard_normal(4).astype(np.float32))
    for _ in range(depth):
        a = a * 1.001 + 0.5
    return a


@pytest.mark.parametrize("depth", [30, 90])
def test_a_step_does_not_search_again_the_live_values_that_read_no_parameter(depth):
    """A step with 20 live lazy values (each `depth` ops, asked once by an earlier step) does
    about the work of a step with none: their kept answer is read, their graphs not searched
    again. Before: every step searched each of them to its leaves (some 40 calls a node)."""
    rng = np.random.default_rng(0)
    w = Tensor(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True).realize()
    opt = SGD([w], lr=0.01)
    x = Tensor(rng.standard_normal((4, 5)).astype(np.float32)).realize()

    def step() -> None:
        opt.zero_grad()
        loss = (x @ w).square().mean()
        loss.backward()
        opt.step(loss)

    for _ in range(3):
        step()
    bare = sum(python_calls(step).values())
    kept = [_chain(rng, depth) for _ in range(20)]
    step()  # (asked once here)
    with_kept = sum(python_calls(step).values())
    assert with_kept - bare < 200, (bare, with_kept)
    np.testing.assert_allclose(kept[0].numpy(), kept[0].numpy())  # (still lazy, still right)


def _mlp(rng):
    w = Tensor(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True).realize()
    return w, SGD([w], lr=0.01)


def test_the_same_batch_through_a_view_keeps_its_graph():
    """`x = Tensor(a).reshape(...)` used step after step: the tensor of `Tensor(a)` is gone at
    once, the view over its buffer lives. The step's graph is kept (the view owns the buffer
    now), so the next step reads its gradient and key back and walks no graph, as a plain
    `Tensor(a)` does. Before: the kept graph was let go at every step (its batch's tensor
    gone), and every step walked the loss again."""
    rng = np.random.default_rng(1)
    w, opt = _mlp(rng)
    xn = rng.standard_normal((4, 5)).astype(np.float32)
    x = Tensor(xn.reshape(20)).reshape(4, 5)
    wn = w.numpy().astype(np.float64)

    def step() -> None:
        opt.zero_grad()
        loss = (x @ w).square().mean()
        loss.backward()
        opt.step(loss)

    for _ in range(4):
        step()
    calls = python_calls(step)
    assert calls["uop.py:toposort"] == 0
    for _ in range(5):  # (the same steps in float64 numpy: d/dw mean((xw)^2) = 2 x^T xw / n)
        wn = wn - 0.01 * 2 * xn.T.astype(np.float64) @ (xn @ wn) / (4 * 3)
    np.testing.assert_allclose(w.numpy(), wn, rtol=1e-5, atol=1e-6)


def test_a_fresh_batch_through_a_view_is_let_go_with_the_view():
    """A fresh `Tensor(a).reshape(...)` each step: the batch's buffer goes when the view, the
    loss and the logits go, not held by the optimizer's kept graph."""
    import weakref

    from rulegrad.runtime.realize import buffer_of

    rng = np.random.default_rng(2)
    w, opt = _mlp(rng)
    gone = []
    for _ in range(3):
        x = Tensor(rng.standard_normal(20).astype(np.float32)).reshape(4, 5)
        gone.append(weakref.ref(buffer_of(x.uop.src[0])))
        opt.zero_grad()
        loss = (x @ w).square().mean()
        loss.backward()
        opt.step(loss)
        del x, loss
        assert gone[-1]() is None
