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

import math

from .dtype import dtypes
from .limits import check_shape, max_work
from .ops import GroupOp, Ops
from .uop import UOp

# A scan whose window (n values for each of n outputs) is past the work limit (limits.py: a
# window tensor of n^2 elements) runs in blocks of this many elements (tinygrad's SPLIT in
# `_split_cumalu`): a block's window is its length; 256 keeps that small and the levels few
# (3 up to 2^24 elements). Not a speed constant: it bounds the work. (A window the optimizer
# runs as one accumulator, opt.rules' scan_store, costs n either way.)
SCAN_BLOCK = 256


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


def long_running(x: UOp, op: Ops) -> UOp:
    """The inclusive running sum (ADD) or max (MAX, of an int x >= 0) of x (..., n) along its
    last axis at any length: a row whose windows pass the work limit (n^2 each) is scanned in
    blocks of SCAN_BLOCK, each block's own running op from the running op of the blocks before
    it (the same problem, n / SCAN_BLOCK long). The blocks' zero padding is either op's identity
    here. A float sum is in an order of its own, within the reduction contract."""
    *lead, n = x.shape
    scan = running_sum if op is Ops.ADD else running_max
    if n < 2 or math.prod(lead) * (n + 1) * (2 * n - 1) <= max_work():
        return scan(x) if n >= 2 else x
    keep, nb = tuple((0, s) for s in lead), -(-n // SCAN_BLOCK)
    blocks = x.pad((*((0, 0),) * len(lead), (0, nb * SCAN_BLOCK - n)))
    within = scan(blocks.reshape((*lead, nb, SCAN_BLOCK))).f(Ops.CONTIGUOUS)
    last = within.shrink((*keep, (0, nb), (SCAN_BLOCK - 1, SCAN_BLOCK))).reshape((*lead, nb))
    # the blocks before each block: the scan of the last values, stored (fused into its
    # shifted read, its window ran once per block), shifted one block on
    before = long_running(last, op).f(Ops.CONTIGUOUS).pad((*((0, 0),) * len(lead), (1, 0)))
    before = before.shrink((*keep, (0, nb))).reshape((*lead, nb, 1))
    out = within.alu(op, before.expand(within.shape))
    return out.reshape((*lead, nb * SCAN_BLOCK)).shrink((*keep, (0, n)))


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
