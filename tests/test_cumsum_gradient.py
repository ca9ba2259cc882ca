"""cumsum's gradient: the reverse running sum of the incoming gradient, in linear work.

The running sum's windows (runtime/running_sum.py) carry their own backward through the pool's
movement ops, a sum over every repeat: n^2 work per row (1,011 iterations per element at 1,009
elements). rules/gradient.rules' grad_scan_sum gives the input the reverse running sum instead,
which opt.rules' scan action runs from the end of its loop (scan_helpers' `_scan_from_end`).
Values against torch's autograd over lengths, axes, dtypes and batch shapes; the work counted
from the optimized kernels (tests/call_counts.py), never timed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from call_counts import loop_trips

from rulegrad import Tensor

LENGTHS = [1, 2, 7, 97, 1009, 65536]


def _weights(shape: tuple[int, ...], dt) -> np.ndarray:
    """Small whole numbers: every partial sum is exact in float32 (below 2^24)."""
    return (np.arange(int(np.prod(shape))).reshape(shape) % 7 + 1).astype(dt)


def _grads(a: np.ndarray, axis: int, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = Tensor(a, requires_grad=True)
    (x.cumsum(axis) * Tensor(w)).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    (torch.cumsum(tx, axis) * torch.from_numpy(w)).sum().backward()
    return x.grad.numpy(), tx.grad.numpy()


def _shaped(n: int, where: str) -> tuple[tuple[int, ...], int]:
    """A shape of an axis of n first, in the middle or last (batch 1, or a few rows: tall)."""
    return {"first": ((n, 3), 0), "middle": ((2, n, 1), 1), "last": ((1, n), 1),
            "alone": ((n,), 0)}[where]


@pytest.mark.parametrize("where", ["alone", "first", "middle", "last"])
@pytest.mark.parametrize("n", LENGTHS)
def test_gradient_is_torchs_reverse_running_sum(n, where):
    shape, axis = _shaped(n, where)
    a = np.random.default_rng(n).standard_normal(shape).astype(np.float32)
    ours, theirs = _grads(a, axis, _weights(shape, np.float32))
    np.testing.assert_array_equal(ours, theirs)  # (whole numbers: exact either way)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("n", [2, 97, 1009])
def test_gradient_of_random_weights_matches_torch(n, dt):
    rng = np.random.default_rng(n + 1)
    a = rng.standard_normal((3, n)).astype(dt)
    w = rng.standard_normal((3, n)).astype(dt)
    for arr, ww, axis in ((a, w, 1), (np.ascontiguousarray(a.T), np.ascontiguousarray(w.T), 0)):
        ours, theirs = _grads(arr, axis, ww)
        np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dt is np.float32 else 1e-12,
                                   atol=1e-4 if dt is np.float32 else 1e-10)


def test_two_million_elements_blocked_gradient_matches_torch():
    n = 2_000_000  # past the work limit for one window: scanned in blocks, both ways
    a = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    ours, theirs = _grads(a, 0, _weights((n,), np.float32))
    np.testing.assert_array_equal(ours, theirs)


def test_int32_values_match_torch():
    a = np.random.default_rng(4).integers(-9, 9, (5, 97)).astype(np.int32)
    for axis in (0, 1):
        got = Tensor(a).cumsum(axis).numpy()
        want = torch.cumsum(torch.from_numpy(a), axis).numpy()
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_second_derivative_through_the_reverse_running_sum():
    # d/dx sum(cumsum(x)^2) = revcumsum(2 cumsum(x)), linear in x: its gradient against
    # a weight vector v is revcumsum-of-cumsum applied to v, taken through the rule twice
    a = np.random.default_rng(5).standard_normal(9)
    v = np.random.default_rng(6).standard_normal(9)
    x = Tensor(a, requires_grad=True)
    (g,) = (x.cumsum(0) ** 2).sum().gradient(x)
    (h,) = (g * Tensor(v)).sum().gradient(x)
    tx = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad((torch.cumsum(tx, 0) ** 2).sum(), tx, create_graph=True)
    (th,) = torch.autograd.grad((tg * torch.from_numpy(v)).sum(), tx)
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-12)


@pytest.mark.parametrize("where", ["alone", "first", "last"])
def test_gradient_work_is_linear_in_the_length(where):
    per = []
    for n in (1000, 16000):
        shape, axis = _shaped(n, where)
        x = Tensor(np.random.default_rng(n).standard_normal(shape).astype(np.float32),
                   requires_grad=True)
        (x.cumsum(axis) * Tensor(_weights(shape, np.float32))).sum().backward()
        per.append(loop_trips(x.grad) / x.grad.numel())
    # the pool's own backward: about n per element (1,001 and 16,001); the running sum's: a
    # few, the same at both lengths
    assert per[1] < 1.5 * per[0] and per[1] < 8, per


@pytest.mark.parametrize("env", [("RULEGRAD_BACKEND", "interp"),
                                 ("RULEGRAD_SCHEDULER", "kernelize")], ids=lambda e: e[1])
def test_the_interpreter_and_kernelize_give_torchs_gradient(monkeypatch, env):
    monkeypatch.setenv(*env)
    for shape, axis in (((7,), 0), ((3, 97), 1), ((600, 2), 0)):
        a = np.random.default_rng(shape[0]).standard_normal(shape)
        w = np.random.default_rng(shape[0] + 1).standard_normal(shape)
        ours, theirs = _grads(a, axis, w)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shard_axis,axis", [(0, 1), (1, 0), (0, 0)])
def test_gradient_of_a_sharded_cumsum_matches_torch(shard_axis, axis):
    # along a sharded axis the scan runs gathered on one device; across it, on each part
    devs = ("CPU", "CPU:1")
    a = np.random.default_rng(0).standard_normal((4, 6))
    w = np.random.default_rng(1).standard_normal((4, 6))
    x = Tensor(a, requires_grad=True)
    (x.shard(devs, axis=shard_axis).cumsum(axis) * Tensor(w).shard(devs, axis=shard_axis)) \
        .sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    (torch.cumsum(tx, axis) * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
