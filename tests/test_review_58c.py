"""Review of step58 (the kept step graph and its memos) and chk58 (the joint sweep), rev58c.

step58 reads a warm step's gradient (runtime/autograd.py) and its schedule key
(runtime/schedule_cache.py `_keyed`) back from the last call when the roots are the very same
nodes. Each test here drives a step sequence where a memo could hand back an answer of another
graph, another model or another rule set (a parameter assigned outside the optimizer, a batch
written in place, two models alternating over one batch, a fresh optimizer over the same
parameters, the loss realized before backward, backward run twice, a sharded parameter, the
jit), four steps of SGD, momentum and Adam each, against torch's losses and parameters. And the
kept graph holds no buffer of a model once the model and its optimizer are gone.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from optimizer_runs import OPTIMIZERS, C, D, H, mlp_batch, mlp_models  # noqa: E402
from optimizer_runs import mlp_loss as _forward  # noqa: E402

import rulegrad  # noqa: E402
from rulegrad import Tensor  # noqa: E402
from rulegrad.runtime.realize import buffer_of  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_device")

BATCH, STEPS = 6, 4


def _model(kind: str, seed: int) -> list:
    return mlp_models(kind, seed)


def _batch(rng) -> tuple[np.ndarray, np.ndarray]:
    return mlp_batch(rng, BATCH)


def _torch_loss(m, x, y):
    return _forward(torch, m[2], torch.from_numpy(x), torch.from_numpy(y))


def _same(m, got: float, want: float, where: str) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=where)
    for k in m[0]:
        np.testing.assert_allclose(m[0][k].numpy(), m[2][k].detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=f"{where}: {k}")


def _plain_step(m, X, Y, x, y) -> None:
    """One step in both libraries, the loss realized with the update, checked."""
    m[1].zero_grad()
    loss = _forward(Tensor, m[0], X, Y)
    loss.backward()
    m[1].step(loss)
    m[3].zero_grad()
    want = _torch_loss(m, x, y)
    want.backward()
    m[3].step()
    return loss.item(), want.item()


def _assigned_outside(kind, rng, X, Y, x, y):
    """w1 assigned new values (realized) between steps, outside the optimizer."""
    m = _model(kind, 0)
    for i in range(STEPS):
        _same(m, *_plain_step(m, X, Y, x, y), f"step {i}")
        new = rng.standard_normal((D, H)).astype(np.float32)
        m[0]["w1"].assign(Tensor(new)).realize()
        with torch.no_grad():
            m[2]["w1"].copy_(torch.from_numpy(new))


def _batch_written_in_place(kind, rng, X, Y, x, y):
    """The batch's buffers written in place between steps: the same nodes, new values."""
    m = _model(kind, 0)
    for i in range(STEPS):
        _same(m, *_plain_step(m, X, Y, x, y), f"step {i}")
        x[...], y[...] = _batch(rng)
        X.assign(Tensor(x.copy())).realize()
        Y.assign(Tensor(y.copy())).realize()


def _two_models_alternating(kind, rng, X, Y, x, y):
    """Two models of one shape stepped in turn over one batch: each step's graph is the other
    model's form over other buffers (one schedule key, other inputs)."""
    a, b = _model(kind, 0), _model(kind, 5)
    for i in range(STEPS):
        for name, m in (("a", a), ("b", b)):
            _same(m, *_plain_step(m, X, Y, x, y), f"step {i} model {name}")


def _a_new_optimizer(kind, rng, X, Y, x, y):
    """A fresh optimizer over the same parameters halfway (its state starts again)."""
    m = _model(kind, 0)
    make, make_torch = OPTIMIZERS[kind]
    for i in range(STEPS):
        if i == 2:
            m[1], m[3] = make(list(m[0].values())), make_torch(list(m[2].values()))
        _same(m, *_plain_step(m, X, Y, x, y), f"step {i}")


def _realized_before_backward(kind, rng, X, Y, x, y):
    """The loss realized and read before backward; the gradient read before the update."""
    m = _model(kind, 0)
    for i in range(STEPS):
        m[1].zero_grad()
        loss = _forward(Tensor, m[0], X, Y)
        got = loss.item()
        loss.backward()
        grad = m[0]["w1"].grad.numpy()
        m[1].step()
        m[3].zero_grad()
        want = _torch_loss(m, x, y)
        want.backward()
        np.testing.assert_allclose(grad, m[2]["w1"].grad.numpy(), rtol=1e-4, atol=1e-6)
        m[3].step()
        _same(m, got, want.item(), f"step {i}")


def _backward_twice_no_zero_grad(kind, rng, X, Y, x, y):
    """Two losses built from the same nodes, each differentiated, gradients accumulated across
    steps (no zero_grad): the second backward reads the memo, the sum must still be twice."""
    m = _model(kind, 0)
    for i in range(STEPS):
        loss = _forward(Tensor, m[0], X, Y)
        loss.backward()
        _forward(Tensor, m[0], X, Y).backward()
        m[1].step(loss)
        want = _torch_loss(m, x, y)
        want.backward()
        _torch_loss(m, x, y).backward()
        m[3].step()
        _same(m, loss.item(), want.item(), f"step {i}")


