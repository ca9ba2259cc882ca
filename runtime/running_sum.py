"""A running sum (cumsum) or running product (cumprod) along the last axis as UOps, and the
input it was built from (and an int's running max, for cummax's gradient).

In: x of shape (..., n), n >= 2. Out: its inclusive running sum or product, each prefix a window
of x padded with n - 1 of the op's identity before, reduced (`Tensor._pool`'s repeat trick, k = n,
stride 1): one kernel, which opt.rules' scan action runs as one accumulator (n steps, in the
window's order).

The gradient of the windows' reduce, through the pool's movement ops, sums every repeat of the
input: n^2 work per row. A running sum's gradient is the reverse running sum of the incoming one
(torch's), n steps; a running product's is a few running sums and products (torch's
cumprod_backward, exact through zeros: rules/gradient_helpers.py's `scan_prod_grad`). So the
windows and the input are marked CONTIGUOUS_BACKWARD, and rules/gradient.rules' grad_scan_sum
and grad_scan_prod hand the input's marker that gradient at once (`running_input` finds it,
checking that the reduce is this module's, rebuilt node for node).
"""

from __future__ import annotations

from .dtype import dtypes
from .limits import check_shape
from .ops import GroupOp, Ops
from .uop import UOp


def _windows(x: UOp, op: Ops) -> UOp:
    """(..., n) -> (..., n, n), [..., i, j] = x padded with n - 1 of op's identity (0 for ADD,
    1 for MUL) before, at i + j."""
    *lead, n = x.shape
    keep, length = [(0, s) for s in lead], 2 * n - 1
    before = ((0, 0),) * len(lead) + ((n - 1, 0),)
    padded = x.pad(before)
    if op in (Ops.MUL, Ops.MAX):  # (PAD fills zeros: the identity where a padded mask of ones
        # is false, as Tensor.pad: 1, or an int's least value)
        inside = UOp.const(dtypes.bool, True).reshape((1,) * x.ndim).expand(x.shape).pad(before)
        padded = inside.where(padded, padded.const_like(1 if op is Ops.MUL else x.dtype.min))
    repeats = -(-n * 2 * n // length)  # rows of 2n read over a tile of rows of 2n - 1
    # (the work limit, as a tensor of the tile's shape is refused: its kernel loops n^2 times
    # unless the scan action runs it; runtime/limits.py)
    check_shape((*lead, repeats, length), x.dtype, "a running scan's windows")
    tiled = padded.reshape((*lead, 1, length)).expand((*lead, repeats, length))
    tiled = tiled.reshape((*lead, repeats * length)).shrink((*keep, (0, 2 * n * n)))
    rows = tiled.reshape((*lead, n, 2 * n)).shrink((*keep, (0, n), (0, n)))  # [j, i]
    m = len(lead)
    return rows.permute((*range(m), m + 1, m))


def _reduced(x: UOp, op: Ops) -> UOp:
    """The running scan's reduce over the marked windows of marked x: shape (..., n, 1)."""
    windows = _windows(x.f(Ops.CONTIGUOUS_BACKWARD), op).f(Ops.CONTIGUOUS_BACKWARD)
    return UOp(Ops.REDUCE_AXIS, x.dtype, (windows,), (op, (x.ndim,)))


def running_sum(x: UOp) -> UOp:
    """The inclusive running sum of x (..., n), n >= 2, along its last axis."""
    return _reduced(x, Ops.ADD).reshape(x.shape)


def running_product(x: UOp) -> UOp:
    """The inclusive running product of x (..., n), n >= 2, along its last axis."""
    return _reduced(x, Ops.MUL).reshape(x.shape)


def running_max(x: UOp) -> UOp:
    """The inclusive running max of an int x (..., n), n >= 2, along its last axis (no gradient
    flows into an int: its marks only keep the windows' one shape)."""
    return _reduced(x, Ops.MAX).reshape(x.shape)


def reverse_running_sum(g: UOp) -> UOp:
    """out[..., k] = g[..., k] + ... + g[..., n - 1], summed from the end (torch's cumsum
    backward, a flipped running sum)."""
    last = (False,) * (g.ndim - 1) + (True,)
    return running_sum(g.flip(last)).flip(last)


def running_input(red: UOp) -> UOp | None:
    """The marked input CONTIGUOUS_BACKWARD(x) of a reduce that `running_sum(x)` or
    `running_product(x)` built; None for any other reduce."""
    node = red.src[0]
    if node.op is not Ops.CONTIGUOUS_BACKWARD or red.arg[0] not in (Ops.ADD, Ops.MUL):
        return None
    node = node.src[0]
    while node.op in GroupOp.Movement or node.op is Ops.WHERE:
        node = node.src[0] if node.op is not Ops.WHERE else node.src[1]
    if node.op is not Ops.CONTIGUOUS_BACKWARD or node.ndim < 1 or node.shape[-1] < 2:
        return None
    return node if _reduced(node.src[0], red.arg[0]) is red else None
