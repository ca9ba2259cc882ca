"""Helpers of `opt.rules`' rows-across action: a kernel over short rows (a softmax, logsumexp
or layer norm of rows of 2..UNROLL_MAX values) computed with its rows across vector lanes.

In: a lowered kernel SINK (backends/KERNEL_AST.md, "after lowering") whose reduces and STOREs
have had their own actions. Out: `across(sink)`, the SINK rewritten (None when it does not
gain): its one STORE over (.., i, t), t a row of d <= UNROLL_MAX outputs, as d STOREs at
t = 0 .. d-1; every reduce over the row unrolled (its values combined in the loop's order, from
its identity, as `unrolled` does: bit for bit), every read of a kernel-local row at a constant
point replaced by that point's value (the same ops on the same operands: the array only kept
them once per row, and hash-consing keeps them once still); and the row loop i marked "vector",
so lane u computes row i + u: the renderer reads each row's values lane by lane (`rg_vloads`)
and writes its outputs lane by lane when they are not contiguous along i.

In the row form a row of d values is ceil(d / lanes) vectors of which only d lanes hold values
(or scalar steps, a row shorter than a vector), each reduce a chain of steps and a combine of
its lanes per row; across rows every lane holds a value and every op is done once per `lanes`
rows. `_cost` and `_across_cost` count a core's cycles per row for each form from its ops'
work (`_WORK`: instruction tables, not timings of these kernels) and the vector width
(target.vector_lanes), and the action fires where the rows-across form takes fewer: no row
length is named.
"""

from __future__ import annotations

import math

from rulegrad.rules.choices import taken
from rulegrad.rules.opt_helpers import (
    GATHER_STRIDES,
    UPCAST_MAX_STRIDE,
    along,
    unroll_line,
    unrolled,
    vector_values,
    whole_rows,
)
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import free_ranges, range_size, stride
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import (
    REDUCE_VECTORS,
    UNROLL_MAX,
    block_library,
    cpu,
    vector_lanes,
)
from rulegrad.runtime.uop import UOp, toposort

# the float32 ops a row's value may hold across lanes: _VECTOR_OPS and the inline exp and log
# (vexp's and vlog's cores, the same bits as the scalar rg_expf and rg_logf), a reciprocal and
# a square root (correctly rounded either way)
ACROSS_OPS = frozenset({Ops.LOAD, Ops.INDEX, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.MAX,
                        Ops.MIN, Ops.NEG, Ops.EXP, Ops.LOG, Ops.SQRT, Ops.RECIPROCAL})
