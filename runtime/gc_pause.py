"""The cyclic garbage collector, paused while the compiler works on a graph.

In: a phase that allocates a node, tuple or statement per graph node and keeps them alive
(scheduling, lowering, rendering a kernel). Out: the same phase without the collector's
passes over the whole heap, which on a 1M-node graph run again and again and cost as much as
the work itself. Nothing these phases build is cyclic (nodes are an acyclic, reference-counted
DAG), so nothing is lost: whatever cyclic garbage a phase leaves is collected after it.

Nested and concurrent pauses are counted: the collector is back on when the last one ends,
and only if it was on when the first one began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
