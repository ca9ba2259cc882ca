"""Lower a checked rule set to the match IR: per root op, a decision tree of structural tests.

In: a `CheckedRuleSet` (rules in priority order). Out: a `MatchIR` holding, for every op some
rule can match at the root, an `OpTree`: a list of `Branch` (one structural `Test`, then its
children) and `Leaf` (a rule whose structural test has passed, with its captures as paths).

How a rule becomes tree paths:
- Its pattern is expanded into *alternatives*, one per way a commutative `[a, b]` can line up
  (in the order the interpreted matcher tries them; identical alternatives are kept once).
- Each alternative is a set of tests on *paths* (a path is the tuple of source indices from the
  root: `()` is the root, `(1, 0)` is `n.src[1].src[0]`), sorted breadth first so that a parent's
  source-count test comes before any test of its sources, and so that rules test the same
  things in the same order.
- The alternatives of all rules under one op, in rule order, go into a trie: consecutive
  alternatives that start with the same test share one `Branch`. A depth-first walk of the trie
  visits leaves in rule order, so the first rule that matches still wins, and a test shared by
  consecutive rules (or by the two orders of a commutative pattern) runs once.

The root's op test is not in the tree: dispatch by op does it. A root that is a bare capture or
wildcard lands under every op.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

from rulegrad.dsl.ast import (
    CheckedRuleSet,
    DTypeRef,
    Expr,
    Pattern,
    PBind,
    PConst,
    PNode,
    PVar,
    Rule,
)
from rulegrad.dsl.names import resolve_dtype, resolve_ops
from rulegrad.runtime.dtype import DType
from rulegrad.runtime.ops import Ops

Path = tuple[int, ...]


class LowerError(Exception):
    """A pattern the generator cannot lower (the checker should have caught it)."""


# ---------------------------------------------------------------------- tests
@dataclass(frozen=True)
class OpTest:
    """`node.op` is one of `ops`."""

    path: Path
    ops: tuple[Ops, ...]  # sorted


@dataclass(frozen=True)
class CountTest:
    """`len(node.src) == count` (exact) or `>= count` (a trailing `...`)."""

    path: Path
    count: int
    exact: bool


@dataclass(frozen=True)
class DTypeTest:
    """`node.dtype` is in the dtype or dtype class called `name`."""

    path: Path
    name: str
    dtypes: frozenset[DType]


@dataclass(frozen=True)
class ConstTest:
    """`node.arg == value` (the node is known to be a CONST); NaN compares as NaN."""

    path: Path
    value: bool | int | float

    @property
    def is_nan(self) -> bool:
        return isinstance(self.value, float) and math.isnan(self.value)


@dataclass(frozen=True)
class ArgTest:
    """`node.arg == value` for a constant expression."""

    path: Path
    value: Expr


@dataclass(frozen=True)
class TagTest:
    """`node.tag == value` for a constant expression."""

    path: Path
    value: Expr


@dataclass(frozen=True)
class SameTest:
    """A repeated capture: the node at `path` is the node at `other`."""

    path: Path
    other: Path


Test = OpTest | CountTest | DTypeTest | ConstTest | ArgTest | TagTest | SameTest

# within one path: cheap tests that reject most nodes first; the source count before loads
_RANK = {OpTest: 0, CountTest: 1, DTypeTest: 2, ConstTest: 3, ArgTest: 4, TagTest: 5,
         SameTest: 6}


def _order(t: Test) -> tuple:
    # breadth first by path (a parent's CountTest precedes every test of its sources); a
    # SameTest sits at the later of its two paths, after both are known
    path = t.path
    if isinstance(t, SameTest):  # the later of the two in breadth-first order
        path = max(t.path, t.other, key=lambda p: (len(p), p))
    return (len(path), path, _RANK[type(t)], getattr(t, "other", ()))


# ---------------------------------------------------------------------- tree
@dataclass(frozen=True)
class Leaf:
    """Rule number `rule` (its index in the set) matched; captures bound to these paths."""

    rule: int
    captures: tuple[tuple[str, Path], ...]


@dataclass
class Branch:
    test: Test
    children: list[Branch | Leaf]


Node = Branch | Leaf


@dataclass
class OpTree:
    op: Ops
    nodes: list[Node]


@dataclass
class MatchIR:
    """One rule set, lowered."""

    name: str
    rules: tuple[Rule, ...]
    trees: list[OpTree]  # in Ops order; only ops some rule can match


# ---------------------------------------------------------------------- lowering
def root_ops(p: Pattern) -> frozenset[Ops]:
    """The ops a pattern can match at the root (all ops for a capture or wildcard)."""
    if isinstance(p, PBind):
        return root_ops(p.pattern)
    if isinstance(p, PConst):
        return frozenset({Ops.CONST})
    if isinstance(p, PVar):
        return frozenset(Ops)
    ops: set[Ops] = set()
    for ref in p.ops:
        resolved = resolve_ops(ref.name)
        if resolved is None:
            raise LowerError(f"{ref.span}: unknown op or group {ref.name!r}")
        ops |= resolved
    return frozenset(ops)


def _dtype_test(path: Path, ref: DTypeRef | None) -> list[Test]:
    if ref is None:
        return []
    resolved = resolve_dtype(ref.name)
    if resolved is None:
        raise LowerError(f"{ref.span}: unknown dtype {ref.name!r}")
    return [DTypeTest(path, ref.name, resolved)]


Bound = dict[str, Path]


def _bind(name: str | None, path: Path, bound: Bound) -> tuple[list[Test], Bound]:
    if name is None:
        return [], bound
    if name in bound:  # a repeated name means the same node
        return [SameTest(path, bound[name])], bound
    return [], {**bound, name: path}


def src_orders(p: PNode) -> list[tuple[int, ...]]:
    """For each way the sources may line up, the source index each sub-pattern goes to.

    Shared with the interpreter: the order here is the order in which both try them."""
    n = len(p.srcs or ())
    if p.commutative:
        return list(itertools.permutations(range(n)))
    return [tuple(range(n))]


def alternatives(p: Pattern, path: Path, bound: Bound,
                 root: bool = False) -> Iterator[tuple[list[Test], Bound]]:
    """Every (tests, captures) way `p` can match at `path`, in the interpreter's order."""
    if isinstance(p, PVar):
        tests, b = _bind(p.name, path, bound)
        yield _dtype_test(path, p.dtype) + tests, b
    elif isinstance(p, PConst):
        yield [OpTest(path, (Ops.CONST,)), ConstTest(path, p.value),
               *_dtype_test(path, p.dtype)], bound
    elif isinstance(p, PBind):
        for tests, b in alternatives(p.pattern, path, bound, root):
            more, b = _bind(p.name, path, b)
            yield tests + more, b
    else:
        own: list[Test] = []
        if not root:  # dispatch by op checks the root's op
            own.append(OpTest(path, tuple(sorted(root_ops(p)))))
        own += _dtype_test(path, p.dtype)
        if p.arg is not None:
            own.append(ArgTest(path, p.arg))
        if p.tag is not None:
            own.append(TagTest(path, p.tag))
        if p.srcs is None:
            yield own, bound
            return
        own.append(CountTest(path, len(p.srcs), exact=not p.ellipsis))
        for order in src_orders(p):
            items = [(sub, path + (order[i],)) for i, sub in enumerate(p.srcs)]
            for tests, b in _sequence(items, bound):
                yield own + tests, b


