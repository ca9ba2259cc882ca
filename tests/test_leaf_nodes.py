"""A leaf whose storage other tensors also read gets its own gradient, against torch.

Nodes are shared by value, so a leaf that is a buffer or a view of one (`b = a.T` made to
require a gradient, `Tensor(t, requires_grad=True)`) was the very node of an equal view or
tensor elsewhere in the loss, and backward summed both uses into it: twice torch's gradient.
Such a leaf still reads its storage, as torch's views do: an optimizer's step through it writes
the base (`b = a.T; b.requires_grad_()` is a view of a in torch, and `b -= ...` changes a).
"""

from __future__ import annotations

import numpy as np
import pytest

import rulegrad
from rulegrad import Tensor
from rulegrad.nn.optim import SGD
from rulegrad.runtime.autograd import GradientError
from rulegrad.runtime.realize import buffer_of

torch = pytest.importorskip("torch")

A = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], np.float32)
W = np.array([[2.0, 1.0], [-1.0, 3.0], [0.5, -2.0]], np.float32)


@pytest.fixture(params=["rangeify", "kernelize", "oracle"])
def scheduler(request, monkeypatch):
    if request.param == "oracle":
        monkeypatch.setenv("RULEGRAD_BACKEND", "oracle")
    else:
        monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)
    return request.param


def _grad(w):
    return w.grad.numpy()


def test_a_view_made_a_leaf_is_not_the_equal_view_elsewhere(scheduler):
    a = Tensor(A)
    b = a.T
    b.requires_grad_()
    (b * a.T).sum().backward()
    ta = torch.tensor(A)
    tb = ta.T
    tb.requires_grad_()
    (tb * ta.T).sum().backward()
    assert tb._is_view()  # (torch's b reads a's storage: so does ours, below)
    np.testing.assert_array_equal(_grad(b), tb.grad.numpy())


def test_a_tensor_of_a_tensor_made_a_leaf_is_not_that_tensor(scheduler):
    t = Tensor(A)
    p = Tensor(t, requires_grad=True)
    (p * t).sum().backward()
    tt = torch.tensor(A)
    tp = tt.clone().requires_grad_()
    (tp * tt).sum().backward()
    np.testing.assert_array_equal(_grad(p), tp.grad.numpy())


def test_a_one_dimensional_leaf_over_a_shared_buffer(scheduler):
    v = np.array([1.5, -2.0, 4.0, 0.25], np.float32)
    t = Tensor(v)
    p = Tensor(t, requires_grad=True)
    ((p * t) + (t * 3.0) * p).sum().backward()
    tt = torch.tensor(v)
    tp = tt.clone().requires_grad_()
    ((tp * tt) + (tt * 3.0) * tp).sum().backward()
    np.testing.assert_allclose(_grad(p), tp.grad.numpy(), rtol=1e-6)


def test_a_leaf_used_twice_directly_and_through_views(scheduler):
    a = Tensor(A)
    b = a[:, 1:]  # a slice made a leaf, read again as itself, through a view, and by a
    b.requires_grad_()
    loss = (b * b).sum() + (b.T * a[:, 1:].T * 2.0).sum() + (a[:, 1:] * 3.0).sum()
    loss.backward()
    ta = torch.tensor(A)
    tb = ta[:, 1:]
    tb.requires_grad_()
    tloss = (tb * tb).sum() + (tb.T * ta[:, 1:].T * 2.0).sum() + (ta[:, 1:] * 3.0).sum()
    tloss.backward()
    np.testing.assert_allclose(_grad(b), tb.grad.numpy(), rtol=1e-6)


def test_two_leaves_over_one_buffer_get_their_own_gradients(scheduler):
    a = Tensor(A)
    b, c = a.T, a.T
    b.requires_grad_()
    c.requires_grad_()
    (b * 2.0 * c + c).sum().backward()
    ta = torch.tensor(A)
    tb, tc = ta.T, ta.T
    tb.requires_grad_()
    tc.requires_grad_()
    (tb * 2.0 * tc + tc).sum().backward()
    np.testing.assert_allclose(_grad(b), tb.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(_grad(c), tc.grad.numpy(), rtol=1e-6)


def _torch_sgd_through_view(steps: int, momentum: float = 0.0):
    ta = torch.tensor(A)
    tb = ta.T
    tb.requires_grad_()
    opt = torch.optim.SGD([tb], lr=0.1, momentum=momentum)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (tb * torch.tensor(W)).sum() + (tb * ta.T).sum() * 0.5
        loss.backward()
        losses.append(loss.item())
        opt.step()
    return losses, tb.detach().numpy(), ta.numpy()


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_steps_through_a_view_update_the_base_as_torchs(scheduler, momentum):
    a = Tensor(A)
    b = a.T
    b.requires_grad_()
    opt = SGD([b], lr=0.1, momentum=momentum)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = (b * Tensor(W)).sum() + (b * a.T).sum() * 0.5
        loss.backward()
        losses.append(loss.item())
        opt.step()
    want_losses, want_b, want_a = _torch_sgd_through_view(3, momentum)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=1e-5)
    np.testing.assert_allclose(a.numpy(), want_a, rtol=1e-5)  # the base saw every step


