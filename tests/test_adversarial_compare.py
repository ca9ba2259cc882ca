"""Comparisons of an integer tensor with a Python int its dtype cannot hold, against numpy 2:
numpy compares them exactly (`uint8 < 256` is all true, `int8 > 200` all false), where
arithmetic with such an int raises OverflowError. rulegrad took the comparison's dtype from
numpy's addition and raised OverflowError for every one of them."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from rulegrad import Tensor

OPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_compare_with_an_int_outside_the_dtype(monkeypatch, backend, dt):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    info = np.iinfo(dt)
    a = np.array([info.min, info.min + 1, 0, info.max - 1, info.max], dt)
    outside = [v for v in (info.min - 1, info.max + 1, -1000, 1000, 2**40, -(2**40))
               if not info.min <= v <= info.max and -(2**63) <= v < 2**63]
    for v in outside:
        for op in OPS:
            np.testing.assert_array_equal(op(Tensor(a), v).numpy(), op(a, v), err_msg=f"{op} {v}")
            np.testing.assert_array_equal(op(v, Tensor(a)).numpy(), op(v, a), err_msg=f"{v} {op}")
    # inside the range nothing changes: the dtype's own comparison
    np.testing.assert_array_equal((Tensor(a) < int(info.max)).numpy(), a < info.max)
