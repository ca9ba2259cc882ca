"""Helpers of `lower.rules`: small facts and the one rewrite a template would spell too long.

In: UOps and Python ints (constant arguments). Out: UOps, ints or bools.
"""

from __future__ import annotations

import math

from rulegrad.rules.choices import taken
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import stride
from rulegrad.runtime.ops import Ops, reduce_identity
from rulegrad.runtime.uop import UOp, toposort


def is_pow2(value: object) -> bool:
    """True for the positive powers of two 1, 2, 4, ... (bools are not numbers here)."""
    return type(value) is int and value > 0 and value & (value - 1) == 0


def log2_int(like: UOp, value: int) -> UOp:
    """The constant k with 2**k == value, in `like`'s dtype (a shift amount)."""
    return like.const_like(value.bit_length() - 1)


def in_float32(e: UOp) -> UOp:
    """`e` (float16) computed in float32 and rounded back once: its float16 sources are cast up.

    Only the value sources of a REDUCE (the first) are cast; its ranges stay as they are."""
    nvalue = 1 if e.op is Ops.REDUCE else len(e.src)
    src = tuple(s.cast(dtypes.float32) if i < nvalue and s.dtype is dtypes.float16 else s
                for i, s in enumerate(e.src))
    return e.replace(src=src, dtype=dtypes.float32).cast(dtypes.float16)


def constant_reduce(r: UOp) -> UOp | None:
    """The value of REDUCE(c, *ranges) for a constant c over loops that each run at least once,
    where the op gives c back both from its identity and from c itself (so the count does not
    matter): a max or min of c, a sum of zeros, a product of ones (or of integer zeros), any op
    over bools. None otherwise: a loop then computes it. Folded before lowering, because the
    loop form's body `acc op c` is what the optimizer's symbolic rules would fold to acc (x + 0,
    x * 1) or to c (an integer x * 0), leaving a loop that no longer combines its accumulator."""
    c = r.src[0]
    if c.op is not Ops.CONST or any(rng.src[0].vmin < 1 for rng in r.src[1:]):
        return None
    v, floating = c.arg, c.dtype.is_float
    if c.dtype is dtypes.bool or r.arg in (Ops.MAX, Ops.MIN):
        return c
    if r.arg is Ops.ADD and v == 0 and not (floating and math.copysign(1.0, v) < 0):
        return c  # (a float sum of -0.0s from the identity +0.0 is +0.0: left to the loop)
    if r.arg is Ops.MUL and (v == 1 or (v == 0 and not floating)):
        return c  # (a float product of zeros alternates the sign of -0.0: left to the loop)
    return None


def is_loop(r: UOp) -> bool:
    """True for a REDUCE already in loop form: its value combines a DEFINE_REG accumulator."""
    v = r.src[0]
    return bool(v.src) and v.src[0].op is Ops.DEFINE_REG


def reduce_loop(r: UOp, start: object = None) -> UOp:
    """REDUCE(v, *ranges, arg=op) as its loop: REDUCE(op(acc, v), *ranges), where the
    accumulator `acc` is DEFINE_REG(*ranges) holding the op's identity (its arg), or `start`
    (a REDUCE_AXIS's own start, see runtime/ops.py: a pick's sum from -0.0): a renderer
    declares it, runs the ranges' loops assigning the combined value, and reads it after.

    float16 accumulates in float32 and is rounded once at the end, as numpy's half loops keep
    a float accumulator. The DEFINE_REG's sources are the ranges, so nested reduces (other
    ranges) never share an accumulator."""
    ranges = r.src[1:]
    dt = dtypes.float32 if r.dtype is dtypes.float16 else r.dtype
    acc = UOp(Ops.DEFINE_REG, dt, ranges, reduce_identity(r.arg, dt) if start is None else start)
    v = r.src[0] if r.src[0].dtype is dt else r.src[0].cast(dt)
    loop = UOp(Ops.REDUCE, dt, (acc.alu(r.arg, v), *ranges), r.arg)
    return loop if dt is r.dtype else loop.cast(r.dtype)


def gated_load(load: UOp, index: UOp) -> UOp:
    """LOAD(INDEX(b, off, valid)) as LOAD(INDEX(b, off), valid, 0): memory is read only where
    the gate holds; elsewhere the value is the pad value 0."""
    b, off, valid = index.src
    plain = UOp(Ops.INDEX, index.dtype, (b, off))
    return UOp(Ops.LOAD, load.dtype, (plain, valid, UOp.const(load.dtype, 0)))


def unnested(red: UOp) -> UOp | None:
    """A loop-form reduce whose update combines another loop-form reduce by the same op (ADD,
    MAX or MIN), both from the op's identity, as one reduce over both's ranges, in the order
    of their axes (range ids): a split reduction's partials fused back into one kernel
    (1021 x 64 rows to 15 maxima) ran the 1021 rows 960 apart innermost and the contiguous 64
    outside them, 0.28x torch's time. Exact for MAX, MIN and ints; a float sum's order is the
    reduction contract's. None when `red` is not such a nest."""
    update = red.src[0]
    if red.arg not in (Ops.ADD, Ops.MAX, Ops.MIN) or not is_loop(red) or len(update.src) != 2:
        return None
    inner = update.src[1]
    if inner.op is not Ops.REDUCE or inner.arg is not red.arg or inner.dtype is not red.dtype \
            or not is_loop(inner) or update.op is not red.arg or inner.src[0].op is not red.arg:
        return None
    if not all(from_identity(r) for r in (red, inner)):
        return None
    # only where the contiguous axis is the outer one's: a batch norm's sum over N of sums along
    # each image's H*W run stays a nest (interchange_helpers runs the channels between the two)
    steps = [(stride(i, inner.src[-1]), stride(i, red.src[-1]))
             for i in (n.src[0].src[1] for n in toposort(inner) if n.op is Ops.LOAD)]
    if not steps or any(a == 1 for a, _ in steps) or not any(b == 1 for _, b in steps):
        return None
    ranges = sorted((*inner.src[1:], *red.src[1:]), key=lambda r: r.arg[0])
    taken(f"UNNEST {red.arg.name} over {' '.join(f'r{r.arg[0]}' for r in inner.src[1:])} into "
          f"the reduce over {' '.join(f'r{r.arg[0]}' for r in red.src[1:])}")
    return reduce_loop(UOp(Ops.REDUCE, red.dtype, (inner.src[0].src[1], *ranges), red.arg))


def from_identity(red: UOp) -> bool:
    """A loop-form reduce whose accumulator starts at its op's identity (a +0.0 sum, not a
    pick's -0.0)."""
    acc, ident = red.src[0].src[0].arg, reduce_identity(red.arg, red.dtype)
    return acc == ident and math.copysign(1.0, acc) == math.copysign(1.0, ident)
