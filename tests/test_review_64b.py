"""rev64b's review of rows64 (the row-block action over the flattened leading loops of 3-D and
4-D rows, rules/row_block_helpers.py).

A blocked softmax keeps one kernel-local row of exps a row of the block (a "rows" range before
the row's own loop); the renderer printed that fill loop as one `omp simd` loop of the row's
count, so gcc ran its last count % 4 float64 exps through the scalar `exp`, whose bits are not
libmvec's vector exp's: a float64 softmax over rows of 33, 37 or 65 differed from the row form
in the last bit (the action's contract, docs/optimizer.md's ROWS: the same bits). The row
form's fill loop ends in an overlapping last vector (render.py's `_overlap_tails`); the block's
row now does too. Oracle: the same program with the rows not blocked (an L1 too small for
ROWS_MIN rows), bit for bit, and numpy in float64 within rounding."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import schedule_actions
from row_oracles import softmax, special_rows

from rulegrad import Tensor


def _softmax(x: np.ndarray, masked: bool) -> Tensor:
    t = Tensor(x)
    if masked:  # a causal mask's -inf above the diagonal, rows of 1..n values kept
        t = Tensor(np.triu(np.ones(x.shape[-2:], bool), 1)).where(float("-inf"), t)
    return t.softmax(-1)


_SHAPES = [(5, 7, 33), (3, 37, 37), (2, 2, 31, 31), (13, 65), (1, 13, 65)]


# (a causal mask is square: the masked cases are the square rows only)
@pytest.mark.parametrize("shape,masked", [(s, False) for s in _SHAPES]
                         + [(s, True) for s in _SHAPES if s[-1] == s[-2]],
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple)
                         else ("causal" if v else "plain"))
def test_float64_blocked_softmax_has_the_row_forms_bits(monkeypatch, shape, masked):
    x = special_rows(shape, "float64", seed=sum(shape))
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")
    assert any(a.startswith("ROWS ") for a in schedule_actions(_softmax(x, masked)))
    blocked = _softmax(x, masked).numpy()
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "1K")  # (an eighth of it holds no 4 rows)
    assert not any(a.startswith("ROWS ") for a in schedule_actions(_softmax(x, masked)))
    rows = _softmax(x, masked).numpy()
    assert blocked.dtype == rows.dtype == np.float64
    assert np.array_equal(blocked.view(np.uint64), rows.view(np.uint64))
    with np.errstate(all="ignore"):
        xm = np.where(np.triu(np.ones(shape[-2:], bool), 1), -np.inf, x) if masked else x
        want = softmax(xm)
    np.testing.assert_allclose(blocked, want, rtol=1e-13, atol=1e-15)


# A value of the row alone read inside a reduce (a per-head or per-row scale or bias, a (h, 1)
# tensor) is one value a row, not a row of them: the row's bytes counted it as a second row of
# the scores' length, and a softmax over rows of 129 float32 scaled per row needed 1548 bytes a
# row (3 rows in an eighth of 48 KB, under ROWS_MIN), so it kept the row form: 0.75x the blocked
# kernel's speed on one core (8x64x129 scaled per head: 24.7 -> 18.6 us; 4x12x64x129 147 ->
# 111; 2048x97 81 -> 60, medians of 7, thread CPU time, three interleaved runs).
SCALED = [((8, 64, 129), (64, 1)), ((4, 12, 64, 129), (12, 1, 1)), ((42, 129), (42, 1)),
          ((6, 7, 129), (6, 1, 1))]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("op", ["mul", "add"])
@pytest.mark.parametrize("shape,sshape", SCALED, ids=lambda s: "x".join(map(str, s)))
def test_softmax_of_rows_scaled_per_row_is_blocked(monkeypatch, shape, sshape, op, dtype):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")
    x = special_rows(shape, dtype, seed=len(shape))
    s = (np.random.default_rng(1).random(sshape) + 0.5).astype(dtype)

    def prog() -> Tensor:
        return (Tensor(x) * Tensor(s) if op == "mul" else Tensor(x) + Tensor(s)).softmax(-1)

    (got,) = [a for a in schedule_actions(prog()) if a.startswith("ROWS ")]
    # (an eighth of 48 KB over a row of scores and its exps, and no row for the scale)
    block = min(8, 48 * 1024 // 8 // (shape[-1] * np.dtype(dtype).itemsize * 2))
    assert f"(blocks of {block} rows: 4 passes" in got
    with np.errstate(all="ignore"):
        x64, s64 = x.astype(np.float64), s.astype(np.float64)
        want = softmax(x64 * s64 if op == "mul" else x64 + s64)
    rtol, atol = (2e-5, 2e-6) if dtype == "float32" else (4e-3, 2e-2)
    np.testing.assert_allclose(prog().numpy().astype(np.float64), want, rtol=rtol, atol=atol)
