"""The graph verifier: the invariants each stage of the scheduler's output must satisfy.

In: a graph, the name of its stage, and the pass that produced it. Out: nothing, or a
`SpecError` naming the pass, the broken rule and the offending node (tinygrad's spec.py).
runtime/schedule.py calls `verify` after each pass when `RULEGRAD_SPEC=1`.

Stages, in pipeline order:

- every stage: each ALU node computes on a dtype its op is defined on (runtime/semantics.py's
  DOMAIN: the one table of (op, dtype) that the oracle and the checker's z3 model read too).
- `tensor`: a tensor graph with REALIZE markers: no scheduler nodes yet (INDEX, RANGE,
  BUFFERIZE, STORE, KERNEL); every REALIZE has one source.
- `rangeified`: no tensor-level ops are left (movement, REDUCE_AXIS, REALIZE, CHILD); each
  INDEX reads memory (BUFFER or BUFFERIZE) with one index per axis; BUFFERIZE and REDUCE close
  RANGEs (BUFFERIZE may keep CONST 0 for size-1 axes) of the right kind.
- `kernels`: the SINK holds ASSIGN(BUFFER, KERNEL)s only.
- `kernel`: one kernel AST (backends/KERNEL_AST.md): SINK of STORE(INDEX(DEFINE_GLOBAL,
  offset), value, *loop ranges); reads are LOAD(INDEX(DEFINE_GLOBAL, offset[, valid])); a value
  uses only its STORE's ranges and the ranges of REDUCEs around it; index math is `index` dtype.
"""

from __future__ import annotations

from collections.abc import Callable

from .dtype import dtypes
from .ops import GroupOp, Ops
from .semantics import DOMAIN, operand_dtype, operand_dtypes
from .uop import UOp, toposort


class SpecError(AssertionError):
    """A pass produced a graph that breaks an invariant of its stage."""

    def __init__(self, pass_name: str, stage: str, why: str, node: UOp):
        self.pass_name, self.stage, self.why, self.node = pass_name, stage, why, node
        super().__init__(f"after pass {pass_name!r} (stage {stage!r}): {why}: {node!r}")


_SCHEDULER_OPS = frozenset({Ops.INDEX, Ops.RANGE, Ops.BUFFERIZE, Ops.STORE, Ops.KERNEL,
                            Ops.LOAD, Ops.DEFINE_GLOBAL, Ops.REDUCE})
_TENSOR_OPS = GroupOp.Movement | {Ops.REDUCE_AXIS, Ops.REALIZE, Ops.CHILD, Ops.CHILDREN,
                                  Ops.DETACH, Ops.CONTIGUOUS_BACKWARD, Ops.FUSE}


_EVERY_DTYPE = operand_dtypes(Ops.CAST)  # the dtypes of values (not void)


def _outside_domain(n: UOp) -> str | None:
    """An ALU node on a dtype its op is not defined on: runtime/semantics.py's DOMAIN, the one
    table of (op, dtype) the oracle, the C prelude and z3 read too."""
    if n.op not in DOMAIN:
        return None
    dt = operand_dtype(n.op, tuple(s.dtype for s in n.src))
    if dt is None or dt not in _EVERY_DTYPE or dt in operand_dtypes(n.op):
        return None
    return f"{n.op.name} is not an op on {dt.name} (runtime/semantics.py, DOMAIN)"


def _tensor(n: UOp) -> str | None:
    if n.op in _SCHEDULER_OPS:
        return "a scheduler node in the tensor graph"
    if n.op is Ops.REALIZE and len(n.src) != 1:
        return "REALIZE takes exactly one source"
    return _outside_domain(n)


def _closes_ranges(n: UOp, ranges: tuple[UOp, ...], kind: str, allow_const: bool) -> str | None:
    for r in ranges:
        if r.op is Ops.CONST and allow_const and r.arg == 0:
            continue
        if r.op is not Ops.RANGE or r.arg[1] != kind:
            return f"{n.op.name} must close {kind} RANGEs, found {r!r}"
    return None


