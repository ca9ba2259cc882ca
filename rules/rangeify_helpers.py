"""Python helpers of the rangeify scheduler's rules (`rangeify.rules`, `kernel.rules`).

In: the captures of a rule that matched (UOps, and the pass's context object). Out: the replacement
UOp, or None for "no rewrite". Each helper is here only because its rewrite needs a loop over a
node's axes or sources (a reduction's fresh ranges), or a walk over its indices or its graph;
*when* it runs, and the cost rules' choices, are said by the rules that call it, which also declare
the passes' contexts (fresh ranges, buffers, the record of reads); reshape's index arithmetic is
runtime/view.py's.

Conventions of the rangeified graph (the pipeline at the end of rangeify.rules has the passes):

- `INDEX(x, i0, ..., in)` at tensor level: the element of the n-d tensor `x` at the index
  expressions `i*` (dtype `index`); its arg, when set, holds the ranges an EXPAND above it
  dropped (x's value is reused across those loops). `INDEX(BUFFER, off)` reads a flat buffer.
- A loop variable is `RANGE(size, arg=(id, "loop"|"reduce"))`; an axis of size 1 gets the
  constant 0 instead of a range, so it never becomes a loop.
- An index meaningful only under a condition (inside a PAD) is `WHERE(valid, i, INVALID)`; the
  analysis `unmask` (rules/analyses.py) pulls the conditions out again for a kernel's loads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from rulegrad.rules.flash_cost import product_cost, ranges_in, too_long
from rulegrad.rules.lower_helpers import reduce_loop
from rulegrad.runtime.ops import LIBM_CALLS, GroupOp, Ops, reduce_start
from rulegrad.runtime.uop import OP_BIT, UOp, toposort

if TYPE_CHECKING:  # declared in rangeify.rules
    from rulegrad.rules.generated.rangeify import RangeifyContext

# the scheduler's ranges are numbered from here, a kernel's own from 0: a renumbered range can
# never be mistaken for one still to renumber (kernel.rules' `renumber` tests r.arg[0])
FIRST_RANGE = 1 << 30


# ====================================================================== the contexts' walks
def shared_reductions(sink: UOp) -> dict[UOp, list[UOp]]:
    """The reductions read by several consumers -> those consumers (ChildrenContext)."""
    users: dict[UOp, list[UOp]] = {}
    for n in toposort(sink) if sink._ops & OP_BIT[Ops.REDUCE_AXIS] else ():  # (_ops: no walk)
        for s in dict.fromkeys(n.src) if n.op is not Ops.SINK else ():
            if s.op is Ops.REDUCE_AXIS:
                users.setdefault(s, []).append(n)
    return {k: v for k, v in users.items() if len(v) > 1}


def predict_buffers(sink: UOp, nests: Callable[[UOp, UOp], bool]) -> frozenset[UOp]:
    """The reductions rangeify will buffer, guessed from the tensor graph: those read through
    an EXPAND (broadcast) before any REALIZE, but not only where they nest in their reader
    (`nests`: rangeify.rules' `nests_in`, a split's partials; the walk goes on below them).
    Rangeify's first run starts from this guess: it seldom needs a second (RangeifyContext)."""
    under: dict[UOp, bool] = {}  # node -> read through a broadcast (False: only where it nests)
    nodes = toposort(sink) if sink._ops & OP_BIT[Ops.REDUCE_AXIS] else []  # (no reduction: no walk)
    for n in reversed(nodes):  # every consumer before its sources
        if n.op is not Ops.REALIZE and (n in under or n.op is Ops.EXPAND):
            for s in n.src:
                under[s] = under.get(s, False) or not nests(n, s)
    return frozenset(n for n in nodes if n.op is Ops.REDUCE_AXIS and under.get(n, False))


