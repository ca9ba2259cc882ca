"""Printer: `RulesFile` -> canonical `.rules` text.

In: an AST (from the parser, or built by hand). Out: text that parses back to an equal AST
(`strip_spans(parse(print_file(f))) == strip_spans(f)`). Comments are not kept. Layout: `use` and
`from` lines, then each rule set with one rule per line, labels and `->` aligned within a block;
expressions are parenthesized by precedence, only where needed.

Trees the parser cannot produce have no text of their own and print as the nearest form that
parses (e.g. a prefix bind `x:y` of a plain capture prints as `y as x`).
"""

from __future__ import annotations

import math
from typing import Any

from . import ast as A

# precedence levels, loosest first (Python's)
IF, OR, AND, NOT, CMP, ARITH, TERM, UNARY, PRIMARY = range(1, 10)
_BINOP_LEVEL = {"+": ARITH, "-": ARITH, "*": TERM, "/": TERM, "//": TERM, "%": TERM}


def _number(v: int | float) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return repr(v)


def _literal(v: Any) -> str:
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, (int, float)):
        return _number(v)
    return repr(v)


def _level(e: Any) -> int:
    if isinstance(e, A.EIf):
        return IF
    if isinstance(e, A.EBool):
        return OR if e.op == "or" else AND
    if isinstance(e, A.EUnary):
        return NOT if e.op == "not" else UNARY
    if isinstance(e, A.ECompare):
        return CMP
    if isinstance(e, A.EBinOp):
        return _BINOP_LEVEL[e.op]
    if isinstance(e, A.ELit) and type(e.value) in (int, float) and e.value < 0:
        return UNARY  # a negative number prints with its sign
    return PRIMARY


def expr(e: Any, min_level: int = IF) -> str:
    """An expression, parenthesized when its precedence is below `min_level`."""
    text = _expr(e)
    return f"({text})" if _level(e) < min_level else text


def _expr(e: Any) -> str:
    if isinstance(e, A.ELit):
        return _literal(e.value)
    if isinstance(e, (A.EName, A.EOpName)):
        return e.name
    if isinstance(e, A.EAttr):
        obj = expr(e.obj, PRIMARY)
        if isinstance(e.obj, A.ELit) and isinstance(e.obj.value, (int, float)):
            obj = f"({obj})"  # `1.x` would lex as a float
        return f"{obj}.{e.attr}"
    if isinstance(e, A.EIndex):
        return f"{expr(e.obj, PRIMARY)}[{_subscript(e.index)}]"
    if isinstance(e, A.ESlice):
        return _slice(e)
    if isinstance(e, A.ECall):
        if len(e.args) == 1 and not e.kwargs and isinstance(e.args[0], A.EComp) and (
                e.args[0].kind == "gen"):
            return f"{expr(e.func, PRIMARY)}({_comp_body(e.args[0])})"
        args = [expr(a) for a in e.args] + [f"{k}={expr(v)}" for k, v in e.kwargs]
        return f"{expr(e.func, PRIMARY)}({', '.join(args)})"
    if isinstance(e, A.EBinOp):
        level = _BINOP_LEVEL[e.op]
        return f"{expr(e.left, level)} {e.op} {expr(e.right, level + 1)}"
    if isinstance(e, A.EUnary):
        if e.op == "not":
            return f"not {expr(e.operand, NOT)}"
        operand = expr(e.operand, UNARY)
        return f"-{operand}" if not operand.startswith("-") else f"- {operand}"
    if isinstance(e, A.ECompare):
        parts = [expr(e.left, ARITH)]
        for op, right in zip(e.ops, e.rights):
            parts += [op, expr(right, ARITH)]
        return " ".join(parts)
    if isinstance(e, A.EBool):
        inner = AND if e.op == "or" else NOT
        return f" {e.op} ".join(expr(v, inner) for v in e.values)
    if isinstance(e, A.EIf):
        return f"{expr(e.then, OR)} if {expr(e.cond, OR)} else {expr(e.orelse, IF)}"
    if isinstance(e, A.ETuple):
        if len(e.items) == 1:
            return f"({expr(e.items[0])},)"
        return "(" + ", ".join(expr(x) for x in e.items) + ")"
    if isinstance(e, A.EList):
        return "[" + ", ".join(expr(x) for x in e.items) + "]"
    if isinstance(e, A.EComp):
        body = _comp_body(e)
        return f"({body})" if e.kind == "gen" else f"[{body}]"
    if isinstance(e, A.EStar):
        return f"*{expr(e.value, OR)}"
    if isinstance(e, A.EError):
        return f"error {expr(e.message)}"
    if isinstance(e, A.EDefer):
        return "defer"
    raise TypeError(f"not an expression: {e!r}")


