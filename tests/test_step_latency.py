"""A training step without the jit walks its graphs as few times as it can (issue 33).

The work is counted, never timed: the nodes the graph walks (`runtime/uop.py`'s toposort) give
back during a warm step, beside the size of the graph the step builds. Every step's loss and
parameters are checked against the same step in numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from call_counts import nodes_walked, python_calls

from rulegrad import Tensor, Variable
from rulegrad.nn.optim import SGD
from rulegrad.runtime.autograd import GradientError
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.realize import realize_tensors
from rulegrad.runtime.uop import UOp, toposort

# every test here counts a program's work as one that never used a second device sees it
pytestmark = pytest.mark.usefixtures("one_device")

D, H, C = 13, 7, 5  # (primes: no size is a vector's multiple)
LR = 0.05


def _numpy_step(w: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    """One SGD step of the MLP in float64 numpy, in place; the loss before it."""
    h = x @ w["w1"] + w["b1"]
    a = np.maximum(h, 0)
    z = a @ w["w2"] + w["b2"]
    zs = z - z.max(1, keepdims=True)
    logp = zs - np.log(np.exp(zs).sum(1, keepdims=True))
    loss = -(logp * y).sum(1).mean()
    dz = (np.exp(logp) * y.sum(1, keepdims=True) - y) / len(x)
    g = {"w2": a.T @ dz, "b2": dz.sum(0)}
    dh = (dz @ w["w2"].T) * (h > 0)
    g.update(w1=x.T @ dh, b1=dh.sum(0))
    for k in w:
        w[k] -= LR * g[k]
    return float(loss)


def _model(batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = {"w1": rng.standard_normal((D, H)) / np.sqrt(D), "b1": rng.standard_normal(H) * 0.1,
         "w2": rng.standard_normal((H, C)) / np.sqrt(H), "b2": rng.standard_normal(C) * 0.1}
    x = rng.standard_normal((batch, D))
    y = np.eye(C)[rng.integers(0, C, batch)]
    p = {k: Tensor(v.astype(np.float32), requires_grad=True).realize() for k, v in w.items()}
    tx, ty = Tensor(x.astype(np.float32)).realize(), Tensor(y.astype(np.float32)).realize()
    return w, x, y, p, tx, ty, SGD(list(p.values()), lr=LR)


def _forward(p, tx, ty) -> Tensor:
    logits = (tx @ p["w1"] + p["b1"]).relu() @ p["w2"] + p["b2"]
    return -(logits.log_softmax(1) * ty).sum(1).mean()


def _stepped_right(loss, want: float, p: dict, w: dict) -> None:
    """The realized step's loss and parameters are numpy's; the loss still keeps its graph and
    knows the step wrote what it read: a gradient through it is refused, as torch refuses one
    through a graph changed in place."""
    np.testing.assert_allclose(loss.item(), want, rtol=1e-4, atol=1e-6)
    for k in w:
        np.testing.assert_allclose(p[k].numpy(), w[k], rtol=1e-4, atol=1e-6)
    with pytest.raises(GradientError, match="written since"):
        loss.backward()


def _three_steps(batch: int):
    """The MLP after three steps (each loss checked against numpy), with numpy's loss of the
    fourth (and numpy's weights after it in w): (w, x, y, p, tx, ty, opt, that loss)."""
    w, x, y, p, tx, ty, opt = _model(batch)
    for _ in range(3):
        want = _numpy_step(w, x, y)
        opt.zero_grad()
        loss = _forward(p, tx, ty)
        loss.backward()
        opt.step(loss)
        np.testing.assert_allclose(loss.item(), want, rtol=1e-4, atol=1e-6)
    return w, x, y, p, tx, ty, opt, _numpy_step(w, x, y)


def _fourth_step_to_realize(batch: int):
    """Three steps of the MLP (each loss checked against numpy), then the fourth's loss and
    gradients built and its update scheduled, not realized: (numpy's weights after it, the
    parameters, the loss, numpy's loss, the tensors whose realize the step is)."""
    w, x, y, p, tx, ty, opt, want = _three_steps(batch)
    opt.zero_grad()
    loss = _forward(p, tx, ty)
    loss.backward()
    return w, p, loss, want, opt.schedule_step() + [loss]


def _warm_step_walks(batch: int) -> tuple[int, int]:
    """Three steps of the MLP, then a fourth whose graph walks are counted: (nodes walked, the
    size of the step's graph); every step's loss and parameters checked against numpy."""
    w, x, y, p, tx, ty, opt = _model(batch)
    graph: dict[str, int] = {}

    def step() -> float:
        opt.zero_grad()
        loss = _forward(p, tx, ty)
        loss.backward()
        roots = [loss.uop] + [q.grad.uop for q in p.values()]
        graph["nodes"] = len(toposort(UOp.sink(*roots))) - 1
        opt.step(loss)
        return loss.item()

    for _ in range(3):  # (the first steps schedule and build; each checked against numpy)
        want = _numpy_step(w, x, y)
        np.testing.assert_allclose(step(), want, rtol=1e-4, atol=1e-6)
    for k in w:
        np.testing.assert_allclose(p[k].numpy(), w[k], rtol=1e-4, atol=1e-6)
    want = _numpy_step(w, x, y)
    got: list[float] = []
    walked = nodes_walked(lambda: got.append(step()))
    walked -= graph["nodes"] + 1  # (the test's own walk of the step's graph)
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-6)
    for k in w:
        np.testing.assert_allclose(p[k].numpy(), w[k], rtol=1e-4, atol=1e-6)
    return walked, graph["nodes"]


