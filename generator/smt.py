"""Prove a rule with z3: its left side, guard and right side translated to SMT.

In: one checked `Rule` (dsl/ast.py) and the names of the helpers its file declares. Out: a
`Proof` whose verdict is `proved` (the guard implies lhs == rhs for every dtype the pattern
admits), `refuted` (with a counterexample: the instantiated left side as a small UOp graph and
the values of both sides), `unknown` (z3 gave up or ran out of its resource limit; never a
pass), or `untranslatable` (the rule uses something this module cannot state; the caller falls
back to evaluation on drawn examples).

The semantics are those of runtime/ops.py and the numpy oracle:
- `index` is C's int64 (what the kernels compute it in): its leaves, bounds and constants are
  int64 values, and its arithmetic is assumed not to overflow (every index node's value lies in
  int64; a proof that rests on this says so in its detail); sized integers are z3 Ints
  wrapped to their width after every operation (numpy wraps); IDIV/MOD truncate toward zero
  like C, and x // 0 == x % 0 == 0 (runtime/semantics.py, the table every op here follows);
- `vmin`/`vmax` are trusted for `index` expressions and for leaves only: a sized integer op
  wraps, and its derived bounds (clamped to the dtype) need not contain its value;
- bools are z3 Bools; floats are IEEE z3 FP terms of their width, and equal means identical
  bits with every NaN identified (NaN equals NaN, -0.0 is not 0.0), as in the evaluation
  checks; a rule marked `# check: ulp N` may differ by up to N units in the last place;
- float ops with no exact SMT meaning (EXP, LOG, SIN, ...) are uninterpreted functions: a proof
  through them holds for any function, a counterexample through them may be spurious, so such a
  counterexample is reported as `untranslatable` and left to the evaluation checks; so is a
  guard's `x.op is Ops.K` of a capture of any node, a free Bool (`x.op is not Ops.DEFINE_REG`
  narrows a proved rule, and stays proved).

A pattern stands for many concrete left sides: every op of an op set, both source orders of a
commutative `[a, b]`, and every dtype its constraints admit (dtypes flow through the ops: an
ADD's sources share its dtype, a comparison gives bool, ...). Each combination is one *case*;
the rule is proved when every case is. A capture is a free variable; `x.vmin`/`x.vmax` are
fresh variables constrained to contain x's value (the bounds derivation in runtime/uop.py is
trusted, and checked separately by the evaluation checks); a CONST's `arg` is the Python value
(a float is the value its dtype holds, as UOp.const rounds it, widened to float64), so guard
arithmetic on args follows Python (`//` floors).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import z3

from rulegrad.dsl import ast as A
from rulegrad.dsl.names import BUILTINS, resolve_dtype, resolve_ops
from rulegrad.runtime.dtype import DTYPES, DType, dtypes
from rulegrad.runtime.ops import ARITY, GroupOp, Ops
from rulegrad.runtime.semantics import DOMAIN, operand_dtypes
from rulegrad.runtime.uop import UOp, const_value

from .fp_abstract import abstracted, leaves
from .limits import ABSTRACT_SHARE, DEFAULT_RLIMIT, RULE_RLIMIT_FACTOR

MAX_CASES = 400  # op x order x dtype combinations tried per rule before giving up (unknown)
# A float IDIV or MOD case is left to the examples (which draw it like every other cell): z3
# has its terms (World._float_alu, swept cell by cell by tests/test_semantics.py), but a query
# that bit-blasts a float division takes minutes whatever its resource limit (z3 counts little
# of the bit-blasting), and rarely settles (`fmod(fmod(x, c), c)` does not at 10x the default)
FLOAT_DIV_NOTE = "float IDIV/MOD cases are left to the examples"
INDEX_NOTE = "index assumed not to overflow int64"


class Untranslatable(Exception):
    """The rule uses something with no SMT meaning here; evaluate it on examples instead."""


@dataclass
class Proof:
    verdict: str  # proved | refuted | unknown | untranslatable
    detail: str = ""
    counterexample: str | None = None
    cases: int = 0
    # the counterexample's left side as a UOp graph and its variables' values, so that it can
    # be replayed on the numpy oracle (an independent confirmation)
    instance: tuple[UOp, dict[str, int]] | None = None
    rlimit_used: int = 0  # z3's resource units spent on the rule (the same on every run)
    # proved only because nothing matches: no value the pattern's dtypes hold matches its
    # literals and passes its guard in any case (`c.arg == 0.1` on a float32 constant, whose
    # arg is 0.10000000149011612), so the rule can never fire
    never_fires: bool = False


# ---------------------------------------------------------------------- dtypes and values
ALL_DTYPES: tuple[DType, ...] = DTYPES + (dtypes.index,)
# the ops with an SMT meaning (plus uninterpreted float functions); a pattern with any other op
# is tensor- or kernel-level and is checked by evaluation
_UF_OPS = frozenset({Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS, Ops.POW})
_LEAF_OPS = frozenset({Ops.CONST, Ops.RANGE, Ops.DEFINE_VAR})
SMT_OPS = GroupOp.ALU | {Ops.CAST} | _LEAF_OPS
# dtype domain of each op's (shared) operand dtype
_NUMERIC = frozenset(d for d in ALL_DTYPES if not d.is_bool)
_INTS = frozenset(d for d in ALL_DTYPES if d.is_int)
# the dtypes each op computes on: runtime/semantics.py's DOMAIN, the one table of (op, dtype)
# the IR spec and the oracle read too (float IDIV/MOD, int POW and TRUNC, bool SUB and NEG
# included), and the leaves' own
OPERAND_DOMAIN: dict[Ops, frozenset[DType]] = {
    **{op: operand_dtypes(op) for op in DOMAIN},
    Ops.RANGE: frozenset({dtypes.index}), Ops.DEFINE_VAR: _INTS,
}
_FP_SORTS = {"float16": (5, 11), "float32": (8, 24), "float64": (11, 53)}


def fp_sort(dt: DType) -> z3.FPSortRef:
    return z3.FPSort(*_FP_SORTS[dt.name])


F64 = z3.FPSort(11, 53)
RNE = z3.RNE()


def fresh_context() -> None:
    """Give the next rule a z3 context of its own: z3's work on a query depends on what its
    context saw before, so a shared context would let the order of rules change verdicts."""
    global F64, RNE
    z3.z3._main_ctx = None  # z3.main_ctx() makes a new one on its next use
    F64, RNE = z3.FPSort(11, 53), z3.RNE()


def wrap(dt: DType, v: z3.ArithRef) -> z3.ArithRef:
    """The value of a mathematical integer stored in `dt` (numpy wraps; index never does)."""
    if dt is dtypes.index:
        return v
    bits = dt.itemsize * 8
    if dt.is_unsigned:
        return v % (1 << bits)
    half = 1 << (bits - 1)
    return (v + half) % (1 << bits) - half


class Wrapper:
    """Wrapping as `v - k * 2**bits` with a fresh k and the result in range: linear in k, which
    z3 handles far better than `%` when v is itself a product (signed int32/int64 cases)."""

    def __init__(self, facts: list[z3.BoolRef], counter: Any):
        self.facts, self.counter = facts, counter
        self.index_arith = False  # whether a proof rests on index not overflowing

    def __call__(self, dt: DType, v: z3.ArithRef) -> z3.ArithRef:
        if dt is dtypes.index:
            if not z3.is_int_value(v):  # C computes index in int64: assume it never overflows
                self.facts.append(in_range(dt, v))
                self.index_arith = True
            return v
        if z3.is_int_value(v):
            return z3.simplify(wrap(dt, v))
        k = z3.Int(f"wrap!{next(self.counter)}")
        w = v - k * (1 << (dt.itemsize * 8))
        self.facts.append(in_range(dt, w))
        return w


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def in_range(dt: DType, v: z3.ArithRef) -> z3.BoolRef:
    if dt is dtypes.index:  # int64 in C
        return z3.And(v >= INT64_MIN, v <= INT64_MAX)
    return z3.And(v >= int(dt.min), v <= int(dt.max))


def trunc_div(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    """C division: the quotient truncated toward zero (z3's `/` is Euclidean)."""
    if z3.is_int_value(b) and b.as_long() != 0:
        # a constant divisor keeps the term linear (no `If` over it to divide by), which z3
        # decides where the general form ran out of its resource limit (`x // 2 -> x >> 1`)
        c = b.as_long()
        q = z3.If(a >= 0, a / abs(c), -((-a) / abs(c)))
        return q if c > 0 else -q
    qa = z3.If(a >= 0, a, -a) / z3.If(b >= 0, b, -b)
    return z3.If((a >= 0) == (b >= 0), qa, -qa)


def floor_div(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    """Python's `//` (toward minus infinity)."""
    return z3.If(b > 0, a / b, (-a) / (-b))


def to_bool(v: Any) -> z3.BoolRef:
    """Python truthiness of a value of the symbolic world."""
    if isinstance(v, z3.BoolRef):
        return v
    if isinstance(v, z3.FPRef):
        return z3.Not(z3.fpIsZero(v))
    if isinstance(v, (z3.ArithRef, z3.BitVecRef)):
        return v != 0
    if isinstance(v, (bool, int, float, str, tuple, list, type(None))):
        return z3.BoolVal(bool(v))
    raise Untranslatable(f"truth value of {type(v).__name__}")


def same_value(dt: DType, a: Any, b: Any, ulp: int = 0) -> z3.BoolRef:
    """Equality as the evaluation checks compare: identical bits, every NaN identified (z3's
    `==` on floats is SMT-LIB's `=`: -0.0 differs from 0.0, NaN equals NaN; `fpEQ` would say
    the opposite of both). With `ulp` N, finite floats may be N units in the last place apart;
    two zeros still need one sign (a tolerance is for rounding, and no rounding flips it)."""
    if not dt.is_float or ulp == 0:
        return a == b
    nan_a, nan_b = z3.fpIsNaN(a), z3.fpIsNaN(b)
    inf = z3.Or(z3.fpIsInf(a), z3.fpIsInf(b), z3.And(z3.fpIsZero(a), z3.fpIsZero(b)))
    gap = _ordinal(a) - _ordinal(b)
    close = z3.And(gap <= ulp, gap >= -ulp)  # signed bit-vector comparisons
    return z3.Or(z3.And(nan_a, nan_b),
                 z3.And(z3.Not(nan_a), z3.Not(nan_b), z3.If(inf, a == b, close)))


def _ordinal(v: z3.FPRef) -> z3.BitVecRef:
    """A non-NaN float's place on the line of floats, as a signed bit-vector two bits wider
    than the float (room for the difference of two): consecutive floats differ by 1."""
    bv = z3.fpToIEEEBV(v)
    width = bv.size()
    mag = z3.ZeroExt(3, z3.Extract(width - 2, 0, bv))
    return z3.If(z3.Extract(width - 1, width - 1, bv) == 1, -mag, mag)


# ---------------------------------------------------------------------- symbolic nodes
@dataclass(eq=False)
class Sym:
    """A node of a symbolic instance: its op (None for an opaque capture), dtype, z3 value."""

    op: Ops | None
    dtype: DType
    val: Any
    srcs: tuple[Sym, ...] | None = None
    arg: Any = None
    name: str | None = None  # the capture name, for counterexamples
    bounds: tuple[Any, Any] | None = None


class World:
    """The z3 variables, side conditions and cached bounds of one case."""

    def __init__(self) -> None:
        self.facts: list[z3.BoolRef] = []  # domains of free variables, bound containment
        self.undefined: list[z3.BoolRef] = []  # conditions under which an op is undefined
        self.uf: dict[tuple[Ops, DType], z3.FuncDeclRef] = {}
        self.used_uf = False
        self.leaves: list[Sym] = []
        self._n = itertools.count()
        self.wrap = Wrapper(self.facts, self._n)

    def fresh(self, dt: DType, hint: str) -> Any:
        name = f"{hint}!{next(self._n)}"
        if dt.is_float:
            return z3.FP(name, fp_sort(dt))
        if dt.is_bool:
            return z3.Bool(name)
        v = z3.Int(name)
        self.facts.append(in_range(dt, v))
        return v

    def as_int(self, dt: DType, v: Any) -> Any:
        """The Int a value of `dt` stands for (a guard's Python view of it)."""
        return v

    def const_val(self, dt: DType, value: Any) -> Any:
        """The z3 value of `UOp.const(dt, value)`, value a Python or z3 value."""
        if dt.is_float:
            if isinstance(value, z3.FPRef):
                return value if value.sort() == fp_sort(dt) else z3.fpToFP(RNE, value, fp_sort(dt))
            if isinstance(value, z3.ArithRef):
                return z3.fpToFP(RNE, z3.ToReal(value), fp_sort(dt))
            if isinstance(value, z3.BoolRef):
                return z3.If(value, z3.FPVal(1.0, fp_sort(dt)), z3.FPVal(0.0, fp_sort(dt)))
            return z3.FPVal(float(value), fp_sort(dt))
        if dt.is_bool:
            return to_bool(value)
        if isinstance(value, z3.BoolRef):
            return z3.If(value, 1, 0)
        if isinstance(value, (z3.FPRef, float)):
            raise Untranslatable("a float value in an integer constant")
        if dt is dtypes.index:
            return value if isinstance(value, z3.ArithRef) else z3.IntVal(int(value))
        # a CONST keeps its arg as given (UOp.const(int8, 128).arg is 128), and the oracle and
        # the C renderer refuse one outside its dtype: a right side that makes one is wrong
        # wherever it does, not wrapped into range
        v = value if isinstance(value, z3.ArithRef) else z3.IntVal(int(value))
        outside = z3.simplify(z3.Not(in_range(dt, v)))
        if not z3.is_false(outside):
            self.undefined.append(outside)
        return v

    def bounds(self, s: Sym) -> tuple[Any, Any]:
        """(vmin, vmax) of a node: exact for constants, else fresh values containing it."""
        if s.bounds is not None:
            return s.bounds
        sized = [x for x in (s, *(s.srcs or ())) if x.dtype.is_int and x.dtype is not dtypes.index]
        if sized and s.op not in _LEAF_OPS:
            # runtime/uop.py clamps the bounds of a wrapping int8..int64 op to its dtype, so
            # they need not contain its value: no proof may rest on them (examples decide)
            raise Untranslatable(f"vmin/vmax of a {sized[0].dtype.name} expression (wraparound)")
        if s.op is Ops.CONST:
            s.bounds = (s.arg, s.arg) if not s.dtype.is_float else (s.val, s.val)
        elif s.dtype.is_float:
            s.bounds = (-math.inf, math.inf)
        elif s.dtype.is_bool:
            lo, hi = z3.Bool(f"vmin!{next(self._n)}"), z3.Bool(f"vmax!{next(self._n)}")
            self.facts += [z3.Implies(lo, s.val), z3.Implies(s.val, hi)]
            s.bounds = (lo, hi)
        else:
            lo, hi = z3.Int(f"vmin!{next(self._n)}"), z3.Int(f"vmax!{next(self._n)}")
            self.facts += [lo <= s.val, s.val <= hi, in_range(s.dtype, lo), in_range(s.dtype, hi)]
            if s.op is Ops.RANGE:
                self.facts += [lo == 0, hi == self.bounds(s.srcs[0])[1] - 1]
            if s.op is Ops.DEFINE_VAR:
                self.facts += [lo == s.arg[1], hi == s.arg[2]]
            s.bounds = (lo, hi)
        return s.bounds

    # ------------------------------------------------------------------ op semantics
    def alu(self, op: Ops, dt: DType, srcs: tuple[Sym, ...]) -> Any:
        """The z3 value of `op` over `srcs`, producing dtype `dt`."""
        v = [s.val for s in srcs]
        sdt = srcs[0].dtype if srcs else dt
        if op is Ops.WHERE:
            return z3.If(to_bool(v[0]), v[1], v[2])
        if op is Ops.CAST:
            return self.cast(sdt, dt, v[0])
        if op is Ops.MULACC:
            return self.alu(Ops.ADD, dt, (Sym(None, dt, self.alu(Ops.MUL, dt, srcs[:2])), srcs[2]))
        if sdt.is_float:
            return self._float_alu(op, sdt, v)
        if sdt.is_bool:
            return self._bool_alu(op, v)
        return self._int_alu(op, sdt, v)

    def _int_alu(self, op: Ops, dt: DType, v: list[Any]) -> Any:
        if op is Ops.ADD:
            return self.wrap(dt, v[0] + v[1])
        if op is Ops.SUB:
            return self.wrap(dt, v[0] - v[1])
        if op is Ops.MUL:
            return self.wrap(dt, v[0] * v[1])
        if op is Ops.NEG:
            return self.wrap(dt, -v[0])
        if op in (Ops.IDIV, Ops.MOD):
            # x // 0 == x % 0 == 0 (runtime/semantics.py): a value, never a vacuous case
            by_zero = v[1] == 0
            q, r = self.divmod(v[0], v[1])
            if op is Ops.MOD or dt is dtypes.index or dt.is_unsigned:
                # |q| <= |a| and |r| < |b|: never wraps
                return z3.If(by_zero, 0, q if op is Ops.IDIV else r)
            # the one quotient that overflows: the most negative value divided by -1
            return z3.If(by_zero, 0,
                         z3.If(z3.And(v[0] == int(dt.min), v[1] == -1), int(dt.min), q))
        if op is Ops.MAX:
            return z3.If(v[0] >= v[1], v[0], v[1])
        if op is Ops.MIN:
            return z3.If(v[0] <= v[1], v[0], v[1])
        if op is Ops.CMPLT:
            return v[0] < v[1]
        if op is Ops.CMPNE:
            return v[0] != v[1]
        if op is Ops.CMPEQ:
            return v[0] == v[1]
        if op in (Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR):
            return self._bitwise(op, dt, v)
        if op is Ops.TRUNC:  # an integer is its own truncation
            return v[0]
        if op is Ops.POW:
            # integer powers have no decidable SMT meaning: uninterpreted, its value in the
            # dtype (a proof holds for every function; a counterexample goes to the examples)
            key = (op, dt)
            if key not in self.uf:
                self.uf[key] = z3.Function(f"POW_{dt.name}", z3.IntSort(), z3.IntSort(),
                                           z3.IntSort())
            self.used_uf = True
            r = self.uf[key](v[0], v[1])
            self.facts.append(in_range(dt, r))
            return r
        raise Untranslatable(f"{op.name} on {dt.name}")

    def divmod(self, a: z3.ArithRef, b: z3.ArithRef) -> tuple[z3.ArithRef, z3.ArithRef]:
        """C's quotient and remainder of a by b: q truncated toward zero, r = a - b*q.

        Written with z3's own integer division (which its solver reasons about far better than
        axioms over fresh variables); the same (a, b) gives the same terms, so z3 sees that
        `(a//b)*b + a%b` is a."""
        q = trunc_div(a, b)
        return q, a - b * q

    def _bitwise(self, op: Ops, dt: DType, v: list[Any]) -> Any:
        # two's complement bit operations on the value's width (index is int64 in C)
        bits = 64 if dt is dtypes.index else dt.itemsize * 8
        if op in (Ops.SHL, Ops.SHR) and dt is not dtypes.index and z3.is_int_value(v[1]):
            return self._shift_by_const(op, dt, v[0], v[1].as_long(), bits)
        a, b = (z3.Int2BV(x, bits) for x in v)
        if op is Ops.AND:
            r = a & b
        elif op is Ops.OR:
            r = a | b
        elif op is Ops.XOR:
            r = a ^ b
        else:
            # a count outside [0, width) shifts everything out: 0, or the sign for SHR
            inside = z3.And(v[1] >= 0, v[1] < bits)
            if op is Ops.SHL:
                r = z3.If(inside, a << b, z3.BitVecVal(0, bits))
            elif dt.is_unsigned:
                r = z3.If(inside, z3.LShR(a, b), z3.BitVecVal(0, bits))
            else:
                r = z3.If(inside, a >> b, z3.If(v[0] < 0, z3.BitVecVal(-1, bits),
                                                 z3.BitVecVal(0, bits)))
        u = z3.BV2Int(r)
        if dt.is_unsigned:
            return u
        return z3.If(u >= (1 << (bits - 1)), u - (1 << bits), u)

    def _shift_by_const(self, op: Ops, dt: DType, x: Any, count: int, bits: int) -> Any:
        """A shift by a constant count in integer arithmetic: x * 2**c wrapped, or x // 2**c
        (floor: the arithmetic shift of a negative value). The same values as the bit-vector
        form, which z3 gave up on when the other side divides (`x // 2 -> x >> 1` on uint32)."""
        if not 0 <= count < bits:
            if op is Ops.SHL or dt.is_unsigned:
                return z3.IntVal(0)
            return z3.If(x < 0, -1, 0)
        if op is Ops.SHL:
            return self.wrap(dt, x * (1 << count))
        return x / (1 << count)  # z3's integer division floors for a positive divisor

    def _bool_alu(self, op: Ops, v: list[Any]) -> Any:
        table = {
            Ops.AND: lambda: z3.And(v[0], v[1]), Ops.MUL: lambda: z3.And(v[0], v[1]),
            Ops.MIN: lambda: z3.And(v[0], v[1]), Ops.OR: lambda: z3.Or(v[0], v[1]),
            Ops.ADD: lambda: z3.Or(v[0], v[1]), Ops.MAX: lambda: z3.Or(v[0], v[1]),
            Ops.XOR: lambda: z3.Xor(v[0], v[1]), Ops.CMPNE: lambda: z3.Xor(v[0], v[1]),
            Ops.CMPEQ: lambda: v[0] == v[1], Ops.CMPLT: lambda: z3.And(z3.Not(v[0]), v[1]),
            # on 0/1, then != 0: a - b is XOR, -a is a
            Ops.SUB: lambda: z3.Xor(v[0], v[1]), Ops.NEG: lambda: v[0],
        }
        if op not in table:
            raise Untranslatable(f"{op.name} on bool")
        return table[op]()

    def _float_alu(self, op: Ops, dt: DType, v: list[Any]) -> Any:
        srt = fp_sort(dt)
        nan = z3.fpNaN(srt)
        if op is Ops.ADD:
            return z3.fpAdd(RNE, v[0], v[1])
        if op is Ops.SUB:
            return z3.fpSub(RNE, v[0], v[1])
        if op is Ops.MUL:
            return z3.fpMul(RNE, v[0], v[1])
        if op is Ops.FDIV:
            return z3.fpDiv(RNE, v[0], v[1])
        if op is Ops.NEG:
            return z3.fpNeg(v[0])
        if op is Ops.SQRT:
            return z3.fpSqrt(RNE, v[0])
        if op is Ops.RECIPROCAL:
            return z3.fpDiv(RNE, z3.FPVal(1.0, srt), v[0])
        if op is Ops.TRUNC:
            return z3.fpRoundToIntegral(z3.RTZ(), v[0])
        if op is Ops.IDIV:  # the rounded quotient, truncated (runtime/semantics.py)
            if dt is dtypes.float16:  # through float32: the float32 quotient is truncated
                f32 = fp_sort(dtypes.float32)
                a, b = (z3.fpToFP(RNE, x, f32) for x in v)
                q = z3.fpRoundToIntegral(z3.RTZ(), z3.fpDiv(RNE, a, b))
                return z3.fpToFP(RNE, q, srt)
            return z3.fpRoundToIntegral(z3.RTZ(), z3.fpDiv(RNE, v[0], v[1]))
        if op is Ops.MOD:
            # C's fmod from IEEE's remainder (quotient rounded to nearest): where the two differ,
            # the remainder has the other sign than the dividend, and one |b| moves it back
            # (exactly: fmod's value is representable)
            a, b = v
            r = z3.fpRem(a, b)
            flip = z3.And(z3.Not(z3.fpIsZero(r)), z3.fpIsNegative(r) != z3.fpIsNegative(a))
            step = z3.If(z3.fpIsNegative(a), z3.fpNeg(z3.fpAbs(b)), z3.fpAbs(b))
            return z3.If(flip, z3.fpAdd(RNE, r, step), r)
        if op in (Ops.MAX, Ops.MIN):
            # NaN propagates (numpy); -0.0 < +0.0 in either order (z3's fpMax leaves the two
            # zeros unspecified, so the tie is spelled out)
            a, b = v
            either_nan = z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b))
            if op is Ops.MAX:
                pick = z3.If(z3.fpEQ(a, b), z3.If(z3.fpIsNegative(a), b, a),
                             z3.If(z3.fpGT(a, b), a, b))
            else:
                pick = z3.If(z3.fpEQ(a, b), z3.If(z3.fpIsNegative(a), a, b),
                             z3.If(z3.fpLT(a, b), a, b))
            return z3.If(either_nan, nan, pick)
        if op is Ops.CMPLT:
            return z3.fpLT(v[0], v[1])
        if op is Ops.CMPNE:
            return z3.Not(z3.fpEQ(v[0], v[1]))
        if op is Ops.CMPEQ:
            return z3.fpEQ(v[0], v[1])
        if op in _UF_OPS:
            key = (op, dt)
            if key not in self.uf:
                self.uf[key] = z3.Function(f"{op.name}_{dt.name}", *([srt] * len(v)), srt)
            self.used_uf = True
            return self.uf[key](*v)
        raise Untranslatable(f"{op.name} on {dt.name}")

    def cast(self, src: DType, dst: DType, v: Any) -> Any:
        if src is dst:
            return v
        if dst.is_bool:
            return to_bool(v)
        if src.is_bool:
            return self.const_val(dst, z3.If(v, 1, 0)) if dst.is_int else z3.If(
                v, z3.FPVal(1.0, fp_sort(dst)), z3.FPVal(0.0, fp_sort(dst)))
        if src.is_int and dst.is_int:
            return self.wrap(dst, v)
        if src.is_int and dst.is_float and src is not dtypes.index:
            # through the int's bits (in range: a sized int's value is): z3 bit-blasts this,
            # where a conversion from a real ran out of its limit on `int16 -> float -> int16`
            bits = z3.Int2BV(v, src.itemsize * 8)
            to_fp = z3.fpUnsignedToFP if src.is_unsigned else z3.fpSignedToFP
            return to_fp(RNE, bits, fp_sort(dst))
        if src.is_int and dst.is_float:
            return z3.fpToFP(RNE, z3.ToReal(v), fp_sort(dst))
        if src.is_float and dst.is_float:
            return z3.fpToFP(RNE, v, fp_sort(dst))
        if src.is_float and dst.is_int:
            return self._float_to_int(dst, v)
        raise Untranslatable(f"CAST {src.name} -> {dst.name}")

    def _float_to_int(self, dst: DType, v: Any) -> Any:
        """runtime/semantics.py's float -> int CAST: NaN is 0; inside int64's range through
        int64, wrapped to the width; beyond it saturated (uint64 holds [2**63, 2**64))."""
        if v.sort() == fp_sort(dtypes.float16):  # through float32, where 2**63 is finite
            v = z3.fpToFP(RNE, v, fp_sort(dtypes.float32))
        srt = v.sort()
        t = z3.fpRoundToIntegral(z3.RTZ(), v)
        exact = z3.ToInt(z3.fpToReal(t))
        top = 2.0**64 if dst is dtypes.uint64 else 2.0**63
        lo, hi = int(dst.min), int(dst.max)
        if dst is dtypes.index:
            lo, hi = -(1 << 63), (1 << 63) - 1
        high = z3.fpGEQ(t, z3.FPVal(top, srt))
        low = z3.fpLT(t, z3.FPVal(-(2.0**63), srt))
        return z3.If(z3.fpIsNaN(v), 0, z3.If(high, hi, z3.If(low, lo, wrap(dst, exact))))


