"""Test data with the values where kernels go wrong, and the bit-for-bit comparison of results.

`sprinkled` draws normal random values and puts special ones (NaN, signed zeros, infinities: the
caller's list) at a share of the positions, seeded; `assert_same_bits` compares two arrays bit for
bit, except that any NaN equals any NaN (a NaN's payload is not part of its meaning) and -0.0 is
not 0.0; `tied` draws few distinct values (many ties) with the special ones, for running max
and min. Shared by the optimizer's tests (test_opt, test_opt_reduce_shapes, test_loop_splits,
test_mem_bound) and the running max's (test_cummax_index, test_running_max_grad).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SPECIAL = (np.nan, -0.0, 0.0, np.inf, -np.inf)


def sprinkled(shape: tuple[int, ...], dt: type, seed: int = 0, values: Sequence[float] = SPECIAL,
              share: int = 8, least: int = 0) -> np.ndarray:
    """Normal random values of `shape` and `dt`, one in `share` of them (at least `least`)
    replaced by a draw from `values`."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dt)
    flat = x.reshape(-1)
    at = rng.choice(flat.size, size=max(least, flat.size // share), replace=False)
    flat[at] = rng.choice(np.array(values, dtype=dt), size=at.size)
    return x


def tied(shape: tuple[int, ...], dt: str, seed: int) -> np.ndarray:
    """Few distinct values (many ties); for floats also NaN, ±0 and ±inf."""
    rng = np.random.default_rng(seed)
    lo = 0 if dt == "uint8" else -4
    a = rng.integers(lo, 4, shape).astype(dt)
    if dt.startswith("float"):
        u = rng.random(shape)
        a[u < 0.05] = np.nan
        a[(u >= 0.05) & (u < 0.25)] = -0.0
        a[(u >= 0.25) & (u < 0.28)] = np.inf
        a[(u >= 0.28) & (u < 0.31)] = -np.inf
    return a


def assert_same_bits(a: np.ndarray, b: np.ndarray) -> None:
    """a and b hold the same values bit for bit: NaN where the other has NaN, -0.0 apart."""
    assert a.shape == b.shape and a.dtype == b.dtype
    nan = np.isnan(a)
    assert np.array_equal(nan, np.isnan(b)), "NaN positions differ"
    assert np.array_equal(np.where(nan, 0, a).view(np.uint8), np.where(nan, 0, b).view(np.uint8))
