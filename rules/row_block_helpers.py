"""Helpers of `opt.rules`' row-block action: a kernel whose row loop waits on each row's reduces
in turn (a softmax's max, then its sum, then its output pass; a log_softmax's and a
logsumexp's log of the sum) runs its rows in blocks, each pass its own loop over the block.

In: a lowered kernel SINK (backends/KERNEL_AST.md, "after lowering") whose reduces and STORE
have had their actions. Out: `row_blocked(sink)` (None when it does not fire): a loop fission
on the kernel graph. The row range r (n rows; the STORE's leading loops the reduces depend on,
flattened, for rows over the last axis of a 3-D or 4-D tensor: each loop's value is the flat
row's digit) becomes a range over blocks of b rows, and each
value computed once per row that a later pass reads along the row (a max, a log of a sum: a
*hand-off*) a DEFINE_LOCAL of b elements over a fresh "local" range u, its value the old one at
row min(block * b + u, n - 1), each earlier hand-off read back from its array at u. The STORE
runs over (block, u', its other loops), reading the hand-offs at u'. The renderer fills each
array in a loop over the block's rows before the loops that read it (its generic DEFINE_LOCAL
path): one pass a hand-off, then the output's. Every row computes the same ops on the same
values in the same order: the same bits. A short last block recomputes and stores the last
row again (the same values: not read back, since a kernel that reads its output is refused).

Why: in the row form each pass waits on the last step of the one before it (a vector reduce's
combine of its lanes, a log, a rounding to float16), a chain of some hundred cycles a row
that the core's reorder window does not reach across a pass over the row; rows of a block are
independent, so one row's chain runs beside the next rows' pass. The block is as many rows as
fit in an eighth of L1 (the next pass rereads them, which must still be in L1 beside the
output's lines), at most ROWS_MAX and at least ROWS_MIN: long rows keep the row form, where
one row's pass streams from memory beside the last row's arithmetic (lsm62, each kernel alone
in C on one core, blocked against not, 48 KB of L1: a float16 log_softmax over rows of 33
1.28x, 129 1.23x, 257 1.10x, 513 1.07x, 1000 0.98x; a float32 one of 1024 0.93x). No row
length is named.
"""

from __future__ import annotations

import math

from rulegrad.rules.choices import taken
from rulegrad.runtime.loops import free_ranges, fresh_id, local_read, range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import UNROLL_MAX, cache_bytes
from rulegrad.runtime.uop import UOp, substitute, toposort

# rows a block at most and at least: enough rows that each pass's chain overlaps the next
# rows' passes (lsm62: 4 and 8 measured the same, 2 short of them; a latency, not a size), and
# each hand-off's array stays a few registers' worth
ROWS_MAX = 8
ROWS_MIN = 4


def _row_bytes(order: list[UOp], deps: dict[UOp, frozenset[UOp]]) -> int:
    """The bytes of a row the passes read: of each global buffer a reduce reads, the values
    its reads vary over along the reduce's loops (each pass reads the same row again; a value
    of the row alone, a per-row scale or bias, is one value, not a row of them), and the
    kernel's local arrays (a softmax's row of exps, one a row of the block)."""
    bufs: dict[UOp, int] = {}
    for red in (n for n in order if n.op is Ops.REDUCE):
        for ld in toposort(red.src[0]):
            if ld.op is Ops.LOAD and ld.src[0].op is Ops.INDEX and \
                    ld.src[0].src[0].op is Ops.DEFINE_GLOBAL:
                buf, along = ld.src[0].src[0], deps[ld.src[0]] & set(red.src[1:])
                count = math.prod(range_size(r) or 0 for r in along)
                bufs[buf] = max(bufs.get(buf, 0), count * buf.dtype.itemsize)
    local = sum(n.dtype.itemsize * math.prod(range_size(r) or 0 for r in n.src[1:])
                for n in order if n.op is Ops.DEFINE_LOCAL)
    return sum(bufs.values()) + local


