"""Review of cliff67 (the flash bounds at half of L2 a product): a float64 product counts twice
the bytes of a float32 one in the rangeify cost rule (rules/flash_cost.py's `product_cost`).

With the bound counted in float32 multiply-adds, float64 attention whose panels passed L2 (or
the stack's half) was still made one kernel with a local row of scores, which the flash kernel
then refused (flash_helpers' `max_panel_bytes`): per-row plain loops at 0.36-0.45x the separate
kernels' speed (bench/ab.py against a tree never local, 512 KB L2). cliff67's doubled bound on
a 512 KB L2 had widened that gap to 1031 keys of 40. The property checked: attention scheduled
as one kernel is the flash kernel; values against numpy in float64."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel


def _attention_np(q, k, v, scale, causal):
    s = (q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2)) * float(scale)
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)


def _is_flash(item) -> bool:
    return any(a.startswith("FLASH") for a in actions(optimize_kernel(lower_only(item.ast))))


# (L2, batch, heads, keys, head dim, causal, mixed, one flash kernel expected): float64 q, k, v
# unless mixed (float32 ones, scores scaled by a numpy float64 scalar: float64 from there on)
CASES = [
    ("512K", 1, 2, 1031, 40, 0, 0, False),  # 2 x 322 KB of float64 panels: past 512 KB
    ("512K", 1, 1, 1024, 64, 0, 0, False),
    ("512K", 1, 1, 1031, 40, 1, 0, False),  # causal
    ("512K", 1, 2, 1297, 37, 0, 1, False),  # mixed: float64 V panel past L2 with the scores'
    ("1M", 1, 1, 1024, 64, 0, 0, False),    # the stack's half caps the panels at 512 KB
    ("2M", 1, 1, 1031, 61, 0, 0, False),
    ("512K", 1, 2, 509, 40, 0, 0, True),    # 2 x 163 KB: fits, the flash kernel
    ("512K", 1, 2, 509, 40, 0, 1, True),
    ("256K", 2, 1, 251, 40, 1, 0, True),
]


@pytest.mark.parametrize("l2,b,h,s,d,causal,mixed,flash", CASES)
def test_float64_attention_is_flash_or_separate_kernels(monkeypatch, l2, b, h, s, d, causal,
                                                        mixed, flash):
    monkeypatch.setenv("RULEGRAD_L2_BYTES", l2)
    rng = np.random.default_rng(s * d)
    dt = np.float32 if mixed else np.float64
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(dt) for _ in range(3))
    scale = np.float64(d ** -0.5)
    tq, tk, tv = Tensor(q), Tensor(k), Tensor(v)
    if mixed:
        out = (tq @ tk.transpose(-1, -2) * scale).softmax(-1) @ tv
    else:
        out = tq.scaled_dot_product_attention(tk, tv, is_causal=bool(causal))
    items = out.schedule()
    # one kernel only as the flash kernel (a local row of scores in plain loops ran 0.4x)
    assert len(items) > 1 or _is_flash(items[0])
    assert (len(items) == 1) == flash
    got = out.numpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _attention_np(q, k, v, scale, causal), rtol=1e-5,
                               atol=1e-6)
