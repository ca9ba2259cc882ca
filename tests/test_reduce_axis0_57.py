"""Reductions down the first axis or a middle axis (cliff57, issue 32): a column's values are a
row of columns apart in memory. argmax/argmin/max/min/sum/mean checked against numpy over a
sweep of shapes and dtypes on one and two threads (numpy's argmax: the first index of the
largest, a NaN the largest, -0.0 equal to 0.0), and the schedule counted: a column max longer
than the optimizer unrolls is its own kernel reading x's rows, not a scalar walk down each
column inside the argmax's kernel (4096 x 4096: 0.55x torch's speed); never by time."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.runtime.target import UNROLL_MAX

# (shape, axis): square, prime, tall, skinny, batch 1, a middle axis, and the unroll bound's
# two sides (UNROLL_MAX rows and one more)
_POINTS = [((1, 1), 0), ((7, 1), 0), ((1, 9), 0), ((257, 263), 0), ((13, 1009), 0),
           ((1009, 13), 0), ((UNROLL_MAX, 515), 0), ((UNROLL_MAX + 1, 515), 0),
           ((2, 3, 67, 64), 1), ((2, 37, 5, 33), 1), ((64, 1024), 0)]


def _data(shape: tuple[int, ...], dt: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "int32":
        return rng.integers(-50, 50, size=shape).astype(dt)  # ties: the first index wins
    x = rng.standard_normal(shape).astype(dt)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, max(1, flat.size // 3000))] = np.nan  # NaN columns win
    if x.ndim == 2 and x.shape[1] > 3 and x.shape[0] > 1:
        x[:, 1] = -0.0  # a column of -0.0 and 0.0: equal, the first row
        x[1::2, 1] = 0.0
        x[:, 2] = np.nan  # a column of NaN only: its first row
        x[:, 3] = 2.5  # a column of one value: its first row
    return x


@pytest.mark.parametrize("shape, axis", _POINTS)
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "float16"])
@pytest.mark.parametrize("threads", ["1", "2"])
def test_reduces_down_columns_equal_numpy(monkeypatch, shape, axis, dt, threads):
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    x = _data(shape, dt, len(shape) + shape[0])
    for op in ("argmax", "argmin", "max", "min"):
        got = getattr(Tensor(x), op)(axis).numpy()
        want = getattr(x, op)(axis=axis)
        assert got.shape == want.shape, (op, got.shape, want.shape)
        if op.startswith("arg"):
            np.testing.assert_array_equal(got.astype(np.int64), want, err_msg=op)
        else:  # the bits: -0.0 and NaN too (a max of -0.0 and 0.0 is numpy's first seen)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=op)
            np.testing.assert_array_equal(got, want, err_msg=op)
    wide = x.astype(np.float64)
    tol = {"float16": 2e-2, "float32": 1e-4}.get(dt, 1e-9)
    for op in ("sum", "mean"):
        got = getattr(Tensor(x), op)(axis).numpy().astype(np.float64)
        np.testing.assert_allclose(got, getattr(wide, op)(axis=axis), rtol=tol, atol=tol,
                                   err_msg=op)


def _shape_of(rows: int, cols: int) -> list[tuple[object, list[str]]]:
    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    return optimized_kernels(Tensor(x).argmax(0))


@pytest.mark.parametrize("rows, cols", [(UNROLL_MAX + 1, 515), (64, 4096), (1024, 1024)])
def test_long_column_max_is_its_own_interchanged_kernel(monkeypatch, rows, cols):
    """Past UNROLL_MAX rows the column max is a kernel of its own and both kernels read x a
    row of columns a step (INTERCHANGE, or the columns a vector's lanes): the old schedule
    walked each column in the argmax's one kernel (PARALLEL over the columns alone)."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    kernels = _shape_of(rows, cols)
    assert len(kernels) == 2, [acts for _, acts in kernels]
    for _, acts in kernels:
        assert any(a.startswith(("INTERCHANGE", "UPCAST")) for a in acts), acts


def test_short_column_max_stays_in_the_argmax_kernel(monkeypatch):
    """UNROLL_MAX rows or fewer: the max stays local, unrolled, the columns a vector's lanes
    (one pass over x, no second kernel)."""
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    kernels = _shape_of(UNROLL_MAX, 515)
    assert len(kernels) == 1, [acts for _, acts in kernels]
    acts = kernels[0][1]
    assert any(a.startswith("UNROLL MAX") for a in acts), acts
    assert any(a.startswith("UPCAST") for a in acts), acts
