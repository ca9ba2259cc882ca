"""Sharded tensors before scheduling: ops on MULTI become one program per device.

In: tensor roots whose graphs may hold sharded tensors, `MULTI(MSTACK(part per device),
arg=(axis, devices))` (made by `Tensor.shard`). Out (`lower_multi`): roots on single devices
only, one per device for a sharded root, for the scheduler; `regroup` puts the buffers the
schedule gives back together, a `Shards` per sharded root.

Two passes of `rules/multi.rules` (tinygrad's multi_pm, then the seed's MSELECT rules):
- `multi_pm` pushes every op into its MULTI sources, so the ops work on the value that has one
  part per device (a reduction over the sharded axis becomes an all-reduce: each device's
  partial result copied to every device and combined there; a copy of a sharded tensor to one
  device gathers its parts);
- `pm_mselect` takes part i of each sharded root (MSELECT) down to device i's own graph.

A realize runs it under the schedule cache (runtime/realize.py): a graph of a sharded form
seen before gets its per-device schedule and `lowered` back with no rewrite, keyed by the
sharded graph (a warm data-parallel training step lowered its whole graph by the rules at
every call: some 8,000 Python calls). A graph with a bound variable is lowered first, then
unbound (runtime/variable.py), and cached as the per-device programs it becomes.
"""

from __future__ import annotations

from dataclasses import dataclass

from rulegrad.rules import matcher

from .buffer import Buffer
from .device import DEFAULT, device_of, in_use, shard_part, to_device
from .dtype import DType
from .ops import Ops
from .rewrite import graph_rewrite
from .uop import UOp


