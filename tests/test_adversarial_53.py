"""adv53's hunt (issue 31): wrong answers and refusals of ordinary programs at the edges of
ops, on programs the project had not seen. numpy is the oracle for values and dtypes, torch for
gradients.

clip of an integer tensor with a Python int bound outside its dtype (`uint8.clip(-5, 5)`,
`int8.clip(-1000, 1000)`) raised OverflowError; numpy 2 drops such a bound (it clips nothing)
and raises only where the bound would clip everything (`uint8.clip(300, 400)`).
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


def _same(got: np.ndarray, want: np.ndarray, rtol: float = 0.0) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)  # NaN where NaN, inf where inf


INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dt", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_int_clip_with_python_int_bounds_outside_the_dtype_is_numpys(dt):
    info = np.iinfo(dt)
    x = np.array([info.min, info.min + 1, 0, 1, 5, 100, info.max - 1, info.max], dt)
    x = np.stack([x, x[::-1]])
    wide = [info.min - 1, -(2**70), info.max + 1, 2**70, 2**64]
    bounds = [(lo, hi) for lo in [None, -5, 0, 3, *wide] for hi in [None, 5, 100, *wide]]
    for lo, hi in bounds:
        if lo is None and hi is None:
            continue
        try:
            want = np.clip(x, lo, hi)
        except OverflowError:  # a bound that would clip every value: numpy refuses it too
            with pytest.raises(OverflowError):
                Tensor(x).clip(lo, hi).numpy()
            continue
        _same(Tensor(x).clip(lo, hi).numpy(), want)
