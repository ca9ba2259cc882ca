"""rev43a's review of the round's front-end (issue 31/33): gradients kept across reads
(runtime/origins.py) against the plans' promises, checked against numpy/torch. Each test
failed on the trial merge."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from test_plans import _fresh_plans  # noqa: F401 - the autouse fixture, shared

from rulegrad import Tensor
from rulegrad.runtime import plans
from rulegrad.runtime.buffer import Buffer


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


def test_a_jit_replays_result_never_leaves_its_gradient_out_silently():
    """A jitted forward over a parameter, its output used with the parameter itself in a loss:
    torch's gradient has both paths. The recorded calls keep the output's graph
    (runtime/origins.py); a replay computes it with no graph, and backward gave the direct
    path only, silently (from the fourth call). Now each call's gradient is torch's, or a
    GradientError says the value came from a replay; detached, it is a constant again."""
    from rulegrad.runtime.autograd import GradientError
    from rulegrad.runtime.jit import jit

    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    w, tw = Tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    fwd = jit(lambda x: (x @ w).relu())
    for _ in range(6):
        x = rng.standard_normal((3, 4)).astype(np.float32)
        out, tout = fwd(Tensor(x)), torch.relu(torch.tensor(x) @ tw)
        try:
            (out * w[:3]).sum().backward()
        except GradientError as e:
            assert "jit" in str(e)
        else:
            (tout * tw[:3]).sum().backward()
            np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
        w.grad, tw.grad = None, None
        (out.detach() * w[:3]).sum().backward()  # (a constant: only the direct path)
        (tout.detach() * tw[:3]).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
        w.grad, tw.grad = None, None
    assert fwd.replays > 0  # (the replay still runs: its results just keep no graph)


def test_a_loss_of_a_jit_replays_result_alone_is_refused_for_the_jit():
    """The replayed output alone in the loss: the gradient is refused naming the jit (it said
    no tensor in the graph requires a gradient, which is not so)."""
    from rulegrad.runtime.autograd import GradientError
    from rulegrad.runtime.jit import jit

    w = Tensor(np.ones((4, 3), np.float32), requires_grad=True)
    fwd = jit(lambda x: (x @ w).exp())
    for i in range(6):
        out = fwd(Tensor(np.full((2, 4), i / 10, np.float32)))
        if fwd.replays:
            with pytest.raises(GradientError, match="jit"):
                out.sum().backward()
        else:  # (the calls run as they are keep the graph: exp(0.4 i) * 2 * (i / 10) * 4 ...)
            out.sum().backward()
            np.testing.assert_allclose(w.grad.numpy(), np.full((4, 3), 2 * i / 10 *
                                       np.exp(4 * i / 10), np.float32), rtol=1e-5)
            w.grad = None
    assert fwd.replays > 0


@pytest.mark.parametrize("how", ["reader", "also"])
def test_a_value_a_step_realized_is_never_a_silent_constant(how):
    """A value of a parameter built before `opt.step()` is realized by the step from the old
    values (a reader, or `opt.step(loss)`), then differentiated with the parameter: torch
    gives exp(w_old) * (w_new + 1) (exp saves its output); ours gave the direct path only,
    silently (the step's realize kept no graph: the parameter was its ASSIGN then). Now the
    value keeps its graph, whose parameter the step wrote: refused with words, as torch
    refuses a graph whose saved tensors changed in place."""
    from rulegrad.nn.optim import SGD
    from rulegrad.runtime.autograd import GradientError

    a = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)
    w = Tensor(a, requires_grad=True)
    opt = SGD([w], lr=0.1)
    (w * w).sum().backward()
    h = w.exp()
    if how == "reader":
        opt.step()
    else:
        opt.step(h)
    np.testing.assert_allclose(h.numpy(), np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), a * 0.8, rtol=1e-6)
    w.grad = None
    try:
        (h * w).sum().backward()
    except GradientError as e:
        assert "written since" in str(e)
    else:
        np.testing.assert_allclose(w.grad.numpy(), np.exp(a) * (a * 0.8 + 1), rtol=1e-5)


@pytest.mark.parametrize("shape", [(6,), (3, 2), (1, 6, 1)])
def test_a_reshape_of_a_parameter_read_then_used_keeps_its_gradient(shape):
    """`h = w.reshape(...)`, read, then in a loss with w: realizing h pointed it at w's own
    buffer (nothing to compute), so h was a constant and its path left out silently (torch:
    a view of w carries w's gradient)."""
    torch = pytest.importorskip("torch")
    a = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)
    w, tw = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w.realize()
    h, th = w.reshape(*shape), tw.reshape(*shape)
    np.testing.assert_array_equal(h.numpy(), a.reshape(shape))
    ((h * 3).sum() + (w * w).sum()).backward()
    ((th * 3).sum() + (tw * tw).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
