"""Helpers of `lower.rules`: small facts and the one rewrite a template would spell too long.

In: UOps and Python ints (constant arguments). Out: UOps, ints or bools.
"""

from __future__ import annotations

from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


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
