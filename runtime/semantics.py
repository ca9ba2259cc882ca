"""What every ALU op and CAST computes: the one table of op semantics, written in numpy.

In: an op, numpy operand arrays (one dtype per operand, as the IR gives them) and the dtype of
the result. Out: the result array, bit for bit. The numpy oracle and the kernel interpreter
evaluate ops with this module; the constant folder (rules/symbolic_helpers.py), the C prelude
(backends/c/render.py) and z3's model of each op (generator/smt.py) are tested against it cell
by cell (tests/test_semantics.py: every op x dtype x special value).

The meaning is numpy's wherever numpy has one. The choices where it has none, or where it is
not what the IR needs:

- Dtype classes: bool, signed ints (`index` is a signed 64-bit int), unsigned ints, floats.
  `DOMAIN[op]` names the classes an op's operands may have; other cells are not ops of the IR.
  It is the one table of which (op, dtype) exist: the graph verifier (runtime/spec.py), the
  z3 model (generator/smt.py) and the checker's instance draws (generator/instances.py) all
  read it through `operand_dtypes` / `defined`; tests/test_op_domain.py shows that everything
  the Tensor API and the passes build is in it, and that the checker models and draws each cell.
- Fixed-width integer ADD/SUB/MUL/NEG/POW wrap around (two's complement), as numpy's ufuncs.
- Integer IDIV truncates toward zero and MOD takes the sign of the dividend (C, runtime/ops.py);
  the Tensor API builds numpy's floor `//` and `%` on top. Division or remainder by zero gives
  0 (numpy's value too). INT_MIN // -1 wraps to INT_MIN and INT_MIN % -1 is 0.
- Float MOD is C's `fmod` (exact; the sign of the dividend; NaN for x % 0 and inf % y; x for
  finite x % inf). Float IDIV is `trunc(a / b)` of the rounded IEEE quotient (inf or NaN for
  division by zero). The Tensor API's float `//` and `%` are not these ops: they are numpy's
  `npy_divmod` algorithm spelled out in IR ops (runtime/tensor.py), so `1.0 // 0.1` is 9.0.
- Float MAX/MIN propagate NaN (numpy) and order -0.0 below +0.0 (IEEE 754-2019 maximum /
  minimum): MAX(-0.0, +0.0) is +0.0 and MIN is -0.0 in either operand order. numpy's own
  maximum returns its second operand on a tie, which would make MAX not commutative; the IR
  declares it commutative and rules reorder its operands.
- NEG flips the sign bit of floats (-(+0.0) is -0.0). There is no ABS op: Tensor.abs is
  `where(x <= 0, 0 - x, x)` on floats, which gives +0.0 for both zeros, as numpy's.
- Shifts (ints only): a count outside [0, width) gives 0 for SHL, and 0 or -1 (the sign) for
  SHR, as numpy; a negative value shifted left wraps.
- Integer POW with a negative exponent (numpy raises) gives the truncation of 1 / x**-e: 1 for
  x == 1, +-1 for x == -1, 0 otherwise (x == 0 included).
- Bool arithmetic computes on 0/1 and stores `!= 0`: ADD is OR, SUB is XOR, MUL is AND, NEG is
  the identity, MAX is OR, MIN is AND, MULACC is (a AND b) OR c. CMPLT on bools is (not a) and
  b. IDIV, MOD, POW, FDIV, shifts and the float functions are not defined on bools.
- float16 computes through float32: operands widen to float32, the op runs in float32, and the
  result rounds to float16 once (what numpy's half loops do). MULACC is MUL then ADD, each
  rounded in the dtype (-ffp-contract=off in C: never a fused multiply-add).
- Float functions (EXP, LOG, EXP2, LOG2, SIN, COS, POW) are the C library's. numpy may use its own
  SIMD versions, which can differ in the last bit; the sweep compares those within 1 ulp
  (exactly at the special values: zeros, infinities, NaN). SQRT, FDIV, TRUNC, RECIPROCAL are
  correctly rounded, hence exact everywhere.
- Float POW is C's pow everywhere (C99 Annex F: pow(+-0, 0.5) is +0.0, pow(-inf, 0.5) is
  +inf), whatever the layout of its exponent. numpy computes an exponent of 0.5 held in a
  scalar or a broadcast (stride 0) as sqrt (-0.0 and NaN there), and gcc's vectorizer does the
  same to pow(x, 0.5) in a vector loop; `_pow` and the C prelude's `rg_fpow_*` put pow's values
  back, so a constant exponent and a buffer of the same values agree on every backend, and
  `POW(x, 0.5) -> SQRT(x)` is not a sound rule. The Tensor API's `x ** 0.5` with a Python float
  is SQRT, not POW (numpy and torch both compute it so): a choice made on the Python value,
  before the IR (tests/test_pow_meaning.py).
- CAST float -> int truncates toward zero; a value out of the target's range is defined too
  (numpy leaves it to the CPU, and on x86 its scalar and vector loops disagree): NaN gives 0;
  a truncated value inside int64's range goes through int64 and wraps to the target's width
  (-1.0 -> uint8 is 255, 200.0 -> int8 is -56: numpy's x86 results for |x| < 2**31, where
  numpy's int32 target gives INT_MIN above); beyond int64's range (and +-inf) it saturates to
  the target's min or max. uint64 holds [2**63, 2**64) exactly. The C path computes this with
  explicit comparisons and one in-range conversion, identical scalar and vectorized.
  CAST to bool is `!= 0` (NaN is true); int -> int wraps; to float rounds to nearest even.
- NaN payloads and signs are not part of the meaning: any NaN equals any NaN.

Reductions and sums of products (the one contract that is not bit for bit; README, "What each
op means"; tests/test_opt.py checks it):

- REDUCE MAX/MIN, and every integer or bool REDUCE, is exact in any order: its op is
  associative and commutative as defined here, so unrolling, SIMD lanes and threads give the
  oracle's bits.
- A float REDUCE ADD (MUL) combines its values in an order that is not pinned: the backend may
  split it into SIMD lanes and threads, or unroll it in loop order, as numpy sums pairwise. The
  result is the exact sum within the rounding error of some order: |error| <= (n - 1) * eps *
  sum |x_i| (eps the dtype's unit roundoff), starting from the identity 0 (a sum of -0.0s is
  +0.0, as numpy's); a product's, to first order, |error| <= (n - 1) * eps * |prod x_i|,
  where no partial product of that order leaves the dtype's range (past it, the order decides
  whether an inf or a 0 comes out). Tensor.prod of float16 or float32 reduces in float64 and
  rounds once (a product's rounding error does not shrink with the order as a sum's does): it
  is the exact product within half an ulp of its dtype plus (n - 1) * 2**-53 of it, where
  no float64 partial product of the reduction's order (lanes and threads, not left to right)
  leaves float64's range or enters its subnormals; numpy multiplies left to right in float16
  or float32 and is within (n - 1) * eps where its partials stay in the dtype's range. So the
  two differ by up to the sum of those bounds; where one of numpy's partial products leaves
  the dtype's range while the float64 ones stay in float64's range (1e30 * 1e30 * 1e-30 in
  float32), numpy gives inf (0) and Tensor.prod the product; where a float64 partial leaves
  float64's range (float32's 1e38, 1e-38 alternating 1000 times: the lanes gather the 1e38s),
  Tensor.prod gives inf, 0 or NaN (inf * 0) as torch's prod does, where numpy's order may
  give the product (tests/test_adversarial_65.py and tests/test_review_65d.py pin these).
- A float sum of products (matmul, convolution, attention: REDUCE ADD of x * y) may round
  each step once, as a fused multiply-add (BLAS and numpy's matmul do). Every other x * y + z
  rounds twice, as numpy computes it: the C build refuses flags that would fuse it. The C
  backend's packed loops (the kernel optimizer's PACK action) sum each output over k in order
  from 0, each step one fused multiply-add where the CPU has FMA: tests/test_opt.py compares
  their bits with an exact oracle of that chain. A float16 matmul or convolution (both
  operands float16) is built as the float32 sum of the operands widened to float32, rounded
  to float16 once (numpy's and torch's: each product exact, never rounded to float16, so none
  is inf past 65504 or 0 under 2**-25); every path computes that graph, packed or not. A
  float16 MUL written out and summed (`(x * w).sum(-1)`) keeps MUL's meaning: each product
  rounded to float16, as numpy computes it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rulegrad.runtime.dtype import DTYPES, DType, dtypes
from rulegrad.runtime.ops import Ops

# dtype classes by numpy kind ('b', 'i', 'u', 'f'; index is an 'i')
_ALL, _NUM, _INT, _FLOAT = "biuf", "iuf", "iu", "f"
DOMAIN: dict[Ops, str] = {
    Ops.ADD: _ALL, Ops.SUB: _ALL, Ops.MUL: _ALL, Ops.NEG: _ALL, Ops.MAX: _ALL, Ops.MIN: _ALL,
    Ops.CMPLT: _ALL, Ops.CMPNE: _ALL, Ops.CMPEQ: _ALL, Ops.WHERE: _ALL, Ops.MULACC: _ALL,
    Ops.AND: "biu", Ops.OR: "biu", Ops.XOR: "biu", Ops.SHL: _INT, Ops.SHR: _INT,
    Ops.IDIV: _NUM, Ops.MOD: _NUM, Ops.POW: _NUM, Ops.TRUNC: _NUM,
    Ops.FDIV: _FLOAT, Ops.EXP: _FLOAT, Ops.LOG: _FLOAT, Ops.EXP2: _FLOAT, Ops.LOG2: _FLOAT,
    Ops.SIN: _FLOAT, Ops.COS: _FLOAT, Ops.SQRT: _FLOAT, Ops.RECIPROCAL: _FLOAT,
}
# ops whose float results are the C library's (the sweep allows numpy 1 ulp there)
LIBM_OPS = frozenset({Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS, Ops.POW})


def defined(op: Ops, kind: str) -> bool:
    """True when `op` is an op of the IR on operands of numpy kind `kind` ('b', 'i', 'u', 'f')."""
    return kind in DOMAIN.get(op, "")


def _kind(dt: DType) -> str:
    return "i" if dt is dtypes.index else dt.kind


def operand_dtypes(op: Ops) -> frozenset[DType]:
    """The dtypes an ALU op's operands may have (DOMAIN, `index` among the signed ints); every
    dtype for an op the table does not restrict (CAST, and the ops that are not ALU ops)."""
    every = frozenset(DTYPES) | {dtypes.index}
    if op not in DOMAIN:
        return every
    return frozenset(d for d in every if _kind(d) in DOMAIN[op])


def operand_dtype(op: Ops, srcs: tuple[DType, ...]) -> DType | None:
    """The dtype DOMAIN speaks of for `op` over sources of these dtypes: a WHERE's value, every
    other op's first source (an ALU op's sources share it); None for an op with no operand."""
    if op is Ops.WHERE:
        return srcs[1] if len(srcs) > 1 else None
    return srcs[0] if srcs else None


def _as_int(x: np.ndarray) -> np.ndarray:
    """Bools as int8, so arithmetic on them is arithmetic on 0/1."""
    return x.astype(np.int8) if x.dtype == np.bool_ else x


def _idiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.trunc(a / b)
    a, b = _as_int(a), _as_int(b)
    safe_b = np.where(b == 0, 1, b).astype(b.dtype)
    rem = np.fmod(a, safe_b)
    # a - rem is an exact multiple of b, so floor division of it is the truncated quotient
    quot = (a - rem) // safe_b
    return np.where(b == 0, 0, quot).astype(quot.dtype)


def _mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.fmod(a, b)
    a, b = _as_int(a), _as_int(b)
    safe_b = np.where(b == 0, 1, b).astype(b.dtype)
    return np.where(b == 0, 0, np.fmod(a, safe_b)).astype(np.result_type(a, b))


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        r = np.power(a, b)
        # numpy computes an exponent of 0.5 held in a scalar or a broadcast (stride 0) as
        # sqrt, whose -0.0 and NaN at -0.0 and -inf are not pow's +0.0 and +inf (C99 F.9.4.4):
        # without this the value would depend on how the exponent is laid out in memory
        edge = (b == 0.5) & ((a == 0) | (a == -np.inf))
        return np.where(edge, np.abs(a), r).astype(r.dtype) if edge.any() else r
    a, b = _as_int(a), _as_int(b)
    neg = b < 0
    positive = np.power(a, np.where(neg, 0, b).astype(b.dtype))
    if not neg.any():
        return positive
    # x ** -n for integers: only |x| == 1 survives the truncation of 1 / x**n
    odd = (b % 2) != 0
    negative = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(neg, negative.astype(positive.dtype), positive)


def _max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind != "f":
        return np.maximum(a, b)
    # a tie is +-0.0 against itself or the other zero: +0.0 wins unless both are -0.0
    return np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b))


def _min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind != "f":
        return np.minimum(a, b)
    return np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b))


def _bool_arith(fn: Callable) -> Callable:
    """Arithmetic that is also defined on bools: compute on 0/1 integers, then != 0."""
    def apply(*xs: np.ndarray) -> np.ndarray:
        if all(x.dtype == np.bool_ for x in xs):
            return fn(*(_as_int(x) for x in xs)) != 0
        return fn(*xs)
    return apply


def _float_fn(fn: Callable) -> Callable:
    """A float function; integer inputs are computed in float64 (then cast to the result)."""
    def apply(x: np.ndarray) -> np.ndarray:
        return fn(x if x.dtype.kind == "f" else x.astype(np.float64))
    return apply


def _bitwise(fn: Callable) -> Callable:
    def apply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            raise SemanticsError(f"{fn.__name__} is not defined on floats "
                                 f"({a.dtype}, {b.dtype})")
        return fn(a, b)
    return apply


def _trunc(x: np.ndarray) -> np.ndarray:
    return np.trunc(x) if x.dtype.kind == "f" else x


class SemanticsError(ValueError):
    """An op applied to operands it is not defined on (e.g. AND of floats)."""


ALU: dict[Ops, Callable[..., np.ndarray]] = {
    Ops.NEG: _bool_arith(np.negative),
    Ops.EXP: _float_fn(np.exp),
    Ops.LOG: _float_fn(np.log),
    Ops.EXP2: _float_fn(np.exp2),
    Ops.LOG2: _float_fn(np.log2),
    Ops.SIN: _float_fn(np.sin),
    Ops.COS: _float_fn(np.cos),
    Ops.SQRT: _float_fn(np.sqrt),
    Ops.RECIPROCAL: _float_fn(lambda x: np.reciprocal(x)),
    Ops.TRUNC: _trunc,
    Ops.ADD: _bool_arith(np.add),
    Ops.SUB: _bool_arith(np.subtract),
    Ops.MUL: _bool_arith(np.multiply),
    Ops.FDIV: lambda a, b: np.true_divide(a, b),
    Ops.IDIV: _idiv,
    Ops.MOD: _mod,
    Ops.MAX: _max,
    Ops.MIN: _min,
    Ops.POW: _pow,
    Ops.CMPLT: np.less,
    Ops.CMPNE: np.not_equal,
    Ops.CMPEQ: np.equal,
    Ops.AND: _bitwise(np.bitwise_and),
    Ops.OR: _bitwise(np.bitwise_or),
    Ops.XOR: _bitwise(np.bitwise_xor),
    Ops.SHL: _bitwise(np.left_shift),
    Ops.SHR: _bitwise(np.right_shift),
    Ops.WHERE: lambda c, a, b: np.where(c.astype(np.bool_), a, b),
}


def alu(op: Ops, out: np.dtype, *xs: np.ndarray) -> np.ndarray:
    """The value of `op(*xs)` as an array of dtype `out` (float16 computed through float32)."""
    if op is Ops.MULACC:  # MUL then ADD, each rounded in the dtype
        return alu(Ops.ADD, out, alu(Ops.MUL, xs[2].dtype, *xs[:2]), xs[2])
    fn = ALU.get(op)
    if fn is None:
        raise SemanticsError(f"{op.name} is not an elementwise op")
    xs = tuple(x.astype(np.float32) if x.dtype == np.float16 else x for x in xs)
    with np.errstate(all="ignore"):
        value = np.asarray(fn(*xs))
    return value if value.dtype == out else cast(value, out)


def cast(x: np.ndarray, to: np.dtype) -> np.ndarray:
    """CAST: numpy's `astype`, except float -> int, which is defined everywhere (see above)."""
    to = np.dtype(to)
    if x.dtype.kind != "f" or to.kind not in "iu":
        with np.errstate(all="ignore"):
            return x.astype(to)
    info = np.iinfo(to)
    t = np.trunc(x.astype(np.float64))  # float16/32 are exact in float64
    nan = np.isnan(t)
    t = np.where(nan, 0.0, t)
    # inside int64's range: through int64, then wrapped to the width (numpy on x86 for the
    # values its 32/64-bit conversions hold); uint64 also holds [2**63, 2**64) exactly
    low, high = t < -(2.0**63), t >= (2.0**64 if to == np.uint64 else 2.0**63)
    big_u64 = (t >= 2.0**63) & ~high
    mid = np.where(low | high | big_u64, 0.0, t).astype(np.int64)
    out = mid.astype(to)
    if to == np.uint64:
        out = np.where(big_u64, np.where(big_u64, t, 0.0).astype(np.uint64), out)
    out = np.where(high, info.max, out).astype(to)
    out = np.where(low, info.min, out).astype(to)
    return np.where(nan, 0, out).astype(to)


