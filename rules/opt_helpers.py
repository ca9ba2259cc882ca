"""Helpers of `opt.rules`: the facts the kernel optimizer's actions test, and the two actions.

In: lowered kernel UOps (backends/KERNEL_AST.md, "after lowering"). Out: bools, ints, UOps.

The actions change how a kernel is computed, never what it computes:

- `unrolled(red)`: a loop-form REDUCE over a few values as straight-line code, its combining
  ops applied in the loop's order, from the accumulator's identity (the same values, in the
  same order, as the loop: bit for bit);
- `upcast(st)`: the STORE's innermost loop marked `RANGE(..., (id, "upcast"))`, which the C
  renderer prints as a vectorized loop (`omp simd`: the loop's iterations computed side by
  side, each exactly as before), or `RANGE(..., (id, "vector"))` when every value along it
  has an explicit vector form (`vectorizable`): the renderer then prints VECTOR_LANES-wide
  vectors itself, a strided window's reads as vector loads and a shuffle, and the loop's last
  vector overlapping the one before it instead of a scalar tail; or, on a 512-bit target
  with every read contiguous, `RANGE(..., (id, "simd"))`: `omp simd` again, in a kernel
  compiled as the explicit vectors' are;
- `vector_reduce(red)`: a float32 or float64 sum, max or min along a contiguous loop with its
  innermost range marked `RANGE(..., (id, "vector"))`: the renderer keeps REDUCE_VECTORS
  vectors of partial results (8 float32 lanes, 4 float64: target.vector_lanes), so
  consecutive steps do not wait on each other. A max or min is exact in
  any order; a float sum's order is the reduction contract's (runtime/semantics.py).
"""

from __future__ import annotations

import itertools
import math

from rulegrad.rules.choices import taken
from rulegrad.rules.pack_helpers import depthwise, has_layout
from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.loops import free_ranges, index_sums, linear_terms, range_size, stride
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import (
    REDUCE_VECTORS,
    UNROLL_MAX,
    VECTOR_LANES,
    vector_bytes,
    vector_lanes,
)
from rulegrad.runtime.uop import UOp, toposort

# an innermost loop shorter than this is not worth a vector (8 float32 lanes in 256 bits)
UPCAST_MIN = 8
# reads further apart than this along the upcast axis are gathers (a transpose): left scalar
UPCAST_MAX_STRIDE = 4
# (VECTOR_LANES, an explicit vector's float32 lanes: runtime/target.py)
# the sizes of a short innermost loop unrolled inside an upcast one (`upcast_across`): the
# interleaved groups gcc's vectorizer permutes (3 or a power of two: gcc 12's
# vect_grouped_load_supported); other sizes it gathers and scatters, which ran 3-13x slower than
# the scalar loop (a broadcast of (97, 1009, t) for t = 5, 7, 11, 13)
INTERLEAVED = (2, 3, 4)
# the reads an explicit vector makes along its loop: contiguous, or every other element (a
# stride-2 window: two loads and a shuffle); wider strides are left to gcc's `omp simd`
VECTOR_STRIDES = (1, 2)
# and wider strides, up to a short reduce's row (UNROLL_MAX), lane by lane (8 scalar loads into
# a vector), where the loads along the loop together read every element of the rows the lanes
# step over (`whole_rows`: a max over rows of 7 unrolled, 7 reads 7 apart): the lines are
# read whole, and the row's ops run on vectors, not one NaN-propagating max at a time
# (65521 x 7: 0.5x torch's speed scalar)
GATHER_STRIDES = VECTOR_STRIDES + tuple(range(3, UNROLL_MAX + 1))
# (REDUCE_VECTORS, the vectors of partial results a reduce keeps: runtime/target.py)
# the float32 ops with an explicit vector form (render.py's `_render_vector`); every value
# along the loop must be one of them, and its index arithmetic affine in the loop variable
_VECTOR_OPS = frozenset({Ops.LOAD, Ops.INDEX, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.MAX,
                         Ops.MIN, Ops.NEG})
