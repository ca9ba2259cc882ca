"""How far apart two evaluations of one kernel may be under the reduction contract: a forward
error analysis over the kernel AST.

In: a kernel AST as the scheduler makes it (REDUCE(value, *ranges), DEFINE_LOCAL(value,
*ranges); backends/KERNEL_AST.md) and its input buffers. Out: per element of the output buffer,
a float64 bound D with |a - b| <= D for any two evaluations a and b that runtime/semantics.py
allows: each float sum in any order, each product in a sum rounded or fused, the C library's
exp/log/sin/pow a few ulp from numpy's. `rulegrad check` compares an optimizer rule's kernel
before and after, and the kernel interpreter against C, within it (generator/optdiff.py).

The bound is built as a second kernel over the same inputs (`bound_kernel`): each value node n
of the kernel gets a node D(n), float64, computed beside it from the kernel's own values and
its sources' bounds, and the kernel interpreter runs it. With u the unit roundoff of n's dtype,
|n| its value's magnitude and R(n, p) = p (1 + u) + 2 u |n| + eta (two roundings of values p
apart; eta the dtype's smallest subnormal), per op:

- a load of an input, a constant, an index: 0 (both evaluations read the same bits); an op
  whose sources all have D = 0 computes the same bits in both, D = 0, except a C library call:
  2 LIBM_ULPS u |n|;
- REDUCE ADD over n terms x_i: sum D(x_i) + 2 n u sum |x_i| + n eta (the contract: either
  order is within (n - 1) u sum |x_i| of the exact sum, and a fused product rounds one less
  time), and 0 where every D(x_i) = 0 and the x_i are whole numbers with sum |x_i| <= 1/u
  (every partial sum is exact); MAX and MIN: max D(x_i) (exact in any order); MUL: |n| z e^z,
  z = sum D(x_i)/|x_i| + 2 n u;
- ADD, SUB: R(D(a) + D(b)); MUL: R(|a| D(b) + |b| D(a) + D(a) D(b)); FDIV: R((D(a) + |n|
  D(b)) / (|b| - D(b))), unbounded when |b| <= D(b); SQRT: R(min(sqrt(D), D / |n|));
- EXP: |n| D e^D (|e^(x+d) - e^x| <= e^x |d| e^|d|); LOG: t / (1 - t), t = D / |x|, unbounded
  for t >= 1; SIN, COS: D; POW: |n| z e^z with z = |b| t/(1 - t) + D(b) (|ln |a|| + t/(1 - t));
  each plus the library's 2 LIBM_ULPS u |n|;
- MAX, MIN: max(D(a), D(b)); a comparison may flip (D = 1, a bool's bound) where |a - b| <=
  D(a) + D(b); WHERE(c, x, y): D of the branch taken, or max(D(x), D(y)) + |x - y| where c
  may flip (a relu near 0); TRUNC and an integer cast: 0 where no integer lies within D of
  x, else D + 1; fmod: 2 (|b| + D(b)).

Each bound is of the first order in u with the computed values standing for the exact ones
(n u rather than (n - 1) u covers the difference). Where a value is NaN or infinite its bound
is 0: the check requires NaN and infinities where the other evaluation has them. A bound that
comes out NaN (0 * inf) is unbounded. Sums nested in sums compound: attention's scores err by
2 d u sum |q k|, exp turns that into a relative error of the weights, and the product with V
adds its own 2 n u sum |p v| on top.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.semantics import LIBM_OPS
from rulegrad.runtime.uop import UOp, toposort

LIBM_ULPS = 4  # the C library's exp, log, sin, pow against numpy's: a few ulp each
F64 = dtypes.float64
_NO_VALUE = (Ops.SINK, Ops.STORE, Ops.INDEX, Ops.RANGE, Ops.CONST, Ops.DEFINE_GLOBAL,
             Ops.DEFINE_LOCAL, Ops.DEFINE_VAR, Ops.DEFINE_REG)


class BoundError(ValueError):
    """A kernel node the analysis has no rule for, on a value that may differ."""


def _c(x: float) -> UOp:
    return UOp.const(F64, x)


def _v(n: UOp) -> UOp:
    return n.cast(F64)


def _abs(x: UOp) -> UOp:
    return x.maximum(-x)


def _mag(n: UOp) -> UOp:
    return _abs(_v(n))


def _unit(dt: DType) -> tuple[float, float]:
    """(unit roundoff, smallest subnormal) of a float dtype; (0, 0) for an exact one."""
    if not dt.is_float:
        return 0.0, 0.0
    fi = np.finfo(dt.np)
    return float(fi.eps) / 2, float(fi.smallest_subnormal)


def _sum(*ds: UOp | None) -> UOp | None:
    out = None
    for d in ds:
        if d is not None:
            out = d if out is None else out + d
    return out


def _max(*ds: UOp | None) -> UOp | None:
    out = None
    for d in ds:
        if d is not None:
            out = d if out is None else out.maximum(d)
    return out


def _unbounded_where(cond: UOp, d: UOp) -> UOp:
    return cond.where(_c(math.inf), d)


def _rounded(n: UOp, p: UOp | None, library: bool = False) -> UOp | None:
    """R(n, p): two roundings to n's dtype of values p apart; a C library call's result is
    LIBM_ULPS from numpy's on each side even from the same value (p None: no difference)."""
    u, eta = _unit(n.dtype)
    if p is None and not library:
        return None
    out = _c(2 * (LIBM_ULPS if library else 1) * u) * _mag(n) + _c(eta)
    return out if p is None else p * _c(1 + u) + out


