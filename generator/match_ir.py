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

Two refinements, both decided here and only printed by emit.py:
- `split`: below a root's source count, the trie is split on the op of a source that several
  alternatives need (`if n1.op is CONST:` ... `else:` ...), an alternative that does not look
  at it going into both branches in rule order, so a test shared by rules far apart runs once;
- `screen`: per op function, the ops some source must have for any leaf to match (tinygrad's
  early_reject, decided at generation time), tested first so that most nodes, which match no
  rule, leave after one or two tests.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

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
from rulegrad.runtime.dtype import DTYPES, DType
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import const_value

Path = tuple[int, ...]

# The float dtypes whose CONSTs hold a float literal rounded (UOp.const rounds to them)
ROUNDED_FLOATS = tuple(dt for dt in DTYPES if dt.is_float and dt.itemsize < 8)


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


def ordered(tests: list[Test]) -> tuple[Test, ...]:
    """One alternative's tests, duplicates dropped, in the order the matcher runs them (the
    generated code, the trie and `rulegrad explain` all walk this order). Stable, so the
    generated code is deterministic."""
    return tuple(sorted(dict.fromkeys(tests), key=_order))


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


Node = Union[Branch, Leaf, "Call", "Split"]


@dataclass
class OpTree:
    op: Ops
    nodes: list[Node]
    direct: int | None = None  # the op runs shared tree `direct` and nothing else


@dataclass
class SharedTree:
    """The trie of consecutive rules whose root is any of many ops (a wildcard, ALU, ...):
    emitted once, called from every op's tree at those rules' place."""

    rules: tuple[int, ...]
    nodes: list[Node]


@dataclass
class MatchIR:
    """One rule set, lowered."""

    name: str
    rules: tuple[Rule, ...]
    trees: list[OpTree]  # in Ops order; only ops some rule can match
    shared: list[SharedTree] = field(default_factory=list)


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
        if p.rest is not None:  # `*rest`: sources len(srcs) on, as a tuple (see rest_path)
            bound = {**bound, p.rest: rest_path(path, len(p.srcs))}
        for order in src_orders(p):
            items = [(sub, path + (order[i],)) for i, sub in enumerate(p.srcs)]
            for tests, b in _sequence(items, bound):
                yield own + tests, b


def rest_path(path: Path, start: int) -> Path:
    """The 'path' of a variadic capture: the node's path, then -(start + 1), which stands for
    `node.src[start:]` (never a real source index)."""
    return path + (-(start + 1),)


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


def implied(tests: list[Test]) -> list[Test]:
    """`tests` and, for each repeated capture (a `SameTest`), the op, dtype and constant tests
    of either of its two nodes copied to the other: they are one node, so a node passing
    `tests` passes the copies. `MOD(MUL[x, c:CONST], c)` tests `n1.op is CONST` at the root's
    own source, in breadth-first order before the MUL's sources are loaded: a quick rejection
    of most MODs, and a test the screen and the split can share with the other MOD rules."""
    same = [t for t in tests if isinstance(t, SameTest)]
    out = list(tests)
    for st in same:
        for t in tests:
            if isinstance(t, (OpTest, DTypeTest, ConstTest)) and t.path in (st.path, st.other):
                out.append(dataclasses.replace(t, path=st.other if t.path == st.path
                                               else st.path))
    return out


def rule_entries(index: int, rule: Rule) -> list[_Entry]:
    """The alternatives of one rule as sorted test sequences (duplicates dropped), with the
    tests their repeated captures imply (`implied`)."""
    out: list[_Entry] = []
    seen: set[tuple] = set()
    for tests, bound in alternatives(rule.pattern, (), {}, root=True):
        steps = ordered(implied(tests))
        captures = tuple(sorted(bound.items()))
        key = (steps, captures)
        if key not in seen:
            seen.add(key)
            out.append(_Entry(steps, Leaf(index, captures)))
    return out


def exclusive(a: tuple[Test, ...], b: tuple[Test, ...]) -> bool:
    """True when no node can pass both test sequences: they demand different ops, source
    counts, dtypes or constants of the same node. Two such entries may trade places without
    changing which rule matches first (ISLE's reordering of a trie)."""
    by_path: dict[tuple[Path, type], list[Test]] = {}
    for t in a:
        by_path.setdefault((t.path, type(t)), []).append(t)
    for t in b:
        for u in by_path.get((t.path, type(t)), ()):
            if isinstance(t, OpTest) and isinstance(u, OpTest):
                if not set(t.ops) & set(u.ops):
                    return True
            elif isinstance(t, CountTest) and isinstance(u, CountTest):
                if _counts_disjoint(t, u) or _counts_disjoint(u, t):
                    return True
            elif isinstance(t, DTypeTest) and isinstance(u, DTypeTest):
                if not t.dtypes & u.dtypes:
                    return True
            elif isinstance(t, ConstTest) and isinstance(u, ConstTest):
                if not t.is_nan and not u.is_nan and type(t.value) is type(u.value) and \
                        not _may_meet_one_const(t.value, u.value):
                    return True
    return False


