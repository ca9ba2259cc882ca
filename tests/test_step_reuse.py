"""A warm training step over the same buffers is the last step's graph again (issue 33).

The optimizer keeps its last step's graph until the next step (api/nn/optim.py's `_keep`), so
the forward, the gradient and the update the next step builds over the same buffers are the very
same nodes (hash-consed): the gradient (runtime/autograd.py) and the schedule's key
(runtime/schedule_cache.py) are read back, not derived again. A step over a fresh batch is
other nodes and derives its own, and the graph kept lets go of the batch before it at the next
step. Counted, never timed; every step checked against torch.
"""

from __future__ import annotations

import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from call_counts import nodes_walked, python_calls  # noqa: E402
from optimizer_runs import mlp_batch as _batch  # noqa: E402
from optimizer_runs import mlp_loss as _forward  # noqa: E402
from optimizer_runs import mlp_models as _models  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.runtime.realize import buffer_of  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_device")

RUNS = [("rangeify", "1"), ("kernelize", "1"), ("rangeify", "0")]  # (scheduler, RULEGRAD_OPT)

def _torch_step(theirs: dict, topt, x: np.ndarray, y: np.ndarray) -> float:
    topt.zero_grad()
    loss = _forward(torch, theirs, torch.from_numpy(x), torch.from_numpy(y))
    loss.backward()
    topt.step()
    return loss.item()


def _step(ours: dict, opt, x: Tensor, y: Tensor) -> float:
    opt.zero_grad()
    loss = _forward(Tensor, ours, x, y)
    loss.backward()
    opt.step(loss)
    return loss.item()


def _same(ours: dict, theirs: dict, got: float, want: float) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    for k in ours:
        np.testing.assert_allclose(ours[k].numpy(), theirs[k].detach().numpy(), rtol=1e-4,
                                   atol=1e-5)


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
@pytest.mark.parametrize("batch", [1, 6])
def test_a_warm_step_over_the_same_buffers_derives_no_gradient_and_walks_no_key(kind, batch):
    """The fourth step over the same batch: no gradient rule runs (rules/generated/gradient.py)
    and the schedule's key is not walked; the fifth walks no graph but each parameter's own
    node (backward's search for realized values reads the loss's walk kept by the step before:
    uop.py's keep_order). Before, every step derived its gradient by the rules (a fifth of a
    small MLP's step), walked and hashed the key of its whole graph (a tenth), and walked the
    loss's graph."""
    ours, opt, theirs, topt = _models(kind)
    x_np, y_np = _batch(np.random.default_rng(1), batch)
    x, y = Tensor(x_np).realize(), Tensor(y_np).realize()
    for _ in range(3):
        want = _torch_step(theirs, topt, x_np, y_np)
        _same(ours, theirs, _step(ours, opt, x, y), want)
    want = _torch_step(theirs, topt, x_np, y_np)
    got: list[float] = []
    calls = python_calls(lambda: got.append(_step(ours, opt, x, y)))
    _same(ours, theirs, got[0], want)
    rules = {k: n for k, n in calls.items() if k.startswith("gradient.py:")}
    assert rules == {}, rules
    assert calls["schedule_cache.py:graph_key"] == 0
    assert calls["schedule_cache.py:cached_prepared"] == 1  # (the step's schedule replayed)
    want = _torch_step(theirs, topt, x_np, y_np)
    walked = nodes_walked(lambda: got.append(_step(ours, opt, x, y)))
    _same(ours, theirs, got[1], want)
    assert walked <= 2 * len(ours), walked  # (a parameter's node: its buffer, reshaped)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "-".join(r))
@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
@pytest.mark.parametrize("batch", [1, 6])
def test_a_step_over_a_fresh_batch_rebuilds_its_gradient_and_drops_the_last_batch(
        kind, batch, run, monkeypatch):
    """Each step over a batch of its own (a data loader's loop): a graph of other nodes of one
    form, whose gradient the rules derive once (the first step of that form, here or in an
    earlier test) and every later step rebuilds from its template (runtime/gradient_forms.py):
    no gradient rule runs, trained as torch (both schedulers, the optimizer on and off); the
    graph the optimizer keeps holds a batch only until the next step. Before, the rules
    derived every step's gradient (some 70 rule calls a step on this MLP)."""
    from rulegrad.runtime.kernelize import using

    monkeypatch.setenv("RULEGRAD_OPT", run[1])
    with using(run[0]):
        ours, opt, theirs, topt = _models(kind, seed=2)
        rng = np.random.default_rng(3)
        dropped: list[weakref.ref] = []
        for k in range(5):
            x_np, y_np = _batch(rng, batch)
            x, y = Tensor(x_np).realize(), Tensor(y_np).realize()
            dropped.append(weakref.ref(buffer_of(x.uop)))
            want = _torch_step(theirs, topt, x_np, y_np)
            got: list[float] = []
            calls = python_calls(lambda x=x, y=y, got=got: got.append(_step(ours, opt, x, y)))
            _same(ours, theirs, got[0], want)
            rules = {name: n for name, n in calls.items() if name.startswith("gradient.py:")}
            if k:
                assert rules == {}, (k, rules)
            del x, y
            assert [r() is None for r in dropped[:-1]] == [True] * k


