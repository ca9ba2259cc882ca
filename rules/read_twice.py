"""The libm values a compare reads as two computations (rangeify.rules' `libm_stored`, an
earliest rewrite of both schedulers). In: the tensor graph's SINK. Out: the values to store once.
Each kernel or loop that reads a value through a libm call (LIBM_CALLS) recomputes it, a vector
loop with libmvec, a scalar one with libm, ulps apart: `x.cos() == x.cos().max(0)` missed the max.
"""

from __future__ import annotations

from collections import Counter

from rulegrad.runtime.ops import LIBM_CALLS, GroupOp, Ops
from rulegrad.runtime.uop import UOp, toposort

PICKS = GroupOp.Comparison | {Ops.MAX, Ops.MIN}  # whose answer turns on an ulp of a source
_VIEWS = GroupOp.Movement | {Ops.REDUCE_AXIS}  # a read of another element than the reader's
_WALKED, _THROUGH = GroupOp.Elementwise | GroupOp.Movement, GroupOp.Elementwise | _VIEWS

# How a node reads a value below it, its computation: `plain` (through elementwise ops only: in
# the node's own loop, once however many paths), `viewed` (through a view: another loop, or
# another element), or from a buffer (a CONTIGUOUS: computed once, by that buffer's kernel).
# Sets of values are bitsets (ints, a bit per value) and hold every value under a node, not
# the topmost only: a value read once through a shared value above it and once beside it
# (`s = e * 2; s.max(0) * 0.5 == e`) is two computations of e under one compare.
Reads = tuple[int, int, dict[UOp, int]]  # plain, viewed, buffered (per buffer)
_EMPTY: Reads = (0, 0, {})


def read_twice(sink: UOp) -> list[UOp]:
    """The libm values of two readers or more (through movement ops), below a view or a buffer,
    that a compare meets as two computations: two sources of an elementwise op on its way read
    one through a view and the other at all, or one from a buffer and the other recomputed or
    from another buffer. Of those an op meets, the topmost (stored, the others under it are
    read once, from its buffer; the rule runs again over what it leaves). One pass over the
    graph each way, no recursion."""
    nodes = toposort(sink)
    libm: set[UOp] = set()
    base: dict[UOp, UOp] = {}  # a node's value under its movement ops
    for n in nodes if {n.op for n in nodes} & PICKS else ():
        if n.op in LIBM_CALLS or n.op in _WALKED and not libm.isdisjoint(n.src):
            libm.add(n)
        base[n] = base[n.src[0]] if n.op in GroupOp.Movement else n
    users = Counter(s for n in nodes if libm for s in set(n.src))
    # below a view or a buffer; read by a compare through _THROUGH ops (`feeds`), and through
    # buffers too (`cone`: what the compare's buffers hold)
    under, feeds, cone = set(), set(), set()
    for n in reversed(nodes) if libm else ():  # every consumer before its sources
        if n.op in _VIEWS or n.op is Ops.CONTIGUOUS or n in under and n.op in _WALKED:
            under.update(n.src)
        if n.op in _THROUGH and (n in feeds or n.op in PICKS):
            feeds.update(n.src)
        if (n.op in _THROUGH or n.op is Ops.CONTIGUOUS) and (n in cone or n in feeds
                                                              or n.op in PICKS):
            cone.update(n.src)
    shared = {base[n] for n in libm if users[n] > 1} & under
    bit = {n: 1 << i for i, n in enumerate(n for n in nodes if n in shared)}
    reads: dict[UOp, Reads] = {}
    at = {b: n for n, b in bit.items()}
    found = 0
    for n in nodes if shared else ():
        if n not in cone and n.op not in PICKS:
            continue  # (no compare reads it)
        srcs = [reads.get(s, _EMPTY) for s in dict.fromkeys(n.src)]
        plain, viewed, held = 0, 0, _merged([b for _, _, b in srcs])
        for p, v, _ in srcs:
            plain, viewed = plain | p, viewed | v
        if n.op is Ops.CONTIGUOUS:
            if plain | viewed:
                held = {**held, n: held.get(n, 0) | plain | viewed}
            reads[n] = (0, 0, held)
        elif n.op in GroupOp.Elementwise:
            if len(srcs) > 1 and (n in feeds or n.op in PICKS):
                twice = _two_computations(srcs)
                while twice:  # its topmost (stored, its readers read the ones under it once)
                    top = 1 << twice.bit_length() - 1  # (bits in graph order: none above it)
                    found |= top
                    twice &= ~(top | reads[at[top]][0] | reads[at[top]][1])
            reads[n] = (plain | bit.get(n, 0), viewed, held)
        elif n.op in _VIEWS:
            reads[n] = (0, plain | viewed, held)
    return [n for n in nodes if bit.get(n, 0) & found] if found else []


def _merged(helds: list[dict[UOp, int]]) -> dict[UOp, int]:
    out: dict[UOp, int] = {}
    for held in helds:
        for b, bits in held.items():
            out[b] = out.get(b, 0) | bits
    return out


def _two_computations(srcs: list[Reads]) -> int:
    """The values the sources read as two computations: one through a view and another at all,
    or one from a buffer and another recomputed or from another buffer."""
    twice = 0
    for i, (_, v, held) in enumerate(srcs):
        others = [s for j, s in enumerate(srcs) if j != i]
        recomputed = 0
        for p2, v2, _ in others:
            recomputed |= p2 | v2
        twice |= v & recomputed
        for b, bits in held.items():
            twice |= bits & recomputed
            for _, _, held2 in others:
                for b2, bits2 in held2.items():
                    twice |= bits & bits2 if b2 is not b else 0
    return twice