# What a kernel's op takes of one core, in the printed form of each side: a scalar op of the row
# form (per value) and an 8-lane vector op of the rows-across form (per vector), as (FP
# operations, loads, stores, shuffles, cycles of the divider). From the x86-64 instruction
# tables (uops.info; Agner Fog's) of the cores this project runs on, Zen 2 to 4 and Skylake:
# divss 3 cycles a result, vdivps on 8 lanes 5, sqrtss 3. The forms are render.py's: MAX is
# rg_max_f32 (two compare-selects, an unordered compare, the bits through the integer unit and
# back: 6) or rg_vmax_f32 (5); EXP the rg_expf core (vexp.py: a clamp, a rounding shift, 8 fused
# steps, the scale: 16), a call in the row form; LOG the rg_logf core (vlog.py: the subnormal
# scale, the bits' split, the polynomial's 9 steps, the sum's 7, the special values' compares
# and selects: 35 on 8 lanes), a call in the row form about glibc's logf (22: 2.11 ns a value
# beside its 2.51, bench/log_poly.py --speed); SQRT across lanes the scalar call lane by lane
# (rg_vmap_f32: an extract and an insert a lane). Other ops: one FP operation.
_WORK: dict[Ops, tuple[tuple[float, ...], tuple[float, ...]]] = {
    Ops.MAX: ((6, 0, 0, 0, 0), (5, 0, 0, 0, 0)),
    Ops.MIN: ((6, 0, 0, 0, 0), (5, 0, 0, 0, 0)),
    Ops.FDIV: ((1, 0, 0, 0, 3), (1, 0, 0, 0, 5)),
    Ops.RECIPROCAL: ((1, 0, 0, 0, 3), (1, 0, 0, 0, 5)),
    Ops.SQRT: ((1, 0, 0, 0, 3), (8, 0, 0, 16, 24)),
    Ops.EXP: ((18, 0, 0, 0, 0), (16, 0, 0, 0, 0)),
    Ops.LOG: ((22, 0, 0, 0, 0), (35, 0, 0, 0, 0)),
}
_ONE_OP = ((1, 0, 0, 0, 0), (1, 0, 0, 0, 0))
# The block library's row max or min (blocks.py's rg_reduce_max_f32, what the row form calls for
# a row of memory), as gcc compiles it: a vector 3 operations (x86's max, an unordered compare
# and an OR of the NaN flags), not rg_vmax_f32's 5; once per row its 4 vectors of partials by
# x86's max (3), the lanes in 3 shuffles and maxes, the flags ORed (2) and their lanes in 3
# shuffles and ORs and a move to a scalar (1), the zero test (1): 12 operations and 7 shuffles,
# where the inline reduce's count (rg_vmax_f32's 5 for each combine) made it 30 and 3 (a row
# max of 9 across lanes ran 2.0x its row form's speed, rows of 9 minus their max 0.87x, while
# the count gave the row form 21 cycles for both; bench/across_ab.py --cpu)
_LIBRARY_STEP = (3, 0, 0, 0, 0)
_LIBRARY_READOUT = (12, 0, 0, 7, 0)
# a load and a store, scalar or of a whole vector (contiguous)
_MEMORY = {Ops.LOAD: ((0, 1, 0, 0, 0), (0, 1, 0, 0, 0)),
           Ops.STORE: ((0, 0, 1, 0, 0), (0, 0, 1, 0, 0))}
# a core's resources a cycle, in the order of _WORK's: 2 FP pipes, 2 load ports, 1 store port,
# the shuffle pipes, one divider; and the operations issued a cycle (the front end) over all of
# them. The shuffles and the issue are the CPU's (runtime/target.py's cpu()): AMD's Zen 2 to 4
# shuffle on two pipes (FP1 and FP2) and dispatch 6 operations a cycle, Intel's cores since
# Skylake shuffle on port 5 alone and issue 4. A row of 9 to 16 gathered lanes (rg_vloads_f32's
# inserts, each column's independent of the others') cost this machine (AMD EPYC) 0.43 cycles a
# value, the two pipes' count (bench/across_ab.py --cpu: max over rows of 9, 12, 13, 16 across
# lanes at 2.02, 1.56, 1.51, 1.29x its row form's speed; one pipe and 4 a cycle put rows of 16
# at 0.87x). Read at each count, not at import (cpu() is read once): a test or a bench may
# pin the CPU whose times its choices were measured on (tests/test_rows_60.py)
_RESOURCES = 5


def _amd() -> bool:
    """Whether the CPU is AMD's (two shuffle pipes, 6 a cycle); else Intel's counts (an unknown
    CPU's too: the fewer pipes)."""
    return cpu().model.startswith("AMD")


def _shuffles() -> int:
    return 2 if _amd() else 1


# a scattered write's lane: an extract to memory (vextractps), one a cycle whatever the pipes,
# so all of them a cycle (uops.info: reciprocal throughput 1 on Zen 2 to 4 and on Skylake;
# across lanes, rows of 9 to 16 minus their max ran 1.03 cycles a value more than their max
# alone, not overlapping the gathers' inserts: rows of 9 at 0.87x the row form's speed, which
# a count of one pipe-cycle a lane put ahead of it)
def _scatter_lane() -> tuple[float, ...]:
    return (0, 0, 1, _shuffles(), 0)


def _cycles(work: list[float]) -> float:
    """The cycles a core takes for `work` (per resource, _WORK's order): the busiest resource's,
    or the issue of all its operations where that takes longer (ops of different resources
    run side by side; a loop's iterations overlap)."""
    amd = _amd()
    busiest = max(w / c for w, c in zip(work, (2, 2, 1, 2 if amd else 1, 1)))
    return max(busiest, sum(work[:4]) / (6 if amd else 4))


