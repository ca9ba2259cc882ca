"""Checker: `RulesFile` -> `CheckedFile`, or a `RulesError` listing every problem found.

In: a parsed file (and, through `loader`, the text of the rules files it imports). Out: a
`CheckedFile`: each rule set flattened in priority order (`a + b + {...}` expanded, imported sets
included), the helpers the rules may call, and the checked imported files.

What is checked (LANGUAGE.md, "Errors"); the checker collects every error, it never stops at the
first:
- op, group and dtype names resolve (with "did you mean");
- arity: a fixed-arity op given a number of sources it never has; `[...]` needs exactly 2;
- `arg=` / `tag=` constraints are constants;
- names in guards and right-hand sides: captures bound on every match path, comprehension
  variables inside their comprehension, `ctx`, helpers, builtins and globals; a called
  capitalised name must be an op (a constructor, whose arity is checked too) or `UOp`;
- kinds of values in guards, where names and right-hand sides (dsl/kinds.py): what would
  raise when the rule fires (an attribute a node does not have, a call its target never takes,
  a literal as an op's source, `x + "s"`, a node as a truth value) is an error here;
- duplicate rule names (per file), duplicate rule-set names, unknown sets in `+`, `+` cycles;
- `use`: the module must import and have every named helper; `from "f.rules" import s`: the
  file must exist, check cleanly (recursively; import cycles are reported) and define `s`;
- shadowing: a rule that an earlier, always-firing rule of the same flattened set hides.
  "Always firing" means no guard and a right-hand side that cannot decline: a capture, a literal
  other than None, a constructor, an arithmetic expression, or a method call on a capture. A
  helper call, a conditional expression, anything on `ctx`, and `defer` may decline, so such a
  rule counts as guarded (subsume.py says when one pattern covers another).

Match paths: the language has no pattern alternation (op sets and `[...]` bind the same names on
every path), so every capture of a pattern is bound on every match; the analysis is written per
path (`_bound_on_every_path`) so that alternation can be added without missing this rule.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from rulegrad.runtime.ops import Ops

from . import ast as A
from .errors import Diagnostic, RulesError
from .files import RulesFileError, read_rules_file
from .kinds import NODES, Kind, Typer, node_of, word
from .names import (
    BUILTINS,
    DTYPE_NAMES,
    GLOBALS,
    GROUP_NAMES,
    KEYWORD_NAMES,
    MODULE_NAMES,
    OP_NAMES,
    arity,
    forbidden_attr,
    refused_module,
    resolve_dtype,
    resolve_ops,
    suggest,
)
from .subsume import ShadowIndex, capture_names, shadows

Loader = Callable[[str], str]  # path -> text of a rules file; raises OSError when missing

CONSTRUCTOR_KWARGS = ("dtype", "arg", "tag")
# kinds of value a right-hand side can never be (the rewrite engine takes a node, a number, a
# bool, None or a tuple)
RHS_NOT_A_VALUE = frozenset({"str", "list", "dtype", "op", "callable", "method", "dict", "set",
                             "gen"})


read_file = read_rules_file  # the default loader: regular UTF-8 files of bounded size only


def _did_you_mean(name: str, candidates: Any) -> str:
    guess = suggest(name, frozenset(candidates))
    return f" (did you mean '{guess}'?)" if guess else ""


def _label_span(rule: A.Rule) -> A.Span:
    s = rule.span
    width = len(rule.name) if rule.named else 1
    return A.Span(s.path, s.line, s.col, s.line, s.col + width)


# ------------------------------------------------------------------------ helpers (`use`)
def helper_file(module: str, rules_path: str) -> str:
    """The `.py` file of a relative helper module (`use .m: f`), beside the rules file."""
    return os.path.join(os.path.dirname(rules_path), *module[1:].split(".")) + ".py"


def _load_helper_module(module: str, rules_path: str) -> tuple[ModuleType | None, str | None,
                                                                str | None]:
    """(module, .py file or None, error message or None) for `use MODULE`."""
    if not module.startswith("."):
        try:
            return importlib.import_module(module), None, None
        except ModuleNotFoundError as e:
            return None, None, f"helper module '{module}' not found ({e})"
        except (Exception, SystemExit) as e:  # noqa: BLE001 - any failure is the user's to see
            return None, None, f"cannot import helper module '{module}': {type(e).__name__}: {e}"
    file = helper_file(module, rules_path)
    if not os.path.isfile(file):
        return None, file, f"helper module '{module}' not found: no file {file}"
    # a unique name, in sys.modules only while the module runs (dataclasses and the like
    # look themselves up there), so checking never leaves helper modules behind
    name = f"_rulegrad_helpers_{abs(hash(os.path.abspath(file)))}"
    try:
        spec = importlib.util.spec_from_file_location(name, file)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        finally:
            sys.modules.pop(name, None)
        return mod, file, None
    except (Exception, SystemExit) as e:  # noqa: BLE001 - sys.exit() in a helper is an error
        return None, file, f"cannot import helper module '{module}': {type(e).__name__}: {e}"


def _plain_helper(obj: Any) -> bool:
    """A helper must be something to call that does not come from a refused module."""
    return callable(obj) and not isinstance(obj, ModuleType) and not refused_module(
        getattr(obj, "__module__", None))


def _constant(name: str, obj: Any) -> bool:
    """A named constant (`UNROLL_MAX`): an all-caps name of a number or a string, which a
    rule reads and never changes."""
    return name.isupper() and isinstance(obj, (bool, int, float, str))


# ------------------------------------------------------------------------ the session
@dataclass
class _Frame:
    abspath: str
    path: str
    via: A.Span | None = None  # the import of this file that leads to the next frame


@dataclass
class _Session:
    """State shared by the checks of a file and of everything it imports."""

    loader: Loader
    # False: helper modules are not imported (their code is not run): names and kinds of
    # helpers go unchecked, a relative module's file must exist (an editor on an untrusted
    # workspace)
    import_helpers: bool = True
    diags: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    done: dict[str, A.CheckedFile | None] = field(default_factory=dict)  # by absolute path
    stack: list[_Frame] = field(default_factory=list)
    reported: set[Any] = field(default_factory=set)

    def error(self, span: A.Span, message: str, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(span, message, hint))

    def check_file(self, file: A.RulesFile) -> A.CheckedFile | None:
        key = os.path.abspath(file.path)
        self.sources[file.path] = file.source
        self.stack.append(_Frame(key, file.path))
        try:
            before = len(self.diags)
            checked = _FileChecker(self, file).run()
            ok = len(self.diags) == before
        finally:
            self.stack.pop()
        self.done[key] = checked if ok else None
        return checked if ok else None

    def import_file(self, imp: A.Import, importer: str) -> A.CheckedFile | None:
        """Parse and check an imported rules file (once per session); None if it failed."""
        from .parser import parse_collect  # the parser is the earlier phase; imports need it

        path = os.path.normpath(os.path.join(os.path.dirname(importer), imp.path))
        key = os.path.abspath(path)
        on_stack = [i for i, f in enumerate(self.stack) if f.abspath == key]
        if on_stack:
            k = on_stack[0]
            cycle = [f.path for f in self.stack[k:]] + [path]
            span = self.stack[k].via if k < len(self.stack) - 1 else imp.span
            if tuple(cycle) not in self.reported:
                self.reported.add(tuple(cycle))
                self.error(span or imp.span, "import cycle: " + " -> ".join(cycle))
            return None
        if key in self.done:
            return self.done[key]
        try:
            text = self.loader(path)
        except RulesFileError as e:
            self.error(imp.span, f"cannot import '{imp.path}': {e}")
            self.done[key] = None
            return None
        except OSError:
            self.error(imp.span, f"cannot find rules file '{imp.path}' (looked for {path})")
            self.done[key] = None
            return None
        self.sources[path] = text
        rf, diags = parse_collect(text, path)
        self.diags.extend(diags)
        if rf is None:
            self.done[key] = None
            return None
        self.stack[-1].via = imp.span
        return self.check_file(rf)


# ------------------------------------------------------------------------ one file
def _bound_on_every_path(p: A.Pattern) -> set[str]:
    """Captures bound by every way the pattern can match. Every alternative the language has
    (an op set, the two orders of `[a, b]`) binds the same names, so this is all of them."""
    return set(capture_names(p))


def _capture_ops(p: A.Pattern) -> dict[str, frozenset]:
    """The ops each capture's pattern names (`c:CONST`, `2.0 as c`: CONST; `{RESHAPE, EXPAND}(x)
    as m`: both), for the names bound to an op pattern (a bare `x` names none)."""
    out: dict[str, frozenset] = {}
    for name, inner in _bindings(p):
        ops: set = set()
        if isinstance(inner, A.PConst):
            ops = {Ops.CONST}
        elif isinstance(inner, A.PNode):
            for ref in inner.ops:
                ops |= resolve_ops(ref.name) or {None}  # (an unknown op: reported elsewhere)
        if ops and None not in ops:
            out.setdefault(name, frozenset(ops))
    return out


def _capture_sizes(p: A.Pattern) -> dict[str, int]:
    """How many sources each capture bound to an op pattern has when the pattern writes them
    all out (`ADD(x, y) as a`: 2; not with `...` or `*rest`)."""
    out: dict[str, int] = {}
    for name, inner in _bindings(p):
        if isinstance(inner, A.PNode) and inner.srcs is not None and not inner.ellipsis \
                and inner.rest is None:
            out.setdefault(name, len(inner.srcs))
    return out


def _bindings(p: A.Pattern):
    """(name, the pattern it binds) of each capture under p, through nested captures
    (`x as y as z` binds y and z to x's pattern)."""
    for q in A.subpatterns(p):
        if isinstance(q, A.PBind):
            inner = q.pattern
            while isinstance(inner, A.PBind):
                inner = inner.pattern
            yield q.name, inner


# the mark is a comment of its own ending the line, as soundness.py's marks: prose that speaks
# of it ("# no rule here needs check: gradient") makes no gradient set
GRADIENT_MARK = re.compile(r"#\s*check:\s*gradient\s*$")


def gradient_rules(rf: A.RulesFile) -> set[tuple[int, int]]:
    """The (line, col) of every rule in a set whose `rules NAME = ...` line, or the comment
    block just above it, carries `# check: gradient`: its right sides are one value per
    source (a tuple), not a rewrite."""
    lines = rf.source.splitlines()

    def marked(line: int) -> bool:
        k = line
        while 1 <= k <= len(lines):
            if GRADIENT_MARK.search(lines[k - 1]):
                return True
            k -= 1
            if not (1 <= k and lines[k - 1].lstrip().startswith("#")):
                return False
        return False

    return {(r.span.line, r.span.col) for rs in rf.rulesets if marked(rs.span.line)
            for term in rs.terms if isinstance(term, A.RuleBlock) for r in term.rules}


def _rest_captures(p: A.Pattern) -> list[tuple[str, A.Span]]:
    """The variadic captures `*name` of a pattern (each binds a tuple of sources)."""
    return [(q.rest, q.span) for q in A.subpatterns(p)
            if isinstance(q, A.PNode) and q.rest is not None]


def _always_fires(rhs: A.Expr | A.EDefer, captures: set[str]) -> bool:
    """Can the right-hand side never decline (return None or defer)? See the module doc."""
    if isinstance(rhs, A.EName):
        return rhs.name in captures
    if isinstance(rhs, A.ELit):
        return rhs.value is not None
    if isinstance(rhs, (A.EBinOp, A.EUnary)):
        return True
    if isinstance(rhs, A.ECall):
        if isinstance(rhs.func, A.EOpName):
            return rhs.func.name in OP_NAMES
        base: Any = rhs.func
        while isinstance(base, (A.EAttr, A.ECall, A.EIndex)):
            base = base.func if isinstance(base, A.ECall) else base.obj
        return isinstance(rhs.func, A.EAttr) and isinstance(base, A.EName) and (
            base.name in captures)
    return False


def _root_ops(p: A.Pattern) -> frozenset | None:
    """The ops the root of a pattern can have; None for any op."""
    while isinstance(p, A.PBind):
        p = p.pattern
    if isinstance(p, A.PVar):
        return None
    if isinstance(p, A.PConst):
        return frozenset({"CONST"})
    out: set[str] = set()
    for ref in p.ops:
        ops = resolve_ops(ref.name)
        if ops is None:
            return frozenset()
        out |= {op.name for op in ops}
    return frozenset(out)


class _FileChecker:
    def __init__(self, session: _Session, file: A.RulesFile):
        self.s, self.file = session, file
        self.helpers: dict[str, A.Helper] = {}
        self.imported_sets: dict[str, A.CheckedRuleSet] = {}
        self.imported_files: list[A.CheckedFile] = []
        self.own_sets: dict[str, A.RuleSet] = {}
        self.flat: dict[str, tuple[A.Rule, ...] | None] = {}
        self.helper_objs: dict[str, Any] = {}  # helper name -> the object, when it imported
        self.pipelines = {p.name for p in file.pipelines}  # callable from expressions
        self.contexts: dict[str, A.Context] = {}  # declared classes, callable like helpers
        self.defs: dict[str, A.Def] = {}  # the file's definitions checked so far, by name
        self.gradient: set[tuple[int, int]] = set()  # the rules of `# check: gradient` sets

    def error(self, span: A.Span, message: str, hint: str | None = None) -> None:
        self.s.error(span, message, hint)

    def run(self) -> A.CheckedFile:
        for use in self.file.uses:
            self.check_use(use)
        unavailable: set[str] = set()
        for imp in self.file.imports:
            unavailable |= self.check_import(imp)
        self.collect_sets(unavailable)
        self.check_rule_names()
        # the declared classes first: a definition may build a record, a context call one
        self.contexts = {c.name: c for c in self.file.contexts}
        for d in self.file.defs:
            self.check_def(d)
        for c in self.file.contexts:
            self.check_context(c)
        self.gradient = gradient_rules(self.file)
        for rs in self.file.rulesets:
            for term in rs.terms:
                if isinstance(term, A.RuleBlock):
                    for rule in term.rules:
                        self.check_rule(rule)
        checked = []
        for rs in self.file.rulesets:
            if self.own_sets.get(rs.name) is not rs:
                continue
            rules = self.flatten(rs.name, [], unavailable)
            if rules is not None:
                self.check_shadowing(rs.name, rules)
                checked.append(A.CheckedRuleSet(rs.name, rules, self.file.path))
        pipelines = tuple(self.check_pipeline(p, {c.name: c for c in checked})
                          for p in self.file.pipelines)
        return A.CheckedFile(self.file, tuple(checked), tuple(self.helpers.values()),
                             tuple(self.imported_files), pipelines)

    # -------------------------------------------------------------- pipelines
    def check_pipeline(self, pl: A.Pipeline, sets: dict[str, A.CheckedRuleSet]
                       ) -> A.CheckedPipeline:
        """Each pass names a known rule set and a known context; names are unique. A declared
        context has what its pass's rules read: every `ctx.name` is a field or method."""
        from rulegrad.runtime.spec import STAGES as SPEC_STAGES

        if pl.name in self.own_sets or pl.name in self.imported_sets or pl.name in self.helpers:
            self.error(pl.span, f"pipeline '{pl.name}' has the name of a rule set or helper")
        if sum(p.name == pl.name for p in self.file.pipelines) > 1:
            self.error(pl.span, f"duplicate pipeline '{pl.name}'")
        seen: dict[str, A.Pass] = {}
        files: list[str] = []
        for ps in pl.passes:
            if ps.name in seen:
                self.error(ps.span, f"duplicate pass '{ps.name}' in pipeline '{pl.name}'")
            if ps.ruleset in self.own_sets:
                files.append(self.file.path)
            elif ps.ruleset in self.imported_sets:
                files.append(self.imported_sets[ps.ruleset].path)
            else:
                known = set(self.own_sets) | set(self.imported_sets)
                self.error(ps.set_span, f"unknown rule set '{ps.ruleset}' in pass '{ps.name}'"
                           + _did_you_mean(ps.ruleset, known))
                files.append("")
            self.check_pass_ctx(ps, seen)
            decl = self.contexts.get(self.pass_context(ps, seen) or "")
            if decl is not None and ps.ruleset in sets:
                for rule in sets[ps.ruleset].rules:
                    self.check_ctx_attrs((rule.guard, rule.rhs, rule.lets), decl,
                                         f"the context of pass '{ps.name}'")
            if ps.spec is not None and ps.spec not in SPEC_STAGES:
                self.error(ps.span, f"unknown spec stage '{ps.spec}'"
                           + _did_you_mean(ps.spec, SPEC_STAGES))
            seen.setdefault(ps.name, ps)
        return A.CheckedPipeline(pl, tuple(files))

    def check_pass_ctx(self, ps: A.Pass, earlier: dict[str, A.Pass]) -> None:
        if ps.ctx is None:
            if ps.until_settled or ps.collect:
                what = "until_settled" if ps.until_settled else "collect"
                self.error(ps.span, f"pass '{ps.name}' is {what} but has no ctx=")
            return
        if ps.ctx in earlier:
            if earlier[ps.ctx].ctx is None:
                self.error(ps.ctx_span, f"pass '{ps.ctx}' has no context to share")
            elif ps.until_settled:
                self.error(ps.span, f"pass '{ps.name}' is until_settled: it needs a context "
                           "class of its own (each run starts a new one)")
            return
        decl = self.contexts.get(ps.ctx)
        if decl is not None:
            again = next((m for m in decl.methods if m.name == "again"), None)
            if ps.until_settled and (again is None or any(d is None for _, d in again.params)):
                self.error(ps.ctx_span, f"context '{ps.ctx}' of an until_settled pass needs a "
                           "method again() (the next run's context, or None once settled)")
            return
        if ps.ctx not in self.helpers:
            known = {n for n, o in self.helper_objs.items() if isinstance(o, type)} | set(earlier)
            self.error(ps.ctx_span, f"unknown context '{ps.ctx}' in pass '{ps.name}': not a "
                       "class declared with `use` nor an earlier pass"
                       + _did_you_mean(ps.ctx, known),
                       "declare it: use .helpers_module: ContextClass")
            return
        obj = self.helper_objs.get(ps.ctx)
        if obj is not None and not isinstance(obj, type):
            self.error(ps.ctx_span, f"context '{ps.ctx}' is not a class")
        elif obj is not None and ps.until_settled and not callable(getattr(obj, "again", None)):
            self.error(ps.ctx_span, f"context '{ps.ctx}' of an until_settled pass needs a "
                       "method again() (the next run's context, or None once settled)")

    @staticmethod
    def pass_context(ps: A.Pass, earlier: dict[str, A.Pass]) -> str | None:
        """The context class a pass runs with (a shared one is its first owner's)."""
        ctx = ps.ctx
        while ctx in earlier:
            ctx = earlier[ctx].ctx
        return ctx

    # -------------------------------------------------------------- definitions
    def check_def(self, d: A.Def) -> None:
        """A definition's name is new (and not one a generated module defines); its body and
        `where` names see its parameters and the names bound before, and call only definitions
        declared before it (no recursion: a definition's call depth is its file's, not a
        graph's). It reads no pass context it is not given as a parameter."""
        taken = (set(self.helpers) | set(self.contexts) | set(self.defs) | set(GLOBALS)
                 | set(BUILTINS) | KEYWORD_NAMES | self.pipelines | set(self.own_sets)
                 | set(self.imported_sets) | MODULE_NAMES | self.imported_defs())
        if d.name in taken or d.name.startswith("_"):
            self.error(d.span, f"definition '{d.name}' has the name of a helper, builtin, rule "
                       "set or another definition (or starts with '_')")
        scope = {name for name, _ in d.params}
        if len(scope) != len(d.params):
            self.error(d.span, f"definition '{d.name}' repeats a parameter")
        for name, e in d.lets:
            self.check_expr(e, scope, f"definition '{d.name}'", {})
            if name in self.helpers or name in BUILTINS or name in self.defs:
                self.error(e.span, f"'where {name} = ...' hides a helper, builtin or definition "
                           "of that name")
            scope = scope | {name}
        self.check_expr(d.body, scope, f"definition '{d.name}'", {})
        self.check_def_calls((d.body, d.lets))
        if "ctx" in A.names_in((d.body, d.lets)) and "ctx" not in scope:
            at = next(x for x in _walk((d.body, d.lets))
                      if isinstance(x, A.EName) and x.name == "ctx")
            self.error(at.span, f"definition '{d.name}' reads ctx: a definition is a function "
                       "of its parameters", "take ctx as a parameter, or make it a method of "
                       "the context")
        self.defs[d.name] = d

    def imported_defs(self) -> set[str]:
        """The definitions of the files this one imports, at any depth: the interpreted matcher
        runs a file's rules with all of them in one namespace, so a name is taken once."""
        out: set[str] = set()
        stack = list(self.imported_files)
        while stack:
            f = stack.pop()
            out |= {d.name for d in f.file.defs}
            stack += f.imported
        return out

    def check_def_calls(self, e: object) -> None:
        """Every call of a definition gives what its parameters ask for."""
        for x in _walk(e):
            if isinstance(x, A.ECall) and isinstance(x.func, A.EName) \
                    and x.func.name in self.defs:
                d = self.defs[x.func.name]
                self.check_call(x, d.name, [(n, v is not None) for n, v in d.params], set())

    # -------------------------------------------------------------- contexts
    def check_context(self, c: A.Context) -> None:
        """Names unique; required fields first; each default sees the inputs and the fields
        before it; each method its parameters and its `where` names, in order."""
        at = next(i for i, x in enumerate(self.file.contexts) if x is c)
        if c.name in self.helpers or c.name in GLOBALS \
                or any(x.name == c.name for x in self.file.contexts[:at]):
            self.error(c.span, f"context '{c.name}' has the name of a helper, a global or "
                       "another context")
        members: set[str] = set()
        optional = False
        for f in c.fields:
            if f.name in members:
                self.error(f.span, f"field '{f.name}' of '{c.name}' is declared twice")
            if f.default is None and optional:
                self.error(f.span, f"field '{f.name}' of '{c.name}' has no default but comes "
                           "after one that has: required fields come first")
            optional = optional or f.default is not None
            if f.default is not None:
                self.check_expr(f.default, set(c.inputs), f"default of field '{f.name}'", {})
                # a default reads only the fields already set (and methods)
                known = [g.name for g in c.fields[:c.fields.index(f)]]
                self.check_ctx_attrs(f.default, c, f"'{c.name}' when its field '{f.name}' is "
                                     "set", known)
            members.add(f.name)
        for m in c.methods:
            if m.name in members:
                self.error(m.span, f"'{m.name}' of '{c.name}' is declared twice")
            members.add(m.name)
            scope = {name for name, _ in m.params}
            if len(scope) != len(m.params):
                self.error(m.span, f"method '{m.name}' of '{c.name}' repeats a parameter")
            for name, e in m.lets:
                self.check_expr(e, scope, f"method '{m.name}'", {})
                scope = scope | {name}
            self.check_expr(m.body, scope, f"method '{m.name}'", {})
            self.check_ctx_attrs((m.body, m.lets), c, f"'{c.name}'")
            self.check_def_calls((m.body, m.lets))

    def check_ctx_attrs(self, e: object, c: A.Context, what: str,
                        fields: list[str] | None = None) -> None:
        """Every `ctx.name` in e is a field (one of `fields` when given) or a method of c, and
        every call of a method gets what its parameters ask for."""
        names = [f.name for f in c.fields] if fields is None else fields
        names += [m.name for m in c.methods]
        methods = {m.name: m for m in c.methods}
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, A.ECall) and isinstance(x.func, A.EAttr) \
                    and isinstance(x.func.obj, A.EName) and x.func.obj.name == "ctx" \
                    and x.func.attr in methods:
                m = methods[x.func.attr]
                self.check_call(x, f"ctx.{m.name}",
                                [(n, d is not None) for n, d in m.params], set())
            if isinstance(x, A.EAttr) and isinstance(x.obj, A.EName) and x.obj.name == "ctx" \
                    and x.attr not in names:
                self.error(x.span, f"{what} has no '{x.attr}'" + _did_you_mean(x.attr, names))
            if isinstance(x, (tuple, list)):
                stack.extend(x)
            elif hasattr(x, "__dataclass_fields__") and not isinstance(x, A.Span):
                stack.extend(getattr(x, k) for k in x.__dataclass_fields__ if k != "span")

    def check_call(self, call: A.ECall, what: str, params: list[tuple[str, bool]],
                   keywords: set[str]) -> None:
        """A call of a declared method or class: `params` (name, has a default) by position
        or keyword, `keywords` by keyword only."""
        if any(isinstance(a, A.EStar) for a in call.args):
            return  # `f(*xs)`: how many is known when the rule runs
        problem = None
        if len(call.args) > len(params):
            problem = f"takes at most {len(params)} arguments, the call gives {len(call.args)}"
        given = {n for n, _ in params[:len(call.args)]}
        for key, _ in call.kwargs:
            if key not in {n for n, _ in params} | keywords:
                problem = problem or f"has no parameter '{key}'" + _did_you_mean(
                    key, [n for n, _ in params] + sorted(keywords))
            elif key in given:
                problem = problem or f"is given '{key}' twice"
            given.add(key)
        missing = [n for n, optional in params if not optional and n not in given]
        if missing and problem is None:
            problem = f"needs {', '.join(missing)}"
        if problem is not None:
            self.error(call.span, f"{what} {problem}")

    # -------------------------------------------------------------- declarations
    def check_use(self, use: A.Use) -> None:
        if refused_module(use.module):
            self.error(use.span, f"'use {use.module}' is refused: helpers come from the "
                       "project's own modules or pure standard modules (math, itertools, ...), "
                       "not from modules that reach the system",
                       "write the helper as a function in a module beside the rules file")
            return
        if self.s.import_helpers:
            mod, file, problem = _load_helper_module(use.module, self.file.path)
        elif use.module.startswith("."):
            mod, file = None, helper_file(use.module, self.file.path)
            problem = None if os.path.isfile(file) else (
                f"helper module '{use.module}' not found: no file {file}")
        else:
            mod, file, problem = None, None, None
        if problem is not None:
            self.error(use.span, problem)
        for name, span in zip(use.names, use.name_spans or (use.span,) * len(use.names)):
            if name in self.helpers:
                self.error(span, f"helper '{name}' is declared twice")
                continue
            if mod is not None and not hasattr(mod, name):
                public = [n for n in vars(mod) if not n.startswith("_")]
                self.error(span, f"helper module '{use.module}' has no '{name}'"
                           + _did_you_mean(name, public))
            elif mod is not None and not (_plain_helper(getattr(mod, name))
                                          or _constant(name, getattr(mod, name))):
                self.error(span, f"helper '{name}' of '{use.module}' is not a function of the "
                           "project, nor a constant (an all-caps name of a number or a string); "
                           "a module, or a function of a standard module that reaches the "
                           "system, is refused")
            elif mod is not None:
                self.helper_objs[name] = getattr(mod, name)
            self.helpers[name] = A.Helper(name, use.module, file, use.analysis)

    def check_import(self, imp: A.Import) -> set[str]:
        """Check an import; returns the names it should have provided but could not."""
        checked = self.s.import_file(imp, self.file.path)
        if checked is None:
            return set(imp.names)
        self.imported_files.append(checked)
        have = {rs.name: rs for rs in checked.rulesets}
        spans = imp.name_spans or (imp.span,) * len(imp.names)
        missing = set()
        for name, span in zip(imp.names, spans):
            if name not in have:
                self.error(span, f"'{imp.path}' has no rule set '{name}'"
                           + _did_you_mean(name, have))
                missing.add(name)
            elif name in self.imported_sets:
                self.error(span, f"rule set '{name}' is imported twice")
            else:
                self.imported_sets[name] = have[name]
        return missing

    def collect_sets(self, unavailable: set[str]) -> None:
        for rs in self.file.rulesets:
            span = A.Span(rs.span.path, rs.span.line, rs.span.col, rs.span.line,
                          rs.span.col + len("rules"))
            if rs.name in self.own_sets:
                first = self.own_sets[rs.name].span
                self.error(span, f"duplicate rule set '{rs.name}' (first defined at "
                           f"{first.line}:{first.col})")
            elif rs.name in self.imported_sets or rs.name in unavailable:
                self.error(span, f"rule set '{rs.name}' is also imported")
            else:
                self.own_sets[rs.name] = rs

    def check_rule_names(self) -> None:
        seen: dict[str, A.Rule] = {}
        for rs in self.file.rulesets:
            for term in rs.terms:
                for rule in term.rules if isinstance(term, A.RuleBlock) else ():
                    if rule.name in seen:
                        first = seen[rule.name].span
                        self.error(_label_span(rule), f"duplicate rule name '{rule.name}' "
                                   f"(first used at {first.line}:{first.col})")
                    else:
                        seen[rule.name] = rule

    # -------------------------------------------------------------- flattening and shadowing
    def flatten(self, name: str, path: list[str], unavailable: set[str]
                ) -> tuple[A.Rule, ...] | None:
        """The rules of set `name` in priority order; None when a term is in error."""
        if name in self.flat:
            return self.flat[name]
        rs = self.own_sets[name]
        out: list[A.Rule] = []
        ok = True
        for term in rs.terms:
            if isinstance(term, A.RuleBlock):
                out.extend(term.rules)
            elif term.name in self.imported_sets:
                out.extend(self.imported_sets[term.name].rules)
            elif term.name in path + [name]:
                cycle = " -> ".join(path[path.index(term.name):] + [name, term.name]
                                    if term.name in path else [name, name])
                self.error(term.span, f"rule set '{term.name}' includes itself ({cycle})")
                ok = False
            elif term.name in self.own_sets:
                sub = self.flatten(term.name, path + [name], unavailable)
                ok = ok and sub is not None
                out.extend(sub or ())
            elif term.name not in unavailable:
                known = set(self.own_sets) | set(self.imported_sets)
                self.error(term.span, f"unknown rule set '{term.name}'"
                           + _did_you_mean(term.name, known))
                ok = False
            else:
                ok = False
        self.flat[name] = tuple(out) if ok else None
        return self.flat[name]

    def check_shadowing(self, set_name: str, rules: tuple[A.Rule, ...]) -> None:
        # the always-firing rules so far, indexed so each rule meets only those that could
        # cover it (subsume.ShadowIndex: 4,000 rules are not 16M comparisons)
        firing = ShadowIndex()
        for rule in rules:
            ops = _root_ops(rule.pattern)
            for (earlier, eops), _ in firing.candidates(rule.pattern):
                if earlier is rule or (eops is not None and (ops is None or not ops <= eops)):
                    continue
                key = (id(earlier), id(rule))
                if key in self.s.reported or not shadows(earlier.pattern, rule.pattern):
                    continue
                self.s.reported.add(key)
                where = f"{earlier.span.path}:{earlier.span.line}"
                self.error(rule.span, f"rule '{rule.name}' can never fire in rule set "
                           f"'{set_name}': the earlier rule '{earlier.name}' ({where}) has no "
                           "guard and matches everything it matches",
                           "move the more specific rule first, or give the earlier one a guard")
                break
            captures = _bound_on_every_path(rule.pattern)
            if rule.guard is None and _always_fires(rule.rhs, captures):
                firing.add((rule, ops), rule.pattern)

    # -------------------------------------------------------------- one rule
    def check_rule(self, rule: A.Rule) -> None:
        self.check_pattern(rule.pattern)
        captures = _bound_on_every_path(rule.pattern)
        for name, span in _rest_captures(rule.pattern):
            if name in captures:
                self.error(span, f"'*{name}' binds a name the pattern already binds")
            captures.add(name)
        comp_locals: dict[str, A.Span] = {}
        for name, e in rule.lets:  # each sees the captures and the names bound before it
            self.check_expr(e, captures, "right-hand side", comp_locals)
            if name in captures or name in self.helpers or name in BUILTINS:
                self.error(e.span, f"'where {name} = ...' hides a capture, helper or builtin "
                           f"of that name")
            elif name in self.defs:
                self.error(e.span, f"'where {name} = ...' hides the definition of that name")
            captures = captures | {name}
        if rule.guard is not None:  # the guard sees the lets too (those it names run first)
            self.check_expr(rule.guard, captures, "guard", comp_locals)
        if isinstance(rule.rhs, A.EError):
            self.check_expr(rule.rhs.message, captures, "right-hand side", comp_locals)
        elif not isinstance(rule.rhs, A.EDefer):
            self.check_expr(rule.rhs, captures, "right-hand side", comp_locals)
            self.check_rhs_not_analysis(rule.rhs)
        self.check_def_calls((rule.guard, rule.rhs, rule.lets))
        self.check_kinds(rule)

    def check_kinds(self, rule: A.Rule) -> None:
        """Type the rule's expressions (dsl/kinds.py): what would raise when the rule fires is
        an error here, at its place in the file."""
        opaque = (KEYWORD_NAMES | self.pipelines | set(self.contexts) | set(self.defs)
                  | (set(self.helpers) - set(self.helper_objs)))
        typer = Typer(self.error, self.helper_objs, opaque)
        ops, sizes = _capture_ops(rule.pattern), _capture_sizes(rule.pattern)
        scope: dict[str, Kind] = {name: node_of(ops.get(name), sizes.get(name))
                                  for name in _bound_on_every_path(rule.pattern)}
        # (a `*name` that rebinds a capture is an error of its own: no second one here)
        scope |= {name: NODES for name, _ in _rest_captures(rule.pattern) if name not in scope}
        for name, e in rule.lets:
            scope = scope | {name: typer.kind(e, scope)}
        if rule.guard is not None:
            guard = rule.guard
            for term in guard.values if isinstance(guard, A.EBool) else (guard,):
                typer.truth(term, typer.kind(term, scope))
        if isinstance(rule.rhs, A.EError):
            typer.kind(rule.rhs.message, scope)
        elif not isinstance(rule.rhs, A.EDefer):
            typer.kind(rule.rhs, scope)
            rewrite = (rule.span.line, rule.span.col) not in self.gradient
            self.check_rhs_value(rule.rhs, lambda e: typer.kind(e, scope), rewrite)

    def check_rhs_not_analysis(self, rhs: A.Expr) -> None:
        """A rule says its rewrite: the value of an analysis (any branch of a conditional) is
        an answer about nodes, never the replacement."""
        stack = [rhs]
        while stack:
            e = stack.pop()
            if isinstance(e, A.EIf):
                stack += [e.then, e.orelse]
            elif isinstance(e, A.ECall) and isinstance(e.func, A.EName) and \
                    (h := self.helpers.get(e.func.name)) is not None and h.analysis:
                self.error(e.span, f"'{h.name}' is an analysis: it answers about nodes and "
                           "cannot be a rule's rewrite", "say the rewrite in the rule, and ask "
                           "the analysis in its guard or its where names")

    def check_rhs_value(self, rhs: A.Expr, kind_of: Callable[[A.Expr], Kind],
                        rewrite: bool) -> None:
        """A right side is a node, a number or bool (a constant like the root), None (no
        rewrite), or a tuple (a gradient rule's one value per source: only in a `# check:
        gradient` set, a `rewrite` set's result replaces a node); a string, a list, a
        comprehension, a dtype, an op or a function can never be one (each branch of a
        conditional is checked alike)."""
        stack = [rhs]
        while stack:
            e = stack.pop()
            if isinstance(e, A.EIf):
                stack += [e.then, e.orelse]
                continue
            k = kind_of(e)
            kind = ("a list" if isinstance(e, (A.EList, A.EComp)) else
                    word(k) if k.name in RHS_NOT_A_VALUE else None)
            if kind is not None:
                self.error(e.span, f"the right-hand side is {kind}, which cannot be a node",
                           "a rule rewrites to a node, a number, a bool, None or a tuple")
            elif rewrite and k.name == "tuple":
                self.error(e.span, "the right-hand side is a tuple, which cannot be a node: "
                           "only a gradient set (`# check: gradient`) returns one value per "
                           "source", "a rewrite rule returns a node, a number, a bool or None")

    def check_pattern(self, p: A.Pattern) -> None:
        if isinstance(p, A.PBind):
            self.check_pattern(p.pattern)
            return
        if p.dtype is not None and resolve_dtype(p.dtype.name) is None:
            self.error(p.dtype.span, f"unknown dtype '{p.dtype.name}'"
                       + _did_you_mean(p.dtype.name, DTYPE_NAMES),
                       "a dtype (int32, index, bool, ...) or a class (ints, sints, uints, "
                       "floats, bools)")
        if not isinstance(p, A.PNode):
            return
        ops: set = set()
        known = True
        for ref in p.ops:
            resolved = resolve_ops(ref.name)
            if resolved is None:
                kind = "op" if ref.name.isupper() else "op group"
                self.error(ref.span, f"unknown {kind} '{ref.name}'"
                           + _did_you_mean(ref.name, OP_NAMES | GROUP_NAMES))
                known = False
            else:
                ops |= resolved
        if known:
            self.check_arity(p, ops)
        for which, value in (("arg", p.arg), ("tag", p.tag)):
            if value is not None:
                self.check_constant(value, which)
        for src in p.srcs or ():
            self.check_pattern(src)

    def check_arity(self, p: A.PNode, ops: set) -> None:
        written = "".join(r.name for r in p.ops) if len(p.ops) == 1 else "{" + ", ".join(
            r.name for r in p.ops) + "}"
        if p.commutative and (p.ellipsis or len(p.srcs or ()) != 2):
            self.error(p.span, f"a commutative pattern {written}[...] needs exactly 2 sources")
            return
        if p.srcs is None:
            return
        n = len(p.srcs)
        fixed = {op: arity(op) for op in ops}
        if p.ellipsis:
            if all(a is not None and a < n for a in fixed.values()):
                most = max(fixed.values())
                self.error(p.span, f"{written} takes at most {most} source"
                           f"{'s' if most != 1 else ''}, the pattern needs at least {n}")
        elif all(a is not None and a != n for a in fixed.values()):
            counts = sorted(set(fixed.values()))
            takes = " or ".join(map(str, counts))
            self.error(p.span, f"wrong arity: {written} takes {takes} source"
                       f"{'s' if counts != [1] else ''}, the pattern gives {n}")

    def check_constant(self, e: A.Expr, which: str) -> None:
        ok = True
        todo = [e]
        while todo:
            x = todo.pop()
            if isinstance(x, (A.ETuple, A.EList)):
                todo.extend(x.items)
            elif isinstance(x, A.EUnary) and x.op == "-" and isinstance(x.operand, A.ELit):
                pass
            elif isinstance(x, A.EAttr) and (x.obj in (A.EOpName("Ops"), A.EOpName("GroupOp"),
                                                       A.EName("dtypes"))):
                self.check_expr(x, set(), f"{which}= constraint", {})
            elif not isinstance(x, A.ELit):
                ok = False
        if not ok:
            self.error(e.span, f"{which}= takes a constant: a literal, a tuple of literals or "
                       "Ops.NAME")

    def check_expr(self, e: A.Expr, scope: set[str], where: str,
                   comp_locals: dict[str, A.Span]) -> None:
        """Check names in an expression (recursion over one expression tree)."""
        if isinstance(e, A.EName):
            self.check_name(e, scope, where, comp_locals)
        elif isinstance(e, A.EOpName):
            if e.name in OP_NAMES:
                self.error(e.span, f"op '{e.name}' used as a value (write Ops.{e.name}, or "
                           f"call it to build a node: {e.name}(...))")
            elif e.name not in GLOBALS and e.name not in self.helpers \
                    and e.name not in self.contexts:
                self.error(e.span, f"unknown name '{e.name}' in the {where}"
                           + _did_you_mean(e.name, set(GLOBALS) | OP_NAMES))
        elif isinstance(e, A.EAttr):
            self.check_attr(e)
            if not isinstance(e.obj, A.EOpName) or e.obj.name not in ("Ops", "GroupOp"):
                self.check_expr(e.obj, scope, where, comp_locals)
        elif isinstance(e, A.ECall):
            if isinstance(e.func, A.EOpName):
                self.check_constructor(e)
            else:
                self.check_expr(e.func, scope, where, comp_locals)
                self.check_analysis_call(e)
                self.check_builder_arity(e)
            for x in (*e.args, *(v for _, v in e.kwargs)):
                self.check_expr(x, scope, where, comp_locals)
        elif isinstance(e, A.EComp):
            self.check_expr(e.iter, scope, where, comp_locals)
            for name in e.names:
                comp_locals.setdefault(name, e.span)
            inner = scope | set(e.names)
            for x in (e.elt, *e.conds):
                self.check_expr(x, inner, where, comp_locals)
        else:
            for x in _children(e):
                self.check_expr(x, scope, where, comp_locals)

    def check_analysis_call(self, e: A.ECall) -> None:
        """An analysis is a question about nodes: what it answers depends on its arguments
        only, so the pass context is not one of them (A.names_in walks every argument)."""
        h = self.helpers.get(e.func.name) if isinstance(e.func, A.EName) else None
        if h is not None and h.analysis and "ctx" in A.names_in((e.args, e.kwargs)):
            self.error(e.span, f"analysis '{h.name}' is given the pass context: an analysis "
                       "answers about the nodes it is given, and nothing else",
                       "pass it nodes; a function that needs ctx is a helper: declare it "
                       "with use")

    def check_builder_arity(self, e: A.ECall) -> None:
        """`x.f(Ops.ADD)` builds an ADD of x alone and `x.alu(Ops.WHERE, y)` a WHERE of two:
        the op's arity is checked as a constructor's (`ADD(x)`) is, not left to a crash or a
        malformed node where the rule fires."""
        f = e.func
        if not (isinstance(f, A.EAttr) and f.attr in ("f", "alu") and e.args) or \
                any(isinstance(a, A.EStar) for a in e.args):
            return
        op = e.args[0]
        if not (isinstance(op, A.EAttr) and isinstance(op.obj, A.EOpName)
                and op.obj.name == "Ops" and op.attr in OP_NAMES):
            return
        given = 1 if f.attr == "f" else len(e.args)  # (the node itself and the others)
        n = arity(Ops[op.attr])
        if n is not None and n != given:
            self.error(e.span, f"wrong arity: {op.attr} takes {n} source{'s' if n != 1 else ''},"
                       f" .{f.attr}(...) gives {given}",
                       f"{op.attr}(...) with its sources, or .alu(Ops.{op.attr}, ...) with "
                       f"{n - 1} other{'s' if n != 2 else ''}" if n > 1 else
                       f"x.f(Ops.{op.attr}) or x.alu(Ops.{op.attr})")

    def check_name(self, e: A.EName, scope: set[str], where: str,
                   comp_locals: dict[str, A.Span]) -> None:
        name = e.name
        if name in scope or name in self.helpers or name in BUILTINS or name in KEYWORD_NAMES \
                or name in self.pipelines or name in self.contexts or name in self.defs:
            return
        if name in comp_locals:
            at = comp_locals[name]
            self.error(e.span, f"'{name}' is bound only inside the comprehension at "
                       f"{at.line}:{at.col}, not on every path to the {where}")
            return
        known = scope | set(self.helpers) | set(BUILTINS) | KEYWORD_NAMES
        what = "a capture of the pattern" if where in ("guard", "right-hand side") else \
            "a parameter, a where name, a definition above it" if where.startswith("definition") \
            else "an input or parameter of the context, a where name"
        self.error(e.span, f"unknown name '{name}' in the {where}: not {what}, a helper or a "
                   "builtin" + _did_you_mean(name, known))

    def check_attr(self, e: A.EAttr) -> None:
        obj = e.obj
        if forbidden_attr(e.attr):
            self.error(e.span, f"attribute '.{e.attr}' is not allowed in an expression: rules "
                       "read their nodes' data, not Python's internals (names starting with "
                       "'_', frames, code objects, string formatting)")
            return
        if isinstance(obj, A.EOpName) and obj.name == "Ops" and e.attr not in OP_NAMES:
            self.error(e.span, f"unknown op 'Ops.{e.attr}'"
                       + _did_you_mean(f"Ops.{e.attr}", {f"Ops.{n}" for n in OP_NAMES}))
        elif isinstance(obj, A.EOpName) and obj.name == "GroupOp" and e.attr not in GROUP_NAMES:
            self.error(e.span, f"unknown op group 'GroupOp.{e.attr}'"
                       + _did_you_mean(e.attr, GROUP_NAMES))
        elif isinstance(obj, A.EName) and obj.name == "dtypes":
            dtypes = BUILTINS["dtypes"]
            if not hasattr(dtypes, e.attr):
                self.error(e.span, f"unknown dtype 'dtypes.{e.attr}'"
                           + _did_you_mean(e.attr, [n for n in dir(dtypes) if n[0] != "_"]))

    def check_constructor(self, e: A.ECall) -> None:
        assert isinstance(e.func, A.EOpName)
        name = e.func.name
        if name in self.contexts:
            c = self.contexts[name]
            self.check_call(e, name, [(f.name, f.default is not None) for f in c.fields],
                            set(c.inputs))
            return
        if name in GLOBALS or name in self.helpers and name not in OP_NAMES:
            return  # a global or a class declared with `use` or `context`: an ordinary call
        if name not in OP_NAMES:
            self.error(e.func.span, f"unknown op '{name}' in a constructor"
                       + _did_you_mean(name, OP_NAMES | set(GLOBALS)))
            return
        for key, _ in e.kwargs:
            if key not in CONSTRUCTOR_KWARGS:
                self.error(e.span, f"unknown keyword '{key}=' for a constructor",
                           "a constructor takes dtype=, arg= and tag=")
        n = arity(Ops[name])
        if any(isinstance(a, A.EStar) for a in e.args):
            if not e.args or isinstance(e.args[0], A.EStar) and "dtype" not in dict(e.kwargs):
                self.error(e.span, f"{name}(*...) needs dtype= (its first source is not known "
                           "before the rule runs)")
        elif n is not None and n != len(e.args):
            self.error(e.span, f"wrong arity: {name} takes {n} source{'s' if n != 1 else ''},"
                       f" the constructor gives {len(e.args)}")


