"""Helpers of `opt.rules`' scan action: a reduce over a prefix window of its output's own loop,
run as one accumulator carried along that loop.

In: a lowered STORE (backends/KERNEL_AST.md, "after lowering"). Out: `scanned(st)`, the STORE
with such a REDUCE rewritten, or None.

A scan (runtime/tensor_ops.py's `_cum`) is a window reduce: output i combines, over j in
[0, m), a term t(i, j) that reads the input at i + j - (m - 1) and is the pad value (the op's
identity) where that is negative. So out[i] = start op id op ... op f(0) op ... op f(i), and
out[i] = out[i - 1] op f(i): the running accumulator makes n steps where the window made n * m.
The action recognizes it from the AST alone:

- the term depends on the loops i and j only through i + j: every index expression it reads
  them by has the same coefficient for both (so t(i, j) = t(i + j, 0));
- the term is the identity wherever i + j < m - 1: with i = 0 and j over [0, m - 1), its gates
  are decided false by their bounds (uop.py's vmin and vmax) down to a constant c, and
  start op c is start bit for bit (the identities before the first value change nothing);
- i runs at most m values, so every window holds the whole prefix.

The REDUCE becomes `REDUCE(op(DEFINE_REG(start, i'), t(i', m - 1)), i')`, i' the STORE's loop
i marked "scan" (its kind: the reduce binds no range of its own, runtime/loops.py). It keeps
one accumulator per point of the STORE's loops inside i's that it reads (a scan down the rows
of a matrix: one per column, each row read contiguously) while they fit in half the L1 data
cache (runtime/target.py); past that, or when a loop inside i's is one it does not read (a
broadcast axis, whose every pass would add to the same accumulator again), i' is moved innermost
among the STORE's loops (one accumulator, a strided walk). The renderer declares the
accumulators before i's loop and updates them once per iteration (render.py). A scan along
rows (i innermost) runs a block of rows side by side, i between the block and its rows, each
row's chain of steps beside the others' (`_interleaved`). The interpreter
folds along i (kernel_interp.py). The values are combined in the window loop's order, one
after another from the start: bit for bit the sequential window, and numpy's `cumsum`.

A window that is a prefix of i read from its end (a flipped running sum: cumsum's gradient,
runtime/running_sum.py) is a prefix window of i' = n - 1 - i: the STORE, written with i' for i,
is scanned the same way (`_scan_from_end`), its writes walking the buffer backwards.

A blocked scan's output (runtime/tensor_ops.py's `_scan_blocks`: windows of m over each block
of m) has one loop i over its n elements, read as i % m and i // m: the loop is split back
into the blocks and their m positions, and the window is a prefix of the position
(`_scan_blocks`).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from rulegrad.rules.interchange_helpers import split_range
from rulegrad.runtime import semantics
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import free_ranges, fresh_id, index_sums, range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import REDUCE_VECTORS, cache_bytes
from rulegrad.runtime.uop import UOp, toposort

_SCANNED = (Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN)


def scanned(st: UOp) -> UOp | None:
    """The STORE with its first prefix-window REDUCE run as a running accumulator along the
    STORE's loop it is a prefix of (moved innermost); None when it has none."""
    if st.op is not Ops.STORE or st.arg is not None or not st.src[2:]:
        return None
    value = st.src[1]
    reduces = [n for n in toposort(value) if n.op is Ops.REDUCE]
    if not reduces:
        return None
    outputs = set(st.src[2:])
    loops = [r for r in st.src[2:] if r.arg[1] == "loop" and range_size(r) is not None]
    deps = free_ranges(value)
    for red in reduces:
        if not deps[red] <= outputs:
            continue  # (it reads another reduce's loop: computed more than once per output)
        for i in loops:
            if i in deps[red] and ((out := _scan(st, red, i)) is not None
                                   or (out := _scan_from_end(st, red, i)) is not None
                                   or (out := _scan_blocks(st, red, i)) is not None):
                return out
    return None


