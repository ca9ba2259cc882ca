"""Declared contexts (`context NAME(inputs) { fields, methods }` in a `.rules` file) -> classes.

In: a checked `Context` and the names its expressions may call (helpers, pipelines, contexts).
Out: the Python source of its class, which a generated module prints; the interpreted matcher
runs the same source (`context_classes`), so both paths schedule with one class.

The class: `__init__(required fields, optional fields=_UNSET, *, inputs=None)` sets each field
in order, an optional one to its given value or else its default (the fields before it are
set, `ctx` is the object); `start(inputs)` (when it has inputs) is what a pass calls with its
graph; each method is its `where` names bound in order, then `return BODY`.
"""

from __future__ import annotations

from typing import Any

from rulegrad.dsl.ast import Context
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
        params = ["self"] + [n if d is None else f"{n}={py_literal(d.value)}" for n, d in m.params]
        lines += ["", f"    def {m.name}({', '.join(params)}):", "        ctx = self"]
        names = [n for n, _ in m.params]
        for name, e in m.lets:
            lines.append(f"        {name} = {pyexpr(e, scope(names))}")
            names.append(name)
        lines.append(f"        return {pyexpr(m.body, scope(names))}")
    return lines


def context_classes(contexts: tuple[Context, ...], helpers: dict[str, Any]) -> dict[str, type]:
    """The classes of a file's contexts for the interpreted matcher: the generated source, run
    with the names a generated module has (its imports, the helpers, each other)."""
    if not contexts:
        return {}
    from math import prod

    from rulegrad.runtime.matcher import as_uop
    from rulegrad.runtime.uop import new_uop

    names = frozenset(helpers) | {c.name for c in contexts}
    space: dict[str, Any] = {**BUILTINS, **GLOBALS, **helpers, "_new": new_uop, "_as_uop": as_uop,
                             "DTYPE_CLASSES": DTYPE_CLASSES, "dtypes": dtypes, "prod": prod,
                             "fold": fold}
    source = [UNSET_LINE]
    for c in contexts:
        source += context_source(c, names, f"{c.span.path}:{c.span.line}")
    exec(compile("\n".join(source), f"<contexts of {contexts[0].span.path}>", "exec"), space)
    return {c.name: space[c.name] for c in contexts}
