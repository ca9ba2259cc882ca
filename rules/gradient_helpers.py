"""Helpers of `rules/gradient.rules`: the argument arithmetic of movement and reduce gradients.

Each takes the upstream gradient (`ctx` in the rules) and the forward node, and returns the
gradient of the node's source as a UOp (tensor level, the source's shape)."""

from __future__ import annotations

from rulegrad.runtime.device import device_of
from rulegrad.runtime.errors import InvalidArgument
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


def argsort(order: tuple[int, ...]) -> tuple[int, ...]:
    """The inverse permutation: PERMUTE(PERMUTE(x, p), argsort(p)) is x."""
    return tuple(sorted(range(len(order)), key=order.__getitem__))


def unpad(pad: UOp) -> tuple[tuple[int, int], ...]:
    """The SHRINK bounds that cut a PAD's padding off again."""
    return tuple((b, b + s) for (b, _), s in zip(pad.arg, pad.src[0].shape))


def unshrink(shrink: UOp) -> tuple[tuple[int, int], ...]:
    """The PAD that puts a SHRINK's window back at its place, zeros elsewhere."""
    return tuple((b, s - e) for (b, e), s in zip(shrink.arg, shrink.src[0].shape))


def sum_to(grad: UOp, shape: tuple[int, ...]) -> UOp:
    """EXPAND's gradient: the sum over the broadcast axes (kept as size 1, so shapes match)."""
    axes = tuple(i for i, (a, b) in enumerate(zip(shape, grad.shape)) if a != b)
    return UOp(Ops.REDUCE_AXIS, grad.dtype, (grad,), (Ops.ADD, axes)) if axes else grad


def reduce_grad(grad: UOp, red: UOp) -> UOp:
    """REDUCE_AXIS's gradient (reduced axes keep size 1, so an EXPAND broadcasts back).

    ADD: every input gets the output's gradient. MAX/MIN: the inputs equal to the result share
    it equally (ties split, as tinygrad). MUL: grad * prod / x where x != 0; where x == 0, the
    product of the others (when x is the only zero), else 0 (tinygrad's and torch's)."""
    x = red.src[0]
    op = red.arg[0]
    back = grad.expand(x.shape)
    if op is Ops.ADD:
        return back
    if op in (Ops.MAX, Ops.MIN):
        hit = x.eq(red.expand(x.shape)).cast(grad.dtype)
        count = UOp(Ops.REDUCE_AXIS, grad.dtype, (hit,), (Ops.ADD, red.arg[1]))
        return hit * back / count.expand(x.shape)
    is_zero = x.eq(0)
    safe_x = is_zero.where(x.const_like(1), x)
    zeros = UOp(Ops.REDUCE_AXIS, grad.dtype, (is_zero.cast(grad.dtype),), (Ops.ADD, red.arg[1]))
    others = UOp(Ops.REDUCE_AXIS, x.dtype, (safe_x,), (Ops.MUL, red.arg[1]))
    at_zero = zeros.eq(1).where(others, others.const_like(0)).expand(x.shape)
    return back * is_zero.where(at_zero, red.expand(x.shape) / safe_x)


def no_gradient(node: UOp) -> tuple[None, ...]:
    """One None per source: a node through which no gradient flows (an int or bool result)."""
    return (None,) * len(node.src)


def copy_back(grad: UOp, src: UOp) -> UOp:
    """COPY's gradient: the gradient moved back to the source's device (torch's `.to`). A
    source of constants has no device: the gradient stays where it is. A sharded source
    gathered whole has no single device to copy back to: refused, saying so."""
    dev = device_of(src)
    if dev is None:
        return grad
    if isinstance(dev, tuple):
        raise InvalidArgument(f"the gradient of a sharded tensor copied whole to one device "
                              f"(.to) is not supported: take it before the copy, on the "
                              f"shards over {', '.join(dev)}")
    return UOp(Ops.COPY, grad.dtype, (grad, UOp(Ops.DEVICE, arg=dev)))