def _comp_body(e: A.EComp) -> str:
    text = f"{expr(e.elt)} for {', '.join(e.names)} in {expr(e.iter, OR)}"
    return text + "".join(f" if {expr(c, OR)}" for c in e.conds)


def _slice(e: A.ESlice) -> str:
    text = (expr(e.lower) if e.lower else "") + ":" + (expr(e.upper) if e.upper else "")
    return text + (":" + expr(e.step) if e.step is not None else "")


def _subscript(e: Any) -> str:
    if isinstance(e, A.ETuple) and e.items:
        return ", ".join(expr(x) for x in e.items) + ("," if len(e.items) == 1 else "")
    return expr(e)


# ------------------------------------------------------------------------ patterns
def _dtype(d: A.DTypeRef | None) -> str:
    return f":{d.name}" if d is not None else ""


def pattern(p: Any) -> str:
    if isinstance(p, A.PBind):
        inner = p.pattern
        prefix_ok = isinstance(inner, (A.PNode, A.PConst)) or (
            isinstance(inner, A.PVar) and inner.name is None)
        if p.postfix or not prefix_ok:
            return f"{pattern(inner)} as {p.name}"
        return f"{p.name}:{pattern(inner)}"
    if isinstance(p, A.PVar):
        return (p.name or "_") + _dtype(p.dtype)
    if isinstance(p, A.PConst):
        value = p.value
        text = repr(value) if isinstance(value, bool) else _number(value)
        return text + _dtype(p.dtype)
    if isinstance(p, A.PNode):
        names = [r.name for r in p.ops]
        head = names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"
        items = [pattern(s) for s in p.srcs or ()]
        if p.rest is not None:
            items.append(f"*{p.rest}")
        elif p.ellipsis or (p.srcs is None and (p.arg is not None or p.tag is not None)):
            items.append("...")
        if p.arg is not None:
            items.append(f"arg={expr(p.arg)}")
        if p.tag is not None:
            items.append(f"tag={expr(p.tag)}")
        if p.srcs is None and not items:
            return head + _dtype(p.dtype)
        open_, close = ("[", "]") if p.commutative else ("(", ")")
        return f"{head}{open_}{', '.join(items)}{close}{_dtype(p.dtype)}"
    raise TypeError(f"not a pattern: {p!r}")


# ------------------------------------------------------------------------ rules and files
def rule_parts(r: A.Rule) -> tuple[str, str, str]:
    """(label, pattern-and-guard, right-hand side) of a rule."""
    label = f"{r.name}:" if r.named else ""
    left = pattern(r.pattern) + (f" if {expr(r.guard)}" if r.guard is not None else "")
    lets = ", ".join(f"{name} = {expr(e)}" for name, e in r.lets)
    return label, left, expr(r.rhs) + (f" where {lets}" if lets else "")


def print_rule(r: A.Rule) -> str:
    label, left, rhs = rule_parts(r)
    return (f"{label} " if label else "") + f"{left} -> {rhs}"


def print_pass(p: A.Pass) -> str:
    opts = ["bottom_up" if p.bottom_up else "top_down"]
    if p.ctx is not None:
        opts.append(f"ctx={p.ctx}")
    opts.append("until_settled" if p.until_settled else "once")
    opts += ["collect"] * p.collect + ([f"spec={p.spec}"] if p.spec else [])
    return f"pass {p.name} = {p.ruleset} {' '.join(opts)}"


def _string(s: str) -> str:
    return f'"{s}"' if '"' not in s and "\\" not in s and "\n" not in s else repr(s)


