"""Review of dot68's tiled dots (rev68e): the cases its tests did not reach, each against numpy
in float64 (an independent oracle): epilogues on a tiled dot whose roles are swapped (w.T's rows
as the tile's rows, x's rows as the columns: `PACK rows r1 x columns r0`), threads splitting the
panels of a few-row product, x's rows strided by 2 at an offset, and NaN/inf in the tail of k of
a float64 product. The conftest pins 32-byte vectors and 2 threads."""

from __future__ import annotations

import math

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor


def _line(t: Tensor) -> str:
    return " | ".join(a for _, acts in optimized_kernels(t) for a in acts)


def _inputs(m: int, k: int, n: int, dtype, seed: int):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype),
            rng.standard_normal(n).astype(dtype), rng.standard_normal((m, n)).astype(dtype))


def _close(got: np.ndarray, want: np.ndarray, x: np.ndarray, w: np.ndarray) -> None:
    """Within a sum's rounding over k terms of |x| |w| (NaN and inf where numpy has them)."""
    eps = 4e-7 if x.dtype == np.float32 else 1e-15
    bound = eps * x.shape[-1] * (np.nan_to_num(np.abs(x), posinf=0).astype(np.float64) @
                                     np.nan_to_num(np.abs(w), posinf=0).T.astype(np.float64))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~finite], want[~finite])
    assert np.all(np.abs(got[finite] - want[finite]) <= bound[finite] + 1e-12)


def _gelu(v: np.ndarray) -> np.ndarray:  # (Tensor.gelu's default: the tanh form)
    return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))


# (m, k, n, dtype): products the costs take as tiled dots with w.T's rows as the tile's rows
SWAPPED = [(4, 4096, 1024, np.float64), (13, 1024, 33, np.float32), (5, 1027, 21, np.float64)]


@pytest.mark.parametrize("m, k, n, dtype", SWAPPED)
def test_epilogues_of_a_tiled_dot_with_its_roles_swapped(m: int, k: int, n: int, dtype) -> None:
    """A bias per column, relu, a residual and gelu on a tiled dot whose tile's rows are w.T's
    (the output's columns): each epilogue reads its operand at the output's own index."""
    x, w, b, res = _inputs(m, k, n, dtype, m * k + n)
    base = x.astype(np.float64) @ w.T.astype(np.float64)
    X, W = Tensor(x), Tensor(w)
    t = (X @ W.T + Tensor(b)).relu() + Tensor(res)
    line = _line(t)
    assert "TILED DOTS" in line and "rows r1 x columns r0" in line, line
    want = np.maximum(base + b, 0) + res
    _close(t.numpy(), want, x, w)
    g = (X @ W.T + Tensor(b)).gelu()
    assert "TILED DOTS" in _line(g), _line(g)
    got = g.numpy()
    # (gelu's slope is at most 1.13: the sum's bound, widened by it)
    assert np.all(np.abs(got - _gelu(base + b)) <= 1.2 * (4e-7 if dtype == np.float32 else
                                                               1e-15) * k *
                  (np.abs(x).astype(np.float64) @ np.abs(w).T.astype(np.float64)) + 1e-12)


@pytest.mark.parametrize("m, k, n", [(2, 4096, 1024), (3, 2048, 1031), (6, 2053, 517)])
def test_panels_split_across_threads(m: int, k: int, n: int) -> None:
    """Few rows, many columns: the threads claim panels (each its columns from pv * TJ on, the
    last part-full), with a bias per column."""
    x, w, b, _ = _inputs(m, k, n, np.float32, m + k + n)
    t = Tensor(x) @ Tensor(w).T + Tensor(b)
    line = _line(t)
    assert "TILED DOTS" in line and "PARALLEL panels" in line, line
    _close(t.numpy(), x.astype(np.float64) @ w.T.astype(np.float64) + b, x, w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_of_x_two_apart_at_an_offset(dtype) -> None:
    """x's rows every other row of a larger buffer, from an offset column (its row pointers:
    the buffer's row stride times 2), times w.T sliced along k."""
    rng = np.random.default_rng(680)
    bx = rng.standard_normal((17, 1100)).astype(dtype)
    bw = rng.standard_normal((40, 1100)).astype(dtype)
    x, w = bx[3::2, 5:1036], bw[2:39, 5:1036]
    t = Tensor(bx)[3::2, 5:1036] @ Tensor(bw)[2:39, 5:1036].T
    assert "TILED DOTS" in _line(t), _line(t)
    _close(t.numpy(), x.astype(np.float64) @ w.T.astype(np.float64), x, w)


@pytest.mark.parametrize("m, k, n", [(5, 1031, 21), (3, 4099, 37), (11, 2053, 3)])
def test_nan_inf_in_the_tail_of_k_float64(m: int, k: int, n: int) -> None:
    """NaN, inf and -inf in the last steps of k (past the last whole vector: the scalar tail),
    a row of -0.0: numpy's NaNs, infs and values."""
    x, w, _, _ = _inputs(m, k, n, np.float64, k)
    x[0, k - 1] = np.nan
    x[m - 1, k - 2] = np.inf
    w[n - 1, k - 1] = -np.inf
    x[m // 2] = -0.0
    t = Tensor(x) @ Tensor(w).T
    assert "TILED DOTS" in _line(t), _line(t)
    with np.errstate(invalid="ignore"):
        want = x @ w.T
    _close(t.numpy(), want, x, w)