@pytest.mark.parametrize("batch", [1, 3, 16])
def test_a_warm_training_step_walks_its_graph_about_twice_and_trains_as_numpy(batch):
    walked, nodes = _warm_step_walks(batch)
    # the forward graph once for backward (its search for realized values, its own, the
    # gradient's path: one walk), the realize's reach and reads of the loss once each;
    # before, every root the realize watched was walked again, and backward walked the
    # forward graph three times (3.2x the graph in all; 1.9x, then 1.65x once the realize found
    # the reads of what it watches in the walk that watches them)
    assert walked <= 2.5 * nodes, (walked, nodes)


def test_a_step_after_a_program_with_a_bound_variable_walks_as_few_nodes():
    """A process that once bound a Variable (a generation loop's length, here a sum over the
    first n rows) and then trains: a realize whose graph holds no bound variable does not walk
    it to take one out (runtime/variable.py's unbind; it did, at every realize, once any
    variable was bound: 302 nodes walked for a graph of 98, 1.9x became 3.1x)."""
    rows = np.random.default_rng(3).standard_normal((9, 4)).astype(np.float32)
    for v in (2, 7):
        n = Variable("n", 1, 9).bind(v)
        got = (Tensor(rows).shrink(((0, n), None)) * 2).sum(0).numpy()
        np.testing.assert_allclose(got, 2 * rows[:v].sum(0), rtol=1e-5, atol=1e-6)
    walked, nodes = _warm_step_walks(3)
    assert walked <= 2.5 * nodes, (walked, nodes)


def test_backward_walks_the_forward_graph_once():
    _, _, _, p, tx, ty, opt = _model(4)
    loss = _forward(p, tx, ty)
    size = len(toposort(loss.uop))
    walked = nodes_walked(loss.backward)
    # (each parameter's own node is walked too, as a root the search for realized values
    # looks at: two nodes, its buffer reshaped; and the first backward of a graph's form walks
    # the nodes its gradients add, not the forward's, to record them: gradient_forms.py)
    forward = set(toposort(loss.uop))
    added = {n for t in p.values() for n in toposort(t.grad.uop.src[0]) if n not in forward}
    assert walked <= size + 2 * len(p) + len(added), (walked, size, len(added))
    # and the gradients are torch's: d loss / d b2 = mean over rows of softmax - y
    logits = ((tx.numpy() @ p["w1"].numpy() + p["b1"].numpy()).clip(0) @ p["w2"].numpy()
              + p["b2"].numpy()).astype(np.float64)
    e = np.exp(logits - logits.max(1, keepdims=True))
    want = (e / e.sum(1, keepdims=True) - ty.numpy()).mean(0)
    np.testing.assert_allclose(p["b2"].grad.numpy(), want, rtol=1e-4, atol=1e-6)


