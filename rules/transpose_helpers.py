"""Helpers of `opt.rules`' transpose-tile action: an elementwise STORE written contiguously along
its innermost loop j but reading some buffer far apart along j (a transpose) and contiguously
along an outer output loop i runs i in blocks of a vector's width (whose output rows span at most
L1), the block's points innermost.

In: a lowered STORE (backends/KERNEL_AST.md, "after lowering") with no action yet and no reduce
in its value. Out: `transposed(st)`, the STORE with i split into outer * block + inner (the
outer a "block" range where i was, the inner a "loop" range last: `interchange_helpers.
split_range`, the last block overlapping the one before it when block does not divide i), or
None when the STORE is no such transpose.

Why: in the plain order each step of j reads a new cache line of the transposed buffer and
uses one element of it; by the time the next row of i comes back to that line it has left the
cache (a 1021-long row of lines a page apart). Only when a pass of j touches more than half of
L1 holds, and they spread over its sets: a short j (97 steps) finds its lines again at the
next row, and is left whole, unless its lines are a multiple of a page apart (`_crowded`).
With the block's points innermost, the far read takes a vector's width of a line per step of j
(fewer when the block's output rows would span more than L1, `_block`), and the block's rows of
the output are each written one element per step of j, a few lines each in flight. Every output
element is computed from the same reads as before: bit for bit.
"""

from __future__ import annotations

import itertools
from collections import Counter

from rulegrad.rules.choices import taken
from rulegrad.rules.interchange_helpers import split_range
from rulegrad.rules.opt_helpers import UPCAST_MAX_STRIDE, along
from rulegrad.runtime.loops import fresh_id, range_size, stride
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import cache_bytes, page_bytes, vector_bytes
from rulegrad.runtime.uop import OP_BIT, UOp, toposort

# a cache line: every x86-64 and arm64 core's L1 (64 bytes)
LINE_BYTES = 64


def _far_loads(st: UOp, j: UOp) -> list[UOp]:
    """The loads along j stepping more than UPCAST_MAX_STRIDE elements per step (gathers)."""
    out = []
    for n in along(st.src[1], j):
        if n.op is Ops.LOAD:
            step = stride(n.src[0].src[1], j)
            if step is None or len(n.src) > 1:
                return []  # a read that is not affine in j, or gated: left as it is
            if abs(step) > UPCAST_MAX_STRIDE:
                out.append(n)
    return out


def _crowded(far: list[UOp], j: UOp) -> bool:
    """Whether the lines one pass of j reads through the far loads crowd into fewer of L1's
    sets than half of its ways can hold: a VIPT L1 indexes its sets within a page (ways: L1 /
    page), so rows a multiple of a page apart all fall into one set, however few the lines
    (8x64x4096's transpose, rows 16 KB apart, read every line from L2: 14 ms untiled, 2.4 ms
    tiled; rows 4000 bytes apart spread over every set and stay)."""
    busiest = sum(_busiest_set(abs(stride(n.src[0].src[1], j)) * n.dtype.itemsize,  # type: ignore
                               range_size(j)) for n in far)  # type: ignore[arg-type]
    return 2 * busiest > _ways()


