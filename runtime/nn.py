"""Neural-network ops of the Tensor API: convolutions, pooling, resizing, losses, attention.

In: a `Tensor` (this module is a mixin of it). Out: lazy tensors. As in tinygrad, a pooling op
or a convolution is `_pool` (sliding windows made of movement ops only, see
`runtime/tensor_ops.py`) followed by a reduction or a broadcast product and a sum; the
scheduler fuses them into ordinary kernels, no kernel is written by hand. Signatures and
formulas follow tinygrad's (MIT license); tinygrad's pooling and convolutions work for any
number of spatial dims, and so do these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .device import in_use
from .dtype import DType, dtypes, least_float, to_dtype
from .errors import InvalidArgument
from .ops import Ops
from .pool_graphs import reused
from .tensor_ops import check_index_bounds, make_tuple, placed_like, window_arg
from .variable import has_symbolic, refuse_symbolic, show

if TYPE_CHECKING:
    from .tensor import Tensor


def pool_pads(padding: int | Sequence[int], dims: int, op: str = "padding") -> list[int]:
    """Pooling padding as a flat torch-order list (last axis first, before/after pairs):
    an int, one int per spatial axis (first axis first, as torch), or 2 per axis. Anything
    else (a float, a string, a bool) is refused naming `op`: list() of it raised bare errors,
    or took "same"'s four letters for four pads."""
    if _whole(padding):
        return [int(padding)] * 2 * dims
    flat = list(padding) if isinstance(padding, (tuple, list)) else None
    if flat is not None and all(_whole(p) for p in flat):
        flat = [int(p) for p in flat]
        if len(flat) == 2 * dims:
            return flat
        if len(flat) == dims:
            return [p for p in flat for _ in range(2)][::-1]
    raise InvalidArgument(f"{op} must be an int or a sequence of {dims} or {2 * dims} ints, "
                          f"got {padding!r}")


def pool_pad_bound(op: str, pads: list[int], k_: Sequence[int]) -> None:
    """torch's bound on a pool's padding: none negative, none past half the kernel, so that
    every window holds an element of the input (a window all padding was the max's -inf, or
    0/0 for a mean without the padding; torch bounds by the kernel, dilated or not)."""
    for (before, after), k in zip(grouped(pads), k_):
        if min(before, after) < 0 or max(before, after) > k // 2:
            raise InvalidArgument(f"{op} padding {(before, after)} must be from 0 to half the "
                                  f"kernel ({k // 2} for kernel {k}), as torch's")


def _whole(v: Any) -> bool:
    """v is an int (numpy's too), and not a bool."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def conv_pads(padding: Any, hw: Sequence[int], stride: Sequence[int],
              dilation: Sequence[int]) -> list[int]:
    """conv2d's padding as flat torch-order pads; torch's "valid" (none) and "same" (the
    output as large as the input: d*(k-1) in all, the odd one after, stride 1 only) too."""
    if isinstance(padding, str) and padding == "valid":
        return [0] * 2 * len(hw)
    if isinstance(padding, str) and padding == "same":
        if any(s != 1 for s in stride):
            raise InvalidArgument(f"conv2d padding='same' needs stride 1 (torch's rule), got "
                                  f"stride {tuple(stride)}")
        pairs = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                 for k, d in zip(hw, dilation)]
        return [p for pair in pairs[::-1] for p in pair]
    if isinstance(padding, str):
        raise InvalidArgument(f"conv2d padding must be 'valid', 'same', an int or a sequence "
                              f"of {len(hw)} or {2 * len(hw)} ints, got {padding!r}")
    return pool_pads(padding, len(hw), "conv2d padding")


def windows(op: str, kernel_size: Any, stride: Any, dilation: Any
            ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A pool's kernel, stride (None: the kernel) and dilation, each checked (`window_arg`)
    and named by the op's own argument in a refusal."""
    k_ = make_tuple(kernel_size, 2) if isinstance(kernel_size, int) else kernel_size
    k_ = window_arg(k_, len(k_) if isinstance(k_, (tuple, list)) else 2, f"{op} kernel_size")
    n = len(k_)
    s_ = k_ if stride is None else window_arg(stride, n, f"{op} stride")
    return k_, s_, window_arg(dilation, n, f"{op} dilation")


