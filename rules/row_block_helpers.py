"""Helpers of `opt.rules`' row-block action: a kernel whose row loop waits on each row's reduces
in turn (a softmax's max, then its sum, then its output pass; a log_softmax's and a
logsumexp's log of the sum) runs its rows in blocks, each pass over the block's rows.

In: a lowered kernel SINK (backends/KERNEL_AST.md, "after lowering") whose reduces and STORE
have had their actions, before the parallel action names its threads. Out: `row_blocked(sink)`,
the SINK with its one STORE's row loop marked ("rows", b) (None when it does not fire); the C
renderer (backends/c/rowblock.py) prints that loop as a loop over blocks of b rows, each pass
of the row (each reduce, then the output) a loop over the block's rows, what a pass leaves for
the next (a max, a sum's log) one value a row in a small array. Every row computes the same
ops on the same values in the same order: the same bits.

Why: in the row form each pass waits on the last step of the one before it (a vector reduce's
combine of its lanes, a log, a rounding to float16), a chain of some hundred cycles a row
that the core's reorder window does not reach across a pass over the row; rows of a block are
independent, so one row's chain runs beside the next row's pass. A float16 log_softmax of
8192x129 on one core, the kernel alone in C: 0.71 -> 0.54 ns a value (blocks of 2: 0.56, of 4
and 8: 0.54, of 16: 0.55). The block is as many rows as fit in an eighth of L1, at most
ROWS_MAX, and at least ROWS_MIN: the next pass rereads the block's rows, which must then still
be in L1 beside the output's lines and the prefetchers' (target.cache_bytes). Long rows keep the
row form, where one row's pass streams from memory beside the last row's arithmetic, which
blocking separates into a pass of loads and a pass of arithmetic: each kernel alone in C on one
core, blocked against not (48 KB of L1), a float16 log_softmax over rows of 33 1.28x, 129
1.23x, 257 1.10x, 513 1.07x, 1000 0.98x; a float32 one of 1024 0.93x; a float16 logsumexp of
8192x129 1.18x, a float32 one 1.02x, of 4096x1024 0.8x. No row length is named.
"""

from __future__ import annotations

import math

from rulegrad.rules.choices import taken
from rulegrad.runtime.loops import free_ranges, range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import cache_bytes
from rulegrad.runtime.uop import UOp, toposort

# rows a block at most and at least: enough rows that each pass's chain overlaps the next
# rows' passes (4 and 8 measured the same, 2 short of them; a latency, not a size), and the
# per-row arrays a pass hands on stay a few registers' worth
ROWS_MAX = 8
ROWS_MIN = 4


def _row_bytes(order: list[UOp]) -> int:
    """The bytes of a row the passes read: the longest reduce's values of each global buffer
    the reduces read (each pass reads the same row again), and its kernel-local arrays (a
    softmax's row of exps, one a row of the block)."""
    count, bufs = 0, set()
    for red in (n for n in order if n.op is Ops.REDUCE):
        count = max(count, math.prod(range_size(r) or 0 for r in red.src[1:]))
        bufs |= {n.src[0].src[0] for n in toposort(red.src[0]) if n.op is Ops.LOAD
                 and n.src[0].op is Ops.INDEX and n.src[0].src[0].op is Ops.DEFINE_GLOBAL}
    local = sum(n.dtype.itemsize * math.prod(range_size(r) or 0 for r in n.src[1:])
                for n in order if n.op is Ops.DEFINE_LOCAL)
    return count * sum(b.dtype.itemsize for b in bufs) + local


def row_blocked(sink: UOp) -> UOp | None:
    """The kernel with its row loop marked ("rows", b), or None: one STORE over a row loop
    (its first range) that reads reduces computed once per row (each a pass the passes after
    it wait on), no kernel-local array on the heap, no threaded reduce, and b >= ROWS_MIN rows
    in an eighth of L1 (a kernel-local row counted: one a row of the block)."""
    if sink.arg is not None or len(sink.src) != 1:
        return None
    st = sink.src[0]
    if st.arg is not None or len(st.src) < 3:
        return None
    row = st.src[2]
    rows = range_size(row)
    if row.arg[1] != "loop" or rows is None or rows < 2:
        return None
    order = toposort(st)
    if any(n.op is Ops.DEFINE_LOCAL and n.arg == "heap" for n in order):
        return None
    deps = free_ranges(st, order)
    reduces = [n for n in order if n.op is Ops.REDUCE]
    if not reduces or any(r.op is not Ops.RANGE or r.arg[1] not in ("reduce", "vector", "fill")
                          for n in reduces for r in n.src[1:]):
        return None
    # each reduce once per row: it depends on the row loop and on no other STORE loop
    others = set(st.src[3:])
    if any(row not in deps[n] or deps[n] & others for n in reduces):
        return None
    # a pass that waits on one before it: a reduce read by another, or an output loop over
    # the row after them (a plain row sum is one pass)
    if len(st.src) == 3 and not any(a in toposort(b.src[0]) for a in reduces for b in reduces
                                    if a is not b):
        return None
    nbytes = _row_bytes(order)
    if nbytes == 0:
        return None
    block = min(ROWS_MAX, rows, cache_bytes(1) // 8 // nbytes)
    if block < ROWS_MIN:
        return None
    taken(f"ROWS r{row.arg[0]} (blocks of {block} rows, each pass over the block's rows)")
    return sink.substitute({row: row.replace(arg=(row.arg[0], "rows", block))})
