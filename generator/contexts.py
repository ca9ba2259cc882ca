"""Declared contexts (`context NAME(inputs) { fields, methods }` in a `.rules` file) -> classes,
and the file's definitions (`def name(params) -> EXPR where ...`) -> module-level functions.

In: a checked `Context` and the names its expressions may call (helpers, pipelines, contexts).
Out: the Python source of its class, which a generated module prints; the interpreted matcher
runs the same source (`context_classes`), so both paths schedule with one class.

The class: `__init__(required fields, optional fields=_UNSET, *, inputs=None)` sets each field
in order, an optional one to its given value or else its default (the fields before it are
set, `ctx` is the object); `start(inputs)` (when it has inputs) is what a pass calls with its
graph; each method is its `where` names bound in order, then `return BODY`. A definition is
the same as a function of the module (no `self`, no `ctx` unless a parameter).
"""

from __future__ import annotations

from typing import Any

from rulegrad.dsl.ast import Context, Def, ELit, Expr
from rulegrad.dsl.names import BUILTINS, GLOBALS, fold
from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes

from .pyexpr import Scope, py_literal, pyexpr

# printed once before a module's classes: a field not given to a context's constructor
UNSET_LINE = "_UNSET = object()  # a context's field not given to its constructor"


def context_source(c: Context, callables: frozenset[str], where: str) -> list[str]:
    """The class of `c` as lines of Python (`where`: its `file:line`, for the docstring)."""
    def scope(names: list[str] | tuple[str, ...]) -> Scope:
        return Scope({n: n for n in names}, callables)

    kind = "record" if c.record else "context"
    lines = [f"class {c.name}:", f'    """`{kind} {c.name}`, declared at {where}."""', ""]
    lines += [f"    {f.name}: {f.type!r}" for f in c.fields]
    params = ["self"] + [f.name if f.default is None else f"{f.name}=_UNSET" for f in c.fields]
    params += ["*", *(f"{i}=None" for i in c.inputs)] if c.inputs else []
    lines += ["", f"    def __init__({', '.join(params)}):", "        ctx = self"]
    for f in c.fields:
        value = f.name if f.default is None else \
            f"{pyexpr(f.default, scope(c.inputs))} if {f.name} is _UNSET else {f.name}"
        lines.append(f"        ctx.{f.name} = {value}")
    if c.inputs:
        args = ", ".join(c.inputs)
        lines += ["", "    @classmethod", f"    def start(cls, {args}):",
                  f"        return cls({', '.join(f'{i}={i}' for i in c.inputs)})"]
    for m in c.methods:
        lines += [""] + ["    " + line for line in _function(
            m.name, m.params, m.body, m.lets, callables, ("self",), ("ctx = self",))]
    return lines


def def_source(d: Def, callables: frozenset[str], where: str) -> list[str]:
    """The function of a definition, as lines of Python (`where`: its `file:line`)."""
    lines = _function(d.name, d.params, d.body, d.lets, callables, (), ())
    return [lines[0], f'    """`def {d.name}`, declared at {where}."""', *lines[1:]]


def _function(name: str, params: tuple[tuple[str, ELit | None], ...], body: Expr,
              lets: tuple[tuple[str, Expr], ...], callables: frozenset[str],
              first: tuple[str, ...], prelude: tuple[str, ...]) -> list[str]:
    """`def name(params): prelude; where names in order; return body`."""
    written = [*first] + [n if d is None else f"{n}={py_literal(d.value)}" for n, d in params]
    lines = [f"def {name}({', '.join(written)}):", *(f"    {x}" for x in prelude)]
    names = [n for n, _ in params]
    for let, e in lets:
        lines.append(f"    {let} = {pyexpr(e, Scope({n: n for n in names}, callables))}")
        names.append(let)
    lines.append(f"    return {pyexpr(body, Scope({n: n for n in names}, callables))}")
    return lines


def context_classes(contexts: tuple[Context, ...], helpers: dict[str, Any],
                    defs: tuple[Def, ...] = (), later: frozenset[str] = frozenset()
                    ) -> dict[str, Any]:
    """The classes of a file's contexts and the functions of its definitions, for the
    interpreted matcher: the generated source, run with the names a generated module has (its
    imports, the helpers, each other). `later`: names the caller binds in the functions'
    globals once they exist (the file's pipelines, built over matchers that need these)."""
    if not contexts and not defs:
        return {}
    from math import prod

    from rulegrad.runtime.matcher import as_uop
    from rulegrad.runtime.uop import new_uop

    names = frozenset(helpers) | {c.name for c in contexts} | {d.name for d in defs} | later
    space: dict[str, Any] = {**BUILTINS, **GLOBALS, **helpers, "_new": new_uop, "_as_uop": as_uop,
                             "DTYPE_CLASSES": DTYPE_CLASSES, "dtypes": dtypes, "prod": prod,
                             "fold": fold}
    source = [UNSET_LINE]
    for d in defs:
        source += def_source(d, names, f"{d.span.path}:{d.span.line}")
    for c in contexts:
        source += context_source(c, names, f"{c.span.path}:{c.span.line}")
    where = (contexts or defs)[0].span.path
    exec(compile("\n".join(source), f"<contexts of {where}>", "exec"), space)
    return {x.name: space[x.name] for x in (*contexts, *defs)}
