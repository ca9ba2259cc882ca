"""sort, argsort, topk, argmax and argmin in torch's order, over NaN, -0.0, inf and ties.

NaN is the largest value (last ascending, first descending and in topk), -0.0 sorts equal to
0.0 and keeps its sign, ties keep their order (a stable sort), and the indices are always a
permutation. Oracles: numpy's stable argsort, and torch (sort with stable=True, topk) where
torch has the dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor

FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
TORCH_HAS = {*FLOATS, "int8", "int16", "int32", "int64", "uint8", "bool"}
SHAPES = [((9,), 0), ((4, 6), 0), ((4, 6), 1), ((2, 3, 5), 1), ((3, 1), 1), ((0, 4), 1),
          ((3, 0), 1)]


def _draw(dt: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Values full of the hard cases: NaN, both zeros, both infinities, and many ties."""
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in FLOATS:
        pool = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -1.0, 2.5, -2.5, 1e-3],
                        dtype=dt)
        return pool[rng.integers(0, len(pool), shape)]
    info = np.iinfo(dt)
    pool = np.array([info.min, info.max, 0, 1, 2, 2, info.max // 2], dtype=dt)
    return pool[rng.integers(0, len(pool), shape)]


def _stable_order(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """numpy's stable order (NaN last ascending). Descending: the ascending order of the
    reversed axis, reversed, so ties keep their original order and NaN comes first."""
    if not descending:
        return np.argsort(a, axis, kind="stable")
    n = a.shape[axis]
    rev = np.argsort(np.flip(a, axis), axis, kind="stable")
    return n - 1 - np.flip(rev, axis)


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values, NaN where NaN is, and the sign of every zero kept (a NaN's sign and
    payload are not values: the IR's MAX propagates some NaN)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        number = ~np.isnan(want)
        assert (np.signbit(got) == np.signbit(want))[number].all(), (got, want)


def _is_permutation(idx: np.ndarray, axis: int) -> None:
    n = idx.shape[axis]
    assert (np.sort(idx, axis) == np.arange(n).reshape([-1 if d == axis else 1
                                                          for d in range(idx.ndim)])).all()


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dt", ["bool", *INTS, *FLOATS])
def test_sort_matches_numpy_and_torch(dt, descending):
    for seed, (shape, axis) in enumerate(SHAPES):
        a = _draw(dt, shape, seed)
        vals, idx = Tensor(a).sort(axis, descending=descending)
        got_v, got_i = vals.numpy(), idx.numpy()
        order = _stable_order(a, axis, descending)
        _same_bits(got_v, np.take_along_axis(a, order, axis))
        np.testing.assert_array_equal(got_i, order.astype(np.int32))
        _is_permutation(got_i, axis)
        np.testing.assert_array_equal(Tensor(a).argsort(axis, descending).numpy(), got_i)
        if dt in TORCH_HAS:
            tv, ti = torch.sort(torch.from_numpy(a.copy()), dim=axis, descending=descending,
                                stable=True)
            _same_bits(got_v, tv.numpy())
            np.testing.assert_array_equal(got_i, ti.numpy())


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dt", ["int32", "uint8", *FLOATS])
def test_topk_every_k_matches_torch(dt, largest):
    a = _draw(dt, (3, 7), 11)
    for axis in (0, 1):
        order = _stable_order(a, axis, largest)
        for k in range(a.shape[axis] + 1):
            vals, idx = Tensor(a).topk(k, axis, largest=largest)
            got_v, got_i = vals.numpy(), idx.numpy()
            tv, _ = torch.topk(torch.from_numpy(a.copy()), k, dim=axis, largest=largest)
            _same_bits(got_v, tv.numpy())  # torch's values (NaN first when largest)
            keep = np.take(order, np.arange(k), axis)
            np.testing.assert_array_equal(got_i, keep.astype(np.int32))  # ties: stable
            _same_bits(np.take_along_axis(a, got_i.astype(np.int64), axis), got_v)


def test_the_reported_example():
    vals, idx = Tensor([3.0, np.nan, 1.0, 2.0]).sort()
    _same_bits(vals.numpy(), np.array([1, 2, 3, np.nan], np.float32))
    np.testing.assert_array_equal(idx.numpy(), [2, 3, 0, 1])
    vals, idx = Tensor([3.0, np.nan, 1.0, 2.0]).topk(1)
    assert np.isnan(vals.numpy()[0]) and idx.numpy()[0] == 1


def test_negative_zero_keeps_its_sign_and_its_place():
    a = np.array([0.0, -0.0, 1.0, -0.0, 0.0, -1.0], np.float32)
    for descending in (False, True):
        vals, idx = Tensor(a).sort(descending=descending)
        order = _stable_order(a, 0, descending)
        _same_bits(vals.numpy(), a[order])
        np.testing.assert_array_equal(idx.numpy(), order)


@pytest.mark.parametrize("dt", FLOATS)
def test_argmax_argmin_take_the_first_nan(dt):
    for seed, (shape, axis) in enumerate(SHAPES[:5]):
        a = _draw(dt, shape, seed + 100)
        for fn in ("argmax", "argmin"):
            want = getattr(np, fn)(a, axis).astype(np.int32)
            np.testing.assert_array_equal(getattr(Tensor(a), fn)(axis).numpy(), want)
            np.testing.assert_array_equal(getattr(Tensor(a), fn)().numpy(),
                                          getattr(np, fn)(a))
            tw = getattr(torch, fn)(torch.from_numpy(a.astype(np.float64)), dim=axis)
            np.testing.assert_array_equal(getattr(Tensor(a), fn)(axis).numpy(), tw.numpy())


def test_sort_gradient_flows_to_the_picked_elements():
    """The gradient of sorted values is the upstream gradient put back at each element's
    place, zeros included: -0.0 passes it on unchanged (torch's)."""
    a = np.array([[0.5, -0.0, 2.0, 0.0, -1.0], [3.0, 1.0, -0.0, -0.0, 2.0]], np.float32)
    w = np.arange(10, dtype=np.float32).reshape(2, 5) + 1
    x = Tensor(a, requires_grad=True)
    (x.sort(1, descending=True)[0] * Tensor(w)).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    (torch.sort(xt, dim=1, descending=True, stable=True)[0] * torch.from_numpy(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", FLOATS)
def test_cat_and_stack_keep_negative_zero(dt):
    """cat adds zero-padded parts: the padding must not turn a -0.0 into 0.0."""
    a, b = _draw(dt, (3, 4), 21), _draw(dt, (3, 2), 22)
    for axis, parts in ((1, (a, b)), (0, (a, a[:1])), (1, (b, a, b))):
        _same_bits(Tensor.cat(*map(Tensor, parts), dim=axis).numpy(),
                   np.concatenate(parts, axis))
    _same_bits(Tensor.stack(Tensor(a), Tensor(a), dim=2).numpy(), np.stack([a, a], 2))


@pytest.mark.parametrize("dt", FLOATS)
def test_selections_by_mask_keep_negative_zero_and_nan(dt):
    """masked_select and scatter pick elements by a one-hot reduction; each must give the
    picked element bit for bit (numpy's and torch's copies do)."""
    a = _draw(dt, (5, 6), 31)
    rng = np.random.default_rng(5)
    m = (a <= 0) | np.isnan(a)
    _same_bits(Tensor(a).masked_select(Tensor(m)).numpy(), a[m])
    src = _draw(dt, (5, 6), 32)
    order = np.argsort(rng.random((5, 6)), 1)[:, :3]  # distinct targets per row
    want = torch.from_numpy(a.copy()).scatter(1, torch.from_numpy(order),
                                              torch.from_numpy(src.copy())).numpy()
    got = Tensor(a).scatter(1, Tensor(order.astype(np.int32)), Tensor(src)).numpy()
    _same_bits(got, want)
