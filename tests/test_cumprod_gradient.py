"""cumprod's gradient: torch's cumprod_backward in a few running sums and products, linear work,
exact through zeros.

The running product's windows (runtime/running_sum.py) carry their own backward through the
pool's movement ops, a product over every repeat: n^2 work per row (1,008 iterations per element
at 1,000). rules/gradient.rules' grad_scan_prod gives the marked input the reverse running sum of
grad * out over x before the first zero, the reverse running sum of grad times the products with
that zero read as 1 at it, and 0 past it (rules/gradient_helpers.py's `scan_prod_grad`). Values
against torch's autograd over lengths, axes, dtypes and where the zeros sit; the work counted from
the optimized kernels (tests/call_counts.py), never timed."""

from __future__ import annotations

import numpy as np
import pytest
from call_counts import loop_trips

from rulegrad import Tensor

torch = pytest.importorskip("torch")

LENGTHS = [1, 2, 7, 64, 1000]


def _grads(a: np.ndarray, axis: int, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = Tensor(a, requires_grad=True)
    (x.cumprod(axis) * Tensor(w)).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    (torch.cumprod(tx, axis) * torch.from_numpy(w)).sum().backward()
    return x.grad.numpy(), tx.grad.numpy()


def _zeroed(a: np.ndarray, axis: int, where: str) -> np.ndarray:
    """a with zeros along `axis` at the start, middle, end, several places, everywhere, or a
    -0.0 (in the middle and at the end); nowhere for "none"."""
    n = a.shape[axis]
    at = {"none": [], "start": [0], "middle": [n // 2], "end": [n - 1],
          "several": sorted({0, n // 3, n // 2, n - 1}), "all": list(range(n)),
          "negative": sorted({n // 2, n - 1})}[where]
    out = np.moveaxis(a.copy(), axis, -1)
    out[..., at] = -0.0 if where == "negative" else 0.0
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))


def _close(ours: np.ndarray, theirs: np.ndarray, dt) -> None:
    tight = dt is np.float64
    np.testing.assert_allclose(ours, theirs, rtol=1e-10 if tight else 2e-4,
                               atol=1e-10 if tight else 1e-5)


@pytest.mark.parametrize("zeros", ["none", "start", "middle", "end", "several", "all",
                                   "negative"])
@pytest.mark.parametrize("n", LENGTHS)
def test_gradient_through_zeros_matches_torch(n, zeros):
    rng = np.random.default_rng(n)
    a = _zeroed(rng.uniform(0.8, 1.25, (3, n)), 1, zeros)
    w = rng.standard_normal((3, n))
    ours, theirs = _grads(a, 1, w)
    assert np.isfinite(ours).all()  # (no 0 / 0 where a zero sits)
    _close(ours, theirs, np.float64)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape,axis", [((64, 5), 0), ((5, 64), -1), ((7, 3, 64), 0),
                                        ((3, 64, 7), 1), ((2, 7, 64), -1), ((1000, 2), 0)])
def test_gradient_along_each_axis_matches_torch(shape, axis, dt):
    rng = np.random.default_rng(sum(shape))
    a = _zeroed(rng.uniform(0.8, 1.25, shape), axis, "several").astype(dt)
    if a.ndim == 2:  # and a scan that starts at a zero (axis 0), or a row of zeros (-1)
        a[0] = 0.0
    w = rng.standard_normal(shape).astype(dt)
    ours, theirs = _grads(a, axis, w)
    _close(ours, theirs, dt)


def test_a_long_row_scanned_in_blocks_matches_torch():
    # 2^21 elements: past the work limit for one window, so the forward runs in blocks of
    # SCAN_BLOCK, and each block's running product takes the rule; values near 1 and a zero in
    # the middle of a block
    n = 2 ** 21
    rng = np.random.default_rng(7)
    a = rng.uniform(0.999, 1.001, n)
    a[1_000_003] = 0.0
    w = rng.standard_normal(n)
    ours, theirs = _grads(a, 0, w)
    _close(ours, theirs, np.float64)


# one zero; two or three: the first zero's gradient depends on the second (its products past it
# hold x[z2]), and the terms from z2 on are 0 in value, not in their derivative (rev52b)
@pytest.mark.parametrize("zeros", [[4], [2, 5], [0, 8], [3, 4, 7]], ids=str)
def test_second_derivative_matches_torch(zeros):
    a = np.random.default_rng(5).uniform(0.5, 1.5, 9)
    a[zeros] = 0.0
    v = np.random.default_rng(6).standard_normal(9)
    x = Tensor(a, requires_grad=True)
    (g,) = (x.cumprod(0) * Tensor(v)).sum().gradient(x)
    (h,) = (g * Tensor(v)).sum().gradient(x)
    tx = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad((torch.cumprod(tx, 0) * torch.from_numpy(v)).sum(), tx,
                                create_graph=True)
    (th,) = torch.autograd.grad((tg * torch.from_numpy(v)).sum(), tx)
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("zeros", ["none", "middle"])
def test_gradient_work_is_linear_in_the_length(zeros):
    per = []
    for n in (1000, 16000):
        a = _zeroed(np.random.default_rng(n).uniform(0.9, 1.1, (1, n)), 1, zeros)
        x = Tensor(a.astype(np.float32), requires_grad=True)
        (x.cumprod(1) * 2.0).sum().backward()
        per.append(loop_trips(x.grad) / n)
    # the windows' own backward: about n per element (1,008 and 16,008); the rule's: a few
    # running scans (about 20 per element), the same at both lengths
    assert per[1] < 1.5 * per[0] and per[1] < 32, per


@pytest.mark.parametrize("env", [("RULEGRAD_BACKEND", "interp"),
                                 ("RULEGRAD_SCHEDULER", "kernelize")], ids=lambda e: e[1])
def test_the_interpreter_and_kernelize_give_torchs_gradient(monkeypatch, env):
    monkeypatch.setenv(*env)
    for shape, axis in (((7,), 0), ((3, 40), 1), ((60, 2), 0)):
        rng = np.random.default_rng(shape[0])
        a = _zeroed(rng.uniform(0.5, 1.5, shape), axis, "several")
        ours, theirs = _grads(a, axis, rng.standard_normal(shape))
        _close(ours, theirs, np.float64)


@pytest.mark.parametrize("row", [[2, np.inf, 0, 3], [0, np.inf, 2], [np.inf, 0],
                                 [2, 0, np.inf, 3], [0, 0, np.inf], [0, 2, 0, np.inf, 5],
                                 [1e30, 1e30, 0, 1e30, 1e30]], ids=str)
def test_infinities_beside_zeros_match_torch(row):
    # past a second zero torch's products are 0 even where an inf met the zero (0 * inf is
    # NaN): the first zero's gradient is a number there, and ours too
    a = np.array(row, np.float32)
    ours, theirs = _grads(a, 0, np.arange(1, len(row) + 1, dtype=np.float32))
    np.testing.assert_array_equal(ours, theirs)