class BitWorld(World):
    """A case's sized integers as bit-vectors of their width (index stays an Int).

    The integer world wraps with `v - k * 2**bits` and meets AND/SHR/casts through Int2BV and
    BV2Int, a mix z3 rarely decides (`MOD(x:uint32, 8) -> AND(x, 7)` ran out of its limit).
    Here the same semantics (runtime/semantics.py) are native bit-vector operations, which z3
    bit-blasts: wrapping is the width, C's truncating division is bvsdiv/bvsrem, a shift count
    outside [0, width) is spelled out as in the table. A CONST's `arg` (the Python value a
    guard computes with) is the Int its bits stand for, signed or not as its dtype."""

    def fresh(self, dt: DType, hint: str) -> Any:
        if not _sized(dt):
            return super().fresh(dt, hint)
        return z3.BitVec(f"{hint}!{next(self._n)}", dt.itemsize * 8)

    def as_int(self, dt: DType, v: Any) -> Any:
        """The Int a value of `dt` stands for (a guard's Python view of it)."""
        if not _sized(dt) or not isinstance(v, z3.BitVecRef):
            return v
        return z3.BV2Int(v, is_signed=not dt.is_unsigned)

    def const_val(self, dt: DType, value: Any) -> Any:
        if not _sized(dt):
            return super().const_val(dt, value)
        if isinstance(value, z3.BitVecRef):
            return value
        v = super().const_val(dt, value)  # the Int, and whether it lies outside the dtype
        return z3.simplify(z3.Int2BV(v, dt.itemsize * 8))

    def bounds(self, s: Sym) -> tuple[Any, Any]:
        if not _sized(s.dtype) or s.bounds is not None or s.op is Ops.CONST:
            if s.op is Ops.CONST and s.bounds is None and _sized(s.dtype):
                s.bounds = (s.arg, s.arg)
            return super().bounds(s)
        val = s.val
        s.val = self.as_int(s.dtype, val)  # World.bounds states the Int facts
        try:
            return super().bounds(s)
        finally:
            s.val = val

    def _int_alu(self, op: Ops, dt: DType, v: list[Any]) -> Any:
        if not _sized(dt):
            return super()._int_alu(op, dt, v)
        signed = not dt.is_unsigned
        a, b = v[0], v[1] if len(v) > 1 else None
        simple = {Ops.ADD: lambda: a + b, Ops.SUB: lambda: a - b, Ops.MUL: lambda: a * b,
                  Ops.NEG: lambda: -a, Ops.AND: lambda: a & b, Ops.OR: lambda: a | b,
                  Ops.XOR: lambda: a ^ b, Ops.CMPNE: lambda: a != b, Ops.CMPEQ: lambda: a == b,
                  Ops.TRUNC: lambda: a,
                  Ops.CMPLT: lambda: a < b if signed else z3.ULT(a, b)}
        if op in simple:
            return simple[op]()
        if op in (Ops.MAX, Ops.MIN):
            ge = a >= b if signed else z3.UGE(a, b)
            return z3.If(ge, a, b) if op is Ops.MAX else z3.If(ge, b, a)
        zero = z3.BitVecVal(0, a.size())
        if op in (Ops.IDIV, Ops.MOD):  # C's: truncated; x // 0 == x % 0 == 0; MIN // -1 wraps
            q = (a / b if op is Ops.IDIV else z3.SRem(a, b)) if signed else (
                z3.UDiv(a, b) if op is Ops.IDIV else z3.URem(a, b))
            return z3.If(b == 0, zero, q)
        if op in (Ops.SHL, Ops.SHR):
            bits = a.size()
            inside = z3.And(b >= 0, b < bits) if signed else z3.ULT(b, bits)
            if op is Ops.SHL:
                out = zero
            else:
                out = z3.If(a < 0, z3.BitVecVal(-1, bits), zero) if signed else zero
            shifted = a << b if op is Ops.SHL else (a >> b if signed else z3.LShR(a, b))
            return z3.If(inside, shifted, out)
        if op is Ops.POW:
            key = (op, dt)
            if key not in self.uf:
                srt = z3.BitVecSort(dt.itemsize * 8)
                self.uf[key] = z3.Function(f"POW_{dt.name}", srt, srt, srt)
            self.used_uf = True
            return self.uf[key](a, b)
        raise Untranslatable(f"{op.name} on {dt.name}")

    def cast(self, src: DType, dst: DType, v: Any) -> Any:
        if src is dst or not (_sized(src) or _sized(dst)):
            return super().cast(src, dst, v)
        if dst.is_bool:
            return v != 0
        if src.is_bool:
            if dst.is_float:
                return super().cast(src, dst, v)
            return z3.If(v, z3.BitVecVal(1, dst.itemsize * 8), z3.BitVecVal(0, dst.itemsize * 8))
        if _sized(src) and _sized(dst):
            return _resize(v, dst.itemsize * 8, not src.is_unsigned)
        if _sized(src) and dst.is_float:
            to_fp = z3.fpUnsignedToFP if src.is_unsigned else z3.fpSignedToFP
            return to_fp(RNE, v, fp_sort(dst))
        if src.is_float and _sized(dst):
            return self._float_to_bits(dst, v)
        # between a sized int and index: through the Int the bits stand for (Int2BV wraps)
        if src is dtypes.index:
            return z3.Int2BV(v, dst.itemsize * 8)
        return self.as_int(src, v)

    def _float_to_bits(self, dst: DType, v: Any) -> Any:
        """World._float_to_int's table on bits: NaN is 0; a truncation inside int64's range
        (uint64: [0, 2**64)) converts exactly and wraps to the width; beyond it, saturated."""
        if v.sort() == fp_sort(dtypes.float16):
            v = z3.fpToFP(RNE, v, fp_sort(dtypes.float32))
        srt, bits = v.sort(), dst.itemsize * 8
        t = z3.fpRoundToIntegral(z3.RTZ(), v)
        unsigned_top = dst is dtypes.uint64
        top = 2.0**64 if unsigned_top else 2.0**63
        high = z3.fpGEQ(t, z3.FPVal(top, srt))
        low = z3.fpLT(t, z3.FPVal(-(2.0**63), srt))
        signed64 = z3.fpToSBV(z3.RTZ(), t, z3.BitVecSort(64))
        if unsigned_top:  # [2**63, 2**64) holds uint64 values int64 cannot
            big = z3.fpGEQ(t, z3.FPVal(2.0**63, srt))
            signed64 = z3.If(big, z3.fpToUBV(z3.RTZ(), t, z3.BitVecSort(64)), signed64)
        exact = z3.Extract(bits - 1, 0, signed64)
        hi, lo = (z3.BitVecVal(int(x), bits) for x in (dst.max, dst.min))
        return z3.If(z3.fpIsNaN(v), z3.BitVecVal(0, bits),
                     z3.If(high, hi, z3.If(low, lo, exact)))


