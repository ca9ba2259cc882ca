"""Memory-bound rows (issue 33): a scan's work as the parallel action weighs it, so a small scan
runs on one core and a large one still takes the threads; values against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions

from rulegrad import Tensor
from rulegrad.runtime import target

# a threshold small enough that a scan over it stays a quick test (the model's rule is the same
# at any threshold: a share of the work per thread at least PARALLEL_MIN_WORK)
_MIN_WORK = 1 << 14


def _threaded(t: Tensor) -> bool:
    return any(a.startswith("PARALLEL") for k in kernel_actions(t) for a in k)


@pytest.mark.parametrize("shape, axis", [
    ((2, 3707), 1), ((3707, 2), 0), ((1, 8191), 1), ((127, 127), 1), ((127, 127), 0),
    ((7, 1), 1), ((1, 1), 0), ((61, 257), 1),
])
def test_a_scan_under_the_work_of_two_shares_takes_no_threads(monkeypatch, shape, axis):
    # n * m elements are n * m adds (one step per element), not n * m * m: the scan's REDUCE
    # runs along its STORE's own loop, counted once (parallel_helpers' `_work`)
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", _MIN_WORK)
    assert shape[0] * shape[1] < 2 * _MIN_WORK
    x = np.random.default_rng(shape[0] * 7 + axis).standard_normal(shape).astype(np.float32)
    t = Tensor(x).cumsum(axis)
    assert not _threaded(t)
    np.testing.assert_allclose(t.numpy(), np.cumsum(x, axis), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape, axis", [((128, 300), 1), ((257, 131), 1), ((40009, 1), 0)])
def test_a_scan_over_two_shares_of_work_still_takes_the_threads(monkeypatch, shape, axis):
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", _MIN_WORK)
    assert shape[0] * shape[1] >= 2 * _MIN_WORK
    x = np.random.default_rng(shape[1]).standard_normal(shape).astype(np.float32)
    t = Tensor(x).cumsum(axis)
    if shape[1 - axis] >= 2:  # (one scan alone carries its accumulator: nothing to share)
        assert _threaded(t)
    np.testing.assert_allclose(t.numpy(), np.cumsum(x, axis), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape", [(2, 3707), (131, 131), (1, 5), (6, 8)])
def test_small_float16_scans_as_torch(monkeypatch, shape):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float16)
    for axis in (0, 1):
        want = torch.from_numpy(x).cumsum(axis).numpy()
        got = Tensor(x).cumsum(axis).numpy()
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=2e-2, atol=2e-2 * np.sqrt(shape[axis]))
