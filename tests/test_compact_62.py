"""masked_select, nonzero and x[mask] (runtime/tensor_ops.py `_compact`) against numpy and torch.

Each output found its source as a one-hot sum over all n elements: n * size work ((2, 40000)
float16 took 18 CPU-s). Now a binary search over the running count, one gather (a load) per
step: the work per element grows with log n, which the last test counts (loop trips of the
scheduled kernels, never seconds). Values are held bit for bit (-0.0 and NaN kept), in every
dtype, with `size` and fill_value, empty and all-true/all-false masks, broadcast masks, both
schedulers and the numpy reference interpreter; gradients against torch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from call_counts import loop_trips

from rulegrad import Tensor

SHAPES = [(0,), (1,), (7,), (2, 5), (3, 1, 4), (13, 17), (1, 31), (31, 1)]
DTYPES = [np.float32, np.float16, np.float64, np.int8, np.int32, np.bool_]


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint8) if a.dtype != np.bool_ else a


def _same(got: np.ndarray, exp: np.ndarray) -> bool:
    """Same dtype, shape and bytes (so -0.0 and NaN payloads count)."""
    return got.dtype == exp.dtype and got.shape == exp.shape and \
        np.array_equal(_bits(np.ascontiguousarray(got)), _bits(np.ascontiguousarray(exp)))


def _data(shape, dt, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 3).astype(dt)
    return a, rng.random(shape) < 0.4


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_masked_select_nonzero_and_mask_index_match_numpy(shape, dt):
    a, m = _data(shape, dt, len(shape) * 7 + sum(shape))
    assert _same(Tensor(a).masked_select(Tensor(m)).numpy(), a[m])
    assert _same(Tensor(a)[Tensor(m)].numpy(), a[m])
    got = Tensor(a).nonzero().numpy()
    assert got.shape == (np.count_nonzero(a), len(shape)) and np.array_equal(got, np.argwhere(a))


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("size", [0, 1, 3, 40])
@pytest.mark.parametrize("shape", [(1,), (7,), (13, 17)], ids=str)
def test_size_keeps_the_order_and_fills_past_the_count(shape, size, dt):
    a, m = _data(shape, dt, size)
    exp = np.full(size, 5, dtype=dt)
    head = a[m][:size]
    exp[:len(head)] = head
    assert _same(Tensor(a).masked_select(Tensor(m), size=size, fill_value=5).numpy(), exp)
    coords = np.full((size, len(shape)), -1, dtype=np.int32)
    idx = np.argwhere(a)[:size]
    coords[:len(idx)] = idx
    assert np.array_equal(Tensor(a).nonzero(size=size, fill_value=-1).numpy(), coords)


@pytest.mark.parametrize("size", [None, 0, 2, 9])
def test_empty_inputs_give_the_fill(size):
    a = np.zeros((0, 3), np.float32)
    got = Tensor(a).masked_select(Tensor(a > 0), size=size, fill_value=-2).numpy()
    assert _same(got, np.full(size or 0, -2, np.float32))


@pytest.mark.parametrize("n", [1, 2, 5, 64, 1000])  # 1000: many search steps
def test_all_true_all_false_and_signed_zeros_and_nan(n):
    special = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -1.5], np.float32)
    a = np.resize(special, n)
    for m in (np.ones(n, bool), np.zeros(n, bool), np.arange(n) % 3 != 1):
        assert _same(Tensor(a).masked_select(Tensor(m)).numpy(), a[m])
        full = Tensor(a).masked_select(Tensor(m), size=n + 2, fill_value=-0.0).numpy()
        exp = np.concatenate([a[m], np.full(n + 2 - m.sum(), -0.0, np.float32)])
        assert _same(full, exp)


def test_broadcast_masks():
    a, _ = _data((4, 6, 5), np.float32, 3)
    rng = np.random.default_rng(4)
    for mshape in [(5,), (6, 1), (1, 6, 5), (4, 1, 1)]:
        m = rng.random(mshape) < 0.5
        exp = np.broadcast_to(a, np.broadcast_shapes(a.shape, m.shape))[
            np.broadcast_to(m, np.broadcast_shapes(a.shape, m.shape))]
        assert _same(Tensor(a).masked_select(Tensor(m)).numpy(), exp)
    small = a[0, 0]  # (5,) broadcast against a (3, 5) mask
    m = rng.random((3, 5)) < 0.5
    assert _same(Tensor(small).masked_select(Tensor(m)).numpy(),
                 np.broadcast_to(small, (3, 5))[m])


@pytest.mark.parametrize("size", [None, 7])
def test_gradient_goes_to_each_source_as_torch(size):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    m = rng.random((5,)) < 0.5
    count = 3 * int(m.sum()) if size is None else size
    w = np.arange(1, count + 1, dtype=np.float32)
    x = Tensor(a, requires_grad=True)
    (x.masked_select(Tensor(m), size=size) * Tensor(w)).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    picked = tx.masked_select(torch.tensor(m))[:count]
    (picked * torch.from_numpy(w[:len(picked)])).sum().backward()
    assert np.array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_schedulers_and_backends(monkeypatch, backend, scheduler):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    for dt in (np.float16, np.int8, np.bool_):
        a, m = _data((3, 37), dt, 5)
        assert _same(Tensor(a).masked_select(Tensor(m)).numpy(), a[m])
        got = Tensor(a).masked_select(Tensor(m), size=60, fill_value=1).numpy()
        exp = np.concatenate([a[m], np.ones(60 - m.sum(), dt)])
        assert _same(got, exp)
        assert np.array_equal(Tensor(a).nonzero().numpy(), np.argwhere(a))


def test_work_per_element_grows_with_log_n_not_n():
    # the one-hot form summed n elements per output: ~n / 2 loop trips per element at size n / 2
    # (500 at 1,000, 8,000 at 16,000); a search of log2(n) gathers per output, a few
    per = []
    for n in (1000, 16000):
        m = np.random.default_rng(n).random((2, n // 2)) < 0.5
        a = np.arange(n, dtype=np.float32).reshape(2, n // 2)
        per.append(loop_trips(Tensor(a).masked_select(Tensor(m), size=n // 2)) / n)
    assert per[1] < 1.5 * per[0] and per[1] < 40, per
