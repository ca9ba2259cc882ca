"""Batch loops and threads: heads (or a batch of products) that do not share evenly among the
threads give the cores each one's row tiles instead (rules/pack_helpers.py's `batch_shares`,
used by the flash and packing actions), and either way every output is numpy's: odd and prime
head counts, rows and sizes, teams of 1 to 3 threads, NaN in an input, float32 scores of a
float64 softmax.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel


def _flash(t: Tensor) -> str:
    """The flash action of t's one kernel."""
    (item,) = t.schedule()
    low = lower_only(item.ast)
    (flash,) = [a for a in actions(optimize_kernel(low)) if a.startswith("FLASH")]
    return flash


def _attention(q, k, v, scale, out=None):
    s = ((Tensor(q) @ Tensor(k).transpose(-1, -2)) * scale).softmax(-1)
    return (s if out is None else s.cast(out)) @ Tensor(v)


def _np_attention(q, k, v, scale):
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) * float(scale)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True) @ v.astype(np.float64)


def _data(heads: int, rows: int, keys: int, d: int, seed: int, dt=np.float32):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((heads, rows, d)).astype(dt),
            rng.standard_normal((heads, keys, d)).astype(dt),
            rng.standard_normal((heads, keys, d)).astype(dt))


# a region's cost (PARALLEL_MIN_WORK) at which a head's output product of these cases pays
# for two threads' shares (region_threads: a team over its tiles), but for the last case's
COST = 1 << 18


# (heads, query rows, keys, head size): all past two shares of COST, so threaded
@pytest.mark.parametrize("case,want", [
    ((3, 131, 128, 64), "tiles"),    # 3 heads on 2 threads: 2 and 1; 22 tiles: 11 and 11
    ((5, 97, 331, 37), "tiles"),     # prime rows, keys and size; 5 heads: 3 and 2
    ((4, 101, 96, 32), "batch"),     # 4 heads: 2 and 2
    ((2, 37, 256, 64), "batch"),     # 2 heads: 1 and 1 (7 tiles: 4 and 3)
    ((3, 64, 96, 64), "batch"),      # a head's products too little work for a team of its own
], ids=lambda c: "x".join(map(str, c)) if isinstance(c, tuple) else c)
def test_heads_that_share_unevenly_give_the_threads_their_row_tiles(case, want, fake_machine):
    """On 2 threads the heads are the threaded loop when they split evenly (or no worse than
    the row tiles, or a head is too little work for a team), else each head's row tiles are.
    The values are numpy's."""
    fake_machine(2, COST)
    q, k, v = _data(*case, seed=sum(case))
    t = _attention(q, k, v, np.float32(0.125))
    assert f"PARALLEL {want}" in _flash(t)
    np.testing.assert_allclose(t.numpy(), _np_attention(q, k, v, 0.125), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_row_tiles_threaded_per_head_match_numpy_on_any_team(threads, fake_machine):
    """Heads whose row tiles are threaded (3 heads of 61 rows: 11 tiles, the last one 1 row,
    on teams of 1 to 3 threads) compute each output once, as numpy does."""
    fake_machine(int(threads), COST)
    q, k, v = _data(3, 61, 401, 48, seed=int(threads))
    t = _attention(q, k, v, np.float32(0.2))
    np.testing.assert_allclose(t.numpy(), _np_attention(q, k, v, 0.2), rtol=1e-5, atol=1e-5)


def test_nan_in_a_query_stays_in_its_row(monkeypatch):
    """A NaN in one query row's input makes that row's outputs NaN (its scores, max, sum) and
    no other row's: rows share the tile of 6 and the packed K and V, not their values."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    q, k, v = _data(3, 67, 512, 32, seed=7)
    q[1, 40, 5] = np.nan
    got = _attention(q, k, v, np.float32(0.25)).numpy()
    want = _np_attention(q, k, v, 0.25)
    assert np.isnan(got[1, 40]).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # (NaN equals NaN here)


def test_nan_in_a_value_reaches_every_row_of_its_head_only(monkeypatch):
    """A NaN in V's row j is multiplied into every output of its column in its head (each row's
    probabilities are positive), and into no other head's."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    q, k, v = _data(5, 43, 96, 24, seed=8)
    v[2, 17, 3] = np.nan
    got = _attention(q, k, v, np.float32(0.3)).numpy()
    want = _np_attention(q, k, v, 0.3)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[2, :, 3]).all() and np.isnan(got).sum() == got.shape[1]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scores,out", [("float32", "float64"), ("float64", "float32")])
