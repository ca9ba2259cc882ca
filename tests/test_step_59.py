"""A training step over a fresh batch walks its graph once (issue 33, step 59).

A data loader's loop makes a new Tensor from a numpy array each step: the step's graph is other
nodes each time, of one form. Backward walks the loss's graph once; the gradient's key is
numbered from that walk (runtime/gradient_forms.py), and the optimizer step's schedule key goes
on with it, walking only the update's nodes (runtime/schedule_cache.py's `go_on`); a realize's
joint walk starts from the loss's kept walk (runtime/origins.py), and the step's lazy readers
are found without a walk of their graphs (runtime/tensor.py's `readers_of`). Before: seven
toposorts and two key walks (`graph_key`) a step. And the graph the optimizer keeps for the
next step no longer holds the batch once its tensors go (api/nn/optim.py's `_hold_by_batch`).
Counted, never timed; every step checked against torch.
"""

from __future__ import annotations

import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from call_counts import python_calls  # noqa: E402
from optimizer_runs import OPTIMIZERS  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.runtime import gradient_forms, plans, schedule_cache  # noqa: E402
from rulegrad.runtime.realize import buffer_of  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_device")


def _models(kind: str, d: int, h: int, c: int, seed: int = 0) -> list:
    """[our weights, our optimizer, torch's weights, torch's optimizer], equal weights."""
    rng = np.random.default_rng(seed)
    w = {"w1": rng.standard_normal((d, h)) / np.sqrt(d), "b1": rng.standard_normal(h) * 0.1,
         "w2": rng.standard_normal((h, c)) / np.sqrt(h), "b2": rng.standard_normal(c) * 0.1}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    ours = {k: Tensor(v, requires_grad=True).realize() for k, v in w.items()}
    theirs = {k: torch.tensor(v, requires_grad=True) for k, v in w.items()}
    make, make_torch = OPTIMIZERS[kind]
    return [ours, make(list(ours.values())), theirs, make_torch(list(theirs.values()))]


def _batch(rng, b: int, d: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((b, d)).astype(np.float32)
    return x, np.eye(c, dtype=np.float32)[rng.integers(0, c, b)]


def _loss(lib, p: dict, x, y):
    relu = (lambda t: t.relu()) if lib is Tensor else torch.relu
    logits = relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return -(logits.log_softmax(1) * y).sum(1).mean()


def _torch_step(theirs: dict, topt, x: np.ndarray, y: np.ndarray) -> float:
    topt.zero_grad()
    loss = _loss(torch, theirs, torch.from_numpy(x), torch.from_numpy(y))
    loss.backward()
    topt.step()
    return loss.item()


def _step(ours: dict, opt, x_np: np.ndarray, y_np: np.ndarray, how: str = "step") -> float:
    """One step as users write it: the batch a new Tensor of each array, the logits a local."""
    x, y = Tensor(x_np), Tensor(y_np)
    opt.zero_grad()
    logits = (x @ ours["w1"] + ours["b1"]).relu() @ ours["w2"] + ours["b2"]
    loss = -(logits.log_softmax(1) * y).sum(1).mean()
    loss.backward()
    if how == "step":
        opt.step(loss)
    else:  # (tinygrad's spelling: the step's tensors realized with the loss)
        Tensor.realize(loss, *opt.schedule_step())
    return loss.item()


def _same(ours: dict, theirs: dict, got: float, want: float, atol: float = 1e-5) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol)
    for k in ours:
        np.testing.assert_allclose(ours[k].numpy(), theirs[k].detach().numpy(), rtol=1e-4,
                                   atol=atol)


@pytest.mark.parametrize("how", ["step", "schedule_step"])
@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
def test_a_fresh_batch_step_walks_its_graph_once(kind, how):
    """After the first steps of the form: one walk of the loss a step (backward's key walk; the
    logits, a lazy reader of the parameters the step realizes with it, are found by a search
    that stops at the bias they read), no key walked from scratch, and the step's schedule
    keyed by going on with backward's walk and served from the cache. Before: seven toposorts
    (some 140 nodes on this MLP) and two `graph_key` walks a step."""
    ours, opt, theirs, topt = _models(kind, 11, 7, 5, seed=1)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x_np, y_np = _batch(rng, 6, 11, 5)
        want = _torch_step(theirs, topt, x_np, y_np)
        _same(ours, theirs, _step(ours, opt, x_np, y_np, how), want)
    for _ in range(2):
        x_np, y_np = _batch(rng, 6, 11, 5)
        want = _torch_step(theirs, topt, x_np, y_np)
        before = dict(schedule_cache.stats)
        hits_before = plans.stats["step_hits"]
        got: list[float] = []
        calls = python_calls(lambda got=got, x_np=x_np, y_np=y_np:
                             got.append(_step(ours, opt, x_np, y_np, how)))
        _same(ours, theirs, got[0], want)
        # (backward's one walk of the loss is the key's, which is its order too: no toposort,
        # tests/test_step_66.py)
        assert calls["gradient_forms.py:key_walk"] == 1
        assert calls["uop.py:toposort"] == 0, calls["uop.py:toposort"]
        assert calls["schedule_cache.py:graph_key"] == 0
        # (served by the step's plan, keyed by going on with that walk too: runtime/plans.py)
        served = plans.stats["step_hits"] - hits_before
        assert schedule_cache.stats["went_on"] == before["went_on"] + 1 - served
        assert schedule_cache.stats["hits"] == before["hits"] + 1 - served
        assert schedule_cache.stats["misses"] == before["misses"]
        assert not [k for k in calls if k.startswith("gradient.py:")]  # (no rule derived it)