def _sized(dt: DType) -> bool:
    return dt.is_int and dt is not dtypes.index


def _resize(v: z3.BitVecRef, bits: int, signed: bool) -> z3.BitVecRef:
    """Two's complement bits to `bits` wide: truncated, or extended by sign or zero."""
    have = v.size()
    if bits < have:
        return z3.Extract(bits - 1, 0, v)
    if bits > have:
        return (z3.SignExt if signed else z3.ZeroExt)(bits - have, v)
    return v


# ---------------------------------------------------------------------- pattern skeletons
@dataclass(eq=False)
class Skel:
    """One node of a pattern with names resolved: what concrete left sides are made of."""

    ops: tuple[Ops, ...] | None  # None: a capture of any node
    srcs: list[Skel] | None = None  # None: any sources
    commutative: bool = False
    ellipsis: bool = False
    dtypes: frozenset[DType] | None = None
    const: Any = None  # the literal of a PConst
    is_const_pat: bool = False
    arg: A.Expr | None = None
    names: list[str] = field(default_factory=list)


def skeleton(pattern: A.Pattern, table: dict[str, Skel]) -> Skel:
    """The pattern as a Skel tree; a repeated name is the same Skel object."""
    if isinstance(pattern, A.PVar):
        if pattern.name is not None and pattern.name in table:
            sk = table[pattern.name]
        else:
            sk = Skel(None)
            if pattern.name is not None:
                sk.names.append(pattern.name)
                table[pattern.name] = sk
        _constrain(sk, pattern.dtype)
        return sk
    if isinstance(pattern, A.PConst):
        sk = Skel((Ops.CONST,), srcs=[], const=pattern.value, is_const_pat=True)
        _constrain(sk, pattern.dtype)
        return sk
    if isinstance(pattern, A.PBind):
        if pattern.name in table:
            raise Untranslatable(f"the name {pattern.name!r} bound twice to patterns")
        sk = skeleton(pattern.pattern, table)
        sk.names.append(pattern.name)
        table[pattern.name] = sk
        return sk
    ops: set[Ops] = set()
    for ref in pattern.ops:
        resolved = resolve_ops(ref.name)
        if resolved is None:
            raise Untranslatable(f"unknown op {ref.name}")
        ops |= resolved
    srcs = None if pattern.srcs is None else [skeleton(p, table) for p in pattern.srcs]
    sk = Skel(tuple(sorted(ops)), srcs, pattern.commutative, pattern.ellipsis, arg=pattern.arg)
    _constrain(sk, pattern.dtype)
    return sk


