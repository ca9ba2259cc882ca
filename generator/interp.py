"""The interpreted matcher: runs the checked rule AST directly. It is the oracle.

In: a `CheckedFile` (or one `CheckedRuleSet` and its helpers). Out: `RuleMatcher`s with the
same interface and the same semantics as the generated ones, built by walking the pattern tree
against a node and evaluating guard and right-hand side by walking the expression tree. No
Python text is generated or evaluated here; it is deliberately simple, and slow.

Semantics (the generated code must agree): rules are tried in order; a rule's pattern yields
its matches in order (a commutative `[a, b]` first as written, then swapped; see
`match_ir.src_orders`); for each match the guard is evaluated, then the right-hand side; the
first result that is not None and not the node itself wins. A result that is not a UOp becomes
`n.const_like(result)`. `defer` raises `RewriteNotReady`.
"""

from __future__ import annotations

import importlib
import math
import operator
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rulegrad.dsl.ast import (
    CheckedFile,
    CheckedRuleSet,
    EAttr,
    EBinOp,
    EBool,
    ECall,
    EComp,
    ECompare,
    EDefer,
    EError,
    EIf,
    EIndex,
    EList,
    ELit,
    EName,
    EOpName,
    ESlice,
    EStar,
    ETuple,
    EUnary,
    Expr,
    Helper,
    Pattern,
    PBind,
    PConst,
    PVar,
    Rule,
    names_in,
)
from rulegrad.dsl.names import BUILTINS, GLOBALS, OP_NAMES, resolve_dtype
from rulegrad.runtime.dtype import DType
from rulegrad.runtime.matcher import (
    MatchStats,
    RuleMatcher,
    as_uop,
    default_dtype,
    load_helper_file,
    match_stats,
)
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.pipeline import Pass, Pipeline
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo
from rulegrad.runtime.uop import UOp, const_value

from .contexts import context_classes
from .match_ir import root_ops, src_orders
from .paths import display_path, in_package

_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod,
}
_CMPOPS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge, "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b, "is": operator.is_, "is not": operator.is_not,
}
Bound = dict[str, UOp]


def load_helpers(helpers: tuple[Helper, ...] | list[Helper]) -> dict[str, Any]:
    """The helper functions, from the same modules the generated code imports them from."""
    out: dict[str, Any] = {}
    for h in helpers:
        if h.file is None:
            mod = importlib.import_module(h.module)
        elif in_package(h.file):
            mod = importlib.import_module(f"rulegrad.rules.{Path(h.file).stem}")
        else:
            mod = load_helper_file(h.file)
        out[h.name] = getattr(mod, h.name)
    return out


