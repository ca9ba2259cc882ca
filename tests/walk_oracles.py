"""Definitions of the graph walks, recursive and plain, for the tests of `toposort`,
`free_ranges` and the optimizer's kept answers (oracles apart from runtime/uop.py's and
runtime/loops.py's iterative walks; test graphs are small)."""

from __future__ import annotations

from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


def post_order(root: UOp, stop=None) -> list[UOp]:
    """The depth-first post-order, sources left to right (toposort's definition); `stop(n)`
    true leaves n and its sources out."""
    out: list[UOp] = []
    done: set[UOp] = set()

    def visit(n: UOp) -> None:
        done.add(n)
        for s in n.src:
            if s not in done:
                if stop is not None and stop(s):
                    done.add(s)
                    continue
                visit(s)
        out.append(n)

    if stop is None or not stop(root):
        visit(root)
    return out


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
