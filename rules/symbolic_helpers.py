"""Helpers of `symbolic.rules`: constant folding with the IR's integer semantics.

In: an op, the dtype its operands have, and the operands' Python values. Out: the value the
op computes (runtime/semantics.py's table: two's-complement wraparound at the dtype's width,
IDIV truncating toward zero, MOD with the sign of the dividend, x // 0 == x % 0 == 0, INT_MIN
// -1 == INT_MIN, shifts by a count outside the width give 0 or the sign), or None when it is
not an integer/bool computation or not one this folder knows (POW, floats): the rule then does
not fire. `index` is the 64-bit signed type of index math. tests/test_semantics.py checks every
value it returns against the table.
"""

from __future__ import annotations

from typing import Any

from rulegrad.runtime.dtype import DType
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.semantics import defined


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
    if not defined(op, "i" if dtype.kind == "x" else dtype.kind):
        return None  # not an op on this dtype (IDIV of bools, ...)
    x = [int(a) for a in args]
    bits = 8 * dtype.itemsize
    if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ):
        a, b = x
        return a < b if op is Ops.CMPLT else (a != b if op is Ops.CMPNE else a == b)
    if op is Ops.NEG:  # a bool's 0/1 negated is != 0 exactly when it was: the identity
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
        # by zero: 0; INT_MIN // -1 is 2**(bits-1) here and wraps to INT_MIN below
        v = 0 if b == 0 else _cdiv(a, b) if op is Ops.IDIV else _cmod(a, b)
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
        if 0 <= b < bits:
            v = a << b if op is Ops.SHL else a >> b  # Python's >> of a negative a is arithmetic
        else:  # a count outside the width: everything shifted out
            v = -1 if op is Ops.SHR and a < 0 else 0
    else:
        return None
    return wrap(dtype, v)


def cast_value(to: DType, frm: DType, value: Any) -> int | bool | None:
    """A constant cast between integer/bool dtypes (wraps; to bool is != 0); None otherwise."""
    if not (to.is_int or to.is_bool) or not (frm.is_int or frm.is_bool):
        return None
    return bool(value) if to.is_bool else wrap(to, int(value))

