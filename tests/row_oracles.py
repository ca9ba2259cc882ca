"""numpy references of the row-wise normalizations, over the last axis, and rows of special
values to feed them: the oracle and inputs of the tests of row forms
(tests/test_norm_rows.py, test_short_rows_59.py, test_rows_63.py)."""

import numpy as np


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
