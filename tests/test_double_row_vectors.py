"""float64 row reductions in explicit vectors of 4 doubles (rules/opt_helpers.py
`vector_reducible`, render.py's `_vector_reduce` with runtime/target.py's `vector_lanes`): a row's
sum, max or min keeps REDUCE_VECTORS vectors of 4 partial results, where it ran as gcc's declared
NaN-propagating reduction one value at a time. Max and min bit for bit against numpy (NaN, signed
zeros, infinities); sums within the reduction contract (runtime/semantics.py) of the exact sum,
and bit for bit against the reference interpreter's emulation of the vector order; the action and
the C's 4-lane loads counted."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from special_values import assert_same_bits, sprinkled

from rulegrad import Tensor
from rulegrad.backends.c import compile_program
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.kernel_interp import run_kernel

SHAPES = [(1, 4), (3, 5), (1, 1000), (7, 1031), (4096, 7), (500, 17), (2, 3, 67), (1, 65537)]
OPS = ["sum", "max", "min"]


def _row_extreme(x: np.ndarray, op: str) -> np.ndarray:
    """numpy's max (min) of each row, NaN if the row has one, and a zero result's sign as MAX
    and MIN mean it (runtime/semantics.py): +0.0 above -0.0, in any order."""
    fn = np.max if op == "max" else np.min
    got = fn(x, axis=-1)
    pos, neg = ((x == 0) & ~np.signbit(x)).any(-1), ((x == 0) & np.signbit(x)).any(-1)
    zero = (pos & (op == "max")) | (pos & ~neg & (op == "min"))
    return np.where(got == 0, np.where(zero, 0.0, -0.0), got)


def _reduce(t: Tensor, op: str) -> Tensor:
    return getattr(t, op)(axis=-1)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_float64_rows_match_numpy(op: str, shape: tuple[int, ...]) -> None:
    x = sprinkled(shape, np.float64, seed=shape[-1], share=16)
    x[..., -1] = x[..., 0]  # (a row may still hold no special value at all)
    out = _reduce(Tensor(x), op)
    got = out.numpy()
    if op != "sum":
        assert_same_bits(got, _row_extreme(x, op))
    else:
        finite = np.isfinite(x).all(-1)
        with np.errstate(invalid="ignore"):
            want = x.sum(-1)
        assert_same_bits(got[~finite], want[~finite])  # NaN, or the row's infinity
        exact = np.array([math.fsum(r) for r in x[finite]])
        bound = (shape[-1] - 1) * np.finfo(np.float64).eps / 2 * np.abs(x[finite]).sum(-1)
        assert (np.abs(got[finite] - exact) <= bound).all()
        assert not np.signbit(got[finite & (got == 0)]).any()  # a sum of zeros is +0.0


@pytest.mark.parametrize("shape", [(9, 19), (5, 37), (3, 1031)], ids=str)
@pytest.mark.parametrize("op", OPS)
def test_float64_rows_take_vectors_of_4_doubles(op: str, shape: tuple[int, ...]) -> None:
    """The kernel's reduce is a vector one of 4 lanes, and its C sums (folds) 4-double loads;
    its bits are the reference interpreter's, which emulates that order."""
    x = sprinkled(shape, np.float64, seed=1, share=32)
    (item,) = _reduce(Tensor(x), op).schedule()
    opt = optimize_kernel(lower_only(item.ast))
    vector = [a for a in actions(opt) if a.startswith("VECTOR")]
    assert len(vector) == 1 and vector[0].endswith("of 4 partial results)"), vector
    source = compile_program([item]).source
    # REDUCE_VECTORS (4) vectors of accumulators, or as many as the row fills
    assert re.findall(r"rg_vf64 acc\d+\[(\d+)\]", source) == [str(min(4, shape[-1] // 4))]
    assert "rg_vload_f64(" in source
    bufs = [np.zeros(b.size, b.dtype.np) for b in item.bufs]
    for i, b in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b.ensure().reshape(-1)
    run_kernel(opt, bufs)
    assert_same_bits(_reduce(Tensor(x), op).numpy().reshape(-1), bufs[0])


def test_a_float64_softmax_row_max_in_vectors_matches_numpy() -> None:
    x = sprinkled((33, 257), np.float64, seed=3, values=(-np.inf, -0.0, 0.0), share=8)
    out = Tensor(x).softmax(-1)
    acts = [a for item in out.schedule()
            for a in actions(optimize_kernel(lower_only(item.ast)))]
    assert any(a.startswith("VECTOR MAX") and "of 4 partial" in a for a in acts), acts
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-13, atol=0)
