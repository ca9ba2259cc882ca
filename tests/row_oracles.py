"""numpy references of the row-wise normalizations, over the last axis, and rows of special
values to feed them: the oracle and inputs of the tests of row forms
(tests/test_norm_rows.py, test_short_rows_59.py, test_rows_63.py, test_rows_64.py), and the
check of a row program against them."""

import numpy as np

from rulegrad import Tensor


def softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def log_softmax(a: np.ndarray) -> np.ndarray:
    s = a - a.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def logsumexp(a: np.ndarray) -> np.ndarray:
    m = a.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # torch's: a row whose max is +-inf is not shifted
    return (np.log(np.exp(a - m).sum(-1, keepdims=True)) + m)[..., 0]


def special_rows(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """Normal values, and where there are rows enough: row 0 half -inf, row 1 with a NaN, row 2
    with a +inf, row 3 all -inf (a row masked whole), row 4 with a -inf, the last row all +inf
    and the one before it two +infs."""
    x = np.random.default_rng(seed).standard_normal(shape).reshape(-1, shape[-1]) * 3
    n = shape[-1]
    x[0, n // 2:] = -np.inf
    if x.shape[0] >= 7:
        x[1, n // 3] = np.nan
        x[2, n - 1] = np.inf
        x[3, :] = -np.inf
        x[4, 0] = -np.inf
        x[-1, :] = np.inf
        x[-2, :2] = np.inf
    return x.reshape(shape).astype(dtype)


# float16: the graph rounds each op's value to float16 (x - max, exp, the sum, the log)
ROW_TOL = {"float32": (2e-5, 2e-6), "float16": (4e-3, 2e-2)}

ROW_PROGRAMS = {  # name: (the program on a Tensor, its numpy reference)
    "log_softmax": (lambda t: t.log_softmax(-1), log_softmax),
    "logsumexp": (lambda t: t.logsumexp(-1), logsumexp),
    "softmax": (lambda t: t.softmax(-1), softmax),
}


def want_rows(name: str, x: np.ndarray) -> np.ndarray:
    """The reference of ROW_PROGRAMS[name] on x, computed in float64."""
    with np.errstate(all="ignore"):
        return ROW_PROGRAMS[name][1](x.astype(np.float64))


def check_rows(name: str, shape: tuple[int, ...], dtype: str) -> None:
    """ROW_PROGRAMS[name] on `special_rows` of shape and dtype equals its reference within
    ROW_TOL, with the input's dtype and the reference's shape."""
    x = special_rows(shape, dtype, seed=sum(shape))
    got = ROW_PROGRAMS[name][0](Tensor(x)).numpy()
    want = want_rows(name, x)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    rtol, atol = ROW_TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol,
                               err_msg=f"{name} {shape} {dtype}")