# and in a reduce's vectors, EXP too (vexp.py's core inline): a row's sum of exps (logsumexp)
# interleaves its partial vectors' exps, where gcc's loop spilled its sum around a call per
# vector (ab.py --cpu: 100x1000 1.09x). A store's loop keeps gcc's call: on AVX-512 its 16-lane
# clone beat our 8 inline lanes (a sigmoid at 256-bit explicit vectors ran 0.75x)
_REDUCE_VECTOR_OPS = _VECTOR_OPS | {Ops.EXP}
# and beside them, lanes of the float's width (render.py's `vector_type`): int32 values and bool
# lane masks, so a mask built from int positions (a causal attention's arange compare, its
# `where(mask, s, -inf)`) keeps its row in vectors. Each op is exact lane by lane; an int32 add
# or product wraps, as numpy's and the scalar C's (-fwrapv). A compare's operands are float32
# or int32 lanes (masks order true below false, so a bool CMPLT is not one)
_LANE_OPS: dict = {
    dtypes.float32: frozenset({Ops.WHERE, Ops.CAST}),
    dtypes.int32: frozenset({Ops.LOAD, Ops.INDEX, Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.AND,
                             Ops.OR, Ops.XOR, Ops.WHERE, Ops.CAST, Ops.MAX, Ops.MIN}),
    dtypes.bool: frozenset({Ops.LOAD, Ops.INDEX, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND,
                            Ops.OR, Ops.XOR, Ops.WHERE, Ops.CAST}),
}
_LANE_DTYPES = (dtypes.float32, dtypes.int32, dtypes.bool)
# float16 values in float32 lanes (exact: every half is a float): loaded and stored through
# F16C's conversions (render.py), compared and selected as floats, and rounded where the graph
# casts float32 to float16 (lower.rules computes float16 math in float32, one rounding per op,
# as numpy does). gcc 12 vectorizes no _Float16 conversion without AVX512-FP16: scalar, an
# elementwise half kernel ran 3x torch's time, a ReLU's compare-and-select 45x
_HALF_OPS = frozenset({Ops.LOAD, Ops.INDEX, Ops.WHERE, Ops.CAST})


def _half_op(n: UOp) -> bool:
    """A float16 op with a vector form in float32 lanes (`_HALF_OPS`): a contiguous load, a
    select by a mask, a cast from or to float32."""
    if n.op not in _HALF_OPS:
        return False
    if n.op is Ops.WHERE:
        return n.src[0].dtype is dtypes.bool
    if n.op is Ops.CAST:
        return {n.dtype, n.src[0].dtype} == {dtypes.float16, dtypes.float32}
    return True


def _lane_op(n: UOp) -> bool:
    """An int32, bool or mixed op with a vector form of the float's width (`_LANE_OPS`)."""
    if n.dtype is dtypes.float16 or (n.op is Ops.CAST and n.src[0].dtype is dtypes.float16):
        return _half_op(n)
    if n.op not in _LANE_OPS.get(n.dtype, ()):
        return False
    if n.op is Ops.WHERE:
        return n.src[0].dtype is dtypes.bool
    if n.op is Ops.CAST:  # (not float32 -> int32: a vector conversion gives INT_MIN for NaN
        # and out of range, where the IR's cast is defined: 0, wrapped or saturated, rg_f2i;
        # an index -> int32 is its lanes' positions, a mask's: render.py's `_emit_vector`)
        if n.src[0].dtype is dtypes.index:
            return n.dtype is dtypes.int32
        return n.src[0].dtype in _LANE_DTYPES and not (
            n.dtype is dtypes.int32 and n.src[0].dtype is dtypes.float32)
    if n.op is Ops.CMPLT:
        return n.src[0].dtype in (dtypes.float32, dtypes.float16, dtypes.int32)
    if n.op in (Ops.CMPNE, Ops.CMPEQ):
        return n.src[0].dtype in (*_LANE_DTYPES, dtypes.float16)
    return True


# a depthwise convolution's window (pack_helpers' `depthwise`) is unrolled up to this many
# values, a 13x13 window: straight-line code lets its output row run as vectors (UPCAST), where
# its loops left a scalar sum per output (8x32x29x32 depthwise 5x5 stride 2: 0.42x torch's
# speed, 4x less CPU time unrolled; 7x7 stride 2, 2.4x; 9x9 2.8x, 11x11 6.4x, 13x13 2.2-4.7x
# less CPU time than at a bound of 64). A bound on the code's size: 15x15 and 16x16 windows
# unrolled took 1.9-3.2x more CPU time than their loops (bench/ab.py --cpu, rev58b)
WINDOW_UNROLL_MAX = 169