class Interpreter:
    """Pattern matching and expression evaluation over the AST of one rule set."""

    def __init__(self, helpers: dict[str, Any]):
        self.helpers = helpers
        self._consts: dict[int, Any] = {}  # id(constant expr) -> its value
        # id(node pattern) -> (it, the ops it matches): resolved once, not at every node tried
        # (the pattern is kept, so its id is not reused by another while it is here)
        self._roots: dict[int, tuple[Pattern, frozenset[Ops]]] = {}

    # ------------------------------------------------------------------ patterns
    def match(self, p: Pattern, n: UOp, bound: Bound, root: bool = False) -> Iterator[Bound]:
        """Every way `p` matches `n`, extending `bound` (the root's op is checked by dispatch)."""
        if isinstance(p, PVar):
            if self._dtype_ok(p.dtype, n):
                yield from _bind(p.name, n, bound)
        elif isinstance(p, PConst):
            if n.op is Ops.CONST and const_eq(n.arg, p.value, n.dtype) \
                    and self._dtype_ok(p.dtype, n):
                yield bound
        elif isinstance(p, PBind):
            for b in self.match(p.pattern, n, bound, root):
                yield from _bind(p.name, n, b)
        else:
            if not root:
                known = self._roots.get(id(p))
                if known is None:
                    known = self._roots[id(p)] = (p, root_ops(p))
                if n.op not in known[1]:
                    return
            if not self._dtype_ok(p.dtype, n):
                return
            if p.arg is not None and not self._field_eq(n.arg, p.arg):
                return
            if p.tag is not None and not self._field_eq(n.tag, p.tag):
                return
            if p.srcs is None:
                yield bound
                return
            count = len(p.srcs)
            if len(n.src) != count and not (p.ellipsis and len(n.src) >= count):
                return
            if p.rest is not None:  # `*rest`: the sources after the fixed ones
                bound = {**bound, p.rest: n.src[count:]}
            for order in src_orders(p):
                yield from self._sequence(p.srcs, [n.src[i] for i in order], bound)

    def _sequence(self, pats: tuple[Pattern, ...], nodes: list[UOp], bound: Bound
                  ) -> Iterator[Bound]:
        if not pats:
            yield bound
            return
        for b in self.match(pats[0], nodes[0], bound):
            yield from self._sequence(pats[1:], nodes[1:], b)

    def _dtype_ok(self, ref: Any, n: UOp) -> bool:
        if ref is None:
            return True
        allowed = resolve_dtype(ref.name)
        assert allowed is not None, ref
        if len(allowed) == 1:
            return n.dtype is next(iter(allowed))
        return n.dtype in allowed

    def _field_eq(self, value: Any, e: Expr) -> bool:
        if isinstance(e, ELit) and e.value is None:
            return value is None
        key = id(e)
        if key not in self._consts:
            self._consts[key] = self.evaluate(e, {}, None)
        return bool(value == self._consts[key])

    # ------------------------------------------------------------------ expressions
    def evaluate(self, e: Expr, caps: Bound, ctx: Any) -> Any:
        ev = self.evaluate
        if isinstance(e, ELit):
            return e.value
        if isinstance(e, EName):
            if e.name in caps:
                return caps[e.name]
            if e.name == "ctx":
                return ctx
            if e.name in self.helpers:
                return self.helpers[e.name]
            return BUILTINS[e.name]
        if isinstance(e, EOpName):
            if e.name in GLOBALS:
                return GLOBALS[e.name]
            return Ops[e.name] if e.name in OP_NAMES else self.helpers[e.name]
        if isinstance(e, EAttr):
            return getattr(ev(e.obj, caps, ctx), e.attr)
        if isinstance(e, EIndex):
            obj = ev(e.obj, caps, ctx)
            if isinstance(e.index, ESlice):
                parts = [None if x is None else ev(x, caps, ctx)
                         for x in (e.index.lower, e.index.upper, e.index.step)]
                return obj[slice(*parts)]
            return obj[ev(e.index, caps, ctx)]
        if isinstance(e, ECall):
            if isinstance(e.func, EOpName) and e.func.name in OP_NAMES:
                return self._construct(Ops[e.func.name], e, caps, ctx)
            fn = ev(e.func, caps, ctx)
            args = self._args(e.args, caps, ctx)
            return fn(*args, **{k: ev(v, caps, ctx) for k, v in e.kwargs})
        if isinstance(e, EBinOp):
            return _BINOPS[e.op](ev(e.left, caps, ctx), ev(e.right, caps, ctx))
        if isinstance(e, EUnary):
            value = ev(e.operand, caps, ctx)
            return (not value) if e.op == "not" else -value
        if isinstance(e, ECompare):
            left = ev(e.left, caps, ctx)
            for op, right_e in zip(e.ops, e.rights):
                right = ev(right_e, caps, ctx)
                if not _CMPOPS[op](left, right):
                    return False
                left = right
            return True
        if isinstance(e, EBool):
            value: Any = None
            for item in e.values:  # Python's and/or: short-circuit, return the operand
                value = ev(item, caps, ctx)
                if (e.op == "and") != bool(value):
                    return value
            return value
        if isinstance(e, EIf):
            return ev(e.then, caps, ctx) if ev(e.cond, caps, ctx) else ev(e.orelse, caps, ctx)
        if isinstance(e, ETuple):
            return tuple(ev(i, caps, ctx) for i in e.items)
        if isinstance(e, EList):
            return [ev(i, caps, ctx) for i in e.items]
        if isinstance(e, EComp):
            items = self._comprehend(e, ev(e.iter, caps, ctx), caps, ctx)
            return items if e.kind == "gen" else list(items)
        raise TypeError(f"cannot evaluate {type(e).__name__}")

    def _comprehend(self, e: EComp, iterable: Any, caps: Bound, ctx: Any) -> Iterator[Any]:
        # lazy, like Python's generator expressions (`all(...)` stops at the first False)
        for item in iterable:
            values = (item,) if len(e.names) == 1 else tuple(item)
            if len(values) != len(e.names):
                raise ValueError(f"cannot unpack {len(values)} values into {e.names}")
            inner = {**caps, **dict(zip(e.names, values))}
            if all(self.evaluate(c, inner, ctx) for c in e.conds):
                yield self.evaluate(e.elt, inner, ctx)

    def _args(self, args: tuple[Expr, ...], caps: Bound, ctx: Any) -> list[Any]:
        out: list[Any] = []
        for a in args:  # `*xs` spreads its items
            if isinstance(a, EStar):
                out.extend(self.evaluate(a.value, caps, ctx))
            else:
                out.append(self.evaluate(a, caps, ctx))
        return out

    def _construct(self, op: Ops, e: ECall, caps: Bound, ctx: Any) -> UOp:
        srcs = tuple(self._args(e.args, caps, ctx))
        kw = {k: self.evaluate(v, caps, ctx) for k, v in e.kwargs}
        dtype = kw["dtype"] if "dtype" in kw else default_dtype(op, srcs)
        return UOp(op, dtype, srcs, kw.get("arg"), kw.get("tag"))

    # ------------------------------------------------------------------ rules
    def bind_lets(self, rule: Rule, caps: Bound, ctx: Any, start: int, stop: int) -> Bound:
        """`where a = E, ...` from start to stop: in order, each seeing the ones before."""
        if start >= stop:
            return caps
        caps = dict(caps)
        for name, e in rule.lets[start:stop]:
            caps[name] = self.evaluate(e, caps, ctx)
        return caps

    def guard(self, rule: Rule, caps: Bound, ctx: Any) -> Bound | None:
        """The guard's steps (the lets each names, then its terms): the captures and the lets
        bound so far when it holds, else None."""
        for start, stop, conds in rule.guard_steps():
            caps = self.bind_lets(rule, caps, ctx, start, stop)
            if not all(self.evaluate(c, caps, ctx) for c in conds):
                return None
        return caps

    def apply(self, rule: Rule, n: UOp, caps: Bound, ctx: Any) -> UOp | None:
        """Guard, then right-hand side, of one match."""
        caps = self.guard(rule, caps, ctx)
        if caps is None:
            return None
        caps = self.bind_lets(rule, caps, ctx, rule.guard_lets, len(rule.lets))
        if isinstance(rule.rhs, EDefer):
            raise RewriteNotReady
        if isinstance(rule.rhs, EError):
            raise RuntimeError(self.evaluate(rule.rhs.message, caps, ctx))
        return as_uop(n, self.evaluate(rule.rhs, caps, ctx))


