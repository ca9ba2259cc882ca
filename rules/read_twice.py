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
    shared = {base[n] for n in libm if users[n] > 1} & under & cone  # (no other is walked)
    bit = {n: 1 << i for i, n in enumerate(n for n in nodes if n in shared)}
    reads: dict[UOp, Reads] = {}
    at = {b: n for n, b in bit.items()}
    found = 0
    stats: dict[int, tuple[dict, int, int]] = {}  # per buffer dict: (it, union, multi)
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
                twice = _two_computations(srcs, stats)
                while twice:  # its topmost (stored, its readers read the ones under it once)
                    top = 1 << twice.bit_length() - 1  # (bits in graph order: none above it)
                    found |= top
                    twice &= ~(top | reads[at[top]][0] | reads[at[top]][1])
            reads[n] = (plain | bit.get(n, 0), viewed, held)
        elif n.op in _VIEWS:
            reads[n] = (0, plain | viewed, held)
    return [n for n in nodes if bit.get(n, 0) & found] if found else []


def _merged(helds: list[dict[UOp, int]]) -> dict[UOp, int]:
    """The buffers' bits of several sources. A dict is never changed once made: one the sources
    share (a chain, `y - y.max()`: every source reads the same buffers) is returned as is, not
    copied, which kept a chain of buffers quadratic (each node copied every buffer under it)."""
    distinct = list({id(h): h for h in helds if h}.values())
    if len(distinct) <= 1:
        return distinct[0] if distinct else _EMPTY[2]
    distinct.sort(key=len, reverse=True)
    out = dict(distinct[0])
    for held in distinct[1:]:
        for b, bits in held.items():
            had = out.get(b, 0)
            if had is not bits and bits & ~had:
                out[b] = had | bits
    return out


def _two_computations(srcs: list[Reads], stats: dict[int, tuple[dict, int, int]]) -> int:
    """The values the sources read as two computations: one through a view and another at all,
    or one from a buffer and another recomputed or from another buffer. A value of buffer b
    against another source's buffers other than b is its bits against that source's union of
    them less its own b (nothing where both hold b's one entry, a shared ancestry's), or
    against the bits it holds in two buffers or more (`multi`)."""
    twice = 0
    unions = [_buffer_stats(held, stats) for _, _, held in srcs]
    for i, (_, v, held) in enumerate(srcs):
        recomputed = 0
        for j, (p2, v2, _) in enumerate(srcs):
            if j != i:
                recomputed |= p2 | v2
        twice |= v & recomputed
        if not held:
            continue
        mine = unions[i][0]
        twice |= mine & recomputed
        for j, (_, _, held2) in enumerate(srcs):
            union2, multi2 = unions[j]
            if j == i or not mine & union2:
                continue
            twice |= mine & multi2
            if held2 is held:
                continue
            for b, bits in held.items():
                other = held2.get(b, 0)
                if other is not bits:
                    twice |= bits & union2 & ~other
    return twice


def _buffer_stats(held: dict[UOp, int], stats: dict[int, tuple[dict, int, int]]) -> tuple[int, int]:
    """The union of a buffer dict's bits and those in two buffers or more, once per dict."""
    if not held:
        return 0, 0
    if id(held) not in stats:
        union = multi = 0
        for bits in held.values():
            multi |= union & bits
            union |= bits
        stats[id(held)] = (held, union, multi)  # (the dict kept alive: its id stays its own)
    return stats[id(held)][1:]
