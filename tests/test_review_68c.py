"""rev68c: review of half68 (the block library's panel copy filling a product's staged panels,
gemm.py's `_staged_copy`; the float16 widening copy, blocks.py's `_half_pack`).

Checked against numpy's float32 product of the same operands (rounded to float16 for float16
inputs). Never timed."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


def _masked(b, m):
    return (Tensor(m).where(Tensor(b), 0.0), np.where(m, b, 0))


def _positive(b, m):
    return ((Tensor(b) > 0).where(Tensor(b), 0.0), np.where(b > 0, b, 0))


def _padded_k(b, m):  # 3 zero rows along k (x's extra 3 columns each meet a 0)
    return (Tensor(b).pad(((0, 3), (0, 0))), np.pad(b, ((0, 3), (0, 0))))


# (rows, k, columns): a whole number of 16-column panels (no column gate of the staged array's
# own, so y's select or gate was the only one), and a part-full last panel, small and prime
SHAPES = [(40, 70, 48), (40, 70, 50), (9, 13, 32), (17, 31, 17)]


@pytest.mark.parametrize("make", [_masked, _positive, _padded_k])
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_a_staged_y_under_a_select_or_a_pad_keeps_it(monkeypatch, dt, m, k, n, make):
    """exp(x) @ y, its panels staged on one core (pack_helpers' `panel_array`), with y a
    select of b (by a mask, by b > 0) or b padded along k: numpy's value. The library's copy
    of the staged panels dropped y's select and its load's gate (any WHERE taken for the last
    panel's column gate), copying b itself: 48 columns (no column gate) were off by up to 49,
    the pad read b's next row past k."""
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    rng = np.random.default_rng(m * k + n)
    b = rng.standard_normal((k, n)).astype(dt)
    mask = rng.standard_normal((k, n)) > 0
    y, yn = make(b, mask)
    kk = yn.shape[0]
    x = (rng.standard_normal((m, kk)) * 0.3).astype(dt)
    got = (Tensor(x).exp() @ y).numpy()
    ex = np.exp(x.astype(np.float32)).astype(dt).astype(np.float32)
    want = (ex @ yn.astype(np.float32)).astype(dt)
    tol = 1e-2 if dt is np.float16 else 1e-4
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=tol,
                               atol=tol)
