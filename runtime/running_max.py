"""A float cummax's values read from its running key, marked for an O(n) gradient.

In: x (..., n), a float row marked CONTIGUOUS_BACKWARD, and `key`, the running max along its
last axis of cummax's key (runtime/tensor_ops.py's `_running_key`): rank(x[j]) * 2^32 + j * 2 +
s, the rank the float32 bits of x[j] read as a sign-magnitude integer (the zeros one rank, NaN
above all), s 1 for a -0.0. Out: `running_values`, torch's running max x[idx[i]] (idx the key's
low half over 2: the last maximum so far, the last NaN once there is one), read from the key's
bits: the rank's inverse (NaN a NaN), the spare bit a zero's sign, cast back to x's dtype (a
float16's value is its float32's exactly). A few elementwise ops on the key's one scan, where
picking x at the index was a one-hot sum (past 2 SCAN_BLOCK, per block: six kernels).

No gradient flows through bits: the values are marked CONTIGUOUS_BACKWARD, and rules/
gradient.rules' grad_scan_max hands the marked x `running_max_grad`, torch's scatter of the
incoming gradient g to the index: grad[j] sums g[i] over the i whose index is j. Those i are a
segment [j, e): idx is a step that rises only at a record j (idx[j] = j) and holds until the
next record e. So grad[j] is the sum of g over [j, e) at a record and 0 elsewhere, e found by a
running max read from the end. The sum is R[j] - R[e], R a reverse running sum, exact: a
float difference of two long sums erred by the whole rest of the row's terms (x = [1, 2],
g = [1, 1e17]: x0's 1 became 0), so g's finite part is cut into int64 limbs on float32's grid
of 2^-149 (`_limbs`), each limb's R an exact int scan, each difference exact, and the
segment's limbs carried and added in float64 once (`_float_sum`): the sum rounded about once,
its error the segment's own, as the reduction contract (runtime/semantics.py) asks. A few
O(n) kernels (a scan per limb, its value at e picked by a load), where the pick's backward
summed a one-hot of SCAN_BLOCK per element. A non-finite g (inf, NaN) would reach every
earlier R: the limbs read its finite part, and a segment's infinities and NaN are counted
apart (exact int sums), so each segment gets torch's inf, -inf or NaN and no other does.
The limbs pass no gradient to g: a float64 segment sum of g's finite part, its value taken away
exactly, carries it (a gradient of this gradient, torch's double backward: h gathered at idx).
"""

from __future__ import annotations

from . import origins
from .buffer import Positions
from .device import device_of, to_device
from .dtype import DType, dtypes
from .ops import Ops
from .running_sum import long_running
from .uop import UOp, toposort

_LOW = 0xFFFFFFFF
_MAGNITUDE = 0x7FFFFFFF


def key_index(key: UOp) -> UOp:
    """The running max's index (int32) held in a running key's low half."""
    return key.alu(Ops.AND, _LOW).alu(Ops.SHR, 1).cast(dtypes.int32)


def running_values(xm: UOp, key: UOp, negated: bool = False) -> UOp:
    """x[idx[i]] along the last axis, from the key alone, marked for grad_scan_max; `negated`:
    the key is -x's (a running min: -x's running max, negated back exactly, so the gradient
    is the same scatter with no negation on its way, a zero's sign as torch's)."""
    d = _decoded(key, xm.dtype)
    return (d.alu(Ops.NEG) if negated else d).f(Ops.CONTIGUOUS_BACKWARD)


def _decoded(key: UOp, dtype: DType) -> UOp:
    rank = key.alu(Ops.SHR, 32).cast(dtypes.int32)
    bits = rank.lt(0).where(rank.alu(Ops.XOR, _MAGNITUDE), rank)
    negative_zero = key.alu(Ops.AND, 1).eq(1)  # (its rank is 0: its bits are the sign bit's)
    bits = negative_zero.where(bits.const_like(dtypes.int32.min), bits)
    return UOp(Ops.BITCAST, dtypes.float32, (bits,)).cast(dtype)


def running_parts(v: UOp) -> tuple[UOp, UOp] | None:
    """(marked x, key) of values that `running_values` built; None for any other node."""
    if v.op is not Ops.CONTIGUOUS_BACKWARD or not v.dtype.is_float or not v.shape:
        return None
    d = v.src[0].src[0] if v.src[0].op is Ops.NEG else v.src[0]
    keys = [k for k in toposort(d) if k.dtype is dtypes.int64 and k.shape == v.shape
            and _decoded(k, v.dtype) is d]
    if len(keys) != 1:
        return None
    marked = [m for m in toposort(keys[0]) if m.op is Ops.CONTIGUOUS_BACKWARD
              and m.dtype is v.dtype and m.shape == v.shape]
    return (marked[0], keys[0]) if len(marked) == 1 else None


