"""Helpers of sharded_views.rules: the real helpers of multi.rules and kernelize.rules, and
deliberately wrong variants of them, each the mistake a rule author makes.

(`use rulegrad.rules....` does not parse: `rules` is a keyword of the language, so the fixture
names a module beside itself instead.)
"""

from __future__ import annotations

from rulegrad.rules.multi_helpers import gather, mop_multi, push_mselect, reduce_multi
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp
from rulegrad.runtime.view import ShapeTracker, View


def mop_multi_unshifted(x: UOp, m: UOp) -> UOp:
    """mop_multi, but a PERMUTE keeps the sharded axis's number (it forgets to move it)."""
    if x.op is Ops.PERMUTE and m.arg[0] is not None:
        return UOp(Ops.MULTI, x.dtype, (m.src[0].permute(x.arg),), m.arg)
    return mop_multi(x, m)


def reduce_multi_local(r: UOp, m: UOp) -> UOp:
    """reduce_multi without the all-reduce: over the sharded axis each device keeps its own
    partial result, called a replica."""
    (axis, devs), axes = m.arg, r.arg[1]
    if axis is not None and axis in axes:
        return UOp(Ops.MULTI, r.dtype, (r.replace(src=(m.src[0],)),), (None, devs))
    return reduce_multi(r, m)


def gather_reversed(m: UOp, d: UOp) -> UOp:
    """gather with the devices' parts joined in reverse order."""
    devs, v = m.arg[1], m.src[0]
    stack = UOp(Ops.MSTACK, v.dtype, tuple(UOp(Ops.MSELECT, v.dtype, (v,), i)
                                           for i in reversed(range(len(devs)))), devs)
    return gather(UOp(Ops.MULTI, m.dtype, (stack,), m.arg), d)


def push_mselect_next(x: UOp, i: int) -> UOp:
    """push_mselect, but the part of the next device."""
    n = len(x.src[0].arg) if x.src and x.src[0].op is Ops.MSTACK else 2
    return push_mselect(x, (i + 1) % n)


def view_swapped(x: UOp, m: UOp) -> UOp:
    """VIEW of a movement op whose top view has its first two strides swapped."""
    st = ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg)
    top = st.views[-1]
    strides = top.strides[1::-1] + top.strides[2:] if len(top.strides) >= 2 else top.strides
    bad = ShapeTracker(st.views[:-1] + (View(top.shape, strides, top.offset, top.mask),))
    return UOp(Ops.VIEW, m.dtype, (x,), bad)


__all__ = ["gather", "gather_reversed", "mop_multi", "mop_multi_unshifted", "push_mselect",
           "push_mselect_next", "reduce_multi", "reduce_multi_local", "view_swapped"]
