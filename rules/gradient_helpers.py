"""Helpers of `rules/gradient.rules`: the argument arithmetic of movement and reduce gradients.

Each takes the upstream gradient (`ctx` in the rules) and the forward node, and returns the
gradient of the node's source as a UOp (tensor level, the source's shape)."""

from __future__ import annotations

import math

from rulegrad.runtime.device import device_of, shard_part, to_device
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import LIBM_CALLS, Ops
from rulegrad.runtime.running_max import running_max_grad, running_parts  # noqa: F401 (rules)
from rulegrad.runtime.running_sum import (
    reverse_running_sum,
    running_input,
    running_product,
    running_sum,
)
from rulegrad.runtime.uop import UOp, toposort
from rulegrad.runtime.window_stack import stacked_parts, window_stack


def argsort(order: tuple[int, ...]) -> tuple[int, ...]:
    """The inverse permutation: PERMUTE(PERMUTE(x, p), argsort(p)) is x."""
    return tuple(sorted(range(len(order)), key=order.__getitem__))


def unpad(pad: UOp) -> tuple[tuple[int, int], ...]:
    """The SHRINK bounds that cut a PAD's padding off again (a symbolic size s padded by
    nothing before ends at s itself: 0 + s made a size that is not s's, and the gradient's
    shape check refused a symbolic strided slice's `s[:n, ::2]`)."""
    return tuple((b, s if isinstance(b, int) and b == 0 else b + s)
                 for (b, _), s in zip(pad.arg, pad.src[0].shape))


def unshrink(shrink: UOp) -> tuple[tuple[int, int], ...]:
    """The PAD that puts a SHRINK's window back at its place, zeros elsewhere."""
    return tuple((b, 0 if e is s else s - e) for (b, e), s in zip(shrink.arg, shrink.src[0].shape))


def sum_to(grad: UOp, shape: tuple[int, ...]) -> UOp:
    """EXPAND's gradient: the sum over the broadcast axes (kept as size 1, so shapes match)."""
    axes = tuple([i for i, (a, b) in enumerate(zip(shape, grad.shape)) if a != b])
    return UOp(Ops.REDUCE_AXIS, grad.dtype, (grad,), (Ops.ADD, axes)) if axes else grad


def _computed_once(red: UOp) -> UOp:
    """A max or min reduce whose source holds a float sum or product (a matmul, a conv) as the
    same reduce over that source stored once. Its gradient compares the source with the max
    for equality; each kernel that recomputed the source would be free to order the sum its
    own way (the reduction contract: a packed product's FMAs, a vector reduce's partial sums),
    so the equality could miss every element (`(x @ w).max(0)`'s gradient was 0 where the
    backward's flash kernel recomputed the product). So with a libm call: libmvec's lanes and
    libm's remainder loop are ulps apart (`x.exp().max(1)`'s gradient was NaN, 0 / 0 hits).
    Stored, both sides read the same bits."""
    x = red.src[0]
    stopped = (Ops.BUFFER, Ops.CONTIGUOUS)
    if not any(n.op in LIBM_CALLS or n.op is Ops.REDUCE_AXIS and n.arg[0] in (Ops.ADD, Ops.MUL)
               and n.dtype.is_float for n in toposort(x, stop=lambda n: n.op in stopped)):
        return red
    return red.replace(src=(x.f(Ops.CONTIGUOUS),))


def reduce_grad(grad: UOp, red: UOp) -> UOp:
    """REDUCE_AXIS's gradient (reduced axes keep size 1, so an EXPAND broadcasts back).

    ADD: every input gets the output's gradient. MAX/MIN: the inputs equal to the result share
    it equally (ties split, as tinygrad). MUL: grad * prod / x in a slice without zeros; in a
    slice with one, torch's product of the others, exactly: at the only zero, the product of the
    rest; elsewhere 0 times a product, so NaN where the others hold an inf or NaN, else 0 (prod /
    x there: 0, with x[k]'s derivative; it was NaN for all of [0, inf, 3], torch's
    [inf, 0, NaN])."""
    op = red.arg[0]
    if op in (Ops.MAX, Ops.MIN):
        red = _computed_once(red)
    x = red.src[0]
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
    divided = red.expand(x.shape) / safe_x
    bad = (x * 0).ne(0).cast(grad.dtype)  # inf or NaN (their product with 0 is NaN)
    bad_others = UOp(Ops.REDUCE_AXIS, grad.dtype, (bad,), (Ops.ADD, red.arg[1])).expand(x.shape)
    # (prod / x is 0 but where prod overflowed first, or x is the inf: 0 * inf, NaN)
    in_zeros = (bad_others - bad).eq(0).where(_finite(divided).where(divided, x.const_like(0)),
                                              x.const_like(math.nan))
    only_zero = is_zero & zeros.eq(1).expand(x.shape)
    return back * zeros.eq(0).expand(x.shape).where(divided, only_zero.where(
        others.expand(x.shape), in_zeros))