def _bind(name: str | None, n: UOp, bound: Bound) -> Iterator[Bound]:
    if name is None:
        yield bound
    elif name in bound:
        if bound[name] is n:  # a repeated name means the same node
            yield bound
    else:
        yield {**bound, name: n}


def const_eq(arg: Any, value: Any, dtype: DType | None = None) -> bool:
    """A CONST's arg equals a pattern's constant (a NaN pattern matches a NaN arg; a float
    literal is compared as the CONST's `dtype` holds it, as UOp.const rounds)."""
    if isinstance(value, float) and math.isnan(value):
        return bool(arg != arg)
    if dtype is not None and type(value) is float and dtype.is_float:
        value = const_value(dtype, value)
    return bool(arg == value)


def _per_op(interp: Interpreter, rules: list[tuple[int, Rule]], infos: tuple[RuleInfo, ...],
            home: dict[str, MatchStats | None]) -> Callable:
    """The function of one root op: (node, ctx) -> (new node, RuleInfo) | None."""

    def per_op(n: UOp, ctx: Any) -> tuple[UOp, RuleInfo] | None:
        for k, rule in rules:
            for caps in interp.match(rule.pattern, n, {}, root=True):
                st = home["st"]  # counting may be switched on later (a trace)
                if st is not None:
                    st.attempts[k] += 1
                r = interp.apply(rule, n, caps, ctx)
                if r is not None and r is not n:
                    return r, infos[k]
        return None

    return per_op


