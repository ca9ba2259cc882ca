"""rev60a: review of adv60's strided slices as views (`s[::2]` of 5 rows: a PAD its SHRINK
drops, runtime/realize.py's `view_ops`), against torch and numpy.

Walks down a view that adv60 left stopping at the PAD, each found wrong here:
1. `tensor._is_view` walked its chain to the PAD and asked `stored_view` of the PAD itself
   (never a view op: always False), so an assign's value `v = s[::2]` that reads the target
   was taken for a lazy copy and repointed at a CONTIGUOUS of the target: a later write into
   s was not seen by v (torch's v sees it).
2. `jit._describe` walked VIEW_OPS only: a step returning `a[::2]` of a 5-row argument (now a
   realized view, no copy) was refused as "a sharded tensor" and never replayed.
3. `origins` (torch's copy_ gradient through an assign) walked RESHAPE/PERMUTE/SHRINK/FLIP
   only: an assign of `w * 2` into `y[::2]` of 5 rows kept no graph, and backward() found no
   tensor requiring a gradient (torch's w.grad is 2 * dL/dy at the strided rows); and a value
   read through an optimizer step of p = s[::2] (`schedule_step()`, realized together) got a
   wrong p.grad, silently (`_stored_under` did not see the step's target as s's storage).
"""

from __future__ import annotations

import numpy as np
import pytest

import rulegrad
from rulegrad import Tensor

torch = pytest.importorskip("torch")


@pytest.fixture(params=["rangeify", "kernelize"])
def scheduler(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)
    return request.param


# ---------------------------------------------------------------------- 1. _is_view
@pytest.mark.parametrize("rows", [5, 6, 7], ids=lambda n: f"{n}rows")
@pytest.mark.parametrize("backend", ["c", "interp"])
def test_an_assigned_value_that_is_a_strided_view_stays_a_view(scheduler, monkeypatch, backend,
                                                               rows):
    """`s[1:4].assign(v)` (`s[1:5]` of 7 rows) with v = s[::2] (it reads the target): v is
    still a view of s after it, as torch's `copy_` leaves it, and sees a later write into s
    (6 rows: no PAD, the control)."""
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    a = np.arange(rows * 2, dtype=np.float32).reshape(rows, 2)
    s, ts = Tensor(a.copy()).realize(), torch.tensor(a.copy())
    v, tv = s[::2], ts[::2]
    m = (rows + 1) // 2
    s[1:1 + m].assign(v)
    ts[1:1 + m].copy_(tv)
    np.testing.assert_array_equal(s.numpy(), ts.numpy())
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    s.assign(s * 3 + 7)
    ts.mul_(3).add_(7)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    v.assign(v * 0 - 1)  # and it still writes s
    tv.fill_(-1)
    np.testing.assert_array_equal(s.numpy(), ts.numpy())


# ---------------------------------------------------------------------- 2. jit results
CALLS = 8  # (tests/test_jit.py's: three calls record, the rest replay)
JIT_VIEWS = {
    "a[::2]": (lambda a: a[::2].realize(), lambda x: x[::2]),
    "a.T[1::3]": (lambda a: a.T[1::3].realize(), lambda x: x.T[1::3]),
    "a[::-2, ::3]": (lambda a: a[::-2, ::3].realize(), lambda x: x[::-2, ::3]),
    "(b, b[::2])": (lambda a: _and_strided(a * 2), lambda x: (x * 2, (x * 2)[::2])),
}


def _and_strided(b: Tensor) -> tuple[Tensor, Tensor]:
    v = b[::2]
    Tensor.realize(b, v)  # (realized together: v stays a view of b's buffer)
    return b, v


@pytest.mark.parametrize("step", list(JIT_VIEWS))
def test_a_jit_step_returning_a_strided_view_replays_it(step):
    """A step returning a strided view of 5 rows of its argument (or of a result it made) is
    replayed as that view of each call's buffer, every call's values numpy's."""
    fn, want = JIT_VIEWS[step]
    f = rulegrad.jit(fn)
    xs = np.random.default_rng(60).standard_normal((CALLS, 5, 5)).astype(np.float32)
    kept = [(f(Tensor(x).realize()), x) for x in xs]
    for out, x in kept:
        expected = want(x)
        for got, w in zip(out if isinstance(out, tuple) else (out,),
                          expected if isinstance(expected, tuple) else (expected,)):
            assert got.shape == w.shape
            np.testing.assert_array_equal(got.numpy(), w)
    assert f.refused == [] and f.replays == CALLS - 3


# ---------------------------------------------------------------------- 3. copy_'s gradient
ASSIGN_INTO = {
    "y[::2]": (lambda y: y[::2], 3),
    "y[1::3]": (lambda y: y[1::3], 2),
    "y[::2][1:]": (lambda y: y[::2][1:], 2),
    "y.T[:, ::2].T": (lambda y: y.T[:, ::2].T, 3),
}


@pytest.mark.parametrize("into", list(ASSIGN_INTO))
def test_a_gradient_flows_through_an_assign_into_a_strided_view(scheduler, into):
    """torch's `y[::2].copy_(w * 2)`: the loss of y passes its gradient at the strided rows
    to w, and the rest to y's old contents (5 rows: a PAD its SHRINK drops)."""
    view, n = ASSIGN_INTO[into]
    wn = np.linspace(-1, 1, n * 3, dtype=np.float32).reshape(n, 3)
    yn = np.random.default_rng(60).standard_normal((5, 3)).astype(np.float32)
    w, tw = Tensor(wn.copy(), requires_grad=True), torch.tensor(wn.copy(), requires_grad=True)
    y0, ty0 = Tensor(yn.copy(), requires_grad=True), torch.tensor(yn.copy(), requires_grad=True)
    y, ty = (y0 * 1).realize(), ty0 * 1
    view(y).assign(w * 2)
    view(ty).copy_(tw * 2)
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    (y * y * y).sum().backward()
    (ty * ty * ty).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(y0.grad.numpy(), ty0.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("rows", [5, 6], ids=lambda n: f"{n}rows")
def test_a_gradient_of_a_value_read_through_a_strided_parameters_step(scheduler, rows):
    """`z = p * p * 3` built after `schedule_step()` of p = s[::2], realized with the step:
    its gradient reaches p as torch's of the new p does (5 rows: the step's ASSIGN is into a
    view with a PAD, which origins' walk stopped at, and p.grad came out wrong, silently)."""
    from rulegrad.nn import optim

    a = np.random.default_rng(60).standard_normal((rows, 3)).astype(np.float32)
    s, ts = Tensor(a.copy()), torch.tensor(a.copy())
    p, tp = s[::2], ts[::2]
    p.requires_grad_()
    tp.requires_grad_()
    opt, topt = optim.SGD([p], lr=0.1), torch.optim.SGD([tp], lr=0.1)
    (p * p).sum().backward()
    (tp * tp).sum().backward()
    targets = opt.schedule_step()
    z = p * p * 3
    Tensor.realize(z, *targets)
    topt.step()
    tz = tp * tp * 3
    opt.zero_grad()
    topt.zero_grad()
    z.sum().backward()
    tz.sum().backward()
    np.testing.assert_allclose(z.numpy(), tz.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-6)