def _constrain(sk: Skel, ref: A.DTypeRef | None) -> None:
    if ref is None:
        return
    allowed = resolve_dtype(ref.name)
    if allowed is None:
        raise Untranslatable(f"unknown dtype {ref.name}")
    sk.dtypes = allowed if sk.dtypes is None else sk.dtypes & allowed


@dataclass(eq=False)
class Shape:
    """A Skel with every choice made: one op, a source order, the sources (fresh if needed)."""

    skel: Skel | None
    op: Ops | None
    srcs: list[Shape]
    names: list[str]


def shapes_of(root: Skel) -> list[Shape]:
    """Every concrete structure the skeleton stands for (ops of sets x commutative orders)."""
    choice_nodes: list[Skel] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        sk = stack.pop()
        if id(sk) in seen:
            continue
        seen.add(id(sk))
        choice_nodes.append(sk)
        stack.extend(sk.srcs or [])
    options = []
    for sk in choice_nodes:
        ops = sk.ops if sk.ops is not None else (None,)
        orders = (False, True) if sk.commutative and sk.srcs and len(sk.srcs) == 2 else (False,)
        options.append([(op, o) for op in ops for o in orders])
    total = math.prod(len(o) for o in options)
    if total > MAX_CASES:
        raise Untranslatable(f"{total} op/order combinations")
    out = []
    for combo in itertools.product(*options):
        chosen = {id(sk): c for sk, c in zip(choice_nodes, combo)}
        built: dict[int, Shape] = {}
        out.append(_build_shape(root, chosen, built))
    return out


