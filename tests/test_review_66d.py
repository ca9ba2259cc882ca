"""Review of norm66 (rows scanned a block of REDUCE_VECTORS at a time, scan_helpers'
`_interleaved`; a scan's work counted once, parallel_helpers' `_work`): the cases its tests did
not reach. A row count that is not a multiple of the block makes the last block overlap the one
before it (its rows computed and stored twice): written in place, or by two threads, those rows
must still come out as numpy's. Both schedulers (kernelize keeps a blocked scan's carry in a
kernel of its own, so its blocks run side by side there), odd thread counts, flipped and
transposed reads, and the gradients against torch. Guards: every case passed when written (no
wrong answer found), each a path the author's tests leave untried."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

SCHEDULERS = ["rangeify", "kernelize"]


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("threads", ["2", "7"])
@pytest.mark.parametrize("shape", [(5, 33), (6, 4099), (9, 131), (13, 1), (7, 60001)])
def test_overlapping_last_block_as_numpy(monkeypatch, scheduler, threads, shape):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    rng = np.random.default_rng(shape[0] * 31 + shape[1])
    x = rng.integers(-3, 4, shape).astype(np.int64)
    np.testing.assert_array_equal(Tensor(x).cumsum(1).numpy(), np.cumsum(x, 1))
    f = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(Tensor(f).cumsum(1).numpy(), np.cumsum(f, 1))
    np.testing.assert_array_equal(Tensor(f).flip(1).cumsum(1).numpy(),
                                  np.cumsum(f[:, ::-1], 1))
    ft = np.ascontiguousarray(f.T)
    np.testing.assert_array_equal(Tensor(ft).T.cumsum(1).numpy(), np.cumsum(f, 1))
    np.testing.assert_array_equal(Tensor(f).cummax(1)[0].numpy(), np.maximum.accumulate(f, 1))


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("shape", [(6, 33), (9, 100000), (5, 131071)])
def test_a_scan_written_in_place_over_its_own_rows(monkeypatch, scheduler, shape):
    # the overlapping block's rows read x again after the first block stored them: in place,
    # they would read their own prefix sums
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = np.random.default_rng(shape[0]).integers(-3, 4, shape).astype(np.int64)
    t = Tensor(x.copy()).realize()
    t.assign(t.cumsum(1) + t)
    np.testing.assert_array_equal(t.numpy(), np.cumsum(x, 1) + x)
    t = Tensor(x.copy()).realize()
    t[1:] = t[1:].cumsum(1)
    want = x.copy()
    want[1:] = np.cumsum(x[1:], 1)
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("shape, axis", [((6, 9), 1), ((9, 13), 0), ((2, 3, 5, 7), 3),
                                         ((7, 4099), 1)])
def test_scan_gradients_as_torch(monkeypatch, scheduler, shape, axis):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    rng = np.random.default_rng(len(shape) * 10 + axis)
    x = (rng.standard_normal(shape) * 0.2 + 1).astype(np.float32)
    w = rng.standard_normal(shape).astype(np.float32)
    for op in ("cumsum", "cumprod"):
        t = Tensor(x, requires_grad=True)
        (getattr(t, op)(axis) * Tensor(w)).sum().backward()
        xt = torch.tensor(x, requires_grad=True)
        (getattr(torch, op)(xt, axis) * torch.from_numpy(w)).sum().backward()
        want = xt.grad.numpy()
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=2e-3,
                                   atol=2e-3 * max(1.0, float(np.abs(want).max())))