def _walk(e: object) -> list[Any]:
    """Every AST node under e (iterative: an expression's depth is its text's, but no
    recursion is needed to list it)."""
    out: list[Any] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif hasattr(x, "__dataclass_fields__") and not isinstance(x, A.Span):
            out.append(x)
            stack.extend(getattr(x, k) for k in x.__dataclass_fields__ if k != "span")
    return out


def _children(e: Any) -> list[A.Expr]:
    """The sub-expressions of an expression node (for the generic walk)."""
    if isinstance(e, A.EBinOp):
        return [e.left, e.right]
    if isinstance(e, A.EUnary):
        return [e.operand]
    if isinstance(e, A.EStar):
        return [e.value]
    if isinstance(e, A.ECompare):
        return [e.left, *e.rights]
    if isinstance(e, A.EBool):
        return list(e.values)
    if isinstance(e, A.EIf):
        return [e.cond, e.then, e.orelse]
    if isinstance(e, (A.ETuple, A.EList)):
        return list(e.items)
    if isinstance(e, A.EIndex):
        return [e.obj, e.index]
    if isinstance(e, A.ESlice):
        return [x for x in (e.lower, e.upper, e.step) if x is not None]
    return []


# ------------------------------------------------------------------------ entry points
def check_collect(file: A.RulesFile, loader: Loader | None = None, import_helpers: bool = True
                  ) -> tuple[A.CheckedFile | None, list[Diagnostic], dict[str, str]]:
    """Check a parsed file: (the checked file or None, every diagnostic, the sources read).
    With `import_helpers=False` no helper module is imported (see `_Session`)."""
    session = _Session(loader or read_file, import_helpers)
    checked = session.check_file(file)
    return checked, session.diags, session.sources


def check(file: A.RulesFile, loader: Loader | None = None) -> A.CheckedFile:
    """The checked file; raises `RulesError` with every error found (imports included)."""
    checked, diags, sources = check_collect(file, loader)
    if diags or checked is None:
        raise RulesError(diags, sources)
    return checked
