"""narrow67: a product whose long k the scheduler split into partials summed in the same kernel
(a nest of two sums that together read one run of k) is planned as one flat sum
(rules/pack_helpers.py's `_unnested_runs`): packed where packing costs less (`_dot_cost` over
several k ranges read as one run, `_one_run`), else `x @ w` in plain loops over the one run,
while `x @ w.T`'s dots keep the nest (flat they ran 0.56-0.75x its speed).
Nested, `x @ w` of 7x50000x16 ran as plain loops over the 7x16 outputs at 0.09x torch eager.

Checked: the action's record and numpy's values (a float64 reference), NaN and -0.0 inputs;
never timed. The tests' machine is conftest's (256-bit vectors, two threads) with a 512 KB
L2."""

from __future__ import annotations

import numpy as np
import pytest
from narrow_products import narrow_inputs
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort


@pytest.fixture(autouse=True)
def half_mb_l2(monkeypatch):
    """A 512 KB L2 (this repository's bench machine; conftest's is 1 MB): the scheduler then
    splits these long rows into partials in the reader's kernel (`local_max_row`); programs are
    built afresh (the program table keys them by their kernels, not by these facts)."""
    from rulegrad.backends.c import run
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "512K")
    run._programs.clear()
    yield
    run._programs.clear()


def _line(t: Tensor) -> str:
    return " | ".join(a for _, acts in optimized_kernels(t) for a in acts)


def _nested(t: Tensor) -> bool:
    """Whether some kernel of t's schedule sums a sum: a k split into partials in one kernel
    (the case under test; the scheduler's choice, so checked, not assumed)."""
    return any(n.op is Ops.REDUCE and any(s.op is Ops.REDUCE for s in toposort(n.src[0]))
               for item in t.schedule() for n in toposort(item.ast))


def _product(x: np.ndarray, w: np.ndarray, transposed: bool) -> Tensor:
    return Tensor(x) @ (Tensor(w).T if transposed else Tensor(w))


# a float sum's rounding per term (float16's products are summed in float32)
EPS = {np.float16: 4e-7, np.float32: 4e-7}


def _close(got: np.ndarray, x: np.ndarray, w: np.ndarray, transposed: bool) -> None:
    """Within the sum's rounding over k terms of each output's |x| |w| (float64 reference), and
    a float16 result's one rounding at the end; NaN exactly where numpy's is."""
    ww = (w.T if transposed else w).astype(np.float64)
    want = x.astype(np.float64) @ ww
    scale = np.abs(x).astype(np.float64) @ np.abs(ww)
    tol = EPS[x.dtype.type] * x.shape[-1] * scale + 1e-12
    if x.dtype == np.float16:
        tol = tol + np.abs(want) * 2.0 ** -11 + 2.0 ** -24
    assert got.shape == want.shape and got.dtype == x.dtype
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = np.isnan(want) | (np.abs(got.astype(np.float64) - want) <= tol)
    assert np.all(ok), np.nanmax(np.abs(got - want))


# (m, k, n, dtype): k long and composite (the scheduler splits it: 250 x 200, 256 x 256, ...),
# prime and odd row and column counts, float16
SPLIT_K = [(7, 50000, 16, np.float32), (7, 65536, 16, np.float32), (4, 50000, 16, np.float32),
           (3, 40000, 24, np.float32), (13, 36864, 17, np.float32), (2, 100000, 9, np.float32),
           (8, 50000, 13, np.float16)]


@pytest.mark.parametrize("m, k, n, dt", SPLIT_K)
def test_a_split_k_of_x_at_w_is_packed_flat(m: int, k: int, n: int, dt) -> None:
    """x @ w with k split into partials in one kernel: packed over the flat k (nested, it was
    left to plain loops over the outputs, 0.09x torch eager at 7x50000x16), numpy's values."""
    x, w = narrow_inputs(m, k, n, dt)
    t = _product(x, w, False)
    assert _nested(t)
    assert "PACK" in _line(t), _line(t)
    _close(t.numpy(), x, w, False)


