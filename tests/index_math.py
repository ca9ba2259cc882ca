"""The value of an index expression (ranges, constants, index ALU) at one point of its ranges,
folded op by op as the symbolic rules' own constant folding does: the oracle the index rules'
tests compare a rewritten expression with."""

from __future__ import annotations

from rulegrad import Ops, UOp, dtypes
from rulegrad.rules.symbolic_helpers import fold_alu


def index_value(root: UOp, env: dict[UOp, int]) -> int:
    """root's value with each RANGE at env[range]."""
    vals: dict[UOp, int] = {}
    for n in root.toposort():
        if n.op is Ops.RANGE:
            vals[n] = env[n]
        elif n.op is Ops.CONST:
            vals[n] = n.arg
        else:
            v = fold_alu(n.op, dtypes.index, *(vals[s] for s in n.src))
            assert v is not None, n.op
            vals[n] = int(v)
    return vals[root]