def inline_reduce_ok(ctx: RangeifyContext, idx: UOp) -> bool:
    """Whether a reduction read by idx is computed once per output element of its kernel:
    no EXPAND above it dropped a range, and its indices use no enclosing reduce range and
    every loop range of the kernel (otherwise the same reduction would be recomputed for each
    broadcast element or reduce step)."""
    if idx.arg:
        return False
    rngs = ranges_in(*idx.src[1:])
    if not rngs:
        return True  # read at one constant place, and not broadcast: once per kernel
    loops = {r for r in rngs if r.arg[1] == "loop"}
    reds = [r for r in rngs if r.arg[1] != "loop"]
    if reds:
        # inside another reduction: once per element when the read uses all of that
        # reduction's ranges and all of its kernel's loops (a sum then a max, a reduction
        # read through a reshape by another), so it nests in the same kernel
        known = all(r in ctx.group and r in ctx.kernel_loops for r in reds)
        return known and all(set(ctx.group[r]) <= set(rngs) for r in reds) and \
            all(set(ctx.kernel_loops[r]) == loops for r in reds)
    group = ctx.group.get(rngs[0])
    return group is not None and set(group) == set(rngs)


def map_reduce(ctx: RangeifyContext, red: UOp, idx: UOp, local: bool = False) -> UOp:
    """INDEX(REDUCE_AXIS(x)) -> REDUCE(INDEX(x, fresh reduce ranges on the reduced axes)),
    computed here (rangeify.rules' `reduce_buffer` chose no buffer, or `local`: a kernel-local
    rule chose it). Unless it is the read that fills red's own buffer, the next run learns."""
    own = ctx.buffers.get(red)
    if not local and (own is None or own.src[0] is not idx):
        ctx.inlined.add(red)
    op, axes = red.arg[0], red.arg[1]
    rngs = list(idx.src[1:])
    new = []
    for i, s in enumerate(red.src[0].shape):
        if i in axes:
            rngs[i] = ctx.new_range(s, "reduce")
            if rngs[i].op is Ops.RANGE:
                new.append(rngs[i])
    # the new reduce ranges: one group, in the kernel whose loops this read uses
    loops: tuple[UOp, ...] = ()
    for r in ranges_in(*idx.src[1:]):
        if r.arg[1] == "loop" and r in ctx.group:
            loops = ctx.group[r]
        elif r in ctx.kernel_loops:
            loops = ctx.kernel_loops[r]
    for r in new:
        ctx.group[r], ctx.kernel_loops[r] = tuple(new), loops
    if is_products(red):
        ctx.products.update((r, product_cost(red)) for r in new)
    value = UOp(Ops.INDEX, red.src[0].dtype, (red.src[0], *rngs)).cast(red.dtype)
    return reduce_over(value, new, op, reduce_start(red.arg))


def reduce_over(value: UOp, ranges: list[UOp], op: Ops, start: object) -> UOp:
    """op of `value` over `ranges` (rangeify's and kernelize's), from `start` when not None (a
    REDUCE_AXIS's own, runtime/ops.py: then in loop form, its accumulator holding it). Over no
    ranges, one step: a float sum is still 0.0 + x (of one -0.0: +0.0, as numpy's)."""
    if not ranges:
        plain = op is Ops.ADD and value.dtype.is_float  # (a plain float sum starts at +0.0)
        return value.alu(op, value.const_like(start if start is not None else 0.0)) \
            if start is not None or plain else value
    red = UOp(Ops.REDUCE, value.dtype, (value, *ranges), arg=op)
    return red if start is None else reduce_loop(red, start)


# ---------------------------------------------------------------------- kernel-local reductions
# a sum of at least this many products is printed by the C backend as packed loops with fused
# multiply-adds (rules/pack_helpers.py's MIN_WORK, a test keeps them equal), about twice as fast
# as the plain loops a kernel with a local value in it gets: a local value never takes one there
LOCAL_MAX_PRODUCTS = 1 << 15


def is_products(red: UOp) -> bool:
    """A matmul-sized float sum of products (a matmul, attention's scores or its output): a
    sum of x * y where x and y are each broadcast along some axis (what the C backend packs)."""
    if red.arg[0] is not Ops.ADD or red.src[0].op is not Ops.MUL or not red.dtype.is_float:
        return False
    return red.src[0].size >= LOCAL_MAX_PRODUCTS and all(_broadcast(x) for x in red.src[0].src)


