"""grad42's cases of issue 31 (no silent wrong answers): gradients through tensors whose value
was read (runtime/origins.py), deepcopy of a realized tensor, and float64 trigonometry at huge
arguments. Values are checked against torch autograd and numpy; each test failed on the code
the round started from."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn.optim import SGD, Adam
from rulegrad.runtime.autograd import GradientError
from rulegrad.runtime.ops import Ops

torch = pytest.importorskip("torch")

A = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)


def _pair(x: np.ndarray = A):
    return Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


def _close(ours: Tensor, theirs, rtol: float = 1e-5) -> None:
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-6)


# ---------------------------------------------------------------------- gradients after a read
_READS = {
    "numpy": lambda t: t.numpy(),
    "item": lambda t: t.item(),
    "tolist": lambda t: t.tolist(),
    "float": float,
    "realize": lambda t: t.realize(),
}


@pytest.mark.parametrize("read", list(_READS))
def test_a_loss_read_before_backward_keeps_its_graph(read):
    """The training loop's `print(loss.item())` before `loss.backward()`: backward raised "no
    tensor with requires_grad" (the read pointed the loss at its buffer); torch's gradient."""
    t, tt = _pair()
    loss = ((t * 2).exp() * t).sum()
    _READS[read](loss)
    loss.backward()
    ((tt * 2).exp() * tt).sum().backward()
    _close(t.grad, tt.grad)


def test_the_issues_example_and_a_read_intermediate_used_twice():
    """`o = t * 2; o.numpy(); o.sum().backward()` gives 2 (torch); an intermediate read, then
    used twice, and a gradient with respect to it too (a target that was realized)."""
    t, tt = _pair()
    o = t * 2
    o.numpy()
    o.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.full(A.shape, 2.0, np.float32))
    t, tt = _pair()
    h = (t * t).exp()
    h.realize()
    loss = (h * h + h.log()).sum()
    gh, gt = loss.gradient(h, t)
    th = (tt * tt).exp()
    th.retain_grad()
    (th * th + th.log()).sum().backward()
    _close(gh, th.grad)
    _close(gt, tt.grad)


def test_a_chain_of_reads():
    """Five ops, each read before the next is built (an RNN printing each state): the
    gradient flows through every realized step, as torch's."""
    t, tt = _pair()
    x, xx = t, tt
    for _ in range(5):
        x = (x * 1.1).sin()
        x.numpy()
        xx = (xx * 1.1).sin()
    x.sum().backward()
    xx.sum().backward()
    _close(t.grad, tt.grad)


def test_a_read_value_is_not_computed_again_by_its_gradient():
    """The gradient of exp reads exp's value: after `h.numpy()` it reads h's buffer, and its
    graph holds no EXP (the realized value is used, not recomputed)."""
    t, tt = _pair()
    h = t.exp()
    h.numpy()
    (g,) = h.sum().gradient(t)
    assert Ops.EXP not in {n.op for n in g.uop.toposort()}
    np.testing.assert_allclose(g.numpy(), np.exp(A), rtol=1e-6)


def test_lazy_records_and_a_parameter_read_after_use():
    """A tensor of host data made to require a gradient, an op over it kept as a lazy record
    (runtime/lazy.py) and read: its record's plan ran with no graph. And a lazy parameter read
    after a loss was built from it: the loss's graph holds its old node."""
    for _ in range(3):  # (again: the later reads would run the record's plan)
        t = Tensor(A)
        t.requires_grad_()
        o = (t * 3.0).exp()
        o.numpy()
        o.sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), 3 * np.exp(3 * A), rtol=1e-6)
    w = (Tensor(A) * 2.0).requires_grad_()
    loss = (w * w).sum()
    w.numpy()
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), 4 * A, rtol=1e-6)


def test_detach_still_cuts_a_read_graph():
    t, tt = _pair()
    o = t * 2
    o.numpy()
    (o.detach() * t).sum().backward()
    (tt * 2).detach().mul(tt).sum().backward()
    _close(t.grad, tt.grad)


def test_an_assign_into_a_read_value_wins():
    """torch's `o.copy_(v)`: later uses of o differentiate as v (no gradient to t through o's
    old graph), while a value built from o before the assign keeps its path to t."""
    t, tt = _pair()
    o, oo = t * 2, tt * 2
    o.numpy()
    y, yy = o * 3, oo * 3
    v = np.ones(A.shape, np.float32)
    o.assign(Tensor(v))
    oo.copy_(torch.tensor(v))
    (o * t).sum().backward()
    (oo * tt).sum().backward(retain_graph=True)
    _close(t.grad, tt.grad)
    t.grad, tt.grad = None, None
    y.sum().backward()
    yy.sum().backward()
    _close(t.grad, tt.grad)


