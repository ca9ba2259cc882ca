"""Facts about a kernel's loops, read from its UOps, written once for every reader.

In: kernel UOps (backends/KERNEL_AST.md). Out: a RANGE's trip count (`range_size`), the RANGEs
each node depends on (`free_ranges`), an index as a sum of coefficient * term
(`linear_terms`), how far an index moves per step of one range (`stride`), which loops run
once per iteration of others (`loops_within`), the iterations of a nest (`trips`), the id a new
loop takes (`fresh_id`), and a read of a kernel-local array (`local_read`).

The optimizer's helpers (rules/*_helpers.py), the algebra (rules/symbolic_helpers.py) and the C
printers (backends/c) all ask these questions; they sit here, below both, so that each has one
answer.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType

from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, kept_answers, toposort

_ADD, _MUL, _CONST = Ops.ADD, Ops.MUL, Ops.CONST
_INDEX = dtypes.index


def range_size(r: UOp) -> int | None:
    """A RANGE's trip count, None while it is symbolic."""
    end = r.src[0]
    if end.op is not Ops.CONST:
        return None
    if type(end.arg) is int:
        return end.arg
    # (uop.py's _const_arg leaves a numpy integer as it was given)
    return int(end.arg) if isinstance(end.arg, numbers.Integral) else None


def trips(ranges: Iterable[UOp]) -> int:
    """The iterations of a nest of `ranges` (each of a constant size: the caller has checked)."""
    return math.prod(range_size(r) for r in ranges)  # type: ignore[misc]


def fresh_id(root: UOp) -> int:
    """The id of a new loop under root: past every RANGE's (0 when it has none)."""
    return 1 + max((n.arg[0] for n in toposort(root) if n.op is Ops.RANGE), default=-1)


def row_major(ranges: tuple[UOp, ...] | list[UOp]) -> UOp:
    """The flat offset of a point of `ranges` in an array over them, the last fastest."""
    flat = ranges[0]
    for r in ranges[1:]:
        flat = flat * range_size(r) + r  # type: ignore[operator]
    return flat


def local_read(array: UOp, at: UOp) -> UOp:
    """A read of kernel-local `array` (a DEFINE_LOCAL) at flat offset `at`."""
    return UOp(Ops.LOAD, array.dtype, (UOp(Ops.INDEX, array.dtype, (array, at)),))


_NO_RANGES: frozenset[UOp] = frozenset()


def free_ranges(root: UOp, order: Iterable[UOp] | None = None) -> Mapping[UOp, frozenset[UOp]]:
    """For every node under root, the RANGEs it depends on. A REDUCE and a DEFINE_LOCAL bind
    their own ranges (but a "scan" range, the loop of the STORE around it), a STORE all of
    them. `order`: root's nodes in topological order, when the
    caller has walked them already (a large kernel's walk is not repeated).

    While answers are kept (a kernel being optimized, uop.py's `keeping_answers`), one table
    serves every root, read-only: a node's ranges are a fact of the node alone, so each node's
    are derived once, and a new root (a rewritten STORE) costs only its new nodes. So the
    mapping may hold nodes that are not under root: read it at root's nodes (walk
    `toposort(root)`), never iterate it."""
    kept = kept_answers()
    if kept is None:
        return _fill(toposort(root) if order is None else order, {})
    table = kept.get(free_ranges)
    if table is None:
        table = kept[free_ranges] = _Unwalkable()
        kept[_RANGES_VIEW] = MappingProxyType(table)
    if root not in table:
        _fill(toposort(root, stop=table.__contains__), table)
    return kept[_RANGES_VIEW]


_RANGES_VIEW = (free_ranges, "view")  # (the key of the kept table's read-only view)


class _Unwalkable(dict):
    """The kept free-ranges table: read at a node, never walked (it holds the nodes of every
    root asked so far, not those of the one asked: a scan's check over "every LOAD of the
    value" saw the LOADs of the term before it was rewritten, and left 131x131 cumsum's rows
    uninterleaved). Lookups stay the dict's own."""

    def _walked(self, *_: object) -> None:
        raise TypeError("free_ranges' kept table holds other roots' nodes: walk toposort(root) "
                        "and read it at those")

    __iter__ = keys = values = items = _walked  # type: ignore[assignment]


def _fill(order: Iterable[UOp], deps: dict[UOp, frozenset[UOp]]) -> dict[UOp, frozenset[UOp]]:
    """deps with the ranges of each node of `order`, whose sources are in deps or before it."""
    rng, binders, store = Ops.RANGE, (Ops.REDUCE, Ops.DEFINE_LOCAL), Ops.STORE  # read once
    for n in order:
        if n.op is rng:
            deps[n] = frozenset({n})
        elif n.op in binders:
            # (a "scan" REDUCE's range is its STORE's loop: it binds none, rules/scan_helpers.py)
            deps[n] = deps[n.src[0]] - frozenset(r for r in n.src[1:] if r.arg[-1] != "scan")
        elif n.op is store:
            deps[n] = _NO_RANGES
        elif len(n.src) == 1:
            deps[n] = deps[n.src[0]]
        else:
            # a source's set is shared, not copied, when it is the only one with ranges (a
            # kernel of a million nodes would otherwise build a million sets)
            s = _NO_RANGES
            for x in n.src:
                d = deps[x]
                if d and d is not s:
                    s = d if not s else s | d
            deps[n] = s
    return deps


