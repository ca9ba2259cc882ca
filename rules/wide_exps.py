"""Where a 512-bit target computes float32 exps 16 lanes at a time (and a 256-bit one fills a
row of them in 8-lane vectors, `lane_fill`): facts the C printer (backends/c/render.py) reads
about a kernel's lowered UOps, as it reads `reduce_vectors`.

In: a "vector" REDUCE, a kernel-local DEFINE_LOCAL or an upcast STORE (backends/KERNEL_AST.md,
"after lowering"). Out: bools. vexp.py's exp core costs the same instructions at 16 lanes as at
8, and gcc's loops called its 16-lane clone per vector, so where a loop's values are float32
arithmetic, exps, compares and selects the printer runs them in explicit 16-lane vectors with
the core inline (vexp.WIDE). The same core, so the same bits; a reduce's partial sums keep their
8 lanes, values and order.
"""

from __future__ import annotations

import math

from rulegrad.rules.opt_helpers import along, one_row, vector_reducible, vector_values
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import vector_bytes
from rulegrad.runtime.uop import UOp

# the ops a pair of a float32 reduce's 8-lane vectors computes as one 16-lane value (`paired`)
_PAIR_OPS = frozenset({Ops.LOAD, Ops.INDEX, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.NEG,
                       Ops.EXP, Ops.WHERE})
# and masks of float32 compares, combined (a sigmoid's stable form selects by one)
_MASK_OPS = frozenset({Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR})


_HALF_FLOAT = {dtypes.float16, dtypes.float32}


def paired(red: UOp) -> bool:
    """Whether a "vector" float32 reduce computes its value for two of its 8-lane vectors at
    once, in 16 lanes: on a 512-bit target (runtime/target.py) when the value has an EXP and
    only float32 ops of _PAIR_OPS (and masks) along the loop. The partial results stay 8-lane
    vectors, each taking the same values in the same order, and the exps the same bits: the
    same sums (render.py's `_vector_steps`)."""
    return red.dtype is dtypes.float32 and _wide_exps(red.src[0].src[1], red.src[-1])


def wide_fill(x: UOp) -> bool:
    """Whether a float32 kernel-local row (DEFINE_LOCAL over one loop, `one_row`: a softmax's
    exps) or a "simd" STORE (`upcast`'s at 512 bits: a sigmoid) at least 16 long is printed in
    explicit 16-lane vectors, vexp.py's core inline, as `paired` says (gcc's loop called the
    library's 16-lane clone per vector): render.py's `_open_local` and `render_group`."""
    store = x.op is Ops.STORE
    if store and x.src[1].dtype is dtypes.float16:
        return _wide_halves(x)
    j, value = x.src[-1], x.src[1] if store else x.src[0]
    out = x.src[0].src[0] if store else None  # (never read: its last vector overlaps)
    return ((x.src[1] if store else x).dtype is dtypes.float32 and (range_size(j) or 0) >= 16
            and (j.arg[1] in ("upcast", "simd") if store else one_row(x))
            and _wide_exps(value, j, out, x.src[0].src[1] if store else None))


def lane_fill(row: UOp) -> bool:
    """Whether a float32 kernel-local row of exps (`one_row`: a softmax's) at least 8 long is
    filled in explicit 8-lane vectors with the core inline (vexp.VECTOR's), on a 256-bit
    target, as `wide_fill` fills it 16 lanes at a time on a 512-bit one: gcc's `omp simd` loop
    called the library's 8-lane clone, which loaded the core's constants again every call (a
    C loop over a row in L1, one thread, CPU time: 1.07 ns a value, inline 0.60). Not in 16
    lanes: such a target has no register for them, and gcc kept them in memory (the softmax
    2x slower). Its sum reads the row back (`fills_sum` is false): the same steps."""
    j = row.src[-1]
    return row.dtype is dtypes.float32 and (range_size(j) or 0) >= 8 and one_row(row) \
        and _wide_exps(row.src[0], j, bytes_=32)


def _wide_exps(value: UOp, r: UOp, out: UOp | None = None, at: UOp | None = None,
               bytes_: int = 64) -> bool:
    """On a target of `bytes_` vector bytes (64; `lane_fill`: 32): `value` has an EXP along loop r
    and is float32 ops of _PAIR_OPS along it, reading contiguously and never `out`, its indices
    (and `at`) affine in r."""
    if vector_bytes() != bytes_:
        return False
    nodes = along(value, r)
    return any(n.op is Ops.EXP for n in nodes) and all(map(_wide_op, nodes)) \
        and vector_values(nodes + (along(at, r) if at is not None else []), r, out, (1,), _PAIR_OPS)