class _Lines:
    """Output lines; `goto(line)` starts a new line, padding with blank lines so that an item
    keeps the line it had in the source (when known and still ahead)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def goto(self, line: int, blank: bool = False) -> None:
        if blank and self.lines and not line:
            self.lines.append("")
        self.lines.append("")
        while line > len(self.lines):
            self.lines.insert(len(self.lines) - 1, "")

    def write(self, text: str) -> None:
        self.lines[-1] += text

    @property
    def line(self) -> int:
        return len(self.lines)


def _block(out: _Lines, b: A.RuleBlock) -> None:
    out.write("{")
    parts = [rule_parts(r) for r in b.rules]
    label_w = max((len(lab) for lab, _, _ in parts), default=0)
    lefts = [len(left) for _, left, _ in parts if len(left) <= 60]
    left_w = max(lefts, default=0)
    for i, (r, (label, left, rhs)) in enumerate(zip(b.rules, parts)):
        head = (label.ljust(label_w) + " ") if label_w else ""
        text = f"{head}{left.ljust(left_w)} -> {rhs}"
        if i == 0 and r.span.line == out.line:  # written on the line of the `{`
            out.write(" " + f"{label + ' ' if label else ''}{left} -> {rhs}")
        else:
            out.goto(r.span.line)
            out.write("  " + text)
    if b.rules and b.span.end_line == b.rules[-1].span.line == out.line:
        out.write(" }")
    else:
        out.goto(0)
        out.write("}")


def print_def(d: A.Def) -> str:
    """`def name(params) -> EXPR where ...` on one line."""
    params = ", ".join(n if v is None else f"{n}={expr(v)}" for n, v in d.params)
    lets = ", ".join(f"{name} = {expr(e)}" for name, e in d.lets)
    return f"def {d.name}({params}) -> {expr(d.body)}" + (f" where {lets}" if lets else "")


def _context(out: _Lines, c: A.Context) -> None:
    out.goto(c.span.line, blank=True)
    inputs = f"({', '.join(c.inputs)})" if c.inputs else ""
    out.write(f"{'record' if c.record else 'context'} {c.name}{inputs} {{")
    for fd in c.fields:
        out.goto(fd.span.line)
        out.write(f"  {fd.name}: {fd.type}" + (f" = {expr(fd.default)}" if fd.default else ""))
    for m in c.methods:
        out.goto(m.span.line)
        params = ", ".join(n if d is None else f"{n}={expr(d)}" for n, d in m.params)
        lets = ", ".join(f"{name} = {expr(e)}" for name, e in m.lets)
        out.write(f"  {m.name}({params}) -> {expr(m.body)}" + (f" where {lets}" if lets else ""))
    out.goto(0)
    out.write("}")


def print_file(f: A.RulesFile) -> str:
    """The canonical text of a rules file. When the tree has source spans, every declaration and
    rule keeps its source line (blank lines fill in for comments), so the derived names of
    unnamed rules (`<set>_<line>`) survive a parse -> print -> parse round trip."""
    out = _Lines()
    for u in f.uses:
        out.goto(u.span.line)
        out.write(f"{'analysis' if u.analysis else 'use'} {u.module}: {', '.join(u.names)}")
    for i in f.imports:
        out.goto(i.span.line)
        out.write(f"from {_string(i.path)} import {', '.join(i.names)}")
    for c in sorted((*f.defs, *f.contexts), key=lambda c: c.span.line):  # in source order
        if isinstance(c, A.Def):
            out.goto(c.span.line, blank=True)
            out.write(print_def(c))
        else:
            _context(out, c)
    for rs in f.rulesets:
        out.goto(rs.span.line, blank=True)
        out.write(f"rules {rs.name} = ")
        for k, term in enumerate(rs.terms):
            if k:
                out.write(" + ")
            if isinstance(term, A.SetRef):
                out.write(term.name)
            else:
                _block(out, term)
    for pl in f.pipelines:
        out.goto(pl.span.line, blank=True)
        out.write(f"pipeline {pl.name} {{")
        for ps in pl.passes:
            out.goto(ps.span.line)
            out.write("  " + print_pass(ps))
        out.goto(0)
        out.write("}")
    return "\n".join(line.rstrip() for line in out.lines) + "\n"