@pytest.mark.parametrize("opt_class", [SGD, Adam])
def test_a_training_loop_that_prints_its_loss_first(opt_class):
    """`print(loss.item()); opt.zero_grad(); loss.backward(); opt.step()` against torch's
    loop, step by step."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    y = rng.standard_normal((7, 3)).astype(np.float32)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    w, tw = _pair(w0)
    opt = opt_class([w], lr=0.05)
    topt = {SGD: torch.optim.SGD, Adam: torch.optim.Adam}[opt_class]([tw], lr=0.05)
    for _ in range(4):
        loss = ((Tensor(x) @ w - Tensor(y)) ** 2).mean()
        tloss = ((torch.tensor(x) @ tw - torch.tensor(y)) ** 2).mean()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5)
        opt.zero_grad()
        topt.zero_grad()
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_a_gradient_through_a_value_a_step_changed_is_refused():
    """A value read, then the parameter it was computed from stepped in place: its graph no
    longer computes it, and a gradient through it is refused with words, as torch refuses it
    (its saved tensor was modified by an inplace operation). torch computes such a gradient
    from saved values where it saved none of the changed tensors; we always refuse."""
    w, tw = _pair()
    opt, topt = SGD([w], lr=0.1), torch.optim.SGD([tw], lr=0.1)
    h, th = w * w, tw * tw
    h.numpy()
    h.sum().backward()
    th.sum().backward(retain_graph=True)
    opt.step()
    topt.step()
    with pytest.raises(GradientError, match="written since"):
        h.sum().backward()
    with pytest.raises(RuntimeError, match="inplace"):
        th.sum().backward()


# ---------------------------------------------------------------------- deepcopy
@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_a_deepcopy_owns_its_data_and_a_copy_shares_it(lazy):
    """torch: deepcopy copies the storage (an in-place write to the original leaves it
    alone), copy.copy shares it (sees the write). A deepcopy shared the buffer."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = (Tensor(x) if lazy else Tensor(x, dtype="float32")).realize()
    tt = torch.tensor(x)
    deep, shallow, view = copy.deepcopy(t), copy.copy(t), copy.deepcopy(t.T)
    both = copy.deepcopy([t, t.T])  # (one storage, copied once: the copies share it)
    tdeep, tshallow, tview, tboth = (copy.deepcopy(tt), copy.copy(tt), copy.deepcopy(tt.T),
                                     copy.deepcopy([tt, tt.T]))
    t.assign(Tensor(np.full((2, 3), 7.0, np.float32)))
    tt.copy_(torch.full((2, 3), 7.0))
    both[0].assign(Tensor(np.ones((2, 3), np.float32)))
    tboth[0].copy_(torch.ones(2, 3))
    for ours, theirs in ((deep, tdeep), (shallow, tshallow), (view, tview), (both[1], tboth[1])):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_deepcopied_parameter_is_a_leaf_of_its_own():
    """A deepcopy of a parameter with a gradient: its own data, its own copy of .grad, and a
    gradient of its own from backward (torch's deepcopy of a leaf)."""
    t, tt = _pair()
    (t * t).sum().backward()
    (tt * tt).sum().backward()
    c, tc = copy.deepcopy(t), copy.deepcopy(tt)
    (c * 3).sum().backward()
    (tc * 3).sum().backward()
    _close(c.grad, tc.grad)
    _close(t.grad, tt.grad)
    t.assign(Tensor(np.zeros(A.shape, np.float32)))
    np.testing.assert_array_equal(c.numpy(), A)


@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_an_unpickled_tensor_writes_its_own_memory(lazy):
    """A pickled realized tensor carried its buffer's address: an assign into the unpickled
    copy wrote the original's storage (numpy: a pickled array is a copy)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = (Tensor(x) if lazy else Tensor(x, dtype="float32")) * 2.0
    t.numpy()
    u = pickle.loads(pickle.dumps(t))
    u.assign(Tensor(np.zeros((2, 3), np.float32)))
    np.testing.assert_array_equal(t.numpy(), 2.0 * x)
    np.testing.assert_array_equal(u.numpy(), np.zeros((2, 3), np.float32))