def _relative(d: UOp, x: UOp) -> UOp:
    """t / (1 - t), t = d / |x|: |ln(x + e) - ln x| for |e| <= d; unbounded for t >= 1."""
    t = d / _mag(x)
    return t.lt(_c(1.0)).where(t / (_c(1.0) - t), _c(math.inf))  # (NaN t: unbounded)


def _jump(x: UOp, d: UOp) -> UOp:
    """A bound of |trunc(x') - trunc(x)| for |x' - x| <= d: 0 where trunc is the same at both
    ends of [x - d, x + d] (it is monotone, so the same between them), else d + 1."""
    same = (x - d).alu(Ops.TRUNC).eq((x + d).alu(Ops.TRUNC))
    return same.where(_c(0.0), d + _c(1.0))


def _flip(a: UOp, b: UOp, da: UOp | None, db: UOp | None) -> UOp | None:
    """1 where a comparison of a and b may come out the other way, else 0."""
    tot = _sum(da, db)
    if tot is None or a is b:
        return None
    gap = _abs(_v(a) - _v(b))
    near = tot.lt(gap).ne(UOp.const(dtypes.bool, True)) & _c(0.0).lt(tot) & gap.lt(_c(math.inf))
    return near.where(_c(1.0), _c(0.0))


class _Bounds:
    """D(n) for the nodes of one kernel (None: no difference is possible)."""

    def __init__(self) -> None:
        self.d: dict[UOp, UOp | None] = {}
        self.locals: dict[UOp, UOp | None] = {}

    def of(self, n: UOp) -> UOp | None:
        d = self._raw(n)
        if d is None:
            return None
        if n.dtype is dtypes.bool:
            return d.minimum(_c(1.0))
        nan = d.ne(d)
        d = _unbounded_where(nan, d)
        if n.dtype.is_float:  # a NaN or an infinity is where it was: no bound to give
            d = _mag(n).lt(_c(math.inf)).where(d, _c(0.0))
        return d

    def _local(self, dl: UOp) -> UOp | None:
        if dl not in self.locals:
            dv = self.d[dl.src[0]]
            self.locals[dl] = None if dv is None else UOp(Ops.DEFINE_LOCAL, F64,
                                                          (dv, *dl.src[1:]), dl.arg)
        return self.locals[dl]

    def _raw(self, n: UOp) -> UOp | None:  # noqa: C901 - one case per op, as the table above
        op, s = n.op, n.src
        if op in _NO_VALUE or n.dtype is dtypes.index or n.dtype is dtypes.void:
            return None
        if op is Ops.LOAD:
            idx = s[0]
            if idx.op is Ops.INDEX and idx.src[0].op is Ops.DEFINE_LOCAL:
                dl = self._local(idx.src[0])
                return None if dl is None else UOp(Ops.LOAD, F64, (
                    UOp(Ops.INDEX, F64, (dl, *idx.src[1:])),))
            return None
        ds = [self.d.get(x) for x in s]
        if op is Ops.REDUCE:
            return self._reduce(n)
        if op in LIBM_OPS:
            return _rounded(n, self._libm(n, ds), library=True)
        if all(d is None for d in ds):
            return None
        da = ds[0]
        if op is Ops.CAST:
            return self._cast(n, da)
        if op is Ops.NEG:
            return da
        if op in (Ops.ADD, Ops.SUB):
            return _rounded(n, _sum(*ds))
        if op is Ops.MUL:
            return _rounded(n, self._mul(s[0], s[1], ds[0], ds[1]))
        if op is Ops.MULACC:
            prod = s[0].alu(Ops.MUL, s[1])
            return _rounded(n, _sum(_rounded(prod, self._mul(s[0], s[1], ds[0], ds[1])), ds[2]))
        if op in (Ops.FDIV, Ops.RECIPROCAL):
            den, dn, dd = (s[1], ds[0], ds[1]) if op is Ops.FDIV else (s[0], None, ds[0])
            return _rounded(n, self._div(n, den, dn, dd))
        if op is Ops.SQRT:
            return _rounded(n, da.alu(Ops.SQRT).minimum(da / _mag(n)))
        if op in (Ops.MAX, Ops.MIN):
            return _max(*ds)
        if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ):
            if s[0].dtype is dtypes.bool:
                return _max(*ds)
            return _flip(s[0], s[1], ds[0], ds[1])
        if op in (Ops.AND, Ops.OR, Ops.XOR) and n.dtype is dtypes.bool:
            return _max(*ds)
        if op is Ops.WHERE:
            dc, dx, dy = ds
            zero = _c(0.0)
            base = s[0].where(zero if dx is None else dx, zero if dy is None else dy)
            if dc is None:
                return base
            return _c(0.0).lt(dc).where(_max(dx, dy, zero) + _abs(_v(s[1]) - _v(s[2])), base)
        if op is Ops.TRUNC:
            return _jump(_v(s[0]), da) if n.dtype.is_float else da
        if op is Ops.IDIV and n.dtype.is_float:
            q = s[0] / s[1]
            return _jump(_v(q), _rounded(q, self._div(q, s[1], ds[0], ds[1])))
        if op is Ops.MOD and n.dtype.is_float:  # fmod lies strictly within (-|b|, |b|)
            return _c(2.0) * _sum(_mag(s[1]), ds[1])
        if not n.dtype.is_float and op in (Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR,
                                           Ops.IDIV, Ops.MOD, Ops.BITCAST, Ops.POW):
            # integer bit and division ops of a value that may differ: no useful bound
            return _unbounded_where(_c(0.0).lt(_sum(*ds)), _c(0.0))
        raise BoundError(f"no rounding bound for {op.name} of {n.dtype} on a value that may "
                         f"differ: {n!r}")

    def _mul(self, a: UOp, b: UOp, da: UOp | None, db: UOp | None) -> UOp | None:
        parts = [None if db is None else _mag(a) * db, None if da is None else _mag(b) * da,
                 None if da is None or db is None else da * db]
        return _sum(*parts)

    def _div(self, n: UOp, den: UOp, dn: UOp | None, dd: UOp | None) -> UOp | None:
        if dd is None:
            return None if dn is None else dn / _mag(den)
        gap = _mag(den) - dd
        num = _sum(dn, _mag(n) * dd)
        return _unbounded_where(gap.lt(_c(0.0)) | gap.eq(_c(0.0)), num / gap)

    def _libm(self, n: UOp, ds: list[UOp | None]) -> UOp | None:
        op, s, d = n.op, n.src, ds[0]
        if op is Ops.POW:
            da, db = ds
            if da is None and db is None:
                return None
            t = _c(0.0) if da is None else _relative(da, s[0])
            z = _mag(s[1]) * t
            if db is not None:
                z = z + db * (_abs(_mag(s[0]).alu(Ops.LOG)) + t)
            return _mag(n) * z * z.alu(Ops.EXP)
        if d is None:
            return None
        if op is Ops.EXP:
            return _mag(n) * d * d.alu(Ops.EXP)
        if op is Ops.EXP2:
            dl = d * _c(math.log(2))
            return _mag(n) * dl * dl.alu(Ops.EXP)
        if op is Ops.LOG:
            return _relative(d, s[0])
        if op is Ops.LOG2:
            return _relative(d, s[0]) / _c(math.log(2))
        return d  # SIN, COS: 1-Lipschitz

    def _cast(self, n: UOp, d: UOp) -> UOp | None:
        src, dst = n.src[0].dtype, n.dtype
        if dst is dtypes.bool:
            if src is dtypes.bool:
                return d
            return _flip(n.src[0], UOp.const(src, 0), d, None)
        if not dst.is_float:
            return _jump(_v(n.src[0]), d) if src.is_float else d
        if src.is_float and np.finfo(src.np).bits <= np.finfo(dst.np).bits:
            return d  # widening is exact
        if src is dtypes.bool:
            return d
        return _rounded(n, d)

    def _reduce(self, n: UOp) -> UOp | None:
        x, rs = n.src[0], n.src[1:]
        dx = self.d.get(x)
        terms = 1
        for r in rs:
            if r.src[0].op is not Ops.CONST:
                raise BoundError(f"a reduce over a symbolic range has no rounding bound: {n!r}")
            terms *= int(r.src[0].arg)

        def red(v: UOp, how: Ops) -> UOp:
            return UOp(Ops.REDUCE, F64, (v, *rs), how)

        u, eta = _unit(n.dtype)
        if n.arg in (Ops.MAX, Ops.MIN):
            return None if dx is None else red(dx, Ops.MAX)
        if n.arg is Ops.ADD:
            if not n.dtype.is_float:
                return None if dx is None else red(dx, Ops.ADD)
            mags = red(_mag(x), Ops.ADD)
            own = _c(2 * terms * u) * mags + _c(terms * eta)
            if dx is not None:
                return red(dx, Ops.ADD) + own
            # the same whole numbers in both, |x_i| summing to at most 2^p (1/u): every partial
            # sum in any order, fused or not, is a whole number the dtype holds, so both sums
            # are exact (a dropped or doubled term is then seen, however small beside 2nu sum)
            whole = red(_abs(_v(x) - _v(x).alu(Ops.TRUNC)), Ops.MAX).eq(_c(0.0))
            return whole.where(mags.lt(_c(1 / u + 0.5)).where(_c(0.0), own), own)
        if n.arg is Ops.MUL:
            if not n.dtype.is_float:
                return None if dx is None else _unbounded_where(_c(0.0).lt(red(dx, Ops.MAX)),
                                                                _c(0.0))
            z = _c(2 * terms * u)
            if dx is not None:
                z = z + red(dx / _mag(x), Ops.ADD)
            return _mag(n) * z * z.alu(Ops.EXP)
        raise BoundError(f"no rounding bound for a REDUCE {n.arg}: {n!r}")


