"""The per-kernel buffer limit, a pass of both schedulers (rangeify.rules' `limit_buffers`).

A sum of 2,000 tensors is not one C function of 2,000 parameters (gcc took 36 s), but kernels
that each read at most `max_kernel_buffers()` buffers. In: a scheduler's graph. Out: the pass's
context, and for a node, the buffers a kernel computing it would load (each node's counted once,
sources first, memoised in the context: linear in the graph). The rule that realizes sources is
the rules file's; what a buffer is, and what realizes a source, the scheduler's context says.
"""

from __future__ import annotations

from rulegrad.runtime.limit_buffers import max_kernel_buffers
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

_NONE: frozenset[UOp] = frozenset()


class BufferLimit:
    """The pass's context (rangeify's, on the tensor graph before its realize decisions): the
    limit, and node -> the buffers its kernel would load (no dataclass: a first realize makes
    this class, runtime/record.py says the cost)."""

    loaded = frozenset({Ops.BUFFER, Ops.CONTIGUOUS, Ops.ASSIGN, Ops.COPY})  # what is a buffer
    # a buffer besides its loads, maybe: realized later where read over other ranges (softmax's max)
    maybe_loaded = frozenset({Ops.REDUCE_AXIS})
    wrap = Ops.CONTIGUOUS  # what realizes a source

    def __init__(self, limit: int, loads: dict[UOp, frozenset[UOp]] | None = None) -> None:
        self.limit = limit
        self.loads: dict[UOp, frozenset[UOp]] = {} if loads is None else loads

    def __repr__(self) -> str:
        return f"{type(self).__name__}(limit={self.limit}, loads={self.loads!r})"

    @classmethod
    def start(cls, sink: UOp) -> BufferLimit | None:
        """None (the pass does not run) when no kernel of the graph can read too many: the
        limit is off, or the whole graph loads fewer buffers than it."""
        limit = max_kernel_buffers()
        if not limit or sum(n.op in cls.loaded | cls.maybe_loaded for n in toposort(sink)) < limit:
            return None
        return cls(limit)


class KernelBufferLimit(BufferLimit):
    """kernelize's, after its grouper: kernels are the REALIZEs (tinygrad's `limit_bufs`)."""

    loaded = frozenset({Ops.BUFFER, Ops.ASSIGN, Ops.REALIZE})
    maybe_loaded = frozenset()
    wrap = Ops.REALIZE


def buffers_loaded(ctx: BufferLimit, n: UOp) -> frozenset[UOp]:
    """The buffers a kernel computing n would load (sources first, each node once)."""
    loads, loaded, maybe = ctx.loads, ctx.loaded, ctx.maybe_loaded
    if n not in loads:
        for m in toposort(n, stop=loads.__contains__):
            own = [frozenset((m,))] if m.op in loaded or m.op in maybe else []
            loads[m] = own[0] if m.op in loaded else _union([loads[s] for s in m.src] + own)
    return loads[n]


def _union(sets: list[frozenset[UOp]]) -> frozenset[UOp]:
    nonempty = [s for s in sets if s]
    if len(nonempty) <= 1:  # shared, not copied: most nodes load what one source loads
        return nonempty[0] if nonempty else _NONE
    return frozenset().union(*nonempty)
