"""Kinds of values in guards and right-hand sides: `gen` catches what would crash at run time.

In: one expression of a rule (its guard, a `where` name, its right-hand side) and what its
names are: captures are nodes (`UOp`), `*rest` a tuple of nodes, helpers the objects `use`
loaded. Out: the expression's `Kind`, and a diagnostic (through `report`) for each problem that
would raise when the rule fires, located at the expression that raises:

- an attribute or method a value does not have (a node's API is `UOp`'s, a dtype's `DType`'s),
  with "did you mean";
- a call with arguments its target never takes (a node's method, a helper, a builtin);
- a call of something that is not callable (a node, a number, a dtype, ...);
- a literal, string, tuple or None as a source of an op constructor (`MUL(x, 2.0)`): sources
  are nodes (`x * 2.0` and `x.const_like(2.0)` make the constant node); a capture's `.arg` is
  known where its pattern names the op: a constant's (`c:CONST`, a literal) is a number, so
  `MUL(x, c.arg)` is one too (`c` is the node), and a movement op's or a reduction's is a tuple;
  and whatever the op, an arg is never a node (`ADD(x, x.arg)` of any x is refused);
- a value where a node's method takes another kind (`x.reshape(c.arg)`, `x.lt("s")`,
  `x.alu(2, y)`), and an attribute a number does not have (`c.arg.dtype`);
- an operator between kinds it is not defined on (`x + "s"`, `x < y` on nodes, `"a" - 1`);
- a node where a truth value is needed (`not x`, `x and y`, `a if x else b`: a UOp has none);
- a builtin given what it fails on: `sum(x)` (a node is not iterable), `abs(x)`, `float(x)`,
  `max(x, y)` (nodes are not ordered), and `x.alu(op, "s")` (a source that is no node or
  number: it made a constant of a string).

What is not known statically (a helper's result, `ctx`, a node's `arg`) is `ANY`, and `ANY`
is never an error: the checks here only reject what must fail.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import ARITY, Ops
from rulegrad.runtime.uop import UOp

from . import ast as A
from .constfold import UNKNOWN, Raises, fold
from .names import BUILTINS, GLOBALS, OP_NAMES, forbidden_attr, suggest


@dataclass(frozen=True)
class Kind:
    """What a value is: `name` one of KIND_NAMES; `item` the kind of a tuple's or list's items;
    `obj` the object behind a callable (a helper, a builtin, a node's method name), or a node's
    `.arg` kind."""

    name: str
    item: Kind | None = None
    obj: Any = None
    size: int | None = None  # a tuple's length, a node's number of sources, when known
    ops: frozenset[Ops] | None = None  # the ops a node can have, when its pattern names them


ANY, NODE, INT, FLOAT, BOOL = Kind("any"), Kind("node"), Kind("int"), Kind("float"), Kind("bool")
NUMBER = Kind("number")  # an int, a float or a bool: which one, only the node knows (a CONST's arg)
STR, NONE, DTYPE, OP = Kind("str"), Kind("none"), Kind("dtype"), Kind("op")
NODES = Kind("tuple", NODE)

_NUMBERS = frozenset({"int", "float", "bool", "number"})
_NOT_CALLABLE = frozenset({"node", "int", "float", "bool", "number", "str", "none", "tuple",
                           "list", "dtype", "op", "dict", "set", "gen"})
# kinds that are one value, never a container (cannot be indexed or iterated)
_SCALARS = frozenset({"node", "int", "float", "bool", "number", "none", "dtype", "op"})
# how each kind is named in a message
_WORDS = {"node": "a node", "int": "an int", "float": "a float", "bool": "a bool",
          "number": "a number (a constant's value)",
          "str": "a string", "none": "None", "tuple": "a tuple", "list": "a list",
          "dtype": "a dtype", "op": "an op (Ops.NAME)", "callable": "a function",
          "method": "a method", "dict": "a dict", "set": "a set", "gen": "a generator"}
# the kinds a node's method takes for each parameter (its position, None: keyword only) where
# another kind makes a malformed node and no error until far from the rule: CONST int32 's',
# a CAST to the string 'float32', a node whose src is a node
_SEQUENCE = frozenset({"tuple", "list", "gen"})
_OPERAND = _NUMBERS | {"node"}  # what the node builders take besides a node: a number
_METHOD_PARAMS: dict[str, tuple[tuple[int | None, str, frozenset[str]], ...]] = {
    "const_like": ((0, "value", _NUMBERS),),
    "cast": ((0, "dtype", frozenset({"dtype"})),),
    "replace": ((None, "op", frozenset({"op"})), (None, "dtype", frozenset({"dtype"})),
                (None, "src", frozenset({"tuple", "list"}))),
    # a movement's argument is a tuple (`tuple(shape)` of a number or a node raises)
    "reshape": ((0, "shape", _SEQUENCE),), "expand": ((0, "shape", _SEQUENCE),),
    "permute": ((0, "order", _SEQUENCE),), "pad": ((0, "padding", _SEQUENCE),),
    "shrink": ((0, "bounds", _SEQUENCE),), "flip": ((0, "axes", _SEQUENCE),),
    "alu": ((0, "op", frozenset({"op"})),), "f": ((0, "op", frozenset({"op"})),),
    # the other operand: a node, or a number made a constant like this node
    "lt": ((0, "o", _OPERAND),), "ne": ((0, "o", _OPERAND),), "eq": ((0, "o", _OPERAND),),
    "maximum": ((0, "o", _OPERAND),), "minimum": ((0, "o", _OPERAND),),
    "where": ((0, "a", _OPERAND), (1, "b", _OPERAND)),
}
# builtins that iterate their first argument, and those a node cannot be given (what it lacks)
_ITERATES = frozenset({"sum", "tuple", "list", "all", "any", "sorted", "reversed", "enumerate",
                       "zip", "set", "frozenset", "prod", "len", "dict"})
_NO_NODE = {"abs": "absolute value (UOp has no __abs__)", "int": "int value",
            "float": "float value", "bool": "truth value", "len": "length"}
# what a node's `.arg` is, for the ops whose arg has one kind: a constant's value, a movement's
# argument, a reduction's (op, axes)
_ARG_KINDS: dict[Ops, Kind] = {Ops.CONST: NUMBER, Ops.REDUCE_AXIS: Kind("tuple", ANY),
                               **{op: Kind("tuple", ANY) for op in (
                                   Ops.RESHAPE, Ops.EXPAND, Ops.PERMUTE, Ops.PAD, Ops.SHRINK,
                                   Ops.FLIP)}}
# the attributes a number has whichever it is (int, float or bool)
_NUMBER_ATTRS = frozenset(n for t in (int, float, bool) for n in dir(t) if not n.startswith("_"))
_METHOD_HINTS = {("cast", "dtype"): "dtypes.float32, x.dtype, ...",
                 ("replace", "dtype"): "dtypes.float32, x.dtype, ...",
                 ("replace", "op"): "Ops.ADD, x.op, ...",
                 ("replace", "src"): "a tuple of nodes: src=(x,) or src=(x, y)"}
# a value of each concrete kind (for its attributes: a dataclass's fields are its instances')
_SAMPLE = {"int": 0, "float": 0.0, "bool": False, "str": "", "tuple": (), "list": [],
           "dtype": dtypes.int32, "op": Ops.ADD, "none": None, "dict": {}, "set": set()}
# a node's fields, and the UOp methods written without annotations that build nodes
_NODE_FIELDS = {"op": OP, "dtype": DTYPE, "src": NODES, "arg": ANY, "tag": ANY}
_NODE_BUILDERS = frozenset({"lt", "ne", "eq", "maximum", "minimum", "where"})
# the operators UOp defines with a node on the left (UOp.__add__ ...) and on the right
_NODE_LEFT = frozenset({"+", "-", "*", "/", "//", "%"})
_NODE_RIGHT = frozenset({"+", "-", "*"})
_BUILTIN_RESULTS = {"len": INT, "int": INT, "float": FLOAT, "bool": BOOL, "str": STR,
                    "abs": ANY, "tuple": Kind("tuple", ANY), "list": Kind("list", ANY),
                    "all": BOOL, "any": BOOL, "isinstance": BOOL, "prod": ANY,
                    "dict": Kind("dict"), "set": Kind("set"), "frozenset": Kind("set")}

Report = Callable[[A.Span, str, "str | None"], None]


def public_names(cls: type) -> list[str]:
    return sorted(n for n in dir(cls) if not n.startswith("_"))


NODE_API: frozenset[str] = frozenset(public_names(UOp)) | frozenset(_NODE_FIELDS)


def word(k: Kind) -> str:
    return _WORDS.get(k.name, "a value")


def _join(kinds: list[Kind]) -> Kind:
    """The one kind of several values, or ANY when they differ (nodes of different ops: a
    node)."""
    first = kinds[0] if kinds else ANY
    if all(k == first for k in kinds):
        return first
    return NODE if all(k.name == "node" for k in kinds) else ANY


def node_of(ops: frozenset[Ops] | None, size: int | None = None) -> Kind:
    """The kind of a capture whose pattern names `ops` (None: any node) and `size` sources
    (None: not known from the pattern): a node, whose `.arg` is known when all of them have an
    arg of one kind (`_ARG_KINDS`), and whose number of sources is known when the pattern
    writes them out or the IR spec fixes one count for all of its ops (`ARITY`)."""
    if ops:
        counts = {ARITY.get(op) for op in ops}
        if size is None and len(counts) == 1:
            size = counts.pop()
        kinds = {_ARG_KINDS.get(op, ANY) for op in ops}
        arg = kinds.pop() if len(kinds) == 1 else ANY
    else:
        arg = ANY
    return Kind("node", obj=None if arg is ANY else arg, size=size, ops=ops or None)


def _arity_problem(ops: frozenset[Ops], n: int) -> str | None:
    """Why a node of one of `ops` (all of them) cannot have `n` sources, or None."""
    counts = {ARITY.get(op) for op in ops}
    if not ops or None in counts or n in counts:
        return None
    takes = " or ".join(map(str, sorted(counts)))
    name = "/".join(sorted(op.name for op in ops))
    return f"{name} takes {takes} source{'s' if counts != {1} else ''}, not {n}"


def _method_result(name: str) -> Kind:
    """The kind a node's method returns: a node when its annotation says so."""
    if name in _NODE_BUILDERS:
        return NODE
    fn = getattr(UOp, name, None)
    try:
        ret = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return ANY
    return NODE if ret in ("UOp", UOp) else Kind("list", NODE) if ret == "list[UOp]" else ANY


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):  # many builtins have none
        return None