def bound_kernel(ast: UOp, out: int) -> UOp:
    """The kernel that writes, to float64 buffer `out` (appended after the kernel's own), the
    bound D of each element its stores write to buffer 0."""
    b = _Bounds()
    for n in toposort(ast):
        b.d[n] = b.of(n)
    stores = []
    for st in ast.src:
        idx = st.src[0]
        if st.op is not Ops.STORE or idx.src[0].op is not Ops.DEFINE_GLOBAL or idx.src[0].arg:
            continue
        d = b.d.get(st.src[1])
        glob = UOp(Ops.DEFINE_GLOBAL, F64, (), out)
        stores.append(UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, F64, (glob, *idx.src[1:])),
                                                   _c(0.0) if d is None else d, *st.src[2:])))
    return UOp.sink(*stores)


def kernel_bound(ast: UOp, ins: Sequence[np.ndarray]) -> np.ndarray:
    """Per element of buffer 0: the bound D of `bound_kernel`, run by the kernel interpreter
    on the inputs `ins` (buffer 0's contents are not read)."""
    from rulegrad.backends.kernel_interp import run_kernel

    bufs = [a.copy() for a in ins] + [np.zeros(ins[0].size, np.float64)]
    run_kernel(bound_kernel(ast, len(ins)), bufs)
    return bufs[-1]


__all__ = ["LIBM_ULPS", "BoundError", "bound_kernel", "kernel_bound"]
