"""Attention over a thousand keys or more on a 512 KB L2 (bench/cliffs.py --seed 1's cliff:
4x3x1100x40 at 0.50-0.65x torch eager's speed): the flash kernel takes each head whose K^T and V
panels fill at most L2 together (rules/flash_cost.py's `local_max_panel`, flash_helpers'
`max_panel_bytes`), where a quarter of L2 each had sent it to 4 kernels writing the scores
through memory. Values against numpy at the cliff's shape and its neighbours (fewer and more
keys, narrower and wider heads, causal), and the kernel count that says which path ran."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel


@pytest.fixture
def l2_512k(monkeypatch):
    """This helper's machine: 512 KB of L2 (the suite pins 1 MB, tests/conftest.py)."""
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "512K")
    return monkeypatch


def _attention_np(q, k, v, causal):
    s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


# (batch, heads, keys, head dim, causal): the cliff's head, and its neighbours; each head's two
# panels at most 512 KB (1300 keys x 48 wide: 2 x 250 KB, the edge)
CASES = [(1, 1, 1100, 40, 0), (1, 2, 1031, 40, 0), (1, 1, 1100, 24, 0), (1, 1, 1300, 48, 0),
         (2, 1, 1100, 40, 1), (1, 1, 997, 56, 0)]


@pytest.mark.parametrize("b,h,s,d,causal", CASES)
def test_long_attention_is_one_flash_kernel_on_a_512k_l2(l2_512k, b, h, s, d, causal):
    rng = np.random.default_rng(s + d)
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32) for _ in range(3))
    out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=bool(causal))
    (item,) = out.schedule()  # one kernel, not scores, max, sum and output
    # and that kernel the flash kernel: its panels fit (not a local row of scores in plain loops)
    assert any(a.startswith("FLASH") for a in actions(optimize_kernel(lower_only(item.ast))))
    np.testing.assert_allclose(out.numpy(), _attention_np(q, k, v, causal), rtol=1e-4,
                               atol=1e-5)


def test_keys_past_l2_keep_their_own_kernels(l2_512k):
    """2048 keys of 40 (2 x 320 KB of panels, past 512 KB): the scores' packed kernel, as
    before; values still numpy's."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 1, 2048, 40)).astype(np.float32) for _ in range(3))
    out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v))
    assert len(out.schedule()) > 1
    np.testing.assert_allclose(out.numpy(), _attention_np(q, k, v, False), rtol=1e-4, atol=1e-5)