def loops_within(root: UOp, bound: Iterable[UOp]) -> list[UOp]:
    """The ranges of the REDUCEs under root that run once per iteration of the `bound` ranges:
    those that read one of them, or a range of another such REDUCE (a long sum's inner rows at
    each outer index). A REDUCE that reads none is the same value at every iteration, computed
    once before those loops (a 1xN softmax's max, read by its sum and by each output): its loop
    is not work per iteration, and counting it as such would thread a short loop."""
    deps = free_ranges(root)
    bound = set(bound)
    reduces = [n for n in toposort(root) if n.op is Ops.REDUCE and not bound.issuperset(n.src[1:])]
    inside: list[UOp] = []
    grew = True
    while grew:  # (a kernel holds a few REDUCEs: the passes are few)
        grew = False
        for n in reduces:
            if n not in inside and deps[n] & bound:
                inside.append(n)
                bound |= set(n.src[1:])
                grew = True
    return [r for n in inside for r in n.src[1:]]


def linear_terms(x: UOp, opaque: Callable[[UOp], bool] | None = None) -> list[tuple[UOp, int]]:
    """x as a sum of coefficient * term: ADDs and MULs by an int CONST are walked through
    (iteratively, each occurrence of a shared node once per path), every other node is a term,
    and so is a node for which `opaque` holds, whatever it is. The terms come in the order
    they appear in x, left to right, each as often as it appears."""
    # (the symbolic rules' divmod_fold walks the index of every IDIV and MOD it meets: ops
    # read once per node, the stack's methods bound, no generator per ADD)
    out: list[tuple[UOp, int]] = []
    work: list[tuple[UOp, int]] = [(x, 1)]
    pop, push = work.pop, work.append
    while work:
        n, k = pop()
        op = n.op
        if opaque is not None and opaque(n):
            out.append((n, k))
        elif op is _ADD:
            for s in reversed(n.src):
                push((s, k))
        elif op is _MUL and (c := n.src[1]).op is _CONST and type(c.arg) is int:
            push((n.src[0], k * c.arg))
        elif op is _MUL and (c := n.src[0]).op is _CONST and type(c.arg) is int:
            push((n.src[1], k * c.arg))
        else:
            out.append((n, k))
    return out


def index_sums(value: UOp, a: UOp, b: UOp) -> Iterator[tuple[int, int, bool]]:
    """Every whole index sum under `value` that reads loop a or b (an INDEX's offset, a
    comparison's side, a division's operand: the index ADDs and MULs by a constant inside a sum
    are not sums of their own), as (a's coefficient, b's, whether another of its terms reads a
    or b: a division of them, a product of two loops, a gate). The optimizer's actions ask it
    whether two loops are read as one (`opt_helpers`) or only through a + b (`scan_helpers`)."""
    pair, deps = {a, b}, free_ranges(value)
    for n in toposort(value):
        if n.dtype is _INDEX and (n.op is _ADD or (n.op is _MUL and any(
                s.op is _CONST and type(s.arg) is int for s in n.src))):
            continue
        for s in n.src:
            if s.dtype is not _INDEX or pair.isdisjoint(deps.get(s, ())):
                continue
            coef, other = {a: 0, b: 0}, False
            for t, k in linear_terms(s):
                if t in coef:
                    coef[t] += k
                else:
                    other = other or not pair.isdisjoint(deps[t])
            yield coef[a], coef[b], other


def stride(expr: UOp, r: UOp) -> int | None:
    """How far the index `expr` moves when RANGE r steps 0 -> 1 with every other range at 0,
    or None when expr is not index arithmetic of constants and ranges. Evaluated at the two
    points, not read off `linear_terms`: a division or remainder of a range (a window's
    stride-2 read) has a step too. A MIN or MAX (a row block's clamp to the last row,
    rules/row_block_helpers.py) only where r is not under it: a clamp of r has no one step
    (one that r does not move from 0 to 1 may at other values of the other ranges: min(13 -
    j + r, 12) is 12 at j = 0, r + 8 at j = 5)."""
    kept = kept_answers()
    if kept is None:
        return _stride(expr, r)
    key = (stride, expr, r)
    if key not in kept:
        kept[key] = _stride(expr, r)
    return kept[key]


def _stride(expr: UOp, r: UOp) -> int | None:
    if any(n.op in (Ops.MIN, Ops.MAX) and r in n.toposort() for n in toposort(expr)):
        return None
    vals: list[int] = []
    for at in (0, 1):
        env: dict[UOp, int] = {}
        for n in toposort(expr):
            s = [env.get(x) for x in n.src]
            if None in s:
                return None
            a, b = (s + [0, 0])[:2]
            if n.op is Ops.CONST and type(n.arg) is int:
                env[n] = n.arg
            elif n.op is Ops.RANGE:
                env[n] = at if n is r else 0
            elif n.op is Ops.ADD:
                env[n] = a + b  # type: ignore[operator]
            elif n.op is Ops.SUB:
                env[n] = a - b  # type: ignore[operator]
            elif n.op is Ops.MUL:
                env[n] = a * b  # type: ignore[operator]
            elif n.op in (Ops.IDIV, Ops.MOD) and b:
                q = int(a / b)  # type: ignore[operator]
                env[n] = q if n.op is Ops.IDIV else a - q * b  # type: ignore[operator]
            elif n.op is Ops.SHR:
                env[n] = a >> b  # type: ignore[operator]
            elif n.op is Ops.AND:
                env[n] = a & b  # type: ignore[operator]
            elif n.op in (Ops.MIN, Ops.MAX):
                env[n] = (min if n.op is Ops.MIN else max)(a, b)  # type: ignore[type-var]
            else:
                return None
        vals.append(env[expr])
    return vals[1] - vals[0]