class Typer:
    """Infers kinds over one rule's expressions; `report(span, message, hint)` for each problem.

    `helpers`: the objects of the helpers the file loaded; `opaque`: names whose values are not
    known here (ctx, pipelines, declared contexts, a helper that failed to load: reported
    elsewhere). The kind of each name in scope (captures, where names) is passed per call."""

    def __init__(self, report: Report, helpers: dict[str, Any], opaque: set[str]):
        self.reports = 0  # how many problems were reported so far

        def counted(span: A.Span, message: str, hint: str | None) -> None:
            self.reports += 1
            report(span, message, hint)

        self.report = counted
        self.helpers = helpers
        self.opaque = opaque  # names whose values are not known here (ctx, contexts, ...)
        self.memo: dict[int, tuple[A.Expr, Kind]] = {}
        self.values: dict[int, object] = {}  # id(expr) -> its constant value (constfold)

    # ------------------------------------------------------------------ names and attributes
    def name(self, e: A.EName, scope: dict[str, Kind]) -> Kind:
        if e.name in scope:
            return scope[e.name]
        if e.name in self.opaque:
            return ANY
        if e.name in self.helpers:
            obj = self.helpers[e.name]
            return Kind("callable", obj=obj) if callable(obj) else _literal_kind(obj)
        if e.name in BUILTINS:
            obj = BUILTINS[e.name]
            return ANY if e.name == "dtypes" else Kind("callable", obj=obj)
        return ANY  # unknown names are reported by the name check

    def attr(self, e: A.EAttr, scope: dict[str, Kind]) -> Kind:
        if isinstance(e.obj, A.EOpName) and e.obj.name == "Ops":
            return OP
        if isinstance(e.obj, A.EName) and e.obj.name == "dtypes" and "dtypes" not in scope:
            return DTYPE
        if isinstance(e.obj, A.EOpName):
            return ANY
        obj = self.kind(e.obj, scope)
        if forbidden_attr(e.attr):
            return ANY  # refused by the name check
        if obj.name == "node":
            if e.attr not in NODE_API:
                self.report(attr_span(e), f"a node has no attribute '.{e.attr}'"
                            + _did_you_mean(e.attr, NODE_API),
                            "a node's API is UOp's: op, dtype, src, arg, tag, shape, vmin, "
                            "vmax, replace(...), const_like(...), ...")
                return ANY
            if e.attr == "arg" and isinstance(obj.obj, Kind):
                return obj.obj  # (node_of: the capture's ops say what their arg is)
            if e.attr == "src" and obj.size is not None:
                return Kind("tuple", NODE, size=obj.size)
            if e.attr in _NODE_FIELDS:
                return _NODE_FIELDS[e.attr]
            member = inspect.getattr_static(UOp, e.attr, None)
            if isinstance(member, property):
                if e.attr == "base":
                    return NODE
                ret = inspect.signature(member.fget).return_annotation
                if e.attr == "shape":  # (a tuple: `-> x.shape` or `MUL(x, y.shape)` made no node)
                    return Kind("tuple", ANY)
                if e.attr in ("vmin", "vmax"):  # a bound: an int, a float or a bool
                    return NUMBER
                return INT if ret == "int" else ANY
            return Kind("method", obj=e.attr)
        if obj.name == "number" and e.attr not in _NUMBER_ATTRS:
            node = f"{e.obj.obj.name}." if isinstance(e.obj, A.EAttr) and \
                isinstance(e.obj.obj, A.EName) else "the node."
            self.report(attr_span(e), f"a number (a constant's value) has no attribute "
                        f"'.{e.attr}'", f"the constant's node has it: {node}{e.attr}"
                        if e.attr in NODE_API else None)
            return ANY
        sample = _SAMPLE.get(obj.name, _SAMPLE)
        if sample is not _SAMPLE and not hasattr(sample, e.attr):
            names = [n for n in dir(sample) if not n.startswith("_")]
            self.report(attr_span(e), f"{word(obj)} has no attribute '.{e.attr}'"
                        + _did_you_mean(e.attr, names), None)
            return ANY
        if obj.name == "dtype":
            return BOOL if e.attr.startswith("is_") else ANY
        return ANY

    # ------------------------------------------------------------------ expressions
    def kind(self, e: A.Expr, scope: dict[str, Kind]) -> Kind:
        """The kind of e; each expression is typed (and its problems reported) once."""
        if id(e) not in self.memo:
            before = self.reports
            self.memo[id(e)] = (e, self._kind(e, scope))  # e kept alive: its id stays its own
            if self.reports == before:  # (what a kind error says, folding would say again)
                self.constant(e, scope)
        return self.memo[id(e)][1]

    def constant(self, e: A.Expr, scope: dict[str, Kind]) -> None:
        """Fold e when its operands are constants (their kinds, so their values, came first):
        an expression of literals that raises raises each time the rule fires."""
        pure = isinstance(e, A.ECall) and isinstance(e.func, A.EName) and \
            e.func.name not in scope and e.func.name in BUILTINS
        value = fold(e, self.values, pure_call=pure)
        if isinstance(value, Raises):
            err = value.error
            self.report(e.span, f"evaluating this constant expression raises "
                        f"{type(err).__name__}: {err}", "the rule would raise each time it fires")
        elif value is not UNKNOWN:
            self.values[id(e)] = value

    def _kind(self, e: A.Expr, scope: dict[str, Kind]) -> Kind:  # noqa: C901 - a dispatch
        """The kind of e (recursion over one expression's tree, never over a graph)."""
        if isinstance(e, A.ELit):
            return _literal_kind(e.value)
        if isinstance(e, A.EName):
            return self.name(e, scope)
        if isinstance(e, A.EOpName):
            return ANY
        if isinstance(e, A.EAttr):
            return self.attr(e, scope)
        if isinstance(e, A.ECall):
            return self.call(e, scope)
        if isinstance(e, A.EBinOp):
            return self.binop(e, self.kind(e.left, scope), self.kind(e.right, scope))
        if isinstance(e, A.EUnary):
            operand = self.kind(e.operand, scope)
            if e.op == "not":
                self.truth(e.operand, operand)
                return BOOL
            if operand.name in ("node", "int", "float", "number"):
                return operand
            if operand.name == "bool":
                return INT
            if operand.name != "any":
                self.report(e.span, f"unary '-' of {word(operand)}", None)
            return ANY
        if isinstance(e, A.ECompare):
            return self.compare(e, scope)
        if isinstance(e, A.EBool):
            # `a and b` asks a's truth; b's only where the whole is asked (a guard, an `if`)
            kinds = [self.kind(v, scope) for v in e.values]
            for v, k in zip(e.values[:-1], kinds):
                self.truth(v, k)
            return _join(kinds)
        if isinstance(e, A.EIf):
            self.truth(e.cond, self.kind(e.cond, scope))
            return _join([self.kind(e.then, scope), self.kind(e.orelse, scope)])
        if isinstance(e, (A.ETuple, A.EList)):
            items = [self.kind(x, scope) for x in e.items if not isinstance(x, A.EStar)]
            for x in e.items:
                if isinstance(x, A.EStar):
                    self.kind(x.value, scope)
            whole = len(items) == len(e.items)
            return Kind("tuple" if isinstance(e, A.ETuple) else "list",
                        _join(items) if whole else ANY, size=len(items) if whole else None)
        if isinstance(e, A.EIndex):
            return self.index(e, scope)
        if isinstance(e, A.EComp):
            return self.comp(e, scope)
        if isinstance(e, A.EStar):
            self.kind(e.value, scope)
            return ANY
        if isinstance(e, A.ESlice):
            for x in (e.lower, e.upper, e.step):
                if x is not None:
                    self.kind(x, scope)
            return ANY
        return ANY

    def truth(self, e: A.Expr, k: Kind) -> None:
        """A node has no truth value (UOp.__bool__ raises): `not x`, `x and y`, `a if x ...`."""
        if k.name == "node":
            self.report(e.span, "a node has no truth value",
                        "compare it: `x is y`, `x.op is Ops.CONST`, `x.arg == 0`")

    def comp(self, e: A.EComp, scope: dict[str, Kind]) -> Kind:
        it = self.kind(e.iter, scope)
        if it.name in _SCALARS:
            self.report(e.iter.span, f"cannot iterate over {word(it)}", None)
        item = it.item if it.item is not None and len(e.names) == 1 else ANY
        inner = {**scope, **{n: (item if len(e.names) == 1 else ANY) for n in e.names}}
        for c in e.conds:
            self.kind(c, inner)
        elt = self.kind(e.elt, inner)
        return Kind("list", elt) if e.kind == "list" else Kind("gen", elt)

    def index(self, e: A.EIndex, scope: dict[str, Kind]) -> Kind:
        obj = self.kind(e.obj, scope)
        idx = self.kind(e.index, scope)
        if obj.name in _SCALARS:
            hint = "its sources are x.src[i]" if obj.name == "node" else None
            self.report(e.span, f"{word(obj)} cannot be indexed", hint)
            return ANY
        if obj.name in ("tuple", "list", "str") and idx.name in ("str", "float", "none", "node",
                                                                 "tuple", "list"):
            self.report(e.index.span, f"{word(obj)} is indexed by an int, not {word(idx)}", None)
            return ANY
        if isinstance(e.index, A.ESlice):
            return Kind(obj.name, obj.item) if obj.name in ("tuple", "list", "str") else ANY
        i = self.values.get(id(e.index), UNKNOWN)
        if obj.size is not None and type(i) is int and not -obj.size <= i < obj.size \
                and id(e.obj) not in self.values:  # (a constant tuple's index: constfold's)
            src = isinstance(e.obj, A.EAttr) and e.obj.attr == "src"
            what = f"a node of {obj.size} source{'s' if obj.size != 1 else ''}" if src else \
                f"{word(obj)} of {obj.size} item{'s' if obj.size != 1 else ''}"
            self.report(e.span, f"index {i} is out of range for {what}",
                        "the pattern and the IR spec fix how many sources it has" if src else None)
            return ANY
        if obj.name in ("tuple", "list"):
            return obj.item or ANY
        return STR if obj.name == "str" else ANY

    def compare(self, e: A.ECompare, scope: dict[str, Kind]) -> Kind:
        left = self.kind(e.left, scope)
        for op, right_e in zip(e.ops, e.rights):
            right = self.kind(right_e, scope)
            if op in ("<", "<=", ">", ">="):
                pair = {left.name, right.name}
                if "node" in pair:
                    self.report(e.span, f"'{op}' between {word(left)} and {word(right)}: nodes "
                                "are not ordered", "compare values: x.arg, x.vmin, x.vmax")
                elif "any" not in pair and not (pair <= _NUMBERS or len(pair) == 1):
                    self.report(e.span, f"'{op}' between {word(left)} and {word(right)}", None)
            elif op in ("in", "not in") and right.name in _SCALARS:
                self.report(e.span, f"'{op}' needs a container on its right, not "
                            f"{word(right)}", None)
            left = right
        return BOOL

    def binop(self, e: A.EBinOp, a: Kind, b: Kind) -> Kind:
        op = e.op
        if "any" in (a.name, b.name):
            return NODE if "node" in (a.name, b.name) else ANY
        if a.name == "node" or b.name == "node":
            other = b if a.name == "node" else a
            ok_op = op in _NODE_LEFT if a.name == "node" else op in _NODE_RIGHT
            if other.name in ("node", *_NUMBERS) and ok_op:
                return NODE
            if not ok_op and other.name in _NUMBERS:
                self.report(e.span, f"'{op}' with a number on the left and a node on the right "
                            "is not defined on nodes",
                            f"write the node first, or make the constant a node: "
                            f"x.const_like(value) {op} x")
            else:
                self.report(e.span, f"'{op}' between {word(a)} and {word(b)}",
                            "node arithmetic takes nodes and numbers")
            return ANY
        if a.name in _NUMBERS and b.name in _NUMBERS:
            if op == "/" or "float" in (a.name, b.name):
                return FLOAT
            return NUMBER if "number" in (a.name, b.name) else INT
        if op == "+" and a.name == b.name and a.name in ("str", "tuple", "list"):
            return Kind(a.name, _join([a.item or ANY, b.item or ANY]) if a.item else None)
        if op == "*" and {a.name, b.name} & {"str", "tuple", "list"} and \
                {a.name, b.name} & {"int", "bool", "number"}:
            return a if a.name in ("str", "tuple", "list") else b
        if op == "%" and a.name == "str":
            return STR
        self.report(e.span, f"'{op}' between {word(a)} and {word(b)}", None)
        return ANY

    # ------------------------------------------------------------------ calls
    def call(self, e: A.ECall, scope: dict[str, Kind]) -> Kind:
        args = [self.kind(a, scope) for a in e.args]
        kwargs = {k: self.kind(v, scope) for k, v in e.kwargs}
        if isinstance(e.func, A.EOpName):
            if e.func.name in OP_NAMES:
                return self.construct(e, args, kwargs, scope)
            if e.func.name in self.helpers:
                obj = self.helpers[e.func.name]
                if callable(obj):
                    self.arity(e, obj, e.func.name)
                else:
                    self.report(e.span, f"{word(_literal_kind(obj))} is not callable", None)
            elif e.func.name in GLOBALS:
                self.arity(e, GLOBALS[e.func.name], e.func.name)
            return ANY
        func = self.kind(e.func, scope)
        if func.name == "method":
            fn = getattr(UOp, func.obj)
            bound = isinstance(inspect.getattr_static(UOp, func.obj), staticmethod)
            self.arity(e, fn, f"x.{func.obj}", self_arg=not bound)
            self.method_args(e, func.obj, args, kwargs)
            src = kwargs.get("src")
            if func.obj == "replace" and src is not None and src.name in ("tuple", "list") \
                    and src.item is not None and src.item.name not in ("node", "any"):
                self.report(e.span, f"replace(src=...) is given {word(src.item)} as a source: "
                            "sources are nodes", None)
            if func.obj == "replace":
                return self.replaced(e, scope)
            return _method_result(func.obj)
        if func.name == "callable":
            name = e.func.name if isinstance(e.func, A.EName) else "the function"
            bound = self.arity(e, func.obj, name)
            if isinstance(e.func, A.EName) and e.func.name in BUILTINS and \
                    func.obj is BUILTINS[e.func.name]:
                if bound:  # (arguments it never takes are one error already)
                    self.builtin_args(e, e.func.name, args, kwargs)
                return _BUILTIN_RESULTS.get(e.func.name, ANY)
            return ANY
        if func.name in _NOT_CALLABLE:
            self.report(e.span, f"{word(func)} is not callable",
                        "a node's methods are called, its fields are read: x.arg, "
                        "x.replace(arg=...)" if func.name == "node" else None)
        return ANY

    def replaced(self, e: A.ECall, scope: dict[str, Kind]) -> Kind:
        """`x.replace(op=..., src=...)`: the new node's op must allow its number of sources (the
        IR spec's ARITY); each is known from the call or from x's pattern."""
        assert isinstance(e.func, A.EAttr)
        node = self.kind(e.func.obj, scope)
        kw = dict(e.kwargs)
        src = self.kind(kw["src"], scope) if "src" in kw else None
        n = node.size if src is None else src.size
        ops = node.ops
        if "op" in kw:
            ops = None
            op = kw["op"]
            if isinstance(op, A.EAttr) and isinstance(op.obj, A.EOpName) and \
                    op.obj.name == "Ops" and op.attr in Ops.__members__:
                ops = frozenset({Ops[op.attr]})
        problem = _arity_problem(ops, n) if ops and n is not None else None
        if problem:
            self.report(e.span, f"x.replace(...) makes a node of {n} source"
                        f"{'s' if n != 1 else ''} whose op allows no such count: {problem}",
                        "give it src= of the op's arity, or op= of one that takes these")
        return Kind("node", size=n)

    def builtin_args(self, e: A.ECall, name: str, args: list[Kind],
                     kwargs: dict[str, Kind]) -> None:
        """Report a builtin given a value it must fail on: one that iterates (`sum(x)`,
        `any(x)`, `max(x)`, ...) a value that is no container, a node to `abs`, `int`, `float`,
        `bool` or `len` (a UOp has none of those), and `min`/`max` of nodes, which compares
        them (`max(x, y)`: a UOp is not ordered), unless a `key=` says what they compare
        (`max(x, y, key=depth)` is valid Python). Each raised a TypeError when the rule fired,
        with no rule location."""
        iterates = name in _ITERATES or (name in ("min", "max") and len(args) == 1)
        if iterates and args and args[0].name in _SCALARS:
            self.report(e.span, f"{name}(...) iterates its argument: {word(args[0])} cannot "
                        "be iterated", None)
        elif name in _NO_NODE and any(a.name == "node" for a in args):
            self.report(e.span, f"{name}(...) of a node: a node has no {_NO_NODE[name]}",
                        "x.vmin, x.vmax, x.arg (a constant's value) are numbers" if
                        name != "bool" else "compare it: `x is y`, `x.op is Ops.CONST`")
        elif name in ("min", "max") and "key" not in kwargs and (
                (len(args) > 1 and any(a.name == "node" for a in args)) or
                (len(args) == 1 and args[0].item == NODE and (args[0].size or 0) > 1)):
            self.report(e.span, f"{name}(...) of nodes compares them: nodes are not ordered",
                        f"x.{name}imum(y) builds the node of the {name}imum")

    def method_args(self, e: A.ECall, name: str, args: list[Kind],
                    kwargs: dict[str, Kind]) -> None:
        """Report an argument of a node's method of a kind it never takes (`_METHOD_PARAMS`;
        `alu`'s sources after its op, each a node or a number made a constant: a string was
        taken, and raised in float() when the rule fired)."""
        if name == "alu":
            for k in args[1:]:
                if k.name not in _OPERAND and k.name != "any":
                    self.report(e.span, f"x.alu(op, ...) is given {word(k)} as a source: it "
                                "takes nodes and numbers", None)
        for position, param, takes in _METHOD_PARAMS.get(name, ()):
            k = kwargs.get(param)
            if k is None and position is not None and position < len(args):
                k = args[position]
            if k is None or k.name == "any" or k.name in takes:
                continue
            what = "a tuple" if takes == _SEQUENCE else "a node or a number" \
                if takes == _OPERAND else " or ".join(_WORDS[t] for t in sorted(takes))
            self.report(e.span, f"x.{name}({param}=...) is given {word(k)}: it takes {what}",
                        _METHOD_HINTS.get((name, param)))

    def arity(self, e: A.ECall, fn: Any, what: str, self_arg: bool = False) -> bool:
        """Report a call whose arguments `fn`'s signature can never take (False then)."""
        if any(isinstance(a, A.EStar) for a in e.args):
            return False  # how many is known when the rule runs
        sig = _signature(fn)
        if sig is None:
            return True
        args = [None] * (len(e.args) + (1 if self_arg else 0))
        try:
            sig.bind(*args, **{k: None for k, _ in e.kwargs})
            return True
        except TypeError as exc:
            if what in self.helpers:  # (generator/signatures.py words it alike)
                self.report(e.span, f"helper {what}: {exc} (it is {what}{sig})", None)
            else:
                self.report(e.span, f"wrong arguments for {what}(...): {exc}",
                            f"{what} takes {_params(sig, self_arg)}")
            return False

    def construct(self, e: A.ECall, args: list[Kind], kwargs: dict[str, Kind],
                  scope: dict[str, Kind]) -> Kind:
        """`OP(srcs..., dtype=, arg=, tag=)`: every source is a node."""
        assert isinstance(e.func, A.EOpName)
        # a node source to make a constant like (`x.const_like(2.0)`), to name in the hint
        like = next((a.name for a, k in zip(e.args, args)
                     if isinstance(a, A.EName) and k.name == "node"), "x")
        for a, k in zip(e.args, args):
            # a node's `.arg` is never a node, whatever its op (an unknown op's arg is ANY)
            arg_of_name = isinstance(a, A.EAttr) and a.attr == "arg" and isinstance(a.obj, A.EName)
            if isinstance(a, A.EStar) or k.name == "node" or (k.name == "any" and not (
                    arg_of_name and scope.get(a.obj.name, ANY).name == "node")):
                continue
            hint = None
            if arg_of_name:
                # `MUL(x, c.arg)`: the value where the node was meant
                hint = f"{a.obj.name} is the node: {e.func.name}(..., {a.obj.name}, ...)"
            elif k.name in _NUMBERS:
                value = repr(a.value) if isinstance(a, A.ELit) else "value"
                hint = f"make the constant a node like its sibling: {like}.const_like({value})"
            what = f"{a.obj.name}.arg (a node's arg)" if k.name == "any" else word(k)
            self.report(a.span, f"{what} cannot be a source of {e.func.name}: sources are "
                        "nodes", hint)
        dt = kwargs.get("dtype")
        if dt is not None and dt.name not in ("dtype", "any"):
            self.report(e.span, f"dtype= of {e.func.name} is {word(dt)}, not a dtype",
                        "dtypes.float32, x.dtype, ...")
        star = any(isinstance(a, A.EStar) for a in e.args)
        return node_of(frozenset({Ops[e.func.name]}), None if star else len(e.args))