SCENARIOS = {f.__name__.strip("_"): f for f in (
    _assigned_outside, _batch_written_in_place, _two_models_alternating, _a_new_optimizer,
    _realized_before_backward, _backward_twice_no_zero_grad)}


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_warm_step_reads_back_no_stale_gradient_or_key(scenario, kind):
    rng = np.random.default_rng(1)
    x, y = _batch(rng)
    X, Y = Tensor(x.copy()).realize(), Tensor(y.copy()).realize()
    SCENARIOS[scenario](kind, rng, X, Y, x, y)


@pytest.mark.parametrize("kind", ["momentum", "adam"])
def test_the_jit_step_over_the_kept_graph_matches_torch(kind):
    """The jit records the step (its kept graph included) and replays it over fresh batches."""
    m = _model(kind, 0)

    @rulegrad.jit
    def step(X, Y):
        m[1].zero_grad()
        loss = _forward(Tensor, m[0], X, Y)
        loss.backward()
        m[1].step(loss)
        return loss

    rng = np.random.default_rng(2)
    for i in range(STEPS + 1):
        x, y = _batch(rng)
        got = step(Tensor(x), Tensor(y)).item()
        m[3].zero_grad()
        want = _torch_loss(m, x, y)
        want.backward()
        m[3].step()
        _same(m, got, want.item(), f"step {i}")


def test_a_wrong_user_rule_inside_a_with_block_runs_there_only(tmp_path):
    """A loss built again from the same nodes, its step inside `with add_rules(...)` and
    outside: the schedule key read back (`_keyed`) is the key of its salt, so a rule (wrong on
    purpose: x * 3 -> x, so whether it ran shows) runs in the block and not after it. With
    lr 0 the parameters stay, so every step's loss is the same program over the same values."""
    rules = tmp_path / "wrong.rules"
    rules.write_text("rules wrong = {\n  drop_three: MUL[x, c:CONST] if c.arg == 3.0 -> x\n}\n")
    rng = np.random.default_rng(3)
    w_np = rng.standard_normal((D, C)).astype(np.float32)
    x_np = rng.standard_normal((BATCH, D)).astype(np.float32)
    w = Tensor(w_np, requires_grad=True).realize()
    opt = rulegrad.nn.optim.SGD([w], lr=0.0)
    X = Tensor(x_np).realize()
    base = (x_np.astype(np.float64) @ w_np).sum()

    def step() -> float:
        opt.zero_grad()
        loss = (X @ w).sum() * 3.0
        loss.backward()
        opt.step(loss)
        return loss.item()

    outside = [step(), step()]
    with pytest.warns(RuntimeWarning), \
            rulegrad.add_rules(rules, "wrong", after="pm_rangeify", allow_refuted=True):
        inside = [step(), step()]
    after = [step(), step()]
    np.testing.assert_allclose(outside + after, [3 * base] * 4, rtol=1e-4)
    np.testing.assert_allclose(inside, [base] * 2, rtol=1e-4)


def test_a_model_deleted_with_its_optimizer_leaves_no_buffer_alive():
    """The optimizer keeps its last step's graph (and through it the last batch) until the next
    step; the memos hold weak references. Once the model, its optimizer and the loss are gone,
    none of their buffers (parameters, state, batch, gradients) is alive."""
    m = _model("adam", 0)
    rng = np.random.default_rng(4)
    x, y = _batch(rng)
    X, Y = Tensor(x).realize(), Tensor(y).realize()
    for _ in range(3):
        _plain_step(m, X, Y, x, y)
    ours = [weakref.ref(buffer_of(t.uop)) for t in [*m[0].values(), X, Y]]
    ours += [weakref.ref(buffer_of(t.grad.uop)) for t in m[0].values()]
    assert all(r() is not None for r in ours)
    del m, X, Y
    gc.collect()
    assert [r for r in ours if r() is not None] == []


DEVS = ("CPU", "CPU:1")


@pytest.mark.parametrize("axis", [0, None])
@pytest.mark.parametrize("kind", ["momentum", "adam"])
def test_a_sharded_parameter_over_one_batch_steps_as_torch(kind, axis):
    """A sharded parameter over one sharded batch: every warm step is the last one's graph
    (its key and gradient read back), over the two devices' buffers."""
    rng = np.random.default_rng(5)
    w_np = rng.standard_normal((4, 6)).astype(np.float32)
    x = np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3)
    w = Tensor(w_np).shard(DEVS, axis=axis)
    w.requires_grad = True
    tw = torch.tensor(w_np, requires_grad=True)
    make, make_torch = OPTIMIZERS[kind]
    ours, theirs = make([w]), make_torch([tw])
    X = Tensor(x).shard(DEVS, axis=None)
    for i in range(STEPS):
        ours.zero_grad()
        loss = ((w @ X).relu().sum(1) ** 2).sum().to("CPU")
        loss.backward()
        ours.step(loss)
        theirs.zero_grad()
        want = ((tw @ torch.tensor(x)).relu().sum(1) ** 2).sum()
        want.backward()
        theirs.step()
        np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-4, err_msg=f"step {i}")
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-5)
