"""DSL features that moved the scheduler's logic out of rangeify_helpers.py (issue 12), each run
by the generated module and by the interpreted matcher, which must agree:

- a guard sees the `where` names, each bound just before the first `and` term that uses it
  (a cheap test first spares a costly name);
- a class declared with `use` is called like a function (`Kernel(name, ast, bufs)` in
  kernel.rules' split_store);
- the builtin `fold(op, nodes)`, the left fold of nodes by a binary op (rangeify.rules'
  index_pad: the AND of the padded axes' conditions);
- analyses (`analysis MODULE: f`) are asked by guards and where names (their misuse is a
  located error: tests/dsl/fail/analysis_*.rules);
- a constant declared with `use` (an all-caps name of the helper module; a name
  that is not one is a located error: tests/dsl/fail/use_not_a_constant.rules);
- contexts declared in the rules file (`context RangeifyContext(sink) { ... }`: fields with
  defaults, `start` from the pass's graph, methods, `again` for until_settled) and records
  (`record Kernel { ... }`); their misuse is a located error: tests/dsl/fail/context_*.rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegrad.dsl import load
from rulegrad.generator import compile_file
from rulegrad.generator.interp import interpret_all
from rulegrad.generator.user import _import
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.rewrite import graph_rewrite
from rulegrad.runtime.uop import UOp

RULES_TEXT = """
rules lazy = {
  # `big` is named by the guard's second term only: bound for constants above 5 alone
  bump: NEG(x:CONST) if x.arg > 5 and big > 0 -> x + big where big = ctx.weigh(x), unused = 1
}
"""


class Counter:
    """A pass context that counts the nodes a rule weighed."""

    def __init__(self) -> None:
        self.weighed: list[int] = []

    def weigh(self, x: UOp) -> int:
        self.weighed.append(x.arg)
        return 10


def _matchers(tmp_path: Path, text: str) -> dict[str, dict]:
    path = tmp_path / "feat.rules"
    path.write_text(text)
    module = _import(tmp_path / "generated" / "feat.py",
                     compile_file(path, tmp_path / "generated"))
    return {"generated": module.MATCHERS, "interp": interpret_all(load(str(path)))[0]}


def test_guard_sees_where_names_bound_only_when_needed(tmp_path: Path) -> None:
    small, large = UOp.const(dtypes.int32, 3), UOp.const(dtypes.int32, 7)
    sink = UOp.sink(small.alu(Ops.NEG), large.alu(Ops.NEG))
    for kind, matchers in _matchers(tmp_path, RULES_TEXT).items():
        ctx = Counter()
        out = graph_rewrite(sink, matchers["lazy"], ctx=ctx)
        # the first term rejected 3 before `big` was bound: only 7 was weighed
        assert ctx.weighed == [7], kind
        assert out.src[0] is sink.src[0], kind
        assert out.src[1].op is Ops.ADD and out.src[1].src[0] is large, kind
        assert out.src[1].src[1].arg == 10, kind


CLASS_RULES = """
use .feat_helpers: Tagged
analysis .feat_helpers: depth
rules wrap = {
  # a declared class built in the right-hand side; an analysis asked in the guard
  tag: NEG(x) as n if n.arg is None and depth(n) == 2 -> n.replace(arg=Tagged(x.op.name, depth(n)))
}
"""

HELPERS = """
from dataclasses import dataclass


@dataclass(frozen=True)
class Tagged:
    name: str
    depth: int


def depth(n):
    \"\"\"The longest path from n down to a leaf, in nodes.\"\"\"
    seen = {}
    for m in n.toposort():
        seen[m] = 1 + max((seen[s] for s in m.src), default=0)
    return seen[n]
