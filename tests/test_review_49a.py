"""Review of round 49's front end (leaf marks, devices, sharding), against torch.

A variable's mark (runtime/tensor.py's `_marked`) is a number no other node has; the schedule
cache keyed graphs by that number, so a fresh input with requires_grad every step, or a second
model of the same shapes, was scheduled again at every step (before the marks, it was replayed).
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn.optim import SGD

torch = pytest.importorskip("torch")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    from rulegrad.runtime import schedule_cache

    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    schedule_cache.clear()


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (7, 13)])
def test_fresh_leaves_each_step_replay_one_schedule_with_torchs_values(fresh, shape):
    from rulegrad.runtime import schedule_cache

    rng = np.random.default_rng(49)
    n, k = shape
    w_np = rng.standard_normal((k, 4)).astype(np.float32)
    w, tw = Tensor(w_np.copy(), requires_grad=True), torch.tensor(w_np.copy(), requires_grad=True)
    opt, topt = SGD([w], lr=0.05, momentum=0.9), torch.optim.SGD([tw], lr=0.05, momentum=0.9)
    misses = []
    for _ in range(5):
        x_np = rng.standard_normal((n, k)).astype(np.float32)
        x, tx = Tensor(x_np, requires_grad=True), torch.tensor(x_np, requires_grad=True)
        opt.zero_grad()
        topt.zero_grad()
        loss = ((x @ w).relu() * x.sum(1, keepdim=True)).sum()
        tloss = ((tx @ tw).relu() * tx.sum(1, keepdim=True)).sum()
        loss.backward()
        tloss.backward()
        opt.step(loss)
        topt.step()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-5)
        misses.append(schedule_cache.stats["misses"])
    # the first step is scheduled; every later one, its leaf new, is the same program
    assert misses[1:] == [misses[0]] * 4


def test_a_second_model_of_the_same_shapes_replays_the_first_ones_schedule(fresh):
    from rulegrad.runtime import schedule_cache

    rng = np.random.default_rng(50)
    x_np = rng.standard_normal((6, 5)).astype(np.float32)
    misses = []
    for _ in range(3):
        w_np = rng.standard_normal((5, 2)).astype(np.float32)
        w, tw = Tensor(w_np.copy()), torch.tensor(w_np.copy())
        p, tp = w.T, tw.T  # a view made a leaf: marked, and it writes w
        p.requires_grad_()
        tp.requires_grad_()
        opt, topt = SGD([p], lr=0.1), torch.optim.SGD([tp], lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            topt.zero_grad()
            loss = (Tensor(x_np) @ p.T).relu().sum() + (p * w.T).sum()
            tloss = (torch.tensor(x_np) @ tp.T).relu().sum() + (tp * tw.T).sum()
            loss.backward()
            tloss.backward()
            opt.step(loss)
            with torch.no_grad():
                topt.step()
            np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-5, atol=1e-5)
        misses.append(schedule_cache.stats["misses"])
    # the first model schedules its steps; the next ones replay them
    assert misses[1:] == [misses[0]] * 2


DEVICES = ("CPU", "CPU:1")


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_a_view_of_realized_shards_trained_reads_torchs_values(axis, opt_name):
    """An optimizer's step realizes its updates together; a sharded root's tensor was pointed
    at the shards laid out in its own shape, and `p = s.T` read s's parts as p's (not torch)."""
    from rulegrad.nn import optim

    rng = np.random.default_rng(51)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    s = Tensor(a).shard(DEVICES, axis=axis).realize()
    p = s.T
    p.requires_grad_()
    ts = torch.tensor(a)
    tp = ts.T
    tp.requires_grad_()
    kw = {"lr": 0.1, "momentum": 0.9} if opt_name == "SGD" else {"lr": 0.1}
    opt, topt = getattr(optim, opt_name)([p], **kw), getattr(torch.optim, opt_name)([tp], **kw)
    for _ in range(3):
        opt.zero_grad()
        topt.zero_grad()
        (p * p * p).sum().backward()
        (tp * tp * tp).sum().backward()
        opt.step()
        with torch.no_grad():
            topt.step()
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("make", ["tensor_of", "view", "itself"])
def test_a_leaf_over_realized_shards_gets_its_own_gradient(axis, make):
    """Realized shards were left unmarked: `Tensor(s, requires_grad=True)` or `s.T` made a leaf
    was the very node of s (or s.T) elsewhere in the loss, and got twice torch's gradient."""
    rng = np.random.default_rng(52)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    s = Tensor(a).shard(DEVICES, axis=axis).realize()
    ts = torch.tensor(a)
    if make == "tensor_of":
        p, other, tp, tother = Tensor(s, requires_grad=True), s, ts.clone().requires_grad_(), ts
    elif make == "view":
        p, tp = s.T, ts.T
        p.requires_grad_()
        tp.requires_grad_()
        other, tother = s.T, ts.T
    else:  # the tensor itself; a plain copy of its values elsewhere
        p, tp = s, ts.clone().requires_grad_()
        p.requires_grad_()
        other, tother = Tensor(a).shard(DEVICES, axis=axis).realize(), ts
    (p * other * 3 + p * p).sum().backward()
    (tp * tother * 3 + tp * tp).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_a_sharded_leaf_written_by_index_still_takes_a_gradient(axis):
    """A sharded variable is marked (a view of its shards): `s[0] = v` through it is an update
    of the variable, as for one buffer, not a view's assign whose gradient is refused."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    s = Tensor(a).shard(DEVICES, axis=axis).realize()
    s.requires_grad_()
    s[0] = 5.0
    a[0] = 5.0
    np.testing.assert_array_equal(s.numpy(), a)
    ts = torch.tensor(a, requires_grad=True)
    (s * s).sum().backward()
    (ts * ts).sum().backward()
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy())


@pytest.mark.parametrize("v", [1, 3, 8])
def test_a_symbolic_view_made_a_leaf_is_not_the_equal_view_elsewhere(v):
    """`a[:n]` (n symbolic) made a leaf was left unmarked: the very node of `a[:n]` elsewhere in
    the loss, and backward gave it both uses' gradients (twice torch's)."""
    from rulegrad import Variable

    a_np = np.arange(1, 17, dtype=np.float32).reshape(8, 2)
    n = Variable("n", 1, 8).bind(v)
    a = Tensor(a_np)
    p = a.shrink(((0, n), None))
    p.requires_grad_()
    (p * a.shrink(((0, n), None)) * 2 + p.exp()).sum().backward()
    ta = torch.tensor(a_np)
    tp = ta[:v]
    tp.requires_grad_()
    (tp * ta[:v] * 2 + tp.exp()).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5)