def _sequence(items: list[tuple[Pattern, Path]], bound: Bound
              ) -> Iterator[tuple[list[Test], Bound]]:
    if not items:
        yield [], bound
        return
    (first, path), rest = items[0], items[1:]
    for tests, b in alternatives(first, path, bound):
        for more, b2 in _sequence(rest, b):
            yield tests + more, b2


@dataclass(frozen=True)
class _Entry:
    steps: tuple[Test, ...]
    leaf: Leaf


def rule_entries(index: int, rule: Rule) -> list[_Entry]:
    """The alternatives of one rule as sorted test sequences (duplicates dropped)."""
    out: list[_Entry] = []
    seen: set[tuple] = set()
    for tests, bound in alternatives(rule.pattern, (), {}, root=True):
        steps = tuple(sorted(dict.fromkeys(tests), key=_order))  # stable: deterministic
        captures = tuple(sorted(bound.items()))
        key = (steps, captures)
        if key not in seen:
            seen.add(key)
            out.append(_Entry(steps, Leaf(index, captures)))
    return out


def build_trie(entries: list[_Entry], depth: int = 0) -> list[Node]:
    """Group consecutive entries by their next test; keeps the entries' order."""
    nodes: list[Node] = []
    i = 0
    while i < len(entries):
        e = entries[i]
        if len(e.steps) == depth:
            nodes.append(e.leaf)
            i += 1
            continue
        test = e.steps[depth]
        j = i + 1
        while j < len(entries) and len(entries[j].steps) > depth and \
                entries[j].steps[depth] == test:
            j += 1
        nodes.append(Branch(test, build_trie(entries[i:j], depth + 1)))
        i = j
    return nodes


def lower(ruleset: CheckedRuleSet) -> MatchIR:
    """The match IR of one rule set."""
    per_rule = [(i, rule, root_ops(rule.pattern), rule_entries(i, rule))
                for i, rule in enumerate(ruleset.rules)]
    trees: list[OpTree] = []
    for op in Ops:
        entries = [e for _, _, ops, es in per_rule if op in ops for e in es]
        if entries:
            trees.append(OpTree(op, build_trie(entries)))
    return MatchIR(ruleset.name, ruleset.rules, trees)


def paths_of(t: Test) -> tuple[Path, ...]:
    """The paths a test reads."""
    return (t.path, t.other) if isinstance(t, SameTest) else (t.path,)
