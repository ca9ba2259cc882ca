"""The numpy oracle: the value of any tensor-level UOp graph, computed with numpy alone.

In: root UOps of a tensor-level graph (BUFFER, CONST, movement ops, ALU ops, REDUCE_AXIS, the
tensor markers, COPY, ASSIGN, SINK). Out: one numpy array per root, of exactly the root's dtype
and shape. No rewrite rule is involved: this is the slow, obviously-correct path every other
backend is checked against (STYLE.md 10), so each op is the plainest numpy that says it.

What each ALU op and CAST computes is `runtime/semantics.py`'s table (numpy's meaning, and
the choices where numpy has none). Beyond it:

- REDUCE_AXIS MAX/MIN over an empty axis gives the identity (-inf / dtype min for MAX, +inf /
  dtype max for MIN), like tinygrad, where numpy raises.
- SINK evaluates to a tuple of its sources' values; DEVICE and UNIQUE to None; BIND to its
  value; a DEFINE_VAR takes its value from `var_vals`.
- Devices are not modelled: COPY is the identity. A value with one part per device (MSTACK, and
  any op over one) is a `PerDevice` list of arrays, each of the node's shape: an op of such
  values is computed part by part (a value with no device, a constant, is the same in every
  part), MSELECT picks one part, and MULTI (a sharded tensor) joins them along its axis
  (replicas: the first).
- VIEW(x, arg=ShapeTracker) reads x's row-major memory through the tracker's views (offset,
  strides, mask: 0 where the mask is off), each view addressing the row-major layout of the
  one below it (runtime/view.py's meaning, computed here from the views' fields).
- ASSIGN(target, value) writes value into the storage the target views (a BUFFER, possibly
  through view-preserving movement ops; for a sharded target, its parts' buffers) and
  evaluates to the target. As on the scheduled backends (runtime/schedule_item.py), a read of
  a written buffer anywhere but through its ASSIGN is its value before the write: such a
  BUFFER evaluates to a copy of its contents taken before any write (`_written`), and each
  ASSIGN's target is evaluated again over the live storage it writes (`_live_target`).

Evaluation walks `toposort` (no recursion) and frees each intermediate once its last user has
run, so long chains stay small in memory. Movement ops are numpy views (an EXPAND is a
broadcast, no copy), and a REDUCE_AXIS of an elementwise value larger than `CHUNK` elements (a
matmul's broadcast product) evaluates that value a block of one axis at a time (`_cones`,
`_reduce_in_blocks`), so the product is never made whole. Movement ops between the product and
its reduction (a permute, reshape, flip, shrink or expand of it) are moved onto the product's
operands, as numpy views, and the blocks are taken after them. Roots are returned as fresh
arrays that never alias a Buffer's storage.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rulegrad.runtime import semantics
from rulegrad.runtime.buffer import Buffer
from rulegrad.runtime.ops import Ops, reduce_from
from rulegrad.runtime.uop import UOp, toposort
from rulegrad.runtime.variable import actual, has_symbolic, resolve

CHUNK = 1 << 20  # elements of a reduced elementwise value evaluated at once (8 MB in float64)


class OracleError(RuntimeError):
    """The graph cannot be evaluated: an op the oracle does not know, or a malformed node."""


def evaluate(roots: Sequence[UOp], var_vals: dict[str, int] | None = None) -> list[Any]:
    """The value of each root: an ndarray of the root's dtype and shape (a tuple for SINK)."""
    roots = list(roots)
    if not roots:
        return []
    order = toposort(UOp.sink(*roots))[:-1]  # the helper SINK itself is not evaluated
    users: dict[UOp, int] = {}
    for node in order:
        for s in node.src:
            users[s] = users.get(s, 0) + 1
    keep = set(roots)
    values: dict[UOp, Any] = {}
    # a bound variable's DEFINE_VAR takes the value it is bound to
    var_vals = {**{n.src[0].arg[0]: int(n.src[1].arg) for n in order if n.op is Ops.BIND},
                **(var_vals or {})}
    written = _written(order)
    cones = _cones(order, keep)
    deferred = {n for cone in cones.values() for n in (*cone.nodes, *cone.moves)}

    def done(node: UOp) -> None:
        for s in node.src:  # free what no later node needs
            users[s] -= 1
            if users[s] == 0 and s not in keep:
                values.pop(s, None)

    with np.errstate(all="ignore"):
        for node in order:
            if node in deferred:
                continue  # evaluated by its REDUCE_AXIS, a block at a time
            if node in cones:
                values[node] = _reduce_in_blocks(node, cones[node], values)
                for c in (*cones[node].nodes, *cones[node].moves):
                    done(c)
            elif node.op is Ops.BUFFER and id(node.arg) in written:
                values[node] = np.array(_buffer(node, [], var_vals), copy=True)  # (old value)
            else:
                srcs = [values[s] for s in node.src]
                if node.op is Ops.ASSIGN and written:  # (written through, not through a copy)
                    srcs[0] = _live_target(node.src[0], var_vals)
                values[node] = (_per_device(node, srcs, var_vals or {})
                                if any(type(v) is PerDevice for v in srcs) else
                                _eval_node(node, srcs, var_vals or {}))
            done(node)
    return [_detach(values[r]) for r in roots]


