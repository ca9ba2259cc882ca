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
and 8: 0.54, of 16: 0.55). The block is as many rows as fit in a quarter of L1 (their reads of
the next pass then hit L1: target.cache_bytes), at most ROWS_MAX: no row length is named.
"""

from __future__ import annotations

from rulegrad.rules.choices import taken
from rulegrad.runtime.loops import free_ranges, range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import cache_bytes
from rulegrad.runtime.uop import UOp, toposort

# rows a block at most: enough rows that each pass's chain overlaps the next row's pass (4 and
# 8 measured the same, 2 a little short of them; a latency, not a size), and the per-row arrays
# a pass hands on stay a few registers' worth
ROWS_MAX = 8


def _row_bytes(st: UOp, order: list[UOp], row: UOp, deps: dict) -> int:
    """The bytes a row's passes read from memory: each global buffer read inside a reduce
    over the row, a reduce's values times the element's size."""
    out = 0
    for red in (n for n in order if n.op is Ops.REDUCE):
        count = 1
        for r in red.src[1:]:
            count *= range_size(r) or 0
        bufs = {n.src[0].src[0] for n in toposort(red.src[0])
                if n.op is Ops.LOAD and n.src[0].op is Ops.INDEX
                and n.src[0].src[0].op is Ops.DEFINE_GLOBAL}
        out += count * sum(b.dtype.itemsize for b in bufs)
    return out


def row_blocked(sink: UOp) -> UOp | None:
    """The kernel with its row loop marked ("rows", b), or None: one STORE over a row loop
    (its first range) that reads reduces computed once per row (at least one whose value
    another reduce or the output reads, so a pass waits on one), no kernel-local array (a
    softmax's row of exps: one a row of the block), no threaded reduce, and b >= 2 rows in a
    quarter of L1."""
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
    if any(n.op is Ops.DEFINE_LOCAL for n in order):
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
    nbytes = _row_bytes(st, order, row, deps)
    if nbytes == 0:
        return None
    block = min(ROWS_MAX, rows, cache_bytes(1) // 4 // nbytes)
    if block < 2:
        return None
    taken(f"ROWS r{row.arg[0]} (blocks of {block} rows, each pass over the block's rows)")
    return sink.substitute({row: row.replace(arg=(row.arg[0], "rows", block))})
