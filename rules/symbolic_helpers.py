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

import math
from typing import Any

from rulegrad.runtime.dtype import DType
from rulegrad.runtime.loops import linear_terms
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.semantics import defined
from rulegrad.runtime.uop import UNSET, UOp

_ADD, _MUL, _CONST = Ops.ADD, Ops.MUL, Ops.CONST


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


def _linear(x: UOp) -> tuple[dict[UOp, int], int] | None:
    """x as a sum of terms k * atom (in the order met, one per atom) plus a constant, ADDs and
    MULs by constants walked through (runtime/loops.py's `linear_terms`); None when a
    coefficient or the constant is negative."""
    terms: dict[UOp, int] = {}
    const = 0
    for n, k in linear_terms(x):
        if n.op is _CONST and type(n.arg) is int:
            const += k * n.arg
        else:
            terms[n] = terms.get(n, 0) + k
    if const < 0:
        return None
    for k in terms.values():
        if k < 0:
            return None
    return terms, const


Terms = tuple[int, tuple[tuple[UOp, int, int], ...]]


def _derive_terms(x: UOp) -> Terms | None:
    """x as b + sum of k * atom with b, every k and every atom's vmin >= 0: (b, ((atom, k,
    atom's vmax), ...)), the atoms in the order met; None when x is not such a sum."""
    if x.op is _ADD or x.op is _MUL:
        found = _linear(x)
        if found is None:
            return None
        terms, b = found
    elif x.op is _CONST and type(x.arg) is int:  # (what `_linear` says, without a walk)
        terms, b = {}, x.arg
        if b < 0:
            return None
    else:
        terms, b = {x: 1}, 0
    out = []
    for a, k in terms.items():
        lo, hi = a._bounds_()
        if lo < 0:
            return None
        out.append((a, k, hi))
    return b, tuple(out)


def fold_divmod(e: UOp) -> UOp | None:
    """x // c and x % c (index math, c > 0) for x a sum of terms k * atom, atoms and k >= 0,
    plus a constant b >= 0, whose parts below c (each atom times k % c, plus b % c) stay below
    c together: then x = c * (sum of atom * (k // c), plus b // c) + rest with 0 <= rest < c,
    so x // c is that sum and x % c is rest (C's division of a non-negative x is the floor).
    A flattened index split back into coordinates, ((r0 * 961 + r1 * 31 + r2) // 31) % 31 ->
    r1, as the kernelize scheduler's reshapes make them. None (no rewrite) otherwise."""
    # (tried on every IDIV and MOD of index math, on every pass, and most do not fold: the
    # answer, a pure function of the node, is kept on it in `UOp.memo`, so a node seen again
    # costs a slot read; a dividend's terms are kept on it too, as x // c and x % c of one x
    # are common and a walk of the sum per attempt cost more than the rest of the matcher)
    memo = e.memo
    if memo is not UNSET and memo[0] is _ANSWER:
        return memo[1]
    out = _fold_divmod(e)
    e.memo = (_ANSWER, out)
    return out


# the keys of this module's entries in `UOp.memo`: fold_divmod's answer on an IDIV or MOD node,
# `_derive_terms` on an ADD or MUL dividend (so one node never holds both)
_ANSWER, _TERMS = object(), object()


def _terms_of(x: UOp) -> Terms | None:
    if x.op is not _ADD and x.op is not _MUL:  # no walk to save
        return _derive_terms(x)
    memo = x.memo
    if memo is not UNSET and memo[0] is _TERMS:
        return memo[1]
    found = _derive_terms(x)
    x.memo = (_TERMS, found)
    return found


def _fold_divmod(e: UOp) -> UOp | None:
    x, c = e.src[0], e.src[1].arg
    if type(c) is not int or c <= 0:
        return None
    found = _terms_of(x)
    if found is None:
        return None
    b, terms = found
    below = b % c
    for _, k, hi in terms:
        below += (k % c) * hi
    if below >= c:
        return _fold_common_factor(e, x, c, b, terms)
    if e.op is Ops.IDIV:
        parts, rest = [(a, k // c) for a, k, _ in terms if k >= c], b // c
    else:
        parts, rest = [(a, k % c) for a, k, _ in terms if k % c], b % c
    out: UOp | None = None
    for a, k in parts:
        term = a if k == 1 else a * a.const_like(k)
        out = term if out is None else out + term
    if rest or out is None:
        const = x.const_like(rest)
        out = const if out is None else out + const
    return out


def congruent(x: UOp, y: UOp, c: int) -> bool:
    """Whether x and y (index math) are non-negative sums of terms (`_terms_of`) that differ by
    a multiple of c, term by term and in their constants: then x % c == y % c (C's % of a
    non-negative value is the remainder). fold_divmod turns x % c into such a y (the terms
    below c) where it cannot fold x // c: a flattened (rows, 2) view of a 64-wide run,
    ((t * 64 + l) // 2) * 2 + l % 2, is t * 64 + l (divmod_recombine_sum)."""
    fx, fy = _terms_of(x), _terms_of(y)
    if fx is None or fy is None or (fx[0] - fy[0]) % c:
        return False
    diff = {a: k for a, k, _ in fx[1]}
    for a, k, _ in fy[1]:
        diff[a] = diff.get(a, 0) - k
    return all(k % c == 0 for k in diff.values())


def _fold_common_factor(e: UOp, x: UOp, c: int, b: int,
                        terms: tuple[tuple[UOp, int, int], ...]) -> UOp | None:
    """x // c and x % c when x = g * y + rest, g a divisor of c that divides the big terms'
    coefficients, and the other terms with b % g stay below g (0 <= rest < g): then
    x // c = y // (c / g) and x % c = (y % (c / g)) * g + rest. A group's index over a
    flattened (channel, pixel) row, (r0 * 81 + r1 * 9 + r2) // 243 -> r0 // 3 (groupnorm with
    3 channels of 9x9 a group): the index now reads only the channel loop, so a reduction read
    there is computed once per channel, not once per pixel. The largest such g is tried first
    (the fewest terms left in y); None when there is none."""
    for g in sorted({math.gcd(c, k) for _, k, _ in terms if 1 < math.gcd(c, k) < c},
                    reverse=True):
        below = b % g
        for _, k, hi in terms:
            below += (k % g) * hi
        if below >= g:
            continue
        y: UOp | None = None
        for a, k, _ in terms:
            if k >= g:  # k // g: the part of k that is a multiple of g (the rest is in below)
                term = a if k // g == 1 else a * a.const_like(k // g)
                y = term if y is None else y + term
        if b >= g:
            y = x.const_like(b // g) if y is None else y + x.const_like(b // g)
        if y is None:  # every term below g: idiv_in_range's and mod_in_range's case
            return None
        q = x.const_like(c // g)
        if e.op is Ops.IDIV:
            return y // q
        rest: UOp | None = None
        for a, k, _ in terms:
            if k % g:
                term = a if k % g == 1 else a * a.const_like(k % g)
                rest = term if rest is None else rest + term
        if b % g:
            rest = x.const_like(b % g) if rest is None else rest + x.const_like(b % g)
        out = (y % q) * x.const_like(g)
        return out if rest is None else out + rest
    return None