def _broadcast(x: UOp) -> bool:  # a view of x repeats it along an axis (an EXPAND on top)
    return any(n.op is Ops.EXPAND for n in toposort(x, stop=lambda n: n.op not in GroupOp.Movement))


def local_axes(ctx: RangeifyContext, idx: UOp) -> tuple[tuple[UOp, ...], list[int]] | None:
    """(the reader kernel's loops, the axes that differ) when idx reads a value per row of its
    kernel: every index a plain RANGE or 0, its loop ranges a prefix of one kernel's loops (the
    row), and its other ranges distinct ranges of reductions in that same kernel (the axes
    whose readers disagree: a max, a sum and a matmul each loop over them on their own)."""
    loops: list[UOp] = []
    differ: list[int] = []
    for a, i in enumerate(idx.src[1:]):
        if i.op is Ops.CONST:
            continue
        if i.op is not Ops.RANGE:
            return None
        if i.arg[1] == "loop":
            loops.append(i)
        else:
            differ.append(a)
    if not differ or not ctx.outer_loops(tuple(loops)):
        return None
    group = ctx.group[loops[0]]
    others = [idx.src[1 + a] for a in differ]
    if len(set(others)) != len(others) or any(ctx.kernel_loops.get(r) != group for r in others):
        return None
    return group, differ


def predict_local_values(sink: UOp, predicted: frozenset[UOp]) -> dict[UOp, tuple[int, ...]]:
    """Candidates for a kernel-local array of an elementwise value, from the tensor graph: a
    value of several users, one a reduction read through a broadcast (softmax's exp, summed,
    then divided by its sum) -> the axes that reduction reduces (the array's). It pays when the
    value calls libm (LIBM_CALLS; expf: 10-20 cycles a lane, even vectorized), more than an
    element written to L1 and read back; division and square root are cheaper recomputed."""
    users = Counter(s for n in (toposort(sink) if predicted else ()) for s in set(n.src))
    out: dict[UOp, tuple[int, ...]] = {}
    for red in predicted:
        v = red.src[0]
        cone = toposort(v, stop=lambda n: n.op not in GroupOp.Elementwise)
        if users.get(v, 0) > 1 and any(n.op in LIBM_CALLS for n in cone):
            out[v] = tuple(red.arg[1])
    return out


def local_value_row(ctx: RangeifyContext, x: UOp, idx: UOp) -> tuple[UOp, ...] | None:
    """The loops of the kernel where idx reads one row of a candidate value x (its reduction's
    or its other reader's: the indices on the array's axes distinct ranges over the whole axis
    in one kernel, the others constants or a strict prefix of its loops), not read by too long
    a sum of products (`too_long`); else None. (A broadcast above idx is fine: computed once.)"""
    axes = ctx.local_values.get(x)
    if axes is None or too_long(ctx, idx) is not None:
        return None
    kernel: tuple[UOp, ...] | None = None
    row: list[UOp] = []
    for a, i in enumerate(idx.src[1:]):
        if a in axes:
            kind = i.arg[1] if i.op is Ops.RANGE and i.src[0].arg == x.shape[a] else None
            loops = ctx.group.get(i) if kind == "loop" else \
                ctx.kernel_loops.get(i) if kind == "reduce" else None
            if loops is None or kernel not in (None, loops):
                return None
            kernel = loops
        elif i.op is Ops.RANGE and i.arg[1] == "loop":
            row.append(i)
        elif i.op is not Ops.CONST:
            return None
    arr = [idx.src[1 + a] for a in axes]
    kernel = ctx.made_in(x, idx, axes) if kernel == () and not row else kernel  # (batch 1)
    if kernel is None or len(set(arr)) != len(arr) or len(row) >= len(kernel):
        return None
    return kernel if set(kernel[:len(row)]) == set(row) else None
