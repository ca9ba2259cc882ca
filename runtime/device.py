"""Devices: virtual CPU devices ("CPU", "CPU:1", ...), and the device each tensor node lives on.

In: device names from the user, tensor-level UOps. Out: canonical names, and per node its
device: a name, a tuple of names (a sharded or stacked value, one part per device), or None (a
value made of constants only, which can be computed anywhere).

Every virtual device is the host's memory, but a Buffer belongs to one device and a kernel reads
and writes the buffers of one device; only a COPY kernel reads another device's buffer. So the
device of a node is derived from the graph:

- BUFFER: its Buffer's device; COPY(x, DEVICE): the DEVICE's name;
- MULTI (a sharded value): its arg's devices; MSTACK: its arg (one device per source);
  MSELECT(x, i): part i of x's devices;
- constants and variables: None;
- ASSIGN(target, value): the target's device (an assign writes its target in place and never
  moves it; a realized constant's buffer has none, so it stays readable on every device),
  once its sources agree;
- any other node: the one device its sources agree on. Sources on different devices are an
  error (`DeviceMismatch`) that says to copy (`.to`) or shard one of them: no op moves data
  between devices implicitly.
"""

from __future__ import annotations

import re

from .device_use import in_use  # noqa: F401  (re-exported: whether another device is in use)
from .errors import InvalidArgument
from .ops import Ops
from .uop import UNSET, UOp, fill_facts

DEFAULT = "CPU"
Device = str | tuple[str, ...] | None

_NAME = re.compile(r"^CPU(?::(\d+))?$")




class DeviceMismatch(InvalidArgument):
    """An op over tensors on different devices (copy or shard one of them first)."""


def canonical(device: object) -> str:
    """"cpu", "CPU", "CPU:0" -> "CPU"; "CPU:3" -> "CPU:3"; anything else is an error."""
    if not isinstance(device, str) or (m := _NAME.match(device.strip().upper())) is None:
        raise InvalidArgument(f"unknown device {device!r}: the devices are virtual CPUs, "
                              "\"CPU\" (= \"CPU:0\"), \"CPU:1\", \"CPU:2\", ...")
    n = int(m.group(1) or 0)
    return DEFAULT if n == 0 else f"CPU:{n}"


def canonical_devices(devices: object) -> tuple[str, ...]:
    """A tuple of distinct canonical device names (at least one)."""
    if isinstance(devices, str) or not isinstance(devices, (tuple, list)) or not devices:
        raise InvalidArgument(f"shard needs a tuple of devices, got {devices!r}")
    out = tuple(canonical(d) for d in devices)
    if len(set(out)) != len(out):
        raise InvalidArgument(f"shard devices {devices!r} repeat a device")
    return out


def describe(device: Device) -> str:
    if isinstance(device, tuple):
        return "(" + ", ".join(describe(d) for d in device) + ")"
    return str(device)


# a node's device is computed once (nodes are immutable) and cached on the node (its `_device`)
# (a KERNEL reads and writes buffers of its own device, or two for a copy: the ASSIGN of its
# output is on its target's device)
_NO_DEVICE = frozenset({Ops.CONST, Ops.DEFINE_VAR, Ops.BIND, Ops.DEVICE, Ops.RANGE, Ops.UNIQUE,
                        Ops.KERNEL})
# (module globals: on Python 3.11 reading Ops.X off the Enum class costs a Python-level hook)
_BUFFER, _COPY, _MULTI, _MSTACK, _MSELECT = Ops.BUFFER, Ops.COPY, Ops.MULTI, Ops.MSTACK, Ops.MSELECT
_ASSIGN = Ops.ASSIGN


def device_of(node: UOp) -> Device:
    """The device `node` lives on (see the module docstring); DeviceMismatch on a conflict."""
    found = node._device
    if found is not UNSET:
        return found
    for s in node.src:
        if s._device is UNSET:  # a source not known yet: derive them all, sources first
            return fill_facts(node, "_device", _derive)
    found = node._device = _derive(node)  # the common case: a new node over known ones
    return found


def _derive(n: UOp) -> Device:
    op = n.op
    if op is _BUFFER:
        return n.arg.device
    if op in _NO_DEVICE:
        return None
    if op is _COPY:
        return n.src[1].arg
    if op is _MULTI:
        return n.arg[1]
    if op is _MSTACK:
        return n.arg
    if op is _MSELECT:
        parts = n.src[0]._device
        return parts[n.arg] if isinstance(parts, tuple) else parts
    found = _agreed(n)
    # an assign's result is its target (in place, never moved): a value on CPU:1 written into a
    # realized constant (no device) leaves it with none, where the common device said CPU:1
    # and the schedule then copied the target's buffer to a new one there (views of the old one
    # no longer saw later assigns, and `device` changed once other devices were in use)
    return n.src[0]._device if op is _ASSIGN else found


def _agreed(n: UOp) -> Device:
    """The one device n's sources are on (None: constants only); DeviceMismatch if two differ."""
    op = n.op
    found: Device = None
    for s in n.src:
        d = s._device
        if d is None or d == found:
            continue
        if found is not None:
            raise DeviceMismatch(f"{op.name} of tensors on different devices {describe(found)} "
                                 f"and {describe(d)}: copy one with .to(device) (or shard it "
                                 "with .shard(devices, axis)) first")
        found = d
    return found


# the two builders every layer that moves or splits a value uses (the tensor's .to and .shard,
# the multi rules, gradients, assign's graphs): one place that says what a copy and a shard are
def to_device(node: UOp, dev: str) -> UOp:
    """node on device `dev`: itself when it lives there, else COPY(node, DEVICE(dev)) (a copy
    of a sharded value gathers it there: rules/multi.rules)."""
    if device_of(node) == dev:
        return node
    return UOp(Ops.COPY, node.dtype, (node, UOp(Ops.DEVICE, arg=dev)))


def shard_part(node: UOp, axis: int | None, i: int, n: int) -> UOp:
    """Part i of n equal parts of node along `axis` (None: all of it, a replica's part)."""
    if axis is None:
        return node
    size = node.shape[axis] // n
    return node.shrink(tuple((i * size, (i + 1) * size) if a == axis else (0, s)
                             for a, s in enumerate(node.shape)))