def scan_sum_grad(grad: UOp, red: UOp) -> dict[UOp, UOp] | tuple[UOp]:
    """A running sum's gradient (`running_sum`'s reduce): its marked input's, the reverse running
    sum of `grad`, given past the windows (autograd takes {node: gradient} for a node below);
    any other marked sum's, through its windows."""
    base = running_input(red)
    if base is None:
        return (reduce_grad(grad, red),)
    return {base: reverse_running_sum(grad.reshape(base.shape))}


def scan_prod_grad(grad: UOp, red: UOp) -> dict[UOp, UOp] | tuple[UOp]:
    """A running product's gradient (`running_product`'s reduce), torch's cumprod_backward in
    a few running sums and products (n steps each, where the windows' backward was n^2), given
    to its marked input past the windows; any other marked product's, through its windows."""
    base = running_input(red)
    if base is None:
        return (reduce_grad(grad, red),)
    x = base.src[0]
    return {base: _product_grad(x, grad.reshape(base.shape), red.reshape(base.shape), True)}


def _finite(v: UOp) -> UOp:
    return (v * 0).eq(0)  # (inf * 0 and NaN * 0 are NaN)


def _product_grad(x: UOp, g: UOp, out: UOp, twice: bool) -> UOp:
    """d sum(g * out) / d x for out the running product of x along its last axis: sum over
    i >= j of g[i] * (the product of x[:i + 1] without x[j]).

    Before the first zero k: the reverse running sum of g * out over x[j] (no division by a
    zero). At k: the reverse running sum of g times `others`, the running product with x[k] read
    as 1. Past k: 0 (x[k] is in every product). So far torch's first-order formula, exact through
    zeros. `twice`: differentiable once more, exactly (torch's double backward): out[i] past k is
    written x[k] * others[i] (0, whose derivative in x[k] is others[i]), and the gradient past k
    is x[k] times this same formula on x with x[k] read as 1 (0, and its derivative in x[k])."""
    is_zero = x.eq(0)
    # (scans read inside another scan's window are buffers: fused, each ran once per window;
    # and one scan per kernel: the scan action runs one accumulator per STORE, not two)
    zeros = running_sum(is_zero.cast(dtypes.int32)).f(Ops.CONTIGUOUS)  # zeros in x[:j + 1]
    before, first = zeros.eq(0), is_zero & zeros.eq(1)
    read_one = first.where(x.const_like(1), x)
    others = running_product(read_one).f(Ops.CONTIGUOUS)
    zero = g.const_like(0)
    past, terms = zero, before.where(g * out, zero)  # (masked: an inf past a zero adds no NaN)
    if twice:
        at_k = running_sum(first.where(x, zero)).f(Ops.CONTIGUOUS)  # x[k] from k on, else 0
        later = _product_grad(read_one, g, others, False)
        # (0 in value: dropped where g * others is not finite, as torch's sum stops at k)
        terms = before.where(g * out, _finite(g * others).where(g * (at_k * others), zero))
        past = _finite(later).where(at_k * later, zero)
    none_yet = reverse_running_sum(terms).f(Ops.CONTIGUOUS) / before.where(x, x.const_like(1))
    # from the second zero on, torch's terms are 0 times the product strictly between the
    # zeros (its g is masked, not the product): 0, or NaN where that product is infinite (a
    # product of the row, not a scan: the same from z2 on). The value is that; g * others (0
    # where finite) carries the derivative in the second zero
    inner = zeros.eq(1).where(read_one, x.const_like(1))
    between = UOp(Ops.REDUCE_AXIS, x.dtype, (inner,), (Ops.MUL, (x.ndim - 1,)))
    past_two = _finite(g * others).where(g * others, zero) + between.expand(x.shape) * 0
    at_first = zeros.lt(2).where(g * others, past_two)
    at_first = reverse_running_sum(at_first).f(Ops.CONTIGUOUS)
    return before.where(none_yet, first.where(at_first, past))


