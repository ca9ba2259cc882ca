"""cummax / cummin against torch, values (with the sign of a zero) and indices: torch's running
max is the element at the index it returns (ties go to the later one, >=), so [0.0, -0.0] gives
[0.0, -0.0]; a NaN propagates from where it stands and its index is the last NaN so far. Every
float dtype, ints, a leading -0.0, a NaN in the middle, a long axis (scanned in blocks), a 2-d
axis, and the gradient of a tied running max."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from call_counts import loop_trips

from rulegrad import Tensor

NAN = float("nan")
ROWS = [
    [0.0, -0.0], [-0.0, 0.0], [-0.0, -0.0, 0.0, 1.0, -0.0], [1.0, NAN, 2.0, NAN, 3.0],
    [NAN, -0.0, 0.0], [3.0, -0.0, 0.0, -0.0], [-1.0, -0.0, -1.0, 0.0, -0.0, -2.0],
    [-0.0], [2.0, float("inf"), -0.0, float("-inf"), float("inf")],
    [float("-inf"), -0.0, float("-inf"), 0.0],
]
FLOATS = [(np.float16, torch.float16), (np.float32, torch.float32), (np.float64, torch.float64)]


def _same(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """Equal values, NaN where NaN, and the sign of every non-NaN (a zero's)."""
    num = ~np.isnan(theirs)
    return ours.shape == theirs.shape and np.array_equal(np.isnan(ours), ~num) and \
        np.array_equal(ours[num], theirs[num]) and \
        np.array_equal(np.signbit(ours[num]), np.signbit(theirs[num]))


def _check(a: np.ndarray, axis: int) -> None:
    for name in ("cummax", "cummin"):
        v, i = getattr(Tensor(a), name)(axis)
        tv, ti = getattr(torch.from_numpy(a), name)(axis)
        assert _same(v.numpy(), tv.numpy()), (name, a, v.numpy(), tv.numpy())
        assert np.array_equal(i.numpy(), ti.numpy()), (name, a, i.numpy(), ti.numpy())


@pytest.mark.parametrize("dt", [f[0] for f in FLOATS], ids=lambda d: d.__name__)
@pytest.mark.parametrize("row", ROWS, ids=str)
def test_floats_match_torch(row, dt):
    _check(np.array(row, dtype=dt), 0)


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.int8])
def test_ints_match_torch(dt):
    rng = np.random.default_rng(0)
    _check(rng.integers(-3, 3, (5, 7)).astype(dt), 1)
    _check(rng.integers(-3, 3, (11,)).astype(dt), 0)


@pytest.mark.parametrize("n", [1, 7, 600])  # 600: past 2 * SCAN_BLOCK, picked in blocks
def test_signed_zeros_and_nan_along_axes(n):
    rng = np.random.default_rng(n)
    a = rng.choice(np.array([0.0, -0.0, -1.0, 1.0, NAN], np.float32), (3, n),
                   p=[0.35, 0.35, 0.1, 0.1, 0.1])
    _check(a, 1)
    _check(np.ascontiguousarray(a.T), 0)


def test_gradient_goes_to_the_returned_index():
    a = np.array([1.0, 3.0, -0.0, 3.0, 0.0, 2.0])
    for name in ("cummax", "cummin"):
        x = Tensor(a, requires_grad=True)
        getattr(x, name)(0)[0].mul(Tensor(np.arange(1.0, 7.0))).sum().backward()
        tx = torch.tensor(a, requires_grad=True)
        getattr(tx, name)(0)[0].mul(torch.arange(1.0, 7.0, dtype=torch.float64)).sum().backward()
        assert np.array_equal(x.grad.numpy(), tx.grad.numpy()), (name, x.grad.numpy(), tx.grad)


def _grads(a: np.ndarray, name: str, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """d sum(w * cummax(a)[0]) / d a, ours and torch's, w whole numbers (exact sums)."""
    w = np.arange(1, a.size + 1, dtype=a.dtype).reshape(a.shape) % 7 + 1
    x = Tensor(a, requires_grad=True)
    (getattr(x, name)(axis)[0] * Tensor(w)).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    (getattr(tx, name)(axis)[0] * torch.from_numpy(w)).sum().backward()
    return x.grad.numpy(), tx.grad.numpy()


@pytest.mark.parametrize("n", [1, 6, 600, 1300])  # 600, 1300: picked in blocks, then blocks'
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_gradient_at_ties_nan_infinities_and_zeros_matches_torch(n, dt):
    rng = np.random.default_rng(n)
    vals = np.array([0.0, -0.0, 1.0, -1.0, NAN, float("inf"), float("-inf"), 2.0], dt)
    a = rng.choice(vals, (3, n), p=[0.2, 0.2, 0.15, 0.15, 0.05, 0.05, 0.1, 0.1])
    for name in ("cummax", "cummin"):
        for arr, axis in ((a, 1), (np.ascontiguousarray(a.T), 0)):
            ours, theirs = _grads(arr, name, axis)
            assert _same(ours, theirs), (name, axis, np.flatnonzero(ours != theirs)[:5])


def test_gradient_work_is_linear_in_the_length():
    # each element picked its running max's value from a one-hot row of the axis, and the
    # window max's backward was another: n^2 (2,784 iterations per element at 1,000, 32,777
    # at 16,000); picked within blocks, a bounded number per element at any length
    per = []
    for n in (1000, 16000):
        x = Tensor(np.random.default_rng(n).standard_normal(n).astype(np.float32),
                   requires_grad=True)
        x.cummax(0)[0].sum().backward()
        per.append(loop_trips(x.grad) / n)
    assert per[1] < 1.5 * per[0] and per[1] < 4 * 256, per


def test_forward_work_is_linear_in_the_length():
    # an element whose running max is in an earlier block reads the block that holds it, a
    # scan over the blocks: fused into that read, it ran once per element (70 iterations per
    # element at 16,000, 263 at 65,536); stored, once
    per = []
    for n in (16000, 65536):
        values, idx = Tensor(np.random.default_rng(n).standard_normal(n).astype(np.float32)) \
            .cummax(0)
        per.append((loop_trips(values) + loop_trips(idx)) / n)
    assert per[1] < 1.5 * per[0] and per[1] < 32, per
