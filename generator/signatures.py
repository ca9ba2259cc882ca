"""Helper calls checked against the helpers' Python signatures, when rules are compiled.

In: a `CheckedFile` (its helpers are importable: the checker loaded them). Out: nothing, or a
`RulesError` with one located diagnostic per call a helper cannot take (too many or too few
arguments, a keyword it does not have), so that `rulegrad gen` reports it at `file:line:col`
instead of the first graph that reaches the rule raising a TypeError.
"""

from __future__ import annotations

import inspect
from dataclasses import fields, is_dataclass
from typing import Any

from rulegrad.dsl.ast import CheckedFile, ECall, EName, EStar, RuleBlock
from rulegrad.dsl.errors import Diagnostic, RulesError

from .interp import load_helpers


def _calls(root: Any) -> list[ECall]:
    """Every call in an expression tree (iterative: no recursion on the tree's depth)."""
    out: list[ECall] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
        elif is_dataclass(node) and not isinstance(node, type):
            if isinstance(node, ECall):
                out.append(node)
            stack.extend(getattr(node, f.name) for f in fields(node) if f.name != "span")
    return out


def _problem(fn: Any, call: ECall) -> str | None:
    if any(isinstance(a, EStar) for a in call.args):
        return None  # `f(*xs)`: how many arguments is only known when the rule runs
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return None
    try:
        sig.bind(*call.args, **dict(call.kwargs))
    except TypeError as e:
        return f"{e} (it is {getattr(fn, '__name__', '?')}{sig})"
    return None


def check_helper_calls(cf: CheckedFile) -> None:
    """Raise `RulesError` naming every helper call of this file its helper cannot take."""
    helpers = load_helpers(cf.helpers)
    diagnostics: list[Diagnostic] = []
    calls: list[tuple] = []
    for rs in cf.file.rulesets:
        for term in rs.terms:
            if not isinstance(term, RuleBlock):
                continue
            for rule in term.rules:
                calls.append((rule.guard, rule.rhs, rule.lets))
    calls += [(d.body, d.lets) for d in cf.file.defs]  # a definition calls helpers too
    for exprs in calls:
        for call in _calls(exprs):
            if isinstance(call.func, EName) and call.func.name in helpers:
                problem = _problem(helpers[call.func.name], call)
                if problem is not None:
                    diagnostics.append(Diagnostic(call.span, f"helper {call.func.name}: {problem}"))
    if diagnostics:
        raise RulesError(diagnostics, {cf.file.path: cf.file.source})