def small_reduce(red: UOp) -> bool:
    """A loop-form REDUCE (`REDUCE(op(DEFINE_REG, v), *ranges)`) over at most UNROLL_MAX
    values of constant ranges (WINDOW_UNROLL_MAX for a sum of products), with no reduce inside
    it, that is not a sum of products with a layout or vectors of its own nor a MAX or MIN
    along a contiguous vector or two (`vector_reducible`)."""
    update = red.src[0]
    if red.arg is None or not update.src or update.src[0].op is not Ops.DEFINE_REG:
        return False
    sizes = [range_size(r) for r in red.src[1:]]
    products = red.arg is Ops.ADD and update.op is Ops.ADD and update.src[1].op is Ops.MUL
    most = WINDOW_UNROLL_MAX if products and depthwise(red) else UNROLL_MAX
    if not sizes or None in sizes or math.prod(sizes) > most:  # type: ignore[arg-type]
        return False
    if any(r.arg[1] != "reduce" for r in red.src[1:]):
        return False  # given another action already (its loop a vector's)
    # a sum of products is the packed loops' (gemm.py) or a register tile's, whatever its length,
    # when it has rows and columns to take (pack_helpers' has_layout), or vector accumulators'
    # along a contiguous row (a layer norm's squares); a depthwise convolution's window has
    # neither, and ran as scalar loops (after the cheap tests: every REDUCE of every
    # pass asks)
    if products and (has_layout(red) or vector_reducible(red)):
        return False
    if red.arg in (Ops.MAX, Ops.MIN) and vector_reducible(red):
        # a row of 8 to 16 values read contiguously: one or two vectors and a vector combine,
        # where the unrolled chain is scalar steps, each waiting on the last (a pool's window
        # is narrower than a vector, and its chain vectorizes along the output row instead)
        return False
    return not any(n.op is Ops.REDUCE for n in toposort(update))


def _neutral(op: Ops, dt) -> bool:
    """True when op(identity, x) is x bit for bit for every x of dtype dt: MAX(-inf, x) and
    MIN(+inf, x) (NaN and -0.0 included), 1 * x, and 0 + x on ints. A float sum is not:
    0.0 + -0.0 is +0.0, and a sum of -0.0s must be +0.0 (runtime/semantics.py)."""
    return op in (Ops.MAX, Ops.MIN, Ops.MUL) or (op is Ops.ADD and not dt.is_float)


def unrolled(red: UOp, noted: bool = True) -> UOp:
    """The REDUCE's value as straight-line code: acc = identity, then acc = update at each
    point of the ranges in loop order (the last range fastest). Where the identity is neutral
    the chain starts from the first value instead: a 3x3 max-pool is 8 MAXes, not 9. `noted`:
    recorded as an action (not for a caller that may yet refuse: across_helpers)."""
    update, ranges = red.src[0], red.src[1:]
    if noted:
        taken(unroll_line(red))
    acc = update.src[0]
    value: UOp | None = None
    if not _neutral(red.arg, acc.dtype):
        value = UOp.const(acc.dtype, acc.arg)
    for point in itertools.product(*(range(range_size(r)) for r in ranges)):  # type: ignore[arg-type]
        at = {r: UOp.const(dtypes.index, v) for r, v in zip(ranges, point)}
        if value is None:  # update is op(acc, x): the first step's value is x
            value = update.src[1].substitute(at)
        else:
            value = update.substitute({acc: value, **at})
    assert value is not None
    return value


def unroll_line(red: UOp) -> str:
    """How DEBUG=2 names a reduce unrolled."""
    count = math.prod(range_size(r) for r in red.src[1:])  # type: ignore[misc]
    return f"UNROLL {red.arg.name} over {loop_names(red.src[1:])} ({count} values)"


def loop_names(ranges: tuple[UOp, ...] | list[UOp]) -> str:
    """Loops as the actions' lines name them: `r4 r5`."""
    return " ".join(f"r{r.arg[0]}" for r in ranges)


