"""Print rule expressions (guards, right-hand sides, arg/tag constants) as Python source.

In: an `Expr` of the checked AST and a `Scope` saying what each name is (a capture and the
local that holds it, `ctx`, a helper, a builtin). Out: one line of Python with minimal
parentheses. Op constructors become `_new(UOp, Ops.X, dtype, (srcs...), arg, tag)` (`_new` is
`UOp.__new__`) with the default dtype of `runtime.matcher.default_dtype`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from rulegrad.dsl.ast import (
    EAttr,
    EBinOp,
    EBool,
    ECall,
    EComp,
    ECompare,
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
)
from rulegrad.dsl.names import BUILTINS, GLOBALS, OP_NAMES
from rulegrad.runtime.ops import GroupOp, Ops

# Python precedence, low to high
_P_IF, _P_OR, _P_AND, _P_NOT, _P_CMP, _P_ADD, _P_MUL, _P_UNARY, _P_POSTFIX, _P_ATOM = range(10)
_BIN = {"+": _P_ADD, "-": _P_ADD, "*": _P_MUL, "/": _P_MUL, "//": _P_MUL, "%": _P_MUL}


class ExprError(Exception):
    pass


def py_literal(v: object) -> str:
    """A Python literal, with inf and nan spelt so that they evaluate."""
    if isinstance(v, float) and not isinstance(v, bool):
        if math.isnan(v):
            return 'float("nan")'
        if math.isinf(v):
            return 'float("inf")' if v > 0 else '-float("inf")'
    return repr(v)


@dataclass
class Scope:
    """What the names of one rule mean in the generated function."""

    captures: dict[str, str]  # capture -> the local that holds it
    helpers: frozenset[str]
    root: str = "n"
    temps: list[int] = field(default_factory=lambda: [0])  # shared counter for walrus temps
    # how an op is spelt: a generated module reads `Ops.X` from a module global (on Python 3.11
    # reading it off the Enum class costs a Python-level hook per read)
    op: Callable[[Ops], str] = lambda o: f"Ops.{o.name}"
    # the captures that hold one node (not a variadic tuple, a let or a comprehension's name):
    # their `vmin`/`vmax` read the cached bounds in place (`_BOUNDS`), without the property's call
    nodes: frozenset[str] = frozenset()
    # node captures whose bounds a line before the expression read into a local (capture ->
    # that local, see `bounds_reads`): their `vmin`/`vmax` index it
    bounds: dict[str, str] = field(default_factory=dict)

    def temp(self) -> str:
        self.temps[0] += 1
        return f"_t{self.temps[0]}"


# UOp.vmin / UOp.vmax: index into the cached `_bounds` (runtime/uop.py), UNSET until derived
_BOUNDS = {"vmin": 0, "vmax": 1}


def bounds_text(v: str) -> str:
    """The bounds of the node in local `v`: the cached pair, derived on first use."""
    return f"({v}._bounds if {v}._bounds is not _UNSET else {v}._bounds_())"


def bounds_reads(e: Expr, nodes: frozenset[str]) -> tuple[dict[str, int], set[str]]:
    """How many times `e` reads `x.vmin` / `x.vmax` per node capture x, and the captures whose
    bounds it reads whenever it is evaluated (not only in an `and`/`or` operand after the
    first, an `if` branch, a comparison after the chain's first, or a comprehension): reading
    those into a local just before `e` derives nothing `e` would not."""
    counts: dict[str, int] = {}
    sure: set[str] = set()
    stack: list[tuple[object, bool]] = [(e, True)]
    while stack:
        x, always = stack.pop()
        if isinstance(x, EAttr) and x.attr in _BOUNDS and isinstance(x.obj, EName) and \
                x.obj.name in nodes:
            counts[x.obj.name] = counts.get(x.obj.name, 0) + 1
            if always:
                sure.add(x.obj.name)
        elif isinstance(x, EBool):
            stack += [(v, always and k == 0) for k, v in enumerate(x.values)]
        elif isinstance(x, EIf):
            stack += [(x.cond, always), (x.then, False), (x.orelse, False)]
        elif isinstance(x, ECompare):
            stack += [(x.left, always)] + [(r, always and k == 0) for k, r in enumerate(x.rights)]
        elif isinstance(x, EComp):
            stack += [(x.iter, always)]  # (its other parts see names of their own)
        elif isinstance(x, (tuple, list)):
            stack += [(v, always) for v in x]
        elif hasattr(x, "__dataclass_fields__") and not isinstance(x, (EName, ELit)):
            stack += [(getattr(x, f), always) for f in x.__dataclass_fields__ if f != "span"]
    return counts, sure


def _simple(text: str) -> bool:
    return text.replace("_", "").replace(".", "").isalnum()


def pyexpr(e: Expr, scope: Scope, prec: int = _P_IF) -> str:
    """`e` as Python, parenthesised if its precedence is below `prec`."""
    text, own = _print(e, scope)
    return f"({text})" if own < prec else text


def _print(e: Expr, s: Scope) -> tuple[str, int]:
    if isinstance(e, ELit):
        text = py_literal(e.value)
        return text, (_P_UNARY if text.startswith("-") else _P_ATOM)
    if isinstance(e, EName):
        if e.name in s.captures:
            return s.captures[e.name], _P_ATOM
        if e.name == "ctx" or e.name in s.helpers or e.name in BUILTINS:
            return e.name, _P_ATOM
        raise ExprError(f"{e.span}: unknown name {e.name!r}")
    if isinstance(e, EOpName):
        if e.name in GLOBALS:
            return e.name, _P_ATOM
        if e.name in OP_NAMES:
            return s.op(Ops[e.name]), _P_POSTFIX
        if e.name in s.helpers:  # a class declared with `use` (`Kernel(name, ast, bufs)`)
            return e.name, _P_ATOM
        raise ExprError(f"{e.span}: unknown name {e.name!r}")
    if isinstance(e, EAttr):
        if isinstance(e.obj, (EName, EOpName)) and e.obj.name == "Ops" and e.attr in OP_NAMES:
            return s.op(Ops[e.attr]), _P_POSTFIX  # `Ops.ADD` written out in a rule
        if e.attr in _BOUNDS and isinstance(e.obj, EName) and e.obj.name in s.nodes:
            held = s.bounds.get(e.obj.name)
            if held is not None:
                return f"{held}[{_BOUNDS[e.attr]}]", _P_POSTFIX
            return f"{bounds_text(s.captures[e.obj.name])}[{_BOUNDS[e.attr]}]", _P_POSTFIX
        return f"{pyexpr(e.obj, s, _P_POSTFIX)}.{e.attr}", _P_POSTFIX
    if isinstance(e, EIndex):
        return f"{pyexpr(e.obj, s, _P_POSTFIX)}[{_index(e.index, s)}]", _P_POSTFIX
    if isinstance(e, ECall):
        if isinstance(e.func, EOpName) and e.func.name in OP_NAMES:
            return _construct(Ops[e.func.name], e, s), _P_POSTFIX
        if len(e.args) == 1 and not e.kwargs and isinstance(e.args[0], EComp) and \
                e.args[0].kind == "gen":  # f(x for x in xs): the call's parens suffice
            return f"{pyexpr(e.func, s, _P_POSTFIX)}({_comp(e.args[0], s)})", _P_POSTFIX
        args = [pyexpr(a, s) for a in e.args] + [f"{k}={pyexpr(v, s)}" for k, v in e.kwargs]
        return f"{pyexpr(e.func, s, _P_POSTFIX)}({', '.join(args)})", _P_POSTFIX
    if isinstance(e, EBinOp):
        p = _BIN[e.op]
        # left-associative: the right operand needs parens at equal precedence
        return f"{pyexpr(e.left, s, p)} {e.op} {pyexpr(e.right, s, p + 1)}", p
    if isinstance(e, EUnary):
        if e.op == "not":
            return f"not {pyexpr(e.operand, s, _P_NOT)}", _P_NOT
        return f"{e.op}{pyexpr(e.operand, s, _P_UNARY)}", _P_UNARY
    if isinstance(e, ECompare):
        parts = [pyexpr(e.left, s, _P_CMP + 1)]
        for op, right in zip(e.ops, e.rights):
            parts += [op, pyexpr(right, s, _P_CMP + 1)]
        return " ".join(parts), _P_CMP
    if isinstance(e, EBool):
        p = _P_AND if e.op == "and" else _P_OR
        return f" {e.op} ".join(pyexpr(v, s, p + 1) for v in e.values), p
    if isinstance(e, EIf):
        return (f"{pyexpr(e.then, s, _P_OR)} if {pyexpr(e.cond, s, _P_OR)} "
                f"else {pyexpr(e.orelse, s, _P_IF)}"), _P_IF
    if isinstance(e, ETuple):
        items = [pyexpr(i, s) for i in e.items]
        return (f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"), _P_ATOM
    if isinstance(e, EList):
        return f"[{', '.join(pyexpr(i, s) for i in e.items)}]", _P_ATOM
    if isinstance(e, EComp):
        return (f"({_comp(e, s)})" if e.kind == "gen" else f"[{_comp(e, s)}]"), _P_ATOM
    if isinstance(e, EStar):
        return f"*{pyexpr(e.value, s, _P_OR)}", _P_ATOM
    raise ExprError(f"cannot print {type(e).__name__} as Python")


def _comp(e: EComp, s: Scope) -> str:
    """`elt for a, b in iter if c`: the names are the comprehension's own, in elt and conds."""
    it = pyexpr(e.iter, s, _P_OR)
    inner = Scope({**s.captures, **{v: v for v in e.names}}, s.helpers, s.root, s.temps, s.op,
                  s.nodes - set(e.names))
    conds = "".join(f" if {pyexpr(c, inner, _P_OR)}" for c in e.conds)
    return f"{pyexpr(e.elt, inner)} for {', '.join(e.names)} in {it}{conds}"


def _index(e: Expr, s: Scope) -> str:
    if isinstance(e, ESlice):
        parts = ["" if x is None else pyexpr(x, s) for x in (e.lower, e.upper, e.step)]
        return ":".join(parts) if e.step is not None else ":".join(parts[:2])
    return pyexpr(e, s)


def _construct(op: Ops, e: ECall, s: Scope) -> str:
    """`OP(srcs..., dtype=, arg=, tag=)` -> `_new(UOp, Ops.OP, dtype, (srcs,), arg, tag)`."""
    kw = dict(e.kwargs)
    unknown = set(kw) - {"dtype", "arg", "tag"}
    if unknown:
        raise ExprError(f"{e.span}: {op.name}(...) takes only dtype=, arg=, tag=; got {unknown}")
    srcs = [pyexpr(a, s) for a in e.args]
    if "dtype" in kw:
        dtype = pyexpr(kw["dtype"], s)
    elif op in GroupOp.Comparison:
        dtype = "dtypes.bool"
    elif not srcs:
        dtype = "dtypes.void"
    else:
        i = 1 if op is Ops.WHERE and len(srcs) == 3 else 0
        if _simple(srcs[i]):
            dtype = f"{srcs[i]}.dtype"
        else:  # evaluate the source once: bind it in the dtype position, reuse it in src
            t = s.temp()
            if i == 0:
                dtype, srcs[0] = f"({t} := {srcs[0]}).dtype", t
            else:
                # WHERE: the value's dtype; keep the sources' evaluation order
                t0 = s.temp()
                dtype = f"(({t0} := {srcs[0]}), ({t} := {srcs[1]}))[1].dtype"
                srcs[0], srcs[1] = t0, t
    src = f"({srcs[0]},)" if len(srcs) == 1 else f"({', '.join(srcs)})"
    args = [s.op(op), dtype, src]
    if "arg" in kw or "tag" in kw:
        args.append(pyexpr(kw["arg"], s) if "arg" in kw else "None")
    if "tag" in kw:
        args.append(pyexpr(kw["tag"], s))
    # `UOp.__new__` called directly: a third cheaper than `UOp(...)` (runtime/uop.py, new_uop)
    return f"_new(UOp, {', '.join(args)})"
