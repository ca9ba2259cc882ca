"""Turn the match IR of a rules file into the text of one Python matcher module.

In: a `CheckedFile` and its rule sets. Out: the module's source text, deterministic (same input,
same bytes; no timestamps, no absolute paths).

All decisions are made here, in Python; `templates/matcher.py.j2` only prints the `ModuleModel`.

- A rule set `a + {...} + b` is emitted as its parts: each `{...}` block of this file once
  (a *part*: per root op one function, plus one shared function for rules whose root is any of
  many ops), and each named set by reference (a set of this file by its variable, a set of
  another package rules file imported from that file's generated module). The set is the
  composition of its parts (`runtime.matcher.compose`), first match wins.
- Per op, the function follows the decision tree: nested `if`s, sources loaded as plain
  locals, sibling tests of mutually exclusive ops as one `if/elif` switch, each rule's guard and
  right-hand side inlined at its leaf (or called as a small function when it has many leaves).
- One copy of the code: a firing returns `(node, RuleInfo)`, so traces name the rule, and
  statistics (`RULEGRAD_MATCH_STATS=1`) are counted in the same code behind one test of a
  module global, which is None when they are off.
- No text from a path or a rule reaches the module unescaped: strings are Python literals
  (`repr`) and comments are `_comment`-ed (one line, printable characters only).
"""

from __future__ import annotations

import hashlib
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import jinja2

from rulegrad.dsl.ast import (
    CheckedFile,
    CheckedPipeline,
    Context,
    Def,
    EBool,
    ECall,
    EDefer,
    EError,
    EIf,
    ELit,
    EName,
    EOpName,
    Expr,
    Helper,
    Rule,
    RuleBlock,
    RulesFile,
    names_in,
)
from rulegrad.dsl.names import BUILTINS, GLOBALS, MODULE_NAMES, OP_NAMES
from rulegrad.runtime.dtype import DType
from rulegrad.runtime.matcher import COUNT_MARK
from rulegrad.runtime.ops import ARITY, GroupOp, Ops
from rulegrad.runtime.uop import const_value

from .contexts import UNSET_LINE, context_source, def_source
from .match_ir import (
    ROUNDED_FLOATS,
    ArgTest,
    Branch,
    Call,
    ConstTest,
    CountTest,
    DTypeTest,
    Leaf,
    MatchIR,
    Node,
    OpTest,
    OpTree,
    SameTest,
    Screen,
    Split,
    TagTest,
    Test,
    leaf_tests,
    lower,
    paths_of,
    screen,
)
from .match_ir import Path as IRPath
from .paths import display_path, helper_source, in_package, sha256_file
from .pyexpr import Scope, bounds_reads, bounds_text, py_literal, pyexpr

TEMPLATE_DIR = Path(__file__).parent / "templates"
# a rule whose code would appear at more leaves than this becomes a function called from them
INLINE_LEAVES = 4
# a switch over this many ops or more first tests membership of all of them at once
SWITCH_SET = 4
_RESERVED = re.compile(r"^[no](\d+(_\d+)*)?$")


def _comment(text: str) -> str:
    """Text safe inside a `#` comment: one line, printable characters only (a rules file or
    path may hold anything, including line breaks)."""
    flat = " ".join(text.split())
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in flat)


@dataclass
class FuncModel:
    name: str
    params: str
    lines: list[str]  # the body, indented relative to the def
    screen: list[str] = field(default_factory=list)  # its quick rejection (`screen_lines`)
    # an op function's body without its final `return None`, written again for a place where
    # some tests are known true (a later part's function, after its screen); None: the lines
    body: Callable[[frozenset[Test]], list[str]] | None = None


@dataclass
class RuleModel:
    name: str
    path: str
    line: int
    text: str


@dataclass
class PartModel:
    """One `{...}` block of rules: its functions and its dispatch table."""

    name: str  # the set's name (for stats and traces)
    prefix: str
    rules: list[RuleModel]
    funcs: list[FuncModel]
    table: list[str]  # the dispatch dict's entries: `Ops.X: function`
    over: bool  # its functions first try the rules before it in its set (see `compose`)


@dataclass
class SetModel:
    name: str
    var: str  # the module variable holding the matcher
    attr: str | None  # module attribute for the matcher (None if the name would shadow one)
    terms: list[str]  # Python expressions of its parts, composed in order


@dataclass
class PipelineModel:
    name: str
    passes: list[str]  # Python expressions, one `_Pass(...)` per declared pass


@dataclass
class ModuleModel:
    source: str
    sha256: str
    dependencies: list[tuple[str, str]]
    imports: list[str]
    constants: list[tuple[str, str]]
    parts: list[PartModel]
    sets: list[SetModel]
    pipelines: list[PipelineModel] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)  # the declared classes' source lines

    @property
    def docstring(self) -> str:
        return (f"Matchers for the rule sets of {self.source}: "
                f"{', '.join(s.name for s in self.sets)}.")


def _path_local(p: IRPath) -> str:
    if p and p[-1] < 0:  # a variadic capture: the sources from -(p[-1] + 1) on
        return f"{_path_local(p[:-1])}.src[{-p[-1] - 1}:]"
    return "n" + "_".join(str(i) for i in p)


def _op_local(p: IRPath) -> str:
    return "o" + "_".join(str(i) for i in p)


@dataclass
class _Ctx:
    """What one module's emission has decided so far (constants, helpers)."""

    helpers: frozenset[str]
    reserved: frozenset[str]
    constants: dict[str, str] = field(default_factory=dict)  # value text -> name
    aliases: dict[str, str] = field(default_factory=dict)  # `Ops.X` / `dtypes.x` -> global

    def constant(self, stem: str, value: str) -> str:
        if value not in self.constants:
            self.constants[value] = f"_{stem}{len(self.constants)}"
        return self.constants[value]

    def op(self, o: Ops) -> str:
        """A module global holding `Ops.X`: on Python 3.11 reading an Enum member off its class
        goes through `EnumType.__getattr__` and costs several times a global's load."""
        return self.aliases.setdefault(f"Ops.{o.name}", f"_{o.name}")

    def dtype(self, dt: DType) -> str:
        """A module global holding `dtypes.x` (a class attribute: slower than a global)."""
        return self.aliases.setdefault(f"dtypes.{_dtype_attr(dt)}", f"_dt_{_dtype_attr(dt)}")


