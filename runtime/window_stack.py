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
    """The parts along a new last axis: WHERE(at 0, part 0, WHERE(at 1, part 1, ... part K-1))."""
    k = len(parts)
    out = _placed(parts[-1], k - 1, k)
    for j in range(k - 2, -1, -1):
        at = UOp.const(dtypes.bool, True).reshape((1,) * parts[j].ndim).expand(parts[j].shape)
        out = _placed(at, j, k).where(_placed(parts[j], j, k), out)
    return out


def _unplaced(node: UOp, j: int, k: int) -> UOp | None:
    """The part that `_placed(part, j, k)` put in `node`, or None when node is not one."""
    if k == 1:  # (a pad by nothing is the node itself)
        return node.src[0] if node.op is Ops.RESHAPE and node.shape[-1:] == (1,) else None
    if node.op is not Ops.PAD or node.arg[-1] != (j, k - 1 - j) or \
            any(p != (0, 0) for p in node.arg[:-1]) or node.src[0].op is not Ops.RESHAPE:
        return None
    part = node.src[0].src[0]
    return part if tuple(part.shape) + (1,) == tuple(node.src[0].shape) else None


def stacked_parts(x: UOp) -> list[UOp] | None:
    """The parts of `x = window_stack(parts)`, or None when x was not built by it."""
    if not x.shape:
        return None
    k, parts, node = x.shape[-1], [], x
    for j in range(k - 1):
        if node.op is not Ops.WHERE:
            return None
        at, here, node = node.src
        part = _unplaced(here, j, k)
        flag = _unplaced(at, j, k)
        if part is None or flag is None or flag.base.op is not Ops.CONST or \
                flag.base.arg is not True or flag.dtype is not dtypes.bool:
            return None
        parts.append(part)
    last = _unplaced(node, k - 1, k)
    return None if last is None else parts + [last]