def upcast(st: UOp) -> UOp | None:
    """The STORE with its innermost loop marked for vectorizing (as `vectorizable` says, else
    gcc's `omp simd`, "upcast") when the loop is worth it: at least UPCAST_MIN long, written
    contiguously, read at most UPCAST_MAX_STRIDE apart, with no loop inside it (no REDUCE
    along it left; one computed once per row, outside it, is fine) and no gated load (a gated
    read vectorizes only as a masked load; gcc 12.2 has dropped lanes of those, flags.py).
    An innermost loop shorter than that, of a size gcc interleaves (`upcast_across`), is
    unrolled inside the loop before it, which is upcast instead.
    None (no rewrite) otherwise. One function, so the kernel is walked along the loop once (a
    million-node kernel: a second of work a walk)."""
    ranges = st.src[2:]
    if not ranges or len(st.src[0].src) != 2:
        return None
    j = ranges[-1]
    size = range_size(j)
    if j.arg[1] == "loop" and size is not None and size < UPCAST_MIN:
        return upcast_across(st)
    if j.arg[1] != "loop" or size is None or size < UPCAST_MIN:
        return None
    nodes = along(st.src[1], j)
    far = []
    for n in nodes:
        if n.op is Ops.REDUCE or (n.op is Ops.LOAD and len(n.src) > 1):
            return None
        if n.op is Ops.LOAD and not _near(stride(n.src[0].src[1], j)):
            far.append(n)
    if stride(st.src[0].src[1], j) != 1:
        return None
    # a read that steps far along j is a gather in every lane: no faster than scalar, unless
    # the far reads read whole rows and the vector form loads them lane by lane
    if far and not whole_rows(far, j):
        return None
    kind = vectorizable(st, j, nodes, GATHER_STRIDES if far else VECTOR_STRIDES) or "upcast"
    if far and kind != "vector":
        return None
    return st.substitute({j: j.replace(arg=(j.arg[0], kind))})


def upcast_across(st: UOp) -> UOp | None:
    """The STORE with its innermost loop t, shorter than a vector and of an INTERLEAVED size,
    marked "unroll" and the loop i before it "upcast": gcc's `omp simd` then runs i in vectors
    with t's iterations side by side in each step (a broadcast of (a, b, 3) over a (1, b, 1)
    operand: 0.63 ms scalar, 0.04 vectorized, 97x1009x3). Only where the STORE writes and every
    read along i or t reads (affine in both) either at most UPCAST_MAX_STRIDE apart along i or
    one contiguous run over (i, t), a group gcc interleaves; none gated, no REDUCE along them.
    None otherwise."""
    i, t = st.src[-2:] if len(st.src) > 3 else (None, None)
    if i is None or i.arg[1] != "loop" or (range_size(i) or 0) < UPCAST_MIN \
            or range_size(t) not in INTERLEAVED:
        return None
    nodes = along(st.src[1], i) + along(st.src[1], t)
    if not _run(st.src[0].src[1], i, t, 1):
        return None
    for n in nodes:
        if n.op is Ops.REDUCE or (n.op is Ops.LOAD and len(n.src) > 1):
            return None
        if n.op is Ops.LOAD and not _run(n.src[0].src[1], i, t, UPCAST_MAX_STRIDE):
            return None
    return st.substitute({i: i.replace(arg=(i.arg[0], "upcast")),
                          t: t.replace(arg=(t.arg[0], "unroll"))})


def _run(idx: UOp, i: UOp, t: UOp, near: int) -> bool:
    """Whether index idx is affine in loops i and t (outer, inner) and steps at most `near`
    along i, or reads (i, t) as one contiguous run (i's step is t's size, t's is 1)."""
    coef = {i: 0, t: 0}
    for term, k in linear_terms(idx):
        if term in coef:
            coef[term] += k
        elif term.op is not Ops.CONST and not {i, t}.isdisjoint(toposort(term)):
            return False  # (i or t under a division, a product of loops: not affine)
    return abs(coef[i]) <= near or (coef[t] == 1 and coef[i] == range_size(t))


def whole_rows(loads: list[UOp], j: UOp) -> bool:
    """Whether the loads (each stepping 3..UNROLL_MAX elements along loop j) read, per buffer,
    step and index free of a constant, every offset of a row of `step` (offsets c0 .. c0 +
    step - 1 mod step): then the lanes' reads together cover each row they touch."""
    rows: dict[tuple, set[int]] = {}
    for n in loads:
        idx = n.src[0].src[1]
        step = stride(idx, j)
        if step is None or not 0 < step <= UNROLL_MAX:
            return False
        const, terms = 0, {}
        for t, k in linear_terms(idx):
            if t.op is Ops.CONST and type(t.arg) is int:
                const += k * t.arg
            else:
                terms[t] = terms.get(t, 0) + k
        key = (n.src[0].src[0], step, frozenset(terms.items()))
        rows.setdefault(key, set()).add(const % step)
    return all(len(offsets) == key[1] for key, offsets in rows.items())