def _test_text(t: Test, cx: _Ctx) -> str:
    v = _path_local(t.path)
    if isinstance(t, OpTest):
        if len(t.ops) == 1:
            return f"{v}.op is {cx.op(t.ops[0])}"
        ops = ", ".join(f"Ops.{o.name}" for o in t.ops)
        return f"{v}.op in {cx.constant('OPS', f'frozenset({{{ops}}})')}"
    if isinstance(t, CountTest):
        return f"len({v}.src) {'==' if t.exact else '>='} {t.count}"
    if isinstance(t, DTypeTest):
        if len(t.dtypes) == 1:
            (dt,) = t.dtypes
            return f"{v}.dtype is {cx.dtype(dt)}"
        return f"{v}.dtype in {cx.constant('DT', f'DTYPE_CLASSES[{t.name!r}]')}"
    if isinstance(t, ConstTest):
        if t.is_nan:
            return f"{v}.arg != {v}.arg"
        lit = py_literal(t.value)
        rounded = literal_by_dtype(t.value)
        if not rounded:
            return f"{v}.arg == {lit}"
        table = ", ".join(f"{cx.dtype(dt)}: {py_literal(r)}" for dt, r in rounded.items())
        return f"{v}.arg == {cx.constant('LIT', '{' + table + '}')}.get({v}.dtype, {lit})"
    if isinstance(t, (ArgTest, TagTest)):
        field_ = "arg" if isinstance(t, ArgTest) else "tag"
        if isinstance(t.value, ELit) and t.value.value is None:
            return f"{v}.{field_} is None"
        return f"{v}.{field_} == {pyexpr(t.value, Scope({}, cx.helpers), 5)}"
    assert isinstance(t, SameTest)
    return f"{v} is {_path_local(t.other)}"


def literal_by_dtype(value: object) -> dict[DType, float]:
    """A float pattern literal as each float dtype that rounds it holds it (a CONST's arg is
    its dtype's value: UOp.const rounds), empty when every float dtype holds it exactly."""
    if type(value) is not float:
        return {}
    return {dt: r for dt in ROUNDED_FLOATS
            if (r := const_value(dt, value)) != value}


def _dtype_attr(dt: DType) -> str:
    # a DType's own name is always an attribute of `dtypes` (aliases resolve to it)
    return dt.name


def _used_paths(nodes: list[Node]) -> set[IRPath]:
    out: set[IRPath] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, Leaf):  # a variadic capture uses the node it is the sources of
            out.update(p[:-1] if p and p[-1] < 0 else p for _, p in node.captures)
        elif isinstance(node, Branch):
            out.update(paths_of(node.test))
            stack.extend(node.children)
        elif isinstance(node, Split):
            out.update(paths_of(node.test))
            stack.extend(node.yes + node.no)
    return out


def _rhs_kind(e: Expr | EDefer, captures: dict[str, IRPath]) -> str:
    """What the RHS evaluates to, as far as the generator can tell without running it:
    'defer'; 'src' (a capture below the root: a UOp that is not the root); 'uop' (a UOp);
    'const' (a plain literal: becomes a constant); 'any' (checked at run time)."""
    if isinstance(e, EDefer):
        return "defer"
    if isinstance(e, EError):
        return "error"
    if isinstance(e, EName) and e.name in captures:
        return "src" if captures[e.name] != () else "uop"
    if isinstance(e, ELit) and isinstance(e.value, (bool, int, float)):
        return "const"
    if isinstance(e, ECall) and isinstance(e.func, EOpName) and e.func.name in OP_NAMES:
        return "uop"  # an op constructor
    return "any"


