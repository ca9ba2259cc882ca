"""Equal-shaped parts side by side along a new last axis, and the parts read back from it.

In: K UOps of one shape (the strided views of a pooled axis, one per window offset). Out: one
UOp of shape (*shape, K) whose element [..., j] is part j's, built so that `stacked_parts`
recovers the parts. `Tensor._window_max` stacks a pooled axis's views under a reduce max and
rules/gradient.rules' `grad_pool_stack` reads them back to route the gradient: each part's
gradient is a pad of its view (no repeat trick to sum over).

The stack is a chain of selects, not a sum of padded parts: no arithmetic touches a value
(exact for every dtype; `x + 0.0` would turn -0.0 into +0.0), and once a reduce over the new
axis is unrolled, every select's condition is a constant and each position reads one part.
"""

from __future__ import annotations

from collections.abc import Sequence

from .dtype import dtypes
from .ops import Ops
from .uop import UOp


def _placed(part: UOp, j: int, k: int) -> UOp:
    """`part` at place j of a new last axis of k places (the others: the pad's zero)."""
    shape = tuple(part.shape)
    return part.reshape(shape + (1,)).pad(((0, 0),) * len(shape) + ((j, k - 1 - j),))


def window_stack(parts: Sequence[UOp]) -> UOp:
    """Two or more parts along a new last axis: WHERE(at 0, part 0, WHERE(at 1, part 1, ...
    part K-1))."""
    k, shape = len(parts), tuple(parts[0].shape)
    out = _placed(parts[-1], k - 1, k)
    # the flag True at place j: one expanded True, padded per place (built once: the graph of
    # a small pool's forward is built on every call, and it is most of that call's time)
    at = UOp.const(dtypes.bool, True).reshape((1,) * (len(shape) + 1)).expand(shape + (1,))
    for j in range(k - 2, -1, -1):
        flag = at.pad(((0, 0),) * len(shape) + ((j, k - 1 - j),))
        out = flag.where(_placed(parts[j], j, k), out)
    return out


def _unplaced(node: UOp, j: int, k: int) -> UOp | None:
    """The part that `_placed(part, j, k)` put in `node`, or None when node is not one. Any
    movement under the pad will do (the scheduler merges and reorders the reshapes)."""
    if node.op is not Ops.PAD or node.arg[-1] != (j, k - 1 - j) or \
            any(p != (0, 0) for p in node.arg[:-1]) or node.src[0].shape[-1] != 1:
        return None
    return node.src[0].reshape(node.src[0].shape[:-1])


def _all_true(x: UOp) -> bool:
    """x is the constant True moved (no pad: a pad would put False in)."""
    while x.op in (Ops.RESHAPE, Ops.EXPAND, Ops.PERMUTE, Ops.SHRINK, Ops.FLIP):
        x = x.src[0]
    return x.op is Ops.CONST and x.dtype is dtypes.bool and x.arg is True


def stacked_parts(x: UOp) -> list[UOp] | None:
    """The parts of `x = window_stack(parts)`, or None when x was not built by it."""
    if not x.shape or x.shape[-1] < 2:  # (one part is no stack: `window_stack` of two or more)
        return None
    k, parts, node = x.shape[-1], [], x
    for j in range(k - 1):
        if node.op is not Ops.WHERE:
            return None
        at, here, node = node.src
        part = _unplaced(here, j, k)
        flag = _unplaced(at, j, k)
        if part is None or flag is None or not _all_true(flag):
            return None
        parts.append(part)
    last = _unplaced(node, k - 1, k)
    return None if last is None else parts + [last]


def parts_max(x: UOp) -> UOp | None:
    """The max over the last axis of `x = window_stack(parts)` as the elementwise max of its
    parts, left to right as a reduce max takes them (None: x was not built by window_stack)."""
    parts = stacked_parts(x)
    if parts is None:
        return None
    out = parts[0]
    for part in parts[1:]:
        out = out.alu(Ops.MAX, part)
    return out
