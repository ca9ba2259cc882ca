"""rev54a's review of this session's optimizer and indexing changes: wrong answers and crashes
found against numpy, each a test seen failing on the code before its fix."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


# narrow_reduce on narrow dtypes: a share's partials (L lanes, 64 at most) are themselves "few
# columns" where two vectors hold 64 or more of the dtype's lanes (int8/uint8/int16 at 32-byte
# vectors, float16 max/min at 64); with one share of one row per run the rule rewrote the
# partials' reduce into the same reduce again until the rewrite budget ran out
@pytest.mark.parametrize("shape, axes", [((4099, 13, 8), (0, 1)), ((3, 4099, 13, 16), (1, 2)),
                                         ((2, 30011, 64), (1,)), ((1, 65521, 3), (0, 1))])
@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16])
@pytest.mark.parametrize("op", ["max", "min"])
def test_a_narrow_reduce_of_a_narrow_dtype_settles_and_equals_numpy(shape, axes, dt, op):
    x = np.random.default_rng(sum(shape)).integers(0, 250, size=shape).astype(dt)
    got = getattr(Tensor(x), op)(axis=axes).numpy()
    want = getattr(x, op)(axis=axes)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["max", "min"])
def test_a_float16_narrow_reduce_on_512_bit_vectors_settles_and_equals_numpy(monkeypatch, op):
    # 64 float16 lanes are two 512-bit vectors': the same partials-of-partials as int8 at 256
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x = np.random.default_rng(5).standard_normal((4099, 13, 8)).astype(np.float16)
    x[7, 3, 2], x[100, 0, 5] = np.nan, -0.0
    got = getattr(Tensor(x), op)(axis=(0, 1)).numpy()
    np.testing.assert_array_equal(got, getattr(x, op)(axis=(0, 1)))
