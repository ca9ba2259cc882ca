"""The per-kernel buffer limit, a pass of both schedulers (rangeify.rules' `limit_buffers`).

A sum of 2,000 tensors is not one C function of 2,000 parameters (which took gcc 36 s), but
kernels that each read at most `max_kernel_buffers()` buffers. In: a scheduler's graph. Out: the
pass's context, and for a node, the buffers a kernel computing it would load. The rule that
realizes sources, and when, is the rules file's; what a buffer is, and how a source is realized,
is the scheduler's, so each has its context:

- rangeify runs it on the tensor graph, before its realize decisions: a buffer is a BUFFER or a
  node realized on its own (CONTIGUOUS, ASSIGN, COPY), and a CONTIGUOUS realizes a source;
- kernelize runs it once its grouper chose the kernels (`KernelBufferLimit`): a buffer is a
  BUFFER, an ASSIGN or a REALIZE (a kernel's output), and a REALIZE realizes a source (as
  tinygrad's `limit_bufs` in its finalize_contiguous).

The buffers flowing into each node are counted once, sources first, and memoised in the
context; a set never holds more than the limit, so the pass is linear in the graph's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rulegrad.runtime.limit_buffers import max_kernel_buffers
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

_NONE: frozenset[UOp] = frozenset()


@dataclass
class BufferLimit:
    """The pass's context (rangeify's): the limit, and node -> the buffers its kernel would
    load."""

    limit: int
    loads: dict[UOp, frozenset[UOp]] = field(default_factory=dict)
    loaded = frozenset({Ops.BUFFER, Ops.CONTIGUOUS, Ops.ASSIGN, Ops.COPY})  # what is a buffer
    # what may become a buffer after the pass: rangeify realizes a reduction read over other
    # ranges than its own (a softmax's max, read by every element of its row) only later, so a
    # reduction counts as one more buffer besides those it loads (a loss over a log-softmax
    # loaded 5 buffers by this count and 8 in its kernel); kernelize's are REALIZEs already
    maybe_loaded = frozenset({Ops.REDUCE_AXIS})
    wrap = Ops.CONTIGUOUS  # what realizes a source

    @classmethod
    def start(cls, sink: UOp) -> BufferLimit | None:
        """None (the pass does not run) when no kernel of the graph can read too many: the
        limit is off, or the whole graph loads fewer buffers than it."""
        limit = max_kernel_buffers()
        counted = cls.loaded | cls.maybe_loaded
        if not limit or sum(1 for n in toposort(sink) if n.op in counted) < limit:
            return None
        return cls(limit)


class KernelBufferLimit(BufferLimit):
    """kernelize's, after its grouper: kernels are the REALIZEs."""

    loaded = frozenset({Ops.BUFFER, Ops.ASSIGN, Ops.REALIZE})
    maybe_loaded = frozenset()
    wrap = Ops.REALIZE


def buffers_loaded(ctx: BufferLimit, n: UOp) -> frozenset[UOp]:
    """The buffers a kernel computing n would load (sources first, each node once)."""
    loads, loaded, maybe = ctx.loads, ctx.loaded, ctx.maybe_loaded
    if n not in loads:
        for m in toposort(n, stop=loads.__contains__):
            if m.op in loaded:
                loads[m] = frozenset((m,))
            else:
                srcs = [loads[s] for s in m.src]
                loads[m] = _union(srcs + [frozenset((m,))] if m.op in maybe else srcs)
    return loads[n]


def _union(sets: list[frozenset[UOp]]) -> frozenset[UOp]:
    nonempty = [s for s in sets if s]
    if not nonempty:
        return _NONE
    if len(nonempty) == 1:
        return nonempty[0]
    return frozenset().union(*nonempty)
