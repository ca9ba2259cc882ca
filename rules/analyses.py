"""Analyses: questions the scheduler's rules ask about nodes (`analysis .analyses: f` in a
`.rules` file; LANGUAGE.md, "Analyses").

In: nodes (and plain values). Out: an answer (a bool, a list of nodes), never a rewrite, and
nothing read from or written to a pass context: the rule that asks says what changes. Each is
here because its answer needs a walk over a graph, which no pattern can say.
"""

from __future__ import annotations

from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.uop import OP_BIT, UOp, toposort

# ops after which element i of a node is element i of its sources (row-major): a value built
# only from these reads the target exactly where the ASSIGN writes
_SAME_INDEX = GroupOp.Elementwise | GroupOp.Meta | {Ops.RESHAPE, Ops.CONTIGUOUS}

# what a buffer's value may not hold for its readers to recompute it instead (the cost function)
_EXPENSIVE = frozenset({Ops.REDUCE, Ops.COPY, Ops.ASSIGN, Ops.DEFINE_LOCAL})


def reads_moved(target: UOp, value: UOp) -> bool:
    """Does `value` read the buffer under `target` at other elements than the one an ASSIGN
    writes (through a flip, a shift, a transpose, a broadcast, a reduction ...)? Conservative:
    any op other than elementwise ones and reshapes on the way to the buffer counts. A
    CONTIGUOUS below the value is a buffer of its own, written by an earlier kernel: what it
    read of the target is no hazard (tinygrad's gate on ALWAYS_CONTIGUOUS in
    fix_assign_hazard).

    A target that is a view of its buffer (a flip or permute of a shard: rules/multi.rules'
    `assign_multi`) writes element i of the view to another element of the buffer: there only
    a read of the target view itself (through elementwise ops and reshapes) is at the element
    written, and any other read of the buffer, the plain buffer's included, is moved."""
    buf = target.base
    # the target writes element i of itself to element i of the buffer (row-major): its ops
    # above the buffer (none for the buffer itself) all keep the index
    plain = all(n.op in _SAME_INDEX for n in toposort(target, stop=lambda n: n is buf))
    anchor = buf if plain else target  # the node whose element i is written
    reads: set[UOp] = set()  # nodes whose value depends on buf
    moved: set[UOp] = set()  # ... at some other element than their own
    for n in toposort(value, stop=lambda n: n.op is Ops.CONTIGUOUS and n is not value):
        if n is anchor:
            reads.add(n)
            continue
        if n is buf:  # read under another view than the target's
            reads.add(n)
            moved.add(n)
            continue
        if any(s in moved for s in n.src):
            moved.add(n)
        if any(s in reads for s in n.src):
            reads.add(n)
            if n.op not in _SAME_INDEX:
                moved.add(n)
    return value in moved


def expensive(value: UOp) -> bool:
    """Does computing `value` in its kernel take a reduction, a copy, an assign or a
    kernel-local array? The walk stops at reads of other buffers (INDEX of a BUFFERIZE or of
    memory), whose work is done elsewhere; a read of a kernel-local array is work here."""
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
    never = (UOp.const(dtypes.index, 0), UOp.const(dtypes.bool, False))
    nodes = toposort(off)
    masked = [n for n in nodes if n.op is Ops.WHERE and n.src[2].op is Ops.INVALID]
    plain: dict[UOp, UOp] = {}
    conds: list[UOp] = []
    for w in masked:  # innermost first: a condition may mention an inner PAD's masked index
        plain[w] = w.src[1].substitute(plain)
        conds.append(w.src[0].substitute(plain))
    off = off.substitute(plain)
    if any(n.op is Ops.INVALID for n in toposort(off)):
        return never
    if not conds:
        return (off,)
    valid = conds[0]
    for c in conds[1:]:
        valid = valid & c
    return off, valid
