"""A scan along a long axis with fewer rows than threads (issue 32/33: 3x131071, 1x1000003 on
more cores) runs as a blocked scan (runtime/tensor_ops.py's `_few_long_rows`, `_scan_blocks`):
each thread scans blocks of the row, the blocks' totals are scanned, each block starts from
them. A running accumulator per row had left every thread but `rows` idle.

The choice reads the machine (`threads()`) and the parallel action's bound
(`parallel_min_work`): both are set here, so the test holds on any machine. Values against
numpy: ints exact, a float sum within the reduction contract (runtime/semantics.py), NaN and
infinities where numpy has them; counted work: the kernels' actions, never time."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions

from rulegrad import Tensor
from rulegrad.runtime import target
from rulegrad.runtime.tensor_ops import SCAN_BLOCK


@pytest.fixture
def four_threads(monkeypatch):
    monkeypatch.setenv("RULEGRAD_THREADS", "4")
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 4096)


def _within_contract(got: np.ndarray, x: np.ndarray, axis: int) -> None:
    want = np.cumsum(x.astype(np.float64), axis)
    steps = np.cumsum(np.ones(x.shape), axis)
    bound = steps * np.finfo(x.dtype).eps * np.cumsum(np.abs(x.astype(np.float64)), axis)
    assert got.dtype == x.dtype and got.shape == x.shape
    assert (np.isnan(got) == np.isnan(want)).all()
    inf = np.isinf(want)
    assert (got[inf] == want[inf]).all()
    fin = np.isfinite(want)
    assert (np.abs(got[fin] - want[fin]) <= bound[fin]).all()


# rows below the 4 threads, a long axis: prime, one block and a tail, whole blocks, batch 1,
# along a first axis
SHAPES = [((3, 7919), 1), ((1, 4097), 1), ((2, 16 * SCAN_BLOCK), 1), ((7919,), 0),
          ((5003, 3), 0)]


@pytest.mark.parametrize("shape,axis", SHAPES)
def test_few_long_rows_are_numpys(four_threads, shape, axis):
    rng = np.random.default_rng(shape[axis])
    x = rng.standard_normal(shape).astype(np.float32)
    _within_contract(Tensor(x).cumsum(axis).numpy(), x, axis)
    ints = rng.integers(-1000, 1000, shape).astype(np.int32)
    got = Tensor(ints).cumsum(axis).numpy()
    want = np.cumsum(ints, axis)
    assert got.dtype == want.dtype and (got == want).all()
    big = rng.integers(-(1 << 40), 1 << 40, shape)  # (int64: exact past float64's 2^53 too)
    assert (Tensor(big).cumsum(axis).numpy() == np.cumsum(big, axis)).all()


def test_nan_and_infinite_rows(four_threads):
    x = np.random.default_rng(3).standard_normal((3, 7919)).astype(np.float32)
    x[0, 5000] = np.nan  # NaN from 5000 on
    x[1, 300], x[1, 6001] = np.inf, -np.inf  # inf from 300, NaN from 6001
    x[2, :] = -np.inf
    _within_contract(Tensor(x).cumsum(1).numpy(), x, 1)


def test_rows_below_the_threads_are_blocked_and_threaded(four_threads):
    x = np.random.default_rng(4).standard_normal((3, 7919)).astype(np.float32)
    kernels = kernel_actions(Tensor(x).cumsum(1))
    # totals, their scan, the blocks from them: one running accumulator per block of
    # SCAN_BLOCK, the blocks (3 rows of 31) a loop the threads share
    assert len(kernels) == 3, kernels
    scans = [a for a in kernels[-1] if a.startswith("SCAN ADD")]
    assert scans and f"({SCAN_BLOCK} values" in scans[0], kernels[-1]
    assert any(a.startswith("PARALLEL") for a in kernels[-1]), kernels[-1]


def test_enough_rows_keep_one_accumulator_a_row(four_threads):
    # 4 rows for 4 threads (and a short row): each row is a thread's, read once
    for shape in [(4, 7919), (3, SCAN_BLOCK)]:
        x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
        kernels = kernel_actions(Tensor(x).cumsum(1))
        assert len(kernels) == 1, (shape, kernels)
        _within_contract(Tensor(x).cumsum(1).numpy(), x, 1)
