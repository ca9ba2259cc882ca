"""Review of rows63 (opt.rules' `block_rows`, rules/row_block_helpers.py): row blocks as a
loop fission on the kernel graph. Each test was seen failing before its fix."""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import target
from rulegrad.runtime.loops import stride
from rulegrad.runtime.uop import UOp


@pytest.fixture(autouse=True)
def _l1(monkeypatch):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")  # (the machine's fact that picks the block)


@pytest.mark.parametrize("rows", [13, 8193])
def test_a_block_of_5_rows_runs_each_hand_off_pass_once_a_row(rows):
    """A float32 softmax over rows of 129 runs in blocks of 5 (a row and its exps, 1032 bytes,
    in an eighth of 48 KB). Each hand-off's array is filled by a loop over the block's rows,
    one pass over a row an iteration: the renderer's `_overlap_tails` split it as for a vector
    loop, rows 0..4 then 1..5, so the max and the sum each ran 8 passes over 5 rows."""
    x = np.random.default_rng(0).standard_normal((rows, 129)).astype(np.float32)
    t = Tensor(x).softmax(1)
    ((opt, acts),) = optimized_kernels(t)
    assert any(a.startswith("ROWS r0 (blocks of 5 rows") for a in acts), acts
    body = render_kernel(opt, "k").source
    body = body[body.index("void k"):]
    assert len(re.findall(r"rg_reduce_max_f32\(", body)) == 1, body
    assert len(re.findall(r"rg_reduce_add_f32\(", body)) == 1, body
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(t.numpy(), e / e.sum(1, keepdims=True), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("rows", [3, 130])
@pytest.mark.parametrize("width", ["32", "64"])
def test_a_float16_softmax_of_an_expanded_column(monkeypatch, rows, width):
    """A float16 softmax over a column expanded along the rows (each row one value 40 times):
    its row of exps, filled in 8- or 16-lane half vectors (`half_row`), stored a value the
    same along the row, a scalar, where the store takes a vector: a C compile error (blocked,
    130 rows, or not, 3). Pre-existing (not rows63's), found by its sweep."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x = np.random.default_rng(1).standard_normal((rows, 1)).astype(np.float16)
    got = Tensor(x).expand(rows, 40).softmax(1).numpy()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), np.full((rows, 40), 1 / 40), rtol=2e-3)


@pytest.mark.parametrize("name", ["log_softmax", "softmax"])
def test_blocks_too_few_for_the_threads_are_not_flattened_with_their_rows(monkeypatch, name):
    """2053 rows of 77 in blocks of 8: 257 blocks, 4 a thread on 64 threads, which the parallel
    action flattened with the block's output rows (`PARALLEL r0 r6 (2056 iterations: 257x8)`):
    each flattened iteration, one output row, filled the whole block's arrays again, the max
    and sum of 8 rows for each row (8x the passes). The blocks alone take the threads. (A
    region's cost of 16K loads: the kernel's ~1M pays for all 64 threads, region_threads.)"""
    monkeypatch.setenv("RULEGRAD_THREADS", "64")
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1 << 14)
    x = np.random.default_rng(2).standard_normal((2053, 77)).astype(np.float32)
    t = getattr(Tensor(x), name)(1)
    ((_, acts),) = optimized_kernels(t)
    assert any(a.startswith("ROWS r0 (blocks of 8 rows") for a in acts), acts
    # (the team: the threads whose shares of the work pay for the region, region_threads)
    assert [re.sub(r" on \d+ threads$", "", a) for a in acts if a.startswith("PARALLEL")] == [
        "PARALLEL r0 (257 iterations)"]
    s = x - x.max(1, keepdims=True)
    want = s - np.log(np.exp(s).sum(1, keepdims=True))
    np.testing.assert_allclose(t.numpy(), want if name == "log_softmax" else np.exp(want),
                               rtol=2e-5, atol=1e-6)


def test_stride_under_a_clamp_that_r_does_not_move_from_0_to_1():
    """loops.stride through a MIN: min(13 - j + r, 12) is 12 at r = 0 and at r = 1 with j at
    0, so comparing the clamp's values at the two points said a step of 0 along r, while at
    j = 5 it is r + 8 (a step of 1). A clamp r is under has no one step; one r is not under
    (the row block's, along a row's columns) keeps its step."""
    j, r, k = UOp.range(20, 0), UOp.range(4, 1), UOp.range(33, 2)
    clamp = (UOp.const(j.dtype, 13) - j + r).minimum(UOp.const(j.dtype, 12))
    assert stride(clamp, r) is None
    assert stride(clamp * 33 + k, k) == 1
