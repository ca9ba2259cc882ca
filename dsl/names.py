"""The names a `.rules` file can mention, resolved against the IR.

Shared by the checker, the generator and the interpreted matcher, so all three agree on what
`Movement`, `ints` or `prod` mean.
"""

from __future__ import annotations

import difflib
import math

from rulegrad.runtime.dtype import _BY_NAME, DTYPE_CLASSES, DType, dtypes
from rulegrad.runtime.ops import ARITY, OP_GROUPS, GroupOp, Ops
from rulegrad.runtime.uop import UOp

OP_NAMES: frozenset[str] = frozenset(op.name for op in Ops)
GROUP_NAMES: frozenset[str] = frozenset(OP_GROUPS)

# names usable in guards and right-hand sides besides captures, helpers and ctx
BUILTINS: dict[str, object] = {
    "len": len, "all": all, "any": any, "min": min, "max": max, "abs": abs, "sum": sum,
    "tuple": tuple, "list": list, "range": range, "int": int, "float": float, "bool": bool,
    "isinstance": isinstance, "zip": zip, "enumerate": enumerate, "prod": math.prod,
    "sorted": sorted, "reversed": reversed, "dtypes": dtypes,
}
# capitalised globals (an EOpName that is not an op constructor)
GLOBALS: dict[str, object] = {"Ops": Ops, "GroupOp": GroupOp, "UOp": UOp}
KEYWORD_NAMES = frozenset({"ctx"})


def resolve_ops(name: str) -> frozenset[Ops] | None:
    """The ops an op-position name stands for (an op or a group), or None if unknown."""
    if name in OP_NAMES:
        return frozenset({Ops[name]})
    return OP_GROUPS.get(name)


def resolve_dtype(name: str) -> frozenset[DType] | None:
    """The dtypes a dtype-position name allows (a dtype or a class), or None if unknown."""
    if name in DTYPE_CLASSES:
        return DTYPE_CLASSES[name]
    if name in _BY_NAME:
        return frozenset({_BY_NAME[name]})
    return None


def arity(op: Ops) -> int | None:
    """How many sources `op` always has, or None when it varies."""
    return ARITY.get(op)


def suggest(name: str, candidates: frozenset[str] | list[str]) -> str | None:
    """The closest known name, for "did you mean ...?"."""
    close = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


DTYPE_NAMES: frozenset[str] = frozenset(DTYPE_CLASSES) | frozenset(_BY_NAME)
