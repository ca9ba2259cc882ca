"""The cyclic garbage collector, paused while the compiler works on a large graph.

In: a phase that allocates a node, tuple or statement per graph node and keeps them alive
(scheduling, lowering, rendering a kernel). Out: the same phase without the collector's
passes over the whole heap, which on a 1M-node graph run again and again and cost as much as
the work itself. Nothing these phases build is cyclic (nodes are an acyclic, reference-counted
DAG), so nothing is lost: whatever cyclic garbage a phase leaves is collected after it.

The pause is process-wide (other threads' garbage waits too), so it is taken only when it can
pay: while the process holds more than `PAUSE_MIN_NODES` live nodes (the hash-consing table's
size, read in constant time; no graph a phase works on is larger). A small program's realize
leaves the collector alone and pays one comparison.

Nested and concurrent pauses are counted: the collector is back on when the last one ends,
and only if it was on when the first one began.

Building a large graph (a 1.25M-op chain through the Tensor API) is the user's own loop, which
no pause can wrap: there the collector's full passes each walk every node built so far (a
quarter of the build). So while a graph is being built (the process holds more than
`PAUSE_MIN_NODES` live nodes, `FREEZE_MIN_GROWTH` more than at the end of the last full
collection), what survives a full collection is frozen (`gc.freeze`): the next ones walk only
what was built since. Freezing changes no lifetime in an acyclic graph (reference counts free
its nodes, frozen or not); only cyclic garbage among the frozen objects waits, until the first
full collection that starts when no graph has grown since the last one (a graph built and kept
holds nothing back): it unfreezes them first, and so walks and frees as if nothing had been
frozen. A process that froze objects itself (`gc.freeze()` before a fork) is left alone.
"""

from __future__ import annotations

import gc
import threading

from . import uop as _uop

PAUSE_MIN_NODES = 20_000

_lock = threading.Lock()
_depth = 0
_was_enabled = False
_froze = False  # the permanent generation holds what we froze (and nothing of anyone else's)
# a graph being built: this many nodes more than at the end of the last full collection (one
# comes every ~15,000 nodes of a chain built through the Tensor API)
FREEZE_MIN_GROWTH = 5_000
_last_nodes = 0  # live nodes at the end of the last full collection


class gc_paused:  # noqa: N801 - used as `with gc_paused():`, like the function it replaced
    """`with gc_paused():` runs its body with the collector off, if the process's graphs are
    large enough for it to matter."""

    __slots__ = ("paused",)

    def __init__(self, force: bool = False):
        self.paused = force or len(_uop._cache) > PAUSE_MIN_NODES

    def __enter__(self) -> None:
        global _depth, _was_enabled
        if self.paused:
            with _lock:
                if _depth == 0:
                    _was_enabled = gc.isenabled()
                    gc.disable()
                _depth += 1

    def __exit__(self, *exc: object) -> None:
        global _depth
        if self.paused:
            with _lock:
                _depth -= 1
                if _depth == 0 and _was_enabled:
                    gc.enable()


def _on_collection(phase: str, info: dict) -> None:
    """gc.callbacks: freeze what a full collection leaves while a large graph is being built,
    and give it back to the collector at the start of the first one after (see above)."""
    global _froze, _last_nodes
    if info["generation"] != 2:
        return
    nodes = len(_uop._cache)
    building = nodes > PAUSE_MIN_NODES and nodes - _last_nodes >= FREEZE_MIN_GROWTH
    if phase == "start":
        if _froze and not building:
            gc.unfreeze()  # this collection walks them all, and frees any cycle among them
            _froze = False
        return
    _last_nodes = nodes
    # (get_freeze_count walks the frozen objects: asked only before our first freeze)
    if building and (_froze or gc.get_freeze_count() == 0):
        gc.freeze()
        _froze = True


gc.callbacks.append(_on_collection)
