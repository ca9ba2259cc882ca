"""The free ranges' definition, by reachability, for the tests of `free_ranges` and of the
optimizer's kept answers (an oracle apart from runtime/loops.py's walk)."""

from __future__ import annotations

from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp

BINDERS = (Ops.REDUCE, Ops.DEFINE_LOCAL)


def reaches(n: UOp, r: UOp) -> bool:
    """Whether a path goes from n to RANGE r through no STORE and no REDUCE or DEFINE_LOCAL
    that binds r (its value, src[0], is where r is bound; its ranges themselves are not read)."""
    seen, stack = set(), [n]
    while stack:
        m = stack.pop()
        if m is r:
            return True
        if m in seen or m.op is Ops.STORE:
            continue
        seen.add(m)
        if m.op in BINDERS:  # its own ranges are bound: only its value reads the others
            if r not in m.src[1:]:
                stack.append(m.src[0])
        else:
            stack.extend(m.src)
    return False
