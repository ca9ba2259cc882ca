"""Helpers of `symbolic.rules`: constant folding with the target's integer semantics.

In: an op, the dtype its operands have, and the operands' Python values. Out: the value the
op computes on the target (C: two's-complement wraparound at the dtype's width, IDIV truncating
toward zero, MOD with the sign of the dividend), or None when the result is undefined in C or
not an integer/bool computation (the rule then does not fire). `index` is the 64-bit signed
type of index math.
"""

from __future__ import annotations

from typing import Any

from rulegrad.runtime.dtype import DType
from rulegrad.runtime.ops import Ops


def wrap(dtype: DType, value: int) -> int | bool:
    """`value` reduced to `dtype` the way C stores it (two's complement)."""
    if dtype.is_bool:
        return bool(value)
    bits = 8 * dtype.itemsize
    value &= (1 << bits) - 1
    if dtype.kind in "ix" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _cmod(a: int, b: int) -> int:
    return a - b * _cdiv(a, b)


def fold_alu(op: Ops, dtype: DType, *args: Any) -> int | bool | None:
    """The value of `op(*args)` on operands of `dtype` (ints and bools only), or None."""
    if not (dtype.is_int or dtype.is_bool) or any(isinstance(a, float) for a in args):
        return None
    x = [int(a) for a in args]
    bits = 8 * dtype.itemsize
    if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ):
        a, b = x
        return a < b if op is Ops.CMPLT else (a != b if op is Ops.CMPNE else a == b)
    if op is Ops.NEG and not dtype.is_bool:
        return wrap(dtype, -x[0])
    if len(x) != 2:
        return None
    a, b = x
    if op is Ops.ADD:
        v = a + b
    elif op is Ops.SUB:
        v = a - b
    elif op is Ops.MUL:
        v = a * b
    elif op in (Ops.IDIV, Ops.MOD):
        if b == 0 or (dtype.kind in "ix" and a == -(1 << (bits - 1)) and b == -1):
            return None  # division by zero, INT_MIN / -1: undefined in C
        v = _cdiv(a, b) if op is Ops.IDIV else _cmod(a, b)
    elif op is Ops.MAX:
        v = max(a, b)
    elif op is Ops.MIN:
        v = min(a, b)
    elif op is Ops.AND:
        v = a & b
    elif op is Ops.OR:
        v = a | b
    elif op is Ops.XOR:
        v = a ^ b
    elif op in (Ops.SHL, Ops.SHR):
        if not 0 <= b < bits or (op is Ops.SHL and a < 0):
            return None  # out-of-range shifts and shifting negatives left are undefined
        v = a << b if op is Ops.SHL else a >> b
    else:
        return None
    return wrap(dtype, v)


def cast_value(to: DType, frm: DType, value: Any) -> int | bool | None:
    """A constant cast between integer/bool dtypes, as C converts it; None otherwise."""
    if not (to.is_int or to.is_bool) or not (frm.is_int or frm.is_bool):
        return None
    return bool(value) if to.is_bool else wrap(to, int(value))

