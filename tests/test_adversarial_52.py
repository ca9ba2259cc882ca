"""adv52's hunt (issue 31): wrong answers and crashes at the edges of ops, found in programs
the project had not seen. numpy is the oracle for values and dtypes, torch for gradients.

acosh below 1 is NaN; its formula log(x + sqrt(x^2 - 1)) gave inf for a float32 x whose
square overflows (x = -3e38) and -inf where x + sqrt(x^2 - 1) rounds to 0 (float64 -1e20).
Comparisons of an integer tensor with a Python int outside its type (`uint64 == -1`,
`int8 < 2**70`) raised a bare OverflowError; numpy 2 compares them by value.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

from rulegrad import Tensor


def _same(got: np.ndarray, want: np.ndarray, rtol: float) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)  # NaN where NaN, inf where inf


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_acosh_below_one_is_nan_at_every_magnitude(dt):
    x = np.array([-3e38, -1e20, -1e300, -1e10, -7, -1, 0, -0.0, 0.5, 0.999, 1, 1.0000001, 2,
                  1e5, 1e20, 3e38, np.inf, -np.inf, np.nan], np.float64)
    with np.errstate(all="ignore"):
        x = x.astype(dt)
        want = np.arccosh(x)
    _same(Tensor(x).acosh().numpy(), want, rtol=4 * float(np.finfo(dt).eps))


CMPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.int64, np.uint64],
                         ids=lambda d: np.dtype(d).name)
def test_integer_compared_with_a_python_int_outside_its_type_is_numpys(dt):
    info = np.iinfo(dt)
    x = np.array([info.min, info.min + 1, 0, 1, 7, info.max - 1, info.max], dt)
    for other in (info.max + 1, info.min - 1, -1, 2**70, -(2**70), 2**64, info.max, info.min):
        for cmp in CMPS:
            for got, want in ((cmp(Tensor(x), other), cmp(x, other)),
                              (cmp(other, Tensor(x)), cmp(other, x))):
                got = got.numpy()
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want, err_msg=f"{cmp.__name__} {other}")
    # a 2-d tensor keeps its shape, and a where over the all-true mask reads the tensor
    y = x.reshape(7, 1).repeat(3, 1)
    np.testing.assert_array_equal((Tensor(y) < 2**70).where(Tensor(y), 0).numpy(), y)
