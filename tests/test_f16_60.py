"""float16 softmax's row of exps in explicit vectors (f16_60, issue 32/33), against numpy and the
reference interpreter (`RULEGRAD_BACKEND=interp`).

A float16 softmax keeps its exps in a kernel-local float16 row. gcc's loop that filled it ran
one value at a time (the halves' bit functions and a scalar expf each); now opt_helpers'
`half_row` fills it 8 halves a vector (F16C's conversions, vexp's core inline) and, on a
512-bit target, wide_exps' `wide_half` 16 (vexp.WIDE_HALF). A vector store of a float32 cast to
float16 stores the float32 (render.py's `_unrounded`: the store's one rounding).

Oracles: the interpreter computes each float16 op in float32 and rounds it to float16 where the
semantics table says (the exp's input, the exp, the sum, the quotient): its bits where the sum
is the same in any order (a row of 1, exp(x) and zeros, every half x <= 0), else within a
half's two ulps (the sum reassociated); numpy's float64 softmax within a few
float16 roundings, NaN where it is NaN (a row with NaN or +inf, an all -inf row). Inputs: NaN,
+-inf, -0.0 and subnormal halves; tiny, batch-1, prime, tall and skinny shapes, each axis; both
vector widths (RULEGRAD_VECTOR_BYTES=32: 8 lanes; 64: 16, where the CPU has AVX-512)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from special_values import assert_same_bits
from test_f16_59 import _halves

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import target

_SHAPES = [(1, 1), (3, 5), (2, 8), (4, 16), (5, 17), (1, 257), (61, 67), (1031, 7), (7, 1031),
           (2, 37, 64), (33, 1000)]
_CASES = [(shape, axis) for shape in _SHAPES for axis in (0, -1)]
_WIDTHS = ["32"] + (["64"] if "avx512f" in target.cpu().flags else [])
_HALF_TINY = 2.0 ** -25


def _rows(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """test_f16_59's halves (NaN, +-inf, -0.0, subnormals) with, along the last axis, an all
    -inf row, a row with one +inf and a row of subnormals and zeros only (where there are that
    many rows)."""
    x = _halves(shape, seed)
    flat = x.reshape(-1, shape[-1])
    if flat.shape[0] > 3:
        flat[1] = -np.inf
        flat[2, shape[-1] // 2] = np.inf
        flat[3] = np.where(np.arange(shape[-1]) % 3 == 0, -0.0,
                           np.float16(6e-8) * (np.arange(shape[-1]) % 5))
    return x


def _within_ulps(got: np.ndarray, want: np.ndarray, ulps: int = 1) -> None:
    """NaN, +-inf where `want` has them; elsewhere within `ulps` of a half of `want`."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = np.isfinite(want)
    np.testing.assert_array_equal(got[~ok], want[~ok])
    ulp = np.spacing(np.abs(want[ok])).astype(np.float32)
    err = np.abs(got[ok].astype(np.float32) - want[ok].astype(np.float32)) / ulp
    assert np.all(err <= ulps), (err.max(), got[ok][err.argmax()], want[ok][err.argmax()])


@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("shape, axis", _CASES)
def test_softmax_log_softmax_and_exp_are_the_interpreters(shape, axis, width, monkeypatch):
    """exp's bits; softmax and log_softmax within two of a half's ulps (their sums may be
    reassociated, semantics.py: a float32 sum rounded once to a half, in another order than the
    interpreter's, an ulp apart; then the quotient's rounding)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x = _rows(shape, 60000 + sum(shape) - axis)
    outs = {"softmax": lambda t: t.softmax(axis), "log_softmax": lambda t: t.log_softmax(axis),
            "exp": lambda t: (t - 1).exp()}
    for name, f in outs.items():
        monkeypatch.delenv("RULEGRAD_BACKEND", raising=False)
        got = f(Tensor(x)).numpy()
        monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
        want = f(Tensor(x)).numpy()
        assert got.dtype == want.dtype == np.float16, name
        if name == "exp":
            assert_same_bits(got, want)
            continue
        _within_ulps(got, want, 2)  # (a sum an ulp apart, then the quotient's rounding)


@pytest.mark.parametrize("width", _WIDTHS)
def test_every_nonpositive_half_in_a_row_of_exps_is_the_interpreters_bits(width, monkeypatch):
    """Rows of 17 holding 0 and one half x <= 0 (every one: -0.0, subnormals, -inf), the rest
    -inf: the row of exps is 1, exp(x) and zeros, whose sum any order adds alike, so softmax
    (1 / (1 + e), e / (1 + e)) and log_softmax are the interpreter's bits: every half through
    the row's widening, rounding, exp core and store."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    every = every[~np.isnan(every) & (every <= 0)]
    rows = np.full((every.size, 17), -np.inf, np.float16)
    rows[:, 3], rows[:, 11] = 0, every
    for op in ("softmax", "log_softmax"):
        monkeypatch.delenv("RULEGRAD_BACKEND", raising=False)
        got = getattr(Tensor(rows), op)(-1).numpy()
        monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
        assert_same_bits(got, getattr(Tensor(rows), op)(-1).numpy())


