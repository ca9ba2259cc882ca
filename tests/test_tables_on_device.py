"""Ops built on a table of positions (arange: argmax's positions, a one-hot's classes, a
triangle's mask, sort's ranks, max_pool2d's indices, interpolate's grid) on a tensor that is
not on the default device, or is sharded: the table is placed where the tensor is
(tensor_ops.placed_like), where it used to stay on the default device and the op was refused
with DeviceMismatch. Oracle: numpy on the host data (the same op on the default device is
checked against numpy elsewhere; here, numpy's own answer where it has one)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

A = (np.arange(32, dtype=np.float32).reshape(4, 8) * 7 % 13) / 4 - 1.0
PLACES = {
    "CPU:1": lambda t: t.to("CPU:1"),
    "rows": lambda t: t.shard(("CPU", "CPU:1"), axis=0),
    "replicas": lambda t: t.shard(("CPU", "CPU:1")),
}


def _like(x: Tensor, arr: np.ndarray) -> Tensor:
    """An index tensor placed as x is (a replica for a sharded x)."""
    dev = x.device
    return Tensor(arr).shard(dev) if isinstance(dev, tuple) else Tensor(arr).to(dev)


I2 = np.array([[1, 7], [0, 0], [3, 2], [6, 5]], np.int32)
CASES = {
    "argmax": (lambda x: x.argmax(1), np.argmax(A, 1)),
    "argmin": (lambda x: x.argmin(0), np.argmin(A, 0)),
    "sort": (lambda x: x.sort(1)[0], np.sort(A, 1)),
    "argsort": (lambda x: x.argsort(1), np.argsort(A, 1, kind="stable")),
    "topk": (lambda x: x.topk(3, 1)[0], -np.sort(-A, 1)[:, :3]),
    "gather": (lambda x: x.gather(1, _like(x, I2)), np.take_along_axis(A, I2, 1)),
    "index": (lambda x: x[_like(x, np.array([3, 0], np.int32))], A[[3, 0]]),
    "tril": (lambda x: x.tril(), np.tril(A)),
    "triu": (lambda x: x.triu(1), np.triu(A, 1)),
    "one_hot": (lambda x: x.argmax(1).one_hot(8), np.eye(8, dtype=np.int32)[np.argmax(A, 1)]),
    "cummax": (lambda x: x.cummax(1)[0], np.maximum.accumulate(A, 1)),
    "scatter": (lambda x: x.scatter(1, _like(x, I2[:, :1]), _like(x, -A[:, :1])),
                np.where(np.arange(8) == I2[:, :1], -A[:, :1], A)),
}


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("case", list(CASES))
def test_tables_follow_the_tensor(monkeypatch, backend, place, case):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    fn, want = CASES[case]
    got = fn(PLACES[place](Tensor(A))).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("place", list(PLACES))
def test_pool_indices_and_interpolate(place):
    b = np.stack([A, -A])[:, None]  # (2, 1, 4, 8): two images, one per device when sharded
    vals, idx = PLACES[place](Tensor(b)).max_pool2d(2, return_indices=True)
    want = b.reshape(2, 1, 2, 2, 4, 2).max((3, 5))
    np.testing.assert_array_equal(vals.numpy(), want)
    got = idx.numpy()
    for n in range(2):  # each index points at its window's max in its image's plane
        np.testing.assert_array_equal(b[n, 0].reshape(-1)[got[n, 0]], want[n, 0])
    near = PLACES[place](Tensor(b)).interpolate((4, 4), mode="nearest").numpy()
    np.testing.assert_array_equal(near, b[..., ::2])