def _add(work: list[float], op_work: tuple[float, ...], times: float) -> None:
    """`work` plus `times` of an op's work."""
    for k, w in enumerate(op_work):
        work[k] += w * times


# reduce kinds whose loops `across` unrolls: its own, a vector reduce's, a fill's
_REDUCE_KINDS = ("reduce", "vector", "fill")
# and the kinds a STORE's row loop may have, a plain loop's or upcast_store's
_ROW_KINDS = ("loop", "upcast", "simd", "vector", "unroll")


def _inline_local(load: UOp) -> UOp | None:
    """A LOAD of a kernel-local array at a constant point as the array's value at that point
    (None when it is no such read, or the array has more than one range)."""
    if load.op is not Ops.LOAD or load.src[0].op is not Ops.INDEX:
        return None
    idx = load.src[0]
    dl, at = idx.src[0], idx.src[1]
    if dl.op is not Ops.DEFINE_LOCAL or at.op is not Ops.CONST or len(dl.src) != 2 \
            or len(idx.src) != 2:
        return None
    return dl.src[0].substitute({dl.src[1]: at})


def _flattened(values: list[UOp]) -> list[UOp] | None:
    """`values` with every reduce unrolled and every local row read at a constant point inlined
    (a walk of each node once, sources first); None when a reduce is over more than UNROLL_MAX
    values or of another action (a local row read at a point that is not constant is left:
    `across` refuses the DEFINE_LOCAL)."""
    memo: dict[UOp, UOp] = {}

    def local_reads(v: UOp) -> UOp:
        reads = {n: x for n in toposort(v) if (x := _inline_local(n)) is not None}
        return v.substitute(reads) if reads else v

    for v in values:
        for n in toposort(v):
            if n in memo:
                continue
            m = n.replace(src=tuple(memo.get(s, s) for s in n.src))
            if m.op is Ops.REDUCE:
                sizes = [range_size(r) for r in m.src[1:]]
                if m.arg is None or not sizes or None in sizes or \
                        math.prod(sizes) > UNROLL_MAX or \
                        any(r.arg[1] not in _REDUCE_KINDS for r in m.src[1:]) or \
                        m.src[0].src[:1] == () or m.src[0].src[0].op is not Ops.DEFINE_REG:
                    return None
                m = local_reads(unrolled(m, noted=False))
            elif (value := _inline_local(m)) is not None:
                # (a read at a reduce's loop is inlined once that reduce is unrolled; one left
                # at a loop is a DEFINE_LOCAL `across` finds and refuses)
                m = value
            memo[n] = m
    return [memo[v] for v in values]


def _library_row(red: UOp) -> bool:
    """Whether the row form calls the block library's row max or min for `red` (render.py's
    `_vector_reduce`: a float32 reduce over one "vector" loop of a plain read of memory)."""
    update = red.src[0]
    return red.arg in (Ops.MAX, Ops.MIN) and red.dtype is dtypes.float32 and len(red.src) == 2 \
        and red.src[1].arg[1] == "vector" and len(update.src) == 2 and \
        update.src[1].op is Ops.LOAD and len(update.src[1].src) == 1 and block_library()