def _may_meet_one_const(a: bool | int | float, b: bool | int | float) -> bool:
    """Whether two pattern literals may match one CONST: a float literal is compared as the
    CONST's dtype holds it (UOp.const rounds), so 0.1 and 0.10000000149011612 meet the float32
    0.1 and 1e-50 and 0.0 the float32 0.0."""
    if a == b:
        return True
    if type(a) is not float:
        return False
    return any(const_value(dt, a) == const_value(dt, b) for dt in ROUNDED_FLOATS)


def _counts_disjoint(t: CountTest, u: CountTest) -> bool:
    if t.exact:
        return t.count != u.count if u.exact else t.count < u.count
    return False


@dataclass(frozen=True)
class Call:
    """Run shared tree number `shared` of the set here (rules whose root is any of many ops)."""

    shared: int


def build_trie(entries: list[_Entry | Call], depth: int = 0) -> list[Node]:
    """Group entries by their next test, keeping the order of any two that can both match.

    An entry joins an earlier group with the same next test when it is `exclusive` with every
    entry after that group: so tests shared by rules far apart still run once, and siblings
    testing mutually exclusive ops end up next to each other (emitted as one if/elif switch)."""
    groups: list[tuple[Test | None, list]] = []  # (next test, entries); None: a leaf or a call
    for e in entries:
        if isinstance(e, Call) or len(e.steps) == depth:
            groups.append((None, [e]))
            continue
        test = e.steps[depth]
        target = None
        for gi in range(len(groups) - 1, -1, -1):
            g_test, members = groups[gi]
            if g_test == test:
                target = gi
                break
            if g_test is None or not all(isinstance(m, _Entry) and exclusive(m.steps, e.steps)
                                         for m in members):
                break
        if target is None:
            groups.append((test, [e]))
        else:
            groups[target][1].append(e)
    nodes: list[Node] = []
    for test, members in groups:
        if test is None:
            (m,) = members
            nodes.append(m if isinstance(m, Call) else m.leaf)
        else:
            below = split(members, depth + 1) if isinstance(test, CountTest) and \
                test.path == () else build_trie(members, depth + 1)
            nodes.append(Branch(test, below))
    return nodes


@dataclass
class Split:
    """`if test:` the trie `yes`, else the trie `no`: the entries below a root's source count,
    each in the branch where it can still match (one that does not test that node's op in
    both), in rule order in each. A test that many rules far apart share (`n1.op is CONST` in
    x + 0, 0 + x, c1 + c2, (x + c1) + c2, ...) runs once per node, where the trie in rule
    order tests it once per rule it cannot group (Maranget's splitting of a clause matrix on
    a column; first match still wins in each branch)."""

    test: OpTest
    yes: list[Node]
    no: list[Node]


# a trie is split on at most this many tests, one inside another (each may copy the entries
# that do not look at its node into both branches)
SPLITS = 2


def split(entries: list[_Entry], depth: int, left: int = SPLITS) -> list[Node]:
    """The trie of `entries` (that share their first `depth` tests, the last a root's source
    count), split first on the op test of a root source that most of them need, when at least
    two need it; otherwise the plain trie."""
    need: dict[OpTest, int] = {}
    for e in entries:
        for t in e.steps[depth:]:
            if isinstance(t, OpTest) and len(t.path) == 1 and len(t.ops) == 1:
                need[t] = need.get(t, 0) + 1
    if left == 0 or not need or max(need.values()) < 2:
        return build_trie(list(entries), depth)
    test = max(need, key=lambda t: need[t])  # (the first seen among the most needed)
    (op,) = test.ops
    yes: list[_Entry] = []
    no: list[_Entry] = []
    for e in entries:
        at = [t for t in e.steps[depth:] if isinstance(t, OpTest) and t.path == test.path]
        if test in at:  # needs it: known true in `yes`, false in `no`
            yes.append(_Entry(tuple(t for t in e.steps if t != test), e.leaf))
        elif any(op not in t.ops for t in at):  # needs another op there: only in `no`
            no.append(e)
        else:  # does not look at that op, or allows it among others: either way
            yes.append(e)
            no.append(e)
    return [Split(test, split(yes, depth, left - 1), split(no, depth, left - 1))]


# a root that is any of more ops than this gets one shared tree, called from each op's
SHARED_ROOT = 20