def along(value: UOp, j: UOp) -> list[UOp]:
    """The nodes of `value` that change along loop j. The others (a softmax row's max and sum,
    a layernorm row's mean, a kernel-local array: computed once per row, before j's loop) are
    printed outside it, so their own loops and loads do not stop j's from vectorizing."""
    on: set[UOp] = {j}
    out: list[UOp] = []
    for n in toposort(value):
        for s in n.src:  # a loop, not any(...): no generator frame per node of the kernel
            if s in on:
                if n is not j:
                    on.add(n)
                    out.append(n)
                break
    return out


def _near(step: int | None) -> bool:
    """A read stepping at most UPCAST_MAX_STRIDE elements per iteration: vector loads and
    shuffles (a window's columns, a flip, a broadcast)."""
    return step is not None and abs(step) <= UPCAST_MAX_STRIDE


def vectorizable(st: UOp, j: UOp, nodes: list[UOp],
                 strides: tuple[int, ...] = VECTOR_STRIDES) -> str:
    """How a STORE `upcast` takes (loop j innermost, `nodes` its value's nodes along j) is
    vectorized when its value has an explicit vector form: a float32 value of ops in
    _VECTOR_OPS, its reads `strides` apart along j and its indices affine in j (a constant
    times j plus terms free of it, so lane u reads offset(j) + stride * u), and no read of the
    buffer it writes (the last vector recomputes some outputs of the one before it, which must
    read what they read the first time). Then "vector" (explicit vectors) or "simd" (left to
    gcc, see below); else "" (gcc's `omp simd` on a plain loop, "upcast")."""
    half = st.src[1].dtype is dtypes.float16
    if not (half or st.src[1].dtype is dtypes.float32) or (range_size(j) or 0) < VECTOR_LANES:
        return ""
    nodes = nodes + along(st.src[0].src[1], j)
    # a half store's loop takes EXP inline too: gcc vectorizes no _Float16 conversion, so its
    # loop would call the scalar exp per element between scalar conversions (a float16
    # sigmoid chain ran 0.05x torch's time, bench/sweep.py --held-out-4)
    ops = _REDUCE_VECTOR_OPS if half else _VECTOR_OPS
    if not vector_values(nodes, j, st.src[0].src[0], strides, ops):
        return ""
    # With 512-bit vectors (runtime/target.py) gcc's `omp simd` runs 16 lanes where ours run
    # 8: a layer norm's last loop took 0.11 ms that way against 0.13 (2 threads, both built in
    # one process, 80 calls each, medians; a softmax's within noise). Ours keep what gcc does
    # worse: a window read 2 apart (a pool's), two loads and a shuffle. Either way the kernel
    # is compiled at the explicit vectors' level (flags.py: at -O3 a softmax's build took 27
    # ms more).
    # gcc's half lanes are scalar at any width
    if vector_bytes() == 32 or half or any(n.op is Ops.LOAD and (
            stride(n.src[0].src[1], j) != 1 or n.dtype is dtypes.float16) for n in nodes):
        return "vector"
    return "simd"


def vector_values(nodes: list[UOp], j: UOp, out: UOp | None, strides: tuple[int, ...],
                  ops: frozenset = _VECTOR_OPS, dt: DType = dtypes.float32) -> bool:
    """True when `nodes` (those that vary along loop j) all have an explicit vector form:
    float32 ops of `ops` reading `strides` apart along j and never the buffer `out`,
    int32 and bool lanes of `_LANE_OPS` read contiguously, and index arithmetic affine in j.
    With dt float64: float64 ops of `ops` only, read contiguously (4 lanes of doubles,
    no int or mask lanes of their width)."""
    lanes = dt is dtypes.float32
    for n in nodes:
        if n.dtype is dtypes.index:
            if n.op not in (Ops.ADD, Ops.SUB, Ops.MUL):
                return False
            if n.op is Ops.MUL and not any(s.op is Ops.CONST for s in n.src):
                return False  # j times a variable: the step differs from row to row
        elif not (n.op in ops and n.dtype is dt) and not (lanes and _lane_op(n)):
            return False
        elif n.op is Ops.INDEX and n.src[0] is out:
            return False
        elif n.op is Ops.LOAD and stride(n.src[0].src[1], j) not in (
                strides if n.dtype is dtypes.float32 else (1,)):
            return False  # (int and bool lanes are read contiguously only)
    return True