@pytest.mark.parametrize("m, k, n, dt", [(7, 50000, 16, np.float32), (5, 65536, 13, np.float32),
                                         (8, 40000, 24, np.float32), (6, 50000, 16, np.float16)])
def test_a_split_k_of_x_at_w_t_keeps_its_nest_or_packs(m: int, k: int, n: int,
                                               dt) -> None:
    """x @ w.T with k split so: packed over the flat k where that costs less, else its nested
    loops (as flat dots they ran 0.56-0.75x their speed); numpy's values."""
    x, w = narrow_inputs(m, k, n, dt, transposed=True)
    t = _product(x, w, True)
    assert _nested(t)
    line = _line(t)
    assert "UNNEST" not in line, line  # (its dots keep the nest: flat they ran slower)
    _close(t.numpy(), x, w, True)


@pytest.mark.parametrize("transposed", [False, True])
def test_nan_and_negative_zero_through_a_split_k(transposed: bool) -> None:
    """A NaN in one row of x (and one in a column of w) makes exactly numpy's outputs NaN; a row
    of x all -0.0 gives numpy's zeros, sign and all."""
    m, k, n = 7, 50000, 16
    x, w = narrow_inputs(m, k, n, np.float32, transposed=transposed)
    x[2, 12345] = np.nan
    x[4] = -0.0
    if transposed:
        w[3, 49999] = np.nan
    else:
        w[49999, 3] = np.nan
    got = _product(x, w, transposed).numpy()
    _close(got, x, w, transposed)
    want = x.astype(np.float64) @ (w.T if transposed else w).astype(np.float64)
    zeros = ~np.isnan(want[4])
    assert np.all(got[4][zeros] == 0)
    assert np.array_equal(np.signbit(got[4][zeros]), np.signbit(want[4][zeros]))


def test_a_split_k_of_one_row_keeps_numpy_values() -> None:
    """Batch 1 (no rows to tile: not packed) over a split k: `x @ w` flat, numpy's values."""
    for transposed in (False, True):
        x, w = narrow_inputs(1, 50000, 16, np.float32, transposed=transposed)
        t = _product(x, w, transposed)
        assert _nested(t)
        # x @ w's one run of k in plain loops (nested: 0.12x torch eager); dots keep the nest
        assert ("UNNEST" in _line(t)) != transposed, _line(t)
        _close(t.numpy(), x, w, transposed)


@pytest.mark.parametrize("m, k, n", [(8, 30011, 13), (5, 4099, 16), (12, 1021, 33)])
def test_float16_x_at_w_t_of_several_rows_packs(m: int, k: int, n: int) -> None:
    """float16 x @ w.T of several rows: each dot would widen both rows' halves again per output
    (`HALF_WIDEN_FMAS`: 8x30011x13 ran as dots at 6x its float32 dots' time), the packed loops
    widen each element once: packed, numpy's values (NaN and -0.0 among them)."""
    x, w = narrow_inputs(m, k, n, np.float16, transposed=True)
    x, w = x * np.float16(0.5), w * np.float16(0.5)
    x[1, k // 2] = np.nan
    w[n - 1, 3] = -0.0
    t = _product(x, w, True)
    assert "PACK" in _line(t), _line(t)
    _close(t.numpy(), x, w, True)


@pytest.mark.parametrize("m, k, n", [(8, 30011, 13), (6, 4099, 16), (2, 100003, 9)])
def test_float32_x_at_w_t_choice_is_not_moved_by_the_widening(m: int, k: int, n: int) -> None:
    """The widening's cost is a float16 operand's only: float32 x @ w.T of these shapes keeps
    its dots (tests/test_dot_66's choice), numpy's values."""
    x, w = narrow_inputs(m, k, n, np.float32, transposed=True)
    t = _product(x, w, True)
    assert "PACK" not in _line(t) or "TILED DOTS" in _line(t), _line(t)  # (dots, plain or tiled)
    _close(t.numpy(), x, w, True)
