"""A scan too long for one window (past RULEGRAD_MAX_WORK) runs in blocks, reduce then scan
(runtime/tensor_ops.py's `_scan_blocks`): each block's total, the scan of the totals, then each
block scanned from the blocks before it, one running accumulator per block (rules/
scan_helpers.py's `_scan_blocks`, which splits the output's merged loop back into blocks).

Against numpy: ints, bools, MAX and MIN bit for bit; a float sum or product within the
reduction contract (runtime/semantics.py): out[i] within i * eps * sum |x[:i + 1]| of the exact
sum (numpy's float64 sum stands for it), NaN and infinities where numpy has them."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions as _actions

from rulegrad import Tensor
from rulegrad.runtime.tensor_ops import SCAN_BLOCK

# past this many elements a row's pooled window (2 n^2) is refused and the row is blocked; a
# block's windows (n / SCAN_BLOCK of 2 SCAN_BLOCK^2) still fit up to 32K elements a row
SMALL_WORK = 1 << 24

# (shape, axis) in blocks under SMALL_WORK: one block and a tail, prime, whole blocks, batch 1,
# three rows, each axis
SHAPES = [((4097,), 0), ((7919,), 0), ((32 * SCAN_BLOCK,), 0), ((1, 4097), 1), ((3, 7919), 1),
          ((7919, 3), 0), ((2, 4097, 3), 1)]


def _sample(op: str, dt: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.startswith("int"):
        return rng.integers(-3, 4, shape).astype(dt)
    if op == "cumprod":  # (products that neither vanish nor blow up over thousands of steps)
        return (1 + rng.standard_normal(shape) / 100).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _within_contract(got: np.ndarray, x: np.ndarray, op: str, axis: int) -> None:
    """got within the reduction contract of the exact scan (float64's), element by element."""
    want = getattr(np, op)(x.astype(np.float64), axis)
    steps = np.cumsum(np.ones(x.shape), axis)
    eps = np.finfo(x.dtype).eps
    if op == "cumsum":
        bound = steps * eps * np.cumsum(np.abs(x.astype(np.float64)), axis)
    else:  # (a product's rounding errors are relative; a subnormal's spacing is absolute)
        bound = steps * (eps * np.abs(want) * 1.01 + np.finfo(x.dtype).smallest_subnormal)
    assert got.dtype == x.dtype and got.shape == x.shape
    assert (np.isnan(got) == np.isnan(want)).all()
    finite = np.isfinite(want)
    assert (got[~finite & ~np.isnan(want)] == want[~finite & ~np.isnan(want)]).all()
    err = np.abs(got[finite] - want[finite])
    assert (err <= bound[finite]).all(), (err / bound[finite]).max()


@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "bool"])
def test_a_blocked_scan_is_numpys(monkeypatch, shape, axis, op, dt):
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(SMALL_WORK))
    x = _sample(op, dt, shape, len(shape) + shape[axis])
    got = getattr(Tensor(x), op)(axis).numpy()
    if dt.startswith("float"):
        _within_contract(got, x, op, axis)
    else:
        want = getattr(np, op)(x, axis)
        assert got.dtype == want.dtype and (got == want).all()


@pytest.mark.parametrize("dt", ["float32", "int32"])
def test_a_blocked_running_max_and_min_are_exact(monkeypatch, dt):
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(SMALL_WORK))
    x = _sample("cumsum", dt, (3, 7919), 5)
    if dt == "float32":
        x[1, 5000] = np.nan  # (a NaN from its place on: numpy's maximum.accumulate)
        x[2, ::7] = -0.0
    for op, ref in (("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate)):
        vals, idx = getattr(Tensor(x), op)(1)
        want = ref(x, axis=1)
        got = vals.numpy()
        assert ((got == want) | (np.isnan(got) & np.isnan(want))).all()
        picked = np.take_along_axis(x, idx.numpy().astype(np.int64), 1)
        assert ((picked == want) | (np.isnan(picked) & np.isnan(want))).all()


def test_nan_and_infinities_stay_where_numpy_has_them(monkeypatch):
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(SMALL_WORK))
    x = _sample("cumsum", "float32", (7919,), 3)
    x[300], x[5000], x[6001] = np.inf, -np.inf, np.nan  # inf from 300, NaN from 5000 on
    _within_contract(Tensor(x).cumsum().numpy(), x, "cumsum", 0)
    y = _sample("cumprod", "float64", (7919,), 4)
    y[4000] = 0.0
    y[7000] = np.inf  # 0 * inf: NaN from 7000 on
    _within_contract(Tensor(y).cumprod().numpy(), y, "cumprod", 0)


def test_two_million_elements_read_twice_in_three_kernels():
    x = np.random.default_rng(7).standard_normal(2_000_000).astype(np.float32)
    t = Tensor(x).cumsum()
    totals, middle, blocks = _actions(t)
    # the blocks' totals: a vector sum, no scan (its windows would be the n * 256 of a scan)
    assert not any(a.startswith("SCAN") for a in totals)
    assert any(a.startswith("VECTOR ADD") for a in totals), totals
    assert any(a.startswith("SCAN ADD") for a in middle), middle
    # the output's one loop, split back into blocks: one running accumulator along each
    # block of SCAN_BLOCK (2M steps, not 2M * 256), the blocks a loop for threads
    assert any(a.startswith(f"SCAN ADD along r2 ({SCAN_BLOCK} values") for a in blocks), blocks
    _within_contract(t.numpy(), x, "cumsum", 0)


def test_long_rows_of_a_tall_matrix():
    # 1000 rows of 24,000: each row's window, 1000 * 2 * 24000^2, is past the default limit
    x = np.random.default_rng(8).standard_normal((1000, 24_000)).astype(np.float32)
    _within_contract(Tensor(x).cumsum(1).numpy(), x, "cumsum", 1)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax"])
@pytest.mark.parametrize("shape,axis", [((4097,), 0), ((3, 4097), 1), ((4097, 3), 0)])
def test_gradients_through_the_blocks_are_torchs(monkeypatch, op, shape, axis):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(SMALL_WORK))
    x = _sample("cumprod" if op == "cumprod" else "cumsum", "float64", shape, 9)
    if op == "cummax":
        x[..., ::5] = 0.5  # (ties: torch gives the gradient to the last maximum)
    g = np.random.default_rng(10).standard_normal(shape)
    ours = Tensor(x, requires_grad=True)
    out = getattr(ours, op)(axis)
    ((out[0] if op == "cummax" else out) * Tensor(g)).sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    out = getattr(torch, op)(theirs, axis)
    ((out[0] if op == "cummax" else out) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-9)
