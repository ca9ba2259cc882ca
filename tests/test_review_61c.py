"""rev61c: review of step61 (the optimizer's update traced and replayed; plans dropped with
their batch), against torch.

1. Parameters that are views of one buffer are stepped in rounds (`Optimizer._rounds`), and the
   step built the whole update once before the rounds built it again: Adam counted each
   parameter's steps (`taken`) twice a step, so a parameter that sat out steps and trained again
   got bias powers b1^(2t) of its own instead of b1^t (torch counts steps per parameter).
2. The replayed update was keyed on its settings by `==`, which takes lr = -0.0 for 0.0 (and
   True for 1): a step at lr 0.0 replayed for lr -0.0 kept -0.0 where p - (-0.0) * g is 0.0,
   as torch's step and the update built anew give.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor  # noqa: E402
from rulegrad.nn.optim import SGD, Adam  # noqa: E402

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
