"""Realization: turn lazy tensor graphs into filled Buffers, on the backend the user chose.

In: tensor-level root UOps. Out: one Buffer per root holding its value (flat, the root's dtype);
for an ASSIGN root, the target's own buffer, written in place. `realize_tensors` then points each
realized Tensor at `BUFFER.reshape(shape)`, so later ops read the result instead of recomputing
it (as tinygrad does).

The backend is chosen by the environment variable `RULEGRAD_BACKEND`, read at every call:

- `c` (the default): the scheduler (`runtime/schedule.py`) turns the graph into kernels, which
  are lowered (`rules/lower.rules`), rendered to C, built once into a shared library and run
  (`backends/c/`).
- `interp`: the same schedule, run by the numpy kernel interpreter (`backends/kernel_interp.py`).
- `oracle`: no scheduler at all: `backends/oracle.py` evaluates the tensor graph with numpy.

Each backend is a function `(uops) -> list[Buffer]` registered in `BACKENDS`; the contract for a
new one: return a Buffer per root, allocated and filled; never change a Buffer that is not an
ASSIGN target; for an ASSIGN root, write into and return the target's buffer.
"""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import capture, origins
from .buffer import Buffer, result_node
from .device import DEFAULT, device_of, in_use
from .env import EnvError
from .gc_pause import gc_paused
from .lazy import Lazy, aliasing
from .limits import check_buffer
from .multi import Shards, layouts
from .ops import Ops
from .uop import BIND_BIT, OP_BIT, UOp, toposort
from .variable import concrete, has_symbolic
from .view_chains import VIEW_OPS, view_ops

if TYPE_CHECKING:
    from .schedule_item import ScheduleItem
    from .tensor import Tensor

DEFAULT_BACKEND = "c"


# (an Enum member read from its class costs several plain reads: buffer_of runs on every call)
_SHRINK, _RESHAPE, _BUFFER = Ops.SHRINK, Ops.RESHAPE, Ops.BUFFER


def buffer_of(uop: UOp) -> Buffer | None:
    """The Buffer a realized tensor reads, when `uop` is `BUFFER` or `BUFFER.reshape(...)` (or
    a symbolic-size view of that: its bound rows, `.shrink(((0, v), ...))`). Reshapes of
    reshapes too (`w.reshape(6)` of a realized w: its data in the same order): realizing one
    pointed it at the bare buffer, cutting it from w's graph (a gradient left its path out)."""
    op = uop.op
    if op is _SHRINK and any(isinstance(e, UOp) for _, e in uop.arg):
        uop = uop.src[0]
        op = uop.op
    while op is _RESHAPE:
        uop = uop.src[0]
        op = uop.op
    if op is _BUFFER and uop.arg.data is not None:
        return uop.arg
    return None


def shards_of(uop: UOp) -> Shards | None:
    """The per-device Buffers of a realized sharded tensor, `MULTI(MSTACK(BUFFER.reshape(s),
    ...))`; None for anything else."""
    if uop.op is not Ops.MULTI or uop.src[0].op is not Ops.MSTACK:
        return None
    bufs = tuple(buffer_of(p) for p in uop.src[0].src)
    if any(b is None for b in bufs):
        return None
    return Shards(uop.arg[0], uop.arg[1], bufs)  # type: ignore[arg-type]




def assign_target(uop: UOp) -> Buffer | Shards:
    """What an ASSIGN node writes into: the Buffer under its target's views, or for a sharded
    target (a view of `MULTI(MSTACK(BUFFER.reshape(part), ...))`) the Shards of its parts."""
    target = uop.src[0].base
    if target.op is Ops.BUFFER:
        return target.arg
    if (shards := shards_of(target)) is not None:
        return shards
    raise ValueError(f"ASSIGN's target must be a realized buffer, got {uop.src[0]!r}")


def target_buffers(uop: UOp) -> tuple[Buffer, ...]:
    """The buffers an ASSIGN node writes into (one per device for a sharded target)."""
    target = assign_target(uop)
    return target.bufs if isinstance(target, Shards) else (target,)


