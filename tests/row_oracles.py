"""numpy references of the row-wise normalizations, over the last axis: the oracle of the tests
of row forms (tests/test_short_rows_59.py, tests/test_rows_63.py)."""

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
