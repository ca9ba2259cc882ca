"""A float cummax / cummin reads its values from the running key's bits and takes its gradient
by rules/gradient.rules' grad_scan_max (runtime/running_max.py): torch's scatter of the
incoming gradient to the index, as segment sums of a reverse running sum. Values against numpy
and torch (a zero's sign as torch's), gradients against torch's autograd, over NaN, infinities,
ties, -0.0, all-equal rows, a non-finite incoming gradient, lengths around a vector and a block,
a prime, 2-D along either axis; the backward's kernels counted, never timed."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions
from special_values import tied

from rulegrad import Tensor

torch = pytest.importorskip("torch")


def _check(a: np.ndarray, axis: int, g: np.ndarray) -> None:
    for name, acc in (("cummax", np.maximum), ("cummin", np.minimum)):
        x = Tensor(a, requires_grad=True)
        v, i = getattr(x, name)(axis)
        (v * Tensor(g)).sum().backward()
        tv, ti = getattr(torch, name)(torch.from_numpy(a), axis)
        # the gradient's reference in float64 (the same indices): torch's float32 sums a long
        # segment with float32 roundings, ours in float64 rounded once
        tx = torch.tensor(a.astype(np.float64), requires_grad=True)
        (getattr(torch, name)(tx, axis)[0] * torch.tensor(g.astype(np.float64))).sum().backward()
        got, want = v.numpy(), tv.numpy()
        np.testing.assert_array_equal(got, acc.accumulate(a, axis=axis))
        num = ~np.isnan(want)
        assert np.array_equal(np.signbit(got[num]), np.signbit(want[num])), name
        np.testing.assert_array_equal(i.numpy(), ti.numpy().astype(np.int32))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=2e-7, atol=1e-6,
                                   err_msg=f"{name} {a.shape} axis {axis}")


@pytest.mark.parametrize("n", [1, 2, 511, 512, 513, 4099])
def test_values_and_gradients_match_torch(n):
    for shape, axis in (((n,), 0), ((3, n), 1), ((n, 3), 0)):
        g = np.random.default_rng(n).standard_normal(shape).astype(np.float32)
        _check(tied(shape, "float32", n + len(shape)), axis, g)


def test_all_equal_rows_and_signed_zeros():
    rows = np.array([[2.0] * 7, [-0.0] * 7, [0.0, -0.0, 0.0, -0.0, 0.0, -0.0, -0.0],
                     [np.nan] * 7, [-np.inf] * 7], np.float32)
    g = np.random.default_rng(1).standard_normal(rows.shape).astype(np.float32)
    _check(rows, 1, g)
    _check(rows.T.copy(), 0, g.T.copy())


def test_a_non_finite_gradient_stays_in_its_segment():
    a = np.array([1, 0, 2, 1, 3, 0, 4, 4, 1, 5], np.float32)
    g = np.ones(10, np.float32)
    g[1], g[3], g[5], g[8] = np.inf, np.nan, np.inf, -np.inf  # segments [2,4), [4,6), [7,9)
    _check(a, 0, g)


@pytest.mark.parametrize("n", [513, 65536])
def test_the_backward_is_a_few_linear_kernels(n):
    # the key (stored), the next record's running max, a reverse running sum per int64 limb of
    # the finite part (277 bits of float32's grid in limbs of 63 - bits(n), n's headroom) and
    # one of the non-finite counts, and the picks folded into loads: every loop a scan or a
    # load, the same kernels at any length (the pick's backward summed a one-hot per element)
    limbs = -(-277 // (63 - n.bit_length()))
    x = Tensor(tied((n,), "float32", 3), requires_grad=True)
    (x.cummax(0)[0] * 1.5).sum().backward()
    kernels = kernel_actions(x.grad)
    assert len(kernels) <= limbs + 4, kernels
    assert sum(any(a.startswith("SCAN") for a in k) for k in kernels) == limbs + 3, kernels
    # (the last kernel, elementwise, recombines the limbs: it may run in parallel)
    assert not any(a.startswith("PARALLEL") for k in kernels[:-1] for a in k), kernels


@pytest.mark.parametrize("shape,axis", [((7919,), 0), ((3, 7919), 1), ((7919, 2), 0)])
def test_rows_past_the_work_limit_scan_their_gradient_in_blocks(monkeypatch, shape, axis):
    # a row whose pooled windows (2 n^2) pass the limit: the gradient's running sums and max
    # run in blocks (running_sum.py's `long_running`), values and gradients still torch's
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(1 << 24))
    g = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    _check(tied(shape, "float32", 6), axis, g)


def test_the_backwards_work_per_element_does_not_grow_with_the_length(monkeypatch):
    from call_counts import loop_trips

    # (both lengths blocked; their blocks' windows, n / 256 of 2 * 256^2, still fit it)
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(1 << 24))
    per = []
    for n in (8192, 24576):
        x = Tensor(tied((n,), "float32", 7), requires_grad=True)
        (x.cummin(0)[0] * 1.5).sum().backward()
        per.append(loop_trips(x.grad) / n)
    assert per[1] < 1.2 * per[0] and per[1] < 64, per


def _stretch_bound_check(a: np.ndarray, g: np.ndarray, axis: int) -> None:
    # each element's gradient sums the incoming g of its own stretch (the positions whose index
    # is it); its error is bounded by that stretch's terms (runtime/semantics.py's reduction
    # contract), never by the other stretches' (a difference of long running sums cancelled:
    # x = [1, 2], g = [1, 1e17] gave x0 a gradient of 0, torch's 1)
    for name in ("cummax", "cummin"):
        x = Tensor(a, requires_grad=True)
        (getattr(x, name)(axis)[0] * Tensor(g)).sum().backward()
        tx = torch.tensor(a.astype(np.float64), requires_grad=True)
        v, ti = getattr(torch, name)(tx, axis)
        (v * torch.tensor(g.astype(np.float64))).sum().backward()
        idx = np.moveaxis(ti.numpy(), axis, -1).reshape(-1, a.shape[axis])
        mag = np.moveaxis(np.abs(g.astype(np.float64)), axis, -1).reshape(idx.shape)
        own = np.zeros(idx.shape)
        for r in range(idx.shape[0]):
            np.add.at(own[r], idx[r], mag[r])
        own = np.moveaxis(own.reshape(np.moveaxis(a, axis, -1).shape), -1, axis)
        got, want = x.grad.numpy().astype(np.float64), tx.grad.numpy()
        bad = np.abs(got - want) > 2.0 ** -22 * own
        assert not bad.any(), (name, np.argwhere(bad)[:5], got[bad][:5], want[bad][:5])


def _adversarial(shape: tuple[int, ...], axis: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A row with many records (a rising trend, ties) and incoming gradients whose later terms
    dwarf the early ones: huge values, +-1e30 pairs that cancel, 1e-30 beside 1e30."""
    rng = np.random.default_rng(seed)
    n = shape[axis]
    trend = np.arange(n, dtype=np.float32).reshape([n if d == axis else 1
                                                    for d in range(len(shape))])
    a = (trend + rng.integers(-4, 4, shape) * 3).astype(np.float32)
    u = rng.random(shape)
    g = rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 31, shape)
    g[u < 0.3] = np.where(rng.random(int((u < 0.3).sum())) < 0.5, 1e30, -1e30)
    g[(u >= 0.3) & (u < 0.4)] = 1e-30
    return a, g.astype(np.float32)


def test_a_stretch_gets_its_own_sum_beside_huge_later_gradients():
    _stretch_bound_check(np.array([1, 2], np.float32), np.array([1, 1e17], np.float32), 0)
    _stretch_bound_check(np.array([1, 0, 2, 2, 3], np.float32),
                         np.array([1e-30, 3, 1e30, -1e30, 7], np.float32), 0)


@pytest.mark.parametrize("n", [2, 3, 17, 512, 513, 4099])
def test_adversarial_gradients_are_exact_per_stretch(n):
    for shape, axis in (((n,), 0), ((3, n), 1), ((n, 2), 0)):
        _stretch_bound_check(*_adversarial(shape, axis, n), axis)


@pytest.mark.parametrize("shape,axis", [((7919,), 0), ((2, 7919), 1)])
def test_adversarial_gradients_of_blocked_rows_are_exact_per_stretch(monkeypatch, shape, axis):
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(1 << 24))
    _stretch_bound_check(*_adversarial(shape, axis, 11), axis)
