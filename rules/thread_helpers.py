"""Helpers of `opt.rules`' thread action: which reductions with no output loop around them
(a full sum, or one computed once per kernel beside its stores) split their outermost loop
across cores.

In: a lowered loop-form REDUCE (backends/KERNEL_AST.md, "after lowering"). Out:
`threadable(red)`, a bool, and `threaded(red)`, the REDUCE with its outermost range marked
`RANGE(..., (id, "thread", team))` (team: the threads its work pays for), which
backends/c/render.py prints as `omp parallel for reduction(...)` on that team: each thread
combines its share of the loop into its own accumulator, and the threads' accumulators are
combined at the end. MAX, MIN and integer sums are exact in any
order; a float sum's order is the reduction contract's (runtime/semantics.py).

The scheduler splits a long full reduce into an outer and an inner loop (a sum of 4M values is
256 sums of 16384); the outer loop alone is short, so the work that decides threading counts
every loop inside the reduce: the nested reduces that run per iteration of it (`loops_within`;
not one computed once before it, a 1xN softmax's max inside its sum of exp(x - max)).

The scheduler's split needs a divisor of the length (8..SPLIT_PARTS); a length with none (a
prime, or two primes' product) reaches the optimizer as one loop, whose threads would each take
single iterations into slots of their own and leave no loop to vectorize. `blocked(red)` splits
such a loop itself, whatever its length N: `split_reduce` makes it T blocks of B values (B a
whole number of vector steps, T about SPLIT_PARTS, runtime/target.py: as many as the
scheduler's split makes) and peels the last N - T*B values into a reduce of their own, combined
after the blocks by the reduce's op. The blocks then take threads (`threaded`) and each block
vectors (opt_helpers.vector_reduce).
"""

from __future__ import annotations

import math

from rulegrad.rules.choices import taken
from rulegrad.rules.opt_helpers import REDUCE_VECTORS, VECTOR_LANES
from rulegrad.rules.pack_helpers import region_threads
from rulegrad.rules.parallel_helpers import load_weight, runs
from rulegrad.runtime.loops import free_ranges, fresh_id, loops_within, range_size
from rulegrad.runtime.ops import Ops, reduce_identity
from rulegrad.runtime.target import SPLIT_PARTS, threads
from rulegrad.runtime.uop import UOp, toposort

# a block is a whole number of the vector accumulators' steps (opt_helpers.reduce_vectors: 4
# vectors of 8 lanes), so no block ends in scalar steps
BLOCK_STEP = REDUCE_VECTORS * VECTOR_LANES


def threadable(red: UOp) -> bool:
    """A loop-form REDUCE that reads no loop of its kernel's stores (it is computed once, at
    the top of the kernel), whose outermost loop is at least 2 long, and whose loops (its own
    and those nested in it) do work that pays for two threads' parallel region (`team`); not yet
    threaded, and with an OpenMP reduction to print (every op but a bool MAX or MIN)."""
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
    return team(red) >= 2


def team(red: UOp) -> int:
    """The threads red's work pays for (pack_helpers' `region_threads`: each share at least
    PARALLEL_MIN_WORK), the model every threaded loop's threads come from: the team its threaded
    loop runs on (`threaded` records it in the range; it had run the runtime's count, a sum
    of 3M values at RULEGRAD_THREADS=4 on 4 threads where 2 shares pay), 1 when none pays. The
    work is parallel_helpers' `_work`'s: each load of its body, and each
    libm call as LIBM_LOADS loads, once per iteration of its loops (its own and those nested in
    it) up to the innermost it reads; the iterations at least (a body of no load). Counted by
    iterations alone, a sum of exp(x) over 1.5M values (6M loads) ran on one core while exp(x)
    of 600K took two threads: 0.3-0.7x main's time, which threaded it from 1M iterations."""
    loops = (*red.src[1:], *loops_within(red, red.src[1:]))
    sizes = [range_size(r) for r in loops]
    if None in sizes:
        return 1
    deps = free_ranges(red)
    work = sum(load_weight(n) * runs(loops, frozenset(), deps[n]) for n in toposort(red.src[0]))
    return region_threads(max(work, math.prod(sizes)), threads())  # type: ignore[arg-type]


def _starts_neutral(red: UOp) -> bool:
    """Whether red's accumulator starts from its op's identity (or, for a sum, from +0.0 or
    -0.0, lower_helpers.reduce_loop's starts): two parts that each start there combine to what
    one loop computes."""
    start = red.src[0].src[0].arg
    if red.arg is Ops.ADD:
        return start == 0
    return start == reduce_identity(red.arg, red.dtype)


def blocked(red: UOp) -> UOp | None:
    """A loop-form REDUCE computed once per kernel over one plain loop of N values with no loop
    inside it (a split reduce's outer loop has its blocks already), worth threads
    (`threadable`'s test), as op(blocks, tail): `blocks` the same REDUCE over T blocks (a fresh
    range) of B values (a range with the old one's id), value n read at t * B + b; `tail` the
    REDUCE over the last N - T*B values (a fresh range), absent when there are none. None when
    red is not such a reduce, or N is short of two blocks."""
    update = red.src[0]
    r = red.src[1] if len(red.src) == 2 else None
    if r is None or r.op is not Ops.RANGE or r.arg[1] != "reduce" or len(update.src) != 2 \
            or not threadable(red) or loops_within(red, red.src[1:]):
        return None
    size: int = range_size(r)  # type: ignore[assignment]  (threadable: a constant)
    block = max(BLOCK_STEP, size // SPLIT_PARTS // BLOCK_STEP * BLOCK_STEP)
    if size < 2 * block or not _starts_neutral(red):
        return None
    fresh = fresh_id(red)
    count = size // block
    outer, inner = UOp.range(count, fresh, "reduce"), UOp.range(block, r.arg[0], "reduce")
    blocks = _part(red, (outer, inner), outer * block + inner)
    tail = f" + a tail of {size - count * block}" if size % block else ""
    taken(f"SPLIT {red.arg.name} over r{r.arg[0]} ({size} values) into r{fresh} x r{r.arg[0]} "
          f"({count} blocks of {block}{tail})")
    if not tail:
        return blocks
    last = UOp.range(size - count * block, fresh + 1, "reduce")
    return blocks.alu(red.arg, _part(red, (last,), last + count * block))


def _part(red: UOp, ranges: tuple[UOp, ...], at: UOp) -> UOp:
    """red over `ranges` with an accumulator of its own, its loop variable read as `at`."""
    reg, value = red.src[0].src
    update = red.src[0].replace(src=(reg.replace(src=ranges), value.substitute({red.src[1]: at})))
    return red.replace(src=(update, *ranges))


def threaded(red: UOp) -> UOp:
    """The REDUCE with its outermost loop marked for threads (recorded as an action), and its
    team (`team`, at most the loop's iterations) with it: `(id, "thread", team)`, the range's
    arg, which the printer's threaded loop runs on (ctext.Threads.team)."""
    first = red.src[1]
    taken(f"THREAD {red.arg.name} over r{first.arg[0]} ({range_size(first)} iterations)")
    threads_ = max(2, min(team(red), range_size(first)))  # type: ignore[type-var]
    return red.substitute({first: first.replace(arg=(first.arg[0], "thread", threads_))})