@dataclass(frozen=True)
class Shards:
    """A realized sharded root: one Buffer per device, joined along `axis` (None: replicas)."""

    axis: int | None
    devices: tuple[str, ...]
    bufs: tuple[Buffer, ...]

    def node(self, dtype: DType, shape: tuple) -> UOp:
        """The tensor node that reads them again: MULTI(MSTACK(BUFFER.reshape(part), ...))."""
        part = shape if self.axis is None else \
            shape[:self.axis] + (shape[self.axis] // len(self.devices),) + shape[self.axis + 1:]
        parts = tuple(UOp(Ops.BUFFER, b.dtype, (), b).reshape(part) for b in self.bufs)
        stack = UOp(Ops.MSTACK, dtype, parts, self.devices)
        return UOp(Ops.MULTI, dtype, (stack,), (self.axis, self.devices))


# per root: ("one", flat index, device) or ("multi", axis, devices, flat indices)
Lowered = list[tuple]


def _multi_pm(uops: list[UOp]) -> list[UOp]:
    sink = graph_rewrite(UOp.sink(*uops), matcher("multi", "multi_pm"), name="multi_pm")
    return list(sink.src)


def layouts(uops: list[UOp]) -> list[tuple[int | None, tuple[str, ...]] | None]:
    """Per root, (axis, devices) when it is sharded, else None (the oracle backend's need)."""
    if not in_use["multi"]:
        return [None] * len(uops)
    return [r.arg if r.op is Ops.MULTI else None for r in _multi_pm(uops)]


UNKNOWN = object()  # layout_of: a layout only multi_pm knows
Layout = tuple  # (axis, devices)
_LAYOUT_MARKERS = frozenset({Ops.CONTIGUOUS, Ops.DETACH, Ops.CONTIGUOUS_BACKWARD, Ops.FUSE})


def layout_of(nodes: list[UOp]) -> list[Layout | None | object]:
    """Each node's layout as `layouts` gives it ((axis, devices); None: not sharded), read off
    the graph without rewriting it: each node's from its sources' by multi_pm's rules
    (rules/multi.rules: an elementwise op takes its first sharded source's axis, a reduction
    over the sharded axis is replicated, a movement moves the axis, a copy to one device
    gathers), in one walk of all of them. UNKNOWN where an op is none of those, or one multi_pm
    refuses (the caller asks `layouts`, which runs the rules: the slow, sure path;
    tests/test_shard_gradients.py compares the two)."""
    from rulegrad.rules.multi_helpers import moved_axis

    from .ops import GroupOp
    from .uop import toposort

    memo: dict[UOp, Layout | None | object] = {}
    for n in toposort(UOp.sink(*nodes)):
        srcs = [memo[s] for s in n.src]
        sharded = [s for s in srcs if s is not None]
        out: Layout | None | object = UNKNOWN
        if UNKNOWN in srcs:
            pass
        elif n.op is Ops.MULTI:
            out = n.arg
        elif not sharded or n.op is Ops.COPY:  # (a copy of a sharded value gathers it)
            out = None
        elif n.op in GroupOp.Elementwise:
            out = (next((s[0] for s in sharded if s[0] is not None), None), sharded[0][1])
        elif n.op in _LAYOUT_MARKERS:
            out = srcs[0]
        elif n.op is Ops.REDUCE_AXIS and srcs[0] is not None:
            axis, devs = srcs[0]  # type: ignore[misc]
            out = (None if axis in n.arg[1] else axis, devs)
        elif n.op in GroupOp.Movement and srcs[0] is not None:
            axis, devs = srcs[0]  # type: ignore[misc]
            k = axis if axis is None else moved_axis(n.op, n.arg, n.src[0].shape, axis, len(devs))
            if axis is None or k is not None:
                out = (k, devs)
        memo[n] = out
    return [memo[n] for n in nodes]


def relayout(u: UOp, axis: int | None, devs: tuple[str, ...]) -> UOp:
    """A node of u's value laid out along `axis` over `devs` (None: a replica on each), whatever
    u's own layout: device i's part is what u holds of it there (a replica cut, no copy), or u
    gathered onto device i and cut there (sharded along another axis or over other devices), or
    u's part copied there (u on one device: only the part moves). The gradient of a sharded
    tensor keeps its layout (torch's and tinygrad's .grad keep the leaf's)."""
    n, parts = len(devs), []
    for i, dev in enumerate(devs):
        if isinstance(device_of(u), tuple):
            part = shard_part(to_device(u, dev), axis, i, n)  # (rules/multi.rules gathers it)
        else:
            part = shard_part(u, axis, i, n)
            part = part if device_of(part) is None else to_device(part, dev)
        parts.append(part)
    return UOp(Ops.MULTI, u.dtype, (UOp(Ops.MSTACK, u.dtype, tuple(parts), devs),), (axis, devs))


def lower_multi(uops: list[UOp]) -> tuple[list[UOp], Lowered]:
    """The roots as single-device roots (a sharded one as one root per device)."""
    if not in_use["multi"]:
        return uops, [("one", i, None) for i in range(len(uops))]
    flat: list[UOp] = []
    lowered: Lowered = []
    for r in _multi_pm(uops):
        if r.op is Ops.MULTI:
            axis, devs = r.arg
            idx = tuple(range(len(flat), len(flat) + len(devs)))
            flat += [UOp(Ops.MSELECT, r.dtype, (r.src[0],), i) for i in range(len(devs))]
            lowered.append(("multi", axis, devs, idx))
        else:
            lowered.append(("one", len(flat), device_of(r)))
            flat.append(r)
    sink = graph_rewrite(UOp.sink(*flat), matcher("multi", "pm_mselect"), name="pm_mselect")
    return list(sink.src), lowered


def _on(buf: Buffer, device: str | None) -> Buffer:
    """A root made of constants only is computed on the default device: its copy on the device
    it was asked for (the only case where the schedule's buffer is on another device)."""
    device = device or DEFAULT
    if buf.device == device:
        return buf
    return Buffer(buf.size, buf.dtype, buf.ensure().copy(), device=device)


def regroup(bufs: list[Buffer], lowered: Lowered) -> list[Buffer | Shards]:
    """The schedule's buffers (one per flat root) back as one Buffer or Shards per root."""
    out: list[Buffer | Shards] = []
    for entry in lowered:
        if entry[0] == "one":
            out.append(bufs[entry[1]] if entry[2] is None else _on(bufs[entry[1]], entry[2]))
        else:
            _, axis, devs, idx = entry
            out.append(Shards(axis, devs, tuple(_on(bufs[i], d) for i, d in zip(idx, devs))))
    return out
