"""Nested reductions fused: a reduction read only inside another reduction's loop, once per
element (it uses all of that reduction's ranges and all of its kernel's loops), runs in the same
kernel (tinygrad 0.14 also runs each of these as 1 kernel). Values against numpy on the C and
interpreter backends; a reduction whose read repeats work (through a broadcast) still gets a
kernel of its own."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

XN = np.random.default_rng(3).standard_normal((4, 8, 16)).astype(np.float32)

CASES = {  # name: (program, numpy, kernels)
    "sum_then_max_over_another_axis": (lambda t: t.sum(2).max(1), lambda a: a.sum(2).max(1), 1),
    "sum_read_through_reshape_by_max": (
        lambda t: t.reshape(32, 16).sum(1).reshape(4, 8).max(1),
        lambda a: a.reshape(32, 16).sum(1).reshape(4, 8).max(1), 1),
    "sum_then_full_max": (lambda t: t.sum(2).max(), lambda a: a.sum(2).max(), 1),
    "sum_then_sum_over_outer_axis": (lambda t: t.sum(1).sum(0), lambda a: a.sum(1).sum(0), 1),
    # the max is read at every element of the row it reduced, at the reader's outer loops:
    # computed locally, once per row before the sum's loop (rules/rangeify.rules' local_reduce)
    "broadcast_read_is_local": (
        lambda t: (t - t.max(2, keepdim=True)).sum(2),
        lambda a: (a - a.max(2, keepdims=True)).sum(2), 1),
    # read on the reader's inner loops only (a column max, per element of every row): a local
    # reduction would be recomputed per row, so it keeps a kernel of its own
    "inner_loop_read_keeps_its_kernel": (
        lambda t: t - t.max(0, keepdim=True),
        lambda a: a - a.max(0, keepdims=True), 2),
}


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_nested_reductions(name, backend, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    program, expected, kernels = CASES[name]
    out = program(Tensor(XN))
    assert len(out.schedule()) == kernels
    np.testing.assert_allclose(out.numpy(), expected(XN), rtol=1e-4, atol=1e-4)
