"""opt.rules' fill_reduce: a float32 softmax row's sum of exps is added up by the loop that
fills the row (rules/wide_exps.py's `filled`, render.py's `_close_local`), not by a second loop
that reads the row back; in the vector reduce's steps, so the same bits as that reduce and as a
256-bit target's kernel."""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import kernel_actions
from special_values import assert_same_bits

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime.ops import Ops


def _rows(rows: int, cols: int, dtype: type = np.float32) -> np.ndarray:
    """Normal rows scaled by 4, with NaN, +inf and -inf in rows 1 and 2 and an all -inf row 3
    (where there are that many)."""
    x = (np.random.default_rng(rows * 7919 + cols).standard_normal((rows, cols)) * 4)
    if rows > 1:
        x[1, cols // 3] = np.inf
    if rows > 2:
        x[2, cols - 1] = np.nan
        x[2, 0] = -np.inf
    if rows > 3:
        x[3] = -np.inf
    return x.astype(dtype)


def _softmax(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float64) - x.astype(np.float64).max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)


def _row_reads(source: str) -> list[str]:
    """The statements of a kernel's C that read a kernel-local row (`loc` arrays) back."""
    return [s for s in re.findall(r"[^;{}]*\bloc\d+\[[^;]*;", source)
            if not re.match(r"\s*(float|double) loc\d+\[\d+\]$", s.split(";")[0])
            and "store_f32(&loc" not in s and not re.match(r"\s*loc\d+\[[^]]*\] =", s)]


@pytest.mark.parametrize("cols", [16, 17, 31, 32, 33, 48, 64, 100, 1000, 1024, 4096, 4099])
@pytest.mark.parametrize("rows", [1, 3, 5])
def test_a_softmax_rows_sum_is_added_as_its_row_is_filled(rows: int, cols: int, monkeypatch):
    """On a 512-bit target the exps' sum of a row of any length is a FILL (DEBUG=2's
    actions): the row is read back once, by the output's division, not by a loop of its own
    for the sum, but for what is past its last block of 32 (fewer than 32 values, in the
    vector reduce's steps; a 256-bit target reads the whole row back: VECTOR); and the result is
    the 256-bit target's (whose sum reads the row back) bit for bit, NaN, infinities and an
    all -inf row included, and numpy's within float32 rounding. (Not the kernel interpreter's
    bits: its exp is numpy's, which may differ from the C library's in the last bit.)"""
    x = _rows(rows, cols)
    got = {}
    for width in ("32", "64"):
        monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
        t = Tensor(x).softmax(-1)
        (item,) = t.schedule()
        opt = optimize_kernel(lower_only(item.ast))
        (done,) = kernel_actions(t)
        # (short rows, 4 or more, run in blocks, the sum a pass of its own: test_rows_63's)
        blocked = any(a.startswith("ROWS ") for a in done)
        fill = width == "64" and not blocked
        fills = [a for a in done if a.startswith("FILL ADD")]
        assert len(fills) == fill, done
        source = render_kernel(opt, "k").source
        reads = _row_reads(source)
        # the output's loop reads each element once (its last vector's loop a second time
        # where the row is no whole number of vectors); the sum, a FILL, reads only the
        # values past the row's last block of 32: cols % 32 of them, 8 at a time, then 1
        sums = [s for s in reads if not re.match(r"\s*const float t\d+ = loc\d+\[r\d+\]", s)]
        if fill:
            eights = sum("+ u_]" in s for s in sums)
            ones = re.search(r"for \(int64_t k_ = (\d+); k_ < (\d+); k_\+\+\)", source)
            one = int(ones[2]) - int(ones[1]) if ones else 0
            assert (eights, one, len(sums)) == (cols % 32 // 8, cols % 8, eights + (one > 0)), sums
        else:
            assert sums, reads
        # (a "fill" on either target: a 256-bit one prints it as the vector reduce it was)
        assert blocked or any(n.op is Ops.REDUCE and n.src[-1].arg[1] == "fill"
                              for n in opt.toposort())
        assert any(a.startswith("VECTOR ADD") for a in done) == (not fill), done
        with np.errstate(all="ignore"):
            got[width] = t.numpy()
    assert_same_bits(got["64"], got["32"])
    np.testing.assert_allclose(got["64"], _softmax(x), rtol=4e-6, atol=1e-30, equal_nan=True)


@pytest.mark.parametrize("shape", [(4096, 1), (4096, 7), (4096, 33), (4096, 1000), (3, 4099),
                                   (1, 1024), (4096, 1024), (3, 4096)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_softmax_sweep_is_numpys(shape: tuple, dtype: type, monkeypatch):
    """The sweep of row widths and counts, in each float dtype, against numpy's softmax (in
    float64, rounded to the dtype's precision): the float32 rows' sums are
    FILLs on a 512-bit target (at least 16 wide, a 16-lane vector) but where short rows run in
    blocks, the others keep their own loops."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x = _rows(*shape, dtype)
    t = Tensor(x).softmax(-1)
    done = [a for k in kernel_actions(t) for a in k]
    fills = [a for a in done if a.startswith("FILL ADD")]
    blocked = any(a.startswith("ROWS ") for a in done)  # (the sum a pass of its own)
    assert bool(fills) == (dtype is np.float32 and shape[1] >= 16 and not blocked)
    with np.errstate(all="ignore"):
        got = t.numpy()
    assert got.dtype == dtype
    # (float16: x - max rounds to a half before its exp, 2^-11 of up to 30: 1.5%; the
    # smallest half is 6e-8)
    rtol, atol = {np.float32: (4e-6, 1e-30), np.float64: (1e-12, 1e-300),
                  np.float16: (2e-2, 6e-8)}[dtype]
    np.testing.assert_allclose(got.astype(np.float64), _softmax(x), rtol=rtol, atol=atol,
                               equal_nan=True)


def test_a_sum_from_negative_zero_keeps_its_own_loop():
    """`filled` takes only a sum from +0.0, the start its 16 lanes have: a REDUCE whose
    accumulator starts from -0.0 (a pick's sum) is left to the vector reduce."""
    from rulegrad.rules.wide_exps import filled

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    try:
        (item,) = Tensor(_rows(3, 100)).softmax(-1).schedule()
        low = lower_only(item.ast)
        (red,) = [n for n in low.toposort() if n.op is Ops.REDUCE and n.arg is Ops.ADD]
        assert filled(red) is not None
        reg = red.src[0].src[0]
        assert reg.op is Ops.DEFINE_REG
        negative = red.substitute({reg: reg.replace(arg=-0.0)})
        assert filled(negative) is None
    finally:
        monkeypatch.undo()
