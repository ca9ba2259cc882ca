"""What both schedulers hand to the backends: `ScheduleItem`s, in an order that runs every read
of a buffer before an ASSIGN overwrites it.

In: a SINK of `ASSIGN(BUFFER, KERNEL)` (the last pass of rangeify or kernelize). Out: the same
SINK with each assigning kernel depending on the kernels that read the old value
(`order_assigns`), and the kernels as `ScheduleItem`s, producers first (`schedule_items`).
Before either front end runs, `copy_old_reads` gives a graph that would need one kernel to read
a buffer both before and after its ASSIGN a copy of the old value to read instead.

This module sits below the two front ends (runtime/schedule.py's rangeify, runtime/kernelize.py)
and the schedule cache: it imports none of them.
"""

from __future__ import annotations

from .buffer import Buffer
from .ops import Ops
from .record import FrozenRecord
from .uop import OP_BIT, UOp, toposort

_set = object.__setattr__  # (a frozen record's fields are set past its __setattr__)


class ScheduleItem(FrozenRecord):
    """One kernel: `bufs[i]` is its DEFINE_GLOBAL i (bufs[0] is the output)."""

    __slots__ = ("name", "ast", "bufs")
    name: str
    ast: UOp
    bufs: tuple[Buffer, ...]

    def __init__(self, name: str, ast: UOp, bufs: tuple[Buffer, ...]):
        # (the three fields set here, not by `_init`'s loop: a replayed schedule makes one
        # item per kernel at every realize)
        _set(self, "name", name)
        _set(self, "ast", ast)
        _set(self, "bufs", bufs)

    @property
    def shape(self) -> tuple[int, ...]:
        """The sizes of the kernel's output loops (outermost first)."""
        return tuple(r.src[0].arg for r in self.ast.src[0].src[2:])


def schedule_items(ksink: UOp) -> list[ScheduleItem]:
    """The kernels of a scheduled SINK, producers first."""
    return [ScheduleItem(k.arg.name, k.arg.ast, k.arg.bufs)
            for k in toposort(ksink) if k.op is Ops.KERNEL]


_BOUNDARY = (Ops.CONTIGUOUS, Ops.COPY)  # always a kernel of its own (besides ASSIGN)


def copy_old_reads(uops: list[UOp]) -> list[UOp]:
    """Roots in which no kernel needs a buffer's old and new value: the old reads of such a
    buffer read a copy of it (a kernel run before the ASSIGN) instead.

    What the program means (lazy, in program order): a value built before an ASSIGN was made
    (a loss, `old = w * 3` before `opt.schedule_step()`) reads the buffer's old contents; a
    value built from the ASSIGN (`w` after the step) its new ones. `(w + old)` built after the
    step, realized with it, needs both, in one kernel unless something splits it: a kernel
    cannot run both before and after the write (`order_assigns` found a cycle). Any node whose
    graph reads buffer B outside B's ASSIGNs and also holds an ASSIGN of B marks B; each marked
    B is then read through `CONTIGUOUS(B)` everywhere except as an ASSIGN's target. Values are
    unchanged (the copy holds what B held before the schedule ran); a graph without such a
    node (every optimizer step's) is returned as it was, after one walk."""
    sink = UOp.sink(*uops)
    if not sink._ops & OP_BIT[Ops.ASSIGN]:
        return uops
    nodes = toposort(sink)
    targets = {n: frozenset(b for b in toposort(n.src[0]) if b.op is Ops.BUFFER)
               for n in nodes if n.op is Ops.ASSIGN}
    assigned = frozenset().union(*targets.values())
    none: frozenset[UOp] = frozenset()
    after: dict[UOp, frozenset[UOp]] = {}  # the buffers whose ASSIGN a node's graph holds
    old: dict[UOp, frozenset[UOp]] = {}  # the assigned buffers it reads outside their ASSIGNs
    marked: set[UOp] = set()
    for n in nodes[:-1]:  # (not the SINK: it joins roots, each a kernel's output)
        if not n.src:
            after[n], old[n] = none, frozenset((n,)) if n in assigned else none
            continue
        a = none.union(*[after[s] for s in n.src])
        o = none.union(*[old[s] for s in n.src])
        if n.op is Ops.ASSIGN:  # (its own value's reads of its target run before its write)
            a, o = a | targets[n], o - targets[n]
        if both := a & o:
            marked |= both
            o = o - both
        if n.op in _BOUNDARY and not a:  # its kernel's reads run before every ASSIGN
            o = none
        after[n], old[n] = a, o
    if not marked:
        return uops
    new: dict[UOp, UOp] = {b: b.f(Ops.CONTIGUOUS) for b in marked}
    for n in nodes:
        if n in new:
            continue
        src = tuple(new.get(s, s) for s in n.src)
        if n.op is Ops.ASSIGN:  # (its target keeps the buffer it writes)
            src = (n.src[0],) + src[1:]
        new[n] = n if src == n.src else n.replace(src=src)
    return [new[u] for u in uops]


def order_assigns(sink: UOp) -> UOp:
    """A kernel that reads the old value of a buffer another kernel assigns to must run first:
    the assigning kernel gets the reader as an extra dependency (tinygrad's fix_assign).

    The graph is rebuilt once, in an order that counts the new dependencies, so that a kernel
    which gains a dependency is the same node everywhere it is used (several assigns in one
    schedule: an optimizer step, where the parameter's update reads the old momentum)."""
    nodes = toposort(sink)
    readers: dict[UOp, list[UOp]] = {}
    for a in nodes:
        if a.op is Ops.ASSIGN and a.src[1].op is Ops.KERNEL:
            for s in a.src[1].src:
                if s.op is Ops.BUFFER:
                    readers.setdefault(s, []).append(a)
    extra: dict[UOp, tuple[UOp, ...]] = {}  # kernel -> the assigns that must run before it
    for w in nodes:
        if w.op is Ops.ASSIGN and w.src[1].op is Ops.KERNEL:
            before = tuple(r for r in readers.get(w.src[0], ()) if r is not w)
            if before:
                extra[w.src[1]] = extra.get(w.src[1], ()) + before
    if not extra:
        return sink
    new: dict[UOp, UOp] = {}
    for node in _order_with(sink, extra):
        src = tuple(new[s] for s in node.src) + tuple(new[e] for e in extra.get(node, ()))
        new[node] = node if src == node.src else node.replace(src=src)
    return new[sink]


def _order_with(sink: UOp, extra: dict[UOp, tuple[UOp, ...]]) -> list[UOp]:
    """Sources (and extra dependencies) before users; iterative; a cycle is an error."""
    order: list[UOp] = []
    state: dict[UOp, int] = {}  # 1: on the walk's path, 2: done
    stack: list[tuple[UOp, bool]] = [(sink, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            state[node] = 2
            order.append(node)
            continue
        if state.get(node) == 2:
            continue
        state[node] = 1
        stack.append((node, True))
        for s in reversed(node.src + extra.get(node, ())):
            if state.get(s) == 1:
                buf = node.src[0].arg if node.op is Ops.ASSIGN else "?"
                raise RuntimeError(f"cycle: a kernel reads buffer {buf} both before and after "
                                   "an assign to it in the same schedule")
            if state.get(s) != 2:
                stack.append((s, False))
    return order