def _build_shape(sk: Skel, chosen: dict, built: dict[int, Shape]) -> Shape:
    if id(sk) in built:
        return built[id(sk)]
    op, swapped = chosen[id(sk)]
    if op is not None and op not in SMT_OPS:
        raise Untranslatable(f"{op.name} has no arithmetic meaning")
    srcs: list[Shape] = []
    if op is not None:
        want = ARITY.get(op)
        given = [_build_shape(s, chosen, built) for s in sk.srcs] if sk.srcs is not None else []
        if want is None:
            raise Untranslatable(f"{op.name} with a variable number of sources")
        if sk.srcs is not None and not sk.ellipsis and len(given) != want:
            return Shape(None, None, [], [])  # this op cannot have this many sources
        if len(given) > want:
            return Shape(None, None, [], [])
        while len(given) < want:  # `OP` or `OP(a, ...)`: the other sources are anything
            given.append(Shape(Skel(None), None, [], []))
        srcs = [given[1], given[0]] if swapped else given
    shape = Shape(sk, op, srcs, sk.names)
    built[id(sk)] = shape
    return shape


# ---------------------------------------------------------------------- dtype inference
class _Classes:
    """Union-find over the dtype slots of a Shape tree, each class with its allowed dtypes."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.allowed: dict[int, frozenset[DType]] = {}

    def find(self, k: int) -> int:
        self.parent.setdefault(k, k)
        self.allowed.setdefault(k, frozenset(ALL_DTYPES))
        while self.parent[k] != k:
            k = self.parent[k]
        return k

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
            self.allowed[ra] = self.allowed[ra] & self.allowed[rb]

    def limit(self, k: int, allowed: frozenset[DType]) -> None:
        r = self.find(k)
        self.allowed[r] = self.allowed[r] & allowed


def dtype_cases(root: Shape) -> list[dict[int, DType]] | None:
    """Every assignment of dtypes to the nodes of `root` the ops and constraints admit."""
    cls = _Classes()
    nodes = _walk(root)
    for n in nodes:
        k = id(n)
        cls.find(k)
        if n.skel is not None and n.skel.dtypes is not None:
            cls.limit(k, n.skel.dtypes)
        op = n.op
        if op is None or op is Ops.CONST:
            continue
        if op in GroupOp.Comparison:
            cls.limit(k, frozenset({dtypes.bool}))
            cls.union(id(n.srcs[0]), id(n.srcs[1]))
            cls.limit(id(n.srcs[0]), _NUMERIC | {dtypes.bool})
        elif op is Ops.WHERE:
            cls.limit(id(n.srcs[0]), frozenset({dtypes.bool}))
            cls.union(k, id(n.srcs[1]))
            cls.union(k, id(n.srcs[2]))
        elif op is Ops.CAST:
            pass  # source and result dtypes are independent
        elif op is Ops.RANGE:
            cls.limit(k, frozenset({dtypes.index}))
            cls.limit(id(n.srcs[0]), frozenset({dtypes.index}))
        else:
            for s in n.srcs:
                cls.union(k, id(s))
            cls.limit(k, OPERAND_DOMAIN.get(op, _NUMERIC | {dtypes.bool}))
    # in the order of the nodes, never of their ids (memory addresses differ between runs, and
    # the order of the cases changes z3's work)
    place = {id(n): i for i, n in enumerate(nodes)}
    roots = sorted({cls.find(id(n)) for n in nodes}, key=place.__getitem__)
    choices = [sorted(cls.allowed[r], key=lambda d: d.name) for r in roots]
    total = math.prod(len(c) for c in choices)
    if total == 0:
        return []
    if total > MAX_CASES:
        return None
    out = []
    for combo in itertools.product(*choices):
        by_root = dict(zip(roots, combo))
        out.append({id(n): by_root[cls.find(id(n))] for n in nodes})
    return out


def _walk(root: Shape) -> list[Shape]:
    out, seen, stack = [], set(), [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(n.srcs)
    return out


# ---------------------------------------------------------------------- building a case
class Case:
    """One concrete left side: its Sym tree, the captures, and the match conditions."""

    def __init__(self, world: World, root: Shape, dts: dict[int, DType]):
        self.world = world
        self.instance: tuple[UOp, dict[str, int]] | None = None  # set by a counterexample
        self.captures: dict[str, Sym] = {}
        self.match: list[z3.BoolRef] = []
        self._built: dict[int, Sym] = {}
        self.root = self._sym(root, dts)

    def _sym(self, n: Shape, dts: dict[int, DType]) -> Sym:
        if id(n) in self._built:
            return self._built[id(n)]
        w, dt = self.world, dts[id(n)]
        hint = n.names[0] if n.names else (n.op.name.lower() if n.op else "any")
        srcs = tuple(self._sym(s, dts) for s in n.srcs)
        if n.op is None:
            s = Sym(None, dt, w.fresh(dt, hint), name=hint)
            w.leaves.append(s)
        elif n.op is Ops.CONST:
            s = self._const(n, dt, hint)
        elif n.op is Ops.RANGE:
            s = Sym(Ops.RANGE, dt, w.fresh(dt, hint), srcs, arg=(0, "loop"), name=hint)
            w.facts += [s.val >= 0, s.val < srcs[0].val]
            w.leaves.append(s)
        elif n.op is Ops.DEFINE_VAR:
            lo, hi = z3.Int(f"{hint}_lo"), z3.Int(f"{hint}_hi")
            s = Sym(Ops.DEFINE_VAR, dt, w.fresh(dt, hint), srcs, arg=(hint, lo, hi), name=hint)
            iv = w.as_int(dt, s.val)
            w.facts += [lo <= iv, iv <= hi, in_range(dt, lo), in_range(dt, hi)]
            w.leaves.append(s)
        else:
            s = Sym(n.op, dt, w.alu(n.op, dt, srcs), srcs)
        self._built[id(n)] = s
        for name in n.names:
            self.captures[name] = s
        if n.skel is not None and n.skel.arg is not None:
            self.match.append(to_bool(Expr(self, {}).eval(
                A.ECompare(A.EAttr(A.EName("__self"), "arg"), ("==",), (n.skel.arg,)), s)))
        return s

    def _const(self, n: Shape, dt: DType, hint: str) -> Sym:
        w = self.world
        if dt.is_float:
            # UOp.const rounds its arg to the dtype: the Python float a guard reads is the value
            # the constant holds, widened exactly (3e-154 is no float32 constant's arg)
            val = z3.FP(f"{hint}!{len(w.leaves)}", fp_sort(dt))
            arg = val if dt.itemsize == 8 else z3.fpToFP(RNE, val, F64)
        elif dt.is_bool:
            arg = val = w.fresh(dt, hint)
        else:
            val = w.fresh(dt, hint)  # constants are assumed to be in their dtype's range
            arg = w.as_int(dt, val)
        s = Sym(Ops.CONST, dt, val, (), arg=arg, name=hint)
        w.leaves.append(s)
        if n.skel is not None and n.skel.is_const_pat:
            # a bit-vector constant is matched on its bits (no Int view for z3 to relate)
            on = val if isinstance(val, z3.BitVecRef) else arg
            self.match.append(_literal_matches(dt, on, n.skel.const))
        return s


def _literal_matches(dt: DType, arg: Any, lit: bool | int | float) -> z3.BoolRef:
    """A pattern literal matches a CONST whose Python arg == the literal (0 matches 0.0, False)."""
    if dt.is_float:
        if isinstance(lit, float) and math.isnan(lit):
            return z3.fpIsNaN(arg)
        if isinstance(lit, float):
            # as the dtype holds the literal (the arg is the rounded value: UOp.const rounds)
            return z3.fpEQ(arg, z3.FPVal(const_value(dt, lit), F64))
        # an integer literal is compared as Python does, exactly, as the matchers compare it
        # (interp.const_eq, emit.literal_by_dtype): 2049 is no float16 constant's arg
        try:
            value = float(lit)
        except OverflowError:
            return z3.BoolVal(False)
        return z3.fpEQ(arg, z3.FPVal(value, F64)) if value == lit else z3.BoolVal(False)
    if isinstance(lit, float) and not (math.isfinite(lit) and lit == int(lit)):
        return z3.BoolVal(False)  # 1.5, inf or nan never equal an integer
    if dt.is_bool:
        return arg == z3.BoolVal(bool(lit)) if lit in (0, 1) else z3.BoolVal(False)
    if isinstance(arg, z3.BitVecRef):  # the constant's bits: a literal outside matches none
        if not int(dt.min) <= int(lit) <= int(dt.max):
            return z3.BoolVal(False)
        return arg == z3.BitVecVal(int(lit), arg.size())
    return arg == int(lit)


# ---------------------------------------------------------------------- expressions
_NO_RESULT = object()


class _OpOf:
    """The op of a capture of any node (`x.op`): only compared with an op (Expr._op_is)."""

    def __init__(self, node: Sym):
        self.node = node


class Expr:
    """Evaluate a guard or right-hand side over Syms and z3 values."""

    def __init__(self, case: Case, helpers: set[str]):
        self.case, self.w, self.helpers = case, case.world, helpers

    def eval(self, e: Any, self_node: Sym | None = None) -> Any:  # noqa: C901 - a dispatch
        if isinstance(e, A.ELit):
            return e.value
        if isinstance(e, A.EName):
            if e.name == "__self":
                return self_node
            if e.name in self.case.captures:
                return self.case.captures[e.name]
            if e.name in self.helpers:
                raise Untranslatable(f"calls the helper {e.name}")
            if e.name == "ctx":
                raise Untranslatable("uses the pass context")
            if e.name in BUILTINS:
                return _Builtin(e.name)
            raise Untranslatable(f"unknown name {e.name}")
        if isinstance(e, A.EOpName):
            if e.name == "Ops":
                return Ops
            if e.name in Ops.__members__:
                return _Ctor(Ops[e.name])
            raise Untranslatable(e.name)
        if isinstance(e, A.ETuple):
            return tuple(self.eval(x, self_node) for x in e.items)
        if isinstance(e, A.EList):
            return [self.eval(x, self_node) for x in e.items]
        if isinstance(e, A.EAttr):
            return self._attr(self.eval(e.obj, self_node), e.attr)
        if isinstance(e, A.EIndex):
            obj, idx = self.eval(e.obj, self_node), self.eval(e.index, self_node)
            if isinstance(obj, (tuple, list)) and isinstance(idx, int):
                return obj[idx]
            raise Untranslatable("a symbolic subscript")
        if isinstance(e, A.EUnary):
            v = self.eval(e.operand, self_node)
            if e.op == "not":
                return z3.Not(to_bool(v))
            return self._neg(v)
        if isinstance(e, A.EBinOp):
            return self._binop(e.op, self.eval(e.left, self_node), self.eval(e.right, self_node))
        if isinstance(e, A.ECompare):
            return self._compare(e, self_node)
        if isinstance(e, A.EBool):
            vals = [to_bool(self.eval(v, self_node)) for v in e.values]
            return z3.And(*vals) if e.op == "and" else z3.Or(*vals)
        if isinstance(e, A.EIf):
            return IfValue(to_bool(self.eval(e.cond, self_node)), self.eval(e.then, self_node),
                           self.eval(e.orelse, self_node))
        if isinstance(e, A.ECall):
            return self._call(e, self_node)
        raise Untranslatable(f"{type(e).__name__} in an expression")

    # -- pieces
    def _attr(self, obj: Any, attr: str) -> Any:
        if isinstance(obj, Sym):
            if attr == "arg":
                if obj.op is Ops.CONST or obj.op is Ops.DEFINE_VAR:
                    return obj.arg
                if obj.op is None:
                    raise Untranslatable("the arg of a capture of any node")
                return obj.arg
            if attr in ("vmin", "vmax"):
                return self.w.bounds(obj)[0 if attr == "vmin" else 1]
            if attr == "dtype":
                return obj.dtype
            if attr == "op" and obj.op is None:
                return _OpOf(obj)
            if attr == "src" and obj.op is None:
                raise Untranslatable("the src of a capture of any node")
            if attr == "op":
                return obj.op
            if attr == "src":
                return obj.srcs
            if attr in ("const_like", "cast", "alu", "maximum", "minimum", "lt", "ne", "eq",
                        "where"):
                return _Method(obj, attr)
            raise Untranslatable(f".{attr} of a node")
        if isinstance(obj, DType) or obj is Ops or isinstance(obj, Ops):
            return getattr(obj, attr)
        if obj is dtypes or (isinstance(obj, _Builtin) and obj.name == "dtypes"):
            return getattr(dtypes, attr)
        raise Untranslatable(f".{attr} of {type(obj).__name__}")

    def _neg(self, v: Any) -> Any:
        if isinstance(v, Sym):
            return self.node(Ops.NEG, (v,))
        return -v if not isinstance(v, z3.FPRef) else z3.fpNeg(v)

    def _binop(self, op: str, a: Any, b: Any) -> Any:
        if isinstance(a, Sym) or isinstance(b, Sym):
            alu = {"+": Ops.ADD, "-": Ops.SUB, "*": Ops.MUL, "//": Ops.IDIV, "%": Ops.MOD,
                   "/": Ops.FDIV}[op]
            node = a if isinstance(a, Sym) else b
            a = a if isinstance(a, Sym) else self.const_like(node, a)
            b = b if isinstance(b, Sym) else self.const_like(node, b)
            return self.node(alu, (a, b))
        return py_arith(op, a, b)

    def _compare(self, e: A.ECompare, self_node: Sym | None) -> Any:
        left = self.eval(e.left, self_node)
        out = []
        for op, right_e in zip(e.ops, e.rights):
            right = self.eval(right_e, self_node)
            out.append(self._op_is(op, left, right) if _OpOf in (type(left), type(right))
                       else py_compare(op, left, right))
            left = right
        return z3.And(*[to_bool(x) for x in out]) if len(out) > 1 else out[0]

    def _op_is(self, op: str, a: Any, b: Any) -> z3.BoolRef:
        """`x.op is Ops.K` of a capture of any node: whether it holds is left free (one Bool per
        capture and op), so a proof holds whatever the op (a guard `x.op is not Ops.DEFINE_REG`
        only narrows the rule), and a counterexample through it may be spurious."""
        of, k = (a, b) if isinstance(a, _OpOf) else (b, a)
        if op not in ("is", "is not", "==", "!=") or not isinstance(k, Ops):
            raise Untranslatable("the op of a capture of any node")
        self.w.used_uf = True
        hit = z3.Bool(f"{of.node.name}_op_is_{k.name}")
        return hit if op in ("is", "==") else z3.Not(hit)

    def _call(self, e: A.ECall, self_node: Sym | None) -> Any:
        f = self.eval(e.func, self_node)
        args = [self.eval(a, self_node) for a in e.args]
        kwargs = {k: self.eval(v, self_node) for k, v in e.kwargs}
        if isinstance(f, _Ctor):
            return self.construct(f.op, args, kwargs)
        if isinstance(f, _Method):
            return self.method(f.node, f.name, args, kwargs)
        if isinstance(f, _Builtin):
            return builtin_call(f.name, args)
        raise Untranslatable("a call")

    # -- nodes
    def node(self, op: Ops, srcs: tuple[Sym, ...], dtype: DType | None = None,
             arg: Any = None) -> Sym:
        if op not in GroupOp.ALU and op is not Ops.CAST:
            raise Untranslatable(f"builds {op.name}")
        if dtype is None:
            dtype = (dtypes.bool if op in GroupOp.Comparison else
                     srcs[1].dtype if op is Ops.WHERE else srcs[0].dtype)
        # the operands an op computes on share a dtype (a comparison's too: CMPLT of an int32
        # and a float32 is no node, and z3's sort mismatch made the whole rule untranslatable)
        shared = srcs[1:] if op is Ops.WHERE else () if op is Ops.CAST else srcs
        if len({s.dtype for s in shared}) > 1:
            raise DTypeMismatch(f"{op.name} of " + ", ".join(s.dtype.name for s in srcs))
        before = len(self.w.undefined)
        val = self.w.alu(op, dtype, srcs)
        # an undefined op on the right side is a bug, not a vacuous case: keep it apart
        self.rhs_undefined = getattr(self, "rhs_undefined", []) + self.w.undefined[before:]
        del self.w.undefined[before:]
        return Sym(op, dtype, val, srcs, arg)

    def const_like(self, like: Sym, value: Any) -> Sym:
        if isinstance(value, Sym):
            return value
        val = self.w.const_val(like.dtype, value)
        return Sym(Ops.CONST, like.dtype, val, (), arg=self._const_arg(like.dtype, value, val))

    @staticmethod
    def _const_arg(dt: DType, value: Any, val: Any) -> Any:
        """A built CONST's arg: as UOp.const keeps it, a float rounded to `dt` (then widened)."""
        if not dt.is_float:
            return value
        return val if dt.itemsize == 8 else z3.fpToFP(RNE, val, F64)

    def construct(self, op: Ops, args: list[Any], kwargs: dict[str, Any]) -> Sym:
        if op is Ops.CONST:
            dt = kwargs.get("dtype")
            if not isinstance(dt, DType) or "arg" not in kwargs:
                raise Untranslatable("CONST without dtype= and arg=")
            val = self.w.const_val(dt, kwargs["arg"])
            return Sym(Ops.CONST, dt, val, (), self._const_arg(dt, kwargs["arg"], val))
        if not args or not all(isinstance(a, Sym) for a in args):
            # a constructor takes nodes as written (the matchers do not wrap numbers)
            raise Untranslatable(f"{op.name}() with a source that is not a node")
        return self.node(op, tuple(args), kwargs.get("dtype"), kwargs.get("arg"))

    def method(self, node: Sym, name: str, args: list[Any], kwargs: dict[str, Any]) -> Sym:
        if name == "const_like":
            return self.const_like(node, args[0])
        if name == "cast":
            return node if args[0] is node.dtype else self.node(Ops.CAST, (node,), args[0])
        ops = {"maximum": Ops.MAX, "minimum": Ops.MIN, "lt": Ops.CMPLT, "ne": Ops.CMPNE,
               "eq": Ops.CMPEQ, "where": Ops.WHERE}
        if name == "alu":
            op, rest = args[0], args[1:]
        else:
            op, rest = ops[name], args
        srcs = (node,) + tuple(a if isinstance(a, Sym) else self.const_like(node, a) for a in rest)
        return self.node(op, srcs)