SHAPES = [(13, 17, 5, 1), (7, 31, 3, 5), (3, 2, 2, 9), (64, 128, 10, 64), (1, 3, 2, 2)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(map(str, s)))
@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
def test_fresh_batches_train_as_torch(kind, shape):
    """Losses and parameters after each of several steps over fresh batches: batch 1, prime
    widths, a skinny and a tall layer, both ways of stepping (the same key served to both)."""
    d, h, c, b = shape
    ours, opt, theirs, topt = _models(kind, d, h, c, seed=3)
    rng = np.random.default_rng(4)
    # (Adam divides by the root of its second moment: a weight whose gradients are near zero
    # moves by lr either way, and float32 sums in another order differ in the fifth digit)
    atol = 1e-4 if kind == "adam" else 1e-5
    for k in range(6):
        x_np, y_np = _batch(rng, b, d, c)
        want = _torch_step(theirs, topt, x_np, y_np)
        _same(ours, theirs, _step(ours, opt, x_np, y_np, "step" if k % 3 else "schedule_step"),
              want, atol)


def test_a_batch_of_another_size_or_a_changed_rate_is_another_step():
    """The key gone on with is the step's own: a batch of another size (another form) or a new
    learning rate (a lifted float) steps as torch, alternating with the first."""
    ours, opt, theirs, topt = _models("momentum", 5, 4, 3, seed=5)
    rng = np.random.default_rng(6)
    for k in range(6):
        x_np, y_np = _batch(rng, 2 + 3 * (k % 2), 5, 3)
        lr = 0.1 if k < 3 else 0.05
        opt.lr = lr
        for g in topt.param_groups:
            g["lr"] = lr
        want = _torch_step(theirs, topt, x_np, y_np)
        _same(ours, theirs, _step(ours, opt, x_np, y_np), want)


@pytest.mark.parametrize("how", ["step", "schedule_step"])
def test_the_kept_step_lets_go_of_its_batch_when_the_batch_goes(how):
    """The optimizer keeps the last step's graph for the next step; once the batch's tensors
    and the loss go (a loop's next batch, or the loop's end), the batch goes with them, before
    any next step (`opt.step`); and at the latest at the next step. Before: the graph kept held
    the batch until the next step's update had been built."""
    ours, opt, theirs, topt = _models("adam", 11, 7, 5, seed=7)
    rng = np.random.default_rng(8)
    dropped: list[weakref.ref] = []
    for k in range(4):
        x_np, y_np = _batch(rng, 3, 11, 5)
        x, y = Tensor(x_np), Tensor(y_np)
        want = _torch_step(theirs, topt, x_np, y_np)
        opt.zero_grad()
        logits = (x @ ours["w1"] + ours["b1"]).relu() @ ours["w2"] + ours["b2"]
        loss = -(logits.log_softmax(1) * y).sum(1).mean()
        loss.backward()
        dropped.append(weakref.ref(buffer_of(x.uop)))
        if how == "step":
            opt.step(loss)
        else:
            Tensor.realize(loss, *opt.schedule_step())
        _same(ours, theirs, loss.item(), want)
        assert [r() is None for r in dropped[:-1]] == [True] * k  # (the next step: gone)
        del x, y, logits, loss
        if how == "step":  # (schedule_step's realize is the caller's: kept to the next step)
            assert dropped[-1]() is None


def test_the_same_batch_again_keeps_its_graph():
    """A batch used step after step (tensors realized once, alive) keeps the step's graph: the
    next step over it reads its gradient and key back, and walks no graph."""
    ours, opt, theirs, topt = _models("sgd", 11, 7, 5, seed=9)
    x_np, y_np = _batch(np.random.default_rng(10), 4, 11, 5)
    x, y = Tensor(x_np).realize(), Tensor(y_np).realize()

    def step() -> float:
        opt.zero_grad()
        loss = _loss(Tensor, ours, x, y)
        loss.backward()
        opt.step(loss)
        return loss.item()

    for _ in range(3):
        want = _torch_step(theirs, topt, x_np, y_np)
        _same(ours, theirs, step(), want)
    want = _torch_step(theirs, topt, x_np, y_np)
    before = dict(schedule_cache.stats), dict(gradient_forms.stats)
    got: list[float] = []
    calls = python_calls(lambda: got.append(step()))
    _same(ours, theirs, got[0], want)
    # (the gradient and the key read back: neither rebuilt from the form nor gone on with)
    assert (schedule_cache.stats["went_on"], gradient_forms.stats["rebuilt"]) == \
        (before[0]["went_on"], before[1]["rebuilt"])
    assert calls["schedule_cache.py:graph_key"] == calls["uop.py:toposort"] == 0
    assert not [k for k in calls if k.startswith("gradient.py:")]
