"""Constant expressions of a rule, evaluated at gen time: `x.const_like(1/0)` is an error in
the file, not a ZeroDivisionError when the rule first fires.

In: one expression node whose operands were folded before it (the typer visits sources first),
and the values found so far. Out: the expression's value, `UNKNOWN` when it depends on a node,
a helper or anything not a literal, or `Raises` with the exception that evaluating it raises.
Only literals, `+ - * / // %`, unary `-`/`not`, tuples, indexing and a few pure builtins on
them are folded; what would make a huge value (`"a" * 10**12`, a string's `%` formatting) is
left UNKNOWN.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from . import ast as A

UNKNOWN: Any = object()
_BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod}
# builtins with no effect and a bounded result, called on constants
_PURE = {"int": int, "float": float, "abs": abs, "bool": bool, "len": len, "min": min,
         "max": max}
_SMALL = 1 << 16  # the longest string or tuple a repetition may build here


@dataclass(frozen=True)
class Raises:
    """Evaluating the expression raises `error`."""

    error: BaseException


def _plain(v: Any) -> bool:
    if isinstance(v, tuple):
        return all(_plain(x) for x in v)
    return v is None or isinstance(v, (bool, int, float, str))


def fold(e: A.Expr, value_of: dict[int, Any], pure_call: bool = False) -> Any:
    """The value of `e` given its operands' values (`value_of[id(operand)]`, UNKNOWN if absent),
    or UNKNOWN, or Raises. `pure_call`: e is a call of the builtin its name says (not a
    capture or a comprehension's name that hides it)."""
    got = _fold(e, value_of, pure_call)
    return got if isinstance(got, Raises) or _plain(got) else UNKNOWN


def _fold(e: A.Expr, value_of: dict[int, Any], pure_call: bool) -> Any:
    def v(x: A.Expr) -> Any:
        got = value_of.get(id(x), UNKNOWN)
        return UNKNOWN if isinstance(got, Raises) else got

    try:
        if isinstance(e, A.ELit):
            return e.value
        if isinstance(e, A.EUnary):
            a = v(e.operand)
            if a is UNKNOWN:
                return UNKNOWN
            return (not a) if e.op == "not" else -a
        if isinstance(e, A.EBinOp) and e.op in _BINOPS:
            a, b = v(e.left), v(e.right)
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            if e.op == "%" and isinstance(a, (str, bytes)):
                return UNKNOWN  # formatting: a width (`"%0999999999d" % 1`) builds a huge string
            if e.op == "*" and any(isinstance(s, (str, tuple)) for s in (a, b)):
                seq, n = (a, b) if isinstance(a, (str, tuple)) else (b, a)
                if isinstance(n, int) and len(seq) * n > _SMALL:
                    return UNKNOWN
            return _BINOPS[e.op](a, b)
        if isinstance(e, A.ETuple) and not any(isinstance(x, A.EStar) for x in e.items):
            items = tuple(v(x) for x in e.items)
            return UNKNOWN if any(x is UNKNOWN for x in items) else items
        if isinstance(e, A.EIndex) and not isinstance(e.index, A.ESlice):
            a, i = v(e.obj), v(e.index)
            return UNKNOWN if a is UNKNOWN or i is UNKNOWN else a[i]
        if pure_call and isinstance(e, A.ECall) and isinstance(e.func, A.EName) \
                and e.func.name in _PURE \
                and not e.kwargs and not any(isinstance(x, A.EStar) for x in e.args):
            args = [v(x) for x in e.args]
            return UNKNOWN if any(x is UNKNOWN for x in args) else _PURE[e.func.name](*args)
    except Exception as exc:  # noqa: BLE001 - any error here is the rule's error at run time
        return Raises(exc)
    return UNKNOWN