def _ways() -> int:
    """L1's ways as a VIPT L1 has them: its bytes over a page."""
    return max(1, cache_bytes(1) // page_bytes())


def _busiest_set(step: int, count: int) -> int:
    """The most of `count` lines `step` bytes apart that fall into one of L1's sets (a VIPT L1
    indexes its sets within a page)."""
    page = page_bytes()
    return max(Counter(k * step % page // LINE_BYTES for k in range(count)).values())


def _reads_back(st: UOp) -> bool:
    """Whether the STORE's value loads from the buffer it stores into (an in-place update)."""
    buf = st.src[0].src[0]
    return any(n.op is Ops.LOAD and n.src[0].src[0] is buf for n in toposort(st.src[1]))


def _block(itemsize: int, row_bytes: int) -> int:
    """The rows of a block: a vector's width of the far load's elements, halved while the
    block's output rows (`row_bytes` apart) span more than L1. Each row keeps a line of the
    output in flight at every step of j; within an L1-sized span those lines never take more
    of a set than its ways (a VIPT L1 holds any such span whole). Rows of 777 to 1021 floats
    in blocks of 16 (a 512-bit vector) ran 2x to 10x slower than in blocks of 8 (the kernel
    alone, one core: 4x777x1031 5-30 ms against 2.5); rows of 128 floats kept 16 (8 ran 0.72x
    to 0.86x as fast in the pipeline, 64x128x128)."""
    block = max(1, vector_bytes() // itemsize)
    while block > 1 and block * row_bytes > cache_bytes(1):
        block //= 2
    return block


def transposed(st: UOp) -> UOp | None:
    """The STORE with the outer loop i that every far load (`_far_loads`) reads contiguously
    run in blocks of a vector's width of that load's elements, the blocks' points innermost;
    the innermost such i, of at least two blocks. None when the STORE has an action or a
    reduce, its last loop j is not written contiguously, or no far load or no such i."""
    ranges = st.src[2:]
    if st.arg is not None or len(ranges) < 2 or len(st.src[0].src) != 2 \
            or any(r.arg[1] != "loop" or range_size(r) is None for r in ranges) \
            or st.src[1]._ops & OP_BIT[Ops.REDUCE]:
        return None
    j = ranges[-1]
    if stride(st.src[0].src[1], j) != 1:
        return None
    far = _far_loads(st, j)
    # what one pass of j touches (a line per far load and step, and the output row it writes)
    # stays in half of L1 until the next row reads the lines' next elements: the plain order
    # then reads each line once already
    step = len(far) * vector_bytes() + st.src[1].dtype.itemsize
    if not far or (range_size(j) * step <= cache_bytes(1) // 2  # type: ignore[operator]
                   and not _crowded(far, j)):
        return None
    for i in reversed(ranges[:-1]):
        # the block's output rows a multiple of a page apart fall into one set of L1 (a VIPT
        # L1 indexes its sets within a page), and evict each other at every step of j: rows
        # 16 KB apart ran 3x slower tiled. Rows a page and a little apart (1031, 1500 floats)
        # step through the sets a few rows a set, as shorter rows do, and are tiled (2.4-2.7x
        # faster, bench/ab.py --cpu), unless the block is cut under half a line of the far
        # read (2053 floats: 4 rows, 0.79x tiled)
        row = stride(st.src[0].src[1], i)
        if row is None:
            continue
        row_bytes = abs(row) * st.src[1].dtype.itemsize
        if all(stride(n.src[0].src[1], i) == 1 for n in far):
            itemsize = far[0].dtype.itemsize
            block = _block(itemsize, row_bytes)
            if row_bytes >= page_bytes() and (2 * _busiest_set(row_bytes, block) > _ways()
                                              or 2 * block * itemsize < LINE_BYTES):
                continue
            if range_size(i) < 2 * block:  # type: ignore[operator]
                return None
            fresh = itertools.count(fresh_id(st))
            mapping: dict[UOp, UOp] = {}
            outer, inner = split_range(i, block, "loop", fresh, mapping)
            loops = [outer if r is i else r for r in ranges] + [inner]
            idx = st.src[0].substitute(mapping)
            if range_size(i) % block and _reads_back(st):  # type: ignore[operator]
                # the last block overlaps the one before it: the rows that block wrote are not
                # stored again (i + 1 > outer * block), as interchange's blocks: an in-place
                # update (a += b.T) read them back already updated and added b twice. A store
                # that reads nothing of its buffer writes those rows again with the same values,
                # ungated: gcc unrolls the block loop, where 3x1021x509's transpose, gated, ran
                # a rolled loop of 16 floats with a branch per element
                gate = (outer * block).alu(Ops.CMPLT, mapping[i] + 1)
                idx = idx.replace(src=(*idx.src, gate))
            taken(f"TILE r{i.arg[0]} in blocks of {block}, innermost (a transpose: r{j.arg[0]} "
                  "reads a line per step)")
            return st.replace(src=(idx, st.src[1].substitute(mapping), *loops))
    return None
