"""Python helpers of `multi.rules`: ops on sharded tensors (MULTI) as ops on each device's part.

In: the captures of a rule that matched. Out: the replacement (a MULTI over the per-device
value, or a per-device node), or an InvalidArgument that says what a sharded tensor cannot do
and what to do instead. Each helper is here because its rewrite loops over devices or axes.
"""

from __future__ import annotations

import math

from rulegrad.runtime.device import DeviceMismatch, describe, device_of, shard_part, to_device
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.errors import InvalidArgument
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.uop import UOp


def _multi(x: UOp, axis: int | None, devs: tuple[str, ...]) -> UOp:
    return UOp(Ops.MULTI, x.dtype, (x,), (axis, devs))


def _part(x: UOp, i: int) -> UOp:
    return UOp(Ops.MSELECT, x.dtype, (x,), i)


def _stack(parts: list[UOp], devs: tuple[str, ...]) -> UOp:
    return UOp(Ops.MSTACK, parts[0].dtype, tuple(parts), devs)


# ---------------------------------------------------------------------- multi_pm
def has_multi(x: UOp) -> bool:
    return any(s.op is Ops.MULTI for s in x.src)


def _parts_of(s: UOp, axis: int | None, devs: tuple[str, ...], op: Ops) -> UOp:
    """Source s of an op over tensors sharded along `axis`, as its per-device value."""
    n = len(devs)
    if s.op is Ops.MULTI:
        if s.arg[0] == axis:
            return s.src[0]
        # a replica read by shards: each device its own slice of it
        return _stack([shard_part(_part(s.src[0], i), axis, i, n) for i in range(n)], devs)
    where = device_of(s)
    if where is not None:
        raise DeviceMismatch(f"{op.name} of a tensor sharded over {describe(devs)} and one on "
                             f"{describe(where)}: shard it too (.shard(devices, axis)) or copy "
                             "the sharded one to one device (.to(device))")
    if axis is None:
        return s  # constants: the same on every device
    return _stack([shard_part(s, axis, i, n) for i in range(n)], devs)


def alu_multi(x: UOp) -> UOp:
    multis = [s for s in x.src if s.op is Ops.MULTI]
    devs = multis[0].arg[1]
    for m in multis:
        if m.arg[1] != devs:
            raise DeviceMismatch(f"{x.op.name} of tensors sharded over different devices "
                                 f"{describe(devs)} and {describe(m.arg[1])}")
    # the result is sharded as the first sharded source; a source sharded along another axis
    # (`x @ x` with x sharded by rows reads x along the contraction axis too) is gathered
    # whole on each device and cut there (an all-gather: it was refused)
    axis = next((m.arg[0] for m in multis if m.arg[0] is not None), None)
    srcs = tuple(_multi(_resharded(s, axis, devs), axis, devs)
                 if s.op is Ops.MULTI and s.arg[0] not in (axis, None) else s for s in x.src)
    return _multi(x.replace(src=tuple(_parts_of(s, axis, devs, x.op) for s in srcs)), axis, devs)


def _resharded(v: UOp, axis: int | None, devs: tuple[str, ...]) -> UOp:
    """The per-device parts of sharded v laid out along `axis` (None: replicas) instead of its
    own axis: gathered whole on each device, and cut there."""
    whole = [gather(v, UOp(Ops.DEVICE, arg=d)) for d in devs]
    return _stack([shard_part(w, axis, i, len(devs)) for i, w in enumerate(whole)], devs)


def reduce_multi(r: UOp, m: UOp) -> UOp:
    (axis, devs), (op, axes) = m.arg, r.arg[:2]
    partial = r.replace(src=(m.src[0],))
    if axis is None or axis not in axes:
        return _multi(partial, axis, devs)
    # all-reduce: device j combines every device's partial result, in the same order on every
    # device, so the replicas are equal to the bit
    out = []
    for dev in devs:
        acc = None
        for i in range(len(devs)):
            p = to_device(_part(partial, i), dev)  # (part i lives on devs[i])
            acc = p if acc is None else acc.alu(op, p)
        out.append(acc)
    return _multi(_stack(out, devs), None, devs)


def reshape_axis(old: tuple, new: tuple, axis: int, n: int) -> int | None:
    """The axis of `new` the shards of `old`'s `axis` become: the same elements before it, and
    a size that n parts divide (each shard stays a contiguous block of the rows after). With a
    symbolic size (any size that is not a plain int) a reshape only adds or drops 1s: the
    sharded axis keeps its place among the others."""
    if any(type(d) is not int for d in (*old, *new)):
        others = [k for k, d in enumerate(new) if not (type(d) is int and d == 1)]
        place = sum(1 for d in old[:axis] if not (type(d) is int and d == 1))
        return others[place] if place < len(others) else None
    before = math.prod(old[:axis])
    acc = 1
    for k, s in enumerate(new):
        if acc == before and s % n == 0 and s >= n:
            return k
        acc *= s
        if acc > before:
            return None
    return None


