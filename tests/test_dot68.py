"""Tiled dots (dot68): `x @ w.T` as the block library's register-tiled dot (pack_helpers'
`Pack.dots`, `_tiled_cost`; blocks.py's `_dot`): several rows of x by several rows of w.T in
vector accumulators along k. Values against numpy (float64 reference) over odd sizes, NaN, inf,
-0.0, offset and strided operands; a row's bits do not depend on how many rows the product
has."""

from __future__ import annotations

import numpy as np
import pytest
from narrow_products import narrow_inputs
from optimizer_actions import optimized_kernels

from rulegrad import Tensor


def _line(t: Tensor) -> str:
    return " | ".join(a for _, acts in optimized_kernels(t) for a in acts)


def _close(got: np.ndarray, x: np.ndarray, w: np.ndarray) -> None:
    """Within a float sum's rounding over k terms of |x| |w| (float64 reference)."""
    want = x.astype(np.float64) @ w.T.astype(np.float64)
    eps = 4e-7 if x.dtype == np.float32 else 1e-15
    bound = eps * x.shape[-1] * (np.abs(x).astype(np.float64) @ np.abs(w).T.astype(np.float64))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    assert np.all(np.abs(got[finite] - want[finite]) <= bound[finite] + 1e-30)


# rows 2-8 and 13, k under a vector, at one, one past, prime, long; n under a vector, a
# panel, past it, wide
CASES = [(2, 16, 1000), (3, 17, 33), (4, 255, 13), (5, 1024, 16), (7, 4099, 5),
         (8, 3, 4096), (13, 1024, 33), (7, 50000, 16), (4, 4096, 1024), (5, 4099, 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", CASES)
def test_transposed_products_against_numpy(m: int, k: int, n: int, dtype) -> None:
    """Whichever loops the costs choose (tiled dots, plain dots or packed), numpy's values."""
    x, w = narrow_inputs(m, k, n, dtype, transposed=True)
    _close((Tensor(x) @ Tensor(w).T).numpy(), x, w)


@pytest.mark.parametrize("m, k, n", [(7, 50000, 16), (4, 4096, 1024), (5, 1024, 16),
                                     (13, 1024, 33), (3, 4099, 37)])
def test_few_rows_of_x_at_w_t_are_tiled_dots(m: int, k: int, n: int) -> None:
    """The issue's products are tiled dots (the block library's), with numpy's values."""
    x, w = narrow_inputs(m, k, n, np.float32, transposed=True)
    t = Tensor(x) @ Tensor(w).T
    assert "TILED DOTS" in _line(t), _line(t)
    _close(t.numpy(), x, w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_inf_and_negative_zero(dtype) -> None:
    """NaN and inf in x and w (in the vector part of k and its tail), -0.0 products: numpy's."""
    x, w = narrow_inputs(5, 1027, 21, dtype, transposed=True)
    x[0, 5] = np.nan
    x[1, 1025] = np.inf  # (the tail of k, past the last whole vector)
    w[3, 9] = -np.inf
    w[20, 1026] = np.nan
    x[4] = -0.0
    t = Tensor(x) @ Tensor(w).T
    assert "TILED DOTS" in _line(t), _line(t)
    got = t.numpy()
    _close(got, x, w)
    assert np.all(np.delete(got[4], [3, 20]) == 0.0)  # (-0.0 * inf is NaN: columns 3, 20)


def test_offset_and_strided_operands() -> None:
    """x and w.T read at an offset in a larger buffer (rows a row of the buffer apart), and a
    w read every other element along k (not one run: not a tiled dot's read, packed or plain)."""
    rng = np.random.default_rng(68)
    big_x = rng.standard_normal((9, 1100)).astype(np.float32)
    big_w = rng.standard_normal((40, 2300)).astype(np.float32)
    x, w = big_x[1:8, 7:1030], big_w[3:36, 11:1034]
    t = Tensor(big_x)[1:8, 7:1030] @ Tensor(big_w)[3:36, 11:1034].T
    assert "TILED DOTS" in _line(t), _line(t)
    _close(t.numpy(), x, w)
    ws = big_w[3:36, 11:2057:2]
    _close((Tensor(big_x)[1:8, 7:1030] @ Tensor(big_w)[3:36, 11:2057:2].T).numpy(), x, ws)


@pytest.mark.parametrize("k", [255, 1024, 4099])
def test_a_rows_bits_do_not_depend_on_the_row_count(k: int) -> None:
    """Each output's steps are its own (lanes of k in k order, the lanes summed in one tree,
    then the tail): the rows of a product of 4, 5, 7 and 13 rows are the same bits as the same
    rows of a product of 8."""
    x, w = narrow_inputs(13, k, 33, np.float32, transposed=True)
    outs = {m: (Tensor(x[:m]) @ Tensor(w).T) for m in (4, 5, 7, 8, 13)}
    for m, t in outs.items():
        assert "TILED DOTS" in _line(t), (m, _line(t))
    got = {m: t.numpy() for m, t in outs.items()}
    for m in (4, 5, 7):
        np.testing.assert_array_equal(got[m], got[8][:m])
    np.testing.assert_array_equal(got[13][:8], got[8])
