"""The optimizer's and the cost rules' sizes follow the machine's facts (runtime/target.py), not
constants: a larger L2 lets a longer row's reductions, and a longer sum of products, be local
to their kernel; answers stay numpy's either way. (The suite pins the facts to this project's
machine, tests/conftest.py; these tests set others.)"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.rules import (
    flash_cost,
    flash_helpers,
    interchange_helpers,
    pack_helpers,
    stage_helpers,
)
from rulegrad.rules.generated.rangeify import local_max_row


@pytest.fixture
def fresh(monkeypatch):
    """The schedule cache stays on: a form scheduled under other cache sizes is scheduled
    again (runtime/schedule.py keys the sizes), never replayed with the other choice."""
    return monkeypatch


def _softmax_np(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _flash_bounds() -> tuple[int, int]:
    return flash_cost.local_max_panel(), flash_helpers.max_panel_bytes()


def test_bounds_scale_with_the_caches(monkeypatch):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "16K")
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "512K")
    small = (flash_cost.local_max_array(), stage_helpers.stage_max(),
             interchange_helpers.prefetch_rows(), local_max_row())
    small_flash = _flash_bounds()
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "256K")
    smaller_flash = _flash_bounds()
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "32K")
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1M")
    large = (flash_cost.local_max_array(), stage_helpers.stage_max(),
             interchange_helpers.prefetch_rows(), local_max_row())
    # the values tuned on this project's machine (32 KB L1d, 1 MB L2); a local row and its exp
    # array a quarter of L2 each (rangeify.rules' local_max_row). Past 1 MB of L2 the stack
    # budget caps the arrays on a thread's stack (tests/test_stack_budget.py)
    assert large == (4096, 4096, 8, 1 << 16)
    assert large == tuple(2 * v for v in small)
    # the flash kernel's products up to half of L2 each, L2 for all (rules/flash_cost.py says
    # why): the stack budget caps them from 512 KB of L2 on
    assert _flash_bounds() == small_flash == (1 << 16, 1 << 19)
    assert small_flash == tuple(2 * v for v in smaller_flash)


def test_work_shares_follow_the_threads(monkeypatch):
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    assert pack_helpers.batch_parallel_min() == 4
    monkeypatch.setenv("RULEGRAD_THREADS", "8")
    assert pack_helpers.batch_parallel_min() == 16


def test_a_long_rows_max_is_local_only_where_the_row_fits_l2(fresh):
    fresh.setenv("RULEGRAD_L2_BYTES", "512K")
    n = 65521  # past 512 KB's local row (32768: a quarter of it as float32), within 1 MB's
    assert local_max_row() < n  # (65521 is prime: split_reduceop cannot cut it in partials)
    x = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
    counts = {}
    for l2 in ("512K", "1M"):
        fresh.setenv("RULEGRAD_L2_BYTES", l2)
        out = Tensor(x).softmax(-1)
        counts[l2] = len(out.schedule())
        np.testing.assert_allclose(out.numpy(), _softmax_np(x), rtol=1e-5, atol=1e-7)
    assert counts["1M"] == 1 < counts["512K"]


def test_attentions_scores_are_local_only_where_k_and_v_fit_l2(fresh):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 1024, 64)).astype(np.float32) for _ in range(3))
    want = _softmax_np(q @ np.swapaxes(k, -1, -2) * 0.125) @ v
    counts = {}
    for l2 in ("256K", "512K"):  # 1024 keys x 64 = 64K multiply-adds per row: 256 KB of K^T
        fresh.setenv("RULEGRAD_L2_BYTES", l2)
        tq, tk, tv = Tensor(q), Tensor(k), Tensor(v)
        out = (tq @ tk.transpose(-1, -2) * 0.125).softmax(-1) @ tv
        counts[l2] = len(out.schedule())
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-5)
    assert counts["512K"] < counts["256K"]