def interpret_ruleset(rs: CheckedRuleSet, helpers: dict[str, Any]) -> RuleMatcher:
    """An interpreted matcher for one rule set."""
    interp = Interpreter(helpers)
    infos = tuple(RuleInfo(r.name, display_path(r.span.path) if r.span.line else r.span.path,
                           r.span.line, " ".join(r.text.split())) for r in rs.rules)
    home = {"st": match_stats(rs.name, infos)}
    per_rule = [(k, rule, root_ops(rule.pattern)) for k, rule in enumerate(rs.rules)]
    table: dict[Ops, Callable] = {}
    for op in Ops:
        rules = [(k, rule) for k, rule, ops in per_rule if op in ops]
        if rules:
            table[op] = _per_op(interp, rules, infos, home)
    return RuleMatcher(rs.name, infos, table, home=(home, "st"))


def all_helpers(cf: CheckedFile) -> list[Helper]:
    """The helpers a rule of `cf` may call: its own `use`s and those of the files it imports."""
    out: list[Helper] = []
    stack = [cf]
    while stack:
        f = stack.pop()
        out += f.helpers
        stack += f.imported
    return out


def interpret_file(cf: CheckedFile) -> dict[str, RuleMatcher]:
    """An interpreted matcher for every rule set of a checked file, by set name."""
    return interpret_all(cf)[0]


def interpret_all(cf: CheckedFile) -> tuple[dict[str, RuleMatcher], dict[str, Pipeline]]:
    """The interpreted matchers of a checked file, and its pipelines built over them (a
    pipeline is also a name its rules may call: `kernel(SINK(st))`)."""
    matchers, pipelines, _ = interpret_with_names(cf)
    return matchers, pipelines


def interpret_with_names(cf: CheckedFile) -> tuple[dict[str, RuleMatcher], dict[str, Pipeline],
                                                   dict[str, Any]]:
    """`interpret_all`, and the names the file's rules may call: helpers, declared classes,
    definitions and pipelines (for a matcher of one of its rules alone)."""
    helpers = load_helpers(all_helpers(cf))
    contexts = tuple(c for f in _all_files(cf) for c in f.file.contexts)
    defs = tuple(d for f in _all_files(cf) for d in f.file.defs)
    later = frozenset(cp.pipeline.name for f in _all_files(cf) for cp in f.pipelines)
    helpers.update(context_classes(contexts, helpers, defs, later))  # the generated classes
    matchers = {rs.name: interpret_ruleset(rs, helpers) for rs in cf.rulesets}
    pipelines: dict[str, Pipeline] = {}
    for cp in cf.pipelines:
        passes = []
        for ps in cp.pipeline.passes:
            if ps.ruleset in matchers:
                m = matchers[ps.ruleset]
            else:  # an imported set: interpreted from the file that defines it
                f = next(f for f in _all_files(cf) for rs in f.rulesets if rs.name == ps.ruleset)
                m = interpret_all(f)[0][ps.ruleset]
            shared = any(q.name == ps.ctx for q in cp.pipeline.passes)
            ctx = ps.ctx if ps.ctx is None or shared else helpers[ps.ctx]
            passes.append(Pass(ps.name, ps.ruleset, m, ps.bottom_up, ctx, ps.until_settled,
                               ps.collect, ps.spec, f"{display_path(ps.span.path)}:{ps.span.line}"))
        pipelines[cp.pipeline.name] = Pipeline(cp.pipeline.name, tuple(passes))
    helpers.update(pipelines)  # the interpreters hold this dict: rules see the pipelines
    if defs:  # and so do the definitions (one namespace, as a generated module's), each file's
        space = helpers[defs[0].name].__globals__
        for f in _all_files(cf)[1:]:  # an imported file's, where its definitions name them
            if {cp.pipeline.name for cp in f.pipelines} & names_in([(d.body, d.lets)
                                                                   for d in f.file.defs]):
                space.update(interpret_all(f)[1])
        space.update(pipelines)
    return matchers, pipelines, helpers


def _all_files(cf: CheckedFile) -> list[CheckedFile]:
    out, stack = [], [cf]
    while stack:
        f = stack.pop()
        out.append(f)
        stack += f.imported
    return out
