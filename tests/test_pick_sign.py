"""Picks keep every bit of the picked element: gather, tensor indices, scatter, max_unpool2d,
sort, masked_select and nonzero are each a masked sum over a one-hot, which starts from -0.0
(runtime/ops.py, reduce_start), so a picked -0.0 stays -0.0 (a sum from +0.0 made it +0.0).

Values full of -0.0, +0.0, NaN and both infinities, in float16/32/64, on both schedulers and
on the C backend, the kernel interpreter and the numpy oracle; pick axes long enough that the
reduction is split in two kernels (rangeify's split_reduceop), and sharded along the pick
axis (an all-reduce of partial picks). Oracles: numpy (np.signbit for the zeros) and torch's
autograd for the gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor
from rulegrad.runtime.kernelize import using

FLOATS = ["float16", "float32", "float64"]
POOL = [-0.0, 0.0, np.nan, np.inf, -np.inf, 1.5, -2.0]


@pytest.fixture(params=["c", "interp", "oracle"])
def backend(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)
    return request.param


@pytest.fixture(params=["rangeify", "kernelize"])
def scheduler(request):
    with using(request.param):
        yield request.param


def _draw(shape: tuple[int, ...], dt: str, seed: int = 0) -> np.ndarray:
    pool = np.array(POOL, dtype=dt)
    return pool[np.random.default_rng(seed).integers(0, len(pool), shape)]


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values, NaN where NaN is, and the sign of every zero."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    np.testing.assert_array_equal(got, want)
    number = ~np.isnan(want)
    assert (np.signbit(got) == np.signbit(want))[number].all(), (got, want)


def test_the_reported_gather(backend, scheduler):
    a = np.array([[-0.0, 1.0]], np.float32)
    got = Tensor(a).gather(1, Tensor(np.array([[0]], np.int32))).numpy()
    _same_bits(got, np.array([[-0.0]], np.float32))


@pytest.mark.parametrize("dt", FLOATS)
def test_gather_and_tensor_indices(backend, scheduler, dt):
    a = _draw((5, 9), dt)
    rng = np.random.default_rng(1)
    i = rng.integers(0, 9, (5, 12)).astype(np.int32)
    _same_bits(Tensor(a).gather(1, Tensor(i)).numpy(), np.take_along_axis(a, i, 1))
    j = rng.integers(0, 5, (3, 9)).astype(np.int64)
    _same_bits(Tensor(a).gather(0, Tensor(j)).numpy(), np.take_along_axis(a, j, 0))
    rows, cols = rng.integers(-5, 5, (4,)), rng.integers(0, 9, (4,))
    _same_bits(Tensor(a)[Tensor(rows.astype(np.int32))].numpy(), a[rows])
    _same_bits(Tensor(a)[Tensor(rows.astype(np.int32)), Tensor(cols.astype(np.int32))].numpy(),
               a[rows, cols])
    _same_bits(Tensor(a)[:, Tensor(cols.astype(np.int32))].numpy(), a[:, cols])


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_scatter_masked_select_nonzero_and_sort(backend, scheduler, dt):
    a, src = _draw((4, 6), dt), _draw((4, 6), dt, seed=2)
    i = np.array([[0, 5, 2, 3, 1, 4]] * 4, np.int32)
    want = a.copy()
    np.put_along_axis(want, i[:, :3], src[:, :3], 1)
    got = Tensor(a).scatter(1, Tensor(i[:, :3]), Tensor(src[:, :3])).numpy()
    _same_bits(got, want)
    mask = np.random.default_rng(3).random((4, 6)) < 0.5
    _same_bits(Tensor(a).masked_select(Tensor(mask)).numpy(), a[mask])
    _same_bits(Tensor(a).sort(1)[0].numpy(),
               np.take_along_axis(a, np.argsort(a, 1, kind="stable"), 1))


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_max_unpool2d(backend, scheduler, dt):
    x = _draw((2, 3, 4, 4), dt, seed=4)
    x[~np.isfinite(x)] = 0.5  # max_pool of NaN: not the point here
    tx = torch.from_numpy(x)
    pooled, idx = torch.nn.functional.max_pool2d(tx, 2, return_indices=True)
    pooled = torch.where(pooled == 0, torch.tensor(-0.0, dtype=tx.dtype), pooled)  # -0.0s in
    want = torch.nn.functional.max_unpool2d(pooled, idx, 2).numpy()
    got = Tensor(pooled.numpy()).max_unpool2d(Tensor(idx.numpy()), 2).numpy()
    _same_bits(got, want)


def test_a_pick_axis_split_in_two_kernels(backend, scheduler):
    """A gather from 2**17 columns: the pick's reduction is split in two (each keeps -0.0).
    (Rows of 2**16 or fewer that share the threads stay whole: rangeify.rules' keeps_row.)"""
    a = np.full((2, 1 << 17), -0.0, np.float32)
    a[1, 100] = np.nan
    a[0, 7] = np.inf
    i = np.array([[5, 7, 65535], [100, 0, 40000]], np.int32)
    _same_bits(Tensor(a).gather(1, Tensor(i)).numpy(), np.take_along_axis(a, i, 1))
    flat = a.reshape(-1)
    _same_bits(Tensor(flat)[Tensor(np.array([3, (1 << 17) + 100], np.int32))].numpy(),
               flat[[3, (1 << 17) + 100]])


def test_a_pick_along_a_sharded_axis(backend):
    a = _draw((4, 8), "float32", seed=5)
    i = np.random.default_rng(6).integers(0, 4, (3, 8)).astype(np.int32)
    x = Tensor(a).shard(("CPU", "CPU:1"), axis=0)
    _same_bits(x.gather(0, Tensor(i).shard(("CPU", "CPU:1"))).numpy(),
               np.take_along_axis(a, i, 0))


# ---------------------------------------------------------------------- gradients (torch)
def _grads(fn_ours, fn_torch, a: np.ndarray, seed: int = 7) -> None:
    g = np.random.default_rng(seed).standard_normal(fn_torch(torch.from_numpy(a)).shape)
    t = torch.tensor(a, requires_grad=True)
    (fn_torch(t) * torch.from_numpy(g).to(t.dtype)).sum().backward()
    x = Tensor(a, requires_grad=True)
    (fn_ours(x) * Tensor(g.astype(a.dtype))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=0)


def test_gradients_of_picks_against_torch(backend, scheduler):
    a = _draw((5, 9), "float64", seed=8)  # -0.0, NaN and inf picked: the gradient still flows
    rng = np.random.default_rng(9)
    i = rng.integers(0, 9, (5, 12))
    _grads(lambda x: x.gather(1, Tensor(i.astype(np.int32))),
           lambda t: t.gather(1, torch.from_numpy(i)), a)
    rows, cols = rng.integers(0, 5, (4,)), rng.integers(0, 9, (4,))
    _grads(lambda x: x[Tensor(rows.astype(np.int32)), Tensor(cols.astype(np.int32))],
           lambda t: t[torch.from_numpy(rows), torch.from_numpy(cols)], a)
    j = np.array([[0, 5, 2], [3, 1, 4]] * 2 + [[8, 6, 7]])
    _grads(lambda s: Tensor(np.zeros((5, 9))).scatter(1, Tensor(j.astype(np.int32)), s[:, :3]),
           lambda s: torch.zeros(5, 9, dtype=s.dtype).scatter(1, torch.from_numpy(j), s[:, :3]),
           a)


def test_gradient_of_max_unpool2d_against_torch(backend, scheduler):
    x = np.random.default_rng(10).standard_normal((1, 2, 4, 4))
    _, idx = torch.nn.functional.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    p = np.random.default_rng(11).standard_normal(idx.shape)
    p[0, 0, 0, 0] = -0.0
    _grads(lambda t: t.max_unpool2d(Tensor(idx.numpy()), 2),
           lambda t: torch.nn.functional.max_unpool2d(t, idx, 2), p)
