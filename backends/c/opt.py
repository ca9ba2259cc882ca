"""The kernel optimizer's pass and its report: lowered kernel AST -> the same kernel with the
actions of `rules/opt.rules` applied, and the list of actions taken.

In: a kernel after `lower` (backends/KERNEL_AST.md, "after lowering"). Out: the kernel with
small reduces unrolled, innermost loops marked for vectorizing (RANGE kind "upcast", or "vector"
for explicit vectors; a reduce's own "vector" range: vectors of partial results), reduces
interchanged (the STORE's last output range marked "upcast" and run inside the reduce loops,
maybe split into blocks or, with the row range, into an unrolled register tile) and sums of
products packed (a `Pack` in the STORE's arg: rows, columns, register tile, packed operand,
threaded loop), which `render.py` and `gemm.py` print;
`actions(kernel)` names them (the optimizer's helpers record each action on the kernel as they
take it; the loop kinds the upcast, vector and scan actions mark are read off it), and
`render.py` adds how it printed them (a launched loop, the block library), so `DEBUG=2` shows
every decision taken for a kernel;
the loops split across cores are named in the SINK's arg (a `Parallel`).

`RULEGRAD_OPT=0` switches the optimizer off: the kernel is printed as the plain loop nest it
was lowered to (no action, so no packed, flash, staged or threaded path), computing the same
values; a way to tell the optimizer's fault from the rest's.
"""

from __future__ import annotations

from rulegrad.rules import matcher
from rulegrad.rules.choices import DEFAULT, Choices, chosen
from rulegrad.rules.interchange_helpers import columns
from rulegrad.rules.opt_helpers import VECTOR_LANES, reduce_vectors
from rulegrad.rules.parallel_helpers import Parallel
from rulegrad.rules.wide_exps import fills_sum, wide_fill
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.env import env_flag
from rulegrad.runtime.loops import range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.rewrite import graph_rewrite
from rulegrad.runtime.target import REDUCE_VECTORS, vector_lanes
from rulegrad.runtime.uop import UOp, keeping_answers, toposort


def optimizer_on() -> bool:
    """Whether the optimizer runs (`RULEGRAD_OPT`, default on; read at each program: a program
    compiled with it off is kept apart from one compiled with it on)."""
    return env_flag("RULEGRAD_OPT", default=True)


def optimize_kernel(ast: UOp, choices: Choices = DEFAULT) -> UOp:
    """The kernel with the optimizer's actions applied, sized by `choices` (rules/choices.py:
    the heuristic's by default, or a record found by search, backends/c/beam.py)."""
    # the helpers' walks and loop facts of one node are kept until the kernel is done (nodes
    # are immutable: an answer never goes stale; the table goes with the kernel)
    with keeping_answers():
        return _optimized(ast, choices)


def _optimized(ast: UOp, choices: Choices) -> UOp:
    if not optimizer_on() or any(n.op is Ops.RANGE and range_size(n) == 0 for n in toposort(ast)):
        # (a loop of 0 trips: the plain nest does no work, or only writes a reduce's identity,
        # and the actions' sizing is not defined on it: the transpose's took a max of nothing)
        return ast
    # unroll first (sources are rewritten before their STORE): a STORE whose reduces were all
    # unrolled is then an elementwise loop the upcast rule can vectorize
    with chosen(choices) as taken:
        out = graph_rewrite(ast, matcher("opt", "opt"), name="opt")
    # an exp of a masked value (opt.rules' mask_actions, templates: no helper records them): a
    # select of two exps, the masked arm's the same along its row
    masked = _masked_exps(out) - _masked_exps(ast)
    if masked:
        taken.append(f"MASK EXP: {masked} exp{'s' if masked > 1 else ''} of a select taken "
                     "through it (the masked arm once per row)")
    # the actions, each recorded by its helper as it took it (rules/choices.py's `taken`), kept
    # on the kernel: its SINK's tag, which no printer reads
    return out.replace(tag=tuple(taken)) if taken else out


def _masked_exps(k: UOp) -> int:
    """How many selects of two exps the kernel computes."""
    return sum(1 for n in toposort(k) if n.op is Ops.WHERE
               and n.src[1].op is Ops.EXP and n.src[2].op is Ops.EXP)