def vector_reducible(red: UOp) -> bool:
    """A loop-form float32 or float64 ADD, MAX or MIN REDUCE whose innermost loop is at least a
    vector long (8 float32 lanes, 4 float64) and whose value along it has an explicit vector
    form reading contiguously (`vector_values`), ungated; not a sum of products of two values
    (those are packed).
    Short rows too: gcc keeps a NaN-propagating MAX's declared reduction per lane in memory (a
    max along rows of 33 took 4.7x the time of their sum), and a short float sum's `omp simd
    reduction(+)` in a vector-wide array zeroed and summed lane by lane per row."""
    update = red.src[0]
    if (red.arg not in (Ops.ADD, Ops.MAX, Ops.MIN) or red.dtype not in (dtypes.float32,
                                                                         dtypes.float64)
            or len(update.src) != 2 or update.src[0].op is not Ops.DEFINE_REG):
        return False
    r, v = red.src[-1], update.src[1]
    if r.arg[1] != "reduce" or (range_size(r) or 0) < vector_lanes(red.dtype.itemsize):
        return False
    nodes = along(v, r)
    on = set(nodes)
    if v not in on or any(n.op is Ops.LOAD and len(n.src) > 1 for n in nodes):
        # (a value the same along the loop, a broadcast read 0 apart: no row of values to
        # load as vectors; render.py would read it as a contiguous row)
        return False
    if red.arg is Ops.ADD and v.op is Ops.MUL and all(s in on for s in v.src) \
            and v.src[0] is not v.src[1]:
        return False  # a sum of products: pack_store's (a sum of squares is not)
    # (the inline vector exp is float32's: a float64 row of exps stays gcc's loop)
    ops = _REDUCE_VECTOR_OPS if red.dtype is dtypes.float32 else _VECTOR_OPS
    return vector_values(nodes, r, None, (1,), ops, red.dtype)


def one_row(local: UOp) -> bool:
    """A kernel-local array over one loop, or one a row of a row block (its loops before the
    last kind "rows": rules/row_block_helpers.py, plain loops around the row's)."""
    return all(r.arg[1] == "rows" for r in local.src[1:-1])


def half_row(row: UOp) -> bool:
    """Whether a float16 kernel-local row over one loop at least a vector long (a float16
    softmax's exps) is filled in explicit 8-lane vectors (render.py's `_open_local`): halves
    widened by F16C, vexp's core inline, rounded back where the graph casts. gcc's loop kept
    every value scalar (bit functions and a scalar expf each: 0.3-0.7x torch)."""
    j = row.src[-1]
    return row.dtype is dtypes.float16 and one_row(row) and (
        range_size(j) or 0) >= VECTOR_LANES and vector_values(
            along(row.src[0], j), j, None, (1,), _REDUCE_VECTOR_OPS)


def unscaled(red: UOp) -> UOp | None:
    """A float MAX or MIN REDUCE of x * c, c a positive finite constant, as the REDUCE of x
    times c: rounding is monotone, so the largest (smallest) product is the largest (smallest)
    value's, bit for bit (a NaN stays a NaN, +-0.0 keep their order, a product that overflows
    or underflows does so for the extreme value too). An attention row's max of its scaled
    scores is then a max of a row of memory (`vector_reduce`: the block library's). None (no
    rewrite) otherwise."""
    update = red.src[0]
    if (red.arg not in (Ops.MAX, Ops.MIN) or not red.dtype.is_float or len(update.src) != 2
            or update.src[0].op is not Ops.DEFINE_REG or update.src[1].op is not Ops.MUL):
        return None
    a, b = update.src[1].src
    for x, c in ((a, b), (b, a)):
        if c.op is Ops.CONST and type(c.arg) is float and 0 < c.arg < math.inf:
            inner = red.replace(src=(update.replace(src=(update.src[0], x)), *red.src[1:]))
            taken(f"UNSCALE {red.arg.name} over {loop_names(red.src[1:])} (times {c.arg:g} after)")
            return inner * c
    return None


