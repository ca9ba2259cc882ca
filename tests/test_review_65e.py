"""Review of exp65 (rev65e): `wide_exps.nonpositive`, the proof that exp's argument is <= 0.

The proof matches v - max(v) by a range of v of "the same size" as the max's. `range_size` is
None for a symbolic range, and None == None: x[0:n] - max(x[0:k]) over two different variables
was proven <= 0, though x[k:n] may be above the max. The C renderer refuses symbolic range
sizes today, so no kernel printed the clamp-free exp from it: the proof is checked on graphs.
"""

from __future__ import annotations

from rulegrad.rules.wide_exps import nonpositive
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp

F32, IDX = dtypes.float32, dtypes.index
X = UOp(Ops.DEFINE_GLOBAL, F32, (), 1)


def _load(i: UOp) -> UOp:
    return UOp(Ops.LOAD, F32, (UOp(Ops.INDEX, F32, (X, i)),))


def _less_max(v_end: UOp, max_end: UOp) -> UOp:
    """x[c] - max over r of x[r], c in [0, v_end), r in [0, max_end)."""
    c = UOp(Ops.RANGE, IDX, (v_end,), (0, "loop"))
    r = UOp(Ops.RANGE, IDX, (max_end,), (1, "reduce"))
    return UOp(Ops.SUB, F32, (_load(c), UOp(Ops.REDUCE, F32, (_load(r), r), Ops.MAX)))


def test_a_value_less_the_max_over_a_range_of_another_symbolic_size_is_not_proven():
    n, k = UOp.variable("n", 1, 64), UOp.variable("k", 1, 64)
    assert not nonpositive(_less_max(n, k))  # (x[k:n] may exceed max(x[0:k]))
    assert nonpositive(_less_max(n, n))  # the same variable: the same rows


def test_a_value_less_the_max_over_a_range_of_another_constant_size_is_not_proven():
    assert not nonpositive(_less_max(UOp.const(IDX, 64), UOp.const(IDX, 16)))
    assert nonpositive(_less_max(UOp.const(IDX, 64), UOp.const(IDX, 64)))