def _written(order: list[UOp]) -> set[int]:
    """The ids of the Buffers the ASSIGNs among `order` write (under their targets)."""
    return {id(b.arg) for n in order if n.op is Ops.ASSIGN
            for b in toposort(n.src[0]) if b.op is Ops.BUFFER}


def _live_target(target: UOp, var_vals: dict[str, int]) -> Any:
    """An ASSIGN's target evaluated over the storage of its buffers (not their copies)."""
    values: dict[UOp, Any] = {}
    for n in toposort(target):
        srcs = [values[s] for s in n.src]
        values[n] = (_per_device(n, srcs, var_vals) if any(type(v) is PerDevice for v in srcs)
                     else _eval_node(n, srcs, var_vals))
    return values[target]


@dataclass(frozen=True)
class _Cone:
    """What a REDUCE_AXIS evaluates a block at a time: the elementwise `nodes` only it reads
    (in evaluation order, the product last), and the movement ops between the product and the
    reduction (`moves`, the product's user first)."""

    nodes: list[UOp]
    moves: list[UOp]


# movement ops that commute with elementwise ops and are numpy views (a PAD is neither)
_VIEW_MOVES = frozenset({Ops.PERMUTE, Ops.RESHAPE, Ops.EXPAND, Ops.SHRINK, Ops.FLIP})


def _cones(order: list[UOp], keep: set[UOp]) -> dict[UOp, _Cone]:
    """Per REDUCE_AXIS whose source is an elementwise value of more than CHUNK elements with an
    axis to split (`_splittable`), possibly under movement ops only it reads: that value's cone
    of elementwise nodes (ALU, CAST of its shape) only the reduction reads. Their value is never
    made whole."""
    users: dict[UOp, set[UOp]] = {}
    for node in order:
        for s in node.src:
            users.setdefault(s, set()).add(node)
    position = {n: i for i, n in enumerate(order)}
    cones: dict[UOp, _Cone] = {}
    for red in order:
        if red.op is not Ops.REDUCE_AXIS or not _splittable(red):
            continue
        if any(n.op is Ops.MSTACK for n in toposort(red.src[0])):
            continue  # a value per device: reduced part by part, each part whole
        x, moves, user = red.src[0], [], red
        while x.op in _VIEW_MOVES and x not in keep and users.get(x) == {user} \
                and not has_symbolic(x.shape):
            moves.append(x)
            x, user = x.src[0], x
        if x in keep or users.get(x) != {user} or not _elementwise(x, x.shape):
            continue
        cone, stack = {x}, [x]
        while stack:  # (no recursion) the elementwise sources read only inside the cone
            for s in stack.pop().src:
                if s not in cone and s not in keep and _elementwise(s, x.shape) \
                        and users[s] <= cone:
                    cone.add(s)
                    stack.append(s)
        cones[red] = _Cone(sorted(cone, key=position.__getitem__), moves)
    return cones


def _elementwise(node: UOp, shape: tuple) -> bool:
    return (node.op in _ALU_OPS or node.op is Ops.CAST) and node.shape == shape


