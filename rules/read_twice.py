"""The libm values a compare reads as two computations (rangeify.rules' `libm_stored`, an
earliest rewrite of both schedulers). In: the tensor graph's SINK. Out: the values to store once.
Each kernel or loop that reads a value through a libm call (LIBM_CALLS) recomputes it (a vector
loop with libmvec, a scalar one with libm, ulps apart): `x.cos() == x.cos().max(0)` missed."""

from __future__ import annotations

from collections import Counter

from rulegrad.runtime.ops import LIBM_CALLS, GroupOp, Ops
from rulegrad.runtime.uop import UOp, toposort

PICKS = GroupOp.Comparison | {Ops.MAX, Ops.MIN}  # whose answer turns on an ulp of a source
_VIEWS = GroupOp.Movement | {Ops.REDUCE_AXIS}  # a read of another element than the reader's
_WALKED, _THROUGH = GroupOp.Elementwise | GroupOp.Movement, GroupOp.Elementwise | _VIEWS
_KEPT = _THROUGH | {Ops.CONTIGUOUS}  # the ops whose reads are walked


def read_twice(sink: UOp) -> list[UOp]:
    """The libm values of two readers or more (through movement ops) two sources of an op on
    a compare's way read as two computations: per node, bitsets of all of them under it (not the
    topmost only: `s = e * 2; s.max(0) * 0.5 == e` reads e through s and beside it)."""
    nodes = toposort(sink)
    libm, base = set[UOp](), dict[UOp, UOp]()  # base: a node's value under its movement ops
    for n in nodes if {n.op for n in nodes} & PICKS else ():
        if n.op in LIBM_CALLS or n.op in _WALKED and not libm.isdisjoint(n.src):
            libm.add(n)
        base[n] = base[n.src[0]] if n.op in GroupOp.Movement else n
    users = Counter(s for n in nodes if libm for s in set(n.src))
    feeds, cone = set(), set()  # read by a compare through _THROUGH ops; and through buffers
    for n in reversed(nodes) if libm else ():  # every consumer before its sources
        feeds.update(n.src if n.op in _THROUGH and (n in feeds or n.op in PICKS) else ())
        cone.update(n.src if n.op in _KEPT and (n in cone or n in feeds or n.op in PICKS) else ())
    shared = {base[n] for n in libm if users[n] > 1} & cone  # (one never viewed: never met)
    order = [n for n in nodes if n in shared]  # a bit each, in graph order
    bit, hold, reads, found = {n: 1 << i for i, n in enumerate(order)}, {}, {}, 0
    for n in [n for n in nodes if n in cone and n.op in _KEPT or n.op in PICKS] if bit else ():
        srcs = [reads[s] for s in dict.fromkeys(n.src) if s in reads] or [(0,) * 5]
        (p, v, bufs, h, m), twice = srcs[0], 0  # plain, viewed, buffers, held, held in two
        for p2, v2, bufs2, h2, m2 in srcs[1:]:  # a value a buffer new to bufs holds, in h
            new, held = bufs2 & ~bufs, 0
            while new:  # (a bit at a time: the sources of a chain read the same buffers)
                held, new = held | hold[new & -new], new & new - 1
            p, v, bufs, h, m = p | p2, v | v2, bufs | bufs2, h | h2, m | m2 | h & held
        for i, (pa, va, _, ha, _) in enumerate(srcs if n in feeds or n.op in PICKS else ()):
            # twice: through a view and at all; from a buffer and recomputed or from another
            for pb, vb, _, hb, _ in srcs[i + 1:]:
                twice |= (va | ha) & (pb | vb) | (vb | hb) & (pa | va) | ha & hb & m
        while twice:  # its topmost (bits in graph order): those under it are read once then
            top = reads[order[twice.bit_length() - 1]]  # (its plain holds its own bit)
            found, twice = found | 1 << twice.bit_length() - 1, twice & ~(top[0] | top[1])
        if n.op is Ops.CONTIGUOUS and p | v:  # a buffer: its bit, and what its kernel computes
            hold[1 << len(hold)] = p | v
            p, v, bufs, h, m = 0, 0, bufs | 1 << len(hold) - 1, h | p | v, m | h & (p | v)
        reads[n] = (p | bit.get(n, 0), v, bufs, h, m) if n.op in GroupOp.Elementwise \
            else (0, p | v, bufs, h, m)  # (a view reads all it reads through it)
    return [n for n in nodes if bit.get(n, 0) & found]
