"""Reductions of a constant: every dtype, every reduce op, against numpy.

A sum of zeros, a product of ones or of integer zeros (`(x * 0).prod()` over ints, where x * 0
folds to 0 before the kernel is built), a max of a constant: the loop form's body `acc op c`
is what the optimizer's symbolic rules fold to acc (acc + 0, acc * 1) or to c (an integer
acc * 0), a loop that no longer combines its accumulator, which the renderer refused
(`Tensor.zeros(5, dtype="int32").sum()` raised RenderError). lower.rules' reduce_const folds
the reduce to the constant first; the values and signs of zero are numpy's.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import SCHEDULERS


@pytest.fixture(params=SCHEDULERS, autouse=True)
def scheduler(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)


def _check(got: np.ndarray, want: np.ndarray) -> None:
    want = np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want.astype(got.dtype))
    assert (np.signbit(got.astype(np.float64)) == np.signbit(want.astype(np.float64))).all()


@pytest.mark.parametrize("dt", ["int32", "int8", "bool", "float32", "float16"])
@pytest.mark.parametrize("value", [0, 1, -0.0, 7])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_a_reduce_of_a_constant_is_numpys(dt, value, op):
    for shape, axis in [((5,), None), ((3, 4), 1), ((2, 3, 131), (0, 2))]:
        a = np.full(shape, value).astype(dt)
        got = getattr(Tensor.full(shape, a.flat[0].item(), dtype=dt), op)(axis=axis).numpy()
        with np.errstate(over="ignore"):
            _check(got, getattr(a, op)(axis=axis))


@pytest.mark.parametrize("dt", ["int32", "uint8", "bool", "float32"])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_a_reduce_of_values_times_zero_is_numpys(dt, op):
    a = np.arange(24).reshape(2, 3, 4).astype(dt)
    for axis in (None, 1, (0, 2)):
        got = getattr(Tensor(a) * 0, op)(axis=axis).numpy()
        _check(got, getattr(a * np.zeros((), dt), op)(axis=axis))