def test_roots_realized_together_each_keep_the_reads_of_their_own_graph():
    """Two values realized together, each over a buffer of its own: a write into one buffer
    leaves the other value's graph good for a gradient, and the first's refused (its reads
    are its own graph's, though the realize walked the two graphs at once)."""
    rng = np.random.default_rng(1)
    a_np, b_np, w_np = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
    w = Tensor(w_np, requires_grad=True).realize()
    a, b = Tensor(a_np).realize(), Tensor(b_np).realize()
    u, v = (w * a).sum(), (w * b).sum()
    Tensor.realize(u, v)
    np.testing.assert_allclose([u.item(), v.item()], [w_np @ a_np, w_np @ b_np], rtol=1e-5)
    a.assign(Tensor(np.zeros(6, np.float32))).realize()  # u's graph read a: no longer its value
    v.backward()
    np.testing.assert_allclose(w.grad.numpy(), b_np, rtol=1e-6)
    w.grad = None
    with pytest.raises(GradientError, match="written since"):
        u.backward()


def test_a_replayed_schedule_makes_no_python_call_per_node_or_buffer():
    """A warm step's realize replays the schedule of its form: the form's key is a walk with no
    call per node, and each kernel's buffers are picked by a C call, not a call per buffer."""
    w, p, loss, want, tensors = _fourth_step_to_realize(8)
    calls = python_calls(lambda: realize_tensors(tensors))
    np.testing.assert_allclose(loss.item(), want, rtol=1e-4, atol=1e-6)
    for k in w:
        np.testing.assert_allclose(p[k].numpy(), w[k], rtol=1e-4, atol=1e-6)
    kernels = calls["schedule_item.py:__init__"]
    replay = sum(n for name, n in calls.items() if name.startswith("schedule_cache.py:"))
    assert kernels > 10 and calls["schedule_cache.py:cached_schedule"] == 1
    # the key's walk and the replay make no Python call per node, kernel or buffer: a few
    # calls, and one per float argument the step's kernels read (before, some 200: a
    # comprehension per node of several sources, a call per buffer and per kernel)
    assert replay <= kernels, (replay, kernels)


def test_a_gradient_reads_dtype_facts_without_a_call():
    """is_float, is_int, ... are read on most nodes by the gradient rules and the tensor ops:
    a dtype keeps them (its kind never changes), no property call per read."""
    rng = np.random.default_rng(2)
    a_np = rng.standard_normal((3, 5)).astype(np.float32)
    a = Tensor(a_np, requires_grad=True).realize()
    n = Tensor(rng.integers(0, 4, (3, 5)).astype(np.int32)).realize()
    out = ((a * 2).exp() * n.cast("float32")).sum()
    calls = python_calls(lambda: out.backward())
    assert not [k for k in calls if k.startswith("dtype.py:")], calls
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.exp(2 * a_np) * n.numpy(), rtol=1e-5)


@pytest.mark.parametrize("batch", [1, 7])
def test_a_step_realize_walks_the_graph_it_watches_once(batch):
    """The realize of an optimizer step (the loss, the gradients, the parameters' ASSIGNs)
    looks for the values that keep a graph for a gradient and for the buffers those graphs read
    in one walk of the loss's and gradients' joint graph (the ASSIGNs reach no gradient: not
    walked). Before, the buffers were found by a second walk of the same graphs (120 nodes
    walked for a graph of 102)."""
    w, p, loss, want, tensors = _fourth_step_to_realize(batch)
    watched = [t.uop for t in tensors if t.uop.op is not Ops.ASSIGN]
    assert len(watched) < len(tensors)  # (the parameters' ASSIGNs are among the roots)
    nodes = len(toposort(UOp.sink(*watched))) - 1
    walked = nodes_walked(lambda: realize_tensors(tensors))
    assert walked <= nodes, (walked, nodes)
    _stepped_right(loss, want, p, w)


