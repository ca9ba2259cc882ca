"""Pattern subsumption, for the shadowing check: does pattern P1 match every node P2 matches?

In: two patterns of ast.py (already checked: names resolve). Out: True only when every node
matched by P2 is certainly matched by P1; False when unsure (the test is conservative: a False
never causes an error, a True makes the later rule an error when the earlier one always fires).

What it understands: captures and `_`; op sets and groups (as sets of ops); dtype names and
classes (as sets of dtypes); constants, by the constants each literal matches on each dtype
the pattern allows there (`0` and `0.0` match the same ones of every dtype; `0.1` and `0.10001`
the same float16 one; `2049` none of float16), a literal's dtype bounded by its own constraint
or by a same-dtype op's (`ADD(x:float16, 0.1)`); fixed, any-length and
commutative sources, and `OP` / `OP(x, ...)` over ops whose arity is fixed (they are the same as
`OP(_, _)`); `arg=` / `tag=` constraints, which must be syntactically equal; binds are
transparent. Repeated names: a repeated name in P1 is an equality constraint, so P1 then only
subsumes a P2 that is the same pattern up to renaming of captures; repeated names in P2 only
narrow P2 and are ignored.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from rulegrad.runtime.dtype import DTYPES, dtypes
from rulegrad.runtime.uop import const_value

from . import ast as A
from .names import arity, resolve_dtype, resolve_ops

# ops whose sources have the node's own dtype: a dtype named on the node or on one source
# bounds what a literal source can be (`ADD(x:float16, 0.1)`: the 0.1 is a float16 constant)
_SAME_DTYPE = frozenset({"ADD", "MUL", "SUB", "MAX", "MIN", "IDIV", "MOD", "FDIV", "AND", "OR",
                         "XOR"})
_ALL_DTYPES = frozenset(DTYPES) | {dtypes.index}
_NEVER, _ANY_NAN = object(), object()


def _ops(p: A.PNode) -> frozenset | None:
    out: set = set()
    for ref in p.ops:
        ops = resolve_ops(ref.name)
        if ops is None:
            return None
        out |= ops
    return frozenset(out)


def _dtypes(ref: A.DTypeRef | None) -> frozenset | None:
    """The dtypes a constraint allows; None for no constraint (or an unknown name)."""
    return None if ref is None else resolve_dtype(ref.name)


def _strip(p: A.Pattern) -> A.Pattern:
    while isinstance(p, A.PBind):
        p = p.pattern
    return p


def _own_dtype(p: A.Pattern) -> A.DTypeRef | None:
    p = _strip(p)
    return p.dtype


def _dtype_ok(d1: A.DTypeRef | None, p2: A.Pattern, within: frozenset | None = None) -> bool:
    """Whether every dtype P2 allows (its own constraint, else what its context allows) is one
    constraint `d1` allows."""
    if d1 is None:
        return True
    allowed1, allowed2 = _dtypes(d1), _dtypes(_own_dtype(p2))
    if allowed2 is None:
        allowed2 = within
    elif within is not None:
        allowed2 = allowed2 & within
    return allowed1 is not None and allowed2 is not None and allowed2 <= allowed1


def _fixed_srcs(p: A.PNode) -> tuple[A.Pattern, ...] | None:
    """P's sources as a fixed tuple when its ops all have one arity (`ADD` = `ADD(_, _)`)."""
    if p.srcs is not None and not p.ellipsis:
        return p.srcs
    ops = _ops(p)
    arities = {arity(op) for op in ops} if ops else {None}
    if len(arities) != 1 or None in arities:
        return None
    (n,) = arities
    have = p.srcs or ()
    if len(have) > n:
        return None
    return tuple(have) + (A.PVar(None),) * (n - len(have))


def _srcs(p1: A.PNode, p2: A.PNode, within: frozenset | None) -> bool:
    if p1.srcs is None:
        return True
    s2 = _fixed_srcs(p2) if (p2.srcs is None or p2.ellipsis) else p2.srcs
    if s2 is None:  # P2 allows any number of sources, P1 does not
        return False
    s1 = p1.srcs
    hint = _source_dtypes(p2, s2, within)

    def sub(a: A.Pattern, b: A.Pattern) -> bool:
        return subsumes(a, b, hint)

    if p1.commutative:
        if len(s1) != 2 or len(s2) != 2:
            return False
        return (sub(s1[0], s2[0]) and sub(s1[1], s2[1])) or (
            sub(s1[1], s2[0]) and sub(s1[0], s2[1]))
    if p1.ellipsis:
        if len(s2) < len(s1):
            return False
        s2 = s2[: len(s1)] if not p2.commutative else s2
    elif len(s1) != len(s2):
        return False
    if p2.commutative and len(s2) == 2:
        # P2 matches the sources in either order: P1 must accept both
        both = (s2, (s2[1], s2[0]))
        return all(all(sub(a, b) for a, b in zip(s1, order)) for order in both)
    return all(sub(a, b) for a, b in zip(s1, s2))


