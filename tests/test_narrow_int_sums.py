"""A sum of int8, uint8, int16 or bool values down a long axis to few columns (issue 32 b):
numpy accumulates it in int64 (uint64 for uint8), and so do we; narrow_reduce keeps the
partials in int32 where every column's sum fits one (rangeify.rules' `int_sum`), cast to int64
once. Values against numpy over dtypes, axes and shapes, at the bound where a column's sum
would no longer fit an int32; the partials' dtype read from the schedule, never a time."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor, dtypes

_DTYPES = ["int8", "uint8", "int16", "bool"]
_CASES = [((16, 127, 127, 3), (1, 2)), ((100003, 13), (0,)), ((100003, 13), (1,)),
          ((2, 3, 5), (1,)), ((2, 3, 5), (0, 1, 2)), ((1, 1), (0,)), ((65537, 7), (0,)),
          ((3, 40009, 11), (1,)), ((999983, 2), (0,))]


def _sample(dt: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.random(shape) < 0.5
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)


@pytest.mark.parametrize("shape, axes", _CASES)
@pytest.mark.parametrize("dt", _DTYPES)
@pytest.mark.parametrize("threads", ["1", "2"])
def test_narrow_int_sums_equal_numpy(monkeypatch, dt, shape, axes, threads):
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    x = _sample(dt, shape, len(shape) + len(axes))
    for keepdim in (False, True):
        got = Tensor(x).sum(axis=axes, keepdim=keepdim).numpy()
        want = x.sum(axis=axes, keepdims=keepdim)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("rows", [(1 << 23) - 1, 8421507])
def test_column_sums_at_the_int32_bound_stay_exact(monkeypatch, rows):
    # uint8 255s: 2**23 - 1 rows sum to 2139094785 (an int32 holds it: int32 partials), 8421507
    # rows to 2147484285, past 2**31 - 1 (int64 partials); int8 -128s alongside
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = np.full((rows, 2), 255, np.uint8)
    np.testing.assert_array_equal(Tensor(x).sum(0).numpy(), x.sum(0))
    y = np.full((rows, 3), -128, np.int8)
    y[-1] = 127
    np.testing.assert_array_equal(Tensor(y).sum(0).numpy(), y.sum(0))


def _partials_dtypes(x: np.ndarray, axes: tuple[int, ...]) -> set:
    """The dtypes of the buffers the sum's kernels write other than its output: the partials."""
    t = Tensor(x).sum(axis=axes)
    items = t.schedule()
    return {item.bufs[0].dtype for item in items[:-1]}


@pytest.mark.parametrize("dt", _DTYPES)
@pytest.mark.parametrize("shape, axes", [((100003, 13), (0,)), ((16, 127, 127, 3), (1, 2)),
                                         ((999983, 2), (0,))])
def test_small_int_partials_are_int32(monkeypatch, dt, shape, axes):
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = _sample(dt, shape, 1)
    # int16: 100003 or 999983 rows of 32768 would not fit an int32 (int64 partials); 16129 do
    fits = dt != "int16" or shape[0] == 16
    assert _partials_dtypes(x, axes) == {dtypes.int32 if fits else dtypes.int64}, (dt, shape)
