"""Helpers of `opt.rules`' fetch-ahead action: which row loop fetches its next row's reads
while it computes this one.

In: a lowered kernel whose stores have their actions (backends/KERNEL_AST.md, "after
lowering"). Out: `fetched_ahead(sink)`, the kernel with each such loop's RANGE marked
(id, kind, AHEAD_ROWS), which backends/c/render.py prints as a `__builtin_prefetch` of the
address AHEAD_ROWS rows on beside each contiguous vector load of that row inside the loop;
None when no loop qualifies.

A row loop qualifies when, per iteration, a global buffer's row is read by two passes or
more (a softmax's max, then its exps; a layernorm's sum, its squares, its outputs): the first
pass brings the row into the cache and waits on memory, the later ones compute from the cache
while memory idles. Fetching the next row during those later passes (its first pass then reads
from the cache) overlaps the two. Only rows that fit, with the next one, in a half of the
level-1 data cache (runtime/target.py's `cache_bytes`, a machine fact): a longer row's next one
would push out the rows the later passes read. Nor rows shorter than a vector reduce's block
(REDUCE_VECTORS vectors, runtime/target.py): a line or two, which the hardware's stream
prefetcher brings already, and whose passes are too short to hide a fetch. The prefetches are
printed beside explicit vector loads only (a 16-lane row of exps, a vector reduce's blocks),
one per vector. A prefetch changes no value: it reads nothing
into a register and never faults (render.py computes its address as an integer).
"""

from __future__ import annotations

from rulegrad.runtime.loops import free_ranges, range_size, stride
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import REDUCE_VECTORS, cache_bytes, vector_bytes
from rulegrad.runtime.uop import UOp, toposort

AHEAD_ROWS = 1  # the next row: one row is a pass's worth of memory time, two would not fit


def fetched_ahead(sink: UOp) -> UOp | None:
    """The kernel with each qualifying row loop marked (id, kind, AHEAD_ROWS); None when none
    is, or every one is already marked."""
    order = toposort(sink)
    deps = free_ranges(sink, order)
    # a row loop: a plain STORE's outer loop, the only one around its passes (its own inner
    # loop, if any, one of them)
    rows = {st.src[2] for st in order if st.op is Ops.STORE and st.arg is None
            and 3 <= len(st.src) <= 4 and st.src[2].arg[1] == "loop" and len(st.src[2].arg) == 2}
    mapping = {r: r.replace(arg=(*r.arg, AHEAD_ROWS)) for r in rows if _reread(r, order, deps)}
    return sink.substitute(mapping) if mapping else None


def _reread(r: UOp, order: list[UOp], deps: dict[UOp, frozenset[UOp]]) -> bool:
    """Whether some global buffer's row along loop r is read by two passes or more per
    iteration of r (loads along different inner loops), the re-read rows' bytes within half
    of the level-1 cache with the next row beside them."""
    passes: dict[UOp, set[UOp]] = {}
    itemsize: dict[UOp, int] = {}
    for n in order:
        idx = n.src[0] if n.op is Ops.LOAD and n.src else None
        if idx is None or idx.op is not Ops.INDEX or idx.src[0].op is not Ops.DEFINE_GLOBAL \
                or not stride(idx.src[1], r):
            continue
        inner = deps[idx] - {r}
        if len(inner) != 1:  # (one pass: one loop along the row)
            continue
        passes.setdefault(idx.src[0], set()).update(inner)
        itemsize[idx.src[0]] = n.dtype.itemsize
    reread = [(buf, loops) for buf, loops in passes.items() if len(loops) >= 2]
    if not reread or any(range_size(j) is None for _, loops in reread for j in loops):
        return False
    rows = [max(map(range_size, loops)) * itemsize[buf]  # type: ignore[type-var]
            for buf, loops in reread]
    return min(rows) >= REDUCE_VECTORS * vector_bytes() and 2 * sum(rows) <= cache_bytes(1) // 2
