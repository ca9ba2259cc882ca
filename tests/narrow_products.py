"""The narrow products' inputs and their per-dtype rounding, shared by test_narrow_64 and _65."""

from __future__ import annotations

import numpy as np

# a float sum's rounding per term, per dtype (float16 inputs are summed in float32: the cast)
EPS = {np.float16: 2e-3, np.float32: 4e-7, np.float64: 1e-15}


def narrow_inputs(m: int, k: int, n: int, dtype, transposed: bool = False, batch: int = 0):
    """x (m x k, or batch x m x k) and w (k x n, or n x k transposed), standard normal."""
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    xs = (batch, m, k) if batch else (m, k)
    ws = (n, k) if transposed else (k, n)
    return rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