def _hand_offs(st: UOp, once: frozenset[UOp], order: list[UOp],
               along: frozenset[UOp]) -> list[UOp]:
    """The values computed once per row (they depend on the row loops `once` alone) that hold a
    reduce or a read of the row of their own (`_work`: reads along the loops `along`, those the
    reduces depend on) and are read inside a loop of a later pass (a reduce's update or the
    output's row): each is one pass's result."""
    deps = free_ranges(st, order)
    reduces: set[UOp] = set()  # the nodes with a REDUCE under them
    found: dict[UOp, None] = {}
    for n in order:
        if _work(n, along, deps) or any(s in reduces for s in n.src):
            reduces.add(n)
        if n.op in (Ops.STORE, Ops.INDEX, Ops.DEFINE_REG) or deps[n] <= once:
            continue
        for s in n.src:  # a consumer inside a loop: its row-once sources are hand-offs
            if s in reduces and deps[s] <= once and s.dtype.is_float:
                found[s] = None
    # one computed from other hand-offs alone (a mask's exp(-inf - max)) needs no pass of its
    # own: the pass that reads it computes it once a row from their arrays
    own = {h: [r for r in toposort(h, stop=lambda n, h=h: n is not h and n in found)
               if _work(r, once, deps)] for h in found}
    # (one read of the row alone, a row's value from an earlier kernel: as cheap to read
    # again in each pass as from an array)
    return [h for h in found if any(r.op is Ops.REDUCE for r in own[h]) or len(own[h]) > 1]


def _work(n: UOp, once: frozenset[UOp], deps: dict[UOp, frozenset[UOp]]) -> bool:
    """A reduce, or a read of the row (an unrolled reduce's values, read once per pass that
    computes it: each pass reading a value computed from them would compute it again)."""
    return n.op is Ops.REDUCE or n.op is Ops.LOAD and once <= deps[n]


