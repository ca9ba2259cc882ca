"""rev61c: review of step61 (the optimizer's update traced and replayed; plans dropped with
their batch), against torch.

1. Parameters that are views of one buffer are stepped in rounds (`Optimizer._rounds`), and the
   step built the whole update once before the rounds built it again: Adam counted each
   parameter's steps (`taken`) twice a step, so a parameter that sat out steps and trained again
   got bias powers b1^(2t) of its own instead of b1^t (torch counts steps per parameter).
2. The replayed update was keyed on its settings by `==`, which takes lr = -0.0 for 0.0 (and
   True for 1): a step at lr 0.0 replayed for lr -0.0 kept -0.0 where p - (-0.0) * g is 0.0,
   as torch's step and the update built anew give.
3. A roots plan whose batch went while the plans' lock was held (another thread recording, a
   collection inside a locked section) is noted stale and dropped by the next recording only:
   a loop served by its plans records nothing, and that batch stayed alive. The next batch
   that goes drops it now. And the plan drop under threads: results right, nothing stuck.
4. The replay's key had each gradient's dtype and shape, not its device: a gradient on another
   device than its parameter (a user's slip) was no longer refused as the update was built, but
   replayed into ASSIGNs the step applied, and its realize failed with the parameter pointed at
   them: every later read of the parameter failed. Built anew, the DeviceMismatch is raised
   before anything changes, and the next step with a right gradient trains on.
"""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor  # noqa: E402
from rulegrad.nn.optim import SGD, Adam  # noqa: E402
from rulegrad.runtime import plans  # noqa: E402
from rulegrad.runtime.realize import buffer_of  # noqa: E402

BASE = np.random.default_rng(7).standard_normal((3, 5)).astype(np.float32)
OTHER = np.linspace(-1, 1, 4, dtype=np.float32)


def _adam_steps(make, opt_cls, views, frozen: tuple[int, ...], steps: int):
    """`steps` Adam steps over views of one base and a parameter of its own (`other`), which
    sits out the steps `frozen`; the base and `other` after each step."""
    base = make(BASE.copy())
    ps = views(base)
    other = make(OTHER.copy())
    ps.append(other)
    for p in ps:
        p.requires_grad_()
    opt = opt_cls(ps, lr=0.1)
    out = []
    for s in range(steps):
        other.requires_grad_(s not in frozen)
        opt.zero_grad()
        loss = sum(((p * p * (k + 1)).sum() + (p * p * p).sum() * 0.1)
                   for k, p in enumerate(ps) if p.requires_grad)
        loss.backward()
        opt.step()
        value = (lambda t: t.detach().numpy()) if make is torch.tensor else \
            (lambda t: t.numpy())
        out.append((value(base).copy(), value(other).copy()))
    return out


@pytest.mark.parametrize("views", [lambda b: [b[:, :3], b[:, 1:]], lambda b: [b[0], b[1:].T]],
                         ids=["overlapping", "row_and_rows_T"])
@pytest.mark.parametrize("frozen", [(3, 4), (1,)], ids=["two_steps", "one_step"])
def test_adam_counts_one_step_per_step_when_views_of_one_buffer_step_in_rounds(views, frozen):
    ours = _adam_steps(Tensor, Adam, views, frozen, 7)
    theirs = _adam_steps(torch.tensor, torch.optim.Adam, views, frozen, 7)
    for s, ((b, o), (tb, to)) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(b, tb, rtol=1e-4, atol=1e-5, err_msg=f"base, step {s}")
        np.testing.assert_allclose(o, to, rtol=1e-4, atol=1e-5, err_msg=f"other, step {s}")


@pytest.mark.parametrize("lrs", [(0.0, -0.0, -0.0), (-0.0, 0.0, 0.0)], ids=["to_neg", "to_pos"])
def test_a_replayed_update_tells_a_negative_zero_setting_from_zero(lrs):
    p0 = np.array([-0.0, 0.0, -0.0, 1.0], np.float32)
    x = np.array([1, 1, -1, 2], np.float32)
    p, tp = Tensor(p0.copy(), requires_grad=True), torch.tensor(p0.copy(), requires_grad=True)
    opt, topt = SGD([p], lr=lrs[0]), torch.optim.SGD([tp], lr=lrs[0])
    for s, lr in enumerate(lrs):
        opt.lr = lr
        topt.param_groups[0]["lr"] = lr
        opt.zero_grad()
        topt.zero_grad()
        (p * Tensor(x)).sum().backward()
        (tp * torch.from_numpy(x)).sum().backward()
        opt.step()
        topt.step()
        want = tp.detach().numpy()
        np.testing.assert_array_equal(p.numpy(), want, err_msg=f"step {s}")
        np.testing.assert_array_equal(np.signbit(p.numpy()), np.signbit(want), err_msg=f"step {s}")