def test_a_gradient_read_back_is_of_the_same_seed_and_targets():
    """The gradient kept from the last call is given again only for the same root, seed and
    targets: a second seed, or other targets, of the same root get their own."""
    rng = np.random.default_rng(4)
    a_np, b_np, s1, s2 = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(4))
    a = Tensor(a_np, requires_grad=True).realize()
    b = Tensor(b_np, requires_grad=True).realize()
    y = (a * b).exp()
    want = np.exp(a_np * b_np)
    for seed in (s1, s2):
        a.grad = b.grad = None
        y.backward(Tensor(seed))
        np.testing.assert_allclose(a.grad.numpy(), seed * want * b_np, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.grad.numpy(), seed * want * a_np, rtol=1e-5, atol=1e-6)
    total = y.sum()
    (ga,) = total.gradient(a)
    (gb,) = total.gradient(b)
    np.testing.assert_allclose(ga.numpy(), want * b_np, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb.numpy(), want * a_np, rtol=1e-5, atol=1e-6)


def test_a_loss_read_before_backward_still_reads_the_step_back():
    """`v = loss.item(); loss.backward(); opt.step()` (the loss realized on its own first, then
    differentiated through the graph it keeps, runtime/origins.py): the warm step derives no
    gradient and walks no key either, and trains as torch. (Before: 68 gradient rule calls and
    a key walked per step.)"""
    ours, opt, theirs, topt = _models("sgd", seed=5)
    x_np, y_np = _batch(np.random.default_rng(6), 4)
    x, y = Tensor(x_np).realize(), Tensor(y_np).realize()

    def step() -> float:
        opt.zero_grad()
        loss = _forward(Tensor, ours, x, y)
        value = loss.item()
        loss.backward()
        opt.step()
        return value

    for _ in range(3):
        want = _torch_step(theirs, topt, x_np, y_np)
        _same(ours, theirs, step(), want)
    want = _torch_step(theirs, topt, x_np, y_np)
    got: list[float] = []
    calls = python_calls(lambda: got.append(step()))
    _same(ours, theirs, got[0], want)
    assert not [k for k in calls if k.startswith("gradient.py:")]
    assert calls["schedule_cache.py:graph_key"] == 0


def test_a_rebuilt_gradient_is_of_its_own_seed_targets_constants_and_reads():
    """Graphs of one form over fresh buffers rebuild one gradient, each over its own nodes;
    a graph that differs in a constant, in which buffer is read where (a * a against a * b),
    in its seed or in its targets is another form and gets its own. Checked against numpy."""
    rng = np.random.default_rng(7)

    def arrays(n):
        return [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(n)]

    for _ in range(3):  # (the first of each form derived, the next two rebuilt)
        a_np, b_np, s_np = arrays(3)
        for c in (2.0, 3.0):
            a = Tensor(a_np, requires_grad=True).realize()
            b = Tensor(b_np, requires_grad=True).realize()
            ga, gb = ((a * b * c).exp() * Tensor(s_np)).sum().gradient(a, b)
            e = np.exp(a_np * b_np * c) * s_np
            np.testing.assert_allclose(ga.numpy(), e * b_np * c, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(gb.numpy(), e * a_np * c, rtol=1e-5, atol=1e-5)
            (gb_only,) = ((a * b * c).exp() * Tensor(s_np)).sum().gradient(b)
            np.testing.assert_allclose(gb_only.numpy(), e * a_np * c, rtol=1e-5, atol=1e-5)
            (ga_sq,) = ((a * a * c).exp() * Tensor(s_np)).sum().gradient(a)
            e2 = np.exp(a_np * a_np * c) * s_np
            np.testing.assert_allclose(ga_sq.numpy(), e2 * 2 * a_np * c, rtol=1e-5, atol=1e-5)
            y = (a * b * c).exp()
            y.backward(Tensor(s_np))
            np.testing.assert_allclose(a.grad.numpy(), e * b_np * c, rtol=1e-5, atol=1e-5)
            a.grad = None
            y.backward(Tensor(b_np))  # (another seed: another buffer of the same form)
            np.testing.assert_allclose(a.grad.numpy(), np.exp(a_np * b_np * c) * b_np * b_np * c,
                                       rtol=1e-5, atol=1e-5)


def test_a_fresh_batch_step_rebuilds_its_gradient_in_fewer_calls():
    """A step over a fresh batch, its form seen before: the gradient is its template rebuilt
    (no rule runs, no node's gradient derived), and the whole step makes fewer Python calls
    than one that derives it (2,011 calls on this MLP before, 1,577 after)."""
    ours, opt, theirs, topt = _models("sgd", seed=8)
    rng = np.random.default_rng(9)
    for _ in range(4):
        x_np, y_np = _batch(rng, 6)
        x, y = Tensor(x_np).realize(), Tensor(y_np).realize()
        want = _torch_step(theirs, topt, x_np, y_np)
        got: list[float] = []
        calls = python_calls(lambda x=x, y=y, got=got: got.append(_step(ours, opt, x, y)))
        _same(ours, theirs, got[0], want)
    assert calls["autograd.py:_compute_gradient"] == 0
    assert calls["gradient_forms.py:_rebuild"] == 1
    total = sum(n for name, n in calls.items() if not name.startswith("C:"))
    assert total <= 1800, total