def nonpositive(x: UOp) -> bool:
    """Whether a float value is <= 0 or NaN wherever it is computed: a row's value less its own
    row's max, `v - max(v)` (a softmax's exp argument), through float casts (a rounding keeps
    the sign). The MAX reduce runs over a range of the same size as one of v's ranges, and v
    with that range replaced by the reduce's is the reduce's value: so v is one of the values
    the max took (its start, the register's, can only raise it). A float16 softmax rounds the
    max to a half: v is a half's value (a rounding keeps it), and a rounding is monotone, so v
    stays at most the rounded max. NaN stays NaN, and an inf max gives -inf or NaN. render.py
    then prints exp without its overflow clamp (vexp's `rg_zexpn_f32`: the same bits there).
    So is -|a| written as a select on a's sign (a sigmoid's and silu's exp(-|x|))."""
    while x.op is Ops.CAST and x.dtype in _HALF_FLOAT and x.src[0].dtype in _HALF_FLOAT:
        x = x.src[0]
    if x.op is Ops.WHERE:  # -|a| (a sigmoid's stable form): -a where a >= 0, else a
        c, t, f = x.src
        return (t.op is Ops.NEG and t.src[0] is f and _nonnegative_test(c, f)) or (
            f.op is Ops.NEG and f.src[0] is t and _is_cmp(c, Ops.CMPLT, t, 1))
    if x.op is not Ops.SUB:
        return False
    v, m = x.src
    half = v.dtype is dtypes.float16 or (v.op is Ops.CAST and v.src[0].dtype is dtypes.float16)
    while m.op is Ops.CAST and m.dtype in _HALF_FLOAT and m.src[0].dtype in _HALF_FLOAT \
            and (half or m.dtype is dtypes.float32):
        m = m.src[0]
    if m.op is not Ops.REDUCE or m.arg is not Ops.MAX or len(m.src) != 2:
        return False
    value, r = m.src
    if value.op is Ops.MAX and value.src[0].op is Ops.DEFINE_REG:  # (a vector reduce's form)
        value = value.src[1]
    # (the same size: the same end node, a constant's or a variable's; range_size is None for
    # any symbolic range, and x[0:n] - max(x[0:k]) is not <= 0)
    return any(c.op is Ops.RANGE and c is not r and _same_size(c, r)
               and v.substitute({c: r}) is value for c in v.toposort())


def _same_size(a: UOp, b: UOp) -> bool:
    size = range_size(a)
    return a.src[0] is b.src[0] or (size is not None and size == range_size(b))


def _is_cmp(c: UOp, op: Ops, a: UOp, zero_at: int) -> bool:
    """c is `op` of a and a constant 0, the 0 at source `zero_at` (CMPEQ: either)."""
    return c.op is op and len(c.src) == 2 and c.src[1 - zero_at] is a \
        and c.src[zero_at].op is Ops.CONST and c.src[zero_at].arg == 0


def _nonnegative_test(c: UOp, a: UOp) -> bool:
    """c true only where a >= 0, false only where a <= 0 or NaN: `0 < a`, or `0 < a or a == 0`
    (NaN compares false, so a NaN takes the false side)."""
    gt = lambda n: _is_cmp(n, Ops.CMPLT, a, 0)  # noqa: E731
    eq = lambda n: _is_cmp(n, Ops.CMPEQ, a, 0) or _is_cmp(n, Ops.CMPEQ, a, 1)  # noqa: E731
    return gt(c) or (c.op is Ops.OR and len(c.src) == 2 and (
        (gt(c.src[0]) and eq(c.src[1])) or (gt(c.src[1]) and eq(c.src[0]))))


def _wide_op(n: UOp) -> bool:
    """A node with a 16-lane form: float32 ops of _PAIR_OPS, float32 compares and masks."""
    if n.dtype is dtypes.bool:  # (no bool CMPLT: masks order true below false)
        return n.op in _MASK_OPS and (n.src[0].dtype is dtypes.float32 or n.op is not Ops.CMPLT)
    if n.op is Ops.CAST and {n.dtype, n.src[0].dtype} == _HALF_FLOAT:
        return True  # (a float16's read widened, a float32 rounded to one: vexp.WIDE_HALF's)
    if n.dtype is dtypes.float16:  # (a float16 log_softmax's sum of exps)
        return n.op in (Ops.LOAD, Ops.INDEX)
    return n.op in _PAIR_OPS and n.dtype in (dtypes.float32, dtypes.index) and (
        n.op is not Ops.WHERE or n.src[0].dtype is dtypes.bool)


# the float32 ops a float16 store's vector loop computes in 16 lanes (`_wide_halves`): a pair's,
# and MAX and MIN (a tanh's clamp; render.py prints ctext.WIDE_MINMAX's, numpy's NaN and zeros)
_HALF_STORE_OPS = _PAIR_OPS | {Ops.MAX, Ops.MIN}


