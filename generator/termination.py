"""Static loop detection: pairs of rules of one set that can rewrite each other's output back.

In: a `CheckedRuleSet`. Out: `LoopCandidate`s: rules A and B (possibly the same rule) such
that A's right side builds a node B's pattern matches and B's right side builds a node A's
pattern matches. Such a pair can ping-pong forever (`ADD(x, y) -> ADD(y, x)`, or
`MUL(x, 2) -> ADD(x, x)` beside `ADD(x, x) -> MUL(x, 2)`).

What a right side builds is read from its expression: an op constructor (`ADD(x, y)`), UOp
arithmetic (`x + c`), or a movement/ALU method (`x.reshape(...)`, `x.alu(Ops.MUL, y)`), with
captures standing for the left side's nodes. A right side that returns a capture builds nothing
(it returns a strict part of the left side: progress), and a helper call is opaque. When B's
pattern is matched against what A built, a capture of A matches only a capture of B: needing
the capture to have more structure (`ADD[ADD[x, c1], c2]` against `x + c`) means the rewrite
consumed structure, which is how rules like reassociation terminate. Guards are ignored, so a
candidate is a suspicion; the soundness check confirms it by running the set on instances
under a rewrite budget (examples.py) and reports both locations either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rulegrad.dsl import ast as A
from rulegrad.dsl.names import resolve_ops
from rulegrad.runtime.ops import Ops

_ARITH = {"+": Ops.ADD, "-": Ops.SUB, "*": Ops.MUL, "//": Ops.IDIV, "%": Ops.MOD,
          "/": Ops.FDIV}
_METHODS = {"reshape": Ops.RESHAPE, "permute": Ops.PERMUTE, "expand": Ops.EXPAND,
            "pad": Ops.PAD, "shrink": Ops.SHRINK, "flip": Ops.FLIP, "maximum": Ops.MAX,
            "minimum": Ops.MIN, "lt": Ops.CMPLT, "ne": Ops.CMPNE, "eq": Ops.CMPEQ,
            "where": Ops.WHERE, "cast": Ops.CAST}


@dataclass(frozen=True)
class Built:
    """A node a right side builds: its op (None: unknown) and what its sources are."""

    op: Ops | None
    srcs: tuple[Any, ...] | None  # Built, or A.Pattern for a capture of the left side


@dataclass(frozen=True)
class LoopCandidate:
    ruleset: str
    first: A.Rule
    second: A.Rule


def _captures(p: A.Pattern, out: dict[str, A.Pattern]) -> dict[str, A.Pattern]:
    if isinstance(p, A.PBind):
        out.setdefault(p.name, p.pattern)
        _captures(p.pattern, out)
    elif isinstance(p, A.PVar) and p.name is not None:
        out.setdefault(p.name, p)
    elif isinstance(p, A.PNode):
        for s in p.srcs or ():
            _captures(s, out)
    return out


def built(e: Any, caps: dict[str, A.Pattern]) -> list[Built | A.Pattern]:
    """What the expression may evaluate to, as Built nodes or captured patterns."""
    if isinstance(e, A.EIf):
        return built(e.then, caps) + built(e.orelse, caps)
    if isinstance(e, A.EName) and e.name in caps:
        return [A.PVar(e.name)]  # a capture: matches only a capture (see module docstring)
    if isinstance(e, A.ELit):
        return [Built(Ops.CONST, ())] if e.value is not None else []
    if isinstance(e, A.EBinOp) and e.op in _ARITH:
        left, right = built(e.left, caps), built(e.right, caps)
        if not any(_is_node(x) for x in left + right):
            return [Built(Ops.CONST, ())]  # arithmetic on values becomes a constant
        return [Built(_ARITH[e.op], (_one(left), _one(right)))]
    if isinstance(e, A.ECall):
        f = e.func
        args = tuple(_one(built(a, caps)) for a in e.args)
        if isinstance(f, A.EOpName) and f.name in Ops.__members__:
            return [Built(Ops[f.name], args)]
        if isinstance(f, A.EAttr):
            obj = _one(built(f.obj, caps))
            if f.attr == "const_like":
                return [Built(Ops.CONST, ())]
            if f.attr in _METHODS:
                return [Built(_METHODS[f.attr], (obj,) + args[1:] if f.attr == "where" else
                              (obj,) + (args if f.attr in ("maximum", "minimum", "lt", "ne",
                                                            "eq") else ()))]
            if f.attr == "alu" and e.args and isinstance(e.args[0], A.EAttr):
                op = Ops.__members__.get(e.args[0].attr)
                return [Built(op, (obj,) + args[1:])]
        return [Built(None, None)]  # a helper: opaque
    return [Built(None, None)]


def _is_node(x: Any) -> bool:
    return isinstance(x, A.PVar) or (isinstance(x, Built) and x.op is not Ops.CONST)


def _one(options: list[Any]) -> Any:
    return options[0] if len(options) == 1 else Built(None, None)


def matches(p: A.Pattern, b: Any) -> bool:
    """Whether pattern p may match what a right side built (captures only as wholes)."""
    if isinstance(p, A.PBind):
        return matches(p.pattern, b)
    if isinstance(p, A.PVar):
        return True
    if isinstance(b, A.PVar):
        return False  # the capture would need structure the rewrite took away
    if not isinstance(b, Built) or b.op is None:
        return False  # opaque: no claim
    if isinstance(p, A.PConst):
        return b.op is Ops.CONST
    ops: set[Ops] = set()
    for ref in p.ops:
        ops |= resolve_ops(ref.name) or set()
    if b.op not in ops:
        return False
    if p.srcs is None or b.srcs is None:
        return True
    if len(b.srcs) != len(p.srcs) and not (p.ellipsis and len(b.srcs) >= len(p.srcs)):
        return False
    orders = [b.srcs]
    if p.commutative and len(b.srcs) == 2:
        orders.append(b.srcs[::-1])
    return any(all(matches(q, s) for q, s in zip(p.srcs, srcs)) for srcs in orders)


def builds(rule: A.Rule) -> list[Built]:
    """The nodes a rule's right side builds at its root (captures and opaque results left out)."""
    if isinstance(rule.rhs, A.EDefer):
        return []
    caps = _captures(rule.pattern, {})
    return [b for b in built(rule.rhs, caps) if isinstance(b, Built) and b.op is not None
            and b.op is not Ops.CONST]


def loop_candidates(rs: A.CheckedRuleSet) -> list[LoopCandidate]:
    """Pairs (A, B) of the set, A's output matched by B and B's by A; A may be B."""
    out: list[LoopCandidate] = []
    made = [(r, builds(r)) for r in rs.rules]
    for i, (a, a_out) in enumerate(made):
        for b, b_out in made[i:]:
            a_to_b = any(matches(b.pattern, x) for x in a_out)
            b_to_a = any(matches(a.pattern, x) for x in b_out)
            if a_to_b and b_to_a:
                out.append(LoopCandidate(rs.name, a, b))
    return out