def running_max_grad(g: UOp, xm: UOp, key: UOp) -> dict[UOp, UOp]:
    """{marked x: the gradient of x[idx]}: g[i] summed into idx[i], one segment per record."""
    *lead, n = xm.shape
    if n == 1:  # (each element is its own running max)
        return {xm: g}
    pos = _positions(n + 1, xm)
    here = pos.shrink(((0, n),)).reshape((1,) * len(lead) + (n,)).expand(xm.shape)
    # (each scan below stored, as is the key it reads: a scan read inside another scan's
    # window, or by a pick, was recomputed for each of its reads)
    record = key_index(key.f(Ops.CONTIGUOUS)).eq(here)
    # n - e for the first record e at or after each position (0 past the last one): a running
    # max read from the end, shifted one on for the next record after each position
    after = long_running(_flipped(record.where(here.const_like(n) - here, here.const_like(0))),
                         Ops.MAX)
    after = _flipped(after.f(Ops.CONTIGUOUS))
    last = ((0, 0),) * len(lead)
    after = after.pad((*last, (0, 1))).shrink((*((0, s) for s in lead), (1, n + 1)))
    nxt = after.const_like(n) - after
    finite = (g * 0).eq(0)  # (inf * 0 and NaN * 0 are NaN)
    limbs, width = _limbs(finite.where(g, g.const_like(0)))
    # each segment's infinities and NaN counted (below 2^21 each: tensor_ops.py's `_keyed`
    # takes shorter rows): NaN, or inf and -inf, make NaN; else the inf there is
    count = (g.ne(g).cast(dtypes.int64) * (1 << 42) + g.eq(float("inf")).cast(dtypes.int64)
             * (1 << 21) + g.eq(float("-inf")).cast(dtypes.int64))
    *sums, counts = _segment_sums([*limbs, count], nxt, pos)
    wide = _float_sum(sums, width)
    nan = counts.alu(Ops.SHR, 42).ne(0)
    up, down = counts.alu(Ops.SHR, 21).alu(Ops.AND, (1 << 21) - 1).ne(0), \
        counts.alu(Ops.AND, (1 << 21) - 1).ne(0)
    wide = up.where(wide.const_like(float("inf")), wide)
    wide = down.where(wide.const_like(float("-inf")), wide)
    wide = nan.alu(Ops.OR, up.alu(Ops.AND, down)).where(wide.const_like(float("nan")), wide)
    if _differentiable(g):
        # g's own gradient (a gradient of this gradient: torch's double backward, the gather of
        # the incoming h at idx): none flows through the limbs' bits, so a float64 segment sum
        # of g's finite part carries it, its value taken away again exactly (finite: n < 2^21
        # float32 terms; s - s is +0.0, and wide - +0.0 keeps a -0.0). One more scan, only
        # where g reaches a tensor that requires a gradient (a constant g's has none to carry)
        s = _at(_reverse_sum(finite.where(g, g.const_like(0)).cast(dtypes.float64)), nxt, pos)
        wide = wide - (s.f(Ops.DETACH) - s)
    return {xm: record.where(wide.cast(g.dtype), g.const_like(0))}


def _differentiable(g: UOp) -> bool:
    """Whether g's graph reaches a tensor that requires a gradient (runtime/origins.py)."""
    if not origins.any_need:
        return False
    targets = origins.wanted()
    return bool(targets) and any(n in targets for n in toposort(g))