@pytest.mark.parametrize("batch", [1, 7])
def test_a_step_realize_walks_no_gradient_graph(batch):
    """The gradients an optimizer step realizes (each CONTIGUOUS(DETACH(g)), as backward left
    it) reach no tensor that requires a gradient, whatever their graphs hold: the realize looks
    for the values that keep a graph in the loss's graph alone (before, in the joint graph of
    the loss and the gradients, 102 nodes walked for a loss graph of 60)."""
    w, p, loss, want, tensors = _fourth_step_to_realize(batch)
    grads = [q.grad.uop for q in p.values()]
    assert all(g.op is Ops.CONTIGUOUS and g.src[0].op is Ops.DETACH for g in grads)
    loss_nodes = len(toposort(loss.uop))
    assert len(toposort(UOp.sink(loss.uop, *grads))) - 1 > 1.5 * loss_nodes
    walked = nodes_walked(lambda: realize_tensors(tensors))
    assert walked <= loss_nodes, (walked, loss_nodes)
    _stepped_right(loss, want, p, w)


def _warm_step_calls(w, x, y, p, tx, ty, opt) -> dict:
    """The Python calls of one warm training step (forward, backward, the step, the loss
    read) after three, each step's loss and the parameters checked against numpy's."""
    def step() -> float:
        opt.zero_grad()
        loss = _forward(p, tx, ty)
        loss.backward()
        opt.step(loss)
        return loss.item()

    for _ in range(3):
        want = _numpy_step(w, x, y)
        np.testing.assert_allclose(step(), want, rtol=1e-4, atol=1e-6)
    want = _numpy_step(w, x, y)
    got: list[float] = []
    calls = python_calls(lambda: got.append(step()))
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-6)
    for k in w:
        np.testing.assert_allclose(p[k].numpy(), w[k], rtol=1e-4, atol=1e-6)
    return calls


@pytest.mark.parametrize("batch", [1, 6])
def test_a_warm_step_makes_few_python_calls(batch):
    """A warm training step run as it is (no jit: forward built, backward, the step realized by
    the schedule cache's replay, the loss read) makes 1,050 to 1,100 Python calls, and trains
    as numpy. Before, 1,500 to 1,620: every step built its nodes anew, derived its gradient by
    the rules and walked its schedule's key (the optimizer now keeps the last step's graph:
    tests/test_step_reuse.py); and before that 1,900 to 2,050: a product read its operands'
    shapes and ranks twenty times (a property call each, two for a tensor's), the realize's
    watch walked its graph twice, and a realize's small loops over roots, buffers and kernels
    were generators (a call per item)."""
    w, x, y, p, tx, ty, opt = _model(batch)

    calls = _warm_step_calls(w, x, y, p, tx, ty, opt)
    assert calls["schedule_cache.py:cached_schedule"] == 1  # (the step's schedule replayed)
    # the realize's watch walks the loss's graph alone (the gradients reach no variable): its
    # reads are every buffer of that walk, no pass over it to find whose (origins.py's _reads)
    assert calls["origins.py:_reads"] == 0, calls["origins.py:_reads"]
    total = sum(n for name, n in calls.items() if not name.startswith("C:"))
    assert total <= 1250, total


DEVICES = ("CPU", "CPU:1")