_REDUCE_UFUNC = {Ops.ADD: np.add, Ops.MUL: np.multiply, Ops.MAX: np.maximum,
                 Ops.MIN: np.minimum}


def reduce(op: Ops, x: np.ndarray, axes: tuple[int, ...], identity: object) -> np.ndarray:
    """REDUCE of `x` over `axes` (kept as size 1), starting from `identity`: the fold of the
    elementwise op (bool ADD/MUL are OR/AND; float MAX/MIN order -0.0 below +0.0)."""
    if op not in _REDUCE_UFUNC:
        raise SemanticsError(f"{op!r} is not a reduce op")
    if x.dtype == np.bool_ and op in (Ops.ADD, Ops.MUL):
        ufunc = np.logical_or if op is Ops.ADD else np.logical_and
        return ufunc.reduce(x, axis=axes, keepdims=True)
    if x.dtype == np.float16 and op is Ops.ADD:
        # a float16 sum accumulates in float32 and rounds once (rules/lower.rules' half_sum):
        # numpy's own float16 reduce does so only along a contiguous axis; along any other
        # it rounds to float16 at every step (9091 terms: 1.5 off, where C is 0.01)
        wide = np.add.reduce(x, axis=axes, keepdims=True, dtype=np.float32,
                             initial=np.float32(identity))
        return wide.astype(np.float16)
    init = np.array(identity, dtype=x.dtype)
    out = _REDUCE_UFUNC[op].reduce(x, axis=axes, keepdims=True, initial=init)
    if x.dtype.kind == "f" and op in (Ops.MAX, Ops.MIN) and x.size:
        # a zero result: +0.0 for MAX when any +0.0 took part, -0.0 for MIN when any -0.0 did
        wanted = ~np.signbit(x) if op is Ops.MAX else np.signbit(x)
        seen = np.any((x == 0) & wanted, axis=axes, keepdims=True)
        zero = np.where(seen == (op is Ops.MAX), 0.0, -0.0).astype(x.dtype)
        out = np.where(out == 0, zero, out)
    return out