class _PartEmitter:
    """Emits the functions of one part (a block of rules)."""

    def __init__(self, ir: MatchIR, prefix: str, cx: _Ctx, src_path: dict[str, str]):
        self.ir, self.prefix, self.cx, self.src_path = ir, prefix, cx, src_path
        # per rule, its leaves per op (a `Split` writes a leaf into both of its branches: one
        # leaf still, the same code twice under one `if`/`else`)
        leaves: dict[int, int] = {}
        for nodes in [t.nodes for t in ir.trees] + [t.nodes for t in ir.shared]:
            for node in set(_iter_leaves(nodes)):
                leaves[node.rule] = leaves.get(node.rule, 0) + 1
        self.as_function = {k for k, count in leaves.items() if count > INLINE_LEAVES}
        self.rule_funcs: list[FuncModel] = []
        self.temps = [0]
        self.rules_var = f"_{prefix}_rules"
        self.stats_var = f"_{prefix}_st"

    # -------------------------------------------------------------- names
    def local(self, capture: str) -> str:
        """The Python local holding a capture (renamed if it would shadow something)."""
        if capture in self.cx.reserved or _RESERVED.match(capture) or capture.startswith("_") \
                or keyword.iskeyword(capture):
            return f"c_{capture}"
        return capture

    def header(self, rule: Rule) -> list[str]:
        loc = f"{self.src_path.get(rule.span.path, rule.span.path)}:{rule.span.line}"
        lines = [_comment(f"# rule {rule.name} at {loc}")]
        if rule.text:
            lines.append("#   " + _comment(rule.text))
        return lines

    def scope(self, captures: dict[str, IRPath], in_place: bool = False) -> Scope:
        """`in_place`: a capture of one node is read from the local its path was loaded into
        (`n0_1`), not copied into a local of its own first (a leaf runs for every node that
        passes its structural test, and a copy per capture is two bytecodes each time)."""
        names = {c: _path_local(p) if in_place and not (p and p[-1] < 0) else self.local(c)
                 for c, p in captures.items()}
        return Scope(names, self.cx.helpers, temps=self.temps,
                     op=self.cx.op, nodes=frozenset(c for c, p in captures.items()
                                                    if not (p and p[-1] < 0)))

    def fired(self, k: int) -> str:
        return f"{self.rules_var}[{k}]"

    def count(self, k: int) -> str:
        # statistics in the same code, commented out: no work per attempt while they are off
        # (a test of a global per attempt was 2% of the matcher's time); switching them on puts
        # the same code with these lines in force in place of the functions' (runtime/matcher.py
        # `count_attempts`), where it tests the block's global, None until counted
        return f"{COUNT_MARK}if {self.stats_var}: {self.stats_var}.attempts[{k}] += 1"

    # -------------------------------------------------------------- rule bodies
    def result_lines(self, rule: Rule, captures: dict[str, IRPath], k: int) -> list[str]:
        """Guard + RHS of one rule at a leaf, captures already in their locals."""
        kind = _rhs_kind(rule.rhs, captures)
        sc = self.scope(captures, in_place=True)
        # the guard's steps: the lets its next terms name, then an `if` on those terms
        heads: list[list[str]] = []
        reads, _ = bounds_reads((rule.guard, rule.rhs, rule.lets), sc.nodes)
        for start, stop, conds in rule.guard_steps():
            lets = self.let_lines(rule, sc, start, stop)  # (puts their names in scope)
            heads += self.test_heads(conds, sc, reads, lets)
        out = self.let_lines(rule, sc, rule.guard_lets, len(rule.lets))
        if kind in ("defer", "error"):
            out += [self.raise_line(rule.rhs, sc)]
        else:
            assert not isinstance(rule.rhs, EDefer)
            value = self.value_text(rule.rhs, kind, sc, captures)
            if kind == "src":
                out += [f"return {value}, {self.fired(k)}"]
            elif kind == "any" and not isinstance(rule.rhs, EIf):
                # a helper's UOp or None is used as it is, without a call of as_uop (which
                # makes any other value a constant like n): divmod_fold's and cmp_bounds's
                # results are read for most IDIV, MOD and comparison nodes of index math
                out += [f"_r = {pyexpr(rule.rhs, sc)}", "if _r is not None:",
                        "    if _r.__class__ is not UOp: _r = _as_uop(n, _r)",
                        f"    if _r is not n: return _r, {self.fired(k)}"]
            else:
                check = "_r is not n" if kind in ("uop", "const") else \
                    "_r is not None and _r is not n"
                out += [f"_r = {value}", f"if {check}: return _r, {self.fired(k)}"]
        for head in reversed(heads):  # innermost last: each step nests the next
            out = head[:-1] + [head[-1]] + ["    " + line for line in out]
        return out

    def test_heads(self, conds: tuple[Expr, ...], sc: Scope, reads: dict[str, int],
                   lines: list[str]) -> list[list[str]]:
        """The `if`s of a guard step's terms, each after the lines it needs: a node whose
        vmin/vmax the rule reads more than once has its bounds read into a local just before
        the first term that reads them whenever it runs (one derivation or cached read, not
        one per mention; no earlier, so a term before it that fails still spares it)."""
        heads: list[list[str]] = []
        group: list[Expr] = []
        for term in conds:
            _, sure = bounds_reads(term, sc.nodes)
            new = sorted(c for c in sure if reads.get(c, 0) > 1 and c not in sc.bounds)
            if new and group:
                heads.append(lines + [f"if {pyexpr(_conj(tuple(group)), sc, 1)}:"])
                group, lines = [], []
            for c in new:
                local = sc.bounds[c] = f"_b_{sc.captures[c]}"
                lines = lines + [f"{local} = {bounds_text(sc.captures[c])[1:-1]}"]
            group.append(term)
        heads.append(lines + [f"if {pyexpr(_conj(tuple(group)), sc, 1)}:"])
        return heads

    def let_lines(self, rule: Rule, sc: Scope, start: int, stop: int) -> list[str]:
        """`where a = E, ...` from start to stop: one assignment each, in order; later ones, the
        RHS (and the guard, for those before `rule.guard_lets`) see them."""
        out = []
        for name, e in rule.lets[start:stop]:
            value = pyexpr(e, sc)
            sc.captures[name] = self.local(name)
            sc.nodes = sc.nodes - {name}  # a let's value may be anything
            sc.bounds.pop(name, None)
            out.append(f"{sc.captures[name]} = {value}")
        return out

    def raise_line(self, rhs: Expr | EDefer | EError, sc: Scope) -> str:
        if isinstance(rhs, EError):  # `error MESSAGE`: the graph is malformed here
            return f"raise RuntimeError({pyexpr(rhs.message, sc)})"
        return "raise RewriteNotReady"

    def value_text(self, rhs: Expr, kind: str, sc: Scope, captures: dict[str, IRPath]) -> str:
        if kind == "const":
            return f"n.const_like({pyexpr(rhs, sc)})"
        if kind in ("src", "uop"):
            return pyexpr(rhs, sc)
        if isinstance(rhs, EIf):  # decide per branch, so literal branches need no check
            then = self.value_text(rhs.then, _rhs_kind(rhs.then, captures), sc, captures)
            orelse = self.value_text(rhs.orelse, _rhs_kind(rhs.orelse, captures), sc, captures)
            return f"{_paren_if(then)} if {pyexpr(rhs.cond, sc, 1)} else {orelse}"
        return f"_as_uop(n, {pyexpr(rhs, sc)})"

    def rule_function(self, k: int, rule: Rule, captures: dict[str, IRPath]) -> str:
        """A rule with many leaves: its guard and RHS as `_prefix_rK(n, ctx, captures...)`."""
        name = f"_{self.prefix}_r{k}"
        if any(f.name == name for f in self.rule_funcs):
            return name
        sc = self.scope(captures)
        kind = _rhs_kind(rule.rhs, captures)
        lines = self.header(rule)
        for start, stop, conds in rule.guard_steps():
            lines += self.let_lines(rule, sc, start, stop)  # (puts their names in scope)
            lines.append(f"if not ({pyexpr(_conj(conds), sc)}): return None")
        lines += self.let_lines(rule, sc, rule.guard_lets, len(rule.lets))
        if kind in ("defer", "error"):
            lines.append(self.raise_line(rule.rhs, sc))
        else:
            assert not isinstance(rule.rhs, EDefer)
            kind = "uop" if kind == "src" else kind
            lines.append(f"return {self.value_text(rule.rhs, kind, sc, captures)}")
        params = ", ".join(["n", "ctx"] + [self.local(c) for c in sorted(captures)])
        self.rule_funcs.append(FuncModel(name, params, lines))
        return name

    def leaf_lines(self, leaf: Leaf) -> list[str]:
        k = leaf.rule
        rule = self.ir.rules[k]
        captures = dict(leaf.captures)
        lines = self.header(rule) + [self.count(k)]
        if k in self.as_function:
            fn = self.rule_function(k, rule, captures)
            args = ", ".join(["n", "ctx"] + [_path_local(captures[c]) for c in sorted(captures)])
            return lines + [f"_r = {fn}({args})",
                            f"if _r is not None and _r is not n: return _r, {self.fired(k)}"]
        # the captures stay in the locals of their paths (`scope(in_place=True)`); a variadic
        # capture, a slice of a node's sources, gets a local of its own
        here = sorted(c for c, p in captures.items() if not (p and p[-1] < 0))
        if here:
            lines.append(_comment("# " + ", ".join(f"{c} = {_path_local(captures[c])}"
                                                   for c in here)))
        for c in sorted(captures):
            if c not in here:
                lines.append(f"{self.local(c)} = {_path_local(captures[c])}")
        return lines + self.result_lines(rule, captures, k)

    # -------------------------------------------------------------- the tree
    def nodes_lines(self, nodes: list[Node], loaded: frozenset[IRPath],
                    known: frozenset[Test] = frozenset()) -> list[str]:
        """The code of a tree. `known`: tests true wherever this code runs (an enclosing `if`'s,
        or the screen's when it names one op of one source), which are not tested again."""
        lines: list[str] = []
        i = 0
        while i < len(nodes):
            node = nodes[i]
            if isinstance(node, Leaf):
                lines += self.leaf_lines(node)
                i += 1
                continue
            if isinstance(node, Call):
                lines += [f"_h = {self.shared_name(node.shared)}(n, ctx)",
                          "if _h is not None: return _h"]
                i += 1
                continue
            if isinstance(node, Split):
                lines += self.split_lines(node, loaded, known)
                i += 1
                continue
            j = i + 1  # siblings that test disjoint ops of one node: one if/elif switch
            while j < len(nodes) and _switches_with(nodes[i:j], nodes[j]):
                j += 1
            if j - i == 1:
                lines += self.branch_lines(node, loaded, "if", known=known)
            else:
                lines += self.switch_lines(nodes[i:j], loaded, known)
            i = j
        return lines

    def split_lines(self, node: Split, loaded: frozenset[IRPath],
                    known: frozenset[Test]) -> list[str]:
        if node.test in known:  # the `no` side cannot run
            return self.nodes_lines(node.yes, loaded, known)
        yes = self.nodes_lines(node.yes, loaded, known | {node.test}) or ["pass"]
        lines = [f"if {_test_text(node.test, self.cx)}:"] + ["    " + line for line in yes]
        no = self.nodes_lines(node.no, loaded, known)
        if no:
            lines += ["else:"] + ["    " + line for line in no]
        return lines

    def switch_lines(self, arms: list[Node], loaded: frozenset[IRPath],
                     known: frozenset[Test] = frozenset()) -> list[str]:
        first = arms[0]
        assert isinstance(first, Branch) and isinstance(first.test, OpTest)
        path = first.test.path
        op = _op_local(path)
        lines = [f"{op} = {_path_local(path)}.op"]
        body: list[str] = []
        for k, arm in enumerate(arms):
            assert isinstance(arm, Branch)
            body += self.branch_lines(arm, loaded, "if" if k == 0 else "elif", op, known)
        if len(arms) >= SWITCH_SET:  # most nodes are none of them: one set test rejects them
            every = sorted({o for arm in arms for o in arm.test.ops}, key=lambda o: o.value)
            names = ", ".join(f"Ops.{o.name}" for o in every)
            lines.append(f"if {op} in {self.cx.constant('OPS', f'frozenset({{{names}}})')}:")
            return lines + ["    " + line for line in body]
        return lines + body

    def branch_lines(self, node: Branch, loaded: frozenset[IRPath], kw: str,
                     op_local: str | None = None,
                     known: frozenset[Test] = frozenset()) -> list[str]:
        # fold a chain of single-child branches into one `if a and b and c:`
        tests = [node.test]
        while not isinstance(tests[-1], CountTest) and len(node.children) == 1 and \
                isinstance(node.children[0], Branch):
            node = node.children[0]
            tests.append(node.test)
        body: list[str] = []
        inner = loaded
        last = tests[-1]
        if isinstance(last, CountTest):
            wanted = sorted({p[:len(last.path) + 1] for p in _used_paths(node.children)
                             if len(p) > len(last.path) and p[:len(last.path)] == last.path})
            wanted = [p for p in wanted if p not in inner]
            parent = _path_local(last.path)
            if last.exact and len(wanted) == last.count and last.count > 1:
                # every source is used: unpack them at once (one attribute load)
                body.append(f"{', '.join(_path_local(p) for p in wanted)} = {parent}.src")
            else:
                body += [f"{_path_local(p)} = {parent}.src[{p[-1]}]" for p in wanted]
            inner = inner | frozenset(wanted)
        body += self.nodes_lines(node.children, inner, known | set(tests))
        # a test known true is not written again (a switch's op test stays: it is the switch)
        tests = [t for k, t in enumerate(tests) if t not in known or isinstance(t, CountTest)
                 or (k == 0 and op_local is not None)]
        if isinstance(last, CountTest) and _alu_arity(last, known.union(tests)):
            tests.remove(last)
        if not tests:  # (never in a switch: its first test stays)
            return body
        tests = _cheap_first(tests, keep_first=op_local is not None, known=known)
        texts = [_test_text(t, self.cx) for t in tests]
        if op_local is not None:  # the switch loaded the op once
            texts[0] = texts[0].replace(f"{_path_local(tests[0].path)}.op ", f"{op_local} ", 1)
        return [f"{kw} {' and '.join(texts)}:"] + ["    " + line for line in body]

    def screen_lines(self, found: Screen) -> list[str]:
        """`if <no source at the screen's paths has one of its ops>: return None`."""
        texts = []
        for path, ops in found:
            v = _path_local(path)
            if len(ops) == 1:
                texts.append(f"{v}.op is not {self.cx.op(ops[0])}")
            else:
                names = ", ".join(f"Ops.{o.name}" for o in ops)
                texts.append(f"{v}.op not in {self.cx.constant('OPS', f'frozenset({{{names}}})')}")
        return ["# no rule here matches unless a source has one of these ops (a quick rejection)",
                f"if {' and '.join(texts)}: return None"]

    def shared_name(self, i: int) -> str:
        return f"_{self.prefix}_any{i}"

    def op_body(self, tree: OpTree, before: list[str], bodies: dict[str, Body],
                known: frozenset[Test]) -> list[str]:
        """One op's function body without its final `return None`: the earlier parts' code
        (`before`, written in place when in `bodies`, else called), then this part's tree."""
        body: list[str] = []
        for fn in before:
            if fn in bodies:
                body = _merge_bodies(body, bodies[fn](known))
            else:
                body += [f"_h = {fn}(n, ctx)", "if _h is not None: return _h"]
        return _merge_bodies(body, self.nodes_lines(tree.nodes, frozenset({()}), known))

    def functions(self, prelude: dict[str, list[str]], bodies: dict[str, Body],
                  leaves_of: dict[str, list[tuple[Test, ...]]]
                  ) -> tuple[list[FuncModel], list[tuple[str | None, str]]]:
        """The part's functions, and its dispatch table: (op name, function), op None for
        every op. `prelude`: per op, the functions of the rules before this part in its set,
        tried first (so the set needs no chain of calls at run time for these ops); those of
        this module (`bodies`: their code) are written in place, not called. `leaves_of`: per
        function of this module, the structural tests of each of its leaves (for the screens;
        this part's functions are added)."""
        funcs: list[FuncModel] = []
        table: list[tuple[str | None, str]] = []
        for i, shared in enumerate(self.ir.shared):
            body = self.nodes_lines(shared.nodes, frozenset({()})) + ["return None"]
            funcs.append(FuncModel(self.shared_name(i), "n, ctx", body))
        direct = {t.direct for t in self.ir.trees if t.direct is not None}
        wildcard = not prelude and len(self.ir.trees) == len(Ops) and len(direct) == 1 and \
            all(t.direct is not None for t in self.ir.trees)
        if wildcard:  # a root that is any op: one entry, not 73
            table.append((None, self.shared_name(direct.pop())))
        for tree in [] if wildcard else self.ir.trees:
            op = tree.op.name
            before = prelude.get(op, [])
            if tree.direct is not None and not before:
                table.append((op, self.shared_name(tree.direct)))
                continue
            name = f"_{self.prefix}_{op}"
            plain = self.op_body(tree, before, bodies, frozenset())
            body = plain + ["return None"]
            known = all(fn in leaves_of for fn in before)
            leaves = [t for fn in before for t in leaves_of.get(fn, [])] + \
                leaf_tests(tree.nodes, self.ir.shared)
            if known:
                leaves_of[name] = leaves
            # (a function of one leaf is one `if` already: a screen would only repeat it; a
            # screen reads the sources that the unpack at the top of the function loads)
            found = screen(leaves) if known and len(leaves) > 1 and \
                _unpack_first(body)[0] == "try:" else None
            if found is not None and len(found) == 1 and len(found[0][1]) == 1:
                # one op of one source passes the screen: the tree need not test it again
                sure = frozenset({OpTest(*found[0])})
                lean = self.op_body(tree, before, bodies, sure) + ["return None"]
                if _unpack_first(lean)[0] == "try:":  # (so the screen is written above it)
                    body = lean
            funcs.append(FuncModel(name, "n, ctx", body,
                                   self.screen_lines(found) if found else [],
                                   partial(_or_plain, plain,
                                           partial(self.op_body, tree, before, bodies))))
            table.append((op, name))
        return self.rule_funcs + funcs, table


