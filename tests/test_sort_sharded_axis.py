"""sort, argsort, topk and the scans (cumsum, cumprod, cummax, cummin, logcumsumexp) along the
axis a tensor is sharded on, against torch. Each used to be refused with a message naming an
internal op ("CMPLT of tensors sharded along different axes", "PAD ... of a tensor ... sharded
along axis 1"): the axis is now gathered on one device for the op, and the result sharded back
(a replica on each device for topk, whose k need not split evenly)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor
from rulegrad.runtime.multi import layouts

DEVS = ("CPU", "CPU:1")
VALUES = np.array([3.0, np.nan, 1.0, -0.0, 0.0, 2.0, -np.inf, 1.0], np.float32)


def _bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        assert (np.signbit(got) == np.signbit(want)).all()


@pytest.fixture(params=["c", "interp"])
def backend(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("seed", range(2))
def test_sort_argsort_topk_along_the_sharded_axis(backend, monkeypatch, scheduler, axis, seed):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    rng = np.random.default_rng(seed)
    a = VALUES[rng.integers(0, len(VALUES), (4, 6))]
    t = torch.from_numpy(a)
    x = Tensor(a).shard(DEVS, axis=axis)
    for descending in (False, True):
        v, i = x.sort(axis, descending)
        tv, ti = torch.sort(t, dim=axis, descending=descending, stable=True)
        assert layouts([v.uop])[0] == (axis, DEVS)  # sharded back as it was
        _bits(v.numpy(), tv.numpy())
        _bits(i.numpy(), ti.numpy().astype(np.int32))
        _bits(x.argsort(axis, descending).numpy(), ti.numpy().astype(np.int32))
    for k in (1, 3):
        v, i = x.topk(k, axis)
        tv, ti = torch.sort(t, dim=axis, descending=True, stable=True)
        keep = (slice(None),) * axis + (slice(0, k),)
        assert layouts([v.uop])[0] == (None, DEVS)
        _bits(v.numpy(), tv[keep].numpy())
        _bits(i.numpy(), ti[keep].numpy().astype(np.int32))


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("axis", [0, 1])
def test_scans_along_the_sharded_axis(backend, monkeypatch, scheduler, axis):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    rng = np.random.default_rng(axis)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    a[1, 2] = a[1, 3] = a[2, 2]  # ties for cummax's indices
    t = torch.from_numpy(a)
    x = Tensor(a).shard(DEVS, axis=axis)
    cases = [(x.cumsum(axis), torch.cumsum(t, axis)), (x.cumprod(axis), torch.cumprod(t, axis)),
             (x.logcumsumexp(axis), torch.logcumsumexp(t, axis))]
    for mine, theirs in (x.cummax(axis), torch.cummax(t, axis)), \
            (x.cummin(axis), torch.cummin(t, axis)):
        cases.append((mine[0], theirs[0]))
        _bits(mine[1].numpy(), theirs[1].numpy().astype(np.int32))
    for mine, theirs in cases:
        assert layouts([mine.uop])[0] == (axis, DEVS)
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=2e-6, atol=1e-6)
    xi = Tensor(np.arange(24, dtype=np.int32).reshape(4, 6) % 5).shard(DEVS, axis=axis)
    ti = torch.from_numpy(np.arange(24, dtype=np.int32).reshape(4, 6) % 5)
    _bits(xi.cummin(axis)[1].numpy(), torch.cummin(ti, axis)[1].numpy().astype(np.int32))
    _bits(xi.cumsum(axis).numpy(), torch.cumsum(ti, axis).numpy())  # int64, as torch
