"""Why a rule did or did not fire on a node: the first test of its decision tree that failed.

In: a checked `Rule`, the helpers its guard and right-hand side call, a node and the pass's
ctx. Out: an `Explanation`: `no match` with the failing structural test (op, source count,
dtype, constant, argument, tag, repeated capture) named in words, `guard false` / `guard
raised`, `declined` (the right-hand side gave None or the node itself), or `fires`.

It walks the same tests, in the same order, as the generated code does (`match_ir`): the
rule's pattern is expanded into its alternatives (both orders of a commutative pattern), each a
sorted list of tests on source paths. Of the alternatives, the one that got furthest is
reported. `RuleIndex` finds the checked rule behind a matcher's `RuleInfo` (by file and line).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegrad.dsl import load, printer
from rulegrad.dsl.ast import CheckedFile, EDefer, Rule
from rulegrad.runtime.matcher import as_uop
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo
from rulegrad.runtime.uop import UOp

from .interp import Interpreter, const_eq, interpret_with_names
from .match_ir import (
    ArgTest,
    ConstTest,
    CountTest,
    DTypeTest,
    OpTest,
    SameTest,
    TagTest,
    Test,
    alternatives,
    ordered,
    root_ops,
)
from .match_ir import (
    Path as SrcPath,
)
from .paths import PACKAGE_RULES_DIR


@dataclass(frozen=True)
class Explanation:
    verdict: str  # "fires", "declined", "guard false", "guard raised", "no match"
    detail: str

    def __str__(self) -> str:
        return f"{self.verdict}: {self.detail}"


def _where(path: SrcPath) -> str:
    return "the node" if not path else "".join(f".src[{i}]" for i in path).lstrip(".")


def _at(node: UOp, path: SrcPath) -> UOp | tuple[UOp, ...] | None:
    """The node at `path`; a variadic capture's path ends in -(start + 1): node.src[start:]
    (match_ir.rest_path), a tuple, as the generated code binds it."""
    for i in path:
        if i < 0:
            return node.src[-i - 1:]
        if i >= len(node.src):
            return None
        node = node.src[i]
    return node


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fails(t: Test, root: UOp, interp: Interpreter) -> str | None:
    """Why test `t` fails at `root`, or None when it passes."""
    n = _at(root, t.path)
    if n is None:
        return f"{_where(t.path)} does not exist"
    where = _where(t.path)
    if isinstance(t, OpTest):
        if n.op in t.ops:
            return None
        need = " | ".join(op.name for op in t.ops)
        return f"{where} is {n.op.name}; the rule needs {need}"
    if isinstance(t, CountTest):
        ok = len(n.src) == t.count if t.exact else len(n.src) >= t.count
        return None if ok else (f"{where} has {len(n.src)} sources; the rule needs "
                                f"{'exactly' if t.exact else 'at least'} {t.count}")
    if isinstance(t, DTypeTest):
        return None if n.dtype in t.dtypes else f"{where} has dtype {n.dtype.name}, not {t.name}"
    if isinstance(t, ConstTest):
        if const_eq(n.arg, t.value, n.dtype):
            return None
        return f"{where} is the constant {_short(n.arg)}; the rule needs {t.value!r}"
    if isinstance(t, ArgTest | TagTest):
        field = "arg" if isinstance(t, ArgTest) else "tag"
        value = getattr(n, field)
        if interp._field_eq(value, t.value):
            return None
        want = interp.evaluate(t.value, {}, None)
        return f"{where}.{field} is {_short(value)}; the rule needs {_short(want)}"
    if isinstance(t, SameTest):
        other = _at(root, t.other)
        if other is n:
            return None
        return (f"{where} and {_where(t.other)} must be the same node (a repeated capture), "
                "but they differ")
    raise TypeError(f"unknown test {t!r}")


def explain(rule: Rule, helpers: dict[str, Any], node: UOp, ctx: Any = None) -> Explanation:
    """Why `rule` does or does not rewrite `node` (see the module docstring)."""
    ops = root_ops(rule.pattern)
    if node.op not in ops:
        need = " | ".join(sorted(op.name for op in ops)) if len(ops) < 8 else "another op"
        return Explanation("no match", f"the node is {node.op.name}; the rule's root is {need}")
    interp = Interpreter(helpers)
    best: tuple[int, str] | None = None
    for tests, bound in alternatives(rule.pattern, (), {}, root=True):
        steps = ordered(tests)
        for k, t in enumerate(steps):
            why = _fails(t, node, interp)
            if why is not None:
                if best is None or k > best[0]:
                    best = (k, why)
                break
        else:
            caps = {name: _at(node, path) for name, path in bound.items()}
            return _apply(rule, interp, node, caps, ctx)  # type: ignore[arg-type]
    assert best is not None
    return Explanation("no match", best[1])


def _apply(rule: Rule, interp: Interpreter, node: UOp, caps: dict[str, UOp],
           ctx: Any) -> Explanation:
    if rule.guard is not None:
        try:
            bound = interp.guard(rule, caps, ctx)
            ok, caps = bound is not None, bound or caps
        except Exception as e:  # a guard that raises is an answer too
            return Explanation("guard raised", f"{type(e).__name__}: {e}")
        if not ok:
            return Explanation("guard false", "the pattern matches, but the guard "
                               f"`{printer.expr(rule.guard)}` is false")
    if isinstance(rule.rhs, EDefer):
        return Explanation("declined", "the rule defers (waits for its siblings)")
    try:
        caps = interp.bind_lets(rule, caps, ctx, rule.guard_lets, len(rule.lets))
        out = as_uop(node, interp.evaluate(rule.rhs, caps, ctx))
    except RewriteNotReady:
        return Explanation("declined", "the right-hand side deferred (not ready)")
    except Exception as e:
        return Explanation("guard raised", f"the right-hand side raised {type(e).__name__}: {e}")
    if out is None or out is node:
        return Explanation("declined", "the pattern matches, but the right-hand side gave "
                           + ("None" if out is None else "the node itself"))
    return Explanation("fires", f"it rewrites the node to {out.op.name}")


class RuleIndex:
    """The checked rules (and their helpers) behind `RuleInfo`s, loaded once per file."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[dict[tuple[str, int], Rule], dict[str, Any]] | None] = {}

    def _resolve(self, path: str) -> Path:
        if path.startswith("rules/") and (PACKAGE_RULES_DIR / path[6:]).is_file():
            return PACKAGE_RULES_DIR / path[6:]
        return Path(path)

    def _load(self, path: str) -> tuple[dict[tuple[str, int], Rule], dict[str, Any]] | None:
        if path not in self._files:
            try:
                cf = load(str(self._resolve(path)))
            except Exception:  # a file that no longer loads: nothing to explain with
                self._files[path] = None
                return None
            rules: dict[tuple[str, int], Rule] = {}
            stack: list[CheckedFile] = [cf]
            while stack:
                f = stack.pop()
                stack += f.imported
                for rs in f.rulesets:
                    for r in rs.rules:
                        rules[(r.name, r.span.line)] = r
            self._files[path] = (rules, interpret_with_names(cf)[2])  # definitions too
        return self._files[path]

    def rule(self, info: RuleInfo) -> tuple[Rule, dict[str, Any]] | None:
        """The checked rule of `info` and the helpers it may call, or None if not found."""
        loaded = self._load(info.path)
        if loaded is None:
            return None
        rules, helpers = loaded
        rule = rules.get((info.name, info.line))
        return None if rule is None else (rule, helpers)
