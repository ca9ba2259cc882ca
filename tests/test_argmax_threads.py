"""argmax/argmin on two threads (issue 32): the first hit down a long axis to a vector's worth
of columns (8..15: one vector of int32 lanes, not two) runs as shares of the rows, one per
thread, each share's first hit per column, the lowest index of them combined (rangeify.rules'
`shares_only`); it ran on one core of two. Values against numpy (NaN wins and the first NaN,
ties the first, -0.0 equal to 0.0, keepdim) over dtypes and shapes; the work counted by the
optimizer's actions, never by time."""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import kernel_actions

from rulegrad import Tensor, dtypes

_SHAPES = [((100003, 13), 0), ((100003, 13), 1), ((13, 100003), 1), ((13, 100003), 0),
           ((65537, 8), 0), ((40009, 15), 0), ((3, 40009, 11), 1), ((1024, 1024), 0),
           ((1, 1), 0), ((7, 1), 0), ((7, 1), 1), ((100003, 7), 0), ((65537, 16), 0)]
_DTYPES = ["float32", "float64", "float16", "int32", "int8", "bool"]


def _data(shape: tuple[int, ...], dt: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.random(shape) < 0.01  # (most columns' first True deep in the rows)
    if dt.startswith("int"):
        return rng.integers(-100, 100, size=shape).astype(dt)  # many ties: the first wins
    x = rng.standard_normal(shape).astype(dt)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, max(1, flat.size // 20000))] = np.nan  # NaN wins
    if x.ndim == 2 and x.shape[1] > 3:
        x[:, 1] = np.nan  # a column of NaN only: its first row
        x[:, 2] = 1.5  # a column of one value: its first row
        x[:, 3] = -0.0  # -0.0 and 0.0 are equal: the first of either
        x[x.shape[0] // 2:, 3] = 0.0
    return x


@pytest.mark.parametrize("shape, axis", _SHAPES)
@pytest.mark.parametrize("dt", _DTYPES)
def test_argmax_argmin_on_two_threads_equal_numpy(monkeypatch, shape, axis, dt):
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = _data(shape, dt, shape[0] + axis)
    for op, keepdim in (("argmax", False), ("argmin", False), ("argmax", True)):
        got = getattr(Tensor(x), op)(axis, keepdim=keepdim).numpy()
        want = getattr(x, op)(axis=axis, keepdims=keepdim)
        assert got.shape == want.shape, (op, got.shape, want.shape)
        np.testing.assert_array_equal(got.astype(np.int64), want, err_msg=f"{op} {dt}")


def _hit_kernels(x: np.ndarray, axis: int, threads: str, monkeypatch) -> list[list[str]]:
    """The actions of the argmax's first-hit kernels: those reading the rows' indices (an int32
    of the rows' length), the max's partials aside."""
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    t = Tensor(x).argmax(axis)
    return [a for a, item in zip(kernel_actions(t), t.schedule())
            if any(b.dtype is dtypes.int32 and b.size == x.shape[axis] for b in item.bufs)]


def _iterations(actions: list[str]) -> int:
    """The iterations a kernel's PARALLEL action shares among the threads (0: none)."""
    found = [re.search(r"\((\d+) iterations", a) for a in actions if a.startswith("PARALLEL")]
    return int(found[0].group(1)) if found and found[0] else 0


# (80021 x 9, not 40009 x 9: that first hit's 1.1M loads are under two threads' region costs,
# parallel_helpers' `region_threads`, and run on one core)
@pytest.mark.parametrize("shape, axis", [((100003, 13), 0), ((80021, 9), 0), ((3, 40009, 11), 1)])
def test_a_first_hit_to_one_vector_of_columns_runs_on_both_threads(monkeypatch, shape, axis):
    # two threads: the first hit's shares an equal number per thread (on the old code none,
    # one core of two, or 3 batches on 2 threads)
    x = _data(shape, "float32", 5)
    shared = [_iterations(k) for k in _hit_kernels(x, axis, "2", monkeypatch)]
    assert any(n >= 2 and n % 2 == 0 for n in shared), (shape, shared)
    # one thread: no shares, the one kernel as before
    assert len(_hit_kernels(x, axis, "1", monkeypatch)) == 1, shape