def _source_dtypes(p2: A.PNode, srcs: tuple[A.Pattern, ...], within: frozenset | None
                   ) -> frozenset | None:
    """The dtypes P2's sources can have when its ops keep their sources' dtype: P2's own
    constraint, its sources' and what its parent allowed it (`within`); None when unbounded."""
    ops = _ops(p2)
    if not ops or any(op.name not in _SAME_DTYPE for op in ops):
        return None
    out = within
    for ref in (p2.dtype, *(_own_dtype(s) for s in srcs)):
        allowed = _dtypes(ref)
        if allowed is not None:
            out = allowed if out is None else out & allowed
    return out


def _matched_arg(dt: Any, lit: bool | int | float) -> Any:
    """The one arg (up to ==) a CONST of `dt` holds when the literal matches it (the matchers
    compare `arg == literal`, a float literal first rounded to a float dtype, and a NaN literal
    matches any NaN): `_ANY_NAN`, or `_NEVER` when no constant of `dt` matches."""
    if isinstance(lit, float) and math.isnan(lit):
        return _ANY_NAN if dt.is_float else _NEVER
    if dt.is_bool:
        return bool(lit) if lit in (0, 1) else _NEVER
    if dt.is_float:
        v = const_value(dt, lit) if type(lit) is float else lit
        try:
            held = const_value(dt, float(v))
        except OverflowError:  # an int past every float
            return _NEVER
        return held if held == v else _NEVER  # (2049 is no float16 constant)
    if isinstance(lit, float) and not (math.isfinite(lit) and lit == int(lit)):
        return _NEVER
    v = int(lit)
    return v if dt is dtypes.index or int(dt.min) <= v <= int(dt.max) else _NEVER


def _literal_covers(l1: bool | int | float, l2: bool | int | float, over: frozenset) -> bool:
    """Whether literal l1 matches every constant l2 matches, on each dtype in `over` (0 and 0.0
    match the same constants of every dtype; 0.1 and 0.10001 the same float16 one). False when
    l2 matches no constant of any of them (`ADD(x:int8, 255)`): that rule never fires whatever
    comes before it, and an error blaming the earlier rule would name the wrong cause (the
    checker's never-fires warning names the right one)."""
    some = False
    for dt in over:
        a2 = _matched_arg(dt, l2)
        if a2 is not _NEVER:
            if _matched_arg(dt, l1) != a2:
                return False
            some = True
    return some


def subsumes(p1: A.Pattern, p2: A.Pattern, within: frozenset | None = None) -> bool:
    """True when every node matched by `p2` is matched by `p1` (P1 without repeated names);
    `within`: the dtypes P2's node can have, when its context bounds them."""
    p1, p2 = _strip(p1), _strip(p2)
    if isinstance(p1, A.PVar):
        return _dtype_ok(p1.dtype, p2, within)
    if isinstance(p1, A.PConst):
        if not isinstance(p2, A.PConst) or not _dtype_ok(p1.dtype, p2):
            return False
        over = _dtypes(p2.dtype) or within or _ALL_DTYPES
        if within is not None:
            over = over & within
        return _literal_covers(p1.value, p2.value, over)
    if isinstance(p2, A.PConst):
        # a bare `CONST` (or a group holding it) matches every constant
        ops = _ops(p1)
        return (ops is not None and any(op.name == "CONST" for op in ops) and p1.arg is None
                and p1.tag is None and (p1.srcs is None or p1.srcs == ())
                and _dtype_ok(p1.dtype, p2))
    if not isinstance(p2, A.PNode):
        return False
    ops1, ops2 = _ops(p1), _ops(p2)
    if ops1 is None or ops2 is None or not ops2 <= ops1:
        return False
    if not _dtype_ok(p1.dtype, p2):
        return False
    for c1, c2 in ((p1.arg, p2.arg), (p1.tag, p2.tag)):
        if c1 is not None and (c2 is None or A.strip_spans(c1) != A.strip_spans(c2)):
            return False
    return _srcs(p1, p2, within)


def capture_names(p: A.Pattern) -> list[str]:
    """Every capture name in the pattern, in order, with repeats."""
    return [q.name for q in A.subpatterns(p)
            if isinstance(q, A.PBind) or (isinstance(q, A.PVar) and q.name is not None)]


def _canonical(p: A.Pattern) -> A.Pattern:
    """The pattern with captures renamed by order of appearance and bind forms unified."""
    mapping: dict[str, str] = {}
    for name in capture_names(p):
        mapping.setdefault(name, f"v{len(mapping)}")

    def go(q: A.Pattern) -> A.Pattern:
        if isinstance(q, A.PBind):
            return A.PBind(mapping[q.name], go(q.pattern))
        if isinstance(q, A.PVar):
            return A.PVar(mapping.get(q.name) if q.name else None, q.dtype)
        if isinstance(q, A.PNode) and q.srcs is not None:
            return A.PNode(q.ops, tuple(go(s) for s in q.srcs), q.commutative, q.ellipsis,
                           q.arg, q.tag, q.dtype)
        return q

    return A.strip_spans(go(p))