# ---------------------------------------------------------------------- backends
def _realize_oracle(uops: Sequence[UOp]) -> list[Buffer]:
    from rulegrad.backends.oracle import evaluate

    for uop in uops:  # (its intermediates are bounded by the work limit, limits.py)
        if uop.op is not Ops.ASSIGN and uop.shape:
            check_buffer(_numel(uop.shape), uop.dtype, f"a {uop.op.name} of shape {uop.shape}")
    values = evaluate(uops)
    out: list[Buffer | Shards] = []
    for uop, value, layout in zip(uops, values, layouts(list(uops))):
        if uop.op is Ops.ASSIGN:
            out.append(assign_target(uop))  # the oracle wrote it in place
            continue
        if layout is not None:  # sharded: the whole value, split as the rules would split it
            axis, devs = layout
            parts = [value] * len(devs) if axis is None else np.split(value, len(devs), axis)
            out.append(Shards(axis, devs, tuple(Buffer(p.size, uop.dtype, p, device=d)
                                                for p, d in zip(parts, devs))))
            continue
        if has_symbolic(uop.shape):  # stored as the other backends store it: padded to vmax
            full = np.zeros(concrete(uop.shape), dtype=value.dtype)
            full[tuple(slice(0, n) for n in value.shape)] = value
            value = full
        out.append(Buffer(value.size, uop.dtype, value, device=device_of(uop) or DEFAULT))
    return out


