"""Joint values of a guard's constants: the sweep every rule guarded on constants gets.

In: one rule whose guard reads captured CONSTs (`c.arg > 0 and d.arg < c.arg`, `c.arg * d.arg
> 1`), its helpers, and a constant's dtype. Out: a `JointSweep`, whose plan for the dtype is a
short list of assignments {name: value}, each satisfying the guard's terms that name only
those constants, that together visit every joint cell of the guard (each constant's interval
between the rule's numbers, at a number or beside one, its magnitude class, and how each pair
of constants compares); and the values the other leaves of a sweep instance cycle through
(the special floats, an int's edges and width).

Random draws reach a rule wrong only where two or three constants fall in particular
intervals together about as often as the product of each one's chance (`MUL(MUL(x, c), d) if
2 < c < 4 and 0.25 < d < 1`, wrong only at a subnormal x: 4 of seeds 0-8 refuted it). The
sweep is seed-independent: every instance of it is drawn from its own index, so a rule it
refutes is refuted at every seed.

The candidates of one constant are the rule's numbers, their neighbours and the points
inside the intervals they cut (instances.guard_values, interval_points) and the dtype's edge
values; a later constant's also come from the earlier ones (equal, neighbours, negation) and
the rule's numbers through them (L - a, L / a: the boundary of a sum or product guard). A
partial assignment is filtered by every guard term whose names it binds, so the product stays
small; the guard is evaluated by the rule interpreter itself, helpers included.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rulegrad.dsl import ast as A
from rulegrad.runtime.dtype import DType
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp

from .instances import guard_values, interval_points, special_floats

LEVEL_CAP = 240  # partial assignments kept after each constant (thinned across cells)
PLAN_CAP = 16  # assignments in a plan: each is swept with every special leaf value
# and as many more where a later constant is a combination of earlier ones (`_relation`): kept
# apart, as their cells (a band of width 0) would not outnumber the intervals'
RELATED_CAP = 16
# sweep instances per assignment: instance k takes assignment k // STRIDE and leaf value k
# (mod their counts); no dtype has more leaf values than this (a float's 14)
STRIDE = 14


def guarded_consts(rule: A.Rule) -> list[str]:
    """The names of the pattern's CONST captures the guard (or a `where` it uses) reads, in
    pattern order."""
    if rule.guard is None:
        return []
    read = A.names_in(rule.guard) | A.names_in([e for _, e in rule.lets])
    out = []
    for p in A.subpatterns(rule.pattern):
        if isinstance(p, A.PBind) and p.name in read and p.name not in out:
            q = p.pattern
            if isinstance(q, A.PNode) and [r.name for r in q.ops] == ["CONST"] and q.arg is None:
                out.append(p.name)
    return out


def captures(rule: A.Rule) -> set[str]:
    names = {p.name for p in A.subpatterns(rule.pattern)
             if isinstance(p, (A.PBind, A.PVar)) and p.name is not None}
    return names | {n for n, _ in rule.lets}


def edge_values(dt: DType) -> list[Any]:
    """Where a dtype's arithmetic parts: zeros, ones, the special floats; an int's ends, and
    its width (a shift by it) and one less."""
    if dt.is_bool:
        return [False, True]
    if dt.is_float:
        return [0.0, 1.0, -1.0, *special_floats(dt)]
    bits = dt.itemsize * 8
    return [v for v in (0, 1, -1, int(dt.min), int(dt.max), int(dt.min) + 1, int(dt.max) - 1,
                        bits - 1, bits, bits + 1) if int(dt.min) <= v <= int(dt.max)]


def leaf_values(dt: DType) -> list[Any]:
    """The values an unguarded leaf of a sweep instance cycles through."""
    if dt.is_float:
        return [*special_floats(dt), 0.0, 1.0]
    return edge_values(dt)


def _fit(v: Any, dt: DType) -> Any | None:
    """v as a value of dt, or None when dt cannot hold it."""
    if isinstance(v, (float, np.floating)) and math.isnan(v):
        return float("nan") if dt.is_float else None
    if dt.is_float:
        with np.errstate(all="ignore"):
            x = dt.np.type(v)
        return float(x) if np.isfinite(x) or not np.isfinite(v) else None
    if dt.is_bool:
        return bool(v) if v in (0, 1) else None
    if not math.isfinite(v) or v != math.floor(v):
        return None
    v = int(v)
    return v if int(dt.min) <= v <= int(dt.max) else None


def _derived(earlier: Iterable[Any], numbers: list[float], dt: DType) -> list[Any]:
    """Values a later constant meets the earlier ones at: equal, beside, negated, and the
    boundary of a sum or a product with the rule's numbers (L - a, L / a; L - (a + b),
    L / (a b) for two earlier ones); and the earlier ones combined, and beside that: a sum, a
    difference, a product, the next term of a progression (`c - b > a`, `a * b == c`, `b - a
    == c - b`: a joint cell no number of the rule bounds)."""
    vals = [a for a in earlier if not isinstance(a, bool) and math.isfinite(a)]
    out: list[Any] = []
    with np.errstate(all="ignore"):
        for a in vals:
            out += _beside(a, dt) + _sum_edges(a, numbers, dt) + _product_edges(a, numbers, dt)
        if len(vals) > 1:  # a guard over three: a + b + c == L, a * b * c > L
            out += _sum_edges(math.fsum(vals), numbers, dt)
            out += _product_edges(math.prod(vals), numbers, dt)
        for v in _combined(vals):
            out += _beside(v, dt) if math.isfinite(v) else []
    return out


def _combined(vals: list[Any]) -> list[Any]:
    """The earlier values combined: each pair's sum, differences, product and the next terms of
    their progression; a value with itself, its double and square."""
    out: list[Any] = []
    for i, a in enumerate(vals):
        out += [a + a, a * a]
        for b in vals[i + 1:]:
            out += [a + b, a - b, b - a, a * b, 2 * b - a, 2 * a - b]
    return out


def _relation(vals: list[Any], dt: DType) -> tuple[int, ...]:
    """Per constant after the first, which of the earlier ones' combinations (`_combined`) it
    is, or is beside (3 i, 3 i + 1, 3 i + 2), or -1."""
    out = []
    with np.errstate(all="ignore"):
        for k in range(1, len(vals)):
            earlier = [a for a in vals[:k] if not isinstance(a, bool) and math.isfinite(a)]
            v, code = vals[k], -1
            for i, c in enumerate(_combined(earlier) if v == v else ()):
                near = [_fit(x, dt) for x in _beside(c, dt)[:3]] if math.isfinite(c) else []
                if v in near:
                    code = 3 * i + near.index(v)
                    break
            out.append(code)
    return tuple(out)


def _links(cond: A.Expr) -> list[A.Expr]:
    """A chained comparison as its links, each of two operands (`1 < a < b < 2`: `1 < a`,
    `a < b`, `b < 2`), so that a partial assignment is filtered by each link it binds, not by
    the chain once every constant in it is bound (by then thinning had dropped the narrow
    cells). Python reads a middle operand once; a guard's operands have no effects."""
    if not isinstance(cond, A.ECompare) or len(cond.ops) < 2:
        return [cond]
    terms = [cond.left, *cond.rights]
    return [A.ECompare(terms[i], (op,), (terms[i + 1],), cond.span)
            for i, op in enumerate(cond.ops)]