class DTypeMismatch(Exception):
    """The right side builds a node whose sources disagree on dtype (a real bug)."""


@dataclass
class IfValue:
    """`a if c else b` with a symbolic condition: resolved when the rule's result is formed."""

    cond: z3.BoolRef
    then: Any
    orelse: Any


@dataclass
class _Ctor:
    op: Ops


@dataclass
class _Method:
    node: Sym
    name: str


@dataclass
class _Builtin:
    name: str


def _is_fp(v: Any) -> bool:
    return isinstance(v, (z3.FPRef, float))


def _fp(v: Any) -> z3.FPRef:
    if isinstance(v, z3.FPRef):
        return v
    if isinstance(v, z3.ArithRef):
        return z3.fpToFP(RNE, z3.ToReal(v), F64)
    return z3.FPVal(float(v), F64)


def py_arith(op: str, a: Any, b: Any) -> Any:
    """Python arithmetic on values (ints are unbounded, `//` and `%` floor, floats are f64)."""
    if isinstance(a, (tuple, list, str)) or isinstance(b, (tuple, list, str)):
        raise Untranslatable("arithmetic on tuples")
    if isinstance(a, IfValue) or isinstance(b, IfValue):
        raise Untranslatable("arithmetic on a conditional value")
    if isinstance(a, z3.BoolRef):
        a = z3.If(a, 1, 0)
    if isinstance(b, z3.BoolRef):
        b = z3.If(b, 1, 0)
    if _is_fp(a) or _is_fp(b) or op == "/":
        if op == "/" and not (_is_fp(a) or _is_fp(b)):
            a = _fp(a)
        fa, fb = _fp(a), _fp(b)
        table = {"+": z3.fpAdd, "-": z3.fpSub, "*": z3.fpMul, "/": z3.fpDiv}
        if op not in table:
            raise Untranslatable(f"float {op}")
        return table[op](RNE, fa, fb)
    if not isinstance(a, z3.ArithRef) and not isinstance(b, z3.ArithRef):
        return {"+": a + b, "-": a - b, "*": a * b}.get(op) if op in "+-*" else (
            a // b if op == "//" else a % b)
    a, b = z3.IntVal(a) if isinstance(a, int) else a, z3.IntVal(b) if isinstance(b, int) else b
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "//":
        return floor_div(a, b)
    if op == "%":
        return a - b * floor_div(a, b)
    raise Untranslatable(op)


def py_compare(op: str, a: Any, b: Any) -> Any:
    concrete = (bool, int, str, type(None), tuple, Ops, DType)
    if isinstance(a, concrete) and isinstance(b, concrete) and not isinstance(a, float):
        if op in ("is", "=="):
            return a is b if op == "is" else a == b
        if op in ("is not", "!="):
            return a is not b if op == "is not" else a != b
        if op in ("in", "not in"):
            return (a in b) if op == "in" else (a not in b)
    if isinstance(a, Sym) or isinstance(b, Sym):
        raise Untranslatable("comparing nodes")
    if op in ("in", "not in"):
        if isinstance(b, (tuple, list)):
            hit = z3.Or(*[to_bool(py_compare("==", a, x)) for x in b]) if b else z3.BoolVal(False)
            return hit if op == "in" else z3.Not(hit)
        raise Untranslatable("`in` on a symbolic value")
    if op in ("is", "is not"):
        raise Untranslatable("`is` on a symbolic value")
    if _is_fp(a) or _is_fp(b):
        fa, fb = _fp(a), _fp(b)
        table = {"==": z3.fpEQ, "<": z3.fpLT, "<=": z3.fpLEQ, ">": z3.fpGT, ">=": z3.fpGEQ}
        return z3.Not(z3.fpEQ(fa, fb)) if op == "!=" else table[op](fa, fb)
    if isinstance(a, z3.BoolRef) or isinstance(b, z3.BoolRef):
        a = z3.If(to_bool(a), 1, 0) if not isinstance(a, int) else a
        b = z3.If(to_bool(b), 1, 0) if not isinstance(b, int) else b
    table = {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
             "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}
    return table[op]()


def builtin_call(name: str, args: list[Any]) -> Any:
    if name in ("min", "max") and len(args) == 2:
        a, b = args
        if _is_fp(a) or _is_fp(b):
            raise Untranslatable(f"{name} of floats")
        return z3.If(a <= b, a, b) if name == "min" else z3.If(a >= b, a, b)
    if name == "abs" and len(args) == 1 and not _is_fp(args[0]):
        return z3.If(args[0] >= 0, args[0], -args[0])
    if name == "bool" and len(args) == 1:
        return to_bool(args[0])
    if name == "int" and len(args) == 1 and isinstance(args[0], (int, z3.ArithRef)):
        return args[0]
    if name == "len" and len(args) == 1 and isinstance(args[0], (tuple, list)):
        return len(args[0])
    raise Untranslatable(f"the builtin {name}")


# ---------------------------------------------------------------------- the driver
def prove_rule(rule: A.Rule, helpers: set[str] | frozenset[str] = frozenset(),
               rlimit: int = DEFAULT_RLIMIT, ulp: int = 0) -> Proof:
    """Prove, refute or give up on one rule; see the module docstring.

    `rlimit` bounds each z3 query in z3's resource units (deterministic, unlike a timeout); the
    rule's cases share RULE_RLIMIT_FACTOR times that. `ulp` is the rule's stated tolerance."""
    if isinstance(rule.rhs, A.EDefer):
        return Proof("proved", "defers: never rewrites")
    fresh_context()
    budget = RULE_RLIMIT_FACTOR * rlimit
    try:
        shapes = shapes_of(skeleton(rule.pattern, {}))
    except Untranslatable as exc:
        return Proof("untranslatable", str(exc))
    n_cases, spurious, index_arith, spent, float_div_unknown = 0, False, False, 0, False
    todo: list[tuple[Shape, dict[int, DType]]] = []
    for shape in shapes:
        if shape.skel is None:
            continue  # an op that cannot have the pattern's number of sources
        try:
            cases = dtype_cases(shape)
        except Untranslatable as exc:
            return Proof("untranslatable", str(exc))
        if cases is None:
            return Proof("untranslatable", "too many dtype combinations")
        todo += [(shape, dts) for dts in cases]
    for shape, dts in todo:
        if _float_division(shape, dts):  # see FLOAT_DIV_NOTE
            n_cases, float_div_unknown = n_cases + 1, True
            continue
        left = budget - spent
        if left <= 0:
            return Proof("unknown", f"z3 resource limit after {n_cases} of the cases",
                         cases=n_cases)
        try:
            # IEEE cases bit-blast multipliers: they get a few times the integer budget
            per_case = rlimit * (3 if any(d.is_float for d in dts.values()) else 1)
            verdict, detail, instance, used, idx = _prove_case_both(
                rule, helpers, shape, dts, per_case, left, ulp, spent)
        except Untranslatable as exc:
            return Proof("untranslatable", str(exc), cases=n_cases)
        except (DTypeMismatch, z3.Z3Exception, ValueError, TypeError) as exc:
            # a right side z3 cannot state (a string for a node, say): the examples decide
            return Proof("untranslatable", f"z3 cannot state it: {exc}", cases=n_cases)
        # z3 counts the work of the whole (fresh) context: `used` is the rule's total so far
        n_cases, spent, index_arith = n_cases + 1, used, index_arith or idx
        if verdict == "refuted":
            return Proof("refuted", "", detail, cases=n_cases, instance=instance,
                         rlimit_used=spent)
        if verdict == "spurious":
            spurious = True
        elif verdict == "unknown":
            return Proof("unknown", detail, cases=n_cases, rlimit_used=spent)
    if float_div_unknown:
        return Proof("untranslatable", FLOAT_DIV_NOTE, cases=n_cases, rlimit_used=spent)
    if spurious:
        return Proof("untranslatable", "a counterexample through an uninterpreted function")
    if n_cases == 0:
        return Proof("proved", "the pattern matches no well-typed node", cases=0,
                     never_fires=True)
    detail = f"{n_cases} case" + ("s" if n_cases != 1 else "")
    never = not any(_can_fire(rule, helpers, shape, dts, rlimit) for shape, dts in todo)
    return Proof("proved", detail + (f"; {INDEX_NOTE}" if index_arith else ""), cases=n_cases,
                 rlimit_used=spent, never_fires=never)


def _can_fire(rule: A.Rule, helpers: set[str] | frozenset[str], shape: Shape,
              dts: dict[int, DType], rlimit: int) -> bool:
    """Whether some values of the case's dtypes match its literals and pass the guard; False
    only when z3 shows none does (a proof of such a case says nothing: the rule never fires).
    Undecided, or a guard z3 cannot state, counts as firing."""
    try:
        world = BitWorld() if _has_bit_ops(rule, shape) else World()
        case = Case(world, shape, dts)
        ev = Expr(case, set(helpers))
        guard = to_bool(ev.eval(rule.guard)) if rule.guard is not None else z3.BoolVal(True)
        solver = z3.Solver()
        solver.add(*world.facts, *case.match, z3.Not(z3.Or(*world.undefined)), guard)
        return _solve(solver, rlimit)[0] != z3.unsat
    except (Untranslatable, DTypeMismatch, z3.Z3Exception, ValueError, TypeError):
        return True


def _prove_case_both(rule: A.Rule, helpers: set[str] | frozenset[str], shape: Shape,
                     dts: dict[int, DType], per_case: int, left: int, ulp: int, spent: int
                     ) -> tuple[str, str, Any, int, bool]:
    """_prove_case in the two encodings of sized integers, the likelier first: bit-vectors
    for a rule of bit operations whose integers are all sized (z3 bit-blasts them; the Int
    encoding met AND and shifts through Int2BV and rarely decided), wrapped Ints otherwise
    (linear arithmetic, where z3 is strong: bit-blasting a 64-bit division ran out of the
    limit). Both state runtime/semantics.py's table, so either one's proof or
    counterexample stands; an `unknown` tries the other with what is left of the rule's
    resource budget (never more than a case's limit), so a rule the first encoding decides
    costs what it did."""
    if not any(_sized(d) for d in dts.values()):
        return _prove_case(rule, helpers, shape, dts, min(per_case, left), ulp)
    first = dtypes.index not in dts.values() and _has_bit_ops(rule, shape)
    out = _prove_case(rule, helpers, shape, dts, min(per_case, left), ulp, bits=first)
    left -= out[3] - spent
    if out[0] != "unknown" or left <= 0:
        return out
    return _prove_case(rule, helpers, shape, dts, min(per_case, left), ulp, bits=not first)


_BIT_OPS = frozenset({Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR})


def _has_bit_ops(rule: A.Rule, shape: Shape) -> bool:
    """Whether the case's left side or the rule's guard or right side names a bit operation."""
    if any(n.op in _BIT_OPS for n in _walk(shape)):
        return True
    names = {op.name for op in _BIT_OPS}
    todo: list[Any] = [rule.guard, rule.rhs]
    while todo:  # a rule's expression is small; a stack keeps it free of recursion anyway
        e = todo.pop()
        if isinstance(e, A.EOpName) and e.name in names:
            return True
        if isinstance(e, A.EAttr) and e.attr in names:
            return True
        if isinstance(e, (list, tuple)):
            todo.extend(e)
        elif hasattr(e, "__dataclass_fields__"):
            todo.extend(getattr(e, f) for f in e.__dataclass_fields__)
    return False


def _float_division(shape: Shape, dts: dict[int, DType]) -> bool:
    """Whether a case holds an IDIV or MOD of floats (see FLOAT_DIV_NOTE)."""
    return any(n.op in (Ops.IDIV, Ops.MOD) and dts[id(n.srcs[0])].is_float
               for n in _walk(shape))


def _solve(solver: z3.Solver, rlimit: int) -> tuple[Any, int]:
    """(check's result, the resource units its context has used so far)."""
    solver.set("rlimit", max(1, rlimit))
    res = solver.check()
    stats = solver.statistics()
    used = stats.get_key_value("rlimit count") if "rlimit count" in stats.keys() else 0
    return res, int(used)


def _prove_case(rule: A.Rule, helpers: set[str] | frozenset[str], shape: Shape,
                dts: dict[int, DType], rlimit: int, ulp: int = 0, bits: bool = False
                ) -> tuple[str, str, Any, int, bool]:
    """(verdict, detail or counterexample text, counterexample instance or None, resource
    units used, whether index arithmetic was assumed not to overflow). `bits`: sized
    integers as bit-vectors (BitWorld), else as wrapped Ints."""
    world = BitWorld() if bits else World()
    case = Case(world, shape, dts)
    lhs_undefined = list(world.undefined)
    world.undefined.clear()
    ev = Expr(case, set(helpers))
    guard = to_bool(ev.eval(rule.guard)) if rule.guard is not None else z3.BoolVal(True)
    guard_undefined = list(world.undefined)
    world.undefined.clear()
    ev.rhs_undefined = []
    try:
        result = ev.eval(rule.rhs)
    except DTypeMismatch as exc:
        return (*_counterexample_or_none(world, case, rule, guard, str(exc), rlimit),
                world.wrap.index_arith)
    applies, value, rhs_dtype_ok = _resolve(ev, case.root, result)
    if not rhs_dtype_ok:
        return (*_counterexample_or_none(world, case, rule, z3.And(guard, applies),
                                         "the right side has another dtype", rlimit),
                world.wrap.index_arith)
    rhs_undefined = ev.rhs_undefined + world.undefined
    premise = z3.And(*world.facts, *case.match, z3.Not(z3.Or(*lhs_undefined, *guard_undefined)),
                     guard, applies)
    ok = z3.And(z3.Not(z3.Or(*rhs_undefined)),
                same_value(case.root.dtype, case.root.val, value, ulp))
    idx = world.wrap.index_arith
    goal = z3.And(premise, z3.Not(ok))
    res, used, solver = _abstracted_first(goal, rlimit // ABSTRACT_SHARE)
    if solver is None:  # the abstraction decided nothing: the full query
        solver = z3.Solver()
        solver.add(premise, z3.Not(ok))
        res, used = _solve(solver, rlimit)
    if res == z3.unsat:
        return "proved", "", None, used, idx
    if res == z3.unknown:
        return "unknown", f"z3: {solver.reason_unknown()}", None, used, idx
    if world.used_uf:
        return "spurious", "", None, used, idx
    text = format_counterexample(solver.model(), case, rule, value)
    return "refuted", text, case.instance, used, idx


def _abstracted_first(goal: z3.BoolRef, rlimit: int) -> tuple[Any, int, z3.Solver | None]:
    """The goal with its rounded float operations abstracted (generator/fp_abstract.py), under
    `rlimit`: unsat there is a proof; a model there whose leaves (the rule's variables) satisfy
    the full goal too is a real counterexample, the full goal's own model. (result, resource
    units used, the deciding solver), or a None solver when neither happened."""
    shortcut = abstracted(goal)
    if shortcut is None:
        return z3.unknown, 0, None
    solver = z3.Solver()
    solver.add(shortcut)
    res, used = _solve(solver, rlimit)
    if res == z3.unsat:
        return res, used, solver
    if res == z3.sat:
        model = solver.model()
        solver = z3.Solver()
        solver.add(goal, *(v == model.eval(v, model_completion=True) for v in leaves(goal)))
        res, used = _solve(solver, rlimit)
        if res == z3.sat:
            return res, used, solver
    return res, used, None


def _counterexample_or_none(world: World, case: Case, rule: A.Rule, when: Any, why: str,
                            rlimit: int) -> tuple[str, str, Any, int]:
    """A right side that is ill-typed is refuted if the rule can fire at all (`when`)."""
    solver = z3.Solver()
    solver.add(*world.facts, *case.match, z3.Not(z3.Or(*world.undefined)), when)
    res, used = _solve(solver, rlimit)
    if res == z3.unsat:
        return "proved", "", None, used
    if res == z3.unknown:
        return "unknown", f"z3: {solver.reason_unknown()}", None, used
    text = why + "\n" + format_counterexample(solver.model(), case, rule, None)
    return "refuted", text, case.instance, used


def _resolve(ev: Expr, root: Sym, result: Any) -> tuple[z3.BoolRef, Any, bool]:
    """(when the rule rewrites, the z3 value it rewrites to, whether the dtype is kept)."""
    if isinstance(result, IfValue):
        a_app, a_val, a_ok = _resolve(ev, root, result.then)
        b_app, b_val, b_ok = _resolve(ev, root, result.orelse)
        if a_val is None:
            return z3.And(z3.Not(result.cond), b_app), b_val, b_ok
        if b_val is None:
            return z3.And(result.cond, a_app), a_val, a_ok
        return (z3.If(result.cond, a_app, b_app), z3.If(result.cond, a_val, b_val),
                a_ok and b_ok)
    if result is None:
        return z3.BoolVal(False), None, True
    if isinstance(result, Sym):
        if result.dtype is not root.dtype:
            return z3.BoolVal(True), result.val, False
        return z3.BoolVal(True), result.val, True
    # a Python value becomes root.const_like(value)
    return z3.BoolVal(True), ev.const_like(root, result).val, True


# ---------------------------------------------------------------------- counterexamples
def _model_value(model: z3.ModelRef, term: Any, dt: DType) -> Any:
    v = model.eval(term, model_completion=True)
    if dt.is_bool:
        return z3.is_true(v)
    if dt.is_float:
        if z3.is_fp_value(v):
            if v.isNaN():
                return math.nan
            if v.isInf():
                return math.inf if v.isPositive() else -math.inf
            if v.isZero():
                return -0.0 if v.isNegative() else 0.0
            return float(z3.simplify(z3.fpToReal(v)).as_fraction())
        return float("nan")
    if z3.is_bv_value(v):
        u = v.as_long()
        bits = v.size()
        return u - (1 << bits) if not dt.is_unsigned and u >= 1 << (bits - 1) else u
    return v.as_long() if z3.is_int_value(v) else int(str(v))


def concrete(model: z3.ModelRef, s: Sym, memo: dict[int, UOp],
             var_vals: dict[str, int]) -> UOp:
    """The counterexample's left side as a UOp graph: captures become DEFINE_VARs (ints) whose
    bounds are the model's vmin/vmax and whose value goes to `var_vals`, or CONSTs (floats,
    bools) holding the model's value."""
    if id(s) in memo:
        return memo[id(s)]
    val = _model_value(model, s.val, s.dtype)
    if s.op is None or s.op is Ops.DEFINE_VAR or s.op is Ops.RANGE:
        if s.dtype.is_int:
            lo, hi = val, val
            if s.bounds is not None:
                lo = _model_value(model, s.bounds[0], s.dtype)
                hi = _model_value(model, s.bounds[1], s.dtype)
            name = s.name or "x"
            while name in var_vals:  # two captures may share a hint
                name += "'"
            var_vals[name] = val
            u = UOp.variable(name, lo, hi, s.dtype)
        else:
            u = UOp.const(s.dtype, val)
    elif s.op is Ops.CONST:
        arg = _model_value(model, s.arg, dtypes.float64 if s.dtype.is_float else s.dtype)
        u = UOp.const(s.dtype, arg)
    else:
        srcs = tuple(concrete(model, x, memo, var_vals) for x in s.srcs)
        u = UOp(s.op, s.dtype, srcs, s.arg)
    memo[id(s)] = u
    return u


def format_counterexample(model: z3.ModelRef, case: Case, rule: A.Rule, rhs_val: Any) -> str:
    var_vals: dict[str, int] = {}
    lhs = concrete(model, case.root, {}, var_vals)
    case.instance = (lhs, var_vals)
    lines = [str(lhs)]
    caps = ", ".join(f"{k}={_model_value(model, v.val, v.dtype)!r}"
                     for k, v in sorted(case.captures.items()))
    if caps:
        lines.append(f"with {caps}")
    left = _model_value(model, case.root.val, case.root.dtype)
    if rhs_val is not None:
        right = _model_value(model, rhs_val, case.root.dtype)
        lines.append(f"left side = {left!r}, right side = {right!r}")
    return "\n".join(lines)