def test_a_marked_leaf_realized_with_others_keeps_its_own_gradient():
    t = Tensor(A)
    p = Tensor(t, requires_grad=True)
    other = (t * 2.0).contiguous()
    Tensor.realize(p, other)  # (realized together: p must stay its own node)
    (p * t).sum().backward()
    np.testing.assert_array_equal(_grad(p), A)


def test_a_jitted_step_through_a_view_replays_torchs_steps():
    a = Tensor(A)
    b = a.T
    b.requires_grad_()
    opt = SGD([b], lr=0.1)

    @rulegrad.jit
    def step(w):
        opt.zero_grad()
        loss = (b * w).sum() + (b * a.T).sum() * 0.5
        loss.backward()
        opt.step(loss)
        return loss

    calls = 7
    losses = [step(Tensor(W)).item() for _ in range(calls)]
    want_losses, want_b, want_a = _torch_sgd_through_view(calls)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=1e-5)
    np.testing.assert_allclose(a.numpy(), want_a, rtol=1e-5)
    assert step.replays == calls - 3 and step.refused == []


def test_the_base_of_a_view_leaf_is_no_variable_after_a_step(scheduler):
    """A step writes the base through the view: an update (torch's no_grad), so the base
    keeps no graph that leads to the leaf; a loss of the base alone has no gradient to give,
    after the step as before it (torch raises too)."""
    a = Tensor(A)
    b = a.T
    b.requires_grad_()
    (b * Tensor(W)).sum().backward()
    b.assign(b - b.grad * 0.1)  # (the step by hand: SGD's is one schedule of ASSIGNs)
    b.grad = None
    # (nor is any graph kept on the base's buffer: each step's would hold the one before)
    assert buffer_of(a.uop).origin is None
    with pytest.raises(GradientError, match="no tensor with requires_grad"):
        (a * Tensor(W.T)).sum().backward()
    assert b.grad is None
    ta = torch.tensor(A)
    with pytest.raises(RuntimeError, match="does not require grad"):
        (ta * torch.tensor(W.T)).sum().backward()


# (`Tensor(a)` is a copy of a's storage, as torch.tensor(a): no view, no mark)
@pytest.mark.parametrize("make", [lambda a: a.T, lambda a: a[:, 1:], lambda a: a.reshape(6)],
                         ids=["permute", "shrink", "flat"])
def test_the_schedulers_first_pass_drops_the_mark(make):
    """The mark is for gradients only: the first pass of both schedulers (earliest_rewrites)
    gives the graph it gives without it, so kernels and their caches are the same."""
    from rulegrad.rules import matcher
    from rulegrad.runtime.rewrite import graph_rewrite
    from rulegrad.runtime.uop import UOp

    a = Tensor(A)
    leaf, plain = make(a), make(a)
    leaf.requires_grad_()
    assert leaf.uop is not plain.uop
    earliest = matcher("rangeify", "earliest_rewrites")
    marked = graph_rewrite(UOp.sink((leaf * 2.0 + plain).uop), earliest)
    unmarked = graph_rewrite(UOp.sink((plain * 2.0 + plain).uop), earliest)
    assert marked is unmarked


def test_a_leaf_made_of_a_leaf_is_a_variable_of_its_own(scheduler):
    a = Tensor(A)
    b = a.T
    b.requires_grad_()
    b.requires_grad_()  # (again: still the node the loss reads)
    p = Tensor(b, requires_grad=True)
    (p * b * 2.0 + b).sum().backward()
    tb = torch.tensor(A).T.requires_grad_()
    tp = tb.detach().clone().requires_grad_()
    (tp * tb * 2.0 + tb).sum().backward()
    np.testing.assert_allclose(_grad(b), tb.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(_grad(p), tp.grad.numpy(), rtol=1e-6)
