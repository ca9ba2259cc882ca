"""Whether a value on a device other than the default, or a sharded one, is alive now.

In: the births of the objects that put a value on a device (a MULTI, MSTACK or MSELECT node,
a sharded value's; a DEVICE node, a copy's destination; a Buffer on a device other than "CPU"),
told by runtime/uop.py and runtime/buffer.py. Out: `in_use`, two flags read without a call by
the layers that check or lower devices (runtime/device.py re-exports it):

- "multi": a sharded value's node is alive, so a realize lowers MULTI (runtime/multi.py);
- "devices": that, or a node or buffer on another device is alive, so ops check that their
  sources agree on a device (runtime/tensor.py).

Every node on a device other than the default has one of those objects in its graph (a
BUFFER's device is its Buffer's, a COPY's its DEVICE's, a sharded value's its MULTI's), and a
node holds its graph alive. So once the last of them dies, no graph can need the checks, and
they cost nothing again: before, a process that sharded one tensor once paid some 400 Python
calls per training step for good. Each object is counted by a weak reference whose callback
counts it out; the objects of a one-device program are never counted (no call at all).
"""

from __future__ import annotations

import functools
import weakref

in_use = {"devices": False, "multi": False}
_live = {"multi": 0, "placed": 0}
# the weak references themselves (a reference that dies first never calls back)
_refs: set[weakref.ref] = set()


def _flags() -> None:
    multi = _live["multi"] > 0
    in_use["multi"] = multi
    in_use["devices"] = multi or _live["placed"] > 0


def _gone(kind: str, ref: weakref.ref) -> None:
    _refs.discard(ref)
    _live[kind] -= 1
    _flags()


def _born(kind: str, obj: object) -> None:
    _refs.add(weakref.ref(obj, functools.partial(_gone, kind)))
    _live[kind] += 1
    _flags()


def born_multi(obj: object) -> None:
    """`obj` (a sharded value's node) is alive until it dies."""
    _born("multi", obj)


def born_placed(obj: object) -> None:
    """`obj` (a DEVICE node, a Buffer on a device other than the default) is alive until it
    dies."""
    _born("placed", obj)