def _wide_halves(st: UOp) -> bool:
    """Whether a float16 STORE in UPCAST's explicit vectors (a "vector" loop at least 16 long) is
    printed 16 lanes a vector, on a 512-bit target: its values along the loop float16 reads,
    casts between float16 and float32 (vexp.WIDE_HALF's widen and round), float32 ops of
    _HALF_STORE_OPS and masks, and `_half_store_op`'s exact ops on halves, read contiguously
    from the kernel's buffers, never the stored one. Every float16 op is a float32 op and a
    rounding (lower.rules): two conversions, as many instructions for 16 lanes as for 8, and
    8 lanes kept half of float32's values in flight (gcc's loop: 16). A float16
    sigmoid(x * y + 1.5) * x - tanh(y) over 2097143, one thread, CPU time of the kernel's C:
    8 lanes 5.0 ms, 16 lanes 2.95 (float32's 1.8). With or without an exp: the conversions
    alone are worth it."""
    j = st.src[-1]
    if vector_bytes() != 64 or (range_size(j) or 0) < 16 or j.arg[1] != "vector":
        return False
    nodes = along(st.src[1], j) + along(st.src[0].src[1], j)
    if any(n.op is Ops.INDEX and n.src[0].op is not Ops.DEFINE_GLOBAL for n in nodes):
        return False  # (a kernel-local row's reads: its fill is printed in the loop, `wide_half`)
    return all(n.dtype is dtypes.index or _wide_op(n) or _half_store_op(n) for n in nodes) \
        and vector_values(nodes, j, st.src[0].src[0], (1,), _HALF_STORE_OPS)


def _half_store_op(n: UOp) -> bool:
    """The exact ops on halves (a float16's lanes are its float32 value) a 16-lane float16 store
    computes besides `_wide_op`'s: MAX and MIN (a relu, a clip, tanh's clamp; ctext.WIDE_MINMAX),
    a WHERE of halves by a mask, and compares of halves (float32 compares of their values)."""
    if n.op in (Ops.MAX, Ops.MIN):
        return n.dtype in _HALF_FLOAT
    if n.op is Ops.WHERE:
        return n.dtype is dtypes.float16 and n.src[0].dtype is dtypes.bool
    return n.dtype is dtypes.bool and n.op in (Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE) \
        and n.src[0].dtype is dtypes.float16


def filled(red: UOp) -> UOp | None:
    """A float32 sum over one loop of a whole kernel-local row (a softmax's exps) that the
    vector reduce takes (opt_helpers' `vector_reducible`), its range marked "fill": where the
    row is printed in 16 lanes (`wide_fill`, a 512-bit target), the printer adds the row's
    values up as the row's loop stores them (render.py's `_close_local`), not in a second loop
    that reads the row back; elsewhere it prints that second loop, the vector reduce's. The
    same steps either way (4 vectors of 8 partial results), so the same bits. The sum starts
    from +0.0, as the fill's lanes do: a start of -0.0 (a pick's) is left to vector_reduce."""
    if red.arg is not Ops.ADD or red.dtype is not dtypes.float32 or len(red.src) != 2 \
            or not vector_reducible(red):
        return None
    r, (reg, value) = red.src[1], red.src[0].src
    if reg.arg != 0 or math.copysign(1.0, reg.arg) < 0:
        return None
    idx = value.src[0] if value.op is Ops.LOAD and len(value.src) == 1 else None
    row = idx.src[0] if idx is not None and idx.op is Ops.INDEX and len(idx.src) == 2 else None
    if row is None or row.op is not Ops.DEFINE_LOCAL or len(row.src) != 2 \
            or idx.src[1] is not r or range_size(r) != range_size(row.src[1]):
        return None
    return red.substitute({r: r.replace(arg=(r.arg[0], "fill"))})


def fills_sum(row: UOp) -> bool:
    """Whether a "fill" sum of kernel-local `row` is added up in the row's own loop (render.py's
    `_close_local`: each 16-lane block two of the vector reduce's vectors): where the row is
    filled 16 lanes at a time (`wide_fill`), any length. The row's blocks of REDUCE_VECTORS
    vectors of VECTOR_LANES are added as they are stored; what is past the last (fewer than
    32 values) is read back after the loop in the vector reduce's steps (render.py's
    `_fill_tail`), so the same bits. (Sending those values to their partial sums one lane at
    a time inside the loop cost rows of 1000 and 4099 more than the pass it saved.) Every row
    elsewhere is read back by the vector reduce's loop."""
    return wide_fill(row)


# the ops a float16 row filled 16 lanes at a time computes (`wide_half`): float32 math on its
# halves' float lanes, and the casts between the two (vexp.WIDE_HALF's widen and round)
_HALF_OPS = frozenset({Ops.LOAD, Ops.INDEX, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.NEG,
                       Ops.EXP, Ops.CAST})


def wide_half(row: UOp) -> bool:
    """Whether a float16 kernel-local row that opt_helpers' `half_row` fills in vectors (a
    float16 softmax's exps) takes 16 lanes a vector, on a 512-bit target: its values along the
    loop float16 or float32 ops of _HALF_OPS (a CAST only between the two), read contiguously.
    The exp core's instructions are as many at 16 lanes as at 8 (vexp.WIDE_HALF)."""
    j = row.src[-1]
    if vector_bytes() != 64 or (range_size(j) or 0) < 16:
        return False
    for n in along(row.src[0], j):
        if n.dtype is dtypes.index:
            continue
        if n.op not in _HALF_OPS or n.dtype not in (dtypes.float16, dtypes.float32) or (
                n.op is Ops.CAST and n.src[0].dtype not in (dtypes.float16, dtypes.float32)):
            return False
    return True
