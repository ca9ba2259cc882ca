"""rev45a: an adversarial review of round 44's front-end changes, each test a bug it found.

Oracles: torch (its autograd refuses a graph whose saved value was modified in place) and numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.autograd import GradientError

torch = pytest.importorskip("torch")
A = np.arange(6, dtype=np.float32) / 3 - 1


@pytest.mark.parametrize("how", ["into a view", "reads itself"])
def test_an_assign_keeps_a_stale_old_value_stale(how):
    """y = x * x is realized, then x is updated (an optimizer step): y's graph no longer
    computes it, and a gradient through y is refused (torch: "modified by an inplace
    operation"). An assign into y that keeps y's old contents (the rest of a view, or `y *
    w`) built its new graph from that stale one with fresh versions: the refusal was lost and
    x.grad silently came from x's new values."""
    x = Tensor(A, requires_grad=True)
    w = Tensor(np.full(6, 2.0, np.float32), requires_grad=True)
    y = (x * x).realize()
    x.assign(x - 1)
    if how == "into a view":
        y[0:2].assign(w[0:2])
    else:
        y.assign(y * w)
    tx = torch.tensor(A, requires_grad=True)
    ty = tx * tx
    with torch.no_grad():
        tx.sub_(1)
    ty[0:2] = torch.tensor([2.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.sum().backward()
    with pytest.raises(GradientError, match="written since"):
        y.sum().backward()


@pytest.mark.parametrize("how", ["into a view", "reads itself"])
def test_an_assign_keeps_a_jit_replays_value_refused(how):
    """A jit replay's result keeps no graph, so a gradient through it is refused (never left
    out silently: test_review_43a). An assign into it that keeps its old contents (the rest
    of a view, or `out * v`) read them as a constant copy: the refusal was lost, and w.grad
    silently missed the path through `out` (torch's, with that path, differs)."""
    from rulegrad.runtime.jit import jit

    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    w = Tensor(w0, requires_grad=True)
    fwd = jit(lambda x: (x @ w).relu())
    while fwd.replays == 0:
        x = rng.standard_normal((3, 4)).astype(np.float32)
        out = fwd(Tensor(x))
    v = Tensor(np.arange(3, dtype=np.float32), requires_grad=True)
    if how == "into a view":
        out[0].assign(v * 2)
    else:
        out.assign(out * v)
    tw, tv = torch.tensor(w0, requires_grad=True), torch.arange(3.0, requires_grad=True)
    tout = torch.relu(torch.tensor(x) @ tw) * 1
    if how == "into a view":
        tout[0] = tv * 2
    else:
        tout = tout * tv
    (tout * tw[:3]).sum().backward()
    try:
        (out * w[:3]).sum().backward()
    except GradientError as e:
        assert "jit" in str(e)
    else:  # (a gradient, if one is given, is torch's)
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("step", ["a.T", "a[1:3]", "(b, b.T)", "sharded"])
def test_a_jitted_step_that_returns_a_view_gives_each_calls_values(step):
    """Realizing a view of a buffer now keeps it a view (no kernel, no buffer of its own). A
    jitted step returning one recorded its result as no buffer, and the first replay raised
    ValueError ("1 is not in list"); a sharded result did too. A view is now replayed as the
    same view of the call's buffer (tests/test_jit.py counts it); a sharded result is not."""
    from rulegrad.runtime.jit import jit

    fns = {"a.T": (lambda a: a.permute(1, 0).realize(), lambda x: x.T),
           "a[1:3]": (lambda a: a[1:3].realize(), lambda x: x[1:3]),
           "(b, b.T)": (lambda a: _with_view(a * 2), lambda x: (x * 2).T),
           "sharded": (lambda a: (a * 2).shard(("CPU", "CPU:1"), axis=0).realize(),
                       lambda x: x * 2)}
    fn, want = fns[step]
    f = jit(fn)
    rng = np.random.default_rng(45)
    for _ in range(6):
        x = rng.standard_normal((4, 4)).astype(np.float32)
        np.testing.assert_array_equal(f(Tensor(x).realize()).numpy(), want(x))


def _with_view(b: Tensor) -> Tensor:
    t = b.permute(1, 0)
    Tensor.realize(b, t)
    return t


def test_a_whole_assign_into_a_matrix_keeps_no_history(monkeypatch):
    """A realized matrix's node is its buffer reshaped, so `y.assign(v)` took the reshape for
    a view and kept where(all true, v, y's old graph): each step's graph held every earlier
    step's (a training loop writing an activation buffer grew a Buffer per step, and its
    backward with it). The gradient is torch's at each step, and nothing grows."""
    import gc

    from rulegrad.runtime.buffer import Buffer

    monkeypatch.setenv("RULEGRAD_PLANS", "0")  # (a plan keeps its graph's buffers alive)
    rng = np.random.default_rng(45)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    w, tw = Tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    y = Tensor(np.zeros((5, 4), np.float32)).realize()
    inputs = []
    for _ in range(4):
        x = rng.standard_normal((5, 3)).astype(np.float32)
        xt = Tensor(x).realize()
        inputs.append(xt.uop.base.arg.uid)
        y.assign((xt @ w).tanh())
        (y * y).sum().backward()
        (torch.tanh(torch.tensor(x) @ tw) ** 2).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
        w.grad, tw.grad = None, None
    del xt
    gc.collect()
    alive = {o.uid for o in gc.get_objects() if type(o) is Buffer}
    assert [u in alive for u in inputs] == [False, False, False, True]  # (the last: y's graph)
