"""Helpers of `opt.rules`' thread action: which reductions with no output loop around them
(a full sum, or one computed once per kernel beside its stores) split their outermost loop
across cores.

In: a lowered loop-form REDUCE (backends/KERNEL_AST.md, "after lowering"). Out:
`threadable(red)`, a bool, and `threaded(red)`, the REDUCE with its outermost range marked
`RANGE(..., (id, "thread"))`, which backends/c/render.py prints as `omp parallel for
reduction(...)`: each thread combines its share of the loop into its own accumulator, and the
threads' accumulators are combined at the end. MAX, MIN and integer sums are exact in any
order; a float sum's order is the reduction contract's (runtime/semantics.py).

The scheduler splits a long full reduce into an outer and an inner loop (a sum of 4M values is
256 sums of 16384); the outer loop alone is short, so the work that decides threading counts
every loop inside the reduce: the nested reduces that run per iteration of it (`loops_within`;
not one computed once before it, a 1xN softmax's max inside its sum of exp(x - max)).
"""

from __future__ import annotations

import math

from rulegrad.rules.choices import current, pick
from rulegrad.rules.pack_helpers import PARALLEL_MIN_WORK
from rulegrad.runtime.loops import free_ranges, loops_within, range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


def threadable(red: UOp) -> bool:
    """A loop-form REDUCE that reads no loop of its kernel's stores (it is computed once, at
    the top of the kernel), whose outermost loop is at least 2 long, and whose loops (its own
    and those nested in it) run at least PARALLEL_MIN_WORK times; not yet threaded, and with an
    OpenMP reduction to print (every op but a bool MAX or MIN)."""
    update = red.src[0]
    if red.arg is None or not update.src or update.src[0].op is not Ops.DEFINE_REG:
        return False
    if red.dtype.is_bool and red.arg in (Ops.MAX, Ops.MIN):
        return False
    first = red.src[1]
    size = range_size(first)
    if first.arg[1] == "thread" or size is None or size < 2:
        return False
    if free_ranges(red)[red]:
        return False
    sizes = [range_size(r) for r in (*red.src[1:], *loops_within(red, red.src[1:]))]
    least = pick(current().parallel_min_work, PARALLEL_MIN_WORK)  # (or the searched choice)
    return None not in sizes and math.prod(sizes) >= least  # type: ignore[arg-type]


def threaded(red: UOp) -> UOp:
    """The REDUCE with its outermost loop marked for threads."""
    first = red.src[1]
    return red.substitute({first: first.replace(arg=(first.arg[0], "thread"))})