def _scan_blocks(st: UOp, red: UOp, i: UOp) -> UOp | None:
    """`st` with `red` run along blocks of loop i, when red's window (m values) is a prefix of
    i's position in its block of m, i % m: a blocked scan's output (runtime/tensor_ops.py's
    `_scan_blocks`), whose (blocks, m) loops rangeify merged into one loop of the output's n.
    Loop i is split back into b over the blocks and k over m (i = b * m + k, the last block's
    stores past n gated off) and red is scanned along k, one accumulator per block, the blocks
    a loop the parallel action may thread."""
    j = red.src[-1]
    n, m = range_size(i), range_size(j)
    if len(red.src) != 2 or j.arg[1] != "reduce" or n is None or m is None or not 2 <= m < n:
        return None
    m_c = UOp.const(dtypes.index, m)
    mod, div = i.alu(Ops.MOD, m_c), i.alu(Ops.IDIV, m_c)
    if m & (m - 1) == 0:  # (lower.rules wrote a power of two's as a mask and a shift)
        mod, div = i.alu(Ops.AND, m - 1), i.alu(Ops.SHR, m.bit_length() - 1)
    if mod not in set(toposort(red)):
        return None
    fresh = fresh_id(st)
    b = i.replace(src=(UOp.const(dtypes.index, -(-n // m)),))
    k = UOp.range(m, fresh, "loop")
    split = {mod: k, div: b, i: b * m + k}
    index, value = (x.substitute(split) for x in st.src[:2])
    if n % m:  # (the last block's positions past n: stored nowhere)
        gate = (b * m + k).alu(Ops.CMPLT, UOp.const(dtypes.index, n))
        if len(index.src) > 2:
            gate = index.src[2].alu(Ops.AND, gate)
        index = index.replace(src=(*index.src[:2], gate))
    ranges = []
    for r in st.src[2:]:
        ranges += [b, k] if r is i else [r]
    return _scan(st.replace(src=(index, value, *ranges)), red.substitute(split), k)


def _scan_from_end(st: UOp, red: UOp, i: UOp) -> UOp | None:
    """`st` with `red` run along loop i from its end, when red is a prefix window of
    i' = n - 1 - i (a flipped running sum: cumsum's gradient, whose window adds from the end):
    the STORE, written with i' for i, loops over i' ascending and writes the buffer backwards.
    Index SUBs become ADDs of a negated side, so that the loops' coefficients are read."""
    j, n = red.src[-1], range_size(i)
    if red.arg not in _SCANNED or len(red.src) != 2 or j.arg[1] != "reduce" or n is None \
            or (m := range_size(j)) is None or not 2 <= n <= m:
        return None
    back = {i: i * -1 + (n - 1)}
    rev = st.replace(src=(*(_summed(s.substitute(back)) for s in st.src[:2]), *st.src[2:]))
    return _scan(rev, _summed(red.substitute(back)), i)


def _summed(x: UOp) -> UOp:
    """x with every index a - b written a + b * -1 (the same nodes for the same input)."""
    done: dict[UOp, UOp] = {}
    for node in toposort(x):
        src = tuple(done.get(s, s) for s in node.src)
        if node.op is Ops.SUB and node.dtype is dtypes.index:
            done[node] = src[0] + src[1] * -1
        elif src != node.src:
            done[node] = node.replace(src=src)
    return done.get(x, x)


def _scan(st: UOp, red: UOp, i: UOp) -> UOp | None:
    """`st` with `red` run along loop i, when red is a prefix window of i; else None."""
    update = red.src[0]
    if red.arg not in _SCANNED or len(red.src) != 2 or len(update.src) != 2 \
            or update.op is not red.arg or update.src[0].op is not Ops.DEFINE_REG:
        return None
    j, term, start = red.src[1], update.src[1], update.src[0].arg
    m, n = range_size(j), range_size(i)
    if j.arg[1] != "reduce" or m is None or n is None or n > m or m < 2:
        return None
    deps = free_ranges(term)
    if any(x.op is Ops.REDUCE and (i in deps[x] or j in deps[x]) for x in toposort(term)):
        return None  # (a reduce per window element; a row's max, the same for all, is fine)
    if not _along_sum(term, i, j):
        return None
    # with i = 0 and j over [0, m - 1): the identity (a fresh range holds j's bounds)
    fresh = fresh_id(st)
    below = UOp.range(m - 1, fresh, "reduce")
    c = _settled(term, {i: UOp.const(dtypes.index, 0), j: below})
    if c is None or not _neutral_after(red.arg, update.src[0].dtype, start, c):
        return None
    last = term.substitute({j: UOp.const(dtypes.index, m - 1)})
    reg = update.src[0].replace(src=(i,))
    running = red.replace(src=(update.replace(src=(reg, last)), i))
    i2 = i.replace(arg=(i.arg[0], "scan"))
    out = st.substitute({red: running}).substitute({i: i2})
    inner = st.src[2:][st.src[2:].index(i) + 1:]
    # a loop inside i's that red does not read (a broadcast axis) would add to the same
    # accumulator on each of its passes: then i' runs innermost, one accumulator per point
    if all(r in free_ranges(red)[red] for r in inner) \
            and _accumulators(st, red, i) * red.dtype.itemsize <= cache_bytes(1) // 2:
        return _interleaved(out, i2) if not inner else out
    ranges = tuple(r for r in out.src[2:] if r is not i2) + (i2,)
    return _interleaved(out.replace(src=(*out.src[:2], *ranges)), i2)


def _interleaved(st: UOp, i: UOp) -> UOp:
    """The STORE whose innermost loop is the scan i with the loop r before it in blocks of
    b = REDUCE_VECTORS rows (all of them, when fewer), i between them: (.., r // b, i, r % b),
    one accumulator per row of a block (`_accumulators`), so each step of i makes b independent
    ones where a row alone waited on its last (a float add's latency a step: 131 rows of 131,
    2.0x in C on one core; 127 of 257 2.2x; 7635 of 40 1.2x; 4 columns of 100x20000 walked
    down together 3.5x). A last short block overlaps the one before it (`split_range`): its
    rows computed and stored again, the same values. Each row's values are combined in the
    same order from the same start: the same bits."""
    ranges = st.src[2:]
    k = ranges.index(i)
    r = ranges[k - 1] if k >= 1 else None
    if r is None or r.arg[1] != "loop" or (rows := range_size(r)) is None \
            or rows < 2 or sum(x.op is Ops.REDUCE for x in toposort(st.src[1])) > 1:
        return st  # (another reduce: a row's max computed per row, or a second scan along r)
    deps = free_ranges(st.src[1])  # (its table may hold other roots' nodes: walk the value's)
    if any(x.op is Ops.LOAD and i not in deps[x] for x in toposort(st.src[1])):
        return st  # (a value read once per row, a blocked scan's carry, would be read per step)
    fresh = itertools.count(fresh_id(st))
    m: dict[UOp, UOp] = {}
    outer, inner = split_range(r, min(rows, REDUCE_VECTORS), "loop", fresh, m)
    index, value = (x.substitute(m) for x in st.src[:2])
    return st.replace(src=(index, value, *ranges[:k - 1], outer, i, inner, *ranges[k + 1:]))


def _accumulators(st: UOp, red: UOp, i: UOp) -> float:
    """How many accumulators the scan keeps with loop i where it is: one per point of the
    STORE's loops inside i's that red reads (a scan down the rows: one per column); infinite
    for a symbolic loop."""
    ranges = st.src[2:]
    inner = [r for r in ranges[ranges.index(i) + 1:] if r in free_ranges(red)[red]]
    sizes = [range_size(r) for r in inner]
    return math.inf if None in sizes else math.prod(sizes)  # type: ignore[arg-type]


def _along_sum(term: UOp, i: UOp, j: UOp) -> bool:
    """Whether `term` reads loops i and j only through i + j: every index expression outside
    a linear sum (an INDEX's offset, a comparison's side, a division's operand) has equal
    coefficients of i and j, so t(i, j) is t(i + j, 0) (a term of it that reads them another
    way, i * j or (i + j) % 3, is such an expression itself and checked on its own)."""
    return all(ki == kj for ki, kj, _ in index_sums(term, i, j))


def _settled(term: UOp, at: dict[UOp, UOp]) -> object | None:
    """The constant `term` is wherever loops are replaced as `at` says, read through WHEREs
    and gated LOADs whose conditions the bounds decide; None when it is not one."""
    x = term
    while True:
        if x.op is Ops.CONST:
            return x.arg
        if x.op is Ops.WHERE:
            c = _decided(x.src[0], at)
            if c is None:
                return None
            x = x.src[1] if c else x.src[2]
        elif x.op is Ops.LOAD and len(x.src) == 3 and _decided(x.src[1], at) is False:
            x = x.src[2]  # (a gated read: its pad value where the gate is false)
        else:
            return None


def _decided(cond: UOp, at: dict[UOp, UOp]) -> bool | None:
    """True or False when `cond`, with the loops replaced as `at` says, holds everywhere or
    nowhere (its bounds); None when it depends."""
    while cond.op is Ops.WHERE:  # (a mask carried as where(g, True, False))
        pick = _decided(cond.src[0], at)
        if pick is None:
            return None
        cond = cond.src[1] if pick else cond.src[2]
    if cond.op in (Ops.AND, Ops.OR) and cond.dtype is dtypes.bool:
        sides = [_decided(s, at) for s in cond.src]
        stop = cond.op is Ops.OR  # (OR holds if one side does, AND fails if one side does)
        return stop if stop in sides else None if None in sides else not stop
    c = cond.substitute(at)
    if c.vmin == c.vmax:
        return bool(c.vmin)
    return None


def _neutral_after(op: Ops, dt, start: object, c: object) -> bool:
    """Whether start op c is start bit for bit (0.0 + 0.0 is, -0.0 + 0.0 is not)."""
    a = np.array([start], dtype=dt.np)
    got = semantics.alu(op, dt.np, a, np.array([c], dtype=dt.np))
    if got.dtype.kind == "f":
        return bool((np.isnan(got) & np.isnan(a)).all()) or bool(
            ((got == a) & (np.signbit(got) == np.signbit(a))).all())
    return bool((got == a).all())
