"""rev57d's review of sem57 (views after an optimizer step, settled ASSIGNs), against torch.

A pending step realized early: `steps = opt.schedule_step(); (w * 2).numpy();
Tensor.realize(*steps)` ran the step's ASSIGNs inside `w * 2`, and the step's own realize ran
them again (w stepped twice: a silent wrong answer). Momentum's and Adam's ASSIGN of w holds
their state's ASSIGN, so `w.numpy()` alone ran the state's update, which the step ran again.
Each case runs three steps: the second and later reuse a plan or a cached schedule."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch", reason="torch is not installed: the comparison with torch "
                            "is skipped (pip install torch to run it)")

from optimizer_runs import OPTIMIZERS, RUNS, runs_fixture  # noqa: E402

# every run but kernelize with the optimizer off
run = runs_fixture([r for r in RUNS if r != ("kernelize", "c", "0")])


def _setup(name, shape=(5, 7)):
    rng = np.random.default_rng(sum(shape))
    w0 = rng.standard_normal(shape).astype(np.float32)
    x = rng.standard_normal((shape[1], 3)).astype(np.float32)
    w, tw = Tensor(w0.copy(), requires_grad=True), torch.tensor(w0.copy(), requires_grad=True)
    ours, theirs = OPTIMIZERS[name]
    return w, tw, ours([w]), theirs([tw]), Tensor(x), torch.tensor(x)


def _backward(w, tw, opt, topt, x, tx):
    opt.zero_grad()
    topt.zero_grad()
    ((w @ x) ** 2).sum().backward()
    ((tw @ tx) ** 2).sum().backward()


def _close(ours, theirs):
    got = ours if isinstance(ours, np.ndarray) else ours.numpy()
    np.testing.assert_allclose(got, theirs.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("early", ["value", "param", "view", "contiguous"])
def test_a_step_realized_early_runs_once(run, name, early):
    w, tw, opt, topt, x, tx = _setup(name)
    for _ in range(3):
        _backward(w, tw, opt, topt, x, tx)
        steps = opt.schedule_step()
        # a value of the new w realized before the step's own realize
        got = {"value": lambda: w * 2, "param": lambda: w, "view": lambda: w.T[1:],
               "contiguous": lambda: w.contiguous()}[early]().numpy()
        Tensor.realize(*steps)
        topt.step()
        _close(got, {"value": tw * 2, "param": tw, "view": tw.T[1:], "contiguous": tw}[early])
        _close(w, tw)


@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (13, 2)])
def test_an_early_step_with_views_kept_across_steps(run, shape):
    """Views taken once (a view of a view among them) follow every step, one realized before
    the first; a pending step realized early through a view, the next by step()."""
    w, tw, opt, topt, x, tx = _setup("momentum", shape)
    views = [(w.T, tw.T), (w[-1:].reshape(-1), tw[-1:].reshape(-1)),
             (w.T[:, 0:1].expand(shape[1], 4), tw.T[:, 0:1].expand(shape[1], 4))]
    views[0][0].numpy()
    for i in range(3):
        _backward(w, tw, opt, topt, x, tx)
        if i % 2:
            opt.step()
        else:
            steps = opt.schedule_step()
            views[1][0].numpy()  # (a view taken before: it reads the buffer, not the ASSIGN)
            (w.T * 1).numpy()
            Tensor.realize(*steps)
        topt.step()
        for ours, theirs in views:
            _close(ours, theirs)
        _close(w, tw)


def test_assign_by_hand_with_live_views(run):
    """`w.assign(...)` by hand on a tensor with live views (it writes at the call: views see
    it, a value realized after reads it once)."""
    w0 = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    w, tw = Tensor(w0.copy()).realize(), torch.tensor(w0.copy())
    v, tv = w.T, tw.T
    for _ in range(3):
        w.assign(w * 0.5 + 1)
        got = (w * 3).numpy()
        w.realize()
        tw.mul_(0.5).add_(1)
        _close(got, tw * 3)
        _close(w, tw)
        _close(v, tv)


def test_an_early_step_keeps_no_tensor_alive():
    """The pending ASSIGNs are held weakly: the values and views of each step die with it."""
    w, tw, opt, topt, x, tx = _setup("adam")
    refs = []
    for _ in range(3):
        _backward(w, tw, opt, topt, x, tx)
        v = w.T[1:]
        steps = opt.schedule_step()
        u = w * 3
        u.numpy()
        Tensor.realize(*steps)
        refs += [weakref.ref(v), weakref.ref(u)]
        del v, u, steps
    gc.collect()
    assert [r for r in refs if r() is not None] == []


def test_a_step_never_realized_keeps_no_tensor_alive():
    """A pending ASSIGN's note (realize.pending_assign) holds its target weakly: a step built
    and dropped unrealized leaves its parameter and state to the collector."""
    w, tw, opt, topt, x, tx = _setup("momentum")
    _backward(w, tw, opt, topt, x, tx)
    opt.schedule_step()
    refs = [weakref.ref(w), weakref.ref(opt), weakref.ref(opt.b[0])]
    del w, opt
    gc.collect()
    assert [r for r in refs if r() is not None] == []


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_the_loss_and_gradient_of_a_step_realized_early_keep_the_old_value(run, name):
    """The step's gradients and the lazy values built before it (the loss) read the old w: the
    step realizes them with it. `w.numpy()` before the step's realize wrote w first, and the
    loss and gradient read afterwards computed from the new w (torch's were computed before)."""
    w, tw, opt, topt, x, tx = _setup(name, (7, 3))
    for _ in range(3):
        opt.zero_grad()
        topt.zero_grad()
        loss, tloss = ((w @ x) ** 3).sum(), ((tw @ tx) ** 3).sum()
        loss.backward()
        tloss.backward()
        steps = opt.schedule_step()
        new = w.numpy()
        grad, value = w.grad.numpy(), loss.numpy()
        Tensor.realize(*steps)
        topt.step()
        np.testing.assert_allclose(grad, tw.grad.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(value, tloss.item(), rtol=1e-4)
        _close(new, tw)
        _close(w, tw)
