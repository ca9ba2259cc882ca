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
"""

from __future__ import annotations

import gc
import threading

from . import uop as _uop

PAUSE_MIN_NODES = 20_000

_lock = threading.Lock()
_depth = 0
_was_enabled = False


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
