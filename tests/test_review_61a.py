"""Review 61a of bn61 (a buffer's loop order apart from its memory order, rangeify's `placed`):
the axes a reduction keeps are x's only when the reduction reaches x through elementwise ops
and broadcasts. A transpose or reshape above it moves its kept axes elsewhere in x, where
comparing shapes position by position named the wrong axis (a batch's N for the channel) and
put it outermost: a program whose channel already led in memory lost its one-kernel schedule.
Values against numpy in float64, never our own output."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

SCHEDULERS = ["rangeify", "kernelize"]
# (N == C: shapes alone cannot tell the channel from the batch) and (C == H)
SQUARE = pytest.mark.parametrize("shape", [(16, 16, 32, 32), (7, 7, 13, 17)],
                                 ids=["16x16x32x32", "7x7x13x17"])
ALONG_H = pytest.mark.parametrize("shape", [(4, 16, 16, 64), (3, 13, 13, 128)],
                                  ids=["4x16x16x64", "3x13x13x128"])


def _store_loops(item) -> list[int]:
    """The sizes of a kernel's output loops, outermost first (a size-1 axis: 1)."""
    (st,) = [n for n in toposort(item.ast) if n.op is Ops.STORE]
    return [int(r.src[0].arg) if r.op is Ops.RANGE else 1 for r in st.src[2:]]


def _x(shape, seed: int = 61) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 2 + 1).astype(np.float32)


def _transposed(t: Tensor) -> Tensor:
    """x[c, n] - mean over (n, h, w) of channel c: a batch norm's centring, written channel-first
    (the channel is x's axis 0 and leads its memory; N == C, so shapes alone cannot tell)."""
    return t.permute(1, 0, 2, 3) - t.mean(axis=(0, 2, 3), keepdim=True).permute(1, 0, 2, 3)


def _np_transposed(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64)
    return (a - a.mean((0, 2, 3), keepdims=True)).transpose(1, 0, 2, 3)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@SQUARE
def test_channel_read_through_a_transpose_equals_numpy(shape, scheduler, monkeypatch):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x = _x(shape)
    np.testing.assert_allclose(_transposed(Tensor(x)).numpy(), _np_transposed(x), rtol=1e-5,
                               atol=1e-5)


@SQUARE
def test_channel_read_through_a_transpose_stays_one_kernel(shape):
    """The channel leads x's memory: its mean is computed once per channel in the output's
    kernel, in memory order (as before placed; placed read N as the channel, put it outermost
    and the mean went to a kernel of its own)."""
    items = _transposed(Tensor(_x(shape))).schedule()
    assert len(items) == 1
    assert _store_loops(items[0])[0] == shape[1]


def _reshaped(t: Tensor) -> Tensor:
    """Channel c's mean added along H (C == H): the kept axis is x's 2, not its 1."""
    c = t.shape[1]
    return t - t.mean(axis=(0, 2, 3), keepdim=True).reshape(1, 1, c, 1)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@ALONG_H
def test_channel_moved_by_a_reshape_equals_numpy(shape, scheduler, monkeypatch):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x = _x(shape)
    a = x.astype(np.float64)
    want = a - a.mean((0, 2, 3), keepdims=True).reshape(1, 1, shape[1], 1)
    np.testing.assert_allclose(_reshaped(Tensor(x)).numpy(), want, rtol=1e-5, atol=1e-5)


@ALONG_H
def test_channel_moved_by_a_reshape_keeps_memory_order(shape):
    """No reduction of x's kernel keeps x's axis 1 (the mean is read along H): its loops stay
    in memory order, images outermost (placed put x's axis 1 first, for nothing)."""
    items = _reshaped(Tensor(_x(shape))).schedule()
    assert _store_loops(items[-1])[0] == shape[0]


def _centred(t: Tensor) -> Tensor:
    return t - t.mean(axis=(0, 2, 3), keepdim=True)


@pytest.mark.parametrize("shape", [(4, 16, 32, 32), (3, 7, 13, 17)],
                         ids=["4x16x32x32", "3x7x13x17"])
def test_permute_below_the_reduction_keeps_channel_outer(shape):
    """An NHWC buffer read as NCHW: the permute is under the mean (its input), not above it,
    so the channel is still x's axis 1: one kernel looping channel-outer, as bn61 made it."""
    x = _x(shape)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    y = _centred(Tensor(nhwc).permute(0, 3, 1, 2))
    (item,) = y.schedule()
    assert _store_loops(item)[0] == shape[1]
    a = x.astype(np.float64)
    np.testing.assert_allclose(_centred(Tensor(nhwc).permute(0, 3, 1, 2)).numpy(),
                               a - a.mean((0, 2, 3), keepdims=True), rtol=1e-5, atol=1e-5)


def test_mean_without_keepdim_reshaped_back_keeps_channel_outer():
    """mean over (0, 2, 3) to (C,), reshaped to (1, C, 1, 1) (torch's style): the reshape puts
    the channel back where the reduction kept it, so it loops channel-outer in one kernel."""
    x = _x((4, 16, 32, 32))
    t = Tensor(x)
    y = t - t.mean(axis=(0, 2, 3)).reshape(1, 16, 1, 1)
    (item,) = y.schedule()
    assert _store_loops(item)[0] == 16
    a = x.astype(np.float64)
    np.testing.assert_allclose(y.numpy(), a - a.mean((0, 2, 3), keepdims=True), rtol=1e-5,
                               atol=1e-5)


@ALONG_H
def test_mean_without_keepdim_reshaped_along_h_keeps_memory_order(shape):
    """The same (C,) reshaped to (1, 1, C, 1) (C == H): read along H, x's axis 1 is no channel
    of it, and the loops stay in memory order."""
    x = _x(shape)
    t, c = Tensor(x), shape[1]
    y = t - t.mean(axis=(0, 2, 3)).reshape(1, 1, c, 1)
    assert _store_loops(y.schedule()[-1])[0] == shape[0]
    a = x.astype(np.float64)
    np.testing.assert_allclose(y.numpy(), a - a.mean((0, 2, 3)).reshape(1, 1, c, 1), rtol=1e-5,
                               atol=1e-5)
