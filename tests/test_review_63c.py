"""Review of rows63 (opt.rules' `block_rows`, rules/row_block_helpers.py): row blocks as a
loop fission on the kernel graph. Each test was seen failing before its fix."""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.c.render import render_kernel


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