# an earlier part's function of at most this many lines is written into a later part's
# function of the same op instead of being called (a call per node costs more than its tests)
INLINE_PRELUDE = 80
# a function's body (without its final `return None`) given the tests known true where it goes
Body = Callable[[frozenset[Test]], list[str]]


def _same(lines: list[str], known: frozenset[Test]) -> list[str]:
    """A body written once, whatever is known (a shared tree's function)."""
    return lines


def _or_plain(plain: list[str], write: Body, known: frozenset[Test]) -> list[str]:
    """`plain` (the body as first written) when nothing is known, else the body written again
    for what is known (so a body is not written twice for nothing: the same text each time)."""
    return plain if not known else write(known)


def _merge_bodies(first: list[str], then: list[str]) -> list[str]:
    """The code of `first`, then that of `then` (two function bodies without their final
    `return None`; the first falls through when no rule of it fires). When both are one `if`
    with the same test and the same first line (`if len(n.src) == 2:` / `n0, n1 = n.src`), the
    test and the loads are written once: the test is pure, and no rule's code assigns the
    locals of a node's sources (captures get names of their own), so `then` finds them as it
    would have loaded them."""
    def one_if(body: list[str]) -> bool:
        return len(body) > 2 and body[0].startswith("if ") and \
            all(line.startswith("    ") for line in body[1:])

    if one_if(first) and one_if(then) and first[:2] == then[:2] and \
            not then[1].startswith("    if ") and " = " in then[1]:
        return first + then[2:]
    return first + then