def _limbs(g: UOp) -> tuple[list[UOp], int]:
    """A finite g of at most 32 bits as int64 limbs of `width` bits (and the width): g's
    float32 on the fixed-point grid of 2^-149 (277 bits), limb k its bits [k width, (k + 1)
    width), signed as g. A segment's sum of each limb is exact (n terms below 2^width fit an
    int64), so a difference of two reverse running sums cancels nothing, where a float64
    difference erred by the whole rest of the row's terms, not the segment's."""
    width = 63 - g.shape[-1].bit_length()  # (n terms below 2^width, and a carry: an int64)
    bits = UOp(Ops.BITCAST, dtypes.int32, (g.cast(dtypes.float32),))
    e = bits.alu(Ops.SHR, 23).alu(Ops.AND, 0xFF).cast(dtypes.int64)
    frac = bits.alu(Ops.AND, 0x7FFFFF).cast(dtypes.int64)
    m = e.eq(0).where(frac, frac.alu(Ops.OR, 1 << 23))  # |g| = m * 2^(s - 149)
    s = e.maximum(1) - 1
    limbs = []
    for k in range(-(-277 // width)):
        sh = s - k * width  # where m's lowest bit falls in this limb
        up = sh.maximum(0).minimum(width)
        low = m.alu(Ops.AND, m.const_like(1).alu(Ops.SHL, up.const_like(width) - up) - 1) \
            .alu(Ops.SHL, up)
        limb = sh.lt(0).where(m.alu(Ops.SHR, (-sh).minimum(63)), low)
        limbs.append(bits.lt(0).where(-limb, limb))
    return limbs, width


def _float_sum(limbs: list[UOp], width: int) -> UOp:
    """The float64 of the sum of limb k * 2^(k width - 149), rounded about once: the carries
    resolved (every limb but the last in [0, 2^width), so the last's sign is the sum's), the
    magnitude's limbs, all >= 0, added."""
    limbs = _carried(limbs, width)
    sign = limbs[-1].lt(0)
    limbs = _carried([sign.where(-d, d) for d in limbs], width)
    total = limbs[0].cast(dtypes.float64) * 2.0 ** -149
    for k, d in enumerate(limbs[1:], 1):
        total = total + d.cast(dtypes.float64) * 2.0 ** (k * width - 149)
    return sign.where(-total, total)


def _carried(limbs: list[UOp], width: int) -> list[UOp]:
    """The same sum with every limb but the last in [0, 2^width), its excess carried up."""
    out, carry = [], None
    for d in limbs:
        d = d if carry is None else d + carry
        if len(out) < len(limbs) - 1:
            carry, d = d.alu(Ops.SHR, width), d.alu(Ops.AND, (1 << width) - 1)
        out.append(d)
    return out


def _segment_sums(parts: list[UOp], nxt: UOp, pos: UOp) -> list[UOp]:
    """Each int64 part's sum over [i, nxt[i]), exact: a reverse running sum each (not stacked
    into one: k parts' windows would pass the work limit where the forward's one scan did not)."""
    return [_at(_reverse_sum(p), nxt, pos) for p in parts]


def _reverse_sum(x: UOp) -> UOp:
    """The reverse running sum of x, and one past its end (0): (..., n + 1)."""
    r = _flipped(long_running(_flipped(x), Ops.ADD).f(Ops.CONTIGUOUS))
    return r.pad((*((0, 0),) * (x.ndim - 1), (0, 1)))


def _at(r: UOp, nxt: UOp, pos: UOp) -> UOp:
    """r[..., i] - r[..., nxt[..., i]] (r one longer than nxt): the sum of [i, nxt[i]), its
    second read a one-hot sum over the positions that rules/kernel.rules' pick_load makes a
    load."""
    grid = (*nxt.shape, r.shape[-1])
    hot = nxt.reshape((*nxt.shape, 1)).expand(grid).eq(
        pos.reshape((1,) * nxt.ndim + pos.shape).expand(grid))
    rows = r.reshape((*r.shape[:-1], 1, r.shape[-1])).expand(grid)
    # (a float's pick starts from -0.0, its identity, as Tensor._pick's: the form pick_load
    # folds)
    zero = -0.0 if r.dtype.is_float else 0
    arg = (Ops.ADD, (nxt.ndim,), zero) if r.dtype.is_float else (Ops.ADD, (nxt.ndim,))
    picked = hot.where(rows, rows.const_like(zero))
    picked = UOp(Ops.REDUCE_AXIS, r.dtype, (picked,), arg).reshape(nxt.shape)
    return r.shrink((*((0, s) for s in nxt.shape),)) - picked


def _flipped(x: UOp) -> UOp:
    return x.flip((False,) * (x.ndim - 1) + (True,))


def _positions(n: int, like: UOp) -> UOp:
    """0 .. n - 1 (int32) where `like` lives, a Positions table that rangeify reads as its index
    (runtime/buffer.py), so a one-hot sum over it is a load."""
    table = UOp(Ops.BUFFER, dtypes.int32, (), Positions(n, dtypes.int32))
    dev = device_of(like)
    return to_device(table, dev) if isinstance(dev, str) else table
