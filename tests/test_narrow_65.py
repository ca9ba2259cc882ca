"""Tall-K narrow-N products through the packing action (issues 32 and 33): a y of one panel or
less whose rows are back to back (`x @ w`, w K x N, N from a vector to a panel) is read in place
at any size (rules/pack_helpers.py's `read_in_place`), its part-full panel by the register block
whose second vector ends at the row's last column (backends/c/blocks.py's `_last`). Before, y was
copied into padded panels on every call (8x30011x13: 0.6x torch eager). Checked: values against
numpy in float64 with a per-dtype tolerance (NaN and inf in x), the block called for a part-full
panel, and the action's record where it must fire and where it must not; never timed."""

from __future__ import annotations

import numpy as np
import pytest
from narrow_products import EPS, narrow_inputs
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.kernel_interp import run_kernel


def _close(got: np.ndarray, x: np.ndarray, w: np.ndarray, transposed: bool = False) -> None:
    """Within the sum's rounding over k terms of each output's |x| |w| (float64 reference)."""
    ww = (np.swapaxes(w, -1, -2) if transposed else w).astype(np.float64)
    want = x.astype(np.float64) @ ww
    scale = np.abs(x).astype(np.float64) @ np.abs(ww)
    tol = EPS[x.dtype.type] * x.shape[-1] * scale + (1e-2 if x.dtype == np.float16 else 1e-9)
    tol = tol + (np.abs(want) * 1e-3 if x.dtype == np.float16 else 0)  # (rounded at the end)
    assert got.shape == want.shape
    assert np.all(np.abs(got.astype(np.float64) - want) <= tol), np.abs(got - want).max()


def _pack_line(t: Tensor) -> str:
    return " | ".join(a for _, acts in optimized_kernels(t) for a in acts)


@pytest.fixture()
def machine(fake_machine, monkeypatch):
    """`set(nthreads)`: fake the threads; 256-bit panels (16 float32, 8 float64 columns) on any
    target, so the part-full panels below are part-full everywhere."""
    def fake(nthreads: int) -> None:
        monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
        fake_machine(nthreads, 1 << 20)
    return fake


# (m, k, n): rows 1 to 9, k tiny, prime and tall, columns from a vector to a panel and past it
SHAPES = [(8, 30011, 13), (1, 4099, 9), (2, 100003, 8), (3, 1031, 15), (9, 997, 11),
          (5, 7, 12), (4, 2003, 16), (7, 5003, 17), (6, 3001, 23), (2, 1009, 31), (13, 2003, 14)]


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_narrow_products_against_numpy(machine, nthreads: int, m: int, k: int, n: int,
                                       dtype) -> None:
    machine(nthreads)
    x, w = narrow_inputs(m, k, n, dtype)
    _close((Tensor(x) @ Tensor(w)).numpy(), x, w)


@pytest.mark.parametrize("m, k, n", [(2, 100003, 5), (3, 1009, 6), (4, 997, 7), (2, 4099, 4)])
def test_float64_half_a_panel_against_numpy(machine, m: int, k: int, n: int) -> None:
    """float64's panel is 8 columns of 4-lane vectors: 4 to 7 columns are its part-full panel."""
    machine(2)
    x, w = narrow_inputs(m, k, n, np.float64)
    _close((Tensor(x) @ Tensor(w)).numpy(), x, w)


@pytest.mark.parametrize("m, k, n", [(8, 30011, 13), (3, 1009, 9), (2, 4099, 5)])
def test_transposed_and_batched_against_numpy(machine, m: int, k: int, n: int) -> None:
    machine(2)
    x, w = narrow_inputs(m, k, n, np.float32, transposed=True)
    _close((Tensor(x) @ Tensor(w).T).numpy(), x, w, transposed=True)
    xb, wb = narrow_inputs(m, k, n, np.float32, batch=3)
    _close((Tensor(xb) @ Tensor(wb)).numpy(), xb, wb)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, n", [(8, 13), (3, 9), (2, 15), (5, 6)])
def test_nan_and_inf_in_x_reach_their_rows_only(machine, dtype, m: int, n: int) -> None:
    """A NaN in row 0 of x makes row 0's outputs NaN, an inf row 1's +-inf (w has no zero),
    each column of the overlapping vectors alike; the other rows are numpy's."""
    machine(2)
    x, w = narrow_inputs(m, 4099, n, dtype)
    w = np.where(w == 0, 1, w).astype(dtype)
    x[0, 17] = np.nan
    x[1, 4000] = np.inf
    got = (Tensor(x) @ Tensor(w)).numpy()
    want = x.astype(np.float64) @ w.astype(np.float64)
    assert np.isnan(got[0]).all()
    assert np.array_equal(np.isinf(got[1]), np.isinf(want[1]))
    assert np.array_equal(np.sign(got[1]), np.sign(want[1]))
    _close(got[2:], x[2:], w)


@pytest.mark.parametrize("m, k, n, dtype", [(8, 30011, 13, np.float32), (4, 4099, 9, np.float32),
                                            (2, 100003, 5, np.float64), (3, 4099, 16, np.float32)])