def _planned(a: np.ndarray) -> Tensor:
    """Tensor(a), its `+ 1` realized twice (a roots plan records it, watching the tensor)."""
    x = Tensor(a)
    for _ in range(2):
        np.testing.assert_array_equal((x + 1).numpy(), a + 1)
    return x


@pytest.fixture
def _fresh_plans(monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    plans.clear()  # (a form plan an earlier test left, found through a lazy record's trail,
    yield  # serves `Tensor(b) + 1` with no roots plan: no batch of it is watched)
    plans.clear()


def test_a_batch_gone_under_the_lock_is_dropped_when_the_next_batch_goes(_fresh_plans):
    y = Tensor(np.ones(3, np.float32))
    for _ in range(3):  # (a plan of its own: the runs below record nothing)
        np.testing.assert_array_equal((y * 2).numpy(), np.full(3, 2, np.float32))
    a, b = np.arange(6, dtype=np.float32), np.arange(7, dtype=np.float32)
    x, z = _planned(a), _planned(b)
    if plans.key([x.uop]) is None:
        pytest.skip("plans are off in this setting")
    gone_x, gone_z = weakref.ref(buffer_of(x.uop)), weakref.ref(buffer_of(z.uop))
    with plans._lock:  # (as when a collection runs inside a locked section)
        del x
    assert gone_x() is not None  # (noted stale: its plan is still in the table)
    recorded = plans.stats["recorded"]
    for _ in range(3):
        np.testing.assert_array_equal((y * 2).numpy(), np.full(3, 2, np.float32))
    assert gone_z() is not None  # (watched by its plan: its going drops the stale one)
    del z
    gc.collect()
    assert plans.stats["recorded"] == recorded
    assert gone_z() is None
    assert gone_x() is None


def test_plans_dropped_with_their_batches_across_threads_keep_results_right():
    """Three threads each realize graphs over fresh batches (their roots plans watched), while
    a fourth collects: a batch goes in whatever thread, with the lock held or not."""
    errors: list[str] = []
    done = [0, 0, 0]
    stop = threading.Event()

    def work(n: int) -> None:
        rng = np.random.default_rng(n)
        try:
            for _step in range(40):
                a = rng.standard_normal((int(rng.integers(1, 5)), 3)).astype(np.float32)
                x, y = Tensor(a), Tensor(a * 2)
                for _ in range(3):
                    np.testing.assert_allclose((x * y + 1).numpy(), a * a * 2 + 1, rtol=1e-6)
                    np.testing.assert_allclose((x + 1).sum(0).numpy(), (a + 1).sum(0),
                                               rtol=1e-5)
                view = x.reshape(-1)
                del x, y
                np.testing.assert_allclose((view * 3).numpy(), a.reshape(-1) * 3, rtol=1e-6)
                done[n] += 1
        except Exception as e:  # (reported below: a thread's exception is lost otherwise)
            errors.append(repr(e))

    def collect() -> None:
        while not stop.is_set():
            gc.collect()

    collector = threading.Thread(target=collect)
    workers = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    collector.start()
    for w in workers:
        w.start()
    for w in workers:
        w.join(300)
    stop.set()
    collector.join(300)
    assert errors == []
    assert done == [40, 40, 40]
    assert not any(w.is_alive() for w in workers)


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_a_gradient_on_another_device_leaves_the_parameter_as_it_was(opt):
    from rulegrad.runtime.device import DeviceMismatch

    p0 = np.linspace(-1, 1, 4, dtype=np.float32)
    p, tp = Tensor(p0.copy(), requires_grad=True), torch.tensor(p0.copy(), requires_grad=True)
    opt_, topt = (SGD([p], lr=0.1, momentum=0.5), torch.optim.SGD([tp], lr=0.1, momentum=0.5)) \
        if opt == "sgd" else (Adam([p], lr=0.1), torch.optim.Adam([tp], lr=0.1))
    for s in range(4):
        g = np.full(4, s + 1, np.float32)
        if s == 1:  # (the template of step 0's update is there to replay)
            p.grad = Tensor(g, device="CPU:1")
            with pytest.raises(DeviceMismatch):
                opt_.step()
            np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-5)
        p.grad, tp.grad = Tensor(g), torch.from_numpy(g.copy())
        opt_.step()
        topt.step()
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=f"step {s}")