def test_mixed_precision_heads_threaded_by_tiles(scores, out, fake_machine):
    """float32 scores of a float64 output (and the other way) on 3 heads, threaded by row
    tiles: no NaN (a past bug gave NaN where the two dtypes' panels differed), numpy's values
    within the float32 side's precision."""
    fake_machine(2, COST)
    q, k, _ = _data(3, 53, 512, 40, seed=9, dt=np.dtype(scores))
    v = np.random.default_rng(10).standard_normal((3, 512, 40)).astype(out)
    t = _attention(q, k, v, np.dtype(scores).type(0.2), out=out)
    got = t.numpy()
    assert got.dtype == np.dtype(out) and not np.isnan(got).any()
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) * 0.2
    e = np.exp(s - s.max(-1, keepdims=True))
    p = (e / e.sum(-1, keepdims=True)).astype(scores).astype(out).astype(np.float64)
    np.testing.assert_allclose(got, p @ v.astype(np.float64), rtol=2e-5, atol=2e-5)


def _pack(t: Tensor) -> str:
    (item,) = t.schedule()
    low = lower_only(item.ast)
    (pack,) = [a for a in actions(optimize_kernel(low)) if a.startswith("PACK")]
    return pack


# (batch, rows, k, columns)
@pytest.mark.parametrize("case,want", [
    # (each product's 2.4M multiply-adds pay a team of its own, two shares: region_threads)
    ((5, 97, 256, 96), "tiles"),   # 5 products on 2 threads: 3 and 2; 17 tiles each share
    ((4, 97, 128, 96), "batch"),   # 4 products: 2 and 2
    # 9 products, each too little work for a team of its own (the 2.3M of all of them pays
    # for two threads' shares)
    ((9, 41, 64, 96), "batch"),
], ids=lambda c: "x".join(map(str, c)) if isinstance(c, tuple) else c)
def test_a_batch_of_products_that_shares_unevenly_threads_the_row_tiles(case, want,
                                                                        monkeypatch):
    """The packing action threads a batch of products as the flash action threads heads, and
    its values are numpy's (float64, within the fused multiply-add's contract)."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    # (L2 pinned small: an x that fits in half of L2 runs its panels outside the row tiles and
    # threads panels, rules/pack_helpers.py; the batch-or-tiles choice is the one tested here)
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1K")
    b, m, k, n = case
    rng = np.random.default_rng(m + k)
    x, w = rng.standard_normal((b, m, k)), rng.standard_normal((b, k, n))
    t = Tensor(x.astype(np.float32)) @ Tensor(w.astype(np.float32))
    assert f"PARALLEL {want}" in _pack(t)
    want_ = x.astype(np.float32).astype(np.float64) @ w.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(t.numpy(), want_, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("keys,d,one", [(1021, 64, True), (2039, 32, True), (1031, 64, False)])
def test_k_and_v_up_to_a_quarter_of_l2_each_are_one_flash_kernel(keys, d, one, monkeypatch):
    """With 1 MB of L2, scores of up to 64K multiply-adds per row (1021 keys, counted as 1024,
    x 64; 2039 x 32) are a local product of one flash kernel (K^T and V packed, 256 KB each),
    not a kernel of their own whose scores go through memory; past it (1031 keys x 64) they
    are. The values are numpy's either way."""
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1M")
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    q, k, v = _data(1, 97, keys, d, seed=keys)
    t = _attention(q, k, v, np.float32(0.125))
    assert (len(t.schedule()) == 1) == one
    if one:
        assert "local products over r" in _flash(t)
    np.testing.assert_allclose(t.numpy(), _np_attention(q, k, v, 0.125), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("library", ["1", "0"])
@pytest.mark.parametrize("keys,d", [(37, 13), (16, 16), (77, 40)],
                         ids=lambda x: str(x))
def test_panels_of_a_computed_k_and_v_hold_every_column_and_zeros_past_them(library, keys, d,
                                                                            monkeypatch):
    """The flash kernel packs K's and V's panels as the packed products do (gemm.py's
    `pack_y`): whole panels, then the last one's columns left over, a computed K and V (not a
    load the block library copies) through its printed loops. Keys and head sizes that fill
    no whole panel, some, or all, with the block library's blocks and printed ones: numpy's
    values."""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", library)
    run._programs.clear()
    q, k, v = _data(2, 19, keys, d, seed=keys + d)
    s = ((Tensor(q) @ (Tensor(k) * 2 + 1).transpose(-1, -2)) * 0.25).softmax(-1)
    t = s @ (Tensor(v) - 0.5).exp()
    assert _flash(t).startswith("FLASH")
    want = _np_attention(q, k * 2 + 1, np.exp(v.astype(np.float64) - 0.5), 0.25)
    got = t.numpy()
    run._programs.clear()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
