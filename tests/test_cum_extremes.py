"""cummax / cummin against torch, values (with the sign of a zero) and indices: torch's running
max is the element at the index it returns (ties go to the later one, >=), so [0.0, -0.0] gives
[0.0, -0.0]; a NaN propagates from where it stands and its index is the last NaN so far. Every
float dtype, ints, a leading -0.0, a NaN in the middle, a long axis (scanned in blocks), a 2-d
axis, and the gradient of a tied running max."""

from __future__ import annotations

import numpy as np
import pytest
import torch

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