def _alu_arity(count: CountTest, tests: frozenset[Test]) -> bool:
    """The source count is the arity of every op that `tests` allow the (inner) node: ALU ops
    only, whose operands the IR spec fixes (`ARITY`; nothing computes an ALU node of other
    count), so the test would be true of every node it meets: its sources are unpacked without
    a call of `len` per node. (Not the root: its unpack is guarded by a try that costs nothing,
    and not the other ops, which a stage may build with sources of its own.)"""
    if not count.exact or not count.path:
        return False
    allowed: set[Ops] | None = None
    for t in tests:
        if isinstance(t, OpTest) and t.path == count.path:
            allowed = set(t.ops) if allowed is None else allowed & set(t.ops)
    return bool(allowed) and all(op in GroupOp.ALU and ARITY.get(op) == count.count
                                 for op in allowed)  # type: ignore[union-attr]


def _cheap_first(tests: list[Test], keep_first: bool,
                 known: frozenset[Test] = frozenset()) -> list[Test]:
    """The tests of one `if ... and ...`, cheapest and most rejecting first: a repeated
    capture (`n1_0 is n0_0`, two locals and no attribute; two nodes are rarely one), then the
    op tests, whatever node they test (most nodes are of another op; most have the dtype, as
    in `n.dtype is _dt_index and n0.op is _MUL`), then the rest, a dtype class test
    (`n0.dtype in _DT0`, a set lookup) last (a constant is one `==`, and usually decides).
    A test of a node that the `if` also makes of a node that it tests to be the same
    (`a is b and a.op is _CONST and b.op is _CONST`) is written once, where the first of them
    stood: after the `is` tests it says the same (so a constant test still follows an op test
    of the same node); not at all when it is `known` true of one of them (an enclosing `if`
    tested it). The tests are pure, and every node they read is loaded before the `if`. A
    switch's op test stays first, and a last source-count test stays last (the loads after it
    need it)."""
    head = tests[:1] if keep_first else []
    tail = tests[-1:] if isinstance(tests[-1], CountTest) else []
    mid = tests[len(head):len(tests) - len(tail)]
    same = [t for t in mid if isinstance(t, SameTest)]
    alias: dict[IRPath, IRPath] = {}

    def root(p: IRPath) -> IRPath:
        while p in alias:
            p = alias[p]
        return p
    for t in same:
        a, b = root(t.path), root(t.other)
        if a != b:
            alias[a] = b
    seen = {replace(t, path=root(t.path)) for t in (*head, *known)}
    rest: list[Test] = []
    for t in mid:
        if isinstance(t, SameTest):
            continue
        key = replace(t, path=root(t.path))
        if key not in seen:
            seen.add(key)
            rest.append(t)
    ops = [t for t in rest if isinstance(t, OpTest)]
    slow = [t for t in rest if isinstance(t, DTypeTest) and len(t.dtypes) > 1]
    return head + same + ops + [t for t in rest if t not in ops and t not in slow] + slow + tail