def moved_axis(op: Ops, arg: tuple, shape: tuple, axis: int, n: int) -> int | None:
    """The axis that the shards (n, along `axis` of a tensor of `shape`) are along after the
    movement op (op, arg): a permute moves it, a reshape may (`reshape_axis`), an expand, or a
    pad, shrink or flip of the other axes, keeps it. None where the op would move data between
    the shards (multi_pm refuses it; runtime/multi.py's layout_of reads the same answer)."""
    if op is Ops.PERMUTE:
        return arg.index(axis)
    if op is Ops.RESHAPE:
        return reshape_axis(shape, arg, axis, n)
    keeps = op is Ops.EXPAND or (op is Ops.PAD and arg[axis] == (0, 0)) or \
        (op is Ops.SHRINK and arg[axis] == (0, shape[axis])) or (op is Ops.FLIP and not arg[axis])
    return axis if keeps else None


def mop_multi(x: UOp, m: UOp) -> UOp:
    (axis, devs), v, n = m.arg, m.src[0], len(m.arg[1])
    if axis is None:  # replicas: every part moves as the whole did
        return _multi(x.replace(src=(v,)), None, devs)
    op, arg = x.op, x.arg
    k = moved_axis(op, arg, m.shape, axis, n)
    if k is None:
        what = "the reshape splits the sharded axis across shards" if op is Ops.RESHAPE else \
            "it would move data between the shards"
        raise InvalidArgument(f"{op.name} {arg} of a tensor of shape {m.shape} sharded along "
                              f"axis {axis}: {what}; copy it to one device first (.to(device))")
    # each part moves as the whole did, but for the sharded axis: a part's own size along it
    if op is Ops.RESHAPE:
        return _multi(v.reshape(arg[:k] + (arg[k] // n,) + arg[k + 1:]), k, devs)
    if op is Ops.EXPAND:
        return _multi(v.expand(arg[:axis] + (v.shape[axis],) + arg[axis + 1:]), axis, devs)
    if op is Ops.SHRINK:
        return _multi(v.shrink(arg[:axis] + ((0, v.shape[axis]),) + arg[axis + 1:]), axis, devs)
    return _multi({Ops.PERMUTE: v.permute, Ops.PAD: v.pad, Ops.FLIP: v.flip}[op](arg), k, devs)


def multi_like(x: UOp, m: UOp) -> UOp:
    return _multi(x.replace(src=(m.src[0],)), *m.arg)


def gather(m: UOp, d: UOp) -> UOp:
    """COPY(sharded, device): the parts copied there and joined along the axis (each part
    where its mask is true, so -0.0 stays -0.0); replicas: the part already there, if any."""
    (axis, devs), v, dev = m.arg, m.src[0], d.arg
    parts = [to_device(_part(v, i), dev) for i in range(len(devs))]
    if axis is None:
        if dev not in devs:
            return parts[0]
        # the part already there is no copy; but an ASSIGN's part (or a view of it: `v = s.T`
        # pointed at the step) is its target's storage, laid out as the target's view (`p =
        # s.T` stepped, s replicated): as a root, its buffer would be read back in p's shape,
        # so it is read through a copy of its own
        part, base = parts[devs.index(dev)], v
        while base.op in GroupOp.Movement:
            base = base.src[0]
        return part.f(Ops.CONTIGUOUS) if base.op is Ops.ASSIGN else part
    size = v.shape[axis]
    pads = [tuple((i * size, (len(devs) - 1 - i) * size) if a == axis else (0, 0)
                  for a in range(len(v.shape))) for i in range(len(devs))]
    out = parts[-1].pad(pads[-1])
    for p, pad in zip(reversed(parts[:-1]), reversed(pads[:-1])):
        mask = UOp.const(dtypes.bool, True).reshape((1,) * len(v.shape)).expand(v.shape)
        out = mask.pad(pad).alu(Ops.WHERE, p.pad(pad), out)
    return out


def assign_multi(a: UOp, t: UOp, v: UOp) -> UOp:
    """ASSIGN(sharded target, value): the assign of each part, with the value's parts laid out
    as the target's (part i is what target part i holds of the whole value)."""
    axis, devs = t.arg
    # (a value sharded over other devices was refused by device_of, as for any op)
    if v.op is not Ops.MULTI or v.arg[0] in (axis, None):
        # the same layout; replicas or constants, cut per device (a tensor on one device is
        # a DeviceMismatch: Tensor.assign shards it first)
        parts = _parts_of(v, axis, devs, Ops.ASSIGN)
    else:  # sharded along another axis: gathered whole on each device, and cut there
        parts = _resharded(v, axis, devs)
    return _multi(a.replace(src=(t.src[0], parts)), axis, devs)


# ---------------------------------------------------------------------- pm_mselect
def select_part(s: UOp, i: int) -> UOp:
    return s.src[i]


_PER_PART = GroupOp.Elementwise | GroupOp.Movement | GroupOp.Meta | {Ops.REDUCE_AXIS,
                                                                      Ops.CONTIGUOUS, Ops.ASSIGN}


def push_mselect(x: UOp, i: int) -> UOp:
    if device_of(x) is None:
        return x  # constants: the same on every device
    if x.op in _PER_PART:
        return x.replace(src=tuple(_part(s, i) for s in x.src))
    raise RuntimeError(f"multi: no rule takes part {i} of {x.op.name}: {x!r}")