"""


def test_declared_class_is_called_and_analysis_asked(tmp_path: Path) -> None:
    (tmp_path / "feat_helpers.py").write_text(HELPERS)
    leaf = UOp.const(dtypes.int32, 3)
    once, twice = leaf.alu(Ops.NEG), leaf.alu(Ops.NEG).alu(Ops.NEG)
    for kind, matchers in _matchers(tmp_path, CLASS_RULES).items():
        out = graph_rewrite(UOp.sink(once, twice), matchers["wrap"])
        # only the NEG of depth 2 (over the CONST) is tagged, with its source's op name; the
        # outer NEG of `twice` (depth 3) is not, and reads the tagged one
        assert out.src[1].arg is None and out.src[1].src[0] is out.src[0], kind
        assert (out.src[0].arg.name, out.src[0].arg.depth) == ("CONST", 2), kind
        assert type(out.src[0].arg).__name__ == "Tagged", kind


CONST_RULES = """
use .feat_helpers: LIMIT, NAME
rules cap = {
  # a constant of the helper module in the guard and the right-hand side
  cap: NEG(x:CONST) if x.arg > LIMIT -> x.const_like(LIMIT) if NAME == "cap" else None
}
"""


def test_declared_constant_is_read(tmp_path: Path) -> None:
    (tmp_path / "feat_helpers.py").write_text("LIMIT = 5\nNAME = 'cap'\n")
    small, large = UOp.const(dtypes.int32, 3).alu(Ops.NEG), UOp.const(dtypes.int32, 7).alu(Ops.NEG)
    for kind, matchers in _matchers(tmp_path, CONST_RULES).items():
        assert matchers["cap"].rewrite(small) is None, kind
        assert matchers["cap"].rewrite(large) is UOp.const(dtypes.int32, 5), kind


FOLD_RULES = """
rules conj = {
  all_of: SINK(*xs) as s if len(xs) > 1 -> SINK(fold(Ops.AND, list(xs)), dtype=dtypes.void)
  one_of: NOOP(*xs) -> fold(Ops.AND, [x for x in xs if x.op is Ops.RANGE])
}
"""


def test_fold_is_a_left_fold_of_nodes(tmp_path: Path) -> None:
    a, b, c = (UOp.variable(name, 0, 1, dtypes.bool) for name in "abc")
    for kind, matchers in _matchers(tmp_path, FOLD_RULES).items():
        out = matchers["conj"].rewrite(UOp.sink(a, b, c))
        assert out is not None and out.src[0] is (a & b) & c, kind
        # of one node: that node; of none: None (no rewrite)
        r = UOp.range(4, 0)
        assert matchers["conj"].rewrite(UOp(Ops.NOOP, dtypes.index, (r, a))) is r, kind
        assert matchers["conj"].rewrite(UOp(Ops.NOOP, dtypes.bool, (a, b))) is None, kind


def test_explain_binds_the_where_names_of_guard_and_right_side() -> None:
    """`rulegrad viz`'s why-not (generator/explain.py) evaluates the guard and the right-hand
    side with the rule's where names bound, as the matchers do."""
    from rulegrad.dsl import check, parse
    from rulegrad.generator.explain import explain

    # `d` is bound for the guard, `e` only once it held
    text = ("rules a = {\n"
            "  big: NEG(x:CONST) if x.arg > 5 and d > 0 -> x + e where d = x.arg - 6, e = d * 2\n"
            "}\n")
    (rule,) = check(parse(text, "w.rules")).rulesets[0].rules
    neg = UOp.const(dtypes.int32, 7).alu(Ops.NEG)
    assert explain(rule, {}, neg).verdict == "fires", explain(rule, {}, neg)
    why = explain(rule, {}, UOp.const(dtypes.int32, 6).alu(Ops.NEG))
    assert why.verdict == "guard false", why



def test_explain_binds_a_variadic_capture_to_the_sources_it_stands_for() -> None:
    """`*rest` is the tuple of the node's remaining sources in the why-not, as in the matchers
    (it was bound to one node, and a right-hand side iterating it raised)."""
    from rulegrad.dsl import check, parse
    from rulegrad.generator.explain import explain

    text = ("rules a = {\n"
            "  tail: SINK(x, *rest) if len(rest) == 2 \\\n"
            "          -> SINK(*[r + x for r in rest], dtype=dtypes.void)\n"
            "}\n")
    (rule,) = check(parse(text, "v.rules")).rulesets[0].rules
    a, b, c = (UOp.const(dtypes.int32, v) for v in (1, 2, 3))
    assert explain(rule, {}, UOp.sink(a, b, c)).verdict == "fires", \
        explain(rule, {}, UOp.sink(a, b, c))
    assert explain(rule, {}, UOp.sink(a, b)).verdict == "guard false"


CONTEXT_TEXT = """
context Seen(sink) {
  counts: dict = dict()
  roots:  int = len(sink.src)
  runs:   int = 1
  note(x, by=1) -> ctx.counts[x] where noted = ctx.counts.update([(x, ctx.counts.get(x, 0) + by)])
  # the second run keeps `roots` (its default, which reads the graph, is not evaluated again)
  again() -> Seen(roots=ctx.roots, runs=ctx.runs + 1) if ctx.runs < 2 else None
}
record Pair {
  first:  UOp
  second: tuple = ()
}
rules count_negs = {
  seen_neg: NEG(x) if ctx.note(x) > 5 -> x
  paired:   SQRT(x) -> Pair(x).first.alu(Ops.EXP2)
}
pipeline counting {
  pass count = count_negs bottom_up ctx=Seen until_settled
}
"""


def test_declared_context_runs_in_a_pipeline(tmp_path: Path) -> None:
    """The same declared classes in the generated module and the interpreted matcher: start
    from the graph, defaults per new context, methods with defaults and effects, again()."""
    path = tmp_path / "ctx.rules"
    path.write_text(CONTEXT_TEXT)
    module = _import(tmp_path / "generated" / "ctx.py", compile_file(path, tmp_path / "generated"))
    a, b = UOp.const(dtypes.float32, 2.0), UOp.const(dtypes.float32, 3.0)
    sink = UOp.sink(a.alu(Ops.NEG), b.alu(Ops.NEG), a.alu(Ops.NEG).alu(Ops.ADD, b),
                    a.alu(Ops.SQRT))
    for kind, pipeline in (("generated", module.counting),
                           ("interp", interpret_all(load(str(path)))[1]["counting"])):
        out, ctx = pipeline(sink)
        assert (ctx.runs, ctx.roots) == (2, 4), kind  # a second run, then settled
        assert ctx.counts == {a: 1, b: 1}, kind  # each run counts afresh: a NEG node once
        assert out.src[3] is a.alu(Ops.EXP2), kind  # Pair(x): its required field, positional
        assert ctx.note(a, by=3) == 4 and module.Pair(a).second == (), kind


