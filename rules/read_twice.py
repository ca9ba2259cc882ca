"""The libm values a compare reads at two views (rangeify.rules' `libm_stored`, an earliest
rewrite of both schedulers). In: the tensor graph's SINK. Out: the values to store once. Each
kernel or loop that reads a value through a libm call (LIBM_CALLS) recomputes it, a vector loop
with libmvec, a scalar one with libm, ulps apart: `x.cos() == x.cos().max(0)` missed the max.
"""

from __future__ import annotations

from collections import Counter

from rulegrad.runtime.ops import LIBM_CALLS, GroupOp, Ops
from rulegrad.runtime.uop import UOp, toposort

PICKS = GroupOp.Comparison | {Ops.MAX, Ops.MIN}  # whose answer turns on an ulp of a source
_VIEWS = GroupOp.Movement | {Ops.REDUCE_AXIS}  # a read of another element than the reader's
_WALKED, _THROUGH = GroupOp.Elementwise | GroupOp.Movement, GroupOp.Elementwise | _VIEWS
_NONE: frozenset[UOp] = frozenset()


def read_twice(sink: UOp) -> list[UOp]:
    """The libm values of two readers or more (through movement ops), below a view, that a
    compare reaches from two sources of an elementwise op on its way, one through a view. Per
    node, the values under it reached through elementwise ops only (`plain`) and through a view
    (`viewed`); such a value hides those below it (a path through it reads them at one view;
    stored, the rule runs again): the sets stay small on a chain of them."""
    nodes = toposort(sink)
    libm: set[UOp] = set()
    base: dict[UOp, UOp] = {}  # a node's value under its movement ops
    for n in nodes if {n.op for n in nodes} & PICKS else ():
        if n.op in LIBM_CALLS or n.op in _WALKED and not libm.isdisjoint(n.src):
            libm.add(n)
        base[n] = base[n.src[0]] if n.op in GroupOp.Movement else n
    users = Counter(s for n in nodes if libm for s in set(n.src))
    under, feeds = set(), set()  # below a view; read by a compare (through _THROUGH ops)
    for n in reversed(nodes) if libm else ():  # every consumer before its sources
        if n.op in _VIEWS or n.op is Ops.CONTIGUOUS or n in under and n.op in _WALKED:
            under.update(n.src)
        if n.op in _THROUGH and (n in feeds or n.op in PICKS):
            feeds.update(n.src)
    shared = {base[n] for n in libm if users[n] > 1} & under
    plain: dict[UOp, frozenset[UOp]] = {}
    viewed: dict[UOp, frozenset[UOp]] = {}
    # read from a buffer the graph has (sort's of its input) and recomputed by its other readers
    hits = {base[n.src[0]] for n in feeds if n.op is Ops.CONTIGUOUS} & shared
    for n in nodes if shared else ():
        if n not in feeds and n.op not in PICKS:
            continue  # (no compare reads it)
        srcs = list(dict.fromkeys(n.src))
        ps, vs = [plain.get(s, _NONE) for s in srcs], [viewed.get(s, _NONE) for s in srcs]
        if n.op in GroupOp.Elementwise:
            for i in range(len(srcs)) if len(srcs) > 1 else ():  # read through a view by one
                hits |= vs[i] & _NONE.union(*ps[:i], *ps[i + 1:], *vs[:i], *vs[i + 1:])
            plain[n] = frozenset((n,)) if n in shared else _NONE.union(*ps)
            viewed[n] = _NONE if n in shared else _NONE.union(*vs)
        elif n.op in _VIEWS:
            viewed[n] = _NONE.union(*ps, *vs)
    return [n for n in nodes if n in hits]
