"""Turn the match IR of a rules file into the text of one Python matcher module.

In: a `CheckedFile` and the `MatchIR` of each of its rule sets. Out: the module's source text,
deterministic (same input, same bytes; no timestamps, no absolute paths).

All decisions are made here, in Python: the line structure of every per-op function (nested
`if`s following the decision tree, loads of sources as plain locals, each rule's guard and
right-hand side inlined at its leaf, or called as a small function when a rule has many leaves),
the module constants, the imports. `templates/matcher.py.j2` only prints the `ModuleModel`.

Per rule set, two dispatch tables are printed, op -> function: the fast one (`rewrite`) and a
traced one that also names the firing rule and reports attempts to a stats object
(`rewrite_with_rule`, and `RULEGRAD_MATCH_STATS=1`).
"""

from __future__ import annotations

import hashlib
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from rulegrad.dsl.ast import (
    CheckedFile,
    ECall,
    EDefer,
    EIf,
    ELit,
    EName,
    EOpName,
    Expr,
    Helper,
    Rule,
    RulesFile,
)
from rulegrad.dsl.names import BUILTINS, GLOBALS, OP_NAMES
from rulegrad.runtime.dtype import DType

from .match_ir import (
    ArgTest,
    Branch,
    ConstTest,
    CountTest,
    DTypeTest,
    Leaf,
    MatchIR,
    Node,
    OpTest,
    SameTest,
    TagTest,
    Test,
    lower,
    paths_of,
)
from .match_ir import Path as IRPath
from .paths import display_path, helper_source, sha256_file
from .pyexpr import Scope, py_literal, pyexpr

TEMPLATE_DIR = Path(__file__).parent / "templates"
# a rule whose code would appear at more leaves than this becomes a function called from them
INLINE_LEAVES = 4
_RESERVED = re.compile(r"^n(\d+(_\d+)*)?$")


@dataclass
class FuncModel:
    name: str
    params: str
    lines: list[str]  # the body, indented relative to the def


@dataclass
class RuleModel:
    name: str
    path: str
    line: int
    text: str


@dataclass
class SetModel:
    name: str
    attr: str | None  # module attribute for the matcher (None if the name would shadow one)
    prefix: str
    rules: list[RuleModel]
    rule_funcs: list[FuncModel]
    funcs: list[FuncModel]
    fast: list[tuple[str, str]]  # (Ops.X, function)
    traced: list[tuple[str, str]]


@dataclass
class ModuleModel:
    source: str
    sha256: str
    dependencies: list[tuple[str, str]]
    helper_imports: list[str]
    constants: list[tuple[str, str]]
    sets: list[SetModel]


def _path_local(p: IRPath) -> str:
    return "n" + "_".join(str(i) for i in p)


@dataclass
class _Ctx:
    """What one module's emission has decided so far (constants, helpers)."""

    helpers: frozenset[str]
    reserved: frozenset[str]
    constants: dict[str, str] = field(default_factory=dict)  # value text -> name

    def constant(self, stem: str, value: str) -> str:
        if value not in self.constants:
            self.constants[value] = f"_{stem}{len(self.constants)}"
        return self.constants[value]


def _test_text(t: Test, cx: _Ctx) -> str:
    v = _path_local(t.path)
    if isinstance(t, OpTest):
        if len(t.ops) == 1:
            return f"{v}.op is Ops.{t.ops[0].name}"
        ops = ", ".join(f"Ops.{o.name}" for o in t.ops)
        return f"{v}.op in {cx.constant('OPS', f'frozenset({{{ops}}})')}"
    if isinstance(t, CountTest):
        return f"len({v}.src) {'==' if t.exact else '>='} {t.count}"
    if isinstance(t, DTypeTest):
        if len(t.dtypes) == 1:
            (dt,) = t.dtypes
            return f"{v}.dtype is dtypes.{_dtype_attr(dt)}"
        return f"{v}.dtype in {cx.constant('DT', f'DTYPE_CLASSES[{t.name!r}]')}"
    if isinstance(t, ConstTest):
        return f"{v}.arg != {v}.arg" if t.is_nan else f"{v}.arg == {py_literal(t.value)}"
    if isinstance(t, (ArgTest, TagTest)):
        field_ = "arg" if isinstance(t, ArgTest) else "tag"
        if isinstance(t.value, ELit) and t.value.value is None:
            return f"{v}.{field_} is None"
        return f"{v}.{field_} == {pyexpr(t.value, Scope({}, cx.helpers), 5)}"
    assert isinstance(t, SameTest)
    return f"{v} is {_path_local(t.other)}"


def _dtype_attr(dt: DType) -> str:
    # a DType's own name is always an attribute of `dtypes` (aliases resolve to it)
    return dt.name


def _used_paths(nodes: list[Node]) -> set[IRPath]:
    out: set[IRPath] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, Leaf):
            out.update(p for _, p in node.captures)
        else:
            out.update(paths_of(node.test))
            stack.extend(node.children)
    return out


