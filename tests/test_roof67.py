"""A 256-bit target's float32 exps (issue 33: softmax and logsumexp toward the copy roof).

A softmax's kernel-local row of exps is filled in explicit 8-lane vectors with vexp.py's core
inline (wide_exps' `lane_fill`), where gcc's `omp simd` loop called the library's 8-lane
clone; the 8-lane core clamps its argument with AVX's min and max (the compares' NaN rule)
and, for a value less its own row's max, without the overflow clamp (`rg_exp8n`). Checked
against numpy in float64: the softmax over row widths tiny, prime, 1024 and 32768 and batch
1, with NaN and infinities in rows; exp's special values and the clamps' edges; exps of the
subnormal range in a softmax.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from ulps import ulps

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel

F32 = np.float32


def _source(t: Tensor) -> str:
    return "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source
                     for i, item in enumerate(t.schedule()))


def _softmax64(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("rows, cols", [(1, 1), (1, 7), (1, 16), (1, 17), (3, 31), (2, 33),
                                        (97, 1009), (1, 1024), (8, 1024), (2, 32768),
                                        (5, 4099)])
def test_a_256_bit_softmax_fills_its_row_of_exps_inline_within_rounding_of_numpy(
        rows: int, cols: int, monkeypatch):
    """The row of exps in explicit 8-lane vectors wherever it is 8 long or more, and numpy's
    float64 softmax within float32 rounding: rows of NaN, +inf, -inf among normal values, and
    (past 3 rows) a row of -inf only."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
    x = np.random.default_rng(rows * cols).standard_normal((rows, cols)).astype(F32) * 8
    for r, v in enumerate([np.nan, np.inf, -np.inf][:rows - 1]):
        x[r, cols // 2] = v
    if rows > 3:
        x[3] = -np.inf
    t = Tensor(x).softmax(-1)
    if cols >= 8 and rows > 1:  # (a batch of 1: a store along the row, no local row)
        assert re.search(r"rg_vstore_f32\(&loc", _source(t))
    with np.errstate(all="ignore"):
        got = t.numpy()
    np.testing.assert_allclose(got, _softmax64(x), rtol=4e-6, atol=1e-30, equal_nan=True)


def test_a_256_bit_exp_keeps_nan_and_clamps_at_its_edges(monkeypatch):
    """exp of NaN is NaN, of +-inf inf and 0, past 88.8 inf, below -104 zero, and at the edges
    within an ulp of the exact value: the min and max that clamp the argument return it where
    it is NaN, as the compares they replaced kept it (a 4097-long loop: the clone's lanes, and
    a tail)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
    edges = np.array([np.nan, np.inf, -np.inf, 88.7, 88.72, 88.8, 89.0, 1e30, -103.9, -104.0,
                      -104.5, -1e30, 0.0, -0.0, -87.3, -100.0], F32)
    x = np.resize(edges, 4097)
    got = Tensor(x).exp().numpy()
    with np.errstate(all="ignore"):
        want = np.exp(x.astype(np.float64))
    assert np.array_equal(np.isnan(got), np.isnan(x))
    finite = ~np.isnan(x)
    big = want > np.finfo(F32).max
    assert np.all(np.isinf(got[finite & big]))
    assert ulps(got[finite & ~big], want[finite & ~big], F32).max() <= 1.0


def test_a_256_bit_softmax_of_a_wide_range_is_exact_exps_into_the_subnormals(monkeypatch):
    """A row whose max is 0 and whose other values run from -30 down to -120: its sum rounds to
    1, so each value is exp(x) (the core without its overflow clamp, `rg_exp8n`, scaled by 2^k
    in two halves into the subnormals), within an ulp of float64's, and 0 below -104."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
    x = np.zeros((3, 1031), F32)
    x[:, 1:] = -np.linspace(30.0, 120.0, 1030, dtype=F32)  # (their sum < 1e-12)
    got = Tensor(x).softmax(-1).numpy()
    want = _softmax64(x)
    assert ulps(got, want, F32).max() <= 1.0
