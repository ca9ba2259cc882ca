"""Analyses: questions the scheduler's rules ask about nodes (`analysis .analyses: f`;
LANGUAGE.md, "Analyses"). In: nodes. Out: an answer, never a rewrite, and no pass context:
the rule that asks says what changes. Each needs a walk over a graph, which no pattern says.
"""

from __future__ import annotations

import functools
import operator

from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.uop import OP_BIT, UOp, toposort

# ops after which element i of a node is element i of its sources (row-major)
_SAME_INDEX = GroupOp.Elementwise | GroupOp.Meta | {Ops.RESHAPE, Ops.CONTIGUOUS}

# what a buffer's value may not hold for its readers to recompute it instead (the cost function)
_EXPENSIVE = frozenset({Ops.REDUCE, Ops.COPY, Ops.ASSIGN, Ops.DEFINE_LOCAL})
_OWN_MASKS = frozenset({Ops.INDEX, Ops.REDUCE})  # (nested in an offset: `unmask`)


def reads_moved(target: UOp, value: UOp) -> bool:
    """Does `value` read the buffer under `target` at other elements than the one an ASSIGN
    writes (a flip, shift, transpose, broadcast, reduction ...)? Conservative: any op but
    elementwise ones and reshapes on the way counts. A CONTIGUOUS below the value is a buffer
    written by an earlier kernel: no hazard (tinygrad's fix_assign_hazard). A target that is a
    view (a flip of a shard: multi.rules' `assign_multi`) writes element i of the view
    elsewhere in the buffer: only a read of that same view is in place."""
    buf = target.base
    plain = all(n.op in _SAME_INDEX for n in toposort(target, stop=lambda n: n is buf))
    anchor = buf if plain else target  # the node whose element i is written at element i
    reads: set[UOp] = set()  # nodes whose value depends on buf
    moved: set[UOp] = set()  # ... at some other element than their own
    for n in toposort(value, stop=lambda n: n.op is Ops.CONTIGUOUS and n is not value):
        if n is anchor or n is buf:  # buf, not the anchor: read under another view
            reads.add(n)
            moved.update([n] if n is not anchor else [])
            continue
        if any(s in moved for s in n.src):
            moved.add(n)
        if any(s in reads for s in n.src):
            reads.add(n)
            if n.op not in _SAME_INDEX:
                moved.add(n)
    return value in moved


def expensive(value: UOp) -> bool:
    """Does computing `value` in its kernel take a reduction, copy, assign or kernel-local
    array? Reads of other buffers (their work is done elsewhere) end the walk."""
    def other_buffer(n: UOp) -> bool:
        return n.op in (Ops.INDEX, Ops.BUFFERIZE) and n is not value \
            and n.src[0].op is not Ops.DEFINE_LOCAL
    return any(n.op in _EXPENSIVE for n in toposort(value, stop=other_buffer))


def unmask(off: UOp) -> tuple[UOp, ...]:
    """The parts of a read's offset whose `WHERE(valid, i, INVALID)` parts (a PAD's masked
    indices) are valid only where their conditions hold: `(plain offset, AND of the
    conditions)`, or `(off,)` when no part is masked. An INVALID left anywhere (a mask the
    symbolic rules proved always false) means the read never happens: `(0, False)`."""
    if not off._ops & OP_BIT[Ops.INVALID]:  # no masked part (and no walk): most offsets
        return (off,)
    # a read in an offset (a gather's index: at_pick) gates its own mask (issue 31), a reduce in it
    # (cummax's running index) over its own loop: kept whole, their conditions are not ours
    nodes = toposort(off, stop=lambda n: n.op in _OWN_MASKS)
    masked = [n for n in nodes if n.op is Ops.WHERE and n.src[2].op is Ops.INVALID]
    plain: dict[UOp, UOp] = {s: s for n in nodes for s in n.src if s.op in _OWN_MASKS}
    conds: list[UOp] = []
    for w in masked:  # innermost first: a condition may mention an inner PAD's masked index
        plain[w] = w.src[1].substitute(plain)
        conds.append(w.src[0].substitute(plain))
    off = off.substitute(plain)
    if any(n.op is Ops.INVALID for n in toposort(off, stop=lambda n: n.op in _OWN_MASKS)):
        return UOp.const(dtypes.index, 0), UOp.const(dtypes.bool, False)
    return (off, functools.reduce(operator.and_, conds)) if conds else (off,)