def row_blocked(sink: UOp) -> UOp | None:
    """The kernel with its rows in blocks of b, each pass a loop over the block, or None: one
    STORE over row loops (its leading ranges, those the reduces depend on: one row space)
    whose value holds hand-offs (`_hand_offs`), the
    reduces each once per row, any kernel-local array filled once per row (a softmax's exps:
    then one a row of the block), no read of the output's buffer, and b >= ROWS_MIN rows in
    an eighth of L1."""
    if sink.arg is not None or len(sink.src) != 1:
        return None
    st = sink.src[0]
    if st.op is not Ops.STORE or st.arg is not None or len(st.src) < 3:
        return None
    order = toposort(st)
    deps = free_ranges(st, order)
    reduces = [n for n in order if n.op is Ops.REDUCE]
    # the row space: the STORE's leading loops up to the last the reduces depend on (a softmax
    # over the last axis of a 3-D tensor: two of them), flattened to one row index below, so
    # batched rows are blocked as one run of rows. Rows broadcast along a leading loop (x[1:2]
    # .expand(6, 9, 33) feeding a softmax: its reduces depend on the second loop alone) are
    # computed once per iteration of both in the row form too, and are blocked so
    loops = frozenset().union(*(deps[n] for n in reduces)) & set(st.src[2:])
    lead = st.src[2:2 + max((i for i, r in enumerate(st.src[2:], 1) if r in loops), default=0)]
    sizes = [range_size(r) for r in lead]
    if not lead or any(r.arg[1] != "loop" or n is None for r, n in zip(lead, sizes, strict=True)):
        return None
    rows, row = math.prod(sizes), lead[-1]
    if rows < 2:
        return None
    once = frozenset(lead)
    out = st.src[0].src[0]
    locals_ = [n for n in order if n.op is Ops.DEFINE_LOCAL]
    # (a local filled once per row: not one over the block already, this action's own)
    if any(n.op is Ops.INDEX and n is not st.src[0] and n.src[0] is out for n in order) or any(
            d.arg is not None or deps[d] != loops or d.src[1].arg[1] != "local" for d in locals_):
        return None
    if any(r.op is not Ops.RANGE or r.arg[1] not in ("reduce", "vector", "fill")
                          for n in reduces for r in n.src[1:]):
        return None
    if any(deps[n] != loops for n in reduces):
        return None
    # rows of at most UNROLL_MAX values keep the row form: unroll_reduce makes their reduces
    # straight-line code, which the core overlaps across rows already (a layernorm of 4096 x 12,
    # its mean unrolled, 0.94x blocked on one core)
    if max(math.prod(range_size(r) or 0 for r in n.src[1:]) for n in reduces) <= UNROLL_MAX:
        return None
    hand = _hand_offs(st, once, order, loops)
    nbytes = _row_bytes(order, deps)
    # a pass to overlap: a hand-off that ends a reduce's chain (not only reads of the row)
    if nbytes == 0 or not any(n.op is Ops.REDUCE for h in hand for n in toposort(h)):
        return None
    block = min(ROWS_MAX, rows, cache_bytes(1) // 8 // nbytes)
    if block < ROWS_MIN:
        return None
    nxt = fresh_id(st)
    outer = UOp(Ops.RANGE, row.dtype, (UOp.const(row.dtype, -(-rows // block)),),
                (lead[0].arg[0], "loop"))
    size = UOp.const(row.dtype, block)
    # a "fill" sum (wide_exps' `filled`) was to be added up in its row's filling loop, which
    # now fills the block's rows: it is the vector reduce it is everywhere else (the same steps)
    vector = {r: r.replace(arg=(r.arg[0], "vector")) for n in reduces for r in n.src[1:]
              if r.arg[1] == "fill"}
    done: dict[UOp, UOp] = {}  # each hand-off and local -> its array over the block

    def at(u: UOp) -> dict[UOp, UOp]:
        """What a pass over the block's rows u reads: the row min(block * b + u, n - 1) (a short
        last block repeats the last row), the earlier passes' arrays at u."""
        here = (outer * size + u).minimum(UOp.const(row.dtype, rows - 1))
        mapping = {**_unflattened(lead, sizes, here), **vector}
        for n, d in done.items():
            if n.op is not Ops.DEFINE_LOCAL:
                mapping[n] = local_read(d, u)
                continue
            width = UOp.const(row.dtype, math.prod(range_size(r) or 0 for r in n.src[1:]))
            for idx in (i for i in order if i.op is Ops.INDEX and i.src[0] is n):
                mapping[idx] = idx.replace(src=(d, u * width + substitute(idx.src[1], mapping)))
        return mapping

    for n in (n for n in order if n in set(hand) or n.op is Ops.DEFINE_LOCAL):
        # ("rows": a kernel-local row's array is one a row of the block, filled in vectors
        # along its own loop as before: opt_helpers. `one_row`)
        u = UOp(Ops.RANGE, row.dtype, (size,), (nxt, "local" if n in hand else "rows"))
        nxt += 1
        if n.op is Ops.DEFINE_LOCAL:
            done[n] = n.replace(src=(substitute(n.src[0], at(u)), u, *n.src[1:]))
        else:
            done[n] = UOp(Ops.DEFINE_LOCAL, n.dtype, (substitute(n, at(u)), u))
    u = UOp(Ops.RANGE, row.dtype, (size,), (nxt, "loop"))
    idx, value = (substitute(s, at(u)) for s in st.src[:2])
    new = st.replace(src=(idx, value, outer, u, *st.src[2 + len(lead):]))
    taken(f"ROWS {' '.join(f'r{r.arg[0]}' for r in lead)} (blocks of {block} rows: "
          f"{len(done) + 1} passes over the block's rows, {len(hand)} values a row handed on, "
          f"{len(locals_)} rows kept a row)")
    return sink.replace(src=(new,))


def _unflattened(lead: tuple[UOp, ...], sizes: list[int], here: UOp) -> dict[UOp, UOp]:
    """Each leading loop's value at flattened row `here` (the last loop varies fastest): its
    digit, the quotient by the loops after it taken one loop at a time (x // a // b, not
    x // (a * b)), so that symbolic.rules fold a contiguous row's index back to here's multiple
    a pair of loops at a time ((q // n) * n * s + (q % n) * s is q * s)."""
    mapping, at = {}, here
    for r, n in zip(reversed(lead), reversed(sizes), strict=True):
        if r is lead[0]:
            mapping[r] = at
        else:
            mapping[r], at = at % UOp.const(here.dtype, n), at // UOp.const(here.dtype, n)
    return mapping