def merged(red: UOp) -> UOp | None:
    """A loop-form REDUCE with each pair of adjacent reduce loops (a, b) that it reads only as
    one contiguous run (every index is `c * (a * size(b) + b) + terms free of both`) as one
    loop of size(a) * size(b): the same values in the same order, so the same bits. A batch
    norm's sum over (N, H, W) read H*W apart along N is then a loop over each image's H*W
    contiguous values, which `vector_reduce` takes, not H loops of W. The first loop of a
    reduce computed once per kernel stays apart (a full sum's threads split it: `THREAD`).
    None (no rewrite) when no pair merges."""
    update = red.src[0]
    if red.arg is None or len(update.src) != 2 or update.src[0].op is not Ops.DEFINE_REG:
        return None
    first = 1 if not free_ranges(red)[red] else 0
    (value,), ranges = _merge_pairs((update.src[1],), list(red.src[1:]), first, "reduce")
    if len(ranges) == len(red.src) - 1:
        return None
    reg = update.src[0].replace(src=tuple(ranges))
    taken(f"MERGE {red.arg.name} over {loop_names(red.src[1:])} into {loop_names(ranges)}")
    return red.replace(src=(update.replace(src=(reg, value)), *ranges))


def merged_store(st: UOp) -> UOp | None:
    """A plain STORE (no action yet, no reduce in its value) with each pair of adjacent output
    loops that it writes and reads only as one contiguous run as one loop, as `merged` does
    for a reduce's: a batch norm's output, (N, C, H, W) with a per-channel scale, is N*C runs
    of H*W, which `upcast_store` vectorizes whole, not H loops of W. None when no pair merges."""
    if st.arg is not None or len(st.src) < 4 or any(r.arg[1] != "loop" for r in st.src[2:]) \
            or any(n.op is Ops.REDUCE for n in toposort(st.src[1])):
        return None
    (index, value), ranges = _merge_pairs(st.src[:2], list(st.src[2:]), 0, "loop")
    if len(ranges) == len(st.src) - 2:
        return None
    taken(f"MERGE loops {loop_names(st.src[2:])} into {loop_names(ranges)}")
    return st.replace(src=(index, value, *ranges))


def _merge_pairs(values: tuple[UOp, ...], ranges: list[UOp], first: int, kind: str
                 ) -> tuple[tuple[UOp, ...], list[UOp]]:
    """`values` and `ranges` with each pair of adjacent loops of `ranges` (from `first` on) that
    every value reads as one contiguous run (`_contiguous_pair`) as one loop."""
    zero = UOp.const(dtypes.index, 0)
    for i in range(len(ranges) - 2, first - 1, -1):
        a, b = ranges[i], ranges[i + 1]
        if all(_contiguous_pair(v, a, b, kind) for v in values):
            m = b.replace(src=(UOp.const(dtypes.index, range_size(a) * range_size(b)),))
            values = tuple(v.substitute({a: zero, b: m}) for v in values)
            ranges[i:i + 2] = [m]
    return values, ranges


def _contiguous_pair(value: UOp, a: UOp, b: UOp, kind: str = "reduce") -> bool:
    """Whether `value` reads loops a (outer) and b (inner, next to it), both of `kind`, only
    through index sums `c * (a * size(b) + b) + rest`, rest free of both: a and b one loop then."""
    sb = range_size(b)
    if a.arg[1] != kind or b.arg[1] != kind or sb is None or range_size(a) is None:
        return False
    return all(ka == sb * kb and not other for ka, kb, other in index_sums(value, a, b))


def vector_reduce(red: UOp) -> UOp:
    """The REDUCE with its innermost loop marked for vector accumulators."""
    r = red.src[-1]
    return red.substitute({r: r.replace(arg=(r.arg[0], "vector"))})


def reduce_vectors(op: Ops, size: int, lanes: int = VECTOR_LANES) -> int:
    """How many vectors of partial results a "vector" reduce by `op` along `size` values keeps:
    REDUCE_VECTORS, or only as many as the loop fills once, so a short row pays for no
    accumulator it does not use (a MAX or MIN, exact in any order, takes the rest of its values
    as one vector overlapping the last and combines the lanes as vectors: render.py's
    `_vector_reduce`; a sum's last values are scalar steps)."""
    return max(1, min(REDUCE_VECTORS, size // lanes))
