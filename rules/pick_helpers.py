"""A one-hot sum folded into a load: rules/kernel.rules' `pick_load`.

In: a kernel REDUCE (ADD) whose body picks by a one-hot mask over one of its own ranges r,

    REDUCE(WHERE(... & (a == CAST(r)) & ..., v(r), z), r, *rest)

(the form tensor_ops' `_pick` gives gather and tensor indices once rangeify reads their
position tables as the index: runtime/buffer.py's `Positions`), `a` not depending on r. Out: the
same sum without r, r replaced by `a` where 0 <= a < n and by 0 elsewhere, or None.

Why it is exact: at most one j in 0..n-1 equals a, so the sum over r is that one term plus
terms z, and z is the identity the sum starts from (-0.0 for floats: x + -0.0 is x for every x,
-0.0 and NaN included; 0 for ints; False for bools). With the compare kept, it is true exactly
where a is in range (j = a there; elsewhere j = 0 != a), so an index out of range gives z, as
the unfolded sum did, and every load reads at an index in 0..n-1: never out of bounds.
"""

from __future__ import annotations

import math

from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


def _is_start(v: object, dt: DType) -> bool:
    """v is the value a picking sum starts from and adds for an unpicked term."""
    if dt is dtypes.bool:
        return v is False
    if dt.is_float:
        return v == 0 and math.copysign(1.0, v) < 0  # -0.0, not +0.0
    return v == 0 and not isinstance(v, bool)


def _conjuncts(c: UOp) -> list[UOp]:
    """The terms of an AND tree (iterative)."""
    out, todo = [], [c]
    while todo:
        n = todo.pop()
        if n.op is Ops.AND and n.dtype is dtypes.bool:
            todo.extend(n.src)
        else:
            out.append(n)
    return out


def _range_of(q: UOp, ranges: tuple[UOp, ...]) -> UOp | None:
    """The range of `ranges` that q is, through integer casts that keep all its values."""
    while q.op is Ops.CAST and q.dtype.is_int and q.src[0].dtype.is_int:
        q = q.src[0]
    if q.op is not Ops.RANGE or q not in ranges:
        return None
    return q


def _casts_exact(q: UOp, n: int) -> bool:
    while q.op is Ops.CAST:
        if q.dtype.max < n - 1:
            return False
        q = q.src[0]
    return True


def _key(c: UOp, ranges: tuple[UOp, ...]) -> tuple[UOp, UOp] | None:
    """(a, r) for a compare a == CAST(r) (either order), a free of r, r of `ranges`."""
    if c.op is not Ops.CMPEQ:
        return None
    for q, a in (c.src, c.src[::-1]):
        r = _range_of(q, ranges)
        if r is None or not a.dtype.is_int:
            continue
        n = r.src[0].arg
        if not isinstance(n, int) or n < 1 or not _casts_exact(q, n):
            continue
        if r in a.toposort():
            continue
        return a, r
    return None


def picked_load(red: UOp) -> UOp | None:
    """The REDUCE `red` with one picking range folded away (module docstring), or None."""
    if red.arg is not Ops.ADD:
        return None
    body, ranges = red.src[0], red.src[1:]
    acc = None
    if body.op is Ops.ADD and any(s.op is Ops.DEFINE_REG for s in body.src):
        # the loop form (a start of its own, runtime/ops.py's reduce_start): ADD(acc, term)
        acc = next(s for s in body.src if s.op is Ops.DEFINE_REG)
        term = next(s for s in body.src if s is not acc)
        if acc.src != ranges or not _is_start(acc.arg, red.dtype):
            return None
    else:
        term = body
        if red.dtype.is_float:  # (a plain float sum starts at +0.0: a picked -0.0 would change)
            return None
    zero = term.src[2] if term.op is Ops.WHERE else None
    if zero is None or zero.op is not Ops.CONST or not _is_start(zero.arg, red.dtype):
        return None
    for c in _conjuncts(term.src[0]):
        found = _key(c, ranges)
        if found is None:
            continue
        a, r = found
        e = a.cast(dtypes.index)
        n = r.src[0].arg
        inside = UOp.const(dtypes.index, -1).lt(e) & e.lt(n)
        picked = term.substitute({r: inside.where(e, UOp.const(dtypes.index, 0))})
        rest = tuple(x for x in ranges if x is not r)
        if not rest:
            return picked
        if acc is None:
            return UOp(Ops.REDUCE, red.dtype, (picked, *rest), Ops.ADD)
        acc = acc.replace(src=rest)  # (an accumulator's sources are its REDUCE's ranges)
        step = body.replace(src=tuple(acc if s.op is Ops.DEFINE_REG else picked for s in body.src))
        return UOp(Ops.REDUCE, red.dtype, (step, *rest), Ops.ADD)
    return None
