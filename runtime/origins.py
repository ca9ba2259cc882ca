"""What a realized value was computed from, kept so that gradients still flow through it.

In: the tensors of a realize, before it (`watch`) and after it (`keep`). Out: on each result
Buffer whose graph reaches a tensor that requires a gradient, its `Origin`: that graph, the
buffer's own version, and the versions of the buffers the graph read. For a gradient, `expand`
gives the graphs with every realized value whose origin holds replaced by its graph (through
any number of realizes), and the map back, which the gradient graphs are put through
(`collapse`) so they read the realized values instead of computing them again.

Why: torch keeps a tensor's autograd graph after its value is read, and a training loop prints
`loss.item()` before `loss.backward()`. Realizing points a tensor at its buffer (runtime/
realize.py), so backward no longer saw the path to the parameters.

When an origin holds is decided as torch's version counters decide it (`Buffer.version` moves at
every write in place, runtime/buffer.py):

- the buffer itself written since (an assign into the realized tensor, a plan writing it again)
  drops the origin: the assigned value wins, and like any assign passes no gradient;
- a buffer the graph read written since (an optimizer step changed a parameter) leaves the
  origin *stale*: its value is right, its graph no longer computes it. A gradient that would
  flow through it is refused, as torch refuses a graph whose saved tensors changed in place.

Not kept: a sharded result (its parts are buffers of their own) and a result that is a view of
a buffer its graph reads (nothing was computed). Graphs are kept as long as their buffer is, as
torch keeps a graph while its output lives; a value with no tensor that requires a gradient in
its graph keeps nothing.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .buffer import Buffer, result_node
from .device import device_of, shard_part, to_device
from .dtype import dtypes
from .ops import Ops
from .uop import OP_BIT, UOp, is_kept, order_of, toposort
from .view_chains import WRITABLE_VIEWS, view_ops

# tensors whose requires_grad was set true: backward() looks for them in the loss's graph, and
# a realize keeps the graph of a value that reaches one (weak: a parameter dropped by the user
# is not kept alive by having needed a gradient)
needs_grad: weakref.WeakSet[Any] = weakref.WeakSet()
# its weak references, read for "any?" on every realize: a WeakSet's len() is a Python call
any_need = needs_grad.data

_BUFFER, _RESHAPE, _SHRINK = Ops.BUFFER, Ops.RESHAPE, Ops.SHRINK
_ASSIGN_BIT = OP_BIT[Ops.ASSIGN]  # (a graph whose `_ops` miss it holds no ASSIGN)
_NO_GRAD = (Ops.DETACH, Ops.ASSIGN)  # no gradient flows through these (runtime/autograd.py)


@dataclass(slots=True)
class Origin:
    """The graph a buffer's value was computed from, the buffer's version then, and the
    versions, before that realize, of the buffers the graph read."""

    graph: UOp
    version: int
    reads: tuple[tuple[Buffer, int], ...]
    why: str = "a jit replay computed it (rulegrad.jit)"  # (graph None: why none is kept)


def wanted() -> set[UOp]:
    """The nodes of the live tensors that require a gradient (a lazy one's graph is built).
    A tensor being written (an optimizer step's parameter is its ASSIGN while the step is
    realized) counts by the node it is written into too: a value the step computes from the
    old contents (`opt.step(loss)`, a reader built before) keeps its graph, which the write
    then leaves stale; without, it kept none and was a constant to a later gradient."""
    out = set()
    for t in list(needs_grad):
        if t.requires_grad:
            out.add(u := t.uop)
            if u.op is Ops.ASSIGN:
                out.add(u.src[0])
    return out


def watch(roots: Sequence[UOp]) -> list[tuple[int, tuple[tuple[Buffer, int], ...]]] | None:
    """Before a realize of `roots`: the index of each root from which a tensor that requires a
    gradient is reached (not through DETACH or ASSIGN; maybe through a realized value's
    origin), with the versions of the buffers its graph reads; None when there is none
    (nothing alive requires one: no walk)."""
    if not any_need:
        return None
    targets = wanted()
    if not targets:
        return None
    # one walk of the roots' joint graph (below DETACH and ASSIGN too: what they read is read),
    # then a pass over it, sources first, for what reaches a target; the reads come from the
    # same walk (before, a second walk of the reached roots' graphs found them). A root that
    # reaches nothing, whatever its graph holds, is not walked: a DETACH or an ASSIGN (an
    # optimizer step's ASSIGNs), or one-source nodes over one (its gradients)
    walked = [r for r in roots if not _blocked(r, targets)]
    order = _joint_order(walked)
    reach: dict[UOp, bool] = {}
    for n in order:
        # (a realized value kept for a gradient reaches one through its own graph)
        r = n in targets
        if not r and n.op is not _DETACH and n.op is not _ASSIGN:
            for s in n.src:  # (a loop, not any(...): no generator frame per node)
                if reach[s]:
                    r = True
                    break
            else:  # (a buffer whose origin does not hold is no such value: no call)
                op = n.op
                r = (op is _RESHAPE or op is _SHRINK or op is _BUFFER and
                     (o := n.arg.origin) is not None and o.version == n.arg.version) and \
                    _origin_of(n) is not None
        reach[n] = r
    reached = [i for i, root in enumerate(roots) if root.op not in _NO_GRAD and
               reach.get(root, False)]
    if not reached:
        return None
    # (a root realized twice, the loss of `opt.step(loss)` that is also a reader of the step:
    # its reads found once)
    unique = list(dict.fromkeys([roots[i] for i in reached]))
    if len(unique) == 1 and all([r is unique[0] for r in walked]):
        # the walk is that root's graph alone (a realize of one root; an optimizer step's, its
        # gradients not walked): every buffer in it is read, no pass to find whose
        one = tuple([(n.arg, n.arg.version) for n in order
                     if n.op is _BUFFER and n.arg.data is not None])
        return [(i, one) for i in reached]
    reads = dict(zip(unique, _reads(unique, order)))
    return [(i, reads[roots[i]]) for i in reached]


_VIEWED = (_BUFFER, _RESHAPE, _SHRINK)  # (the ops a node `_origin_of` answers for has)
_DETACH, _ASSIGN = _NO_GRAD


def _blocked(root: UOp, targets: set[UOp]) -> bool:
    """Whether `root` reaches no target through any graph under it: it is a DETACH or an
    ASSIGN, or a chain of one-source nodes, none a target, down to one that is no target (an
    optimizer step realizes each gradient as CONTIGUOUS(DETACH(g)): before, watch walked each
    gradient's graph, some twice the loss's, to find that it reaches nothing)."""
    n = root
    if n.op is _DETACH or n.op is _ASSIGN:
        return True
    while n not in targets and len(n.src) == 1:
        n = n.src[0]
        if n.op is _DETACH or n.op is _ASSIGN:
            return n not in targets
    return False


def _joint_order(roots: Sequence[UOp]) -> list[UOp]:
    """The nodes of the roots' graphs, each once, sources before users: each root's `toposort`
    in turn, less what an earlier root's walk gave (one root's: its toposort)."""
    if len(roots) == 1:  # (no set: most realizes have one root)
        return order_of(roots[0])  # (a loss's: backward's walk, kept)
    seen: set[UOp] = set()
    order: list[UOp] = []
    # the roots whose walk was kept go first (the loss of an optimizer step, kept by its
    # backward): a root under them (the logits the step realizes with it) is then met, not walked
    for root in sorted(roots, key=kept_first):
        if root in seen:
            continue
        part = order_of(root, seen)
        seen.update(part)
        order += part
    return order


def kept_first(root: UOp) -> bool:
    """A sort key: the roots whose walk was kept (`keep_order`) before the others."""
    return not is_kept(root)


def _reads(roots: Sequence[UOp], order: list[UOp]) -> list[tuple[tuple[Buffer, int], ...]]:
    """Per root, (buffer, version now) of each allocated buffer its graph reads, from `order`,
    a walk of the roots' graphs (and maybe more: `_joint_order` of more roots), sources first:
    one pass, users before sources, marks each node with the roots it is under (a bit per
    root). (A root's buffers come in the walk's order: a stale value's message names the first
    of them written since.)"""
    under: dict[UOp, int] = {}
    for bit, root in enumerate(roots):
        under[root] = under.get(root, 0) | 1 << bit
    get = under.get
    for n in reversed(order):  # (a node's users come after it: their bits are all in)
        m = get(n, 0)
        if m:
            for s in n.src:
                under[s] = get(s, 0) | m
    bufs = [(m, n.arg, n.arg.version) for n in order
            if n.op is _BUFFER and n.arg.data is not None and (m := get(n, 0))]
    return [tuple([(b, v) for m, b, v in bufs if m >> bit & 1]) for bit in range(len(roots))]


def keep(watched: list[tuple[int, tuple[tuple[Buffer, int], ...]]], roots: Sequence[UOp],
         results: Sequence[UOp]) -> None:
    """After the realize: each watched root's graph, as the origin of the buffer it landed in
    (`results[i]`: the realized tensor's node)."""
    for i, reads in watched:
        root, node = roots[i], results[i]
        buf = _buffer_under(node)
        if buf is None or result_node(buf, root.shape) is not node or \
                any([b is buf for b, _ in reads]):
            continue  # sharded, or a view of a buffer the graph reads
        graph = root
        # (a graph that read a buffer this realize wrote: maybe through the write itself)
        if root._ops & _ASSIGN_BIT and any([b.version != v for b, v in reads]):
            graph, reads = _after_writes(root, reads)
        buf.origin = Origin(graph, buf.version, reads)


def _after_writes(root: UOp, reads: tuple[tuple[Buffer, int], ...]
                  ) -> tuple[UOp, tuple[tuple[Buffer, int], ...]]:
    """`root`'s graph and reads as they stand after the realize that wrote its ASSIGNs: each
    ASSIGN is the view it wrote, which holds its value now, read at the buffer's new version.
    A value read through an optimizer step's ASSIGN (built after `schedule_step`, realized with
    it) is the parameter's new value: torch's gradient of it reaches the parameter, where the
    ASSIGN passed none (a zero gradient, silently). Unchanged when the graph also reads a
    written buffer's old value elsewhere: no graph over the buffer says both (it stays stale)."""
    assigns = [n for n in toposort(root) if n.op is _ASSIGN]
    written = {id(b) for a in assigns if (b := _stored_under(a.src[0])) is not None}
    if not written:
        return root, reads
    outside = toposort(root, stop=lambda n: n.op is _ASSIGN)
    if any([n.op is _BUFFER and id(n.arg) in written for n in outside]):
        return root, reads
    graph = root.substitute({a: a.src[0] for a in assigns})
    was = {id(b): v for b, v in reads}
    return graph, tuple([(n.arg, n.arg.version if id(n.arg) in written else was[id(n.arg)])
                         for n in toposort(graph)
                         if n.op is _BUFFER and n.arg.data is not None and id(n.arg) in was])


def carry(src: Buffer, dst: Buffer) -> None:
    """`dst` now holds a copy of src's contents (an assign keeps a reader on the old
    contents): it has src's origin, if that still holds."""
    o = src.origin
    if o is not None and o.version == src.version:
        dst.origin = Origin(o.graph, dst.version, o.reads, o.why)


def lose(buf: Buffer, why: str | None = None) -> None:
    """`buf` holds a value a jit replay computed (runtime/jit.py) where the recorded call kept
    a graph for it: the replay builds none, so a gradient through it is refused (`expand`'s
    `lost`) instead of silently left out."""
    buf.origin = Origin(None, buf.version, ())  # type: ignore[arg-type]
    if why is not None:  # (another value that keeps no graph: an assign's, after_assign)
        buf.origin.why = why


def why_lost(node: UOp) -> str:
    """Why the value `node` reads (one of `expand`'s `lost`) keeps no graph."""
    o = _origin_of(node)
    return o.why if o is not None else ""


def _buffer_under(node: UOp) -> Buffer | None:
    """The Buffer of a result node (`result_node`'s forms), or None."""
    if node.op is _SHRINK:
        node = node.src[0]
    if node.op is _RESHAPE:
        node = node.src[0]
    return node.arg if node.op is _BUFFER else None


def _stored_under(node: UOp) -> Buffer | None:
    """The Buffer under a chain of writable views (a variable may be one: `b = a.T` trained;
    a strided slice's dropped PAD too, `_write_views`), or None."""
    ops = _write_views(node)
    while node.op in ops:
        node = node.src[0]
    return node.arg if node.op is _BUFFER else None


def _origin_of(node: UOp) -> Origin | None:
    """The origin of the value `node` reads, when it is a realized tensor's node whose buffer
    was not written since (cheap for any other node: most are no BUFFER's view)."""
    op = node.op
    if op is not _BUFFER and op is not _RESHAPE and op is not _SHRINK:
        return None
    # (`_buffer_under`, inline: a realize's watch asks every view of a buffer in its graph)
    under = node.src[0] if op is _SHRINK else node
    if under.op is _RESHAPE:
        under = under.src[0]
    if under.op is not _BUFFER:
        return None
    buf = under.arg
    if (o := buf.origin) is None or o.version != buf.version:
        return None
    if o.graph is None:  # (`lose`: any view of it is the value too)
        return o
    if result_node(buf, o.graph.shape) is node:
        return o
    # a reshape of the whole buffer (`w.reshape(6)` of a realized (2, 3) value; an assign
    # through a reshape keeps a flat graph): the same value in the same order, reshaped
    shape, was = node.shape, o.graph.shape
    if node.op is not _SHRINK and all(type(s) is int for s in (*shape, *was)) and \
            math.prod(shape) == math.prod(was):
        return Origin(o.graph.reshape(node.shape), o.version, o.reads)
    return None


@dataclass(slots=True)
class Expanded:
    """`expand`'s answer: the roots with realized values replaced by their graphs, the map
    from each such graph (expanded) back to the realized node, the stale ones: (expanded
    graph, a sentence saying which buffer changed), and the values whose graph a jit replay
    did not keep (`lose`)."""

    roots: list[UOp]
    back: dict[UOp, UOp]
    stale: list[tuple[UOp, str]]
    lost: list[UOp]
    # roots[0]'s graph in `toposort` order, when the walk that found no realized value with a
    # graph made it (backward and the gradient walk read it: no second and third walk)
    order: list[UOp] | None = None


def expand(roots: Sequence[UOp]) -> Expanded:
    """The roots with each realized value that has an origin replaced by its graph, itself
    expanded (iterative: no recursion on graph depth or on the number of realizes). A graph
    never holds its own buffer (`keep` leaves those out) and holds only buffers older than
    it, so the expansion ends."""
    new: dict[UOp, UOp] = {}
    back: dict[UOp, UOp] = {}
    stale: list[tuple[UOp, str]] = []
    lost: list[UOp] = []
    order = _first_graph_if_no_origin(roots)
    if order is not None:  # (most gradients: no realized value with a graph in them)
        return Expanded(list(roots), back, stale, lost, order)
    stack = list(roots)
    while stack:
        n = stack[-1]
        if n in new:
            stack.pop()
            continue
        if (o := _origin_of(n)) is not None:
            if o.graph is None:  # (a jit replay's value: kept as it is, and noted)
                stack.pop()
                new[n] = n
                lost.append(n)
                continue
            if o.graph not in new:
                stack.append(o.graph)
                continue
            stack.pop()
            g = new[n] = new[o.graph]
            back.setdefault(g, n)
            changed = [b for b, v in o.reads if b.version != v]
            if changed:
                b = changed[0]
                stale.append((g, f"a buffer of {b.size} {b.dtype.name} it was computed from "
                                 "was written since (an assign, an optimizer step)"))
            continue
        pending = [s for s in n.src if s not in new]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        src = tuple([new[s] for s in n.src])
        new[n] = n if src == n.src else n.replace(src=src)
    return Expanded([new[r] for r in roots], back, stale, lost)


def _first_graph_if_no_origin(roots: Sequence[UOp]) -> list[UOp] | None:
    """roots[0]'s graph in `toposort` order when no node of the roots' graphs is a realized
    value with an origin (the walk that looks is that toposort: nothing is pruned before the
    first root's walk ends); None when one is."""
    seen: set[UOp] = set()
    first: list[UOp] | None = None
    # a node reads a value with an origin only over a BUFFER (in the graph too) whose origin
    # holds: the buffers are looked at first, each view only when one holds (most gradients:
    # none, and no call per view of the graph)
    held = False
    for root in roots:
        # (a root whose walk was kept, the loss of the optimizer's last step built again over
        # the same buffers, is not walked again: uop.py's keep_order)
        if root in seen:  # (a target in an earlier root's graph: nothing more to walk)
            continue
        part = order_of(root, seen or None)
        for n in part:
            if n.op is _BUFFER and (o := n.arg.origin) is not None and \
                    o.version == n.arg.version:
                held = True
        seen.update(part)
        if first is None:
            first = part
    if held and any([n.op in _VIEWED and _origin_of(n) is not None for n in seen]):
        return None
    return first if first is not None else []


def collapse(graph: UOp, back: dict[UOp, UOp]) -> UOp:
    """A gradient graph over expanded values, reading the realized ones instead."""
    return graph.substitute(back) if back else graph


# ---------------------------------------------------------------------- assign (torch's copy_)
_WRITE_VIEWS = (Ops.RESHAPE, Ops.PERMUTE, Ops.SHRINK, Ops.FLIP)


def _write_views(top: UOp) -> frozenset[Ops]:
    """The ops a walk down the target `top` passes: _WRITE_VIEWS, and PAD too for a strided
    slice whose SHRINK drops it (`s[::2]` of 5 rows: each element one of s's storage:
    view_chains.view_ops)."""
    return view_ops(top, WRITABLE_VIEWS)


@dataclass(slots=True)
class Assigned:
    """`before_assign`'s answer: the buffers to be written and the graph of each one's new
    value (one per device for a sharded target; None: no gradient can be had through it)."""

    bufs: tuple[Buffer, ...]
    graphs: tuple[UOp | None, ...]
    # the buffers the old contents' graphs read, at the versions those graphs were made from:
    # a buffer written since makes the new graph stale too (`expand`), as it made the old one
    old_reads: tuple[tuple[Buffer, int], ...] = ()


def before_assign(target: UOp, value: UOp) -> Assigned | None:
    """Before `target.assign(value)` writes: `_assigned`'s graphs, for a target a chain of
    views over one realized buffer, or a whole sharded one (each part's graph is the value's
    part on its device). An assign into a view of a sharded tensor keeps none: a gradient
    through it is refused (`expand`'s `lost`), never silently left out."""
    if target.op is Ops.MULTI and target.src[0].op is Ops.MSTACK:
        parts = target.src[0].src
        bufs = tuple(_buffer_under(p) for p in parts)
        if any(b is None for b in bufs) or watch([value]) is None:
            return None
        axis, devs = target.arg
        out = []
        whole = isinstance(device_of(value), tuple)  # (sharded: gathered, then cut)
        for i, dev in enumerate(devs):
            piece = shard_part(to_device(value, dev) if whole else value, axis, i, len(devs))
            out.append(piece if whole else to_device(piece, dev))
        flats = {UOp(_BUFFER, b.dtype, (), b): p for b, p in zip(bufs, parts)}  # type: ignore
        old_reads: tuple[tuple[Buffer, int], ...] = ()
        if flats.keys() & set(toposort(value)):  # (it reads what the write replaces)
            olds = {f: _old_value(f, p) for f, p in flats.items()}
            out = [g.substitute({f: o for f, (o, _) in olds.items()}) for g in out]
            old_reads = tuple(r for _, reads in olds.values() for r in reads)
        return Assigned(bufs, tuple(out), old_reads)  # type: ignore[arg-type]
    if target.op in _WRITE_VIEWS and target.base.op is Ops.MULTI:
        if any(n.op in _WRITE_VIEWS and n.base is target.base for n in wanted()):
            return None  # (a variable's shards, written: an update, as `_assigned`'s)
        bufs = tuple(b for n in toposort(target) if n.op is _BUFFER and
                     (b := n.arg).data is not None)
        return Assigned(bufs, (None,) * len(bufs)) if watch([value, target]) else None
    one = _assigned(target, value)
    return None if one is None else Assigned((one[0],), (one[1],), one[2])


def _old_value(flat: UOp, node: UOp) -> tuple[UOp, tuple[tuple[Buffer, int], ...]]:
    """What the buffer `flat` holds before a write, as a flat graph that does not read it: the
    graph of its value (`node`, a realized tensor's node over it, has an origin), else a copy
    of its contents (a constant to a gradient); with the reads of the origin it used. A value
    that keeps no graph (`lose`: a jit replay's) gives a copy that keeps none either, so that a
    gradient through it is still refused, not silently left out."""
    if (o := _origin_of(node)) is not None and o.graph is not None:
        return o.graph.reshape(flat.shape), o.reads
    buf = flat.arg
    copy = Buffer(buf.size, buf.dtype, buf.data.copy(), buf.device)
    if o is not None:
        lose(copy, o.why)
    return UOp(_BUFFER, buf.dtype, (), copy), ()


def _assigned(target: UOp, value: UOp
              ) -> tuple[Buffer, UOp, tuple[tuple[Buffer, int], ...]] | None:
    """Before `target.assign(value)` writes: the graph of the written buffer's new value, when
    a gradient can flow through it (the value's graph, or the buffer's old value, reaches a
    tensor that requires one): torch's `copy_`, which passes the gradient to the value, and for
    a view (`y[1:3].copy_(w)`) the rest to the old contents. The graph never reads the buffer
    itself (its old contents are its old graph, or a copy when that passes no gradient). None
    when no gradient flows, or for a target that is no chain of views over one realized buffer
    (a sharded one: its assign passes none, docs/gradients.md)."""
    chain, bottom, ops = [], target, _write_views(target)
    while bottom.op is not _BUFFER:  # (down to the flat buffer: reshapes of it fold into one)
        if bottom.op not in ops:
            return None
        chain.append(bottom)
        bottom = bottom.src[0]
    buf = bottom.arg
    if buf.data is None or any(_stored_under(n) is buf for n in wanted()):
        return None  # (a tensor that requires a gradient, written: an update, torch's no_grad)
    # a chain with no SHRINK writes every element (a realized matrix's node is its buffer
    # reshaped): the old contents are no part of the new value, and their graph is not kept
    partial = any(op.op is _SHRINK for op in chain)
    reach = watch([value, bottom] if partial else [value])
    if reach is None:
        return None
    flat = UOp(_BUFFER, buf.dtype, (), buf)
    old, old_reads = _old_value(flat, bottom) if partial or flat in toposort(value) else \
        (None, ())
    if flat in toposort(value):  # (`y.assign(y * w)`: it reads what the write replaces)
        value = value.substitute({flat: old})
    if not chain:
        return buf, value, old_reads
    # the value put back where the view reads it, and a mask of the places it covers
    mask = UOp.const(dtypes.bool, True).reshape((1,) * len(target.shape)).expand(target.shape)
    for op in chain:  # (top down: each op's inverse)
        under = op.src[0].shape
        if op.op is Ops.RESHAPE:
            value, mask = value.reshape(under), mask.reshape(under)
        elif op.op is Ops.PERMUTE:
            back = tuple(sorted(range(len(op.arg)), key=op.arg.__getitem__))
            value, mask = value.permute(back), mask.permute(back)
        elif op.op is Ops.SHRINK:
            pad = tuple((b, s - e) for (b, e), s in zip(op.arg, under))
            value, mask = value.pad(pad), mask.pad(pad)
        elif op.op is Ops.PAD:  # (a strided slice's: the SHRINK above drops what it adds)
            keep = tuple((b, b + s) for (b, _), s in zip(op.arg, under))
            value, mask = value.shrink(keep), mask.shrink(keep)
        else:
            value, mask = value.flip(op.arg), mask.flip(op.arg)
    return buf, mask.where(value, old) if partial else value, old_reads  # type: ignore[arg-type]


def after_assign(done: Assigned) -> None:
    """After the write: each buffer's value is its graph's, for gradients through it."""
    for buf, graph in zip(done.bufs, done.graphs):
        if graph is None:
            lose(buf, "an assign into a view of a sharded tensor (its gradient is not "
                      "supported: assign the whole sharded tensor, or detach() the value)")
            continue
        reads = tuple((n.arg, n.arg.version) for n in toposort(graph)
                      if n.op is _BUFFER and n.arg.data is not None)
        buf.origin = Origin(graph, buf.version, reads + done.old_reads)