def shadows(p1: A.Pattern, p2: A.Pattern) -> bool:
    """Does an always-firing rule with pattern `p1` hide a later rule with pattern `p2`?"""
    repeated = any(n > 1 for n in Counter(capture_names(p1)).values())
    if repeated:  # equality constraints: only an identical pattern is surely covered
        return _canonical(p1) == _canonical(p2)
    return subsumes(p1, p2)


# ------------------------------------------------------------------------ many rules at once
# A path from the root through sources (0-based indices) and what a pattern must hold there.
_Path = tuple[int, ...]
_EITHER = -1  # a step to either source of a commutative node


def _sources_at(p: A.PNode) -> tuple[A.Pattern, ...] | None:
    """The sources `_srcs` compares a later pattern's node by."""
    return _fixed_srcs(p) if (p.srcs is None or p.ellipsis) else p.srcs


def _anchor(p1: A.Pattern) -> tuple[_Path, Any] | None:
    """One place where any pattern P1 subsumes must hold exactly this: a constant, or a node of
    one op (below the root), reached through P1's non-commutative sources. None when P1 has
    none (it is then compared with every later pattern)."""
    best: tuple[_Path, Any] | None = None
    const: tuple[_Path, Any] | None = None
    todo: list[tuple[A.Pattern, _Path]] = [(p1, ())]
    while todo:
        q, path = todo.pop()
        q = _strip(q)
        if isinstance(q, A.PConst):
            # the most selective: the constants it matches (`_literal_keys`)
            const = const or (path, _literal_keys(q.value))
            continue
        if not isinstance(q, A.PNode):
            continue
        ops = _ops(q)
        if path and ops is not None and len(ops) == 1 and next(iter(ops)).name != "CONST":
            best = best if best is not None and len(best[0]) >= len(path) else (
                path, frozenset({("op", next(iter(ops)))}))
        if q.srcs is not None:
            # below a commutative node either source may hold what the other one asks for
            todo.extend((s, path + ((_EITHER if q.commutative else i),))
                        for i, s in enumerate(q.srcs))
    return const or best


def _literal_keys(lit: bool | int | float) -> frozenset:
    """The constants a literal matches, one key per value over every dtype (`_matched_arg`):
    a literal covers another only where both match one constant of some dtype, so they share
    a key (0 and 0.0 share 0; 0.1 and 0.10001 share float16's 0.0999755859375), and the
    literals of 4,000 rules `ADD(x, i)` are each compared with their own few."""
    keys = {_matched_arg(dt, lit) for dt in _ALL_DTYPES}
    keys.discard(_NEVER)
    return frozenset(("const", k) for k in keys)


def _keys_at(p2: A.Pattern, path: _Path) -> set[Any]:
    """What P2 holds at `path`, in the terms of `_anchor` (empty: nothing an anchor accepts)."""
    level = [_strip(p2)]
    for i in path:
        nxt = []
        for q in level:
            srcs = _sources_at(q) if isinstance(q, A.PNode) else None
            if srcs is None:
                continue
            if i == _EITHER:
                nxt.extend(_strip(s) for s in srcs[:2] if len(srcs) == 2)
            elif i < len(srcs):
                nxt.append(_strip(srcs[i]))
        level = nxt
    keys: set[Any] = set()
    for q in level:
        if isinstance(q, A.PConst):
            keys |= _literal_keys(q.value)
        elif isinstance(q, A.PNode):
            ops = _ops(q)
            if ops is not None and len(ops) == 1:
                keys.add(("op", next(iter(ops))))
    return keys


class ShadowIndex:
    """The always-firing rules seen so far, indexed so that a later pattern is compared only
    with those that could subsume it (by `_anchor`): the shadowing check of a set of n rules
    is then about linear instead of n*n subsumption tests."""

    def __init__(self) -> None:
        self.unanchored: list[tuple[int, Any, A.Pattern]] = []
        self.anchored: dict[_Path, dict[Any, list[tuple[int, Any, A.Pattern]]]] = {}
        self.count = 0

    def add(self, item: Any, pattern: A.Pattern) -> None:
        entry = (self.count, item, pattern)
        self.count += 1
        anchor = _anchor(pattern)
        if anchor is None:
            self.unanchored.append(entry)
            return
        by_key = self.anchored.setdefault(anchor[0], {})
        for key in anchor[1]:  # (a literal's keys: the constants it matches, `_literal_keys`)
            by_key.setdefault(key, []).append(entry)

    def candidates(self, p2: A.Pattern) -> list[tuple[Any, A.Pattern]]:
        """The earlier entries that might subsume `p2`, in the order they were added."""
        found = list(self.unanchored)
        for path, by_key in self.anchored.items():
            for key in _keys_at(p2, path):
                found.extend(by_key.get(key, ()))
        found.sort(key=lambda e: e[0])
        seen: set[int] = set()  # an entry found under two keys is tried once
        return [(item, pattern) for n, item, pattern in found
                if not (n in seen or seen.add(n))]