@pytest.mark.parametrize("batch", [2, 6])
def test_a_warm_sharded_step_is_not_lowered_again_and_trains_as_numpy(batch):
    """A data-parallel step (the batch sharded by rows over two devices, the parameters
    replicated) realizes a graph of the form of the last step's: its lowering to one program
    per device (rules/multi.rules) is replayed with its schedule, not rewritten by the rules
    again. Before, every step lowered it: some 11,600 Python calls per step of this model
    (3,100 after)."""
    w, x, y, _, _, _, _ = _model(batch)
    p = {k: Tensor(v.astype(np.float32), requires_grad=True).shard(DEVICES).realize()
         for k, v in w.items()}
    tx = Tensor(x.astype(np.float32)).shard(DEVICES, axis=0).realize()
    ty = Tensor(y.astype(np.float32)).shard(DEVICES, axis=0).realize()
    opt = SGD(list(p.values()), lr=LR)

    calls = _warm_step_calls(w, x, y, p, tx, ty, opt)
    assert calls["multi.py:_multi_pm"] == 0 and calls["multi.py:lower_multi"] == 0, calls
    total = sum(n for name, n in calls.items() if not name.startswith("C:"))
    assert total <= 5000, total


def test_a_sharded_graph_over_new_buffers_replays_its_lowering_with_their_values():
    """The replayed lowering reads the buffers of the graph it serves: a sharded product over
    fresh arrays each call, the rows split over two devices and the weight replicated, is
    numpy's at every call, lowered by the rules at the first call only (the form is the same,
    the buffers new)."""
    rng = np.random.default_rng(4)
    w_np = rng.standard_normal((5, 3)).astype(np.float32)
    w = Tensor(w_np).shard(DEVICES).realize()
    lowered = []
    for _ in range(4):
        x_np = rng.standard_normal((6, 5)).astype(np.float32)
        x = Tensor(x_np).shard(DEVICES, axis=0)
        out = (x @ w).relu().sum(0)
        calls = python_calls(lambda out=out: out.realize())
        lowered.append(calls["multi.py:lower_multi"])
        np.testing.assert_allclose(out.numpy(), np.maximum(x_np @ w_np, 0).sum(0),
                                   rtol=1e-5, atol=1e-5)
    assert lowered[0] >= 1 and lowered[1:] == [0, 0, 0], lowered


@pytest.mark.parametrize("batch", [1, 16])
def test_a_warm_step_walks_its_loss_graph_once(batch):
    """Backward walks the loss's graph, and the realize of the step (which looks for the values
    that keep a graph for a gradient, runtime/origins.py's watch) reads that walk again, kept
    with the loss (runtime/uop.py's keep_order), instead of walking the graph a second time.
    Before, a warm step walked 1.2x the size of its whole graph (loss and gradients), twice the
    loss's; now once the loss's."""
    w, x, y, p, tx, ty, opt, want = _three_steps(batch)
    opt.zero_grad()
    loss = _forward(p, tx, ty)
    loss_nodes = len(toposort(loss.uop))

    def step() -> None:
        loss.backward()
        opt.step(loss)

    walked = nodes_walked(step)
    assert walked <= loss_nodes, (walked, loss_nodes)
    _stepped_right(loss, want, p, w)


def test_a_kept_order_less_the_nodes_done_is_the_walks():
    """order_of(root, done), from the order keep_order kept, gives what toposort(root,
    stop=done) gives: the nodes not done and not under a done one, sources before users (the
    joint walk of a realize's roots takes each root's part so)."""
    from rulegrad.runtime.uop import keep_order, order_of

    rng = np.random.default_rng(5)
    a, b = (Tensor(rng.standard_normal((3, 4)).astype(np.float32)).realize() for _ in range(2))
    shared = (a * b).exp()
    first = (shared + a).sum(1)
    root = ((shared * 2).relu() @ b.T).sum() + first.sum()
    keep_order(root.uop, toposort(root.uop))
    for done in (set(), set(toposort(first.uop)), set(toposort(shared.uop)), {root.uop}):
        want = toposort(root.uop, stop=done.__contains__)
        assert order_of(root.uop, done) == want
        assert order_of(root.uop, done) is not order_of(root.uop, done)  # (a list of its own)
    assert order_of(root.uop) == toposort(root.uop)
