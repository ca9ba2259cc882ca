"""A float sum over axes of size 1 is 0.0 + x (runtime/semantics.py: a float REDUCE ADD starts
from +0.0, so a sum of one -0.0 is +0.0, as numpy's and torch's), on both schedulers and both
backends; a max over them is x, -0.0 kept. Oracle: numpy, sign bits compared."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import using

A = np.array([[[-0.0], [1.5]], [[-0.0], [np.nan]], [[0.0], [-2.0]]], np.float32)  # (3, 2, 1)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), (got, want)


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_a_sum_over_axes_of_size_one_starts_from_zero(monkeypatch, backend, scheduler, dt):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    a = A.astype(dt)
    with using(scheduler):
        _same(Tensor(a).sum(2).numpy(), a.sum(2))
        _same(Tensor(a).sum(2, keepdim=True).numpy(), a.sum(2, keepdims=True))
        _same(Tensor(a[:1, :1]).sum().numpy(), a[:1, :1].sum())
        _same(Tensor(a).mean(2).numpy(), a.mean(2))
        _same((Tensor(a) * 1).sum((0, 2)).numpy(), a.sum((0, 2)))  # (a real sum, for contrast)
        _same(Tensor(a).max(2).numpy(), a.max(2))


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_a_sum_of_a_broadcast_value_starts_from_zero(monkeypatch, backend, scheduler, dt):
    """A sum over axes that only repeat one value (rangeify's reduce_expand makes it x * n): of
    n copies of -0.0 it is +0.0, as numpy's sum of n -0.0 and torch's are; other values, NaN
    and infinities are x * n."""
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    col = np.array([[-0.0], [1.5], [np.nan], [-np.inf], [0.0]], dt)  # (5, 1)
    with using(scheduler):
        for n in (1, 3, 7):
            want = np.broadcast_to(col, (5, n)).sum(1)
            _same(Tensor(col).expand(5, n).sum(1).numpy(), want)
            _same(Tensor(col).expand(5, n).sum(1, keepdim=True).numpy(), want[:, None])
        _same(Tensor(col[:1, 0]).reshape(1, 1).expand(4, 3).sum().numpy(),
              np.broadcast_to(col[:1], (4, 3)).sum())