def test_a_narrow_y_is_read_in_place_past_the_l2(machine, monkeypatch, m: int, k: int, n: int,
                                                 dtype) -> None:
    """y larger than the L2 (faked at 64 KB), one panel or less, rows back to back: read in
    place, its part-full panel by the `_last` block (called, so built), never copied."""
    from rulegrad.backends.c.render import render_kernel

    machine(2)
    monkeypatch.setenv("RULEGRAD_L2_BYTES", str(64 << 10))
    x, w = narrow_inputs(m, k, n, dtype)
    t = Tensor(x) @ Tensor(w)
    line = _pack_line(t)
    assert "PACK" in line and "IN PLACE" in line, line
    [(opt, _)] = optimized_kernels(t)
    calls = render_kernel(opt, "k").calls
    panel = 32 // np.dtype(dtype).itemsize * 2
    assert any(c.endswith("_last") for c in calls) == (n % panel != 0), calls
    assert not any(c.startswith("rg_pack_") for c in calls), calls
    _close(t.numpy(), x, w)


@pytest.mark.parametrize("m, k, n", [(8, 4099, 13), (4, 4099, 9)])
def test_a_slice_of_a_wider_y_is_packed_past_the_l2(machine, monkeypatch, m: int, k: int,
                                                    n: int) -> None:
    """y the first columns of a wider array (its rows 64 columns apart, not back to back):
    past the L2 each tile would read a few lines of every row scattered over y's whole size,
    so it is packed as before; the values are numpy's."""
    machine(2)
    monkeypatch.setenv("RULEGRAD_L2_BYTES", str(64 << 10))
    x, wide = narrow_inputs(m, k, 64, np.float32)
    t = Tensor(x) @ Tensor(wide)[:, :n]
    line = _pack_line(t)
    assert "PACK" in line and "IN PLACE" not in line, line
    _close(t.numpy(), x, wide[:, :n])


def test_the_interpreter_runs_the_in_place_kernel(machine) -> None:
    """The optimized AST of a narrow in-place product in the kernel interpreter: numpy's values
    (the action changes how the C reads y, never the AST's sums)."""
    machine(2)
    x, w = narrow_inputs(8, 3001, 13, np.float32)
    t = Tensor(x) @ Tensor(w)
    (item,) = t.schedule()
    [(opt, acts)] = optimized_kernels(t)
    assert "IN PLACE" in " ".join(acts), acts
    bufs = [np.zeros(b.size, b.dtype.np) for b in item.bufs]
    for i, b in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b.ensure().reshape(-1)
    run_kernel(opt, bufs)
    _close(bufs[0].reshape(8, 13), x, w)


@pytest.mark.parametrize("m, k, n", [(2, 100003, 13), (4, 30011, 13), (2, 4099, 9), (3, 3001, 24),
                                     (3, 1009, 16), (2, 2048, 512)])
def test_few_rows_of_a_transposed_product_keep_their_dots(machine, m: int, k: int,
                                                          n: int) -> None:
    """x @ w.T with few rows: each output a dot of two rows read forward along k,
    cheaper than w.T copied element by element into panels (pack_helpers' `_dot_cost`): not
    packed, numpy's values."""
    machine(2)
    x, w = narrow_inputs(m, k, n, np.float32, transposed=True)
    t = Tensor(x) @ Tensor(w).T
    line = _pack_line(t)
    assert "PACK" not in line or "TILED DOTS" in line, line  # (dots, plain or tiled)
    _close(t.numpy(), x, w, transposed=True)


@pytest.mark.parametrize("m, k, n, transposed", [(64, 4099, 13, True), (48, 1031, 96, True),
                                                 (6, 4096, 1024, True), (8, 30011, 13, False)])
def test_many_rows_or_w_itself_are_still_packed(machine, m: int, k: int, n: int,
                                                transposed: bool) -> None:
    """Many rows share each packed panel, or a w.T past the caches would be read again by each
    row's dots (pack_helpers' `_far_reads`: 6x4096x1024 ran 0.57x as dots), and `x @ w` reads
    no row of w along k: packed, numpy's values."""
    machine(2)
    x, w = narrow_inputs(m, k, n, np.float32, transposed=transposed)
    t = Tensor(x) @ (Tensor(w).T if transposed else Tensor(w))
    assert "PACK" in _pack_line(t), _pack_line(t)
    _close(t.numpy(), x, w, transposed=transposed)


@pytest.mark.parametrize("m, k, n, dtype", [(9, 3001, 50, np.float32), (8, 2003, 28, np.float64),
                                            (7, 1009, 63, np.float32)])
def test_the_last_block_in_512_bit_registers(fake_machine, monkeypatch, m: int, k: int, n: int,
                                             dtype) -> None:
    """Panels of 2 512-bit registers (32 float32, 16 float64 columns), 2 row tiles: the
    part-full last one (18, 12 or 31 columns) read in place by the `_last` block of 16- or
    8-lane vectors, numpy's values (the machine's AVX-512 or, without it, gcc's generic
    vectors)."""
    fake_machine(2, 1 << 20)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x, w = narrow_inputs(m, k, n, dtype)
    t = Tensor(x) @ Tensor(w)
    assert "IN PLACE" in _pack_line(t), _pack_line(t)
    _close(t.numpy(), x, w)
