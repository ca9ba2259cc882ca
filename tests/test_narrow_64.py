"""Tall-K narrow-N products (`x @ w`, a long reduce, fewer columns than a vector: issue 32). The
interchange action keeps each column's accumulator in a register, its columns unrolled, rows one
at a time (rules/interchange_helpers.py's `_narrow`). Checked: the values against numpy in
float64 (NaN and inf in x where they must spread), the C kernel and the kernel interpreter
running the same AST, and the action's record (DEBUG=2's line) where it must fire and not where
it must not, on one thread and two; never timed."""

from __future__ import annotations

import numpy as np
import pytest
from narrow_products import EPS, narrow_inputs
from optimizer_actions import kernel_actions, optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.kernel_interp import run_kernel
from rulegrad.rules.interchange_helpers import NARROW_FLOAT_COLUMNS


def _product(x: np.ndarray, w: np.ndarray, transposed: bool = False) -> Tensor:
    return Tensor(x) @ (Tensor(w).T if transposed else Tensor(w))


def _close(got: np.ndarray, x: np.ndarray, w: np.ndarray, transposed: bool = False) -> None:
    """Within the sum's rounding over k terms of each output's |x| |w| (float64 reference)."""
    ww = (w.T if transposed else w).astype(np.float64)
    want = x.astype(np.float64) @ ww
    scale = np.abs(x).astype(np.float64) @ np.abs(ww)
    k = x.shape[-1]
    tol = EPS[x.dtype.type] * k * scale + (1e-2 if x.dtype == np.float16 else 1e-6)
    # float16 outputs are rounded once more at the end
    tol = tol + (np.abs(want) * 1e-3 if x.dtype == np.float16 else 0)
    assert got.shape == want.shape
    assert np.all(np.abs(got.astype(np.float64) - want) <= tol), np.abs(got - want).max()