def _unpack_first(body: list[str]) -> list[str]:
    """A body that is one `if len(n.src) == K:` whose first line unpacks the K sources, then
    `return None`, as the unpack alone: `n0, n1 = n.src` raises ValueError on any other count,
    and the function returns None then as the test did (one attribute load and no call of len
    per node; a try costs nothing on Python 3.11 until it catches)."""
    if len(body) < 3 or body[-1] != "return None" or not body[0].startswith("if len(n.src) == "):
        return body
    inner = body[1:-1]
    if not all(line.startswith("    ") for line in inner) or \
            not re.fullmatch(r"    n0(, n\d+)+ = n\.src", inner[0]):
        return body
    return ["try:", inner[0], "except ValueError:", "    return None"] + \
        [line[4:] for line in inner[1:]] + ["return None"]


def _with_screen(body: list[str], screen: list[str]) -> list[str]:
    """The screen after the unpack of the sources that `_unpack_first` made (it reads them);
    a body without that unpack is left without a screen."""
    if not screen or len(body) < 4 or body[0] != "try:" or body[2] != "except ValueError:":
        return body
    return body[:4] + screen + body[4:]


def _switches_with(arms: list[Node], node: Node) -> bool:
    """`node` can join the if/elif switch `arms`: it tests the op of the same node, and no op
    twice (the trie put them side by side only because they are mutually exclusive)."""
    first = arms[0]
    if not (isinstance(first, Branch) and isinstance(first.test, OpTest)):
        return False
    if not (isinstance(node, Branch) and isinstance(node.test, OpTest)) or \
            node.test.path != first.test.path:
        return False
    seen = {o for arm in arms for o in arm.test.ops}  # type: ignore[union-attr]
    return not seen & set(node.test.ops)


def _paren_if(text: str) -> str:
    return f"({text})" if " if " in text else text


def _iter_leaves(nodes: list[Node]) -> list[Leaf]:
    out: list[Leaf] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if isinstance(node, Leaf):
            out.append(node)
        elif isinstance(node, Branch):
            stack.extend(reversed(node.children))
        elif isinstance(node, Split):
            stack.extend(reversed(node.yes + node.no))
    return out