@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("shape, axis", _CASES)
def test_softmax_is_numpys(shape, axis, width, monkeypatch):
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x = _rows(shape, 61000 + sum(shape) - axis)
    w = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(w - w.max(axis=axis, keepdims=True))
        want = e / e.sum(axis=axis, keepdims=True)
    got = Tensor(x).softmax(axis).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    # the exp's input rounded to float16 (|x - max| up to ~30: 30 * 2^-11 relative to the exp),
    # the exp, the sum and the quotient each rounded once more
    assert np.all(np.abs(got[ok] - want[ok]) <= 0.02 * want[ok] + 4 * _HALF_TINY)


@pytest.mark.parametrize("width", _WIDTHS)
def test_every_half_through_the_row_of_exps(width, monkeypatch):
    """Each of the 65536 halves is the max of its row of 17 (the rest -inf), so its softmax
    is exp(x - x) / 1 = 1 and its log_softmax 0 where x is finite, NaN where x is NaN or +-inf:
    the exps' row for every half's widening, the core and the rounding; and exp(x - 12) of
    every half (a store's vectors) is numpy's float16 exp of x - 12 within one half's ulp and
    the interpreter's bits."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    rows = np.full((1 << 16, 17), -np.inf, np.float16)
    rows[:, 5] = every
    got = Tensor(rows).softmax(-1).numpy()
    finite = np.isfinite(every)
    np.testing.assert_array_equal(np.isnan(got[:, 5]), ~finite)
    assert np.all(got[finite, 5] == 1) and np.all(got[finite][:, np.arange(17) != 5] == 0)
    x = every.reshape(256, 256)
    got = (Tensor(x) - 12).exp().numpy()
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.exp(x - np.float16(12))  # (numpy's float16 exp: float32's, rounded)
    _within_ulps(got, want)
    monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
    assert_same_bits(got, (Tensor(x) - 12).exp().numpy())


@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("cols", [8, 17, 1000])
def test_the_row_of_exps_is_filled_in_vectors(cols, width, monkeypatch):
    """Counted in the C: a float16 softmax's kernel calls no scalar expf (gcc's loop of the
    row called it per value) and stores its row of exps a vector at a time, 16 halves where
    the target is 512-bit and the row at least 16 long, else 8; a float32 cast to float16 that
    is stored is not rounded a second time on the way (`_unrounded`)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x = _rows((5, cols), cols)
    (item,) = Tensor(x).softmax(-1).schedule()
    source = render_kernel(optimize_kernel(lower_only(item.ast)), "k").source
    body = source[source.index("void k"):]
    assert not re.search(r"\bexpf\(", body)
    lanes = "z" if width == "64" and cols >= 16 else "v"
    # (5 rows run in a block: the row of exps one a row of it, at r * cols + c)
    (fill,) = re.findall(rf"rg_{lanes}store_f16\(&loc\d+\[(?:r\d+ \* {cols} \+ )?r\d+\], (t\d+)\);",
                         body)
    assert not re.search(rf"{fill} = rg_[vz]round_f16\(", body)


@pytest.mark.skipif("64" not in _WIDTHS, reason="16 lanes need AVX-512")
@pytest.mark.parametrize("cols", [16, 67, 1000])
def test_a_float16_log_softmax_sums_its_exps_16_lanes_at_a_time(cols, monkeypatch):
    """Counted in the C: on a 512-bit target a float16 log_softmax's sum of exps computes two
    of its 8-lane vectors as one 16-lane value (wide_exps' `paired`, its halves widened and
    rounded by vexp.WIDE_HALF), as float32's does: an 8-lane exp only for a last vector. Its values:
    test_softmax_log_softmax_and_exp_are_the_interpreters."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    (item,) = Tensor(_rows((5, cols), cols)).log_softmax(-1).schedule()
    source = render_kernel(optimize_kernel(lower_only(item.ast)), "k").source
    body = source[source.index("void k"):]
    # (rg_zexpn_f32: the same core without the overflow clamp, x - max(x) <= 0: wide_exps)
    assert re.search(r"rg_zexpn?_f32\(", body) and "rg_zload_f16(" in body
    assert body.count("rg_vexp_f32(") <= 1  # (the 8 lanes of a last vector past the pairs)