def _splittable(red: UOp) -> tuple[int, int] | None:
    """(axis, block length) to evaluate a REDUCE_AXIS's source by, when it is larger than
    CHUNK elements (concrete sizes): its longest kept axis, else (a reduction to few values)
    its longest reduced one when its op's partial results combine (ADD, MUL, MAX, MIN); None
    when there is no axis to split."""
    shape = red.src[0].shape
    if shape is None or has_symbolic(shape) or math.prod(shape) <= CHUNK:
        return None
    op, reduced = red.arg
    kept = [a for a in range(len(shape)) if a not in reduced and shape[a] > 1]
    if not kept and op in (Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN):
        kept = [a for a in reduced if shape[a] > 1]
    if not kept:
        return None
    axis = max(kept, key=lambda a: shape[a])
    return axis, max(1, CHUNK // (math.prod(shape) // shape[axis]))


def _reduce_in_blocks(red: UOp, cone: _Cone, values: dict[UOp, Any]) -> np.ndarray:
    """The REDUCE_AXIS of `cone`'s product, evaluated a block of one axis at a time: a kept
    axis's blocks are parts of the result; a reduced axis's are partial results, combined with
    the reduce's op. The cone's operands are moved as the product is (`_moved`), so a block is
    a block of the reduction's source."""
    shape = red.src[0].shape
    inside = set(cone.nodes)
    operands = {s for n in cone.nodes for s in n.src if s not in inside}
    moved = {s: _moved(values[s], cone) for s in operands}
    if any(v is None for v in moved.values()):  # a reshape numpy cannot view
        axes = _axes_before_reshape(red, cone)
        if axes is not None:  # reduced in the product's own axes, then reshaped
            before = UOp(Ops.REDUCE_AXIS, red.dtype, (cone.nodes[-1],),
                         (red.arg[0], axes, *red.arg[2:]))
            if _splittable(before):
                out = _reduce_in_blocks(before, _Cone(cone.nodes, []), values)
                return out.reshape(red.shape)
        full = cone.nodes[-1].shape
        whole = _evaluate_cone(cone.nodes, {s: np.broadcast_to(values[s], full)
                                            for s in operands}, (slice(None),) * len(full))
        for m in reversed(cone.moves):
            whole = _movement(m, [whole], {})
        return _reduce_axis(red, [whole], {}).astype(red.dtype.np, copy=False)
    axis, step = _splittable(red)  # type: ignore[misc]
    op, reduced = red.arg[0], red.arg[1]
    out: np.ndarray | None = None if axis in reduced else np.empty(red.shape, red.dtype.np)
    for lo in range(0, shape[axis], step):
        at = tuple(slice(lo, lo + step) if a == axis else slice(None) for a in range(len(shape)))
        part = _reduce_axis(red, [_evaluate_cone(cone.nodes, moved, at)], {})
        part = part.astype(red.dtype.np, copy=False)
        if axis not in reduced:
            out[at] = part  # type: ignore[index]
        else:
            out = part if out is None else semantics.alu(op, red.dtype.np, out, part)
    return out  # type: ignore[return-value]


def _axes_before_reshape(red: UOp, cone: _Cone) -> tuple[int, ...] | None:
    """When the cone's movement ops are reshapes only, each merging or splitting axes that the
    reduction reduces all or keeps all (a flatten before a full sum): the product's axes the
    reduction reduces. Else None."""
    if not cone.moves or any(m.op is not Ops.RESHAPE for m in cone.moves):
        return None
    before, after = cone.nodes[-1].shape, red.src[0].shape
    reduced = set(red.arg[1])
    axes: list[int] = []
    i = j = 0
    while i < len(before) or j < len(after):  # one group of axes of equal size per pass
        gi, gj, pi, pj = [], [], 1, 1
        while True:
            if pi <= pj and i < len(before):
                pi *= before[i]
                gi.append(i)
                i += 1
            elif j < len(after):
                pj *= after[j]
                gj.append(j)
                j += 1
            else:
                break
            if pi == pj and (i == len(before) or before[i] != 1) \
                    and (j == len(after) or after[j] != 1):
                break
        sides = {a in reduced for a in gj if after[a] != 1}
        if pi != pj or len(sides) > 1:
            return None
        if sides == {True}:
            axes += gi
    return tuple(axes)


def _moved(value: np.ndarray, cone: _Cone) -> np.ndarray | None:
    """An operand of the cone's product broadcast to the product's shape and moved by the
    cone's movement ops: a view (an elementwise op commutes with a view op), or None when a
    reshape of it would copy (a broadcast operand reshaped across its broadcast axes)."""
    x = np.broadcast_to(value, cone.nodes[-1].shape) if value.ndim else value
    if not value.ndim:
        return x
    for m in reversed(cone.moves):
        if m.op is Ops.RESHAPE:
            try:
                x = np.reshape(x, m.arg, copy=False)
            except ValueError:
                return None
        else:
            x = _movement(m, [x], {})
    return x


def _evaluate_cone(nodes: list[UOp], operands: dict[UOp, np.ndarray],
                   at: tuple[slice, ...]) -> np.ndarray:
    """The block `at` of the cone's product, from the same block of each operand."""
    block: dict[UOp, np.ndarray] = {}
    for node in nodes:
        srcs = [block[s] if s in block else (operands[s][at] if operands[s].ndim
                                              else operands[s]) for s in node.src]
        handler = _alu if node.op in _ALU_OPS else _cast
        block[node] = np.asarray(handler(node, srcs, {})).astype(node.dtype.np, copy=False)
    return block[nodes[-1]]


def evaluate_one(root: UOp, var_vals: dict[str, int] | None = None) -> Any:
    """The value of a single root (see `evaluate`)."""
    return evaluate([root], var_vals)[0]


class PerDevice(list):
    """The value of a node with one part per device: one array per device, in order."""


# ops that take a per-device value whole (they are not computed part by part)
_WHOLE = frozenset({Ops.MSELECT, Ops.MULTI, Ops.SINK})


def _per_device(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> Any:
    """A node over per-device values: MSELECT/MULTI/SINK take them whole; any other op is
    computed on each device's part (sources with no device are the same on every device)."""
    if node.op in _WHOLE:
        return _eval_node(node, srcs, var_vals)
    n = {len(v) for v in srcs if type(v) is PerDevice}
    if len(n) != 1:
        raise OracleError(f"{node.op.name} of values on different numbers of devices: {node!r}")
    return PerDevice(_eval_node(node, [v[i] if type(v) is PerDevice else v for v in srcs],
                                var_vals) for i in range(n.pop()))


def _detach(value: Any) -> Any:
    if type(value) is PerDevice:
        return PerDevice(_detach(v) for v in value)
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if isinstance(value, tuple):
        return tuple(_detach(v) for v in value)
    return value


# ---------------------------------------------------------------------- per-node evaluation
def _eval_node(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> Any:
    entry = _DISPATCH.get(node.op)  # one lookup per node: long chains spend their time here
    if entry is None:
        raise OracleError(f"the oracle cannot evaluate {node.op.name} (tensor-level ops only): "
                          f"{node!r}")
    handler, is_array = entry
    value = handler(node, srcs, var_vals)
    return _conform(np.asarray(value), node) if is_array else value


def _conform(value: np.ndarray, node: UOp) -> np.ndarray:
    """The value with exactly the node's dtype; its shape must already be the node's."""
    want = node.dtype.np
    if value.dtype != want:
        value = value.astype(want)
    if value.shape != _shape(node):
        raise OracleError(f"{node.op.name} produced shape {value.shape}, but the node's shape is "
                          f"{node.shape}: {node!r}")
    return value


def _shape(node: UOp) -> tuple | None:
    """The node's shape, a symbolic size as its bound value."""
    shape = node.shape
    return actual(shape) if shape is not None and has_symbolic(shape) else shape


def _buffer(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    buf: Buffer = node.arg
    if not isinstance(buf, Buffer):
        raise OracleError(f"BUFFER's arg must be a Buffer, got {type(buf).__name__}")
    return buf.ensure()


def _define_var(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    name = node.arg[0]
    if name not in var_vals:
        raise OracleError(f"variable {name!r} has no value; pass var_vals={{{name!r}: ...}}")
    return np.array(var_vals[name], dtype=node.dtype.np)


def _flip_index(flags: tuple[bool, ...]) -> tuple[slice, ...]:
    return tuple(slice(None, None, -1) if f else slice(None) for f in flags)


_MOVEMENT: dict[Ops, Callable[[np.ndarray, Any], np.ndarray]] = {
    Ops.RESHAPE: lambda x, arg: x.reshape(arg),
    Ops.EXPAND: lambda x, arg: np.broadcast_to(x, arg),
    Ops.PERMUTE: lambda x, arg: x.transpose(arg),
    Ops.PAD: lambda x, arg: np.pad(x, arg, mode="constant") if arg else x,  # np.pad rejects ()
    Ops.SHRINK: lambda x, arg: x[tuple(slice(b, e) for b, e in arg)],
    Ops.FLIP: lambda x, arg: x[_flip_index(arg)],
}


def _movement(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    arg = node.arg
    if node.op in (Ops.RESHAPE, Ops.EXPAND, Ops.SHRINK):  # a symbolic size: its bound value
        arg = resolve(arg)
    return _MOVEMENT[node.op](srcs[0], arg)


# ---------------------------------------------------------------------- ALU
# what each op computes is runtime/semantics.py's table; the oracle only walks the graph
_ALU_OPS = frozenset(semantics.ALU) | {Ops.MULACC}


def _alu(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    try:
        return semantics.alu(node.op, node.dtype.np, *srcs)
    except semantics.SemanticsError as e:
        raise OracleError(f"{e}: {node!r}") from None


def _cast(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    return semantics.cast(srcs[0], node.dtype.np)


def _bitcast(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    x: np.ndarray = srcs[0]
    if x.dtype.itemsize != node.dtype.itemsize:
        raise OracleError(f"BITCAST from {x.dtype} to {node.dtype.name} changes the item size")
    # ascontiguousarray makes a 0-d array 1-d: put the shape back
    return np.ascontiguousarray(x).view(node.dtype.np).reshape(x.shape)


# ---------------------------------------------------------------------- reductions
def _reduce_axis(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    op, axes = node.arg[0], node.arg[1]
    x: np.ndarray = srcs[0]
    try:
        return semantics.reduce(op, x, tuple(axes), reduce_from(node.arg, node.dtype))
    except (semantics.SemanticsError, ValueError) as e:  # ValueError: not a reduce op
        raise OracleError(f"REDUCE_AXIS: {e}") from None


# ---------------------------------------------------------------------- markers and effects
def _assign(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    target, value = srcs[0], srcs[1]
    base = node.src[0].base
    if base.op is Ops.MULTI:
        return _assign_sharded(node.src[0], base, value)
    if base.op is Ops.MSTACK:  # one device's part (an ASSIGN computed part by part)
        buffers = [p.base.arg.ensure() for p in base.src if p.base.op is Ops.BUFFER]
        if target.size and not any(np.shares_memory(target, b) for b in buffers):
            raise OracleError(f"ASSIGN's target must be a view of a part's BUFFER: {node!r}")
    elif base.op is not Ops.BUFFER or (target.size and not np.shares_memory(target,
                                                                          base.arg.ensure())):
        raise OracleError(f"ASSIGN's target must be a view of a BUFFER, got {node.src[0]!r}")
    if not target.flags.writeable:
        raise OracleError(f"ASSIGN's target is not writable in place (an EXPAND?): {node.src[0]!r}")
    target[...] = value
    return target


def _assign_sharded(target: UOp, multi: UOp, value: np.ndarray) -> np.ndarray:
    """ASSIGN into (a view of) a sharded tensor: its parts' buffers joined into the whole
    value, the view of it written, and the whole split back into the parts' buffers."""
    stack = multi.src[0]
    if stack.op is not Ops.MSTACK or any(p.base.op is not Ops.BUFFER for p in stack.src):
        raise OracleError(f"ASSIGN's sharded target must be realized shards, got {multi!r}")
    axis = multi.arg[0]
    parts = [p.base.arg.ensure().reshape(p.shape) for p in stack.src]
    whole = parts[0].copy() if axis is None else np.concatenate(parts, axis)
    views = []
    node = target
    while node is not multi:
        views.append(node)
        node = node.src[0]
    view = whole
    for v in reversed(views):
        view = _MOVEMENT[v.op](view, v.arg)
    if view.size and not np.shares_memory(view, whole):
        raise OracleError(f"ASSIGN's target is not a view of the sharded tensor: {target!r}")
    view[...] = value
    for part, new in zip(parts, [whole] * len(parts) if axis is None else
                         np.split(whole, len(parts), axis)):
        part[...] = new
    return np.array(view)


# a value on several devices (MSTACK): one part per device
def _mstack(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> PerDevice:
    shape = _shape(node)
    for s in srcs:
        if np.shape(s) != shape:
            raise OracleError(f"MSTACK part of shape {np.shape(s)}, not {shape}: {node!r}")
    return PerDevice(np.asarray(s) for s in srcs)


def _mselect(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    # (a value with no device is the same on every device)
    return srcs[0][node.arg] if type(srcs[0]) is PerDevice else srcs[0]


def _multi(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    """A sharded tensor: its parts joined along the sharded axis (replicas: the first)."""
    axis = node.arg[0]
    # (a value with no device: every part is that value)
    parts = list(srcs[0]) if type(srcs[0]) is PerDevice else [srcs[0]] * len(node.arg[1])
    return parts[0] if axis is None else np.concatenate(parts, axis)


def _view(node: UOp, srcs: list[Any], var_vals: dict[str, int]) -> np.ndarray:
    """x's row-major memory read through the tracker's views, the top view first: each view's
    element at i is offset + sum(i_k * strides_k) of the layout below, 0 outside its mask."""
    views = node.arg.views
    memory = np.ascontiguousarray(srcs[0]).reshape(-1)
    top = views[-1].shape
    idxs = [a.reshape(-1) for a in np.indices(top, dtype=np.int64)] if top else []
    valid = np.ones(int(np.prod(top, dtype=np.int64)), dtype=bool)
    for k in range(len(views) - 1, -1, -1):
        v = views[k]
        off = np.full(valid.shape, v.offset, dtype=np.int64)
        for i, stride in zip(idxs, v.strides):
            off += i * stride
        if v.mask is not None:
            for i, (b, e) in zip(idxs, v.mask):
                valid &= (i >= b) & (i < e)
        if k:  # the offset into the layout of the view below, as its indices
            below = views[k - 1].shape
            off = np.where(valid, off, 0)
            if int(np.prod(below, dtype=np.int64)) == 0:
                valid[:] = False
                idxs = [np.zeros_like(off) for _ in below]
            else:
                idxs = list(np.unravel_index(off, below)) if below else []
        else:
            idxs = [off]
    flat = idxs[0] if views else np.zeros(valid.shape, np.int64)
    if np.any(valid & ((flat < 0) | (flat >= memory.size))):
        raise OracleError(f"VIEW reads outside its source's {memory.size} elements: {node!r}")
    out = np.zeros(valid.shape, dtype=memory.dtype)
    out[valid] = memory[flat[valid]]
    return out.reshape(top)


# not an array of the node's shape (MSTACK: one per device, stacked)
_NO_ARRAY = frozenset({Ops.SINK, Ops.DEVICE, Ops.UNIQUE, Ops.MSTACK})
_HANDLERS: dict[Ops, Callable[[UOp, list[Any], dict[str, int]], Any]] = {
    Ops.BUFFER: _buffer, Ops.DEFINE_VAR: _define_var,
    Ops.CONST: lambda node, srcs, _: np.array(node.arg, dtype=node.dtype.np),
    Ops.BIND: lambda node, srcs, _: srcs[1], Ops.SINK: lambda node, srcs, _: tuple(srcs),
    **{op: _movement for op in _MOVEMENT},
    **{op: _alu for op in _ALU_OPS},
    Ops.CAST: _cast, Ops.BITCAST: _bitcast, Ops.REDUCE_AXIS: _reduce_axis,
    **{op: lambda node, srcs, _: srcs[0] for op in (Ops.CONTIGUOUS, Ops.REALIZE, Ops.DETACH,
                                                     Ops.FUSE, Ops.CONTIGUOUS_BACKWARD, Ops.NOOP)},
    Ops.COPY: lambda node, srcs, _: np.array(srcs[0], copy=True), Ops.ASSIGN: _assign,
    Ops.MSTACK: _mstack, Ops.MSELECT: _mselect, Ops.MULTI: _multi, Ops.VIEW: _view,
    Ops.DEVICE: lambda *_: None, Ops.UNIQUE: lambda *_: None,
}
_DISPATCH = {op: (handler, op not in _NO_ARRAY) for op, handler in _HANDLERS.items()}