def _narrow_inputs(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Operands the action unrolls: float32 over 5 columns (`NARROW_FLOAT_COLUMNS`: over other
    float widths gcc's `omp simd` keeps the accumulators in vector registers, faster), int32
    over any narrow width (tests/test_review_64e.py)."""
    if n in NARROW_FLOAT_COLUMNS:
        return narrow_inputs(m, k, n, np.float32)
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    return rng.integers(-9, 10, (m, k)).astype(np.int32), rng.integers(-9, 10, (k, n)).astype(
        np.int32)


def _check(got: np.ndarray, x: np.ndarray, w: np.ndarray) -> None:
    """An integer product exactly (int32, no overflow at these sizes), a float one by `_close`."""
    if x.dtype.kind == "i":
        np.testing.assert_array_equal(got, x.astype(np.int64) @ w.astype(np.int64))
    else:
        _close(got, x, w)


def _narrowed(acts: list[str]) -> bool:
    return "columns unrolled into registers" in " ".join(acts)


@pytest.fixture()
def machine(fake_machine):
    """`set(nthreads)`: fake the threads (the region's cost as the machine's default)."""
    return lambda nthreads: fake_machine(nthreads, 1 << 20)


# (m, k, n): batch 1, 2, 3, 5, 8; k tiny, prime, tall; n 1 to 17 around a vector of 8
SHAPES = [(2, 100003, 5), (1, 65537, 3), (3, 1009, 7), (5, 4099, 5), (8, 2053, 2), (2, 3, 5),
          (7, 50000, 1), (4, 997, 6), (1, 1009, 8), (3, 1009, 13), (2, 4099, 16), (2, 1009, 17)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_narrow_products_against_numpy(machine, m: int, k: int, n: int, dtype) -> None:
    machine(2)
    x, w = narrow_inputs(m, k, n, dtype)
    _close(_product(x, w).numpy(), x, w)


@pytest.mark.parametrize("m, k, n", [(2, 100003, 5), (3, 1009, 7), (1, 4099, 3), (5, 997, 2)])
def test_transposed_and_batched_against_numpy(machine, m: int, k: int, n: int) -> None:
    machine(2)
    x, w = narrow_inputs(m, k, n, np.float32, transposed=True)
    _close(_product(x, w, transposed=True).numpy(), x, w, transposed=True)
    xb, wb = narrow_inputs(m, k, n, np.float32, batch=3)
    _close((Tensor(xb) @ Tensor(wb)).numpy(), xb, wb)


@pytest.mark.parametrize("m, n", [(2, 5), (3, 7), (6, 3), (1, 4)])
def test_nan_and_inf_in_x_reach_their_rows_only(machine, m: int, n: int) -> None:
    """A NaN in row 0 of x makes row 0's outputs NaN, an inf row 1's +-inf (w has no zero):
    each row keeps its own accumulators (no value of another row leaks in)."""
    machine(1)
    x, w = narrow_inputs(m, 1009, n, np.float32)
    w = np.where(w == 0, 1, w).astype(np.float32)
    x[0, 17] = np.nan
    if m > 1:
        x[1, 500] = np.inf
    got = _product(x, w).numpy()
    want = x.astype(np.float64) @ w.astype(np.float64)
    assert np.isnan(got[0]).all()
    if m > 1:
        assert np.array_equal(np.isinf(got[1]), np.isinf(want[1]))
        assert np.array_equal(np.sign(got[1]), np.sign(want[1]))
    rest = slice(2, None)
    _close(got[rest], x[rest], w)


@pytest.mark.parametrize("m, k, n", [(2, 1009, 5), (5, 997, 5), (1, 4099, 3), (3, 2053, 2)])
def test_the_kernel_interpreter_runs_the_narrow_nest(machine, m: int, k: int, n: int) -> None:
    """The action is the AST (its columns an "unroll" range): the kernel interpreter runs
    the optimized kernel to numpy's values, as the C does."""
    machine(2)
    x, w = _narrow_inputs(m, k, n)
    t = _product(x, w)
    (item,) = t.schedule()
    [(opt, acts)] = optimized_kernels(_product(x, w))
    assert _narrowed(acts), acts
    bufs = [np.zeros(b.size, b.dtype.np) for b in item.bufs]
    for i, b in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b.ensure().reshape(-1)
    run_kernel(opt, bufs)
    _check(bufs[0].reshape(m, n), x, w)


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("m, k, n", [(2, 100003, 5), (3, 4099, 7), (6, 4099, 5), (1, 65537, 3),
                                     (4, 997, 4), (7, 4099, 2), (2, 3, 5)])
def test_columns_unrolled_rows_one_at_a_time(machine, nthreads: int, m: int, k: int,
                                              n: int) -> None:
    """Each column's accumulator a register, the rows one at a time (no tile of rows: gcc packs
    a tile's scalar accumulators into vectors lane by lane, slower than the rows alone)."""
    machine(nthreads)
    x, w = _narrow_inputs(m, k, n)
    t = _product(x, w)
    acts = " ".join(kernel_actions(t)[-1])
    assert f"its {n} columns unrolled into registers" in acts and "TILE" not in acts, acts
    _check(t.numpy(), x, w)


@pytest.mark.parametrize("make", [
    lambda: Tensor(np.ones((17, 3), np.float32)).sum(0),  # a column sum: no product
    lambda: Tensor(np.ones((1, 4099), np.float32)) @ Tensor(np.ones((4099, 8), np.float32)),
    lambda: Tensor(np.ones((1, 65537), np.float32)) @ Tensor(np.ones((65537, 9), np.float32)),
])
def test_not_where_the_row_is_a_vector_or_no_product(machine, make) -> None:
    """Interchanged, but a vector's worth of columns or more (gcc's `omp simd` fills its
    vectors), or a sum of no product: the columns stay "upcast"."""
    machine(2)
    acts = [a for kernel in kernel_actions(make()) for a in kernel]
    assert any("INTERCHANGE" in a for a in acts) and not _narrowed(acts), acts
