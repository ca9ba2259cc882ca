"""Review 57a: the sharded graph's lowering cached with its schedule, the loss walk kept by
backward, and rangeify's recip_column, attacked for wrong answers. Every value is checked
against numpy or torch.

- runtime/realize.py schedules a sharded graph through the schedule cache keyed by the graph
  before its lowering (rules/multi.rules): one program over other shard axes, device tuples and
  a reshard between calls must each get its own lowering, and an assign into shards its own;
- runtime/uop.py's keep_order keeps backward's walk of a loss weakly: the loss's graph must
  die with it, and a realize that reads the kept walk must still keep the graph of a value
  that reaches a parameter (a later gradient flows through it, as torch's); and requires_grad
  set False then True again must leave the graphs built before reaching the tensor (they lost
  it, a silently wrong gradient: fixed in runtime/tensor.py's setter);
- rules/rangeify.rules' recip_column moves 1 / s of a value per column out of its reader: a
  user's `x / s` stays a divide (numpy's bits), and a user's `x * (1 / s)` is numpy's product,
  zeros and infinities included, under both schedulers.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn.optim import Adam
from rulegrad.runtime import plans

torch = pytest.importorskip("torch")

D2 = ("CPU", "CPU:1")


# ---------------------------------------------------------------------- sharded lowering
def test_one_program_over_other_shard_layouts_is_numpys_each_time():
    """The same program text over a tensor sharded along axis 0, axis 1 or replicated, over
    (CPU, CPU:1), its reverse and (CPU:2, CPU:3), round after round: each layout's lowering is
    its own (the key holds the MULTI's axis and devices), never a replay of another's."""
    rng = np.random.default_rng(57)
    layouts = [(axis, devs) for axis in (0, 1, None)
               for devs in (D2, D2[::-1], ("CPU:2", "CPU:3"))]
    for _ in range(2):
        for axis, devs in layouts:
            a = rng.standard_normal((6, 4)).astype(np.float32)
            w = rng.standard_normal((4, 4)).astype(np.float32)
            x = Tensor(a).shard(devs, axis=axis)
            e = np.exp(a + 1 - (a + 1).max(0))
            # (each realized first: the lowering's regrouping, shards or a copy on one device,
            # is what a hit replays)
            for got, want, dev in (((x * 2.5 + 1).sum(0), (a * 2.5 + 1).sum(0), devs),
                                   (x.exp().sum(1), np.exp(a).sum(1), devs),
                                   (x @ Tensor(w).shard(devs), a @ w, devs),
                                   ((x + 1).softmax(0), e / e.sum(0), devs),
                                   ((x + 1).to(devs[1]), a + 1, devs[1])):
                got.realize()
                assert got.device == dev, (got.device, axis, devs)
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_a_reshard_and_an_assign_into_shards_between_calls():
    """A realized tensor sharded along each axis in turn, then gathered and sharded again over
    the reversed devices; and a sharded tensor assigned to four times (one form), with a reader
    built before an assign realized beside it (the old value's)."""
    rng = np.random.default_rng(58)
    a = rng.standard_normal((6, 4)).astype(np.float32)
    t = Tensor(a).realize()
    for axis in (0, 1, None, 0):
        s = t.shard(D2, axis=axis)
        again = s.to("CPU").shard(D2[::-1], axis=1)
        for got, want, dev in (((s * 2).sum(0), (a * 2).sum(0), D2), (again + 1, a + 1, D2[::-1]),
                               ((again + 1).sum(1), (a + 1).sum(1), D2[::-1])):
            assert got.realize().device == dev
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    for axis in (0, 1, None):
        s = Tensor(a.copy()).shard(D2, axis=axis).realize()
        want = a.copy()
        for i in range(4):
            assert s.assign(s * 0.5 + (1.0 + i)).realize().device == D2
            want = want * np.float32(0.5) + np.float32(1.0 + i)
            np.testing.assert_allclose(s.numpy(), want, rtol=1e-6)
        old = (s * 3).sum(0)
        s.assign(s + 1)
        Tensor.realize(old, s)
        np.testing.assert_allclose(old.numpy(), (want * 3).sum(0), rtol=1e-5)
        np.testing.assert_allclose(s.numpy(), want + 1, rtol=1e-6)


# ---------------------------------------------------------------------- the kept loss walk
def _train(steps: int) -> tuple[list[weakref.ref], weakref.ref]:
    rng = np.random.default_rng(59)
    w = Tensor(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True)
    opt = Adam([w], lr=0.01)
    losses = []
    for _ in range(steps):
        x = Tensor(rng.standard_normal((4, 5)).astype(np.float32))
        opt.zero_grad()
        loss = (x @ w).relu().sum()
        loss.backward()
        loss.detach().numpy()  # (a realize of the loss between backward and the step)
        losses.append(weakref.ref(loss.uop))
        opt.step(loss)
        loss.item()
    return losses, weakref.ref(w.uop)


def test_a_loss_graph_dies_with_its_loss():
    """backward keeps its walk of the loss's graph for the step's realize, weakly keyed by the
    loss's node: once the losses, the parameter and the plans that replay their realizes are
    gone, no node of any loss's graph is alive (a table keyed strongly kept every step's whole
    graph, the parameter's buffer with it)."""
    losses, w = _train(3)
    plans.clear()
    gc.collect()
    assert [r() is None for r in losses] == [True] * 3
    assert w() is None


def test_a_realize_that_reads_the_kept_walk_keeps_the_graph_for_a_later_gradient():
    """backward(loss) keeps its walk; the loss realized after it (its watch reads that walk)
    must still keep the loss's graph as its buffer's origin, so a second loss built on the
    realized value has torch's gradient through it (a walk that missed the parameter left the
    value a constant: gradient 0 through it). Also a part realized in between, a second
    backward on a loss that shares nodes (accumulated, torch's retain_graph), and a detach."""
    rng = np.random.default_rng(60)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    x0 = rng.standard_normal((4, 5)).astype(np.float32)
    w = Tensor(w0.copy(), requires_grad=True)
    tw = torch.tensor(w0.copy(), requires_grad=True)
    x, tx = Tensor(x0), torch.tensor(x0)

    h, th = (x @ w).relu(), (tx @ tw).relu()
    loss, tloss = (h * h).sum(), (th * th).sum()
    loss.backward()
    tloss.backward(retain_graph=True)
    h.realize()  # a part of the loss, realized after backward
    (h.sum() * 3).backward()  # a second loss sharing h: gradients add
    (th.sum() * 3).backward(retain_graph=True)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-5)

    loss.realize()  # watch: the kept walk of the loss
    w.grad, tw.grad = None, None
    second, tsecond = loss * loss + loss.detach() * w.sum(), tloss * tloss + \
        tloss.detach() * tw.sum()
    second.backward()
    tsecond.backward()
    np.testing.assert_allclose(second.numpy(), tsecond.item(), rtol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-3)


# ---------------------------------------------------------------------- recip_column
COLUMNS = [((7, 13), 0), ((3, 5, 7, 11), 1), ((3, 5, 7, 11), 0), ((1, 9), 0), ((9, 1), 0),
           ((257, 3), 0)]


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape, axis", COLUMNS, ids=[f"{s}_{a}" for s, a in COLUMNS])
def test_a_users_divide_and_reciprocal_by_a_column_are_numpys(shape, axis, dtype, scheduler):
    """Whole numbers (below 1000; float16: below 8), so every sum and max is exact in any
    order: `x / x.sum(axis)` is numpy's divide bit for bit (the rule moves a RECIPROCAL, never
    a user's FDIV: x * (1 / s) differs in the last bit for some), and `x * (1 / x.max(axis))`,
    which recip_column computes once per column in a kernel of its own, numpy's reciprocal
    then product, bit for bit (float16: each op rounded to 11 bits)."""
    dt = np.dtype(dtype)
    top = 8 if dtype == "float16" else 1000  # (257 rows of them sum exactly: 2^11, 2^24)
    y = np.random.default_rng(sum(shape)).integers(1, top, size=shape).astype(dt)
    got = (Tensor(y) / Tensor(y).sum(axis, keepdim=True)).realize(scheduler=scheduler).numpy()
    np.testing.assert_array_equal(got, y / y.sum(axis, keepdims=True))
    top = Tensor(y).max(axis, keepdim=True)
    want = y * (dt.type(1) / y.max(axis, keepdims=True))
    for r in (top.reciprocal(), top.expand(shape).reciprocal()):
        got = (Tensor(y) * r).realize(scheduler=scheduler).numpy()
        assert got.dtype == dt
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_a_reciprocal_of_zero_columns_keeps_its_signs(scheduler):
    """Columns whose max is -0.0, +0.0, 4, -inf and NaN, their reciprocals broadcast down the
    rows and multiplied into another tensor: numpy's infinities of either sign, signed zeros,
    NaN at 0 * inf and from the NaN column."""
    inf, nan = np.inf, np.nan
    y = np.array([[-0.0, 0.0, 2.0, -inf, nan], [-1.0, -1.0, 4.0, -inf, 1.0],
                  [-3.0, -2.0, 1.0, -inf, 2.0]], np.float32)
    z = np.array([[1.0, -2.0, 0.5, 3.0, 1.0], [-1.0, 0.0, -0.0, -2.0, 0.0],
                  [0.0, 3.0, 2.0, 0.0, 1.0]], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        r_want = np.broadcast_to(np.float32(1) / y.max(0, keepdims=True), y.shape)
        want, plus = z * r_want, z * np.float32(0) + r_want
    # (1 / s of s broadcast down the rows: recip_column's pattern, as softmax's and layernorm's)
    r = Tensor(y).max(0, keepdim=True).expand(y.shape).reciprocal()
    got = (Tensor(z) * r).realize(scheduler=scheduler).numpy()
    for g, w in ((got, want), ((Tensor(z) * 0 + r).realize(scheduler=scheduler).numpy(),
                               plus)):
        assert np.array_equal(np.isnan(g), np.isnan(w)), (g, w)
        number = ~np.isnan(w)
        np.testing.assert_array_equal(g[number], w[number])
        np.testing.assert_array_equal(np.signbit(g[number]), np.signbit(w[number]))


@pytest.mark.parametrize("realized", [True, False])
def test_requires_grad_turned_off_and_on_keeps_the_graphs_built_before(realized):
    """A graph built while w required a gradient keeps flowing to w after requires_grad was
    set False and True again (torch's leaf stays the one tensor). The setter marked w's node
    again on the way back (a new variable mark), so the older graph read a node no longer
    w's: its part of the gradient was dropped without a word (1 where torch gives 1 + 2w)."""
    w0 = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 7
    w = Tensor(w0.copy(), requires_grad=True)
    if realized:
        w = Tensor(w0.copy()).realize().requires_grad_()
    tw = torch.tensor(w0.copy(), requires_grad=True)
    loss, tloss = (w * w).sum(), (tw * tw).sum()
    w.requires_grad = False
    w.requires_grad = True
    tw.requires_grad_(False)
    tw.requires_grad_(True)
    (loss + w.sum()).backward()
    (tloss + tw.sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