# what a user's file declares beside its rule sets, which an importer's module must bring too
IMPORTED_DECLARATIONS = {
    "record": "record Tagged {\n  x: UOp\n}\nrules unwrap = {\n  keep: SQRT(x) -> Tagged(x).x\n}\n",
    "def": "def inner(x) -> x.src[0]\nrules unwrap = {\n  keep: SQRT as s -> inner(s)\n}\n",
}


@pytest.mark.parametrize("kind", sorted(IMPORTED_DECLARATIONS))
def test_imported_user_rules_bring_what_their_file_declares(tmp_path: Path, kind: str) -> None:
    """A user's set copied into an importer's module brings the records its rules build and
    the definitions they call."""
    (tmp_path / "lib.rules").write_text(IMPORTED_DECLARATIONS[kind])
    path = tmp_path / "main.rules"
    path.write_text('from "lib.rules" import unwrap\nrules all = unwrap\n')
    module = _import(tmp_path / "generated" / "main.py",
                     compile_file(path, tmp_path / "generated"))
    a = UOp.const(dtypes.float32, 2.0)
    for how, m in (("generated", module.MATCHERS["all"]),
                   ("interp", interpret_all(load(str(path)))[0]["all"])):
        assert graph_rewrite(UOp.sink(a.alu(Ops.SQRT)), m).src[0] is a, how


DEFS_TEXT = """
# a definition: a named expression of its parameters (defaults, where names, an earlier one)
def plus(x, k=1) -> x + k
def twice(x) -> y + y where y = plus(x)
# a map over a node's sources, and a pipeline of the file called from a definition
def each_twice(n) -> n.replace(src=tuple(twice(s) for s in n.src))
def simplified(x) -> simp(SINK(x, dtype=dtypes.void))[0].src[0]
rules drop_zero = {
  add_zero: ADD(x, 0) -> x
}
pipeline simp {
  pass drop_zero = drop_zero
}
rules defs = {
  neg_twice: NEG(x) -> twice(x)
  max_each:  MAX(CONST, CONST) as m -> each_twice(m)
  sqrt_plus: SQRT(x) -> simplified(plus(x, k=0))
}
"""


def test_definitions_are_called_by_rules(tmp_path: Path) -> None:
    """A `def` is a function of the generated module and of the interpreted matcher alike: with
    a default, a where name, a call of an earlier definition, a map over a node's sources, and
    a pipeline of its file (the interpreted definitions see the file's pipelines too)."""
    a, b = UOp.const(dtypes.float32, 2.0), UOp.const(dtypes.float32, 5.0)
    one = UOp.const(dtypes.float32, 1.0)
    twice = {s: s.alu(Ops.ADD, one).alu(Ops.ADD, s.alu(Ops.ADD, one)) for s in (a, b)}
    for kind, m in _matchers(tmp_path, DEFS_TEXT).items():
        out = graph_rewrite(UOp.sink(a.alu(Ops.NEG), a.alu(Ops.MAX, b), b.alu(Ops.SQRT)),
                            m["defs"], name="defs")
        assert out.src[0] is twice[a], kind
        assert out.src[1] is UOp(Ops.MAX, dtypes.float32, (twice[a], twice[b])), kind
        assert out.src[2] is b, kind  # b + 0, simplified by the pipeline's add_zero


def test_explain_calls_the_definitions_of_the_rule_s_file() -> None:
    """The viewer's why-not runs a package rule with its file's definitions: reduce_expand (a
    rule of rangeify.rules that names its parts) fires on a sum over a broadcast axis."""
    from rulegrad.generator.explain import RuleIndex, explain
    from rulegrad.runtime.buffer import Buffer
    from rulegrad.runtime.rewrite import RuleInfo

    found = RuleIndex().rule(RuleInfo("reduce_expand", "rules/rangeify.rules",
                                      _line_of("rules/rangeify.rules", "reduce_expand:"), ""))
    assert found is not None
    rule, helpers = found
    x = UOp(Ops.BUFFER, dtypes.float32, (), Buffer(4, dtypes.float32)).reshape((4, 1))
    red = UOp(Ops.REDUCE_AXIS, dtypes.float32, (x.expand((4, 3)),), (Ops.MAX, (1,)))
    assert explain(rule, helpers, red).verdict == "fires", explain(rule, helpers, red)


def _line_of(path: str, text: str) -> int:
    lines = (Path(__file__).resolve().parents[1] / path).read_text().splitlines()
    return next(k + 1 for k, line in enumerate(lines) if line.lstrip().startswith(text))