def _beside(a: Any, dt: DType) -> list[Any]:
    if not dt.is_float:
        return [a, a - 1, a + 1, -a]
    x, f = dt.np.type(a), dt.np.type
    return [a, float(np.nextafter(x, f(np.inf))), float(np.nextafter(x, f(-np.inf))), -a]


def _sum_edges(a: Any, numbers: list[float], dt: DType) -> list[Any]:
    """b where a + b crosses a number L: L - a (for ints, and one past it)."""
    return [v for lit in numbers for v in ([lit - a] if dt.is_float else [lit - a, lit - a + 1])]


def _product_edges(a: Any, numbers: list[float], dt: DType) -> list[Any]:
    """b where a * b crosses a number L: L / a and the float above it (for ints, L // a and
    one past it)."""
    out: list[Any] = []
    for lit in numbers if a != 0 else ():
        if not dt.is_float:
            out += [lit // a, lit // a + 1]
        elif math.isfinite(lit / a):
            out += [lit / a, float(np.nextafter(dt.np.type(lit / a), dt.np.type(np.inf)))]
    return out


def _unique(vals: Iterable[Any], dt: DType) -> list[Any]:
    keep, seen = [], set()
    for v in vals:
        x = _fit(v, dt)
        if x is None:
            continue
        key = ("nan",) if isinstance(x, float) and math.isnan(x) else (x, math.copysign(1.0, x))
        if key not in seen:
            seen.add(key)
            keep.append(x)
    return keep


def _magnitude(v: Any, dt: DType) -> int:
    if not dt.is_float:
        return 0 if v == 0 else 1 if v in (int(dt.min), int(dt.max)) else 2
    if math.isnan(v) or math.isinf(v):
        return 3 if math.isnan(v) else 4
    info = np.finfo(dt.np)
    a = abs(v)
    if a == 0:
        return 0 if math.copysign(1.0, v) > 0 else 1  # (the two zeros part MAX, MIN, 1/x)
    return 5 if a < float(info.tiny) else 6 if a == float(info.max) else 7


@dataclass
class JointSweep:
    """The plans of one rule, per dtype, built when a sweep instance first needs one."""

    rule: A.Rule
    helpers: dict[str, Any]
    literals: tuple[Any, ...]
    names: list[str] = field(default_factory=list)
    plans: dict[DType, list[dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.names = guarded_consts(self.rule)

    def plan(self, dt: DType) -> list[dict[str, Any]]:
        """The joint assignments of constants of `dt` (see the module docstring)."""
        if dt not in self.plans:
            self.plans[dt] = self._assignments(dt)
        return self.plans[dt]

    stride = STRIDE

    def size(self) -> int:
        """Instances a sweep runs: each assignment of the largest plan built so far with each
        leaf value (a first round of STRIDE before any plan is built)."""
        return max((len(p) * STRIDE for p in self.plans.values()), default=STRIDE)

    @staticmethod
    def fit(v: Any, dt: DType) -> Any | None:
        return _fit(v, dt)

    @staticmethod
    def leaf_values(dt: DType) -> list[Any]:
        return leaf_values(dt)

    # -- building a plan
    def _assignments(self, dt: DType) -> list[dict[str, Any]]:
        numbers = [v for v in self.literals if not isinstance(v, (Ops, bool))
                   and math.isfinite(v)]
        base = _unique([*interval_points(self.literals, dt), *guard_values(self.literals, dt),
                        *edge_values(dt)], dt)
        cuts = sorted({c for v in numbers for c in (float(v), -float(v))} | {0.0})
        partial: list[dict[str, Any]] = [{}]
        for k, name in enumerate(self.names):
            grown = []
            for a in partial:
                cands = base if k == 0 else _unique([*base, *_derived(a.values(), numbers, dt)],
                                                    dt)
                grown += [{**a, name: v} for v in cands if self._admits({**a, name: v}, dt)]
            partial = self._kept(grown, cuts, dt, LEVEL_CAP)
        return self._kept(partial, cuts, dt, PLAN_CAP) if partial != [{}] else []

    def _kept(self, items: list[dict[str, Any]], cuts: list[float], dt: DType,
              cap: int) -> list[dict[str, Any]]:
        """`_thin` to cap, then as many of the related assignments left, across their cells
        and relations (RELATED_CAP in a plan): a narrow joint band (`c == a + b`, `b == 2 a`,
        c one ulp past a + b) survives the thinning at every level."""
        kept = self._thin(items, cuts, dt, cap)
        if len(kept) == len(items):
            return kept
        seen = {id(it) for it in kept}
        related = [it for it in items if id(it) not in seen
                   and max(_relation(list(it.values()), dt), default=-1) >= 0]
        # ordinary values first (a relation among subnormals or at the range's ends rounds
        # away: c one ulp off moves no product of them)
        related.sort(key=lambda it: sum(_magnitude(v, dt) != 7 and v not in (1, -1)
                                        for v in it.values()))
        more = RELATED_CAP if cap == PLAN_CAP else cap // 4
        return kept + self._thin(related, cuts, dt, more, related=True)

    @functools.cached_property
    def _guard_names(self) -> tuple[set[str], list[tuple[list, list]]]:
        """The rule's captures, and its guard's steps as (lets, links) with the names each
        reads: worked out once, not for each of the tens of thousands of assignments tried."""
        steps = [([(name, e, A.names_in(e)) for name, e in self.rule.lets[start:stop]],
                  [(link, A.names_in(link)) for c in conds for link in _links(c)])
                 for start, stop, conds in self.rule.guard_steps()]
        return captures(self.rule), steps

    def _admits(self, values: dict[str, Any], dt: DType) -> bool:
        """Whether the guard's terms that name only bound constants hold (a term that raises
        there is false: the real guard would raise too)."""
        from .interp import Interpreter

        interp = Interpreter(self.helpers)
        caps: dict[str, Any] = {n: UOp.const(dt, v) for n, v in values.items()}
        known = set(caps)
        captured, steps = self._guard_names
        unbound = captured - known
        for lets, links in steps:
            for name, e, reads in lets:
                if reads & unbound:
                    unbound.add(name)
                    continue
                try:
                    caps[name] = interp.evaluate(e, caps, None)
                except Exception:  # noqa: BLE001 - the rule's own code: no such instance
                    return False
            for cond, reads in links:
                if reads & unbound:
                    continue
                try:
                    if not interp.evaluate(cond, caps, None):
                        return False
                except Exception:  # noqa: BLE001
                    return False
        return True

    def _thin(self, items: list[dict[str, Any]], cuts: list[float], dt: DType,
              cap: int, related: bool = False) -> list[dict[str, Any]]:
        """At most `cap` items, taken round-robin across their cells (and with `related`, the
        relations of their values), so every cell keeps one before any keeps two."""
        if len(items) <= cap:
            return items
        cells: dict[tuple, list[dict[str, Any]]] = {}
        for it in items:
            key = self._cell(it, cuts, dt)
            key = (_relation(list(it.values()), dt), key) if related else key
            cells.setdefault(key, []).append(it)
        out: list[dict[str, Any]] = []
        depth = 0
        while len(out) < cap:
            row = [c[depth] for c in cells.values() if depth < len(c)]
            if not row:
                break
            out += row[:cap - len(out)]
            depth += 1
        return out

    def _cell(self, values: dict[str, Any], cuts: list[float], dt: DType) -> tuple:
        """Which interval between the cuts (or which cut) each value is at, its magnitude
        class, and how each pair compares."""
        out: list[Any] = []
        vals = list(values.values())
        for v in vals:
            if isinstance(v, float) and math.isnan(v):
                out.append(("nan",))
                continue
            i = sum(c < v for c in cuts)
            out.append((2 * i + (1 if i < len(cuts) and cuts[i] == v else 0), _magnitude(v, dt)))
        for i, a in enumerate(vals):
            for b in vals[i + 1:]:
                out.append((a < b) - (a > b) if a == a and b == b else 2)
        return tuple(out)
