"""The `.rules` front end: fixtures, diagnostics format, round trips, shadowing, random ASTs.

- tests/dsl/pass/*.rules load cleanly and round-trip through the printer;
- tests/dsl/fail/*.rules each state on their first lines the errors they must produce,
  `# error: [path:]LINE:COL: message substring`, one line per error, and the report must have
  exactly those errors, each with its source line and a caret under the column, then `N errors`;
- every rules/*.rules file of the project loads and round-trips;
- a hypothesis test prints random ASTs and parses them back to the same tree.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulegrad.dsl import RulesError, load, parse, print_file
from rulegrad.dsl import ast as A
from rulegrad.dsl.parser import GRAMMAR_PATH
from rulegrad.dsl.subsume import shadows

ROOT = Path(__file__).resolve().parents[1]
PASS = sorted((ROOT / "tests/dsl/pass").glob("*.rules"))
FAIL = sorted((ROOT / "tests/dsl/fail").glob("*.rules"))
PROJECT_RULES = sorted((ROOT / "rules").glob("*.rules"))
EXPECT = re.compile(r"# error: (?:(\S+\.rules):)?(\d+):(\d+): (.*)")


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def _normal(f: A.RulesFile) -> A.RulesFile:
    """Spans stripped, and derived names of unnamed rules blanked (they encode a line)."""
    f = A.strip_spans(f)
    sets = []
    for rs in f.rulesets:
        terms = tuple(
            replace(t, rules=tuple(r if r.named else replace(r, name="") for r in t.rules))
            if isinstance(t, A.RuleBlock) else t for t in rs.terms)
        sets.append(replace(rs, terms=terms))
    return replace(f, rulesets=tuple(sets))


def _round_trip(text: str, path: str) -> None:
    first = parse(text, path)
    printed = print_file(first)
    again = parse(printed, path)
    # exact: derived names survive because printing keeps every rule on its source line
    assert A.strip_spans(again) == A.strip_spans(first), printed
    assert print_file(again) == printed  # printing is a fixpoint


# ------------------------------------------------------------------------ fixtures
def test_there_are_enough_fixtures() -> None:
    assert len(FAIL) >= 30 and len(PASS) >= 3


@pytest.mark.parametrize("path", PASS, ids=_ids(PASS))
def test_pass_fixture_loads_and_round_trips(path: Path) -> None:
    checked = load(str(path))
    assert checked.file.path == str(path)
    _round_trip(path.read_text(), str(path))


@pytest.mark.parametrize("path", PROJECT_RULES, ids=_ids(PROJECT_RULES))
def test_project_rules_load_and_round_trip(path: Path) -> None:
    load(str(path))
    _round_trip(path.read_text(), str(path))


def _expectations(path: Path) -> list[tuple[str, int, int, str]]:
    out = []
    for line in path.read_text().splitlines():
        m = EXPECT.match(line)
        if not m:
            break
        file = str((path.parent / m[1]).resolve()) if m[1] else str(path.resolve())
        out.append((file, int(m[2]), int(m[3]), m[4]))
    return out


@pytest.mark.parametrize("path", FAIL, ids=_ids(FAIL))
def test_fail_fixture(path: Path) -> None:
    expected = _expectations(path)
    assert expected, f"{path.name}: the first line must say '# error: LINE:COL: message'"
    with pytest.raises(RulesError) as info:
        load(str(path))
    diags = info.value.diagnostics
    got = [(str(Path(d.span.path).resolve()), d.span.line, d.span.col, d.message) for d in diags]
    for file, line, col, msg in expected:
        assert any(g[:3] == (file, line, col) and msg in g[3] for g in got), (
            f"expected {line}:{col}: {msg}\ngot:\n{info.value}")
    assert len(diags) == len(expected), str(info.value)
    # the printed report: header, source line, caret under the column; then the total
    report = str(info.value).splitlines()
    assert report[-1] == (f"{len(diags)} error" if len(diags) == 1 else f"{len(diags)} errors")
    for d in diags:
        header = f"{d.span}: error: {d.message}"
        i = report.index(header)
        source, caret = report[i + 1], report[i + 2]
        assert source == Path(d.span.path).read_text().splitlines()[d.span.line - 1]
        assert caret.lstrip().startswith("^") and len(caret) - len(caret.lstrip()) == (
            d.span.col - 1), report
        assert set(caret.strip()) <= {"^", "~"}


@pytest.mark.parametrize("path", FAIL, ids=_ids(FAIL))
def test_fail_fixture_round_trips_when_it_parses(path: Path) -> None:
    text = path.read_text()
    try:
        parse(text, str(path))
    except RulesError:
        return  # a syntax-error fixture
    _round_trip(text, str(path))


# ------------------------------------------------------------------------ parser details
def test_grammar_is_conflict_free_lalr() -> None:
    pytest.importorskip("interegular")  # Lark's strict mode needs it to check terminals
    from lark import Lark

    Lark(GRAMMAR_PATH.read_text(), parser="lalr", lexer="basic", strict=True)


def test_label_capture_and_dtype_forms() -> None:
    f = parse("rules s = {\n  add_zero: ADD[x, 0] -> x\n  WHERE(c:CONST, a, b) -> a\n"
              "  x:CONST:ints -> x\n  y:ints -> y\n}\n", "t.rules")
    r1, r2, r3, r4 = f.rulesets[0].terms[0].rules
    assert (r1.name, r1.named) == ("add_zero", True)
    assert (r2.name, r2.named) == ("s_3", False)
    assert r2.pattern.srcs[0] == A.PBind("c", A.PNode((A.OpRef("CONST"),), None))
    assert r3.pattern == A.PBind("x", A.PNode((A.OpRef("CONST"),), None,
                                              dtype=A.DTypeRef("ints")))
    assert r4.pattern == A.PVar("y", A.DTypeRef("ints"))
    assert r1.text == "add_zero: ADD[x, 0] -> x"
    assert (r1.span.line, r1.span.col) == (2, 3)
    assert (r2.pattern.ops[0].span.line, r2.pattern.ops[0].span.col) == (3, 3)


def test_rule_text_is_one_line_without_comments() -> None:
    f = parse("rules s = {\n  w: PAD(\n     x,   # the value\n     ...) -> x\n}\n", "t.rules")
    assert f.rulesets[0].terms[0].rules[0].text == "w: PAD(x, ...) -> x"


def test_several_syntax_errors_are_reported_together() -> None:
    with pytest.raises(RulesError) as info:
        parse("rules a = {\n  ADD(x) x\n  MUL(x -> x\n  SUB(x) ->\n}\nrules b {\n}\n", "t.rules")
    lines = [d.span.line for d in info.value.diagnostics]
    assert lines == [2, 3, 4, 6]


def test_a_text_parsed_again_is_the_same_tree_and_its_errors_a_fresh_list() -> None:
    """The parser keeps the trees of texts it saw (the AST is immutable): the same text and path
    give the same object, not a second parse; another text or path is parsed; the errors come
    back as a new list each time, so a caller that adds to it changes no later answer."""
    from rulegrad.dsl.parser import parse_collect

    text = "rules a = {\n  z: ADD(x, 0) -> x\n}\n"
    first, _ = parse_collect(text, "t.rules")
    assert first is not None and parse_collect(text, "t.rules")[0] is first
    other = parse_collect(text.replace("0)", "1)"), "t.rules")[0]
    assert other is not first and other != first
    assert parse_collect(text, "u.rules")[0].path == "u.rules"
    bad = "rules a = {\n  ADD(x) x\n}\n"
    errs = parse_collect(bad, "t.rules")[1]
    errs.append("added by a caller")
    again = parse_collect(bad, "t.rules")[1]
    assert [d.span.line for d in again] == [2]


# ------------------------------------------------------------------------ subsumption
def _pat(text: str) -> A.Pattern:
    f = parse(f"rules s = {{\n  {text} -> 0\n}}\n", "t.rules")
    return f.rulesets[0].terms[0].rules[0].pattern


@pytest.mark.parametrize("general, specific, expected", [
    ("x", "ADD(a, b)", True),
    ("ADD(x, y)", "ADD(a, 0)", True),
    ("ADD(a, 0)", "ADD(x, y)", False),
    ("ADD", "ADD(a, b)", True),
    ("ADD(x, y)", "ADD", True),  # ADD always has 2 sources
    ("ALU(x, ...)", "MUL[a, 1]", True),
    ("MUL[x, 1]", "MUL(1, y)", True),
    ("MUL(x, 1)", "MUL[y, 1]", False),  # the commutative one also matches MUL(1, y)
    ("MUL[x, 1]", "MUL[1, y]", True),
    ("{ADD, MUL}(x, y)", "MUL(a, b)", True),
    ("{ADD, MUL}(x, y)", "SUB(a, b)", False),
    ("x:ints", "ADD(a, b):int32", True),
    ("x:ints", "ADD(a, b)", False),
    ("x:int32", "y:ints", False),
    ("0", "0", True),
    ("0", "1", False),
    ("CONST", "5", True),
    ("RESHAPE(x, arg=(1, 2))", "RESHAPE(y, arg=(1, 2))", True),
    ("RESHAPE(x, arg=(1, 2))", "RESHAPE(y)", False),
    ("SUB(x, x)", "SUB(a, b)", False),
    ("SUB(x, x)", "SUB(a, a)", True),
    ("SUB(x, y)", "SUB(a, a)", True),
    ("KERNEL(x, ...)", "KERNEL(a)", True),
    ("KERNEL(x)", "KERNEL(a, ...)", False),
])
def test_subsumption(general: str, specific: str, expected: bool) -> None:
    assert shadows(_pat(general), _pat(specific)) is expected


# ------------------------------------------------------------------------ random ASTs
NAMES = ["x", "y", "z", "a1", "ctx", "foo_bar"]
ATTRS = ["arg", "src", "dtype", "op", "ADD", "vmin"]
OPS = ["ADD", "MUL", "CONST", "WHERE", "Movement", "ALU"]
DTYPES = [None, "int32", "ints", "floats", "bool", "index"]


def _dt(name: str | None) -> A.DTypeRef | None:
    return A.DTypeRef(name) if name else None


def _exprs() -> st.SearchStrategy:
    leaves = st.one_of(
        st.builds(A.ELit, st.one_of(
            st.none(), st.booleans(), st.integers(0, 10**12),
            st.floats(0, 1e300, allow_nan=False), st.just(math.inf), st.just(math.nan),
            st.text(max_size=4))),
        st.builds(A.EName, st.sampled_from(NAMES)),
        st.builds(A.EOpName, st.sampled_from(["Ops", "UOp", "ADD", "GroupOp"])),
    )

    def extend(sub: st.SearchStrategy) -> st.SearchStrategy:
        items = st.lists(sub, max_size=3).map(tuple)
        kwargs = st.lists(st.tuples(st.sampled_from(NAMES), sub), max_size=2, unique_by=lambda
                          kv: kv[0]).map(tuple)
        comp = st.builds(A.EComp, st.sampled_from(["gen", "list"]), sub,
                         st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map(tuple),
                         sub, st.lists(sub, max_size=2).map(tuple))
        index = st.one_of(sub, st.builds(A.ESlice, st.none() | sub, st.none() | sub,
                                         st.none() | sub),
                          st.builds(A.ETuple, st.lists(sub, min_size=1, max_size=2).map(tuple)))
        return st.one_of(
            st.builds(A.EAttr, sub, st.sampled_from(ATTRS)),
            st.builds(A.EIndex, sub, index),
            st.builds(A.ECall, sub, items, kwargs),
            st.builds(A.EBinOp, st.sampled_from(["+", "-", "*", "/", "//", "%"]), sub, sub),
            st.builds(A.EUnary, st.sampled_from(["-", "not"]), sub),
            st.builds(A.ECompare, sub, st.lists(st.sampled_from(
                ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"]),
                min_size=1, max_size=2).map(tuple), st.just(None)).map(
                lambda c: replace(c, rights=tuple(c.left for _ in c.ops))),
            st.builds(A.EBool, st.sampled_from(["and", "or"]),
                      st.lists(sub, min_size=2, max_size=3).map(tuple)),
            st.builds(A.EIf, sub, sub, sub),
            st.builds(A.ETuple, items),
            st.builds(A.EList, items),
            comp,
        )

    return st.recursive(leaves, extend, max_leaves=8)


def _patterns(exprs: st.SearchStrategy) -> st.SearchStrategy:
    dtypes = st.sampled_from(DTYPES).map(_dt)
    consts = st.builds(A.PConst, st.one_of(
        st.booleans(), st.integers(-10**6, 10**6), st.floats(-1e9, 1e9, allow_nan=False),
        st.sampled_from([math.inf, -math.inf, math.nan])), dtypes)
    leaves = st.one_of(st.builds(A.PVar, st.sampled_from(NAMES[:4]) | st.none(), dtypes),
                       consts)
    ops = st.lists(st.sampled_from(OPS), min_size=1, max_size=3).map(
        lambda ns: tuple(A.OpRef(n) for n in ns))

    def node(sub: st.SearchStrategy) -> st.SearchStrategy:
        srcs = st.none() | st.lists(sub, max_size=3).map(tuple)
        raw = st.builds(A.PNode, ops, srcs, st.booleans(), st.booleans(), st.none() | exprs,
                        st.none() | exprs, dtypes)

        def fix(p: A.PNode) -> A.PNode:
            if p.srcs is None:  # bare or `OP(..., arg=...)`: never commutative/ellipsis
                return replace(p, commutative=False, ellipsis=False)
            if p.srcs == () and p.ellipsis and not p.commutative:
                return replace(p, srcs=None, ellipsis=False)  # `OP(...)` is `OP`
            return p

        return raw.map(fix)

    def extend(sub: st.SearchStrategy) -> st.SearchStrategy:
        nodes = node(sub)
        prefix_ok = nodes | consts | st.builds(A.PVar, st.none(), dtypes)
        return st.one_of(
            nodes,
            st.builds(A.PBind, st.sampled_from(NAMES[:4]), prefix_ok, st.just(False)),
            st.builds(A.PBind, st.sampled_from(NAMES[:4]), sub, st.just(True)),
        )

    return st.recursive(leaves, extend, max_leaves=6)


def _files() -> st.SearchStrategy:
    exprs = _exprs()
    rhs = exprs | st.builds(A.EDefer)
    rules = st.builds(A.Rule, st.sampled_from(["r1", "add_zero", "x"]), _patterns(exprs),
                      st.none() | exprs, rhs, st.booleans())
    blocks = st.builds(A.RuleBlock, st.lists(rules, max_size=3).map(tuple))
    terms = st.lists(blocks | st.builds(A.SetRef, st.sampled_from(["base", "sym"])),
                     min_size=1, max_size=3).map(tuple)
    sets = st.builds(A.RuleSet, st.sampled_from(["s", "pm_mops"]), terms)
    uses = st.builds(A.Use, st.sampled_from([".helpers", "math", "a.B.c"]),
                     st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(tuple))
    imports = st.builds(A.Import, st.sampled_from(["other.rules", "../x/y.rules"]),
                        st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map(tuple))
    return st.builds(A.RulesFile, st.just("h.rules"), st.lists(uses, max_size=2).map(tuple),
                     st.lists(imports, max_size=2).map(tuple),
                     st.lists(sets, max_size=3).map(tuple))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_files())
def test_printed_random_asts_parse_back(f: A.RulesFile) -> None:
    text = print_file(f)
    assert _normal(parse(text, "h.rules")) == _normal(f), text
