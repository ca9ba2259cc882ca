"""grad44 (issue 31 leftovers): an assign passes gradients as torch's `copy_` does.

`y = x.clone(); y.copy_(w)`: w gets the gradient, x none; into a view, `y[1:3].copy_(w)`: w
gets the slice's gradient and x the rest. Before, an assign kept no graph: backward() said no
tensor required a gradient, or left the path out silently. The oracle is torch throughout
(torch's `flip` is a copy, not a view: the flipped write is the write of the flipped value).
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.autograd import GradientError

torch = pytest.importorskip("torch")
A = np.arange(6, dtype=np.float32) / 3 - 1
DEVS = ("CPU", "CPU:1")


def _close(ours, theirs):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)


CASES = {
    "whole": (np.arange(6) + 5.0, lambda y, w: y.assign(w), lambda y, w: y.copy_(w)),
    "slice": (np.array([5.0, 6.0]), lambda y, w: y[1:3].assign(w * 2),
              lambda y, w: y[1:3].copy_(w * 2)),
    "reads itself": (np.arange(6) + 5.0, lambda y, w: y.assign(y * w),
                     lambda y, w: y.copy_(y.clone() * w)),
    "view reads itself": (np.array([5.0, 6.0]), lambda y, w: y[0:2].assign(y[1:3] * w),
                          lambda y, w: y[0:2].copy_(y[1:3].clone() * w)),
    "reshape, permute, flip": (
        np.arange(6.0).reshape(2, 3),
        lambda y, w: y.reshape(3, 2).permute(1, 0).flip(1).assign(w.exp()),
        lambda y, w: y.reshape(3, 2).permute(1, 0).copy_(w.exp().flip(1))),
    "setitem, +=": (np.array([5.0, 6.0]), None, None),
    "cast": (np.array([0.5, 1.5]), lambda y, w: y[4:6].assign(w.cast("float32")),
             lambda y, w: y[4:6].copy_(w)),
}


@pytest.mark.parametrize("case", CASES)
def test_an_assign_passes_the_gradient_as_torchs_copy_(case):
    wv, ours, theirs = CASES[case]
    wdt = np.float64 if case == "cast" else np.float32
    x, w = Tensor(A, requires_grad=True), Tensor(wv.astype(wdt), requires_grad=True)
    tx, tw = torch.tensor(A, requires_grad=True), torch.tensor(wv.astype(wdt), requires_grad=True)
    y, ty = (x * 2 + 1).realize(), tx * 2 + 1
    if ours is None:
        y[1:3] = w * 3
        y += x
        ty[1:3] = tw * 3
        ty += tx
    else:
        ours(y, w)
        theirs(ty, tw)
    _close(y, ty)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    _close(x.grad if x.grad is not None else Tensor(np.zeros_like(A)), tx.grad)
    _close(w.grad, tw.grad)
    assert w.grad.dtype == w.dtype


def test_a_hand_written_update_of_a_parameter_keeps_no_graph():
    """`w.assign(w - lr * w.grad)` on a tensor that requires a gradient is an update (torch
    runs it under no_grad): its buffer keeps no graph of the step (nor a copy of the old
    weights per step), and the next gradient is the new value's."""
    w, tw = Tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    for _ in range(2):
        (w * w).sum().backward()
        w.assign(w - 0.1 * w.grad)
        assert w.uop.base.arg.origin is None
        w.grad = None
        (tw * tw).sum().backward()
        with torch.no_grad():
            tw.copy_(tw - 0.1 * tw.grad)
        tw.grad = None
    (w * w).sum().backward()
    (tw * tw).sum().backward()
    _close(w.grad, tw.grad)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_an_assign_into_a_sharded_tensor_passes_the_gradient(axis):
    """A whole sharded target: each part's new value is the value's part on its device (and
    reading itself, its old parts' graphs). Into a view of one: refused in words at backward,
    never a gradient with a path left out."""
    a = (np.arange(24, dtype=np.float32) / 7 - 1).reshape(4, 6)
    x, w = Tensor(a, requires_grad=True), Tensor(a[::-1].copy(), requires_grad=True)
    tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(a[::-1].copy(), requires_grad=True)
    y = (x.shard(DEVS, axis=axis) * 1).realize()
    y.assign((w * 3).shard(DEVS, axis=axis))
    y.assign(y * w.shard(DEVS, axis=axis))
    ty = tx * 1
    ty.copy_(tw * 3)
    ty.copy_(ty.clone() * tw)
    _close(y, ty)
    (y * y).sum().to("CPU").backward()
    (ty * ty).sum().backward()
    _close(w.grad, tw.grad)
    assert x.grad is None  # (torch: zeros; x is no longer in the graph at all)
    v = Tensor(a[:, :3].copy(), requires_grad=True)
    y[:, :3].assign(v.shard(DEVS, axis=axis if axis != 1 else None))
    with pytest.raises(GradientError, match="view of a sharded tensor"):
        (y * y).sum().to("CPU").backward()



def test_an_assign_into_a_row_of_a_matrix_passes_the_gradient():
    """The written buffer's graph is kept flat (the buffer's order); the matrix reads it as
    a reshape of the whole buffer, the same value in its shape."""
    a = A.reshape(2, 3)
    x, w = Tensor(a, requires_grad=True), Tensor(A[:3].copy(), requires_grad=True)
    tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(A[:3].copy(), requires_grad=True)
    y, ty = (x * 2).realize(), tx * 2
    y[1].assign(w.exp())
    ty[1].copy_(tw.exp())
    (y.permute(1, 0) * y.permute(1, 0) * Tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2))
     ).sum().backward()
    (ty.T * ty.T * torch.arange(6.0).reshape(3, 2)).sum().backward()
    _close(x.grad, tx.grad)
    _close(w.grad, tw.grad)