def _all_files(cf: CheckedFile) -> list[CheckedFile]:
    """The file and every file it imports, each once, in a stable order."""
    out: list[CheckedFile] = []
    stack = [cf]
    seen: set[str] = set()
    while stack:
        f = stack.pop(0)
        key = str(Path(f.file.path).resolve())
        if key not in seen:
            seen.add(key)
            out.append(f)
            stack.extend(f.imported)
    return out


def _conj(conds: tuple[Expr, ...]) -> Expr:
    """The `and` of a guard step's terms."""
    return conds[0] if len(conds) == 1 else EBool("and", conds)


def _helpers(cf: CheckedFile) -> list[Helper]:
    """The helpers this module's code calls: its own file's, and those of imported files whose
    rules it copies (a package file's sets are imported from its own module instead)."""
    found: dict[str, Helper] = {}
    for f in _all_files(cf):
        if f is not cf and in_package(f.file.path):
            continue
        for h in f.helpers:
            prev = found.get(h.name)
            if prev is not None and (prev.module, prev.file) != (h.module, h.file):
                raise ValueError(f"helper {h.name!r} comes from two modules: "
                                 f"{prev.module} and {h.module}")
            found[h.name] = h
    return [found[k] for k in sorted(found)]


def _import_of(cf: CheckedFile, name: str) -> CheckedFile | None:
    """The imported file that set `name` comes from (None for a set of this file)."""
    for imp in cf.file.imports:
        if name in imp.names:
            want = (Path(cf.file.path).parent / imp.path).resolve()
            for f in cf.imported:
                if Path(f.file.path).resolve() == want:
                    return f
    return None


def module_model(cf: CheckedFile, out_dir: str | Path | None) -> ModuleModel:
    """Decide everything the template prints."""
    files = _all_files(cf)
    src_path = {f.file.path: display_path(f.file.path, out_dir) for f in files}
    helpers = _helpers(cf)
    # pipelines are called by name from rules, like helpers (`kernel(SINK(st))`)
    contexts, defs = _contexts_of(cf), _defs_of(cf)
    helper_names = frozenset(h.name for h in helpers) | {p.name for p in cf.file.pipelines} \
        | {c.name for c in contexts} | {d.name for d in defs}
    reserved = frozenset(BUILTINS) | helper_names | frozenset(GLOBALS) | {"ctx"}
    cx = _Ctx(helper_names, reserved)
    imports: list[str] = []
    for h in helpers:
        hs = helper_source(h, out_dir)
        if hs.module is not None:
            imports.append(f"from {hs.module} import {hs.name}")
        else:
            imports.append(f"{hs.name} = helper_from(__file__, {hs.relpath!r}, {hs.name!r})")
    if any("fold" in names_in((r.guard, r.rhs, r.lets)) for rs in cf.rulesets for r in rs.rules) \
            or any("fold" in names_in((d.body, d.lets)) for d in defs):
        imports.append("from rulegrad.dsl.names import fold")  # the DSL's own builtin
    checked = {rs.name: rs for rs in cf.rulesets}
    var_of = {rs.name: f"_S_{rs.name}" for rs in cf.rulesets}
    parts: list[PartModel] = []
    sets: list[SetModel] = []

    bodies: dict[str, Body] = {}  # a part's function -> its code, to write in place
    leaves_of: dict[str, list] = {}  # a part's function -> its leaves' tests (for screens)

    def add_part(set_name: str, rules: tuple[Rule, ...], prelude: dict[str, list[str]]
                 ) -> tuple[str, list[tuple[str | None, str]]]:
        stem = set_name if set_name.isidentifier() else "s"
        prefix = stem if not any(p.prefix == stem for p in parts) else f"{stem}_{len(parts)}"
        ir = lower(rules, set_name)
        funcs, table = _PartEmitter(ir, prefix, cx, src_path).functions(prelude, bodies,
                                                                         leaves_of)
        for f in funcs:
            if f.params == "n, ctx" and len(f.lines) <= INLINE_PRELUDE:
                assert f.lines[-1] == "return None"
                bodies[f.name] = f.body or partial(_same, f.lines[:-1])
            # (after `bodies` took the form that merges: a screen is for its own function only)
            f.lines = _with_screen(_unpack_first(f.lines), f.screen)
        infos = [RuleModel(r.name, src_path.get(r.span.path, r.span.path), r.span.line,
                           " ".join(r.text.split())) for r in rules]
        entries = [f"**dict.fromkeys(Ops, {fn})" if op is None else f"Ops.{op}: {fn}"
                   for op, fn in table]
        parts.append(PartModel(set_name, prefix, infos, funcs, entries, bool(prelude)))
        return f"_{prefix}_part", table

    # per set of this file, op -> the functions that try its rules in order (None when the set
    # holds an imported set: those are only known at run time)
    funcs_of: dict[str, dict[str, list[str]] | None] = {}
    imported_modules: dict[str, str] = {}
    for rs in _dependency_order([r for r in cf.file.rulesets if r.name in checked]):
        terms: list[str] = []
        acc: dict[str, list[str]] | None = {}
        for term in rs.terms:
            if isinstance(term, RuleBlock):
                var, table = add_part(rs.name, term.rules, acc or {})
                terms.append(var)
                if acc is not None:  # the part's function of an op already calls the earlier
                    for op, fn in table:
                        for o in [x.name for x in Ops] if op is None else [op]:
                            acc[o] = [fn]
                continue
            source = _import_of(cf, term.name)
            if source is None:  # a set of this file, defined before or after
                terms.append(var_of[term.name])
                sub_funcs = funcs_of.get(term.name)
                if acc is not None and sub_funcs is not None:
                    for o, fns in sub_funcs.items():
                        acc[o] = acc.get(o, []) + fns
                else:
                    acc = None
                continue
            acc = None
            if in_package(source.file.path):  # emitted once, in its own module
                stem = Path(source.file.path).stem
                alias = imported_modules.setdefault(stem, f"_generated_{stem}")
                terms.append(f"{alias}.MATCHERS[{term.name!r}]")
            else:  # a user's file: its module may live anywhere, so its rules are copied
                sub = next(s for s in source.rulesets if s.name == term.name)
                terms.append(add_part(term.name, sub.rules, {})[0])
        funcs_of[rs.name] = acc
        attr = rs.name if rs.name.isidentifier() and rs.name not in reserved and \
            not keyword.iskeyword(rs.name) and rs.name not in _MODULE_NAMES else None
        sets.append(SetModel(rs.name, var_of[rs.name], attr, terms))
    pipelines = [_pipeline_model(cp, var_of, imported_modules, src_path)
                 for cp in cf.pipelines]
    for stem, alias in sorted(imported_modules.items()):
        imports.append(f"from rulegrad.rules.generated import {stem} as {alias}")
    return ModuleModel(
        source=src_path[cf.file.path],
        sha256=_sha(cf.file),
        dependencies=[(src_path[f.file.path], _sha(f.file)) for f in files[1:]],
        imports=imports,
        constants=[(name, value) for value, name in sorted(cx.aliases.items())] +
                  [(name, value) for value, name in cx.constants.items()],
        parts=parts,
        sets=sets,
        pipelines=pipelines,
        contexts=_contexts(contexts, defs, helper_names, src_path),
    )