def _rhs_kind(e: Expr | EDefer, captures: dict[str, IRPath]) -> str:
    """What the RHS evaluates to, as far as the generator can tell without running it:
    'defer'; 'src' (a capture below the root: a UOp that is not the root); 'uop' (a UOp);
    'const' (a plain literal: becomes a constant); 'any' (checked at run time)."""
    if isinstance(e, EDefer):
        return "defer"
    if isinstance(e, EName) and e.name in captures:
        return "src" if captures[e.name] != () else "uop"
    if isinstance(e, ELit) and isinstance(e.value, (bool, int, float)):
        return "const"
    if isinstance(e, ECall) and isinstance(e.func, EOpName) and e.func.name in OP_NAMES:
        return "uop"  # an op constructor
    return "any"


class _SetEmitter:
    """Emits the functions of one rule set."""

    def __init__(self, ir: MatchIR, prefix: str, cx: _Ctx, src_path: dict[str, str]):
        self.ir, self.prefix, self.cx, self.src_path = ir, prefix, cx, src_path
        leaves: dict[int, int] = {}
        for tree in ir.trees:
            for node in _iter_leaves(tree.nodes):
                leaves[node.rule] = leaves.get(node.rule, 0) + 1
        self.as_function = {k for k, count in leaves.items() if count > INLINE_LEAVES}
        self.rule_funcs: list[FuncModel] = []
        self.temps = [0]

    # -------------------------------------------------------------- names
    def local(self, capture: str) -> str:
        """The Python local holding a capture (renamed if it would shadow something)."""
        if capture in self.cx.reserved or _RESERVED.match(capture) or capture.startswith("_") \
                or keyword.iskeyword(capture):
            return f"c_{capture}"
        return capture

    def header(self, rule: Rule) -> list[str]:
        loc = f"{self.src_path.get(rule.span.path, rule.span.path)}:{rule.span.line}"
        lines = [f"# rule {rule.name} at {loc}"]
        if rule.text:
            lines.append("#   " + " ".join(rule.text.split()))
        return lines

    def scope(self, captures: dict[str, IRPath]) -> Scope:
        return Scope({c: self.local(c) for c in captures}, self.cx.helpers, temps=self.temps)

    # -------------------------------------------------------------- rule bodies
    def result_lines(self, rule: Rule, captures: dict[str, IRPath], traced: bool,
                     k: int) -> list[str]:
        """Guard + RHS of one rule at a leaf, captures already in their locals."""
        kind = _rhs_kind(rule.rhs, captures)
        sc = self.scope(captures)
        guard = None if rule.guard is None else pyexpr(rule.guard, sc, 1)
        if kind == "defer":
            raise_ = "raise RewriteNotReady"
            if not traced:
                return [raise_] if guard is None else [f"if {guard}:", f"    {raise_}"]
            body = [raise_] if guard is None else [f"if {guard}:", f"    {raise_}"]
            return [f"_t = _st.start({k})", *body, f"_st.stop({k}, _t, None, n)"]
        assert not isinstance(rule.rhs, EDefer)
        value = self.value_text(rule.rhs, kind, sc, captures)
        if traced:
            expr = value if guard is None else f"{_paren_if(value)} if {guard} else None"
            return [f"_t = _st.start({k})", f"_r = {expr}", f"_st.stop({k}, _t, _r, n)",
                    f"if _r is not None and _r is not n: return _r, {k}"]
        if kind == "src":
            out = [f"return {value}"]
        else:
            check = "_r is not n" if kind in ("uop", "const") else \
                "_r is not None and _r is not n"
            out = [f"_r = {value}", f"if {check}: return _r"]
        if guard is None:
            return out
        return [f"if {guard}:"] + ["    " + line for line in out]

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
        if rule.guard is not None:
            lines.append(f"if not ({pyexpr(rule.guard, sc)}): return None")
        if kind == "defer":
            lines.append("raise RewriteNotReady")
        else:
            assert not isinstance(rule.rhs, EDefer)
            kind = "uop" if kind == "src" else kind
            lines.append(f"return {self.value_text(rule.rhs, kind, sc, captures)}")
        params = ", ".join(["n", "ctx"] + [self.local(c) for c in sorted(captures)])
        self.rule_funcs.append(FuncModel(name, params, lines))
        return name

    def leaf_lines(self, leaf: Leaf, traced: bool) -> list[str]:
        rule = self.ir.rules[leaf.rule]
        captures = dict(leaf.captures)
        lines = self.header(rule)
        if leaf.rule in self.as_function:
            fn = self.rule_function(leaf.rule, rule, captures)
            args = ", ".join(["n", "ctx"] + [_path_local(captures[c]) for c in sorted(captures)])
            if traced:
                k = leaf.rule
                return lines + [f"_t = _st.start({k})", f"_r = {fn}({args})",
                                f"_st.stop({k}, _t, _r, n)",
                                f"if _r is not None and _r is not n: return _r, {k}"]
            return lines + [f"_r = {fn}({args})", "if _r is not None and _r is not n: return _r"]
        for c in sorted(captures):
            lines.append(f"{self.local(c)} = {_path_local(captures[c])}")
        return lines + self.result_lines(rule, captures, traced, leaf.rule)

    # -------------------------------------------------------------- the tree
    def nodes_lines(self, nodes: list[Node], traced: bool, loaded: frozenset[IRPath]
                    ) -> list[str]:
        lines: list[str] = []
        for node in nodes:
            if isinstance(node, Leaf):
                lines += self.leaf_lines(node, traced)
                continue
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
                for p in wanted:
                    if p not in inner:
                        body.append(f"{_path_local(p)} = {_path_local(p[:-1])}.src[{p[-1]}]")
                inner = inner | frozenset(wanted)
            body += self.nodes_lines(node.children, traced, inner)
            cond = " and ".join(_test_text(t, self.cx) for t in tests)
            lines.append(f"if {cond}:")
            lines += ["    " + line for line in body]
        return lines

    def functions(self) -> tuple[list[FuncModel], list[tuple[str, str]], list[tuple[str, str]]]:
        funcs: list[FuncModel] = []
        fast: list[tuple[str, str]] = []
        traced: list[tuple[str, str]] = []
        for tree in self.ir.trees:
            op = tree.op.name
            name = f"_{self.prefix}_{op}"
            body = self.nodes_lines(tree.nodes, False, frozenset({()})) + ["return None"]
            funcs.append(FuncModel(name, "n, ctx", body))
            fast.append((f"Ops.{op}", name))
        for tree in self.ir.trees:
            op = tree.op.name
            name = f"_{self.prefix}_{op}_t"
            body = self.nodes_lines(tree.nodes, True, frozenset({()})) + ["return None"]
            funcs.append(FuncModel(name, "n, ctx, _st", body))
            traced.append((f"Ops.{op}", name))
        return funcs, fast, traced