def _cost(st: UOp, outer: set[UOp], lanes: int) -> float:
    """The row form's cycles per row of the STORE (`outer`: its row loop and the loops around
    it), by `_cycles` of its ops' `_WORK`: a node along a loop that runs in vectors (its output
    row t "upcast", a reduce's "vector" or "fill" loop) once per vector of it as a vector op,
    else once per value as a scalar op; a vector reduce's REDUCE_VECTORS vectors of partial
    results combined into one by its op, then its lanes in log2(lanes) steps of a shuffle and
    its op, per row (render.py's `_vector_reduce`, blocks.py's row reductions). A kernel-local
    row's fill loop ("local") counts per value: at these lengths its `omp simd` loop of exp
    calls is no whole vector and a tail (a softmax of 4099x16 ran 1.13x, 4096x12 2.3x faster
    across, CPU time, where counting that loop per vector would have kept both rows)."""
    deps = free_ranges(st)
    work = [0.0] * _RESOURCES
    library = {n.src[0] for n in toposort(st) if n.op is Ops.REDUCE and _library_row(n)}
    for n in toposort(st):
        if n.dtype is dtypes.index or n.op in (Ops.CONST, Ops.RANGE, Ops.DEFINE_REG, Ops.INDEX,
                                                Ops.DEFINE_GLOBAL, Ops.DEFINE_LOCAL):
            continue
        loops = [r for r in deps[n] if r not in outer]
        size = math.prod(range_size(r) or 1 for r in loops)
        vector = any(r.arg[1] in ("vector", "fill", "simd", "upcast") for r in loops)
        scalar, vec = _MEMORY.get(n.op) or _WORK.get(n.op, _ONE_OP)
        if n in library:  # (a row shorter than a vector: the library's scalar loop)
            vec = _LIBRARY_STEP
            vector = vector and size >= lanes
        if n.op is Ops.REDUCE:  # (its updates are its value's nodes; this is its readout)
            if n.src[0] in library:
                _add(work, _LIBRARY_READOUT if range_size(n.src[1]) >= lanes else
                     (0, 0, 0, 0, 0), 1)
            elif any(r.arg[1] in ("vector", "fill") for r in n.src[1:]):
                op = _WORK.get(n.arg, _ONE_OP)[1]
                _add(work, op, REDUCE_VECTORS - 1)  # (its vectors of partials into one)
                _add(work, (op[0], 0, 0, 1, 0), math.log2(lanes))
            continue
        _add(work, vec if vector else scalar, -(-size // lanes) if vector else size)
    return _cycles(work)


def _read(load: UOp, i: UOp, lanes: int) -> tuple[float, ...]:
    """A vector read of `lanes` rows: one load where they are contiguous, two and a shuffle 2
    apart (rg_vload2_f32), else a load and an insert a lane (rg_vloads_f32)."""
    far = abs(stride(load.src[0].src[1], i) or 0)
    if far > 2:
        return (0, lanes, 0, lanes, 0)
    return (0, 2, 0, 1, 0) if far == 2 else _MEMORY[Ops.LOAD][1]


def _across_cost(stores: list[tuple[UOp, UOp]], i: UOp, lanes: int) -> float:
    """The rows-across form's cycles per row, by `_cycles` of its ops' `_WORK` as vector ops:
    each distinct node along i once per `lanes` rows; a read of rows more than 2 apart gathers
    its lanes (a scalar load and an insert each: rg_vloads_f32), a write of outputs not
    contiguous along i scatters them (an extract and a store each)."""
    seen: set[UOp] = set()
    work = [0.0] * _RESOURCES
    for idx, value in stores:
        step = stride(idx.src[1], i)
        if step == 1:
            _add(work, _MEMORY[Ops.STORE][1], 1 / lanes)
        else:
            _add(work, _scatter_lane(), 1)
        for n in along(value, i):
            if n in seen or n.dtype is dtypes.index or n.op is Ops.INDEX:
                continue
            seen.add(n)
            _add(work, _read(n, i, lanes) if n.op is Ops.LOAD else
                 _WORK.get(n.op, _ONE_OP)[1], 1 / lanes)
    return _cycles(work)


def _row_reads(value: UOp) -> bool:
    """Whether each output combines several values of a row: a reduce or a kernel-local row
    in it, or a buffer read at two points (a reduce already unrolled)."""
    seen: set[UOp] = set()
    for n in toposort(value):
        if n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL):
            return True
        if n.op is Ops.LOAD and n.src[0].op is Ops.INDEX:
            if n.src[0].src[0] in seen:
                return True
            seen.add(n.src[0].src[0])
    return False


def across(sink: UOp, always: bool = False) -> UOp | None:
    """The kernel with its rows across vector lanes (module docstring), or None: not one STORE
    over plain loops with a reduce or kernel-local row in it, a row longer than UNROLL_MAX, a
    value with no float32 vector form across rows (float64, float16: their lanes read
    contiguously only), reads that do not cover whole rows, or no gain by `_cost` (unless
    `always`: the tests and bench/across_ab.py take the form where it applies, to check its
    values and time it against the row form)."""
    if len(sink.src) != 1 or sink.arg is not None:
        return None
    st = sink.src[0]
    ranges, value = st.src[2:], st.src[1]
    if st.arg is not None or len(st.src[0].src) != 2 or not ranges or \
            any(range_size(r) is None for r in ranges):
        return None
    if value.dtype is not dtypes.float32 or not _row_reads(value):
        return None  # (an elementwise kernel: upcast_store's)
    lanes = vector_lanes(value.dtype.itemsize)
    t = ranges[-1] if len(ranges) > 1 and range_size(ranges[-1]) <= UNROLL_MAX else None
    i = ranges[-2] if t is not None else ranges[-1]
    outer = set(ranges[:-2] if t is not None else ranges[:-1])
    # (a row t upcast by upcast_store is unrolled here all the same; i and the loops around it
    # must have no action yet)
    # (upcast_across's form, i "upcast" with a row of 2..4 "unroll" inside, is gcc's `omp simd`
    # over the rows; with a kernel-local row in each (a softmax's exps) gcc vectorizes none of
    # it, and the row form's count below, per value, is what it runs: softmax 100000x3 took
    # 1.5 ms of CPU, 15 ns a row, rows of 5 across 5 ns)
    gcc_rows = i.arg[1] == "upcast" and t is not None and t.arg[1] == "unroll" and any(
        n.op is Ops.DEFINE_LOCAL for n in toposort(value))
    if any(r.arg[1] != "loop" for r in outer) or (i.arg[1] != "loop" and not gcc_rows) or \
            (t is not None and t.arg[1] not in _ROW_KINDS):
        return None
    if range_size(i) < lanes:  # type: ignore[operator]
        return None
    points = range(range_size(t)) if t is not None else (None,)  # type: ignore[arg-type]
    at = [{t: UOp.const(dtypes.index, c)} if t is not None else {} for c in points]
    flat = _flattened([value.substitute(m) for m in at])
    if flat is None:
        return None
    idxs = [st.src[0].substitute(m) for m in at]
    allowed = outer | {i}
    for v in flat:
        for n in toposort(v):
            if n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL, Ops.DEFINE_REG) or (
                    n.op is Ops.RANGE and n not in allowed):
                return None
    out = st.src[0].src[0]
    nodes = [n for v, x in zip(flat, idxs) for n in along(v, i) + along(x.src[1], i)]
    if not vector_values(nodes, i, out, GATHER_STRIDES, ACROSS_OPS):
        return None
    if any(n.op is Ops.LOAD and len(n.src) > 1 for n in nodes):
        return None  # (a gated read)
    far = [n for n in nodes if n.op is Ops.LOAD and abs(stride(n.src[0].src[1], i)) >  # type: ignore
           UPCAST_MAX_STRIDE]
    if far and not whole_rows(far, i):
        return None  # (the lanes' reads would not read the lines they touch whole)
    if any(not stride(x.src[1], i) for x in idxs):
        return None  # (every lane writes its own output)
    pairs = list(zip(idxs, flat))
    if not always and _across_cost(pairs, i, lanes) >= _cost(st, outer | {i}, lanes):
        return None
    iv = i.replace(arg=(i.arg[0], "vector"))
    stores = [st.replace(src=(x.substitute({i: iv}), v.substitute({i: iv}), *ranges[:len(outer)],
                              iv)) for x, v in pairs]
    for n in toposort(value):
        if n.op is Ops.REDUCE:
            taken(unroll_line(n))
    row = f", the row r{t.arg[0]} as {len(stores)} stores" if t is not None else ""
    taken(f"ACROSS r{i.arg[0]} ({range_size(i)} rows across vector lanes{row})")
    return sink.replace(src=tuple(stores))