def _contexts_of(cf: CheckedFile) -> list[Context]:
    """The declared classes this module defines: its file's, and those of imported files whose
    rules it copies (as `_helpers`)."""
    found: dict[str, Context] = {}
    for f in _all_files(cf):
        if f is cf or not in_package(f.file.path):
            for c in f.file.contexts:
                if found.setdefault(c.name, c) is not c:
                    raise ValueError(f"two declared classes named {c.name!r}")
    return list(found.values())


def _defs_of(cf: CheckedFile) -> list[Def]:
    """The definitions this module defines: its file's, and those of imported files whose rules
    it copies (a package file's rules run from its own module, which defines its own)."""
    return [d for f in _all_files(cf) if f is cf or not in_package(f.file.path)
            for d in f.file.defs]


def _contexts(contexts: list[Context], defs: list[Def], names: frozenset[str],
              src_path: dict[str, str]) -> list[str]:
    """The source of the module's definitions and declared classes (generator/contexts.py)."""
    lines: list[str] = []
    for d in defs:
        lines += ["", "", *def_source(d, names, f"{src_path.get(d.span.path, d.span.path)}:"
                                             f"{d.span.line}")]
    for c in contexts:
        where = f"{src_path.get(c.span.path, c.span.path)}:{c.span.line}"
        lines += ["", "", *context_source(c, names, where)]
    return [UNSET_LINE, *lines] if lines else []


def _pipeline_model(cp: CheckedPipeline, var_of: dict[str, str], modules: dict[str, str],
                    src_path: dict[str, str]) -> PipelineModel:
    """A declared pipeline as `_Pass(...)` expressions (runtime/pipeline.py runs them)."""
    passes = []
    for ps, file in zip(cp.pipeline.passes, cp.set_files):
        if ps.ruleset in var_of:  # a set of this file (set names are unique with imports)
            matcher = var_of[ps.ruleset]
        else:  # a set of another package rules file: from its own generated module
            stem = Path(file).stem
            alias = modules.setdefault(stem, f"_generated_{stem}")
            matcher = f"{alias}.MATCHERS[{ps.ruleset!r}]"
        args = [repr(ps.name), repr(ps.ruleset), matcher]
        if ps.bottom_up:
            args.append("bottom_up=True")
        if ps.ctx is not None:
            args.append(f"ctx={ps.ctx!r}" if any(q.name == ps.ctx for q in cp.pipeline.passes)
                        else f"ctx={ps.ctx}")
        args += ["until_settled=True"] * ps.until_settled + ["collect=True"] * ps.collect
        if ps.spec is not None:
            args.append(f"spec={ps.spec!r}")
        loc = f"{src_path.get(ps.span.path, ps.span.path)}:{ps.span.line}"
        args.append(f"location={loc!r}")
        passes.append(f"_Pass({', '.join(args)})")
    return PipelineModel(cp.pipeline.name, passes)


def _dependency_order(rulesets: list) -> list:
    """The rule sets ordered so that each comes after the sets of this file it is made of."""
    by_name = {rs.name: rs for rs in rulesets}
    out: list = []
    done: set[str] = set()
    for rs in rulesets:
        stack = [(rs, False)]
        while stack:
            cur, expanded = stack.pop()
            if cur.name in done:
                continue
            if expanded:
                done.add(cur.name)
                out.append(cur)
                continue
            stack.append((cur, True))
            stack.extend((by_name[t.name], False) for t in reversed(cur.terms)
                         if not isinstance(t, RuleBlock) and t.name in by_name)
    return out


# names the module itself defines or imports; a rule set is not exported under these
_MODULE_NAMES = MODULE_NAMES  # dsl/names.py: a definition may not take one either


def _sha(f: RulesFile) -> str:
    # the file's bytes, as the loader hashes them; a tree built in memory hashes its text
    if Path(f.path).is_file():
        return sha256_file(f.path)
    return hashlib.sha256(f.source.encode()).hexdigest()


def render(model: ModuleModel) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["py"] = repr  # a Python literal of a string or number
    env.filters["comment"] = _comment
    return env.get_template("matcher.py.j2").render(m=model)


def emit_module(cf: CheckedFile, out_dir: str | Path | None = None) -> str:
    """The generated module for a checked file."""
    return render(module_model(cf, out_dir))