def actions(after: UOp) -> list[str]:
    """The optimizer's actions on one optimized kernel, as `UNROLL MAX over r4 r5 (4 values)`
    and `UPCAST r3 (32 iterations)`: those its helpers recorded on it (`optimize_kernel`), then
    those its loops' kinds and its SINK's arg say."""
    done: list[str] = list(after.tag or ())
    # a reduce's own "vector" range is its vector accumulators, not an upcast output loop
    accumulated = {n.src[-1] for n in toposort(after)
                   if n.op is Ops.REDUCE and n.src[1:] and n.src[-1].arg[1] == "vector"}
    for s in toposort(after):  # a window run as a running accumulator (opt.rules' scan_store)
        if s.op is Ops.REDUCE and s.src[1:] and s.src[1].arg[1] == "scan":
            done.append(f"SCAN {s.arg.name} along r{s.src[1].arg[0]} ({int(s.src[1].src[0].arg)} "
                        "values, a running accumulator)")
    interchanged = {c for n in toposort(after) if n.op is Ops.STORE for c in columns(n)}
    blocked = {n.src[3]: f", in {int(n.src[2].src[0].arg)} blocks r{n.src[2].arg[0]}"  # threads'
               for n in toposort(after) if n.op is Ops.STORE and n.src[3:]  # (parallel_helpers)
               and n.src[2].arg[1] == "block" and n.src[3] not in interchanged}
    # an upcast loop with a short loop unrolled inside it (opt_helpers' upcast_across)
    unrolled = {n.src[-2]: f", r{n.src[-1].arg[0]} ({int(n.src[-1].src[0].arg)}) unrolled inside"
                for n in toposort(after) if n.op is Ops.STORE and len(n.src) > 3
                and n.src[-2].arg[1] == "upcast" and n.src[-1].arg[1] == "unroll"
                and n.src[-2] not in interchanged}
    # a float16 store's vector loop printed 16 halves a vector (wide_exps' `wide_fill`)
    halves = {n.src[-1] for n in toposort(after) if n.op is Ops.STORE
              and n.src[1].dtype is dtypes.float16 and wide_fill(n)}
    for n in toposort(after):
        if n.op is Ops.RANGE and n.arg[1] == "upcast" and n not in interchanged:
            done.append(f"UPCAST r{n.arg[0]} ({int(n.src[0].arg)} iterations"
                        f"{unrolled.get(n, '')}{blocked.get(n, '')})")
        if n.op is Ops.RANGE and n.arg[1] == "simd":
            done.append(f"UPCAST r{n.arg[0]} ({int(n.src[0].arg)} iterations, 512-bit by gcc"
                        f"{blocked.get(n, '')})")
        # a "fill" sum (opt.rules' fill_reduce): added up as its row is filled where wide_exps'
        # `fills_sum` says; else it reads the row back, a vector reduce
        if n.op is Ops.REDUCE and n.src[1:] and n.src[-1].arg[1] == "fill" \
                and fills_sum(n.src[0].src[1].src[0].src[0]):
            done.append(f"FILL {n.arg.name} over r{n.src[-1].arg[0]} ({int(n.src[-1].src[0].arg)} "
                        f"values: {REDUCE_VECTORS} vectors of 8 partial results, added as the "
                        "loop that fills its row stores them)")
        if n.op is Ops.REDUCE and (n.src[-1] in accumulated or n.src[1:] and n.src[-1].arg[1]
                                   == "fill" and not fills_sum(n.src[0].src[1].src[0].src[0])):
            size = int(n.src[-1].src[0].arg)
            lanes = vector_lanes(n.dtype.itemsize)
            nvec = reduce_vectors(n.arg, size, lanes)
            done.append(f"VECTOR {n.arg.name} over r{n.src[-1].arg[0]} ({size} values: "
                        f"{nvec} vector{'s' if nvec > 1 else ''} of {lanes} partial "
                        "results)")
        if n.op is Ops.RANGE and n.arg[1] == "vector" and n not in accumulated | interchanged:
            size, lanes = int(n.src[0].arg), 16 if n in halves else VECTOR_LANES
            tail = ", the last overlapping" if size % lanes else ""
            count = -(-size // lanes)
            done.append(f"UPCAST r{n.arg[0]} ({size} iterations, {count} vector"
                        f"{'s' if count > 1 else ''} of {lanes}{tail})")
    if isinstance(after.arg, Parallel):
        loops = {n.arg[0]: n for n in toposort(after) if n.op is Ops.RANGE}
        done += after.arg.describe({i: int(n.src[0].arg) for i, n in loops.items()})
    return done
