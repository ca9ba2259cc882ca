"""Helper of rangeify.rules' `narrow_reduce`: a long reduction to a few outputs (a sum down the
columns of a tall, narrow matrix), split into partials every core and every vector lane takes.

In: a tensor graph's REDUCE_AXIS over x's leading axes, N values to each of C outputs (x read
as N rows of C). Out: `narrow_split(x, red)`, the same reduction as op(head, tail) (None when
it is not such a reduction, or too short to gain):

- head: the first T*M*k rows read as T shares of M rows of L = k*C values (k rows side by
  side, the whole of each L-run one contiguous read), each share reduced to L partials (a
  kernel of its own: T x L outputs, the T shares on the threads, the L partials on vector
  lanes: L is whole vectors, runtime/target.py's width, and at least REDUCE_VECTORS of them,
  so the adds of a share run in independent chains), then the T*k partials of each column
  combined;
- tail: the last N - T*M*k rows (fewer than T*k) reduced as before, absent when there are none.

In one loop the C accumulators of such a reduce wait on their own last add each row (C
chains on one core: a 999983 x 2 column sum ran at 0.43x torch's speed). The split needs no
divisor of N (a prime length takes the tail). MAX, MIN and integer sums are exact in any
order (the C prelude's max takes +0.0 over -0.0 either way round, and keeps NaN); a float
sum's order is the reduction contract's (runtime/semantics.py), as the scheduler's
split_reduceop's.
"""

from __future__ import annotations

import math

from rulegrad.rules.opt_helpers import REDUCE_VECTORS
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import SPLIT_MIN_ROWS, cache_bytes, threads, vector_bytes
from rulegrad.runtime.uop import UOp, toposort

# a value x reads broadcast along its rows (a variance's mean: a reduction's result, expanded)
# is read at lane % C in the partials, a gather per lane and the value's arithmetic per lane:
# var over 65521 x 5 ran at 0.77x the one loop's speed. Such an x keeps its one loop
_BROADCAST = (Ops.EXPAND, Ops.REDUCE_AXIS)


def lanes_of(columns: int, itemsize: int) -> int:
    """L, the partials per share: whole rows of `columns` values that fill whole vectors of
    the machine's width, at least REDUCE_VECTORS of them (as many independent add chains as
    opt_helpers' vector accumulators keep)."""
    lanes = max(1, vector_bytes() // itemsize)
    run = math.lcm(columns, lanes)
    return run * -(-REDUCE_VECTORS * lanes // run)


def narrow_split(x: UOp, red: UOp) -> UOp | None:
    """red (a REDUCE_AXIS over x's leading axes, C = red.size outputs, C at most two vectors'
    lanes, from its op's identity) as op(head, tail), the module docstring's; None when x is
    no larger than the L1 data cache (one kernel's pass is as good as three kernels'), reads
    a broadcast value (_BROADCAST), or is shorter than two blocks of k rows per thread."""
    axes = red.arg[1]
    if len(red.arg) != 2 or tuple(sorted(axes)) != tuple(range(len(axes))) or x.shape is None:
        return None
    itemsize = red.dtype.itemsize
    cols, rows = red.size, x.size // max(red.size, 1)
    if not 2 <= cols <= 2 * vector_bytes() // itemsize or x.size * itemsize <= cache_bytes(1):
        return None
    if red.dtype.is_bool or any(n.op in _BROADCAST for n in toposort(x)):
        return None
    lanes = lanes_of(cols, itemsize)
    k = lanes // cols
    # a share per thread, or more where a share would be long enough for split_reduceop to
    # split it again (whole shares per thread: a multiple of the threads)
    shares = threads() * max(1, -(-rows // (k * threads() * SPLIT_MIN_ROWS)))
    mid = rows // (shares * k)  # rows of L per share
    if mid < 2:
        return None
    op, flat = red.arg[0], x.reshape((rows, cols))
    head_rows = shares * mid * k
    parts = flat.shrink(((0, head_rows), (0, cols))).reshape((shares, mid, lanes))
    partial = parts.f(Ops.REDUCE_AXIS, arg=(op, (1,)), dtype=red.dtype).f(Ops.CONTIGUOUS)
    head = partial.reshape((shares * k, cols)).f(Ops.REDUCE_AXIS, arg=(op, (0,)), dtype=red.dtype)
    if head_rows < rows:
        rest = flat.shrink(((head_rows, rows), (0, cols)))
        head = head.alu(op, rest.f(Ops.REDUCE_AXIS, arg=(op, (0,)), dtype=red.dtype))
    return head.reshape(red.shape)
