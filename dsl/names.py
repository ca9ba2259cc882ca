"""The names a `.rules` file can mention, resolved against the IR.

Shared by the checker, the generator and the interpreted matcher, so all three agree on what
`Movement`, `ints` or `prod` mean.
"""

from __future__ import annotations

import math
import sys

from rulegrad.runtime.dtype import DTYPE_BY_NAME, DTYPE_CLASSES, DType, dtypes
from rulegrad.runtime.ops import ARITY, OP_GROUPS, GroupOp, Ops
from rulegrad.runtime.uop import UOp

OP_NAMES: frozenset[str] = frozenset(op.name for op in Ops)
GROUP_NAMES: frozenset[str] = frozenset(OP_GROUPS)

def fold(op: Ops, nodes: list[UOp]) -> UOp | None:
    """The left fold of nodes by a binary op: `fold(Ops.AND, [a, b, c])` is `(a & b) & c`; of
    one node that node, of none None (a list of conditions that may be empty)."""
    out: UOp | None = None
    for n in nodes:
        out = n if out is None else out.alu(op, n)
    return out


# names usable in guards and right-hand sides besides captures, helpers and ctx
BUILTINS: dict[str, object] = {
    "len": len, "all": all, "any": any, "min": min, "max": max, "abs": abs, "sum": sum,
    "tuple": tuple, "list": list, "range": range, "int": int, "float": float, "bool": bool,
    "isinstance": isinstance, "zip": zip, "enumerate": enumerate, "prod": math.prod,
    "sorted": sorted, "reversed": reversed, "dict": dict, "str": str, "fold": fold,
    "dtypes": dtypes, "set": set, "frozenset": frozenset, "next": next,
}
# capitalised globals (an EOpName that is not an op constructor)
GLOBALS: dict[str, object] = {"Ops": Ops, "GroupOp": GroupOp, "UOp": UOp}
KEYWORD_NAMES = frozenset({"ctx"})
# the names a generated module defines itself (beside the imports of matcher.py.j2): no rule
# set attribute or definition of a rules file may take one
MODULE_NAMES = frozenset({"SOURCE", "SOURCE_SHA256", "DEPENDENCIES", "MATCHERS", "RuleMatcher",
                          "RuleInfo", "RewriteNotReady", "helper_from", "n", "prod", "compose",
                          "match_stats", "PIPELINES", "fold"})

# Attributes an expression may not read: a rule reads its nodes' data, never Python's
# machinery. Dunders and private names (`x.f.__globals__`), the frames and code of generators,
# coroutines, tracebacks and functions (`(s for s in x.src).gi_frame.f_globals`), and string
# formatting, which reads attributes by name (`"{0.__class__}".format(x)`).
FORBIDDEN_ATTR_PREFIXES = ("_", "gi_", "cr_", "ag_", "f_", "tb_", "co_", "func_")
FORBIDDEN_ATTRS = frozenset({"format", "format_map", "mro"})

# Standard-library modules a `use` may name: pure computation. Any other standard module
# (os, sys, subprocess, builtins, importlib, ctypes, ...) is refused, and so is a helper that is
# one of their functions re-exported: a helper is a function written for rules, not a door to
# the system. A project's own helper modules are trusted code, like its conftest.py.
PURE_STDLIB = frozenset({"math", "cmath", "itertools", "functools", "fractions", "decimal",
                         "statistics", "bisect", "heapq", "numbers", "collections"})


def forbidden_attr(attr: str) -> bool:
    return attr in FORBIDDEN_ATTRS or attr.startswith(FORBIDDEN_ATTR_PREFIXES)


def refused_module(module: str | None) -> bool:
    """Is `module` (a dotted name) a standard-library module outside PURE_STDLIB?"""
    if not module:
        return False
    top = module.split(".")[0]
    return top in sys.stdlib_module_names and top not in PURE_STDLIB


def resolve_ops(name: str) -> frozenset[Ops] | None:
    """The ops an op-position name stands for (an op or a group), or None if unknown."""
    if name in OP_NAMES:
        return frozenset({Ops[name]})
    return OP_GROUPS.get(name)


def resolve_dtype(name: str) -> frozenset[DType] | None:
    """The dtypes a dtype-position name allows (a dtype or a class), or None if unknown."""
    if name in DTYPE_CLASSES:
        return DTYPE_CLASSES[name]
    if name in DTYPE_BY_NAME:
        return frozenset({DTYPE_BY_NAME[name]})
    return None


def arity(op: Ops) -> int | None:
    """How many sources `op` always has, or None when it varies."""
    return ARITY.get(op)


def suggest(name: str, candidates: frozenset[str] | list[str]) -> str | None:
    """The closest known name, for "did you mean ...?"."""
    import difflib  # (here: generated matchers import this module in a process's first realize)

    close = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


DTYPE_NAMES: frozenset[str] = frozenset(DTYPE_CLASSES) | frozenset(DTYPE_BY_NAME)
