"""cummax / cummin's index in one scan: a running max of the int64 key rank(x) * 2^32 + position
(runtime/tensor_ops.py's `_running_key`), where it was the running max's scan and a second
scan matching each element with it. Values (with the sign of a zero) and indices against torch
over lengths, axes of 2-D and 3-D, dtypes and the keys' edges (the extreme ints, the largest and
subnormal floats, infinities, NaN of either sign, ±0); values against numpy's running max; the
index's kernels counted, never timed."""

from __future__ import annotations

import numpy as np
import pytest
from special_values import tied

from rulegrad import Tensor

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "int32", "int16", "int8", "uint8"]


def _same(ours: np.ndarray, theirs: np.ndarray) -> bool:
    num = ~np.isnan(theirs)
    return ours.dtype == theirs.dtype and np.array_equal(np.isnan(ours), ~num) and \
        np.array_equal(ours[num], theirs[num]) and \
        np.array_equal(np.signbit(ours[num]), np.signbit(theirs[num]))


def _check(a: np.ndarray, axis: int) -> None:
    for name, acc in (("cummax", np.maximum), ("cummin", np.minimum)):
        v, i = getattr(Tensor(a), name)(axis)
        tv, ti = getattr(torch, name)(torch.from_numpy(a), axis)
        assert _same(v.numpy(), tv.numpy()), (name, a.dtype, a.shape, axis)
        assert np.array_equal(i.numpy(), ti.numpy().astype(np.int32)), (name, a.dtype, a.shape)
        # numpy's running max propagates NaN too (its zeros' signs are its own)
        np.testing.assert_array_equal(v.numpy(), acc.accumulate(a, axis=axis))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
def test_values_and_indices_along_each_axis_match_torch(n, dt):
    for shape, axis in (((n, 3), 0), ((3, n), -1), ((n, 2, 3), 0), ((2, 3, n), -1),
                        ((2, n, 3), 1)):
        _check(tied(shape, dt, n + len(shape)), axis)


@pytest.mark.parametrize("dt", ["float32", "int32"])
def test_two_million_elements_match_torch(dt):
    _check(tied((2 ** 21,), dt, 5), 0)


def test_the_keys_edges_match_torch():
    i32 = np.iinfo(np.int32)
    f32 = np.finfo(np.float32)
    neg_nan = -np.float32("nan")
    cases = [
        np.array([i32.min, i32.max, i32.min, i32.max, 0, i32.min], np.int32),
        np.array([i32.max, i32.min, i32.max], np.int32),
        np.array([f32.max, -f32.max, np.inf, f32.max, -np.inf, f32.smallest_subnormal,
                  -f32.smallest_subnormal, -0.0, 0.0], np.float32),
        np.array([-np.inf, -f32.max, -f32.smallest_subnormal, -0.0], np.float32),
        np.array([1.0, neg_nan, 2.0, np.nan, np.inf, neg_nan, -np.inf], np.float32),
        np.array([neg_nan, -np.inf, -0.0], np.float32),
        np.array([np.float16(65504), -np.float16(65504), np.float16(6e-8), -0.0], np.float16),
    ]
    for a in cases:
        _check(a, 0)
        _check(a[::-1].copy(), 0)


@pytest.mark.parametrize("dt", ["float32", "float16", "int32", "int8"])
@pytest.mark.parametrize("n", [7, 1000, 65536])
def test_the_index_is_one_scan(n, dt):
    # (the running max's scan, then a scan matching each element with it, was two kernels)
    for shape, axis in (((n, 3), 0), ((3, n), -1)):
        for name in ("cummax", "cummin"):
            _, idx = getattr(Tensor(tied(shape, dt, n)), name)(axis)
            assert len(idx.schedule()) == 1, (name, shape)


def _reduces(*ts: Tensor) -> set:
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import toposort

    return {n for t in ts for n in toposort(t.uop) if n.op is Ops.REDUCE_AXIS}


@pytest.mark.parametrize("dt", ["int32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("n", [7, 513, 4097])
def test_an_ints_values_and_index_are_one_scan(n, dt):
    # an int is its own rank: the running max is the key's high half, so the values and the
    # index read the one scan of the key (the values had a scan of their own)
    a = tied((3, n), "int8", n) if dt != "bool" else np.random.default_rng(n).random((3, n)) < .5
    a = a.astype(dt)
    for name in ("cummax", "cummin"):
        v, i = getattr(Tensor(a), name)(1)
        assert len(_reduces(v, i)) == 1, name
        acc = np.maximum if name == "cummax" else np.minimum
        np.testing.assert_array_equal(v.numpy(), acc.accumulate(a, axis=1))
        tv, ti = getattr(torch, name)(torch.from_numpy(a), 1)
        np.testing.assert_array_equal(i.numpy(), ti.numpy().astype(np.int32))


def test_a_floats_values_build_no_scan_of_their_own(monkeypatch):
    # a float's running max is picked at the index: the running max's own scan (a pooled MAX
    # over float windows) was built and dropped, a third of the graph of a cummax of 65536;
    # counted over every node built, not only those the result reads
    from rulegrad.runtime import uop
    from rulegrad.runtime.ops import Ops

    built: list = []
    make = uop._object_new
    monkeypatch.setattr(uop, "_object_new", lambda cls: built.append(make(cls)) or built[-1])
    counts = []
    for n in (513, 4097, 65536):
        built.clear()
        a = tied((n,), "float32", n)
        v, i = Tensor(a).cummax(0)
        assert not [u for u in built if u.op is Ops.REDUCE_AXIS and u.dtype.is_float
                    and u.arg[0] is Ops.MAX]
        counts.append(len(built))
        assert _same(v.numpy(), torch.cummax(torch.from_numpy(a), 0)[0].numpy())
    # (the graph does not grow with the length: blocks of the same few steps, a node or two
    # more where a length needs another constant; how many of those an earlier test in the
    # worker already made, hash-consed, varies, so the bound is loose but far below linear)
    assert max(counts) < 2 * min(counts), counts