def _literal_kind(value: Any) -> Kind:
    if value is None:
        return NONE
    for py, k in ((bool, BOOL), (int, INT), (float, FLOAT), (str, STR)):
        if isinstance(value, py):
            return k
    return ANY


def _params(sig: inspect.Signature, skip_self: bool) -> str:
    """`(a, b=..., *, c=...)`: names only (a default's repr can be an object's address)."""
    out: list[str] = []
    star = False
    for p in list(sig.parameters.values())[1 if skip_self else 0:]:
        if p.kind is p.KEYWORD_ONLY and not star:
            out.append("*")
        star = star or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        prefix = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        default = "" if p.default is p.empty else "=..."
        out.append(prefix + p.name + default)
    return "(" + ", ".join(out) + ")"


def attr_span(e: A.EAttr) -> A.Span:
    """The span of `.attr` alone (the caret under the name that does not exist)."""
    s = e.span
    if s.end_line < 1 or s.end_col - len(e.attr) - 1 < 1:
        return s
    return A.Span(s.path, s.end_line, s.end_col - len(e.attr) - 1, s.end_line, s.end_col)


def _did_you_mean(name: str, candidates: Any) -> str:
    guess = suggest(name, sorted(candidates))
    return f" (did you mean '{guess}'?)" if guess else ""
