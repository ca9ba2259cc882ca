"""The graph of a pooling op, built once per (input shape, dtype, window arguments) and re-read
over each input.

In: a key (the input's shape and dtype and the op's normalized arguments), the input's node, and
a function that builds the op's graph over a given Tensor. Out: the graph over the input.

A pool is a dozen movement ops (pad, shrinks, reshapes, a permute, or a stack of strided views
per axis), each a Tensor op that checks its arguments: for a small max_pool2d (1x16x32x32) that
Python work was most of the call, against a kernel of a few microseconds. The graph depends on
the input only through its shape and dtype, so it is built once over a stand-in (a buffer node
of that shape that nothing else reads) and, per call, the stand-in is substituted by the input.
Nodes are hash-consed, so the result is the very graph the ops would have built: the same
kernels, the same gradient.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from .buffer import Buffer
from .dtype import DType
from .ops import Ops
from .uop import UOp, substitute

# graphs kept, least recently used dropped first: the distinct pools of a program (a network has
# a few), each a few dozen nodes; not a size of any workload
KEPT = 64

_graphs: dict[Hashable, tuple[UOp, UOp]] = {}


def stand_in(shape: tuple[int, ...], dtype: DType) -> UOp:
    """A node of `shape` and `dtype` read by no program: an unallocated buffer, reshaped."""
    size = 1
    for s in shape:
        size *= s
    return UOp(Ops.BUFFER, dtype, (), Buffer(size, dtype)).reshape(shape)


def reused(key: Hashable, shape: tuple[int, ...], dtype: DType, x: UOp,
           build: Callable[[UOp], UOp]) -> UOp:
    """build(x), from the graph `build` gave over a stand-in of x's shape and dtype under
    `key` (built now when none is kept)."""
    kept = _graphs.pop(key, None)
    if kept is None:
        arg = stand_in(shape, dtype)
        kept = (arg, build(arg))
        while len(_graphs) >= KEPT:
            del _graphs[next(iter(_graphs))]
    _graphs[key] = kept  # (last: the most recently used)
    return substitute(kept[1], {kept[0]: x})


def kept() -> int:
    """How many graphs are kept (at most KEPT)."""
    return len(_graphs)