def _paren_if(text: str) -> str:
    return f"({text})" if " if " in text else text


def _iter_leaves(nodes: list[Node]) -> list[Leaf]:
    out: list[Leaf] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if isinstance(node, Leaf):
            out.append(node)
        else:
            stack.extend(reversed(node.children))
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


def _helpers(cf: CheckedFile) -> list[Helper]:
    found: dict[str, Helper] = {}
    for f in _all_files(cf):
        for h in f.helpers:
            prev = found.get(h.name)
            if prev is not None and (prev.module, prev.file) != (h.module, h.file):
                raise ValueError(f"helper {h.name!r} comes from two modules: "
                                 f"{prev.module} and {h.module}")
            found[h.name] = h
    return [found[k] for k in sorted(found)]


def module_model(cf: CheckedFile, irs: list[MatchIR], out_dir: str | Path | None) -> ModuleModel:
    """Decide everything the template prints."""
    files = _all_files(cf)
    src_path = {f.file.path: display_path(f.file.path, out_dir) for f in files}
    helpers = _helpers(cf)
    helper_names = frozenset(h.name for h in helpers)
    reserved = frozenset(BUILTINS) | helper_names | frozenset(GLOBALS) | {"ctx"}
    cx = _Ctx(helper_names, reserved)
    imports: list[str] = []
    for h in helpers:
        hs = helper_source(h, out_dir)
        if hs.module is not None:
            imports.append(f"from {hs.module} import {hs.name}")
        else:
            imports.append(f"{hs.name} = helper_from(__file__, {hs.relpath!r}, {hs.name!r})")
    sets: list[SetModel] = []
    for i, ir in enumerate(irs):
        prefix = f"s{i}" if not ir.name.isidentifier() else ir.name
        em = _SetEmitter(ir, prefix, cx, src_path)
        funcs, fast, traced = em.functions()
        rules = [RuleModel(r.name, src_path.get(r.span.path, r.span.path), r.span.line,
                           " ".join(r.text.split())) for r in ir.rules]
        attr = ir.name if ir.name.isidentifier() and ir.name not in reserved and \
            not keyword.iskeyword(ir.name) and ir.name not in _MODULE_NAMES else None
        sets.append(SetModel(ir.name, attr, prefix, rules, em.rule_funcs, funcs, fast, traced))
    return ModuleModel(
        source=src_path[cf.file.path],
        sha256=_sha(cf.file),
        dependencies=[(src_path[f.file.path], _sha(f.file)) for f in files[1:]],
        helper_imports=imports,
        constants=[(name, value) for value, name in cx.constants.items()],
        sets=sets,
    )


# names the module itself defines or imports; a rule set is not exported under these
_MODULE_NAMES = frozenset({"SOURCE", "SOURCE_SHA256", "DEPENDENCIES", "MATCHERS", "RuleMatcher",
                           "RuleInfo", "RewriteNotReady", "helper_from", "n", "prod"})


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
    return env.get_template("matcher.py.j2").render(m=model)


def emit_module(cf: CheckedFile, out_dir: str | Path | None = None) -> str:
    """The generated module for a checked file (lowering every rule set)."""
    irs = [lower(rs) for rs in cf.rulesets]
    return render(module_model(cf, irs, out_dir))