def lower(ruleset: CheckedRuleSet | tuple[Rule, ...], name: str | None = None) -> MatchIR:
    """The match IR of one rule set (or of a sequence of rules, one part of a set)."""
    rules = ruleset.rules if isinstance(ruleset, CheckedRuleSet) else tuple(ruleset)
    name = ruleset.name if isinstance(ruleset, CheckedRuleSet) else (name or "")
    per_rule = [(i, rule, root_ops(rule.pattern), rule_entries(i, rule))
                for i, rule in enumerate(rules)]
    shared: list[SharedTree] = []
    shared_ids: dict[tuple[int, ...], int] = {}
    trees: list[OpTree] = []
    for op in Ops:
        items: list[_Entry | Call] = []
        run: list[int] = []  # consecutive rules with the same wide root, for one shared tree

        def close_run(run: list[int] = run, items: list = items) -> None:
            if run:
                key = tuple(run)
                if key not in shared_ids:
                    shared_ids[key] = len(shared)
                    es = [e for i in key for e in per_rule[i][3]]
                    shared.append(SharedTree(key, build_trie(es)))
                items.append(Call(shared_ids[key]))
                run.clear()

        for i, _, ops, es in per_rule:
            if op not in ops:
                continue
            if len(ops) > SHARED_ROOT:
                if run and per_rule[run[-1]][2] != ops:
                    close_run()
                run.append(i)
                continue
            close_run()
            items.extend(es)
        close_run()
        if items:
            direct = items[0].shared if len(items) == 1 and isinstance(items[0], Call) else None
            trees.append(OpTree(op, build_trie(items), direct))
    return MatchIR(name, rules, trees, shared)


def paths_of(t: Test) -> tuple[Path, ...]:
    """The paths a test reads."""
    return (t.path, t.other) if isinstance(t, SameTest) else (t.path,)


# ---------------------------------------------------------------------- screens
def leaf_tests(nodes: list[Node], shared: list[SharedTree]) -> list[tuple[Test, ...]]:
    """Every leaf's structural tests (those on the way to it), in tree order; a call of a shared
    tree counts as that tree's leaves."""
    out: list[tuple[Test, ...]] = []
    stack: list[tuple[Node, tuple[Test, ...]]] = [(n, ()) for n in reversed(nodes)]
    while stack:
        node, above = stack.pop()
        if isinstance(node, Leaf):
            out.append(above)
        elif isinstance(node, Call):
            stack.extend((n, above) for n in reversed(shared[node.shared].nodes))
        elif isinstance(node, Split):  # (a leaf under `no` is known not to pass the test)
            stack.extend((n, above) for n in reversed(node.no))
            stack.extend((n, above + (node.test,)) for n in reversed(node.yes))
        else:
            stack.extend((n, above + (node.test,)) for n in reversed(node.children))
    return out


Screen = tuple[tuple[Path, tuple[Ops, ...]], ...]


def screen(leaves: list[tuple[Test, ...]]) -> Screen | None:
    """A quick rejection for one op's function: ((source path, ops), ...) such that a node none
    of whose sources at those paths has one of those ops matches no leaf (each leaf tests one of
    them), or None when there is none. tinygrad's `early_reject` decided at generation time: most
    nodes of a graph match no rule, and one or two op tests turn them away before the tree.

    Only for functions whose every leaf wants the same exact source count k (so the sources are
    unpacked before the screen runs), over one path or two of the k: the one (or pair) whose ops
    are fewest, so the screen lets the fewest nodes through."""
    if not leaves:
        return None
    counts = {t.count for seq in leaves for t in seq
              if isinstance(t, CountTest) and t.path == () and t.exact}
    if len(counts) != 1 or not all(any(isinstance(t, CountTest) and t.path == () for t in seq)
                                   for seq in leaves):
        return None
    (k,) = counts
    wants: list[dict[Path, frozenset[Ops]]] = []  # per leaf: source path -> the ops it must be
    for seq in leaves:
        own: dict[Path, frozenset[Ops]] = {}
        for t in seq:
            if isinstance(t, OpTest) and len(t.path) == 1:
                own[t.path] = own.get(t.path, frozenset(t.ops)) & frozenset(t.ops)
        if not own:
            return None  # a leaf that looks at no source's op: every node may match it
        wants.append(own)
    best: Screen | None = None
    for size in (1, 2):
        for paths in itertools.combinations([(i,) for i in range(k)], size):
            found = _cover(wants, paths)
            if found is not None and (best is None or _size(found) < _size(best)):
                best = found
        if best is not None:
            return best
    return None


def _cover(wants: list[dict[Path, frozenset[Ops]]], paths: tuple[Path, ...]) -> Screen | None:
    """Each leaf given one of `paths` it tests the op of (None when a leaf tests none): leaves
    with one choice first, then each where its ops add the fewest to those chosen (greedy)."""
    ops: dict[Path, set[Ops]] = {p: set() for p in paths}
    for own in sorted(wants, key=lambda w: sum(p in w for p in paths)):
        options = [p for p in paths if p in own]
        if not options:
            return None
        at = min(options, key=lambda p: len(own[p] - ops[p]))
        ops[at] |= own[at]
    return tuple((p, tuple(sorted(ops[p]))) for p in paths if ops[p])


def _size(found: Screen) -> int:
    return sum(len(ops) for _, ops in found)