def _rangeified(n: UOp) -> str | None:
    if n.op in GroupOp.Movement and n.base.op is Ops.BUFFER:
        return None  # a root that is a view of a buffer needs no kernel and stays as it is
    if n.op in _TENSOR_OPS:
        return f"{n.op.name} survived rangeify"
    if n.op is Ops.INDEX:
        mem = n.src[0]
        if mem.op in (Ops.BUFFER, Ops.DEFINE_LOCAL):
            return None if len(n.src) == 2 else f"INDEX of a {mem.op.name} takes one flat offset"
        if mem.op is not Ops.BUFFERIZE:
            return f"INDEX of {mem.op.name}: an INDEX must read memory"
        if len(n.src) != len(mem.src):
            return "INDEX of a BUFFERIZE needs one index per axis"
        if any(i.dtype is not dtypes.index for i in n.src[1:]):
            return "index expressions have dtype index"
    if n.op is Ops.BUFFERIZE:
        return _closes_ranges(n, n.src[1:], "loop", allow_const=True)
    if n.op is Ops.REDUCE:
        return _closes_ranges(n, n.src[1:], "reduce", allow_const=False)
    return _outside_domain(n)


def _kernels(root: UOp) -> list[tuple[str, UOp]]:
    bad = []
    for a in root.src:
        if a.op is not Ops.ASSIGN or a.src[0].op is not Ops.BUFFER or a.src[1].op is not Ops.KERNEL:
            bad.append(("the schedule is a SINK of ASSIGN(BUFFER, KERNEL)", a))
    return bad


def _kernel(root: UOp) -> list[tuple[str, UOp]]:
    bad: list[tuple[str, UOp]] = []
    if root.op is not Ops.SINK or not all(s.op is Ops.STORE for s in root.src):
        return [("a kernel is a SINK of STOREs", root)]
    for st in root.src:
        tgt = st.src[0]
        if tgt.op is not Ops.INDEX or tgt.src[0].op is not Ops.DEFINE_GLOBAL or len(tgt.src) != 2:
            bad.append(("a STORE writes INDEX(DEFINE_GLOBAL, offset)", st))
        if any(r.op is not Ops.RANGE or r.arg[1] != "loop" for r in st.src[2:]):
            bad.append(("a STORE's ranges are loop RANGEs", st))
        scope = set(st.src[2:])
        for n in toposort(st.src[1]):
            if n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL):
                scope.update(n.src[1:])
        for n in toposort(st):
            if n.op in (Ops.BUFFER, Ops.BUFFERIZE, Ops.ASSIGN, Ops.INVALID, Ops.KERNEL) or \
                    n.op in _TENSOR_OPS:
                bad.append((f"{n.op.name} inside a kernel", n))
            elif n.op is Ops.RANGE and n not in scope:
                bad.append(("a range used outside its STORE or REDUCE", n))
            elif n.op is Ops.LOAD and (n.src[0].op is not Ops.INDEX or n.src[0].src[0].op
                                      not in (Ops.DEFINE_GLOBAL, Ops.DEFINE_LOCAL)):
                bad.append(("a LOAD reads INDEX(DEFINE_GLOBAL or DEFINE_LOCAL, offset[, valid])",
                            n))
            elif n.op is Ops.DEFINE_LOCAL and any(r.op is not Ops.RANGE for r in n.src[1:]):
                bad.append(("a DEFINE_LOCAL closes RANGEs", n))
            elif n.op is Ops.INDEX and any(i.dtype is not dtypes.index for i in n.src[1:2]):
                bad.append(("an offset has dtype index", n))
            elif (why := _outside_domain(n)) is not None:
                bad.append((why, n))
    return bad


_PER_NODE: dict[str, Callable[[UOp], str | None]] = {
    "tensor": _tensor, "rangeified": _rangeified,
}
_WHOLE: dict[str, Callable[[UOp], list[tuple[str, UOp]]]] = {
    "kernels": _kernels, "kernel": _kernel,
}


# the stages a pipeline's pass may name with spec=STAGE (checked when its rules file is)
STAGES = frozenset(_PER_NODE) | frozenset(_WHOLE)


def verify(root: UOp, stage: str, pass_name: str) -> None:
    """Raise SpecError for the first node of `root` that breaks the rules of `stage`."""
    if stage in _WHOLE:
        bad = _WHOLE[stage](root)
        if bad:
            raise SpecError(pass_name, stage, *bad[0])
        return
    check = _PER_NODE.get(stage)
    if check is None:
        raise ValueError(f"unknown stage {stage!r}; stages: {[*_PER_NODE, *_WHOLE]}")
    for n in toposort(root):
        why = check(n)
        if why is not None:
            raise SpecError(pass_name, stage, why, n)
