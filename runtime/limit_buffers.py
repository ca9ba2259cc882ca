"""A bound on the buffers one kernel reads: a sum of 2,000 tensors is not one C function of
2,000 parameters (which took gcc 36 s), but kernels of at most `RULEGRAD_MAX_KERNEL_BUFFERS`.

In: the tensor graph (a SINK of roots), after the earliest rewrites. Out: the same graph with
a CONTIGUOUS (a realize) on the sources of each binary or ternary op that would otherwise bring
more than the limit less one (the output) distinct buffers into one kernel; nothing changes
when every op is under it. As tinygrad's `limit_bufs` (MAX_KERNEL_BUFFERS), a buffer is what a
kernel loads: a BUFFER, or a node realized on its own (CONTIGUOUS, ASSIGN, COPY).

The buffers flowing into each node are counted once, sources first, in one walk of the graph;
a set never holds more than the limit, so the pass is linear in the graph's size.
"""

from __future__ import annotations

from .env import env_int
from .ops import GroupOp, Ops
from .uop import UOp, toposort

DEFAULT_MAX_KERNEL_BUFFERS = 128
_LOADED = frozenset({Ops.BUFFER, Ops.CONTIGUOUS, Ops.ASSIGN, Ops.COPY})
_COMBINE = GroupOp.Binary | GroupOp.Ternary
_NONE: frozenset[UOp] = frozenset()


def max_kernel_buffers() -> int:
    """The limit (0 turns it off; otherwise at least 4: an output and a ternary op's inputs).
    tinygrad's name, MAX_KERNEL_BUFFERS, which the kernelize scheduler reads, sets it for
    rangeify too (one setting for both schedulers); RULEGRAD_MAX_KERNEL_BUFFERS else."""
    n = env_int("MAX_KERNEL_BUFFERS", 0) or env_int("RULEGRAD_MAX_KERNEL_BUFFERS",
                                                    DEFAULT_MAX_KERNEL_BUFFERS)
    return 0 if n == 0 else max(n, 4)


def limit_buffers(sink: UOp) -> UOp:
    limit = max_kernel_buffers()
    if not limit:
        return sink
    order = toposort(sink)
    if sum(1 for n in order if n.op in _LOADED) < limit:  # no kernel can read too many
        return sink
    new: dict[UOp, UOp] = {}
    reads: dict[UOp, frozenset[UOp]] = {}  # new node -> the buffers its kernel would load
    for node in order:
        src = tuple(new[s] for s in node.src)
        n = node if src == node.src else node.replace(src=src)
        if n.op in _LOADED:
            reads[n] = frozenset((n,))
        else:
            found = _union([reads[s] for s in src])
            if len(found) > limit - 1 and n.op in _COMBINE:
                # each source that reads several buffers is realized: it then reads as one
                src = tuple(s.f(Ops.CONTIGUOUS) if len(reads[s]) > 1 else s for s in src)
                n = n.replace(src=src)
                for s in src:
                    reads.setdefault(s, frozenset((s,)))
                found = _union([reads[s] for s in src])
            reads[n] = found
        new[node] = n
    return new[sink]


def _union(sets: list[frozenset[UOp]]) -> frozenset[UOp]:
    nonempty = [s for s in sets if s]
    if not nonempty:
        return _NONE
    if len(nonempty) == 1:
        return nonempty[0]
    return frozenset().union(*nonempty)