def first_max_grad(grad: UOp, red: UOp) -> UOp:
    """The gradient of a window max that goes to one element per window, torch's max_pool2d's:
    the first maximum in row-major order over the reduced axes, or the last NaN when the window
    holds one (its forward kernel's `val > max || isnan(val)`). Only the backward graph picks
    the element; the forward stays a reduce max. The reduced axes are moved last and flattened
    to one of K elements; a window holding NaN is read backwards, so the element is always the
    first hit, and "a hit before this one" is a prefix OR by shifts (log4 K steps, no table of
    positions)."""
    x, axes = red.src[0], red.arg[1]
    keep = [a for a in range(len(x.shape)) if a not in axes]
    order = tuple(keep + list(axes))
    # the windows stored once when they hold a float sum (a pool over a conv): the max and
    # the elements compared with it then read the same bits (`_computed_once`)
    red = _computed_once(red)
    moved = red.src[0].permute(order)
    outer = moved.shape[:len(keep)]
    k = math.prod(x.shape[a] for a in axes)
    flat = moved.reshape(outer + (k,))
    # the window's max stored once: inlined, every step below recomputed it per element (a
    # reduce of K inside each of ~2 log2 K kernels: 0.8 s of an 8x8 pool's backward)
    top = red.f(Ops.CONTIGUOUS).permute(order).reshape(outer + (1,)).expand(outer + (k,))
    nan_max = top.ne(top)  # MAX propagates NaN: the window holds one
    hit = nan_max.where(flat.ne(flat), flat.eq(top))
    inside = _inside_image(x.src[0] if x.op is Ops.CONTIGUOUS_BACKWARD else x)
    if inside is not None:  # a window of -inf and padding: the first element in the image
        hit = hit.alu(Ops.AND, inside.permute(order).reshape(outer + (k,)))
    backwards = (False,) * len(outer) + (True,)
    # the window in the order in which its element is the first hit, stored: the steps read it
    ordered = nan_max.where(hit.flip(backwards), hit).f(Ops.CONTIGUOUS)
    first = _hits_before(ordered).where(ordered.const_like(False), ordered)
    # the first hit per window, stored once: inlined, each input element's gradient would
    # recompute it for every window that holds the element (4x slower on a 2x2 pool)
    first = nan_max.where(first.flip(backwards), first).f(Ops.CONTIGUOUS)
    back = grad.permute(order).reshape(outer + (1,)).expand(outer + (k,))
    picked = first.where(back, back.const_like(0))
    return picked.reshape(moved.shape).permute(argsort(order))


def window_parts(red: UOp) -> list[UOp] | None:
    """The offsets of the windows of one pooled axis under a marked max (`Tensor._window_max`:
    a reduce max over the last axis of CONTIGUOUS_BACKWARD(window_stack(offsets))), or None
    for any other marked max."""
    windows = red.src[0].src[0]
    return stacked_parts(windows) if red.arg[1] == (windows.ndim - 1,) else None


def stacked_max_grad(grad: UOp, red: UOp, parts: list[UOp]) -> UOp:
    """The gradient of a max over the windows of one pooled axis (their k offsets `parts`),
    torch's: all of it to the element that torch's CPU kernel keeps walking a window, `val >
    max || isnan(val)` from max = -inf, never the padding (the first maximum, the last NaN,
    the first element in the image for a window of -inf). That walk is a chain of selects over
    the k offsets, its offset stored once per window (a byte, where the prefix OR of
    `first_max_grad` stored k bools per window, several times); each offset's gradient is the
    incoming one where it was kept."""
    outer, k = tuple(parts[0].shape), len(parts)
    index = dtypes.int8 if k <= dtypes.int8.max else dtypes.int32
    insides = [_inside_image(part) for part in parts]  # None: never padding
    offsets = [_filled(index, j, outer) for j in range(k)]
    kept = offsets[0]  # the first offset in the image, for a window of -inf
    for j in reversed(range(k)):
        kept = offsets[j] if insides[j] is None else insides[j].where(offsets[j], kept)
    top = parts[0].const_like(float("-inf"))
    for value, inside, at in zip(parts, insides, offsets):
        keep = top.lt(value).alu(Ops.OR, value.ne(value))
        if inside is not None:
            keep = keep.alu(Ops.AND, inside)
        top, kept = keep.where(value, top), keep.where(at, kept)
    kept = kept.f(Ops.CONTIGUOUS)
    # the incoming gradient stored when it is computed: each input element reads it through
    # k offsets per axis (inlined, a pooled axis before this one recomputed it k times a read)
    back = grad.reshape(outer)
    if not _of_constants(back):
        back = back.f(Ops.CONTIGUOUS)
    zero = back.const_like(0)
    return window_stack([kept.alu(Ops.CMPEQ, at).where(back, zero) for at in offsets])


