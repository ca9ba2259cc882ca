"""Which libm values a compare reads twice (rangeify.rules' `libm_stored`, an earliest rewrite of
both schedulers). In: the tensor graph's SINK. Out: the values to store once.

A cheap elementwise value is recomputed by each kernel, and each loop, that reads it. Through a
libm call (exp, log, sin, cos, exp2, log2, pow) the copies need not agree: a loop gcc vectorizes
calls one of libmvec's variants, a loop it leaves scalar (a reduction's, beside a select; a
remainder) libm's own, ulps apart. Where a compare reads the value at two views, directly and
through its own reduction (`x.cos() == x.cos().max(0)`), or through two movement ops
(`c[:, None] < c[None, :]`), numpy's answer holds by construction (the max is one of the
elements) and ours missed. Our own ops that compare a value with itself store it first
(runtime/tensor_ops.py's `_computed_once`); a user's program gets the same here.
"""

from __future__ import annotations

from rulegrad.runtime.ops import LIBM_CALLS, GroupOp, Ops
from rulegrad.runtime.uop import UOp, toposort

# the ops whose answer turns on an ulp of their sources: compares, and MAX / MIN (which side)
PICKS = GroupOp.Comparison | {Ops.MAX, Ops.MIN}
# the ops whose reads of a source are a view of it: element i is not the source's element i
_VIEWS = GroupOp.Movement | {Ops.REDUCE_AXIS}
_NONE: frozenset[UOp] = frozenset()


def _union(sets: list[frozenset[UOp]]) -> frozenset[UOp]:
    """The union, without a new set when one holds all the others (the common case)."""
    sets = [s for s in sets if s]
    if not sets:
        return _NONE
    big = max(sets, key=len)
    return big if all(s <= big for s in sets) else big.union(*sets)


def _shared_libm_values(nodes: list[UOp]) -> frozenset[UOp]:
    """The elementwise values through a libm call (not through a stored value or a reduction)
    read by two consumers or more, counted through movement ops: the places where two paths
    from one compare can meet."""
    libm: set[UOp] = set()
    users: dict[UOp, int] = {}
    walked = GroupOp.Elementwise | GroupOp.Movement
    for n in nodes:
        if n.op in LIBM_CALLS or n.op in walked and any(s in libm for s in n.src):
            libm.add(n)
        for s in set(n.src):
            users[s] = users.get(s, 0) + 1
    out: set[UOp] = set()
    for n in libm:
        if users.get(n, 0) > 1:
            while n.op in GroupOp.Movement:
                n = n.src[0]
            out.add(n)
    return frozenset(out)


def read_twice(sink: UOp) -> list[UOp]:
    """The libm values (above) that a compare (PICKS) reads at two views: two paths from the
    compare, each from its own source of some elementwise op on the way, reach the value, one
    of them through a movement op or a reduction. The topmost of them only (storing it takes
    those below off one of the paths; the rule runs again on its result). Graph order.

    Per node, the libm values reached through elementwise ops only (`plain`, read at the node's
    own element), through a view (`viewed`), and those two views meet on (`met`)."""
    nodes = toposort(sink)
    if not {n.op for n in nodes} & PICKS:
        return []
    shared = _shared_libm_values(nodes)
    if not shared:
        return []
    plain: dict[UOp, frozenset[UOp]] = {}
    viewed: dict[UOp, frozenset[UOp]] = {}
    met: dict[UOp, frozenset[UOp]] = {}
    hits: set[UOp] = set()
    for n in nodes:
        srcs = list(dict.fromkeys(n.src))
        if n.op in GroupOp.Elementwise:
            ps, vs = [plain.get(s, _NONE) for s in srcs], [viewed.get(s, _NONE) for s in srcs]
            # a value read through a view by one source and at all by another
            both = [vs[i] & _union([*ps[:i], *ps[i + 1:], *vs[:i], *vs[i + 1:]])
                    for i in range(len(srcs)) if vs[i]] if len(srcs) > 1 else []
            p = _union(ps)
            plain[n] = p | {n} if n in shared else p
            viewed[n] = _union(vs)
            met[n] = _union([met.get(s, _NONE) for s in srcs] + both)
        elif n.op in _VIEWS:
            viewed[n] = _union([plain.get(s, _NONE) for s in srcs] +
                               [viewed.get(s, _NONE) for s in srcs])
            met[n] = _union([met.get(s, _NONE) for s in srcs])
        # (anything else is stored, or no value: nothing below it is read again here)
        if n.op in PICKS and met.get(n):
            hits |= met[n]
    # a hit below another (in its plain or viewed reads) is reached through it
    inner = {x for y in hits for x in plain[y] | viewed[y] if x is not y}
    return [n for n in nodes if n in hits and n not in inner]
