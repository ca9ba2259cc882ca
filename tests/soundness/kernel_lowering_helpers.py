"""Helpers of kernel_lowering.rules: lower.rules' real helpers, and a wrong gated load.

(`use rulegrad.rules....` does not parse: `rules` is a keyword of the language, so the fixture
names a module beside itself instead.)
"""

from __future__ import annotations

from rulegrad.rules.lower_helpers import gated_load, in_float32, is_loop, reduce_loop
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


def gated_load_alt_one(load: UOp, index: UOp) -> UOp:
    """gated_load, but 1 where the gate is off."""
    b, off, valid = index.src
    plain = UOp(Ops.INDEX, index.dtype, (b, off))
    return UOp(Ops.LOAD, load.dtype, (plain, valid, UOp.const(load.dtype, 1)))


__all__ = ["gated_load", "gated_load_alt_one", "in_float32", "is_loop", "reduce_loop"]