def _of_constants(x: UOp) -> bool:
    """x is computed from constants alone, elementwise (a loss `(y * 1.5).sum()`'s gradient:
    1.5 everywhere): recomputed at each read for nothing, where stored it cost a kernel and a
    pass over memory."""
    return all(n.op is Ops.CONST if not n.src else n.op is not Ops.REDUCE_AXIS
               for n in toposort(x))


def _filled(dtype, value: object, shape: tuple[int, ...]) -> UOp:
    return UOp.const(dtype, value).reshape((1,) * len(shape)).expand(shape)


def _inside_image(x: UOp) -> UOp | None:
    """For windows over a tensor padded with a value (`Tensor.pad(value=)`: WHERE(PAD(true),
    PAD(x), fill)), the same windows over the padded mask: true where an element is in the
    image (torch never picks a padded element). None when the windows read no such pad."""
    base = x.base
    if base.op is not Ops.WHERE or base.src[0].op is not Ops.PAD or \
            base.src[2].base.op is not Ops.CONST:
        return None
    return _rebuilt_over(x, base, base.src[0])


def _rebuilt_over(x: UOp, old: UOp, new: UOp) -> UOp:
    """The movement chain from x down to `old`, applied to `new` instead (in new's dtype)."""
    chain = []
    node = x
    while node is not old:
        chain.append(node)
        node = node.src[0]
    out = new
    for m in reversed(chain):
        out = m.replace(src=(out,) + m.src[1:], dtype=new.dtype)
    return out


# shifts ORed per step of the prefix OR: each step multiplies the span seen by this, so a
# window of K takes log_RADIX K stored steps (4: half the kernels of doubling, each an
# elementwise read of its input 4 times)
RADIX = 4


def _hits_before(hit: UOp) -> UOp:
    """Per element of the last axis of a stored `hit`: whether a hit lies before it."""
    *outer, k = hit.shape
    lead = ((0, 0),) * len(outer)

    def shifted(h: UOp, by: int) -> UOp:  # h moved `by` places later along the last axis
        return h.pad(lead + ((by, 0),)).shrink(tuple((0, s) for s in outer) + ((0, k),))

    seen, span = shifted(hit, 1), 1  # seen[i]: a hit in [i - span, i)
    while span < k:
        # each step is stored before the next reads it RADIX times (inlined, step n would
        # recompute the first step RADIX^n times: minutes for a 64x64 window)
        seen = base = seen if span == 1 else seen.f(Ops.CONTIGUOUS)
        for j in range(1, RADIX):
            if j * span < k:  # (a shift by k or more reads no hit)
                seen = seen.alu(Ops.OR, shifted(base, j * span))
        span *= RADIX
    return seen


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
    if isinstance(dev, tuple):  # gathered whole: the gradient is split back to the shards
        return shard_like(grad, src)
    return to_device(grad, dev)  # (a sharded grad is gathered there whole: rules/multi.rules)


def part_grads(grad: UOp, multi: UOp) -> UOp:
    """MULTI's gradient (Tensor.shard's: an identity whose value lives in parts): for its MSTACK,
    a stack of the gradient's part on each device, taken there. A replicated value (axis None)
    is one value held k times: its whole gradient goes to the first replica, zeros to the
    others (each replica's own gradient would count it k times). A sharded gradient is
    gathered to each device before its part is cut (simple; it moves k times the data)."""
    axis, devs = multi.arg
    stack, n = multi.src[0], len(devs)
    parts = []
    for i, dev in enumerate(devs):
        if axis is None and i > 0:
            parts.append(UOp.const(grad.dtype, 0.0).expand(stack.shape)
                         if stack.shape else UOp.const(grad.dtype, 0.0))
        elif isinstance(device_of(grad), tuple):
            parts.append(shard_part(to_device(grad, dev), axis, i, n))
        else:
            parts.append(to_device(shard_part(grad, axis, i, n), dev))
    return UOp(Ops.MSTACK, stack.dtype, tuple(parts), stack.arg)


def shard_like(grad: UOp, src: UOp) -> UOp:
    """grad sharded as the sharded value src is (its axis and devices): the gradient of a
    sharded value gathered to one device (`.to`)."""
    from rulegrad.runtime.multi import layouts, relayout

    axis, devs = layouts([src])[0]  # type: ignore[misc]
    return relayout(grad, axis, devs)