def positive_groups(op: str, groups: Any) -> None:
    if not isinstance(groups, (int, np.integer)) or isinstance(groups, bool) or groups < 1:
        raise InvalidArgument(f"{op} groups must be an int >= 1, got {groups!r}")


def grouped(flat: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Flat torch-order pads -> per-axis (before, after), first axis first."""
    return tuple(zip(flat[-2::-2], flat[::-2]))


def _ceil_pads(x: Tensor, pads: list[int], k_: tuple[int, ...], s_: Any, d_: Any) -> list[int]:
    """Extra padding after each axis so that ceil_mode's last partial window exists, and no
    window starts inside the padding (arXiv:1603.07285, section 5.1, relationship 15)."""
    n = len(k_)
    s_, d_ = make_tuple(s_, n), make_tuple(d_, n)
    i_ = x.shape[-n:]
    g = list(grouped(pads))
    for dim, (i, s, k, d, (pb, pa)) in enumerate(zip(i_, s_, k_, d_, list(g))):
        o = -(-(i + pb + pa - (d * (k - 1) + 1)) // s) + 1
        g[dim] = (pb, pa + s * (o - 1) + (d * (k - 1) + 1) - (i + pb + pa)
                  - max(s * (o - 1) - (pb + i - 1), 0))
    return [v for b, a in reversed(g) for v in (b, a)]


def _overlap(k_: tuple[int, ...], s_: Any, d_: Any) -> bool:
    """Windows that share elements on some axis (or are dilated)."""
    n = len(k_)
    return any(k > s for k, s in zip(k_, make_tuple(s_, n))) or \
        any(d != 1 for d in make_tuple(d_, n))


class NNOps:
    """Mixin of `Tensor`: convolutions, pooling, resizing, losses, attention."""

    __slots__ = ()

    # ------------------------------------------------------------------ linear layers
    def linear(self, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        x = self * weight if weight.ndim == 1 else self.dot(weight)
        return x if bias is None else x + bias

    def batchnorm(self, weight: Tensor | None, bias: Tensor | None, mean: Tensor,
                  invstd: Tensor, axis: int | tuple[int, ...] = 1) -> Tensor:
        axes = make_tuple(axis, 1)
        shape = tuple(s if i in axes else 1 for i, s in enumerate(self.shape))
        x = self - mean.reshape(shape)
        if weight is not None:
            x = x * weight.reshape(shape)
        out = x * (invstd.reshape(shape) if invstd.ndim == len(axes) else invstd)
        return out + bias.reshape(shape) if bias is not None else out

    def dropout(self, p: float = 0.5) -> Tensor:
        """Identity: rulegrad has no training mode (tinygrad's dropout is off outside it)."""
        if not 0 <= p <= 1:
            raise InvalidArgument(f"dropout p={p} is out of range [0, 1]")
        return self

    # ------------------------------------------------------------------ convolutions
    def conv2d(self, weight: Tensor, bias: Tensor | None = None, groups: int = 1,
               stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1,
               padding: int | Sequence[int] = 0, dtype: DType | str | None = None) -> Tensor:
        """Convolution over any number of spatial dims: (N, C, *S) with (O, C/groups, *K).

        `padding` is an int, one per spatial axis, or torch-order pairs (negative cuts)."""
        if self.ndim < 3 or weight.ndim != self.ndim:
            raise InvalidArgument(f"conv2d needs input (N, C, *spatial) and weight (O, C/groups, "
                             f"*kernel) of one rank, got {show(self.shape)} and "
                             f"{show(weight.shape)}")
        (bs, cin_), (cout, cin), hw = self.shape[:2], weight.shape[:2], weight.shape[2:]
        stride, dilation = (window_arg(v, len(hw), f"conv2d {name}")
                            for v, name in ((stride, "stride"), (dilation, "dilation")))
        positive_groups("conv2d", groups)
        if groups * cin != cin_ or cout % groups:
            raise InvalidArgument(f"conv2d input {show(self.shape)} does not match weight "
                                  f"{show(weight.shape)} "
                             f"with groups={groups} ({groups * cin} vs {cin_} channels)")
        x = self if dtype is None else self.cast(to_dtype(dtype))
        pads = grouped(conv_pads(padding, hw, stride, dilation))
        x = x.pad(((0, 0),) * (self.ndim - len(hw)) + pads)
        if any(p > 0 for pair in pads for p in pair):
            # the padded input copied once (a kernel of its own): read through the PAD, each of
            # the k*k window reads of an element is gated, and the product's packed loops copy
            # the gated window, gate by gate, into a panel per row tile; from a buffer the
            # window is a plain strided read, read in place (16 channels 40x40 padded by 2:
            # 3.3x faster, a depthwise 5x5: 1.8x; bench/sweep.py --held-out-3)
            x = x.contiguous()
        x = x._pool(hw, stride, dilation)
        rcout, oyx = cout // groups, x.shape[2:-len(hw)]
        nsp = len(oyx)
        x = x.reshape(bs, groups, cin, 1, *oyx, *hw).expand(bs, groups, cin, rcout, *oyx, *hw)
        x = x.permute(0, 1, 3, *[4 + i for i in range(nsp)], 2,
                      *[4 + nsp + i for i in range(len(hw))])
        w = weight if dtype is None else weight.cast(to_dtype(dtype))
        # float16 by float16: multiplied and summed in float32, rounded once, as torch's
        # convolution (and Tensor.matmul): a product rounded to float16 had been inf past 65504
        # and 0 under 2**-25 (rev66b)
        half = x.dtype is dtypes.float16 and w.dtype is dtypes.float16
        if half:
            x, w = x.cast(dtypes.float32), w.cast(dtypes.float32)
        prod = x * w.reshape(1, groups, rcout, *[1] * nsp, cin, *hw)
        out = prod.sum([-1 - i for i in range(1 + len(hw))], keepdim=True)
        out = out.reshape(bs, cout, *oyx).cast(dtypes.float16) if half else \
            out.reshape(bs, cout, *oyx)
        return out if bias is None else out + bias.reshape(1, -1, *[1] * len(hw))

    def conv1d(self, weight: Tensor, bias: Tensor | None = None, groups: int = 1,
               stride: Any = 1, dilation: Any = 1, padding: Any = 0) -> Tensor:
        return self.conv2d(weight, bias, groups, stride, dilation, padding)

    def conv_transpose2d(self, weight: Tensor, bias: Tensor | None = None, groups: int = 1,
                         stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1,
                         padding: int | Sequence[int] = 0,
                         output_padding: int | Sequence[int] = 0) -> Tensor:
        """The gradient of conv2d as a conv2d: stride becomes zeros between the input's
        elements, the kernel is flipped with its in/out channels swapped per group."""
        hw = weight.shape[2:]
        n = len(hw)
        stride, dilation = (window_arg(v, n, f"conv_transpose2d {name}")
                            for v, name in ((stride, "stride"), (dilation, "dilation")))
        output_padding = window_arg(output_padding, n, "conv_transpose2d output_padding", 0)
        if any(p >= max(s, d) for p, s, d in zip(output_padding, stride, dilation)):
            raise InvalidArgument(f"conv_transpose2d output_padding {output_padding} must be "
                                  f"less than the stride {stride} or the dilation {dilation}")
        positive_groups("conv_transpose2d", groups)
        if weight.ndim < 3 or weight.shape[0] % groups:
            raise InvalidArgument(f"conv_transpose2d weight {show(weight.shape)} needs (C_in, "
                                  f"C_out/groups, *kernel) with C_in a multiple of groups={groups}")
        w = weight.unflatten(0, (groups, -1)).transpose(1, 2).flip(*range(3, weight.ndim + 1))
        pads = grouped(pool_pads(padding, n, "conv_transpose2d padding"))
        x = self
        if any(s > 1 for s in stride):
            sp = x.shape[2:]
            x = x.reshape(*x.shape[:2], *[v for k in sp for v in (k, 1)])
            x = x.pad(((0, 0), (0, 0), *[p for s in stride for p in ((0, 0), (0, s - 1))]))
            x = x.reshape(*x.shape[:2], *[k * s for k, s in zip(sp, stride)])
            x = x._shrink_to([None, None, *[k * s - (s - 1) for k, s in zip(sp, stride)]])
        flat = [v for k, d, (pb, pa), op in reversed(list(zip(hw, dilation, pads, output_padding)))
                for v in ((k - 1) * d - pb, (k - 1) * d - pa + op)]
        return x.conv2d(w.flatten(0, 1), bias, groups, 1, dilation, flat)

    # ------------------------------------------------------------------ pooling
    def avg_pool2d(self, kernel_size: int | tuple[int, ...] = (2, 2), stride: Any = None,
                   dilation: Any = 1, padding: int | Sequence[int] = 0, ceil_mode: bool = False,
                   count_include_pad: bool = True) -> Tensor:
        """Mean over sliding windows of the last len(kernel_size) axes."""
        k_, s_, dilation = windows("avg_pool2d", kernel_size, stride, dilation)
        axis = tuple(range(-len(k_), 0))
        x = self._float()
        lead = ((0, 0),) * (x.ndim - len(k_))

        overlap = _overlap(k_, s_, dilation)

        def pool(t: Tensor, pads: Sequence[int], mean: bool = False) -> Tensor:
            """The window sums (means) of t padded by pads. Overlapping windows: `_window_sum`
            (float16 summed in float32, as `mean` does), whose gradient is k pads per axis,
            not the repeat trick's sum over every repeat of the input."""
            t = t.pad(lead + grouped(pads))
            if not overlap:
                windows = t._pool(k_, s_, dilation)
                return windows.mean(axis) if mean else windows.sum(axis)
            acc = t.cast(dtypes.float32) if t.dtype is dtypes.float16 else t
            total = acc._window_sum(k_, s_, dilation)
            return (total / math.prod(k_) if mean else total).cast(t.dtype)

        reg = pool_pads(padding, len(k_), "avg_pool2d padding")
        pool_pad_bound("avg_pool2d", reg, k_)
        pads = _ceil_pads(x, reg, k_, s_, dilation) if ceil_mode else reg
        ones = x.full_like(1)
        if not count_include_pad:
            return pool(x, pads) / pool(ones, pads)
        if not ceil_mode:
            return pool(x, pads, mean=True)
        # ceil_mode counts the regular padding but not the extra, as torch
        base = x.pad(lead + grouped(reg)).full_like(1)  # the regular padding counts
        extra = [c - r for c, r in zip(pads, reg)]
        return pool(x, pads) / pool(base, extra)

    def max_pool2d(self, kernel_size: int | tuple[int, ...] = (2, 2), stride: Any = None,
                   dilation: Any = 1, padding: int | Sequence[int] = 0, ceil_mode: bool = False,
                   return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """Max over sliding windows; with return_indices, the flat spatial index of each max,
        as torch's: the first of a window's maxima, the last NaN when it holds one (the index
        was out of range for a window holding NaN), the value that element and its gradient
        going to it alone. Without indices a reduce max whose gradient goes to the same element
        (the element is picked by the backward graph only: in the forward it cost 4x)."""
        k_, s_, dilation = windows("max_pool2d", kernel_size, stride, dilation)
        axis = tuple(range(-len(k_), 0))
        pads = pool_pads(padding, len(k_), "max_pool2d padding")
        pool_pad_bound("max_pool2d", pads, k_)
        if ceil_mode:
            pads = _ceil_pads(self, pads, k_, s_, dilation)
        lead = ((0, 0),) * (self.ndim - len(k_))
        if not return_indices:
            if in_use["devices"] or in_use["multi"] or has_symbolic(self.shape):
                return self._max_pool(k_, s_, dilation, pads)
            # the graph depends on the input's shape and dtype only: built once per key, each
            # call substitutes its input (runtime/pool_graphs.py), no dozen Tensor ops per call
            key = ("max_pool", self.shape, self.dtype, k_, s_, dilation, tuple(pads))
            T = type(self)
            return T(reused(key, self.shape, self.dtype, self.uop,
                            lambda x: T(x)._max_pool(k_, s_, dilation, pads).uop))
        pooled = self.pad(lead + grouped(pads), value=self.dtype.min)._pool(k_, s_, dilation)
        spatial = self.shape[-len(k_):]
        size = math.prod(spatial)
        # each element's key: size - its flat position (padding 0), so the largest key among
        # the maxima is the first; for a NaN the negated key, so the largest is the last NaN
        idx = placed_like(self, type(self).arange(size, 0, -1)).reshape(spatial)
        idx = idx.pad(((0, 0),) * (idx.ndim - len(k_)) + grouped(pads), value=0)
        idx = idx._pool(k_, s_, dilation)
        hit = pooled == pooled.max(axis, keepdim=True)
        if self.dtype.is_float:
            nan = pooled.isnan()
            anynan = nan.any(axis, keepdim=True)
            hit, idx = anynan.where(nan, hit), anynan.where(-idx, idx)
        best = hit.where(idx, -size - 1).max(axis, keepdim=True)
        value = pooled._pick(hit & (idx == best), axis)
        return value, (size - best.abs()).reshape(value.shape).cast(dtypes.int32)

    def _max_pool(self, k_: tuple[int, ...], s_: tuple[int, ...], dilation: tuple[int, ...],
                  pads: list[int]) -> Tensor:
        """max_pool2d without indices, its arguments normalized (`pads` flat, torch order)."""
        if _overlap(k_, s_, dilation):
            # one axis at a time, each a max over its k strided views (`_window_max`): the
            # gradient is k pads per axis, not a sum over every repeat of the input
            return self._window_max(k_, s_, dilation, grouped(pads))
        lead = ((0, 0),) * (self.ndim - len(k_))
        pooled = self.pad(lead + grouped(pads), value=self.dtype.min)._pool(k_, s_, dilation)
        # the marker asks for torch's gradient (rules/gradient.rules' grad_pool_max: all of it
        # to the first maximum, picked in the backward only); the scheduler drops it
        return type(self)(pooled.uop.f(Ops.CONTIGUOUS_BACKWARD)).max(tuple(range(-len(k_), 0)))

    def max_unpool2d(self, indices: Tensor, kernel_size: Any = (2, 2), stride: Any = None,
                     dilation: Any = 1, padding: Any = 0, output_size: Any = None) -> Tensor:
        bs, c, *spatial = self.shape
        n = len(spatial)
        if output_size is None:
            k_ = window_arg(kernel_size, n, "max_unpool2d kernel_size")
            s_ = k_ if stride is None else window_arg(stride, n, "max_unpool2d stride")
            d_ = window_arg(dilation, n, "max_unpool2d dilation")
            p_ = grouped(pool_pads(padding, n, "max_unpool2d padding"))
            output_size = tuple((i - 1) * s - (pb + pa) + (d * (k - 1) + 1)
                                for i, k, d, s, (pa, pb) in zip(spatial, k_, d_, s_, p_))
        else:
            output_size = tuple(output_size)[-n:]
        hot = indices.reshape(bs, c, 1, -1)._one_hot_along_dim(math.prod(output_size), 2)
        out = self.reshape(bs, c, 1, -1)._pick(hot, 3)
        if self.dtype.is_float:  # +0.0 where no index points (a pick of nothing is -0.0); an
            # ADD, so the gradient needs no second look at the indices (a where would)
            out = out + hot.any(3).where(-0.0, 0.0).cast(self.dtype)
        return out.reshape(bs, c, *output_size)

    def interpolate(self, size: Sequence[int], mode: str = "linear",
                    align_corners: bool = False) -> Tensor:
        """Resize the last len(size) axes: "linear" (per axis, so bilinear/trilinear),
        "nearest" or "nearest-exact", with torch's coordinate conventions."""
        T = type(self)
        if not isinstance(size, (tuple, list)) or not 0 < len(size) <= self.ndim or any(
                not isinstance(v, (int, np.integer)) or v < 0 for v in size):
            raise InvalidArgument(f"interpolate size must be a tuple of 1..{self.ndim} ints >= 0, "
                                  f"got {size}")
        if mode not in ("linear", "nearest", "nearest-exact"):
            raise InvalidArgument(f"interpolate mode must be linear, nearest or nearest-exact, "
                             f"got {mode!r}")
        if align_corners and mode != "linear":
            raise InvalidArgument("align_corners needs mode='linear'")
        refuse_symbolic("interpolate", self.shape, range(self.ndim - len(size), self.ndim))
        x, expand = self, list(self.shape)
        # the weights in float32, as torch's (its opmath for half), in float64 for float64 (a
        # float32 weight put 3e-8 errors into float64 results)
        weight_dt = dtypes.float64 if self.dtype is dtypes.float64 else dtypes.float32
        for i in range(-1, -len(size) - 1, -1):
            in_sz, reshape = self.shape[i], [1] * self.ndim
            reshape[i] = expand[i] = size[i]
            if mode == "linear":
                arr = placed_like(self, T.arange(size[i]))
                if align_corners:
                    num, den = arr * (in_sz - 1), max(size[i] - 1, 1)
                else:
                    num, den = (arr * 2 + 1) * in_sz - size[i], size[i] * 2
                if self.dtype is dtypes.uint8:
                    num = num.clip(0, (in_sz - 1) * den)
                    low, high = num // den, (num + den - 1) // den
                else:  # torch's: past the last element the weight stays, on it twice
                    num = num.maximum(0)
                    low = num // den
                    high = (low + 1).minimum(in_sz - 1)
                frac = (num % den).cast(weight_dt) / den
                low, high, frac = (y.reshape(reshape).expand(expand) for y in (low, high, frac))
                if self.dtype is dtypes.uint8:
                    x = _lerp_uint8(x.gather(i, low), x.gather(i, high), frac,
                                    _max_weight(in_sz, size[i], align_corners))
                else:
                    # torch's weighted sum, w0 * x0 + w1 * x1: between two equal infinities
                    # it is that infinity (a lerp's x0 + (x1 - x0) * w was inf - inf, NaN)
                    x = x.gather(i, low) * (1 - frac) + x.gather(i, high) * frac
            else:
                scale = in_sz / size[i]
                arr = placed_like(self, T.arange(size[i], dtype=dtypes.float32))
                pos = scale * (arr + 0.5) if mode == "nearest-exact" else scale * arr
                index = pos.cast(dtypes.int32).minimum(in_sz - 1)
                x = x.gather(i, index.reshape(reshape).expand(expand))
        return x.cast(self.dtype)

    # ------------------------------------------------------------------ attention
    def scaled_dot_product_attention(self, key: Tensor, value: Tensor,
                                     attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                     is_causal: bool = False, enable_gqa: bool = False
                                     ) -> Tensor:
        """softmax(q k^T / sqrt(d) + mask) v; a bool mask keeps where true, and a query it
        keeps from every key gets 0s (torch's), not softmax's NaN. In float16 each op rounds
        to float16 as numpy's (runtime/semantics.py): q k^T is a float32 sum rounded before
        the scale, so a |q . k| past 65504 is inf and its row NaN, where torch's float16 CPU
        kernel, its scores float32 and scaled, stays finite."""
        if enable_gqa:
            key = key.repeat_interleave(self.shape[-3] // key.shape[-3], dim=-3)
            value = value.repeat_interleave(self.shape[-3] // value.shape[-3], dim=-3)
        qk = self.matmul(key.transpose(-2, -1)) / math.sqrt(self.shape[-1])
        if is_causal:
            if attn_mask is not None:
                raise InvalidArgument("cannot set attn_mask when is_causal=True")
            # the scores above the diagonal filled with -inf, as torch's CPU kernel fills them
            # (not + -inf): a select the optimizer keeps out of the softmax's exp
            # (rules/opt.rules, `mask_actions`)
            causal = type(self).ones(*qk.shape[-2:], dtype=dtypes.bool).tril()
            qk = causal.where(qk, -math.inf)
        elif attn_mask is not None:
            if attn_mask.dtype is dtypes.bool:
                attn_mask = attn_mask.where(0.0, -math.inf)
            qk = qk + attn_mask.cast(qk.dtype)
            return _safe_softmax(qk.cast(least_float(self.dtype))).dropout(dropout_p) @ value
        scores = qk.cast(least_float(self.dtype))
        weights = scores.softmax(-1)
        if is_causal:
            # a causal row sees its own key, so its max is -inf only when every score it sees
            # is (infinite inputs): torch's safe softmax weighs it 0, not softmax's NaN (a NaN
            # score makes the max NaN, and the row NaN, as torch's; no key: -inf, zeros as
            # torch's, where max refuses the empty axis)
            weights = (scores._max_shift(-1) == -math.inf).where(0.0, weights)
        return weights.dropout(dropout_p) @ value

    # ------------------------------------------------------------------ losses
    def _do_reduction(self, reduction: str = "mean") -> Tensor:
        if reduction == "none":
            return self
        if reduction == "sum":
            return self.sum()
        if reduction == "mean":
            return self.mean()
        raise InvalidArgument(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")

    def binary_crossentropy(self, y: Tensor, reduction: str = "mean") -> Tensor:
        # torch's: each log at least -100, so a probability of exactly 0 or 1 costs 100, not
        # 0 * -inf = NaN for the term its label switches off. Where the floor holds the log
        # reads 1: log's gradient there, 1/0 = inf, times the 0 the floor passes was NaN (a
        # sigmoid saturates to exactly 0 or 1 in float32 from |x| > 17 on)
        def floored_log(p: Tensor) -> Tensor:
            keep = (p.log() <= -100).logical_not()  # NaN keeps its log: NaN
            return keep.where(keep.where(p, 1.0).log(), -100.0)
        log_p, log_1mp = floored_log(self), floored_log(1 - self)
        return (-y * log_p - (1 - y) * log_1mp)._do_reduction(reduction)

    def binary_crossentropy_logits(self, y: Tensor, reduction: str = "mean",
                                   pos_weight: Tensor | None = None) -> Tensor:
        log_p, log_1mp = self.logsigmoid(), (-self).logsigmoid()
        w = 1 if pos_weight is None else pos_weight
        return (-(w * y * log_p + (1 - y) * log_1mp))._do_reduction(reduction)

    def sparse_categorical_crossentropy(self, y: Tensor, ignore_index: int = -1,
                                        label_smoothing: float = 0.0,
                                        reduction: str = "mean") -> Tensor:
        """Cross entropy of logits (..., C) against int labels (...)."""
        if not 0.0 <= label_smoothing <= 1.0:
            raise InvalidArgument(f"label_smoothing must be in [0, 1], got {label_smoothing}")
        # (a known label outside 0..C-1 refused, as cross_entropy's: its one-hot row was 0s)
        check_index_bounds(y, self.shape[-1], "sparse_categorical_crossentropy", None,
                           wrap=False, ignore=ignore_index)
        log_probs = self.log_softmax()
        mask = (y != ignore_index) if ignore_index != -1 else y.full_like(True, dtypes.bool)
        hot = y.unsqueeze(-1)._one_hot_along_dim(self.shape[-1]) & mask.unsqueeze(-1)
        unreduced = hot.where(log_probs, 0).sum(-1)
        if label_smoothing:  # (0 times a -inf log-probability's mean was NaN)
            smoothing = label_smoothing * mask.where(log_probs.mean(-1), 0)
            unreduced = (1 - label_smoothing) * unreduced + smoothing
        if reduction == "mean":
            return -unreduced.sum() / mask.sum().cast(unreduced.dtype)
        return -unreduced._do_reduction(reduction)

    def cross_entropy(self, y: Tensor, reduction: str = "mean",
                      label_smoothing: float = 0.0, ignore_index: int = -100) -> Tensor:
        """torch's cross_entropy: y is class indices (N, ...) or probabilities like self.
        A class index equal to ignore_index (torch's default -100) adds 0 and is not counted
        by the mean; any other outside 0..C-1 is refused when its values are known, as torch
        refuses it (`check_index_bounds`: it added the row's log-sum-exp alone)."""
        if not 0.0 <= label_smoothing <= 1.0:
            raise InvalidArgument(f"label_smoothing must be in [0, 1], got {label_smoothing}")
        cdim = 0 if self.ndim == 1 else 1
        classes, indices = self.shape[cdim], self.shape != y.shape
        if indices:
            if self.sum(cdim).shape != y.shape:
                raise InvalidArgument(f"cross_entropy shapes do not match: {show(self.shape)}, "
                                      f"{show(y.shape)}")
            if classes == 0 and y.numel() != 0:  # (torch: "Target 0 is out of bounds")
                raise InvalidArgument(f"cross_entropy: class index targets {show(y.shape)} "
                                      "with 0 classes: every index is out of bounds")
            check_index_bounds(y, classes, "cross_entropy", cdim, wrap=False, ignore=ignore_index)
            keep = y != ignore_index
            y = keep.where(y, 0).unsqueeze(cdim)._one_hot_along_dim(classes, dim=cdim)
        # with 0 classes there is no target element to smooth (no 0 / 0 on the host)
        y = (1 - label_smoothing) * y.cast(least_float(self.dtype)) \
            + (label_smoothing / classes if classes != 0 else 0.0)
        terms = self.log_softmax(cdim) * y
        if indices:  # (a class the target gives weight 0 adds 0, as torch's pick: a logit of
            # -inf there, a masked class, was 0 * -inf = NaN; probabilities stay torch's NaN)
            terms = (y != 0).where(terms, 0.0)
        loss = -terms.sum(cdim)
        # torch's mean over no logits is NaN even where rows remain (N x 0 probabilities: each
        # row's loss is -0.0, their mean is NaN), and so is an index target's smoothed sum over
        # 0 classes (its smoothing term, a sum over no classes, is divided by 0 classes)
        if (self.numel() == 0 and reduction == "mean") or \
                (indices and classes == 0 and label_smoothing > 0 and reduction == "sum"):
            return loss.sum() + math.nan
        if indices:  # (torch's mean is over the targets kept: all ignored, 0 / 0 = NaN)
            loss = keep.where(loss, 0.0)
            if reduction == "mean":
                return loss.sum() / keep.sum().cast(loss.dtype)
        return loss._do_reduction(reduction)

    def nll_loss(self, y: Tensor, weight: Tensor | None = None, ignore_index: int | None = -100,
                 reduction: str = "mean") -> Tensor:
        """Negative log likelihood of log-probabilities (N, C, ...) at int labels (N, ...).
        A label outside 0..C-1 other than ignore_index (torch's default -100; None: no label
        is ignored) is refused when its values are known, as torch's (`check_index_bounds`);
        an ignored one is read as class 0, weighted 0 (the gathers refused it as an index:
        torch's `ignore_index=-100` raised). Log-probabilities (C,) and a 0-d label are torch's
        unbatched form, a 0-d loss for every reduction."""
        if self.ndim == 1:  # (it indexed self.shape[1]: a bare IndexError)
            return self.unsqueeze(0).nll_loss(y.reshape((1,)), weight, ignore_index,
                                              reduction).reshape(())
        keep = None
        if ignore_index is not None:  # (else the gathers check y)
            check_index_bounds(y, self.shape[1], "nll_loss", 1, wrap=False, ignore=ignore_index)
            keep = y != ignore_index
        at = y if keep is None else keep.where(y, 0)
        w = y.full_like(1, self.dtype) if weight is None else \
            weight.gather(0, at.flatten()).reshape(y.shape)
        if keep is not None:
            w = w * keep
        nll = -self.gather(1, at.unsqueeze(1)).squeeze(1) * w
        if keep is not None:  # an ignored row adds 0 and gets a 0 gradient, as torch's: its
            # weight 0 times the mean's 1 / 0 (all ignored) was NaN, and 0 times a class-0
            # log-probability of -inf a NaN loss
            nll = keep.where(nll, 0.0)
        return nll.sum() / w.sum() if reduction == "mean" else nll._do_reduction(reduction)


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last axis, 0 along a row of scores all -inf (a query the mask keeps
    from every key): torch's attention gives 0 there, softmax 0 / 0 = NaN. Such a row is
    shifted by 0, so its exps are 0, and divided by 1: no NaN in the values or the gradient
    (0 for the row, as torch's); one max per row, as softmax's."""
    m = scores._max_shift(-1)  # (no key: -inf, a dead row, 0s as torch's)
    dead = m == -math.inf
    e = (scores - dead.where(0.0, m)).exp()
    return e / dead.where(1.0, e.sum(-1, keepdim=True))


def _max_weight(in_sz: int, out_sz: int, align_corners: bool) -> float:
    """The largest of the weights (1 - frac, frac) that linear interpolation along one axis
    uses (the fractions `interpolate` computes, here on the host)."""
    if align_corners:
        den = max(out_sz - 1, 1)
        nums = [k * (in_sz - 1) for k in range(out_sz)]
    else:
        den = out_sz * 2
        nums = [(2 * k + 1) * in_sz - out_sz for k in range(out_sz)]
    fracs = [(min(max(n, 0), (in_sz - 1) * den) % den) / den for n in nums]
    return max(max(f, 1 - f) for f in fracs) if fracs else 1.0


def _lerp_uint8(lo: Tensor, hi: Tensor, frac: Tensor, max_weight: float) -> Tensor:
    """torch's linear interpolation of uint8 images: integer weights with as many bits as
    int16 holds for the largest one, sum rounded, shifted back and clamped to 0..255, one
    axis at a time (so results equal torch's, where a float lerp cast back is off by one)."""
    bits = 0
    while bits < 22 and int(0.5 + max_weight * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    w_hi = (frac * (1 << bits) + 0.5).cast(dtypes.int32)
    w_lo = ((1 - frac) * (1 << bits) + 0.5).cast(dtypes.int32)
    acc = lo.cast(dtypes.int32) * w_lo + hi.cast(dtypes.int32) * w_hi + (1 << (bits - 1))
    return (acc >> bits).clip(0, 255).cast(dtypes.uint8)