def _numel(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s if type(s) is int else int(s.vmax)
    return n


def _check_allocations(items: Sequence[ScheduleItem]) -> None:
    """Refuse, before the first kernel runs, a buffer the schedule would allocate above the
    memory limit (the views its kernels loop over allocate nothing: limits.py)."""
    seen: set[int] = set()
    for item in items:
        for b in item.bufs:
            if b.data is None and id(b) not in seen:
                seen.add(id(b))
                check_buffer(b.size, b.dtype, f"kernel {item.name}")


def _realize_scheduled(uops: Sequence[UOp], run_schedule: Callable[..., object],
                       plan_key: tuple | None = None) -> list[Buffer]:
    """Schedule the roots into kernels, run them, and return the buffer each root landed in.

    Bound variables are taken out first (runtime/variable.py): the schedule and the compiled
    kernels never hold a value, which is passed to the kernels at run time. With `plan_key`,
    what was done is kept as a plan for the same roots (runtime/plans.py)."""
    from rulegrad.runtime.schedule import schedule_prepared

    from .multi import lower_multi, regroup
    from .variable import unbind

    # sharded roots first become one root per device (rules/multi.rules)
    if in_use["multi"] and not any([u._ops & BIND_BIT for u in uops]):
        # cached with the schedule, keyed by the sharded graph: a sharded step lowered by the
        # rules at every call cost it some 8,000 Python calls. (No bound variable: its value
        # would be in the key; unbind takes it out of the lowered graph first, below.)
        items, outs, lowered = schedule_prepared(list(uops), lower_multi)
        var_vals: dict = {}
    else:
        flat, lowered = lower_multi(list(uops))
        roots, var_vals = unbind(flat)
        items, outs, _ = schedule_prepared(roots, None)
    _check_allocations(items)
    prog = run_schedule(items, var_vals=var_vals)
    bufs = [_need_buffer(out) for out in outs]
    # (a root on its own device: once any program used several devices, every root names one)
    # (lists, not generators, here and in realize_tensors: one frame, not one resumption per
    # root of every realize; an optimizer step's has a root per parameter and gradient)
    if plan_key is not None and all([e[0] == "one" and e[2] in (None, bufs[e[1]].device)
                                     for e in lowered]):
        from . import plans

        plans.record(plan_key, items, prog, [bufs[e[1]] for e in lowered], var_vals)
    return regroup(bufs, lowered)


def _realize_interp(uops: Sequence[UOp]) -> list[Buffer]:
    from rulegrad.backends.kernel_interp import run_schedule

    return _realize_scheduled(uops, run_schedule)


def _need_buffer(uop: UOp) -> Buffer:
    buf = uop.arg if uop.op is Ops.BUFFER else buffer_of(uop)
    if buf is None:
        raise RuntimeError(f"the schedule left a root without a buffer: {uop!r}")
    return buf


_first = True  # no C realize ran in this process yet


def _realize_c(uops: Sequence[UOp]) -> list[Buffer]:
    # lowered (rules/lower.rules), rendered to C, built once into a shared library and cached
    # (backends/c/); DEBUG=4 prints the C source
    from rulegrad.backends.c import run_schedule

    global _first
    if _first:  # a process's first build waits for the compiler's --version (its cache key):
        _first = False  # asked now, it is answered while the graph is scheduled
        from rulegrad.backends.c.build import probe_compiler

        probe_compiler()
    # what was done is kept as a plan for these roots (runtime/plans.py; `realize` runs it)
    return _realize_scheduled(uops, run_schedule, _plans().key(uops))


@functools.cache
def _plans():  # imported at first use (it imports the scheduler); a function-level import
    from . import plans  # costs a microsecond per call, a tenth of a planned realize

    return plans


BACKENDS: dict[str, Callable[[Sequence[UOp]], list[Buffer]]] = {
    "oracle": _realize_oracle,
    "interp": _realize_interp,
    "c": _realize_c,
}


def backend_name() -> str:
    text = os.environ.get("RULEGRAD_BACKEND")
    name = _backend_names.get(text)
    if name is None:  # (read at every call; parsed once per value)
        name = (text or "").strip().lower() or DEFAULT_BACKEND
        if name not in BACKENDS:
            raise EnvError(f"RULEGRAD_BACKEND={name!r} is not a backend; "
                             f"choose one of {', '.join(sorted(BACKENDS))}")
        _backend_names[text] = name
    return name


_backend_names: dict[str | None, str] = {}


# ---------------------------------------------------------------------- entry points
def realize(uops: Sequence[UOp]) -> list[Buffer | Shards]:
    """A filled Buffer per root (a sharded root: one per device); roots that already are
    buffers are returned without work."""
    # the same small graph again (hash-consed: the very same roots) runs its plan directly
    # (recorded by the C backend below, for roots that are neither buffers nor ASSIGNs)
    if (nodes := _plans().lookup(uops)) is not None:
        return [buffer_of(n) for n in nodes]  # type: ignore[misc]
    return _realize_unplanned(uops)


def _realize_unplanned(uops: Sequence[UOp]) -> list[Buffer | Shards]:
    """`realize` once no plan served the roots: the backend, for the roots not yet buffers."""
    out: list[Buffer | Shards | None] = [buffer_of(u) or shards_of(u) for u in uops]
    todo = list(dict.fromkeys([u for u, b in zip(uops, out) if b is None]))
    if todo:
        for u in todo:
            if u.op is Ops.ASSIGN:  # an array handed out by .numpy() keeps its values
                for buf in target_buffers(u):
                    buf.prepare_write()
        with gc_paused():  # scheduling and building a 1M-op graph: see runtime/gc_pause.py
            done = dict(zip(todo, BACKENDS[backend_name()](todo)))
        out = [b if b is not None else done[u] for u, b in zip(uops, out)]
    return out  # type: ignore[return-value]


def run_record(lazy: Lazy) -> tuple[UOp | None, tuple | None]:
    """A lazy record's value (runtime/lazy.py) by the plan of its graph's form, with no graph
    built: (its result node, its plan key); (None, its plan key) when no plan is known for it
    yet (realize its graph, then `learn_record`); (None, None) when nothing may be planned."""
    if capture.active is not None:  # (rulegrad.jit records the launches: the ordinary path)
        return None, None
    bufs = lazy.bufs
    # (which leaves share a buffer: asked only when some do, the rare case)
    nodes, tk = _plans().run_record(
        lazy.token, bufs, None if len(bufs) == len(set(bufs)) else aliasing(bufs))
    return (None, tk) if nodes is None else (nodes[0], tk)


def learn_record(tk: tuple, lazy: Lazy, root: UOp) -> None:
    """Note the form of the graph `root` a lazy record built, keyed `tk` (`run_record`)."""
    _plans().learn_trail(tk, lazy.bufs, [root])


def realize_tensors(tensors: Sequence[Tensor], scheduler: str | None = None,
                    readers: bool = True) -> None:
    """Realize the tensors together and point each at its result: BUFFER.reshape(shape).
    `scheduler` (rangeify or kernelize) overrides RULEGRAD_SCHEDULER for this call;
    `readers`: a pending ASSIGN's noted readers come along (`read_before`)."""
    # (`.data`: a WeakKeyDictionary's truth is a Python call, a tiny program's realize has ten)
    if readers and _readers.data and any([t.uop._ops & _ASSIGN_BIT for t in tensors]) \
            and (more := _readers_left(tensors, [t.uop for t in tensors])):
        tensors = [*tensors, *more]  # (the old values, read before the write)
    if len(tensors) == 1:  # (one tensor, the common call: `.numpy()` of an op's result)
        uop = tensors[0].uop
        op = uop.op
        # an op's node (ADD, ...) is neither realized nor a view: no `buffer_of` to ask
        if op in VIEW_OPS or op is _BUFFER:
            if buffer_of(uop) is not None or stored_view(uop):
                return  # (realized, or a view of storage: realized already)
        uops = [uop]
    else:
        for t in tensors:  # tensors already realized (`.numpy()` of a result) need no lookup
            if buffer_of(t.uop) is None:
                break
        else:
            return
        if any([t.uop.op in VIEW_OPS for t in tensors]):  # (a view of storage: realized already)
            tensors = [t for t in tensors if not stored_view(t.uop)]
            if not tensors:
                return
        if len(tensors) > 1 and (views := _views(tensors)) is not None:
            _realize_views(tensors, *views, scheduler)
            return
        if len(tensors) > 1 and len({id(t.uop) for t in tensors}) < len(tensors):
            _apart(tensors)
        uops = [tensors[0].uop] if len(tensors) == 1 else [t.uop for t in tensors]
    # (one tensor, the common call: no comprehension's frame on a small program's path)
    if uops[0].op in _MOVEMENT if len(uops) == 1 else any([u.op in _MOVEMENT for u in uops]):
        _note_copied_views(tensors, uops)
    # (only a graph that holds the bit ASSIGN shares with CONTIGUOUS and COPY writes one)
    writes = uops[0]._ops & _ASSIGN_BIT if len(uops) == 1 else \
        any([u._ops & _ASSIGN_BIT for u in uops])
    # (a graph that reaches a tensor needing a gradient is kept for it: runtime/origins.py)
    watched = origins.watch(uops) if origins.any_need else None
    if scheduler is None:  # (no context manager: a tenth of a small realize's cost)
        plans = _plans()  # the same small graph again (or one of the same form over other
        # buffers): its plan hands out the result nodes
        # (a result that keeps its graph is handed over: no idle plan keeps that graph alive)
        if (nodes := plans.lookup(uops, watched is not None)) is not None:
            for t, u, node in zip(tensors, uops, nodes):
                t.uop = node if u.tag is None else u  # (a variable's marked node: _result)
            if watched:
                origins.keep(watched, uops, nodes)
            if writes and _after_assigns:
                _assigned(uops, tensors)
            return
        buffers = _realize_unplanned(uops)
    else:
        from .kernelize import using

        with using(scheduler):
            buffers = realize(uops)
    for t, u, buf in zip(tensors, uops, buffers):
        if isinstance(buf, Shards):  # sharded: each device's part, stacked
            t.uop = _sharded_result(u, buf)
        else:
            t.uop = _result(u, buf)
    if watched:
        origins.keep(watched, uops, [t.uop for t in tensors])
    if writes and _after_assigns:
        _assigned(uops, tensors)


# run after a realize that wrote ASSIGNs, with {ASSIGN: the view it wrote, which reads its new
# value now}: runtime/tensor.py (which this module does not import) points every other live
# tensor that holds one at that view, so no later realize runs the ASSIGN again
_after_assigns: list[Callable[[dict[UOp, UOp]], None]] = []


def after_assigns(hook: Callable[[dict[UOp, UOp]], None]) -> None:
    _after_assigns.append(hook)


_ASSIGN_BIT = OP_BIT[Ops.ASSIGN]
# the ASSIGN nodes built and not yet written, each with its target tensor, both weakly held
# (`pending_assign`): while one is not a root of a realize, that realize's other roots may hold
# it. (A target over a buffer is in no list of live tensors runtime/tensor.py keeps.)
_pending: weakref.WeakKeyDictionary[UOp, weakref.ref] = weakref.WeakKeyDictionary()


def pending_assign(node: UOp, target: Tensor) -> UOp:
    """Note an ASSIGN node into target that a later realize writes (`_assigned`); node."""
    _pending[node] = weakref.ref(target)
    return node


# {pending ASSIGN: the tensors that read the old value (an optimizer step's gradients and the
# lazy values built before it)}, weakly held: a realize that writes the ASSIGN realizes them
_readers: weakref.WeakKeyDictionary[UOp, list[weakref.ref]] = weakref.WeakKeyDictionary()


def read_before(nodes: Sequence[UOp], tensors: Sequence[Tensor]) -> None:
    """Note that `tensors` read the old values the pending ASSIGNs `nodes` overwrite: one
    realized without them (`w.numpy()` before the step's realize) realizes them with it."""
    refs = [weakref.ref(t) for t in tensors]
    for n in nodes:
        _readers[n] = refs


def _readers_left(tensors: Sequence[Tensor], uops: Sequence[UOp]) -> list[Tensor]:
    """The noted readers of pending ASSIGNs that `uops` write, not realized yet and not among
    `tensors` (none, without a walk, when every noted reader is among them or realized: an
    optimizer's step)."""
    have = {id(t) for t in tensors}
    left = {id(t): t for refs in list(_readers.values()) for r in refs
            if (t := r()) is not None and id(t) not in have and buffer_of(t.uop) is None}
    if not left:
        return []
    nodes = {n for u in uops if u._ops & _ASSIGN_BIT for n in toposort(u, stop=_no_assign)}
    out = {id(t): t for a, refs in list(_readers.items()) if a in nodes for r in refs
           if (t := r()) is not None and id(t) in left}
    return list(out.values())


def _no_assign(u: UOp) -> bool:
    return not u._ops & _ASSIGN_BIT


def _assigned(uops: Sequence[UOp], tensors: Sequence[Tensor]) -> None:
    """The ASSIGNs written now, each with the view it wrote, handed to `_after_assigns`: the
    ASSIGN roots, and a pending one inside a root (`(w * 2).numpy()` of a pending step's w ran
    the step: realized again, it stepped w twice). The roots are walked only while an ASSIGN
    is pending that is not a root (an optimizer's step has all its ASSIGNs as roots: a
    walk of its gradients, CONTIGUOUS roots, would be one of their graphs each step), and only
    down the nodes whose graph holds the bit ASSIGN shares with CONTIGUOUS and COPY."""
    done = {u: u.src[0] for u in uops if u.op is Ops.ASSIGN}
    for u in done:
        _pending.pop(u, None)
        _readers.pop(u, None)
    if _pending.data:
        for u in uops:
            # (momentum's `w.numpy()` writes b's ASSIGN, in w's; an empty root is computed
            # from none of its graph, whose ASSIGNs stay pending: `p[1:]` of a one-row p)
            if u._ops & _ASSIGN_BIT and 0 not in [d for d in u.shape or () if type(d) is int]:
                done.update((n, n.src[0]) for n in toposort(u, stop=_no_assign)
                            if n.op is Ops.ASSIGN)
        for u in done:  # (a target that still holds its ASSIGN reads what it wrote)
            _readers.pop(u, None)
            if (ref := _pending.pop(u, None)) is not None and (t := ref()) is not None \
                    and t.uop is u:
                t.uop = u.src[0]
    if done:
        for t, u in zip(tensors, uops):
            # a view of a pending ASSIGN's target (`v = w.T` before the step, which points it
            # at the ASSIGN) realized with it stays a view of the storage, not a copy that no
            # later step writes: the view of what the ASSIGN wrote
            if u.op in VIEW_OPS and view_base(u) in done:
                t.uop = u.substitute(done)
        for hook in _after_assigns:
            hook(done)


def _apart(tensors: Sequence[Tensor]) -> None:
    """Tensors over one lazy node (`t = a * 2` and `y = a * 2`: nodes are hash-consed; `Tensor(t)`
    of a lazy t) realized together got one buffer, so an assign into one changed the other (as
    realized one by one, and as torch's, they are apart): each but the first is pointed at a
    CONTIGUOUS of the node, a buffer of its own. (An ASSIGN's tensors share the target's
    storage on purpose, and a variable's node is marked apart already.)"""
    seen: dict[int, Tensor] = {}
    for t in tensors:
        while seen.setdefault(id(t.uop), t) is not t and t.uop.op is not Ops.ASSIGN \
                and t.uop.tag is None:
            t.uop = t.uop.f(Ops.CONTIGUOUS)


def _result(root: UOp, buf: Buffer) -> UOp:
    """The node of a tensor realized from `root` into `buf`: BUFFER.reshape(shape), except
    - an ASSIGN into a chain of views over buf: its target. An optimizer's step through a view
      (`b = a.T` trained) left b reading the flat buffer in b's shape, another value;
    - a variable's node (tagged: runtime/tensor.py's `_marked`; no other tensor-level node
      carries a tag) realized with other tensors: itself, reading buf already. Its mark is what
      makes it a node of its own."""
    if root.op is Ops.ASSIGN:
        target = root.src[0]
        if target.base.op is _BUFFER and target.base.arg is buf:
            return target
    elif root.tag is not None and buffer_of(root) is buf:
        return root
    return result_node(buf, root.shape)


def _sharded_result(root: UOp, shards: Shards) -> UOp:
    """`_result` of a sharded root: an ASSIGN through views of the very shards it wrote is its
    target (an optimizer's step of `p = s.T`, s sharded, left p reading s's parts laid out as
    p's: another value), else the shards read again."""
    if root.op is Ops.ASSIGN:
        done = shards_of(view_base(root.src[0]))
        if done is not None and all(a is b for a, b in zip(done.bufs, shards.bufs)):
            return root.src[0]
    return shards.node(root.dtype, root.shape)


# Tensors realized from a chain of movement ops over a realized buffer that is no view of it
# (a PAD or EXPAND not proven dropped: `s[:n, ::2]` past view_chains.MAX_BINDINGS cases), each
# with the chain it was: the read made it a copy, and an assign into it must be refused as it
# was before the read (Tensor._write), not write the copy and leave the buffer as it was
# (by id: a WeakKeyDictionary compares keys with ==, which a Tensor computes elementwise)
_copied: dict[int, tuple[weakref.ref, UOp]] = {}
_MOVEMENT = frozenset({Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP})


def _note_copied_views(tensors: Sequence[Tensor], uops: Sequence[UOp]) -> None:
    for t, u in zip(tensors, uops):
        bottom = u
        while bottom.op in _MOVEMENT:
            bottom = bottom.src[0]
        if bottom is not u and buffer_of(u) is None and buffer_of(bottom) is not None:
            try:
                _copied[id(t)] = (weakref.ref(t, functools.partial(_forget_copied, id(t))), u)
            except TypeError:  # (an internal holder of a node, `_realize_views`: no Tensor)
                pass


def _forget_copied(key: int, _: weakref.ref) -> None:
    _copied.pop(key, None)


def copied_view(t: Tensor) -> UOp | None:
    """The chain of movement ops t was before a read made it a copy (`_note_copied_views`)."""
    entry = _copied.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def view_base(uop: UOp) -> UOp:
    """The node under a chain of VIEW_OPS (the node itself when it is none), or of a strided
    slice's view ops (`view_ops`)."""
    ops = view_ops(uop)
    while uop.op in ops:
        uop = uop.src[0]
    return uop


def stored_view(uop: UOp) -> bool:
    """A chain of VIEW_OPS over a realized buffer (or realized shards), not itself a result
    node: realized already, as tinygrad's views of a realized buffer are. Realizing it keeps
    it the view it is (a copy would not see a later assign into the buffer, as torch's views
    do); `numpy()` reads it through a copy made for the read."""
    if uop.op not in VIEW_OPS or buffer_of(uop) is not None:
        return False
    bottom = view_base(uop)
    return buffer_of(bottom) is not None or shards_of(bottom) is not None


def view_bases(uops: Sequence[UOp]) -> set[UOp]:
    """The lazy values that some of `uops` are views of, none of `uops` itself (a tensor that
    holds one is realized with them: Tensor.realize)."""
    return {b for u in uops if u.op in VIEW_OPS and buffer_of(u) is None
            and (b := view_base(u)) not in uops and buffer_of(b) is None and shards_of(b) is None}


def _views(tensors: Sequence[Tensor]) -> tuple[list[UOp], dict[int, UOp]] | None:
    """Realized together, tensors that are views of one another (`a` and `a.T`) or of one
    lazy value (`a.T` and `a[1:]`): the nodes to realize (each base once) and, per view, the
    base it reads. None when there is no such view (each tensor realized on its own, as ever).
    A view of a base realized apart would be a copy: an assign into the base (or through
    another view of it) would not be seen by it, as it is by torch's views."""
    roots = {t.uop for t in tensors}
    bottoms = [view_base(t.uop) if t.uop.op in VIEW_OPS and buffer_of(t.uop) is None
               and shards_of(t.uop) is None else None for t in tensors]
    shared = {b for b in bottoms if b is not None and (b in roots or bottoms.count(b) > 1)}
    shared = {b for b in shared if buffer_of(b) is None and shards_of(b) is None}
    if not shared:
        return None
    views = {i: b for i, b in enumerate(bottoms) if b in shared}
    todo = [t.uop for i, t in enumerate(tensors) if i not in views]
    todo += [b for b in dict.fromkeys(views.values()) if b not in todo]
    return todo, views


class _Holder:
    """What realize_tensors reads and writes of a tensor: its node."""

    __slots__ = ("uop",)

    def __init__(self, uop: UOp):
        self.uop = uop


def _realize_views(tensors: Sequence[Tensor], todo: list[UOp], views: dict[int, UOp],
                   scheduler: str | None) -> None:
    """realize_tensors of `_views`' answer: the bases (and the other tensors) realized
    together, then each view pointed at its base's result through its own movement ops."""
    # (the nodes read before any is repointed: a tensor passed twice, `realize(a, a, a.T)`; a
    # tensor that holds an ASSIGN the realize writes, which repoints it: `_assigned`)
    uops = [t.uop for t in tensors]
    holders = [_Holder(u) for u in todo]  # (each base once)
    realize_tensors(holders, scheduler, False)  # type: ignore[arg-type]
    done = {u: h.uop for u, h in zip(todo, holders)}
    for i, (t, u) in enumerate(zip(tensors, uops)):
        t.uop = u.substitute({views[i]: done[views[i]]}) if i in views else done[u]
