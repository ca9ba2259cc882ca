"""The libm values a compare reads at two views (rangeify.rules' `libm_stored`, an earliest
rewrite of both schedulers). In: the tensor graph's SINK. Out: the values to store once.
Each kernel or loop that reads a cheap value recomputes it: through exp, log, sin, cos, exp2,
log2 or pow, a vectorized loop calls libmvec, a scalar one libm, ulps apart, so a compare of the
value with its own max (`x.cos() == x.cos().max(0)`) or with another view of it missed.
"""

from __future__ import annotations

from rulegrad.runtime.ops import LIBM_CALLS, GroupOp, Ops
from rulegrad.runtime.uop import UOp, toposort

# the ops whose answer turns on an ulp of their sources: compares, and MAX / MIN (which side)
PICKS = GroupOp.Comparison | {Ops.MAX, Ops.MIN}
_VIEWS = GroupOp.Movement | {Ops.REDUCE_AXIS}  # a read of another element than the reader's
_WALKED, _THROUGH = GroupOp.Elementwise | GroupOp.Movement, GroupOp.Elementwise | _VIEWS
_NONE: frozenset[UOp] = frozenset()


def read_twice(sink: UOp) -> list[UOp]:
    """The elementwise values through a libm call read by two consumers or more (through
    movement ops), below a view, that some compare reaches by two paths, each from its own
    source of an elementwise op on the way, one through a view. Per node: the values reached
    through elementwise ops only (`plain`) and through a view (`viewed`); such a value hides
    those below it (a path through it reads them at one view; once it is stored the rule runs
    again), so the sets stay small on a chain of them (a step's value read by its max)."""
    nodes = toposort(sink)
    if not {n.op for n in nodes} & PICKS:
        return []
    libm: set[UOp] = set()
    users: dict[UOp, int] = {}
    for n in nodes:
        if n.op in LIBM_CALLS or n.op in _WALKED and not libm.isdisjoint(n.src):
            libm.add(n)
        for s in set(n.src):
            users[s] = users.get(s, 0) + 1
    under, feeds = set(), set()  # below a view; read by a compare (through _THROUGH ops)
    for n in reversed(nodes):  # every consumer before its sources
        if n.op in _VIEWS or n in under and n.op in _WALKED:
            under.update(n.src)
        if n.op in _THROUGH and (n in feeds or n.op in PICKS):
            feeds.update(n.src)
    shared = {_base(n) for n in libm if users.get(n, 0) > 1} & under
    plain: dict[UOp, frozenset[UOp]] = {}
    viewed: dict[UOp, frozenset[UOp]] = {}
    hits: set[UOp] = set()
    for n in nodes if shared else ():
        if n not in feeds and n.op not in PICKS:
            continue  # (no compare reads it)
        srcs = list(dict.fromkeys(n.src))
        ps, vs = [plain.get(s, _NONE) for s in srcs], [viewed.get(s, _NONE) for s in srcs]
        if n.op in GroupOp.Elementwise:
            for i in range(len(srcs)) if len(srcs) > 1 else ():  # read through a view by one
                hits |= vs[i] & _NONE.union(*ps[:i], *ps[i + 1:], *vs[:i], *vs[i + 1:])
            plain[n], viewed[n] = (frozenset((n,)), _NONE) if n in shared else \
                (_NONE.union(*ps), _NONE.union(*vs))
        elif n.op in _VIEWS:
            viewed[n] = _NONE.union(*ps, *vs)
    return [n for n in nodes if n in hits]


def _base(n: UOp) -> UOp:
    while n.op in GroupOp.Movement:
        n = n.src[0]
    return n
