"""tinygrad's Tensor API beyond the core: ops composed from the core's movement, ALU and reduce ops.

In: a `Tensor` (this module is a mixin of it). Out: new lazy tensors. Nothing here adds an op
to the IR or a kernel by hand: every method is written with `reshape`, `expand`, `pad`,
`shrink`, `permute`, `flip`, elementwise ops, `where` and reductions, so the scheduler sees
ordinary graphs and fuses them like any other (tinygrad's `mixin/` modules are the model, and
most formulas follow theirs: MIT license).

Groups: creation, movement, elementwise, reductions (scans and arg-reductions included),
indexing by tensors (gather, scatter, one_hot), einsum. Convolutions, pooling, losses and
attention are in `runtime/nn.py`.
"""

from __future__ import annotations

import functools
import itertools
import math
import string
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import capture
from .buffer import Positions
from .dtype import (
    DType,
    accumulate_float,
    dtypes,
    least_float,
    python_scalar,
    scalar_int,
    stored_scalar,
    to_dtype,
    unary_result,
)
from .errors import AxisError, InvalidArgument, need_int, need_real
from .limits import check_buffer, max_work
from .ops import LIBM_CALLS, Ops, reduce_identity
from .realize import buffer_of, stored_view, view_base
from .running_max import key_index, running_values
from .running_sum import SCAN_BLOCK, running_product, running_sum
from .target import parallel_min_work, threads
from .uop import Shape, UOp, toposort
from .variable import actual, has_symbolic, refuse_symbolic, show, size_text
from .window_stack import window_stack

if TYPE_CHECKING:
    from .tensor import Tensor

# Where a method needs the Tensor class (a creation, an isinstance test), it takes
# `type(self)` (`cls` in a classmethod): tensor.py imports this mixin, so this module
# never imports tensor.py.

# (SCAN_BLOCK, running_sum.py's: a scan past the work limit runs in blocks of it)


def stored_value(value: Tensor, dt: DType, what: str, where: Tensor | None = None) -> Tensor:
    """A tensor stored as a scalar into a tensor of `dt` (`masked_fill(m, v)`, `t[mask] = v`;
    one element, or several broadcast), cast to `dt` as torch converts it: a value `dt`
    cannot hold is refused (`stored_scalar`; a cast wrapped uint8's Tensor(300) to 44 and NaN
    to 0). The value is read (a realize, as torch's `.item()`) only where the conversion can
    fail: not from bool, nor into a type that holds every value of the source's. The cast
    stays in the graph, so a float value keeps its gradient. Of several values (a broadcast
    fill, `masked_fill(m, y)`), only those stored, where `where` (the mask) is true, are
    checked: one never written is no overflow."""
    if value.dtype is not dt and not np.can_cast(value.dtype.np, dt.np, "safe"):
        seen = value.numpy()  # (several values, as a broadcast fill: their extremes)
        if where is not None and seen.size > 1:
            seen, hit = np.broadcast_arrays(seen, where.numpy())
            seen = seen[hit.astype(bool)]
        seen = seen.ravel()
        real = seen[~np.isnan(seen)] if value.dtype.is_float else seen
        for v in ([math.nan] if real.size < seen.size else []) + (
                [real.min().item(), real.max().item()] if real.size else []):
            stored_scalar(v, dt, what)
    return value.cast(dt)


def takes_requires_grad(fn: Any) -> Any:
    """A creation function given torch's and tinygrad's `requires_grad=` and `device=`, set on
    the tensor it returns (a function built on another, `normal` on `randn`, set it on its
    inner draw, not on what it returns). Any other keyword is refused by the function itself,
    naming it, as Python refuses it: a `**_` once swallowed `device=`, `requires_grad=` and a
    typo (`devcie=`) alike, silently."""

    @functools.wraps(fn)
    def make(*args: Any, requires_grad: bool | None = None,
             device: str | Sequence[str] | None = None, **kw: Any) -> Tensor:
        out = fn(*args, **kw)
        if device is not None:
            out = _placed(out, device, None)
        if requires_grad is not None:  # (after the placing: the variable is what we return)
            out.requires_grad = requires_grad
        return out

    return make


def half_in_float32(fn: Any) -> Any:
    """A float function of several ops (sigmoid, tanh, gelu, silu, and the other functions of
    exps: sinh, cosh, elu, celu, selu, softplus, mish, logsigmoid) computed on a float16 x in
    float32 and rounded to float16 once, as torch's half kernels and numpy's half loops
    compute one function: op by op in float16, each of tanh's dozen ops rounded (more error
    than the one rounding; the functions of exps were 1.6 to 8.5 ulps off torch's), and each
    rounding is two conversions gcc 12 keeps in one chain per vector (a float16
    sigmoid-and-tanh chain ran 0.3x torch's time; bench/sweep.py
    --held-out-4). Other dtypes: fn itself."""

    @functools.wraps(fn)
    def run(self: Tensor, *args: Any, **kw: Any) -> Tensor:
        if self.dtype is not dtypes.float16:
            return fn(self, *args, **kw)
        return fn(self.cast(dtypes.float32), *args, **kw).cast(dtypes.float16)

    return run


def _placed(out: Tensor, device: str | Sequence[str], axis: int | None) -> Tensor:
    """`out` on `device` (tinygrad's `device=` of a creation function): a device's name, or a
    tuple of devices to shard it over along `axis` (None: a whole copy on each). The `**_` of
    the creation functions swallowed `device=`, and the tensor stayed on the default device."""
    if isinstance(device, str):
        return out.to(device)
    if isinstance(out.device, tuple):
        out = out.to(out.device[0])
    return out.shard(device, axis)


def _placed_like(out: Tensor, like: Tensor) -> Tensor:
    """`out`, host draws on the default device, where `like` is and laid out as it is (torch's
    and tinygrad's `*_like`): `x + x.rand_like()` of a CPU:1 tensor was a DeviceMismatch."""
    device = like.device
    if isinstance(device, tuple):
        from .multi import layouts

        layout = layouts([like.uop])[0]
        return _placed(out, device, None if layout is None else layout[0])
    return out.to(device)


def broadcast_shape(*shapes: Shape) -> Shape:
    """The shape numpy broadcasts `shapes` to (sizes may be symbolic: equal UOps agree)."""
    if len(shapes) == 2 and shapes[0] == shapes[1]:  # the common case: nothing to align
        return tuple(shapes[0])
    if shapes and all(s == shapes[0] for s in shapes):
        return tuple(shapes[0])
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for axis in range(ndim):
        sizes = {p[axis] for p in padded} - {1}
        if len(sizes) > 1:
            # (a symbolic size agrees only with itself: shown name=value, after the ints, since
            # a UOp does not compare with an int)
            listed = ", ".join(show(tuple(s)) for s in shapes)
            had = ", ".join(map(size_text, sorted(sizes, key=lambda v: (
                isinstance(v, UOp), size_text(v) if isinstance(v, UOp) else v))))
            raise InvalidArgument(f"shapes {listed} cannot be broadcast together (axis {axis} "
                                  f"of the aligned shapes has sizes [{had}])")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _flat(args: tuple) -> tuple:
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def make_tuple(x: int | Sequence[int], n: int) -> tuple[int, ...]:
    return (x,) * n if isinstance(x, int) else tuple(x)


def window_arg(x: Any, n: int, what: str, least: int = 1) -> tuple[int, ...]:
    """A sliding window's kernel size, stride or dilation (`least=1`; an output padding:
    `least=0`) as n ints, one per windowed axis, refused as torch refuses it: a stride of 0
    divided by zero, a negative one reshaped to -1s, and a dilation of 0 or below or a tuple of
    the wrong length gave windows of other elements, silently."""
    t = (x,) * n if isinstance(x, (int, np.integer)) and not isinstance(x, bool) else x
    ok = isinstance(t, (tuple, list)) and len(t) == n and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= least for v in t)
    if not ok:
        raise InvalidArgument(f"{what} must be an int >= {least} or {n} of them (one per "
                              f"windowed axis), got {x!r}")
    return tuple(int(v) for v in t)


def _argsort(x: Sequence[int]) -> list[int]:
    return sorted(range(len(x)), key=lambda i: x[i])


def pad_mode(x: Tensor, arg: tuple[tuple[int, int], ...], mode: str) -> Tensor:
    """Non-constant padding (tinygrad's and torch's modes), from shrink, flip, cat and repeat.

    A negative pad is a cut, taken after the padding for reflect/replicate (they must see all
    the data) and before it for circular."""
    if mode == "circular":
        x = x.shrink(tuple((max(-b, 0), s - max(-a, 0)) for (b, a), s in zip(arg, x.shape)))
        pads = tuple((max(b, 0), max(a, 0)) for b, a in arg)
        if any(b > s or a > s for (b, a), s in zip(pads, x.shape)):
            raise InvalidArgument(f"circular padding {arg} wraps around more than once "
                             f"(shape {show(x.shape)})")
        orig = x.shape
        x = x.repeat(tuple(1 + bool(b) + bool(a) for b, a in pads))
        return x.shrink(tuple((0 if b == 0 else o - b, s if a == 0 else s - o + a)
                              for (b, a), o, s in zip(pads, orig, x.shape)))
    if mode not in ("reflect", "replicate"):
        raise NotImplementedError(f"pad mode {mode!r} is not supported (constant, reflect, "
                                  f"replicate, circular)")
    for d, (b, a) in enumerate((max(b, 0), max(a, 0)) for b, a in arg):
        s = x.shape[d]
        if mode == "reflect" and (b >= s or a >= s):
            raise InvalidArgument(f"reflect padding ({b}, {a}) must be less than the size {s} of "
                             f"axis {d}")
        if mode == "replicate" and s == 0 and (b or a):
            raise InvalidArgument(f"cannot replicate-pad the empty axis {d} of shape "
                                  f"{show(x.shape)}")
        def part(lo: int, hi: int, n: int, flip: bool, x: Tensor = x, d: int = d) -> Tensor:
            piece = x.shrink(tuple((lo, hi) if i == d else None for i in range(x.ndim)))
            if mode == "replicate":
                return piece.expand(tuple(n if i == d else -1 for i in range(x.ndim)))
            return piece.flip(d) if flip else piece
        pieces = []
        if b:
            pieces.append(part(0, 1, b, False) if mode == "replicate" else part(1, b + 1, b, True))
        pieces.append(x)
        if a:
            pieces.append(part(s - 1, s, a, False) if mode == "replicate"
                          else part(s - 1 - a, s - 1, a, True))
        x = pieces[0].cat(*pieces[1:], dim=d) if len(pieces) > 1 else x
    return x.shrink(tuple((max(-b, 0), s - max(-a, 0)) for (b, a), s in zip(arg, x.shape)))


class TensorOps:
    """Mixin of `Tensor`: the tinygrad API built from the core ops."""

    __slots__ = ()

    # ------------------------------------------------------------------ creation
    @classmethod
    @takes_requires_grad
    def empty(cls, *shape: Any, dtype: DType | str | None = None) -> Tensor:
        """No uninitialized memory here: an empty tensor is zeros."""
        return cls.zeros(*shape, dtype=dtype)

    @takes_requires_grad
    def full_like(self, fill_value: Any, dtype: DType | str | None = None) -> Tensor:
        """A tensor of self's shape filled with `fill_value`, of self's dtype and on self's
        device (sharded as self is) unless `dtype=` / `device=` say otherwise, as torch's: it
        was made on the default device, and `x + x.zeros_like()` of a CPU:1 x mixed devices."""
        return _placed_like(type(self).full(self.shape, fill_value, dtype or self.dtype), self)

    @takes_requires_grad
    def zeros_like(self, dtype: DType | str | None = None) -> Tensor:
        return self.full_like(0, dtype)

    @takes_requires_grad
    def ones_like(self, dtype: DType | str | None = None) -> Tensor:
        return self.full_like(1, dtype)

    def const_like(self, value: Any) -> Tensor:
        return self.full_like(value)

    @classmethod
    @takes_requires_grad
    def linspace(cls, start: float, stop: float, steps: int, dtype: DType | str | None = None
                 ) -> Tensor:
        start, stop, steps = (python_scalar(v) for v in (start, stop, steps))
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
            raise InvalidArgument(f"linspace needs steps, an int >= 0, got {size_text(steps)}")
        need_real("linspace: start", start)
        need_real("linspace: end", stop)
        scalar_int(start, "linspace: start")  # (torch's scalars: 2**64 was its nearest float)
        scalar_int(stop, "linspace: end")
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        if dt.is_bool:
            raise InvalidArgument("linspace does not make bool tensors")
        if steps == 1:
            return cls([start], dtype=dt)
        t = cls.arange(steps).cast(dtypes.float32) * ((stop - start) / (steps - 1)) + start
        return t.cast(dt)

    @classmethod
    @takes_requires_grad
    def randn(cls, *shape: Any, dtype: DType | str | None = None) -> Tensor:
        """Standard normal draws by Box-Muller over two `rand` tensors (seeded by manual_seed)."""
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        if not dt.is_float:  # (as torch: rounded normal draws were mostly 0, and -1 or 1)
            raise InvalidArgument(f"randn needs a float dtype, got {dt.name}")
        u = cls.rand(2, *_flat(shape), dtype=dtypes.float32)
        r = ((1 - u[1]).log() * -2).sqrt()
        return ((u[0] * (2 * math.pi)).cos() * r).cast(dt)

    @classmethod
    @takes_requires_grad
    def normal(cls, *shape: Any, mean: float = 0.0, std: float = 1.0,
               dtype: DType | str | None = None) -> Tensor:
        mean, std = python_scalar(mean), python_scalar(std)
        need_real("normal: mean", mean)
        need_real("normal: std", std)
        if not std >= 0:  # (NaN too; torch refuses the same)
            raise InvalidArgument(f"normal needs std >= 0, got {std}")
        return (std * cls.randn(*shape, dtype=dtype)) + mean

    @classmethod
    @takes_requires_grad
    def uniform(cls, *shape: Any, low: float = 0.0, high: float = 1.0,
                dtype: DType | str | None = None) -> Tensor:
        dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
        if not dt.is_float:
            raise InvalidArgument(f"uniform needs a float dtype, got {dt.name} (randint draws "
                                  "integers)")
        # the shape first: an initializer's bound from a negative fan is complex (glorot_uniform
        # of (-3, 2)), and a negative size is the error to name
        shape = cls.empty(*shape).shape
        low, high = python_scalar(low), python_scalar(high)
        need_real("uniform: low", low)
        need_real("uniform: high", high)
        if not low <= high:  # (NaN too; torch refuses the same)
            raise InvalidArgument(f"uniform needs low <= high, got [{low}, {high})")
        # drawn with the dtype's digits, as torch's: a float64 uniform drawn in float32 held
        # 24 random bits, and a float16 one rounded 24 bits to 1.0 (`high`) once in ~2000
        work = dtypes.float64 if dt is dtypes.float64 else dtypes.float32
        u = cls.rand(*shape, dtype=dt).cast(work)
        return ((high - low) * u + low).cast(dt)

    @classmethod
    @takes_requires_grad
    def randint(cls, *shape: Any, low: int = 0, high: int = 10, dtype: DType | str = dtypes.int32
                ) -> Tensor:
        low, high = python_scalar(low), python_scalar(high)
        need_int("randint: low", low)
        need_int("randint: high", high)
        dt = to_dtype(dtype)
        if not dt.is_int or low >= high:
            raise InvalidArgument(f"randint needs an int dtype and low < high, got {dt.name}, "
                             f"[{low}, {high})")
        if low < dt.min or high - 1 > dt.max:
            raise InvalidArgument(f"randint: [{low}, {high}) does not fit {dt.name}")
        # drawn as integers on the host: a float draw scaled to [low, high) rounded away from
        # most integers past 2^24 and could land on a value outside the range
        shape = cls.empty(*shape).shape  # (checked there)
        refuse_symbolic("randint", shape)  # (drawn on the host: a buffer)
        check_buffer(math.prod(shape), dt, "randint")
        return cls(cls._generator().integers(low, high, shape, dtype=dt.np), dtype=dt)

    @classmethod
    @takes_requires_grad
    def scaled_uniform(cls, *shape: Any, **kw: Any) -> Tensor:
        """Uniform in [-1, 1) scaled by 1/sqrt(numel) (tinygrad's initializers follow)."""
        shape = _flat(shape)
        if 0 in shape:  # (no elements: a fan of 0 divided by zero; torch returns it as is)
            return cls.zeros(*shape, dtype=kw.get("dtype"))
        return cls.uniform(*shape, low=-1.0, high=1.0, **kw) * math.prod(shape) ** -0.5

    @classmethod
    @takes_requires_grad
    def glorot_uniform(cls, *shape: Any, **kw: Any) -> Tensor:
        shape = _flat(shape)
        bound = (6 / (shape[0] + math.prod(shape[1:]))) ** 0.5 if shape else 1.0
        return cls.uniform(*shape, low=-bound, high=bound, **kw)

    @classmethod
    @takes_requires_grad
    def kaiming_uniform(cls, *shape: Any, a: float = 0.01, **kw: Any) -> Tensor:
        shape = _flat(shape)
        if 0 in shape:  # (no elements: a fan of 0 divided by zero; torch returns it as is)
            return cls.zeros(*shape, dtype=kw.get("dtype"))
        bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(math.prod(shape[1:]))
        return cls.uniform(*shape, low=-bound, high=bound, **kw)

    @classmethod
    @takes_requires_grad
    def kaiming_normal(cls, *shape: Any, a: float = 0.01, **kw: Any) -> Tensor:
        shape = _flat(shape)
        if 0 in shape:  # (no elements: a fan of 0 divided by zero; torch returns it as is)
            return cls.zeros(*shape, dtype=kw.get("dtype"))
        std = math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(math.prod(shape[1:]))
        return cls.normal(*shape, mean=0.0, std=std, **kw)

    @takes_requires_grad
    def rand_like(self, dtype: DType | str | None = None) -> Tensor:
        return _placed_like(type(self).rand(*self.shape, dtype=dtype or self.dtype), self)

    @takes_requires_grad
    def randn_like(self, dtype: DType | str | None = None) -> Tensor:
        return _placed_like(type(self).randn(*self.shape, dtype=dtype or self.dtype), self)

    def clone(self) -> Tensor:
        """A copy that is its own buffer once realized (the graph reads the same values)."""
        return self.contiguous()

    def detach(self) -> Tensor:
        return self

    # ------------------------------------------------------------------ dtype helpers
    def float(self) -> Tensor: return self.cast(dtypes.float32)
    def half(self) -> Tensor: return self.cast(dtypes.float16)
    def double(self) -> Tensor: return self.cast(dtypes.float64)
    def int(self) -> Tensor: return self.cast(dtypes.int32)
    def long(self) -> Tensor: return self.cast(dtypes.int64)
    def short(self) -> Tensor: return self.cast(dtypes.int16)
    def bool(self) -> Tensor: return self.cast(dtypes.bool)

    def is_floating_point(self) -> bool:
        return self.dtype.is_float

    def element_size(self) -> int:
        return self.dtype.itemsize

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[self._axis(dim)]

    # ------------------------------------------------------------------ movement
    def view(self, *shape: Any) -> Tensor:
        return self.reshape(*shape)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        dim = self._axis(dim)
        return self.reshape(self.shape[:dim] + tuple(sizes) + self.shape[dim + 1:])

    def repeat(self, *repeats: Any) -> Tensor:
        """Tile the tensor `repeats[i]` times along axis i (torch's repeat, numpy's tile)."""
        reps = _flat(repeats)
        if len(reps) < self.ndim:
            raise InvalidArgument(f"repeat {reps} needs at least one count per axis of "
                                  f"{show(self.shape)}")
        base = (1,) * (len(reps) - self.ndim) + self.shape
        x = self.reshape(tuple(v for s in base for v in (1, s)))
        x = x.expand(tuple(v for r, s in zip(reps, base) for v in (r, s)))
        return x.reshape(tuple(r * s for r, s in zip(reps, base)))

    def repeat_interleave(self, repeats: int, dim: int | None = None) -> Tensor:
        x, dim = (self.flatten(), 0) if dim is None else (self, self._axis(dim))
        shp = x.shape
        x = x.reshape(shp[:dim + 1] + (1,) + shp[dim + 1:])
        x = x.expand(shp[:dim + 1] + (repeats,) + shp[dim + 1:])
        return x.reshape(shp[:dim] + (shp[dim] * repeats,) + shp[dim + 1:])

    def split(self, sizes: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
        dim = self._axis(dim)
        refuse_symbolic("split", self.shape, (dim,))
        n = self.shape[dim]
        if isinstance(sizes, int):
            sizes = [min(sizes, n - i) for i in range(0, max(1, n), max(1, sizes))]
        if sum(sizes) != n:
            raise InvalidArgument(f"split sizes {list(sizes)} must sum to {n}, the size of axis "
                                  f"{dim}")
        bounds = list(itertools.accumulate(sizes, initial=0))
        return tuple(self.shrink(tuple((b, e) if i == dim else None for i in range(self.ndim)))
                     for b, e in zip(bounds, bounds[1:]))

    def chunk(self, chunks: int, dim: int = 0) -> list[Tensor]:
        if chunks <= 0:
            raise InvalidArgument(f"chunk needs a positive number of chunks, got {chunks}")
        refuse_symbolic("chunk", self.shape, (self._axis(dim),))
        n = self.shape[self._axis(dim)]
        return list(self.split(-(-n // chunks) if n else 1, dim)) if n else [self] * chunks

    def roll(self, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
             ) -> Tensor:
        given = shifts if isinstance(shifts, (tuple, list)) else (shifts,)
        if not given or not all(isinstance(s, (int, np.integer)) and not isinstance(
                s, (bool, np.bool_)) for s in given):  # (a str shift met `s %= n`)
            raise InvalidArgument(f"roll shifts must be an int or ints, got {shifts!r}")
        shifts = [int(s) for s in given] if isinstance(shifts, (tuple, list)) else int(shifts)
        if dims is None:
            if not isinstance(shifts, int) and len(shifts) != 1:
                raise InvalidArgument(f"roll without dims takes one shift, got {shifts}")
            refuse_symbolic("roll", self.shape)
            return self.flatten().roll(shifts, 0).reshape(self.shape)
        shifts, dims = make_tuple(shifts, 1), make_tuple(dims, 1)
        if len(shifts) != len(dims):  # torch's rule: one shift per dim, never broadcast
            raise InvalidArgument(f"roll takes one shift per dim, got shifts {shifts} and dims "
                                  f"{dims}")
        x = self
        for s, d in zip(shifts, dims):
            d = self._axis(d)
            refuse_symbolic("roll", x.shape, (d,))
            n = x.shape[d]
            if n == 0:
                continue
            s %= n
            if s:
                a, b = x.split([n - s, s], d)
                x = b.cat(a, dim=d)
        return x

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        d1, d2 = self._axis(dim1), self._axis(dim2)
        if d1 == d2:
            raise InvalidArgument(f"diagonal needs two different axes, got {dim1} and {dim2}")
        refuse_symbolic("diagonal", self.shape, (d1, d2))
        x = self.permute(*[i for i in range(self.ndim) if i not in (d1, d2)], d1, d2)
        r, c = x.shape[-2:]
        if offset >= 0:
            x = x.shrink((*[None] * (x.ndim - 2), None, (min(offset, c), c)))
        else:
            x = x.shrink((*[None] * (x.ndim - 2), (min(-offset, r), r), None))
        r, c = x.shape[-2:]
        n = min(r, c)
        x = x.shrink((*[None] * (x.ndim - 2), (0, n), (0, n)))
        # the diagonal of an (n, n) grid: rows of length n+1 put it in column 0
        flat = x.reshape(*x.shape[:-2], n * n).pad((*[None] * (x.ndim - 2), (0, n)))
        return flat.reshape(*x.shape[:-2], n, n + 1)[..., 0]

    def diag(self) -> Tensor:
        if self.ndim != 1:
            raise InvalidArgument(f"diag needs a 1-d tensor, got shape {show(self.shape)}")
        n = self.shape[0]
        T = type(self)
        return T.eye(n, dtype=dtypes.bool).where(self.reshape(1, n).expand(n, n),
                                                 T.zeros(n, n, dtype=self.dtype))

    def meshgrid(self, *args: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
        if indexing not in ("ij", "xy"):
            raise InvalidArgument(f"meshgrid indexing must be 'ij' or 'xy', got {indexing!r}")
        tensors = [self, *args]
        if len(tensors) == 1:
            return (self,)
        if indexing == "xy":
            tensors[0], tensors[1] = tensors[1], tensors[0]
        shape = tuple(t.numel() for t in tensors)
        out = [t.reshape(tuple(-1 if i == j else 1 for j in range(len(shape)))).expand(shape)
               for i, t in enumerate(tensors)]
        if indexing == "xy":  # the grid of (y, x, ...), outputs back in the inputs' order
            out[0], out[1] = out[1], out[0]
        return tuple(out)

    def _pool(self, k_: tuple[int, ...], stride: int | tuple[int, ...] = 1,
              dilation: int | tuple[int, ...] = 1) -> Tensor:
        """Sliding windows over the last len(k_) axes as movement ops only (tinygrad's trick):
        repeat each axis, re-read it with rows `dilation` longer, then stride by reshaping.
        Out: shape (..., *out_sizes, *k_)."""
        n = len(k_)
        k_, s_, d_, o_ = self._pool_sizes(k_, stride, dilation)
        noop, i_ = [None] * (self.ndim - n), self.shape[-n:]
        if all(k <= s for k, s in zip(k_, s_)) and all(d == 1 for d in d_):
            return self._pool_apart(k_, s_, o_)
        f_ = [max(1, -(-(o * s - d) // i)) for o, s, i, d in zip(o_, s_, i_, d_)]
        x = self.repeat([1] * len(noop) + [-(-k * (i * f + d) // i)
                                           for k, i, d, f in zip(k_, i_, d_, f_)])
        x = x._shrink_to(noop + [k * (i * f + d) for k, i, d, f in zip(k_, i_, d_, f_)])
        x = x.reshape(*x.shape[:len(noop)],
                      *[v for k, i, d, f in zip(k_, i_, d_, f_) for v in (k, i * f + d)])
        x = x._shrink_to(noop + [v for k, o, s in zip(k_, o_, s_) for v in (k, o * s)])
        x = x.reshape(*x.shape[:len(noop)], *[v for k, o, s in zip(k_, o_, s_) for v in (k, o, s)])
        x = x._shrink_to(noop + [v for k, o in zip(k_, o_) for v in (k, o, 1)])
        x = x.reshape(*x.shape[:len(noop)], *[v for k, o in zip(k_, o_) for v in (k, o)])
        m = len(noop)
        return x.permute(*range(m), *[m + i * 2 + 1 for i in range(n)],
                         *[m + i * 2 for i in range(n)])

    def _pool_sizes(self, k_: tuple[int, ...], stride: int | tuple[int, ...],
                    dilation: int | tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
        """(kernel, strides, dilations, output sizes) of windows `k_` over the last len(k_)
        axes, each argument checked as torch checks it (`window_arg`)."""
        n = len(k_)
        if has_symbolic(self.shape):
            raise InvalidArgument(f"pooling windows over a tensor of symbolic shape "
                                  f"{show(self.shape)}: they are cut by reshapes that merge "
                                  "axes, which a symbolic size cannot take (pool, unfold and "
                                  "conv need concrete shapes)")
        if self.ndim < n:
            raise InvalidArgument(f"cannot pool shape {show(self.shape)} with a {n}-d kernel {k_}")
        k_ = window_arg(k_, n, "kernel size", least=0)  # (an empty kernel: empty windows)
        s_, d_ = window_arg(stride, n, "stride"), window_arg(dilation, n, "dilation")
        i_ = self.shape[-n:]
        if any(d * (k - 1) + 1 > i for k, d, i in zip(k_, d_, i_)):
            raise InvalidArgument(f"kernel {k_} (dilation {d_}) is larger than the input {i_}")
        return k_, s_, d_, tuple(-(-(i - d * (k - 1)) // s) for i, d, k, s in zip(i_, d_, k_, s_))

    def _window_sum(self, k_: tuple[int, ...], stride: int | tuple[int, ...] = 1,
                    dilation: int | tuple[int, ...] = 1) -> Tensor:
        """The sum of each sliding window over the last len(k_) axes, shape (..., *out_sizes):
        `_pool(...).sum(window axes)` for windows that overlap, one axis at a time (a sum is
        separable), each axis the sum of its k strided views (`x[j*d :: s]`, j < k). Its
        gradient is k pads per axis; `_pool`'s repeat trick sums over every repeat of the input
        (R >= k per axis, each term with index arithmetic), 7x torch's time for avg_pool2d of
        5x5 windows at stride 2. The sum runs over a window in row-major order. Built on the
        nodes (a few movement ops per view, each as a Tensor op cost more than the kernel)."""
        k_, s_, d_, o_ = self._pool_sizes(k_, stride, dilation)
        out = self.uop
        for ax, (k, s, d, o) in enumerate(zip(k_, s_, d_, o_)):
            a = self.ndim - len(k_) + ax
            total = None
            for j in range(k):
                view = _strided(out, a, j * d, o, s)
                total = view if total is None else total.alu(Ops.ADD, view)
            out = total
        return type(self)(out)

    def _window_max(self, k_: tuple[int, ...], stride: int | tuple[int, ...],
                    dilation: int | tuple[int, ...],
                    pads: Sequence[tuple[int, int]]) -> Tensor:
        """The max of each sliding window over the last len(k_) axes, each axis padded by
        `pads` (before, after) with the dtype's least value: max_pool2d of windows that
        overlap. A max is separable, so one axis at a time: a reduce max over the k offsets
        of a window, marked CONTIGUOUS_BACKWARD so that grad_pool_stack gives the gradient to
        torch's element (see the loop). The offsets are stacked (`window_stack`) views of the
        axis cut into rows of `stride` elements: offset j of window w is row w + (j*d) // s,
        column (j*d) % s, so each view is a shrink and its gradient a pad, read back at
        (i // s, i % s) of an input index i, shared by the k views (a view strided by a
        reshape had its own % and // per view, of an index that may be negative).
        `_pool`'s repeat trick summed over every repeat of the input (k+1 per axis, each with
        index arithmetic), and its windows' first maximum took prefix-OR steps over all k*k
        elements: 6x torch's time for 3x3 windows at stride 2."""
        n = len(k_)
        whole = type(self)(self.uop.pad(((0, 0),) * (self.ndim - n) + tuple(pads)))
        k_, s_, d_, o_ = whole._pool_sizes(k_, stride, dilation)  # (checked as torch checks)
        out = self
        # the last axis first: a window's first maximum in row-major order is then the first
        # in the first row (plane, ...) that holds one; first axis first, in column-major order
        for ax in reversed(range(n)):
            out = out._axis_max(self.ndim - n + ax, k_[ax], s_[ax], d_[ax], o_[ax], pads[ax])
        return out

    def _axis_max(self, a: int, k: int, s: int, d: int, o: int, pad: tuple[int, int]) -> Tensor:
        """`_window_max` along axis a alone: o windows of k elements d apart, s apart."""
        before, after = pad
        rows = (k - 1) * d // s + o  # the rows of s elements that some window reads
        extra = rows * s - (self.shape[a] + before + after)  # (< 0: elements no window reads)

        def on_axis(pair: tuple, ndim: int, at: int = a) -> tuple:
            return tuple(pair if i == at else (0, 0) for i in range(ndim))

        padded = self.pad(on_axis((before, after + max(extra, 0)), self.ndim),
                          value=self.dtype.min).uop
        padded = padded.shrink(tuple((0, size + min(extra, 0)) if i == a else (0, size)
                                     for i, size in enumerate(padded.shape)))
        shape = tuple(padded.shape)
        cut = padded.reshape(shape[:a] + (rows, s) + shape[a + 1:])
        views = []
        for j in range(k):
            row, col = divmod(j * d, s)
            bounds = [(0, size) for size in cut.shape]
            bounds[a], bounds[a + 1] = (row, row + o), (col, col + 1)
            views.append(cut.shrink(tuple(bounds)).reshape(shape[:a] + (o,) + shape[a + 1:]))
        if k == 1:  # one element per window: the view is the max
            return type(self)(views[0])
        return type(self)(window_stack(views).f(Ops.CONTIGUOUS_BACKWARD)).max(-1)

    def _pool_apart(self, k_: tuple[int, ...], s_: tuple[int, ...], o_: list[int]) -> Tensor:
        """Windows that do not overlap (k <= stride, no dilation), tinygrad's other path: each
        axis cut into o blocks of `stride` by a reshape, each block shrunk to its window. The
        same windows as the repeat trick, whose gradient sums over every repeat of the input
        (81 reads per element for an 8x8 max_pool2d, 4225 for 64x64); this one's is a pad."""
        n, m = len(k_), self.ndim - len(k_)
        noop, i_ = [None] * m, self.shape[-n:]
        # the last block may run past the input by stride - k at most: never inside a window
        x = self.pad(tuple(noop + [(0, max(0, o * s - i)) for i, o, s in zip(i_, o_, s_)]))
        x = x._shrink_to(noop + [o * s for o, s in zip(o_, s_)])
        x = x.reshape(*x.shape[:m], *[v for o, s in zip(o_, s_) for v in (o, s)])
        x = x._shrink_to(noop + [v for o, k in zip(o_, k_) for v in (o, k)])
        return x.permute(*range(m), *[m + i * 2 for i in range(n)],
                         *[m + i * 2 + 1 for i in range(n)])

    def _shrink_to(self, shape: Sequence[int | None]) -> Tensor:
        return self.shrink(tuple(None if s is None else (0, s) for s in shape))

    def unfold(self, dim: int, size: int, step: int) -> Tensor:
        if size < 0 or step <= 0:
            raise InvalidArgument(f"unfold needs size >= 0 and step > 0, got {size}, {step}")
        dim = self._axis(dim)
        refuse_symbolic("unfold", self.shape, (dim,))
        if size > self.shape[dim]:
            raise InvalidArgument(f"unfold size {size} exceeds axis {dim} of shape "
                                  f"{show(self.shape)}")
        order = tuple(i for i in range(self.ndim) if i != dim) + (dim,)
        return self.permute(order)._pool((size,), step).permute(*_argsort(order), self.ndim)

    def tril(self, diagonal: int = 0) -> Tensor:
        above = _tri(self, self.shape[-2], self.shape[-1], diagonal + 1)
        return above.where(self.zeros_like(), self)

    def triu(self, diagonal: int = 0) -> Tensor:
        upper = _tri(self, self.shape[-2], self.shape[-1], diagonal)
        return upper.where(self, self.zeros_like())

    # ------------------------------------------------------------------ elementwise
    def _float(self) -> Tensor:
        return self.cast(least_float(self.dtype))

    def _integral(self, name: str, fn: Any) -> Tensor | None:
        """trunc, floor, ceil and round of a non-float: numpy's dtype for it (bool's floor is
        bool, its round float16) and the value itself; None for a float, which they compute."""
        if self.dtype.is_float:
            return None
        dt = unary_result(name, fn, self.dtype)
        return self.copy_node() if dt is self.dtype else self.cast(dt)

    def copy_node(self) -> Tensor:
        """x's value as a node of its own: numpy's floor of an int or `+x` is a new array, so
        a write into it (`y = x.floor(); y += 1`) must not reach x, as it did when x itself
        was returned. MAX(x, x), which the rules fold back to x (max_self): no kernel."""
        return self.maximum(self)

    def trunc(self) -> Tensor:
        if (x := self._integral("trunc", np.trunc)) is not None:
            return x
        return type(self)(self.uop.alu(Ops.TRUNC))

    def floor(self) -> Tensor:
        if (x := self._integral("floor", np.floor)) is not None:
            return x
        b = self.trunc()
        return (self < b).where(b - 1, b)

    def ceil(self) -> Tensor:
        if (x := self._integral("ceil", np.ceil)) is not None:
            return x
        b = self.trunc()
        return (self > b).where(b + 1, b)

    def round(self) -> Tensor:
        """Half to even, as numpy and torch: x's integer part r, one step away from 0 past a
        half (and at a half when r is odd). x - r is exact, so no addition rounds: x - 0.5
        rounded to even past 2^23 in float32 (8388609 gave 8388610), and a result of 0 is
        r, with x's sign (round(-0.4) is -0.0; (x + 0.5).floor() made it 0.0)."""
        if (x := self._integral("round", np.round)) is not None:
            return x
        r = self.trunc()
        frac, half = (self - r).abs(), r / 2.0
        up = (frac > 0.5) | ((frac == 0.5) & (half.trunc() != half))
        return up.where((self < 0).where(r - 1, r + 1), r)

    def sign(self) -> Tensor:
        """-1, 0 or 1; NaN for NaN (numpy's, jax's; torch's sign gives 0), where a NaN took
        the `x != 0` branch and became 1. No gradient (torch's is 0 everywhere, NaN too)."""
        unary_result("sign", np.sign, self.dtype)  # numpy's refusal for bool
        out = (self != 0).where((self < 0).where(-1, 1), 0).cast(self.dtype)
        return self.isnan().where(self.detach(), out) if self.dtype.is_float else out

    def square(self) -> Tensor:
        dt = unary_result("square", np.square, self.dtype)  # bool's is int8, as numpy's
        x = self if dt is self.dtype else self.cast(dt)
        return x * x

    def cos(self) -> Tensor:
        """The IR's COS, the C library's cos (libmvec's in vector loops: within 2 ulps in
        float32, 3 in float64, at any x). sin(pi/2 - x) rounded pi/2 - x, |x| ulps; 1 - 2
        sin(x/2)^2 was a few ulps of 1 absolutely, 1e8 ulps off next to cos's zeros in float32
        and 2e18 in float64 (bench/ulp.py)."""
        return self._unary_float(Ops.COS)
    def tan(self) -> Tensor:
        """sin x / cos x, both the C library's (each exactly reduced at any x, within 3 ulps in
        float64's vector loops), computed in float64 and rounded once (a float32 x: within half
        an ulp). Within 2 ulps in float64 (bench/ulp.py), where the forms before were 8: 2
        sin(x)^2 / sin(2x) near a pole and a Payne-Hanek reduction past 2^1023, where 2x
        overflows (1 - 2 sin(x/2)^2, before COS was an op, cancelled at the poles: tan(pi/2) in
        float64 was 4.5e15, not 1.6e16, and 1400 ulps off near them past 2^1023)."""
        x = self._float().cast(dtypes.float64)
        return (x.sin() / x.cos()).cast(self._float().dtype)
    def log2(self) -> Tensor: return self._unary_float(Ops.LOG2)
    def exp2(self) -> Tensor: return self._unary_float(Ops.EXP2)
    def log10(self) -> Tensor: return self.log2() * math.log10(2)
    def rsqrt(self) -> Tensor: return self.sqrt().reciprocal()
    @half_in_float32
    def sinh(self) -> Tensor:
        """Below |x| = 1, -expm1(-2x) e^x / 2 for x >= 0 and expm1(2x) e^-x / 2 below (each
        expm1 reads a value <= 0); above, (e^x - e^-x) / 2, which cancelled near 0: sinh(1e-9)
        was 0, 1e-3 relative at 1e-5 in float32. Each side reads a harmless value where the
        other is taken (0 * e^inf in the gradient would be NaN); -0.0 stays -0.0."""
        x = self._float()
        small = x.abs() < 1
        xs, xl = small.where(x, 0.0), small.where(2.0, x)
        pos = xs >= 0
        m = _expm1_nonpositive(pos.where(-2 * xs, 2 * xs))
        near = pos.where(-m * xs.exp(), m * (-xs).exp()) / 2
        return small.where(near, _half_exp(xl) - _half_exp(-xl))
    @half_in_float32
    def cosh(self) -> Tensor:
        x = self._float()
        return _half_exp(x) + _half_exp(-x)
    def atanh(self) -> Tensor:
        """log1p(2x / (1 - x)) / 2 below |x| = 0.5 (log((1 + x) / (1 - x)) cancelled near 0:
        atanh(1e-9) was 0), the quotient's log above it (its log1p would be inf / inf at 1).
        At |x| = 1, log(1 + x) - log(1 - x): the quotient's gradient there was 0 * inf = NaN
        (1/q with q = inf, times q' = inf), where torch's 1 / (1 - x^2) is inf; the
        difference is 2 ulp off elsewhere, the quotient 1.6, so it serves only the ends."""
        x = self._float()
        a = x.abs()
        small, end, inf = a < 0.5, a == 1, a == math.inf
        # (at +-inf the quotient is inf / inf: a NaN that passes a NaN gradient; torch's
        # 1 / (1 - x^2) there is -0, and the value NaN, a constant here)
        xl = (small | end | inf).where(0.75, x)
        xs, xe = small.where(x, 0.0), end.where(x, 0.0)
        big = end.where((1 + xe).log() - (1 - xe).log(), ((1 + xl) / (1 - xl)).log())
        return small.where(_log1p(2 * xs / (1 - xs)), inf.where(math.nan, big)) / 2
    def asinh(self) -> Tensor:
        """log(|x| + sqrt(x^2 + 1)) with x's sign: for x < 0, x + sqrt(x^2 + 1) cancels (NaN at
        -inf, 0 digits at -1e4 in float32). Past 1/sqrt(eps), x^2 + 1 is x^2 (and x^2 may
        overflow): log(2|x|) = log|x| + ln 2; below sqrt(eps), asinh x is x to rounding."""
        x = self._float()
        eps = _eps(x.dtype)
        a = x.abs()
        small, large = a < math.sqrt(eps), a > 1 / math.sqrt(eps)
        # each side reads a where it is chosen and a harmless 1 elsewhere: a where passes the
        # other side a 0 gradient, and 0 * log'(0) or 0 * (x^2)'(inf) would be NaN
        am, al = (small | large).where(1.0, a), large.where(a, 1.0)
        # log1p(a + a^2 / (1 + sqrt(a^2 + 1))): log(a + sqrt(a^2 + 1)) cancelled near 0
        # (asinh(0.0313) was 0.0308 in float16, 1e-9 relative off in float64)
        sq = am.square()
        mid = _log1p(am + sq / (1 + (sq + 1).sqrt()))
        big = al.log() + math.log(2)
        return small.where(x, large.where(big, mid).copysign(x))

    def acosh(self) -> Tensor:
        """log1p(x - 1 + sqrt(x - 1) sqrt(x + 1)), and past 1/sqrt(eps) log x + ln 2 (x^2
        overflows first). (log(x + sqrt(x^2 - 1)) cancelled near 1: 2e-11 relative at
        1 + 1e-7 in float64.) Below 1 NaN: of a large negative x the old formula gave inf
        (x^2 overflowed) or -inf. The gradient there is torch's, its formula's
        1 / sqrt(x^2 - 1), for a function with no value: finite below -1 (the gradient of
        -acosh(-x), whose value the added NaN hides), inf at -1, NaN between."""
        x = self._float()
        eps = _eps(x.dtype)
        neg = x <= -1
        z = neg.where(-x, x)
        large = z > 1 / math.sqrt(eps)
        zm, zl = large.where(2.0, z) - 1, large.where(z, 2.0)  # (as asinh's: no NaN gradient)
        # (sqrt(z - 1) sqrt(z + 1): the product's gradient at 1 is inf * 0, torch's inf)
        out = large.where(zl.log() + math.log(2), _log1p(zm + zm.sqrt() * (zm + 2).sqrt()))
        return neg.where(-out, out) + (x < 1).where(math.nan, 0.0).cast(x.dtype)

    def asin(self) -> Tensor:
        """fdlibm's asin: below 0.5 x + x R(x^2), above pi/2 - 2 asin(sqrt((1 - |x|) / 2)),
        R its rational fit, good to float64. (Abramowitz & Stegun 4.4.46 was 2e-8 absolute:
        1e-5 relative near 0, in float32 too, and its sign(x) * ... had gradient 0 at 0.)"""
        x = self._float()
        small, s = _asin_halves(x)
        return small.where(_asin_small(small.where(x, 0.0)), (math.pi / 2 - 2 * _asin_small(s))
                           * x.sign())

    def acos(self) -> Tensor:
        """fdlibm's acos: pi/2 - asin(x) below 0.5; above, 2 asin(sqrt((1 - |x|) / 2)) (or pi
        minus it for x < 0), which does not cancel as x nears 1."""
        x = self._float()
        small, s = _asin_halves(x)
        half = 2 * _asin_small(s)
        return small.where(math.pi / 2 - _asin_small(small.where(x, 0.0)),
                           (x > 0).where(half, math.pi - half))

    def atan(self) -> Tensor:
        """asin(x / sqrt(1 + x^2)) for |x| <= 1; past it pi/2 - atan(1/|x|) with x's sign (x^2
        overflowed past 1e19 in float32: atan(1e20) was 0, atan(inf) NaN). Each side reads a
        harmless value where the other is taken, so neither passes a NaN gradient."""
        x = self._float()
        a = x.abs()
        small = a <= 1
        xs, u = small.where(x, 0.0), small.where(2.0, a).reciprocal()
        inner = lambda v: (v / (1 + v * v).sqrt()).asin()  # noqa: E731 - |v| <= 1: no overflow
        return small.where(inner(xs), (math.pi / 2 - inner(u)) * x.sign())

    @half_in_float32
    def tanh(self) -> Tensor:
        """Cephes' tanh: below |x| = 0.625 x (1 + z P(z) / Q(z)) with z = x^2, good to float64
        (the product form keeps -0.0); above, 1 - 2e / (1 + e) with e = exp(-2|x|) <= 0.29, no
        cancellation, and x's sign. 2 sigmoid(2x) - 1 cancelled near 0: 1e-3 relative at
        1e-5 in float32, and tanh(1e-8) was 6e-8. -2|x| kept at or above `_exp_floor` changes
        no bit (past 40 tanh is +-1 even in float64) and keeps the gradient at +-inf 0."""
        x = self._float()
        small = x.abs() < 0.625
        # each side reads a harmless value where the other is taken (no NaN gradient)
        xs, xl = small.where(x, 0.0), small.where(1.0, x)
        z = xs * xs
        near = xs * (1 + z * (_poly(z, _TANH_P) / _poly(z, _TANH_Q)))
        e = (-2 * xl.abs()).maximum(_exp_floor(x.dtype)).exp()
        far = 1 - 2 * e / (1 + e)
        return small.where(near, (xl < 0).where(-far, far))

    def erf(self) -> Tensor:
        """fdlibm's erf (s_erf.c), each piece good to float64: below |x| = 0.84375 x + x P(z) /
        Q(z) at z = x^2; below 1.25 erx + P(s) / Q(s) at s = |x| - 1; then 1 - exp(-x^2 -
        0.5625 + P(u) / Q(u)) / |x| at u = 1 / x^2 (two fits, split at 1 / 0.35; erf's 1 - r
        keeps r's error of a few ulps of r < 0.08, so one exp of the whole argument does, where
        erfc needs fdlibm's split of x^2): its value is 1 past 6, its gradient right to 28
        (`_exp_floor` ends it); past 28, 1. x's sign throughout. The four fits are one rational
        whose coefficients each lane picks (one division, not four). A&S 7.1.26 above 0.84375
        was 1.5e-7 absolute (4 ulps in float32, 1e9 in float64), its gradient 1e-5 off, and
        NaN at +-inf (now 0: the constant 1 is taken there)."""
        x = self._float()
        small, xs, r, mag, _ = _erf_parts(x)
        return small.where(xs + xs * r, small.where(1.0, x).sign() * mag)

    def clamp(self, min_: Any = None, max_: Any = None, *, min: Any = None,  # noqa: A002
              max: Any = None) -> Tensor:  # noqa: A002 (torch's keywords, `clamp(min=0)`)
        """torch's clamp: min(max(x, min_), max_), NaN where any of them is NaN (a NaN bound
        was ignored), x itself where it is in range (its -0.0 kept at a 0.0 bound). The
        gradient is torch's clamp_backward: to x where min_ <= x <= max_ (not at NaN: it got
        1 there), to min_ where x < min_ < max_, to max_ where x > max_ or max_ < min_.
        torch's keywords `min=`/`max=` name the bounds too (tinygrad's are `min_`/`max_`)."""
        if (min is not None and min_ is not None) or (max is not None and max_ is not None):
            raise TypeError("clamp: a bound given twice (min_ and min, or max_ and max)")
        min_, max_ = min_ if min is None else min, max_ if max is None else max
        if min_ is None and max_ is None:
            raise InvalidArgument("clamp needs at least one of min_ and max_")
        if self.dtype.is_int:  # numpy 2: a Python int bound past the dtype clips nothing
            lo, hi = self.dtype.min, self.dtype.max
            # one that clips everything is refused, as numpy and torch refuse it: the value
            # it would give is no number of the dtype
            above = type(min_) is int and min_ > hi
            if above or (type(max_) is int and max_ < lo):
                raise OverflowError(f"clamp bound {min_ if above else max_} is outside "
                                    f"{self.dtype.name}'s range [{lo}, {hi}]: every value would "
                                    f"be clipped to a number {self.dtype.name} cannot hold")
            min_ = None if type(min_) is int and min_ <= lo else min_
            max_ = None if type(max_) is int and max_ >= hi else max_
            if min_ is None and max_ is None:
                return self.copy_node()  # a new tensor, as numpy's clip returns a copy
        x, lo, hi = self, min_, max_
        value = x if lo is None else x.maximum(lo)
        value = (value if hi is None else value.minimum(hi)).detach()
        if lo is None:
            keep, bounds = x <= hi, [(x > hi, hi)]
        elif hi is None:
            keep, bounds = x >= lo, [(x < lo, lo)]
        else:
            keep = (x >= lo) & (x <= hi)
            bounds = [((x < lo) & (lo < hi), lo), ((x > hi) | (hi < lo), hi)]
        out = value
        for cond, bound in bounds:
            if isinstance(bound, TensorOps):  # a constant bound needs no gradient: `value` is it
                # the bound where it is the value (max_ even where x or min_ is NaN, as
                # torch's gradient: NaN subtracted keeps the value NaN there; 0.0 keeps a -0.0)
                # (an int has no NaN, and no gradient: where(.., value, 0.0) made an int
                # clamp by a tensor bound float64, where numpy's clip and torch's keep int)
                nan = value.isnan().where(value, 0.0) if value.dtype.is_float else None
                out = cond.where(bound if nan is None else bound - nan, out)
        return keep.where(x, out)

    def clip(self, min_: Any = None, max_: Any = None, *, min: Any = None,  # noqa: A002
             max: Any = None) -> Tensor:  # noqa: A002
        return self.clamp(min_, max_, min=min, max=max)

    def isnan(self) -> Tensor: return self != self

    def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Tensor:
        pos = (self == float("inf")) & detect_positive
        return pos | ((self == float("-inf")) & detect_negative)

    def isfinite(self) -> Tensor: return (self.isinf() | self.isnan()).logical_not()

    def isclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> Tensor:
        other = other if isinstance(other, TensorOps) else type(self)(other)
        finite = self.isfinite() & other.isfinite() & \
            ((self - other).abs() <= atol + rtol * other.abs())
        infinite = (self.isinf() | other.isinf()) & (self == other)
        return finite | infinite | ((self.isnan() & other.isnan()) & equal_nan)

    def allclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    def logical_not(self) -> Tensor: return self.cast(dtypes.bool) == False  # noqa: E712
    def bitwise_not(self) -> Tensor: return ~self
    def bitwise_and(self, x: Any) -> Tensor: return self & x
    def bitwise_or(self, x: Any) -> Tensor: return self | x
    def bitwise_xor(self, x: Any) -> Tensor: return self ^ x
    def eq(self, x: Any) -> Tensor: return self == x
    def ne(self, x: Any) -> Tensor: return self != x

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        """torch's: `value` where `mask`, in self's dtype (an int tensor filled with 2.7 holds 2,
        a bool one True), a number it cannot hold refused as torch refuses it (uint8: -1 is
        255, 300 an OverflowError, where numpy's select wrapped it to 44)."""
        value = python_scalar(value)
        if type(value) in (bool, int, float):
            value = stored_scalar(value, self.dtype, "masked_fill: value")
        elif isinstance(value, TensorOps):
            # a (0-d) tensor's value is converted too (its where promoted: int8 filled with
            # Tensor(2.5) was float32)
            value = stored_value(value, self.dtype, "masked_fill: value", mask)
        return mask.where(value, self)

    def logaddexp(self, other: Any) -> Tensor:
        """log(exp x + exp y) as max + log(1 + exp(-|x - y|)) (torch's): the old
        exp(x - max) + exp(y - max) was NaN wherever the max was infinite (inf - inf), so
        softplus(inf) and logaddexp(0, inf) were NaN; two equal infinities give themselves.
        (log1p: softplus(-30) is 9.4e-14, where log(1 + e^-30) is 0.)"""
        # in numpy's float type for each operand (bool and int8: float16), where the
        # subtraction below refused a bool and a scalar was cast to an int self's dtype
        x = self if self.dtype.is_float else self._float()
        y = other if isinstance(other, TensorOps) else type(self)(other).cast(x.dtype)
        y = y if y.dtype.is_float else y._float()
        m = x.maximum(y)
        out = m + _log1p((-(x - y).abs()).exp())
        return (x.isinf() & (x == y)).where(x, out)

    def lerp(self, end: Tensor, weight: Any) -> Tensor:
        # torch's two forms: from self below a weight of 0.5, from end at and above it, so a
        # weight of 1 gives end exactly (self + (end - self) * 1 lost it: lerp(1e8, 1, 1) was 0);
        # one product either way, `(w - 1) == -(1 - w)` exactly, and one path to the weight
        near_self = abs(weight) < 0.5 if not isinstance(weight, TensorOps) else weight.abs() < 0.5
        if not isinstance(near_self, TensorOps):
            return self + (end - self) * weight if near_self else end + (end - self) * (weight - 1)
        return near_self.where(self, end) + (end - self) * near_self.where(weight, weight - 1)

    def relu6(self) -> Tensor: return self.hardtanh(0, 6)
    def hardswish(self) -> Tensor: return self * (self + 3).relu6() * (1 / 6)

    def hardsigmoid(self, alpha: float = 1 / 6, beta: float = 0.5) -> Tensor:
        return (alpha * self + beta).hardtanh(0.0, 1.0)

    def hardtanh(self, min_val: float = -1, max_val: float = 1) -> Tensor:
        # clamp's value (relu6(-0.0) is -0.0), and a gradient only strictly inside the bounds,
        # as torch's hardtanh (clamp passes it at the bounds); none at NaN (torch's vectorized
        # kernel; its scalar loop for an array's tail gives 1 there)
        inside = (self > min_val) & (self < max_val)
        return inside.where(self, self.clamp(min_val, max_val).detach())

    def leaky_relu(self, neg_slope: float = 0.01) -> Tensor:
        # the slope at 0 is neg_slope, as torch's
        return (self > 0).where(self, neg_slope * self)

    def quick_gelu(self) -> Tensor: return self * (self * 1.702).sigmoid()

    @half_in_float32
    def gelu(self, approximate: str = "tanh") -> Tensor:
        """tinygrad's default is the tanh approximation; approximate="none" uses erf."""
        if approximate == "tanh":
            # x * x * x, as torch's gelu kernel: POW is the C library's powf, whose vector form
            # (libmvec) takes a scalar path for a negative base, a call per element in a
            # product's epilogue
            # Of x clamped to +-GELU_SATURATED: the same value (the sigmoid is exactly 0 or 1
            # past it), and no inf in the backward graph: x * x overflowed float16 past 256,
            # and the cube's gradient, 0 * inf, was NaN (torch gives 0 and 1)
            xc = self.maximum(-GELU_SATURATED).minimum(GELU_SATURATED)
            cube = xc * xc * xc
            # 0.5 (1 + tanh u) as sigmoid(2u): 1 + tanh u cancelled in the negative tail, 1.7e7
            # ulps off at x = -6 in float32 (bench/ulp.py; torch's formula is the same)
            u = math.sqrt(8 / math.pi) * (self + 0.044715 * cube)
            return _nan_slope_at_inf(self, self * _sigmoid_squared(u))
        if approximate == "none":  # 1 + erf(z) cancelled for z < 0: erfc(-z) there
            z = self._float() / math.sqrt(2)
            small, zs, r, mag, comp = _erf_parts(z)
            up = (z > 0).where(1 + mag, comp)
            return _nan_slope_at_inf(self, self * 0.5 * small.where(1 + (zs + zs * r), up))
        raise InvalidArgument(f"gelu approximate={approximate!r} is not supported ('tanh', 'none')")

    @half_in_float32
    def swish(self) -> Tensor: return self * self.sigmoid()
    def silu(self) -> Tensor: return self.swish()
    @half_in_float32
    def elu(self, alpha: float = 1.0) -> Tensor:
        # the slope at 0 is alpha, as torch's; exp reads min(x, 0), so a large x gives no
        # inf to the backward graph (0 * inf = NaN); expm1, so elu(-1e-8) is -1e-8 in float32
        # (exp(x) - 1 rounded it to 0) and elu(-0.0) is -0.0, torch's
        return (self > 0).where(self, alpha * _expm1_nonpositive((self > 0).where(0.0, self)))

    @half_in_float32
    def celu(self, alpha: float = 1.0) -> Tensor:
        # torch's: elu with exp(x / alpha); exp reads min(x, 0), so celu(inf)'s gradient is 1
        # (it was NaN: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) met 0 * inf)
        below = (self > 0).where(0.0, self) / alpha
        return (self > 0).where(self, alpha * _expm1_nonpositive(below))

    @half_in_float32
    def selu(self, alpha: float = 1.6732632423543772, gamma: float = 1.0507009873554805
             ) -> Tensor:
        # torch's constants (tinygrad's 1.67326 and 1.0507 are off by 2e-6 relative), and
        # its slope at 0: gamma * alpha
        return gamma * self.elu(alpha)

    @half_in_float32
    def softplus(self, beta: float = 1.0) -> Tensor:
        return (1 / beta) * (self * beta).logaddexp(0.0)

    # (of a float16 x: its softplus rounded to float16 first was 8.5 ulps off below -15)
    @half_in_float32
    def mish(self) -> Tensor: return self * self.softplus().tanh()
    # 0 - softplus: logsigmoid(inf) is +0.0, torch's (a negation gave -0.0)
    @half_in_float32
    def logsigmoid(self) -> Tensor: return 0.0 - (-self).softplus()
    def softsign(self) -> Tensor: return self / (1 + self.abs())

    # ------------------------------------------------------------------ reductions
    def prod(self, axis: Any = None, keepdim: bool = False,
             dtype: DType | str | None = None) -> Tensor:
        """Product in numpy's dtype for it (ints widen like sum), or in `dtype`. A float16 or
        float32 product accumulates in float64 and rounds once: unlike a sum's, a product's
        rounding error does not shrink with a tree order (every step rounds by up to half an
        ulp, whatever it multiplies), and steps near 1 round the same way each time (1M
        factors of float32(1 + 2^-23) ended 6.6e-3 low, in numpy too). It is closer to the
        exact product than numpy's left-to-right order, and finite where one of numpy's
        partial products overflows and no float64 partial of its own order does (past
        float64's range, inf, 0 or NaN, as torch's): the reduction contract
        (runtime/semantics.py) states both."""
        acc = self.sum().dtype if dtype is None else to_dtype(dtype)
        if acc in (dtypes.float16, dtypes.float32):
            return self._reduce(Ops.MUL, axis, keepdim, dtypes.float64).cast(acc)
        return self._reduce(Ops.MUL, axis, keepdim, acc)

    def any(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        return self.cast(dtypes.bool)._reduce(Ops.MAX, axis, keepdim)

    def all(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        return self.cast(dtypes.bool)._reduce(Ops.MIN, axis, keepdim)

    def std(self, axis: Any = None, keepdim: bool = False, correction: int = 1) -> Tensor:
        # sqrt's gradient at a zero variance is inf * 0 = NaN; torch's std gives 0 there. The
        # zero branch reads sqrt(1), so no inf enters the backward graph
        v = self.var(axis, keepdim, correction)
        zero = v.eq(0)
        return zero.where(0.0, zero.where(1.0, v).sqrt())

    def var_mean(self, axis: Any = None, keepdim: bool = False, correction: int = 1
                 ) -> tuple[Tensor, Tensor]:
        return self.var(axis, keepdim, correction), self.mean(axis, keepdim)

    def std_mean(self, axis: Any = None, keepdim: bool = False, correction: int = 1
                 ) -> tuple[Tensor, Tensor]:
        return self.std(axis, keepdim, correction), self.mean(axis, keepdim)

    def logsumexp(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        """log(sum(exp(x))) shifted by the max, so large inputs do not overflow; a float16 x's in
        float32, rounded once (torch's: in float16 the max and the log of the sum, each rounded,
        cancelled, 10 ulps off near 0)."""
        out_dt = least_float(self.dtype)
        x = self.cast(accumulate_float(out_dt))
        m = x._reduce(Ops.MAX, axis, True)  # (an empty axis: -inf, and the sum's log -inf)
        m = (m.isinf()).where(0, m)  # all -inf (or an inf max): no shift, exp gives 0 or inf
        out = ((x - m).exp().sum(axis, keepdim=True).log() + m).cast(out_dt)
        return out if keepdim else out.reshape(x._reduce(Ops.MAX, axis, False).shape)

    def softmin(self, axis: int = -1) -> Tensor:
        return (-self).softmax(axis)

    def normalize(self, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
        # p=0 counts nonzeros: an integer count that would promote a float32 or float16 self
        # to float64 (numpy's rule), where torch's normalize keeps self's dtype
        if p == 0:
            den = (self != 0).sum(dim, keepdim=True).cast(self.dtype)
        elif math.isinf(p):  # torch's inf-norms: the largest |x| (-inf: the smallest); the sum
            # of |x|^inf to the power 0 was 1, and x came back unchanged
            den = self.abs().max(dim, keepdim=True) if p > 0 else self.abs().min(dim, keepdim=True)
        else:  # torch's norm has gradient 0 at a zero vector (and |x|^p at a zero x): pow's
            # gradient there (inf for an exponent below 1) times the 0 the eps clamp passes
            # was NaN, so each pow reads 1 where its base is 0 (the double where of std)
            # (float16 sums its powers in float32 as torch: 300^2 overflowed, 1e-4^2 was
            # subnormal; the norm is float16 again before the clamp and the division)
            a = self.abs()
            a = a.cast(accumulate_float(a.dtype)) if a.dtype.is_float else a
            den = _pow_at_zero(_pow_at_zero(a, p).sum(dim, keepdim=True), 1 / p)
            den = den.cast(self.dtype) if self.dtype.is_float else den
        return self / den.maximum(eps)

    def _cum(self, axis: int, op: Ops) -> Tensor:
        """Scan along `axis` as a pooled reduction: pad the identity before, take windows of
        the axis' length, reduce each: one kernel, which the optimizer runs as one running
        accumulator (opt.rules' scan_store: n steps, in the window's order). Windows past the
        work limit (n per element: RULEGRAD_MAX_WORK) are scanned in blocks (`_scan_blocks`),
        and so are fewer rows than threads when the scan is worth threading (`_few_long_rows`).
        A tensor of symbolic shape (which cannot be padded or pooled) scans by a triangular
        mask instead: out[i] reduces x[j] for j <= i, the identity elsewhere (quadratic
        work)."""
        x = self.cast(self.sum().dtype) if op in (Ops.ADD, Ops.MUL) else self
        if self.ndim == 0:
            if axis not in (0, -1):
                raise AxisError(f"axis {axis} is out of range for a 0-d tensor")
            return x
        axis = self._axis(axis)
        if (whole := gathered_along(self, axis)) is not None:
            return whole[0]._cum(axis, op).shard(whole[1], axis)
        n = x.shape[axis]
        if isinstance(n, int) and n == 0:
            return x
        ident = reduce_identity(op, x.dtype)
        xt = x.transpose(axis, -1)
        if has_symbolic(x.shape):
            upto = _lower_triangle(self, n)  # [i, j]: j <= i
            out = upto.where(xt.unsqueeze(-2), ident)._reduce(op, -1, False)
            return out.transpose(axis, -1)
        if _window_size(xt.shape[:-1], n) > max_work() or _few_long_rows(xt.shape):
            return xt._scan_blocks(op, ident).transpose(axis, -1)
        return xt._scan_pooled(op, ident).transpose(axis, -1)

    def _scan_pooled(self, op: Ops, ident: Any) -> Tensor:
        """Inclusive scan of the last axis: each prefix a window of the padded axis, reduced
        (n work per element)."""
        n = self.shape[-1]
        if op in (Ops.ADD, Ops.MUL) and n >= 2:  # (the same windows, marked: O(n) gradients)
            scan = running_sum if op is Ops.ADD else running_product
            return type(self)(scan(self.uop))
        pooled = self.pad((*[None] * (self.ndim - 1), (n - 1, 0)), value=ident)._pool((n,))
        return pooled._reduce(op, -1, False)

    def _scan_blocks(self, op: Ops, ident: Any) -> Tensor:
        """Inclusive scan of a long last axis in blocks of SCAN_BLOCK, reduce then scan: each
        block's total (a reduce, vectorized and threaded), the scan of the totals (the same
        problem, nb = n / SCAN_BLOCK long), then each block scanned again from the total of the
        blocks before it (its first element combined with it: one running accumulator per
        block, the blocks threaded). The input is read twice and the output written once (the
        blocks' scans, kept and combined in a pass of their own, wrote and read n more).
        A pooled scan of the whole axis loops n^2 times: 4e12 for a cumsum of 2M elements,
        past the work limit. Exact for ints, MAX and MIN (each block starts from the blocks'
        own result); a float sum (product) is in an order of its own, within the reduction
        contract (runtime/semantics.py): out[i] is the exact sum of x[:i + 1] within
        i * eps * sum |x[:i + 1]|."""
        if self.dtype is dtypes.float16 and op in (Ops.ADD, Ops.MUL):
            # a float16 reduce accumulates in float32 and rounds once (lower_helpers.py): the
            # blocks' totals rounded to float16 on their way would round every element past
            # the first block twice or more (65537 elements: off by 4 ulps)
            return self.cast(dtypes.float32)._scan_blocks(op, ident).cast(dtypes.float16)
        *lead, n = self.shape
        keep = [None] * len(lead)
        nb = -(-n // SCAN_BLOCK)
        blocks = self.pad((*keep, (0, nb * SCAN_BLOCK - n)), value=ident)
        blocks = blocks.reshape(*lead, nb, SCAN_BLOCK)
        # the totals of the whole blocks before the last (read unpadded: a gate on the last
        # block's reads kept the sum from vectors)
        whole = self.shrink((*keep, (0, (nb - 1) * SCAN_BLOCK)))
        totals = whole.reshape(*lead, nb - 1, SCAN_BLOCK)._reduce(op, -1, False)
        # the blocks before each block: the scan of the totals, shifted one block on (a buffer:
        # fused into the blocks' scan, its window ran once per element)
        before = totals._cum(-1, op).contiguous().pad((*keep, (1, 0)), value=ident)
        before = before.unsqueeze(-1)
        # each block but the first starts from `before` (the first keeps its own first
        # element: ident + -0.0 is +0.0)
        seeded = (_positions(self, nb, lazy=True).reshape(nb, 1) > 0) \
            & (_positions(self, SCAN_BLOCK, lazy=True) == 0)
        start = seeded.where(_combine(op, before, blocks), blocks)
        out = start._scan_pooled(op, ident).reshape(*lead, nb * SCAN_BLOCK)
        return out.shrink((*keep, (0, n)))

    def cumsum(self, axis: int = 0) -> Tensor: return self._cum(axis, Ops.ADD)
    def cumprod(self, axis: int = 0) -> Tensor: return self._cum(axis, Ops.MUL)

    def cummax(self, axis: int = 0) -> tuple[Tensor, Tensor]:
        """Running max and the index where it was (the last such index, as torch)."""
        T = type(self)
        if self.ndim == 0:
            return self._cum(axis, Ops.MAX), T.zeros((), dtype=dtypes.int32)
        axis = self._axis(axis)
        if (whole := gathered_along(self, axis)) is not None:
            vals, idx = whole[0].cummax(axis)
            return vals.shard(whole[1], axis), idx.shard(whole[1], axis)
        n = self.shape[axis]
        if isinstance(n, int) and n == 0:
            return self, T.zeros(self.shape, dtype=dtypes.int32)
        x = self.transpose(axis, -1)
        if self.dtype.is_float and _keyed(x):
            # one scan of the key, the values read from its bits; their gradient is the
            # marked x's (runtime/running_max.py: O(n), where the pick's was n * SCAN_BLOCK)
            marked = T(x.uop.f(Ops.CONTIGUOUS_BACKWARD))
            key = _running_key(marked)
            return T(running_values(marked.uop, key.uop)).transpose(-1, axis), \
                T(key_index(key.uop)).transpose(-1, axis)
        key = _running_key(x)
        if key is not None:
            idx = T(key_index(key.uop))
            # an int's rank is itself: its running max is the key's high half (one scan for
            # both, where the values' own pooled scan was a third of the graph build of a
            # cummax of 65536, the call's larger part); a float's is picked at idx below
            values = None if self.dtype.is_float else \
                (key >> 32).cast(self.dtype).transpose(-1, axis)
        else:  # (a value whose rank needs more than 32 bits, or a symbolic axis)
            values = self._cum(axis, Ops.MAX)
            vt = values.transpose(axis, -1)
            # the index of vt[i] is the last j <= i with x[j] == vt[j] (a record): past it
            # every x is below the running max, which so stays vt[j]. So it is a running max
            # of the records' positions (linear work, where matching x[j] with each vt[i] was
            # n^2)
            record = x == vt
            if self.dtype.is_float:  # a NaN running max is at the last NaN so far (torch's);
                # NaN equals nothing, so no index matched it and the index was -1
                record = record | (x.isnan() & vt.isnan())
            idx = record.where(_positions(self, n), -1)._cum(-1, Ops.MAX)
        if self.dtype.is_float:
            # torch's running max is the element at the index it returns, value and gradient
            # (a reduce max shares the gradient among equal elements, and its MAX keeps either
            # zero: torch's cummax of [0.0, -0.0] is [0.0, -0.0]), so the value is that
            # element's, picked (NaN and infinities too); vt only finds the records (no
            # gradient flows through a compare: the window max's backward was n^2)
            values = _take_running(x, idx).transpose(-1, axis)
        return values, idx.cast(dtypes.int32).transpose(-1, axis)

    def cummin(self, axis: int = 0) -> tuple[Tensor, Tensor]:
        if self.dtype.is_float and self.ndim and gathered_along(self, self._axis(axis)) is None \
                and _keyed(x := self.transpose(axis := self._axis(axis), -1)):
            # -x's running max, its values negated back: x's element at the index, whose
            # gradient is the marked x's (runtime/running_max.py)
            marked = type(self)(x.uop.f(Ops.CONTIGUOUS_BACKWARD))
            key = _running_key(-marked)
            return type(self)(running_values(marked.uop, key.uop, negated=True)) \
                .transpose(-1, axis), type(self)(key_index(key.uop)).transpose(-1, axis)
        if self.dtype.is_float and self.ndim and gathered_along(self, self._axis(axis)) is None:
            # the running min is at cummax(-x)'s index (negation is exact); its value is the
            # element there, picked from self (so its gradient is no negated one: a zero's
            # sign as torch's)
            idx = (-self).cummax(axis)[1]
            axis = self._axis(axis)
            x, it = self.transpose(axis, -1), idx.transpose(axis, -1)
            if isinstance(x.shape[-1], int) and x.shape[-1] == 0:
                return self, idx
            return _take_running(x, it).transpose(-1, axis), idx
        if self.dtype.is_float:
            values, idx = (-self).cummax(axis)
            return -values, idx
        # an int's: ~x reverses the order exactly, so the running min is ~ of ~x's running max,
        # and both come from its one scan (a MIN scan of its own was a second)
        values, idx = self._inverse().cummax(axis)
        return values._inverse(), idx

    def logcumsumexp(self, axis: int = 0) -> Tensor:
        if self.ndim == 0:
            return self._float()
        axis = self._axis(axis)
        if (whole := gathered_along(self, axis)) is not None:
            return whole[0].logcumsumexp(axis).shard(whole[1], axis)
        x = self._float().transpose(axis, -1)
        n = x.shape[-1]
        if isinstance(n, int) and n == 0:
            return self._float()
        # shift each prefix by its own running max, so no prefix underflows to log(0)
        m = x.cummax(-1)[0]
        m = m.isinf().where(0, m)
        lower = _lower_triangle(self, n)  # [i, j]: j <= i
        # masked before exp (exp(-inf) = 0): a later, larger element would overflow exp where
        # it is masked out, and its gradient would be 0 * inf = NaN
        s = lower.where(x.unsqueeze(-2) - m.unsqueeze(-1), -math.inf).exp().sum(-1)
        return (s.log() + m).transpose(-1, axis)

    def argmax(self, axis: int | None = None, keepdim: bool = False) -> Tensor:
        """Index of the first maximum (NaN counts as the largest value, as in numpy and torch),
        as int32 (tinygrad's index dtype; numpy gives int64)."""
        return self._argmax(axis, keepdim, "argmax")

    def _argmax(self, axis: int | None, keepdim: bool, name: str) -> Tensor:
        """argmax, named `name` in its refusal of an empty axis (argmin's is argmax's)."""
        if axis is None:
            if self.ndim == 0:
                return type(self).zeros((), dtype=dtypes.int32)
            self._refuse_empty(name, tuple(range(self.ndim)))
            if not has_symbolic(self.shape):
                out = self.flatten()._argmax(0, False, name)
                return out.reshape((1,) * self.ndim) if keepdim else out
            # a symbolic axis does not flatten: the first hit by its row-major flat position
            return self._first_hit(self._hits(None), None, keepdim)
        if self.ndim == 0:
            return type(self).zeros((), dtype=dtypes.int32)
        axis = self._axis(axis)
        self._refuse_empty(name, (axis,))
        return self._first_hit(self._hits(axis), axis, keepdim)

    def _hits(self, axis: int | None) -> Tensor:
        """Where self equals its max over `axis` (NaN, the largest, where there is one). A value
        through a libm call is computed once: the max's loop and the compare's each called it,
        one libmvec's vector variant and the other libm's, ulps apart, and no element equalled
        the max (argmax INT32_MAX)."""
        src = self._computed_once()
        top = src.max(axis, keepdim=True)
        hit = src == top
        if self.dtype.is_float:
            hit = hit | (src.isnan() & top.isnan())
        return hit

    def _computed_once(self) -> Tensor:
        """Self stored, when it is a float through a libm call and its reader compares it with
        itself: the fused loops that read it twice called libm's scalar function in one and a
        libmvec vector variant in the other, whose results are ulps apart (argmax missed the
        max; sort's ranks of `x.cos()` were not a permutation's order)."""
        stored = (Ops.BUFFER, Ops.CONTIGUOUS)
        if self.dtype.is_float and any(n.op in LIBM_CALLS for n in toposort(
                self.uop, stop=lambda n: n.op in stored)):
            return self.contiguous()
        return self

    def _first_hit(self, hit: Tensor, axis: int | None, keepdim: bool) -> Tensor:
        """The smallest (flat, row-major, for axis None) position where `hit` holds over
        `axis`, as int32: positions masked by `hit`, then a MIN reduction."""
        axes = tuple(range(self.ndim)) if axis is None else (axis,)
        flat: Any = 0
        for d in axes:  # the flat position: each axis' position times its stride
            pos = _positions(self, self.shape[d]).reshape(
                tuple(self.shape[d] if i == d else 1 for i in range(self.ndim)))
            stride = self._count(tuple(range(d + 1, self.ndim))) if axis is None else 1
            flat = flat + pos * (stride.cast(dtypes.int32) if isinstance(stride, TensorOps)
                                 else stride)
        return hit.where(flat, dtypes.int32.max)._reduce(Ops.MIN, axis, keepdim) \
            .cast(dtypes.int32)

    def argmin(self, axis: int | None = None, keepdim: bool = False) -> Tensor:
        """Index of the first minimum; a NaN wins here too (numpy's and torch's argmin give
        the first NaN, as argmax does)."""
        return self._inverse()._argmax(axis, keepdim, "argmin")

    def _inverse(self) -> Tensor:
        """An order-reversing map: min of self is max of this (~ keeps ints from overflowing)."""
        if self.dtype.is_bool:
            return self.logical_not()
        return -self if self.dtype.is_float else ~self

    def sort(self, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
        """Stable sort along `dim`: values and int32 indices, in torch's order: NaN is the
        largest value (last ascending, first descending), -0.0 and 0.0 are equal (each keeps
        its sign and its place among ties). Each element's rank is a count (how many come
        before it), and a one-hot of the ranks places it: O(n^2) work in one reduction, no
        data-dependent control flow. A symbolic axis sorts its bound rows. Along the axis a
        tensor is sharded on, it is sorted on its first device and sharded back."""
        T = type(self)
        if self.ndim == 0:
            return self, T.zeros((), dtype=dtypes.int32)
        dim = self._axis(dim)
        if (whole := gathered_along(self, dim)) is not None:  # sorted on one device
            vals, idx = whole[0].sort(dim, descending)
            return vals.shard(whole[1], dim), idx.shard(whole[1], dim)
        n = self.shape[dim]
        x = self._computed_once().transpose(dim, -1)
        a, b = x.unsqueeze(-1), x.unsqueeze(-2)  # [..., i, j]: element i against element j
        pos = _positions(self, n)
        earlier = pos.reshape(1, n) < pos.reshape(n, 1)  # j < i keeps equal elements in order
        before = _precedes(b, a, descending) | (_ties(a, b) & earlier)
        rank = before.cast(dtypes.int32)._reduce(Ops.ADD, -1, False)  # a permutation of 0..n-1
        hot = rank.unsqueeze(-1) == pos  # [..., i, r]: element i goes to place r
        vals = x.unsqueeze(-1)._pick(hot, -2)
        idx = hot.where(pos.reshape(n, 1), 0).cast(dtypes.int32)._reduce(Ops.ADD, -2, False)
        return vals.transpose(-1, dim), idx.transpose(-1, dim)

    def argsort(self, dim: int = -1, descending: bool = False) -> Tensor:
        return self.sort(dim, descending)[1]

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted_: bool = True
             ) -> tuple[Tensor, Tensor]:
        """The k largest (smallest) along `dim`, in sort's order: NaN first when largest."""
        if not sorted_:
            raise NotImplementedError("topk with sorted_=False is not supported")
        dim = self._axis(dim)
        size = self.shape[dim]
        bound = actual((size,))[0]
        if not isinstance(k, int) or not 0 <= k <= bound:
            raise InvalidArgument(f"topk k={k} is out of range for axis {dim} of shape "
                                  f"{show(self.shape)}"
                                  + (f" (its symbolic size is bound to {bound})"
                                     if bound is not size else ""))
        if (whole := gathered_along(self, dim)) is not None:
            # found on one device; k of the axis need not split evenly: a replica on each
            # device, as a reduction over a sharded axis gives (argmax, sum)
            vals, idx = whole[0].topk(k, dim, largest)
            return vals.shard(whole[1]), idx.shard(whole[1])
        vals, idx = self.sort(dim, descending=largest)
        keep = tuple((0, k) if i == dim else None for i in range(self.ndim))
        return vals.shrink(keep), idx.shrink(keep)

    # ------------------------------------------------------------------ indexing by tensors
    def _pick(self, hot: Tensor, axis: Any) -> Tensor:
        """The element of self that the one-hot `hot` marks along `axis` (broadcast together),
        that axis reduced away, bit for bit (gather, tensor indices, sort, scatter,
        masked_select, max_unpool2d). A masked sum, as fast as any sum, forward and backward
        (each marked element gets the result's gradient, as torch's gather gives it). For
        floats it starts from -0.0 with -0.0 elsewhere (runtime/ops.py, reduce_start): -0.0
        is the identity of IEEE addition, x + -0.0 is x for every x (-0.0, inf and NaN
        included), where a plain sum's +0.0 start turns a picked -0.0 into +0.0. Nothing
        marked: 0 for ints, -0.0 for floats (the callers mask it); several: their sum."""
        if not self.dtype.is_float:
            return hot.where(self, self.zeros_like())._reduce(Ops.ADD, axis, False)
        return hot.where(self, -0.0)._reduce(Ops.ADD, axis, False, start=-0.0)

    def _one_hot_along_dim(self, num_classes: int, dim: int = -1) -> Tensor:
        offset = self.ndim - self._axis(dim) - 1
        # (lazy: the positions are the kernel's index, so a sum picking by them is a load; in
        # self's int dtype when it holds them, so the compare casts neither side)
        most = int(num_classes.vmax) if isinstance(num_classes, UOp) else num_classes  # symbolic
        fits = self.dtype.is_int and most - 1 <= self.dtype.max
        pos = _positions(self, num_classes, self.dtype if fits else None, lazy=True)
        return self == pos.reshape((num_classes,) + (1,) * offset)

    def one_hot(self, num_classes: int) -> Tensor:
        """(..., num_classes) of int32 0/1 (tinygrad's dtype). A class outside
        0..num_classes-1 is refused when its values are known, as torch's; one computed in the
        graph gives a row of zeros."""
        if not self.dtype.is_int:
            raise InvalidArgument(f"one_hot needs an int tensor, got {self.dtype.name}")
        if num_classes < 0:  # tinygrad (like jax) does not infer it from the data
            raise InvalidArgument(f"one_hot needs num_classes >= 0, got {num_classes}")
        # (torch refuses a class past num_classes, or negative; it made a row of zeros)
        check_index_bounds(self, num_classes, "one_hot", None, wrap=False)
        return self.unsqueeze(-1)._one_hot_along_dim(num_classes).cast(dtypes.int32)

    def gather(self, dim: int, index: Tensor) -> Tensor:
        """out[..., i, ...] = self[..., index[..., i, ...], ...] along `dim` (torch's gather).
        One read per output: the one-hot sum below is folded into a load (rules/kernel.rules,
        pick_load). An index outside 0..size-1 (negative ones included: gather does not wrap
        them) is refused when its values are known (`check_index_bounds`), as torch refuses
        it; one computed in the graph gives 0 (+0.0 for floats) there. Memory outside self is
        never read."""
        if index.ndim != self.ndim:
            raise InvalidArgument(f"gather index needs {self.ndim} dims, got shape "
                                  f"{show(index.shape)}")
        dim = self._axis(dim)
        if any(_exceeds(s, t) for d, (s, t) in enumerate(zip(index.shape, self.shape))
               if d != dim):
            raise InvalidArgument(f"gather index shape {show(index.shape)} exceeds "
                                  f"{show(self.shape)} off "
                               f"dim {dim}")
        if not index.dtype.is_int:
            raise InvalidArgument(f"gather index must be an int tensor, got {index.dtype.name}")
        check_index_bounds(index, self.shape[dim], "gather", dim, wrap=False)
        x = self.shrink(tuple((0, s) if d != dim else None for d, s in enumerate(index.shape)))
        x = x.unsqueeze(-1).transpose(-1, dim)
        hot = index.unsqueeze(-1)._one_hot_along_dim(self.shape[dim])
        return zero_outside(x._pick(hot, -1), in_range(index, self.shape[dim]))

    def _pre_scatter(self, dim: int, index: Tensor, src: Tensor) -> tuple[Tensor, Tensor]:
        dim = self._axis(dim)
        if src.dtype is not self.dtype:
            raise InvalidArgument(f"scatter src of dtype {src.dtype.name} into a tensor of "
                                  f"{self.dtype.name}: the dtypes must match")
        if index.ndim != self.ndim or src.ndim != self.ndim:
            raise InvalidArgument(f"scatter needs self, index and src of one rank, got "
                               f"{show(self.shape)}, {show(index.shape)}, {show(src.shape)}")
        if any(_exceeds(s, d) or (_exceeds(s, t) and i != dim)
               for i, (s, d, t) in enumerate(zip(index.shape, src.shape, self.shape))):
            raise InvalidArgument(f"scatter index {show(index.shape)} must fit src "
                                  f"{show(src.shape)} and "
                               f"self {show(self.shape)} off dim {dim}")
        check_index_bounds(index, self.shape[dim], "scatter", dim, wrap=False)
        src = src.shrink(tuple((0, s) for s in index.shape))
        mask = index.unsqueeze(-1)._one_hot_along_dim(self.shape[dim]).transpose(-1, dim)
        src = src.unsqueeze(-1).expand(*src.shape, self.shape[dim]).transpose(-1, dim)
        pad = tuple((0, t - s) if i != dim else (0, 0)
                    for i, (s, t) in enumerate(zip(index.shape, self.shape))) + ((0, 0),)
        return src.pad(pad), mask.pad(pad)

    def scatter(self, dim: int, index: Tensor, src: Any, reduce: str | None = None) -> Tensor:
        """self with src written at index along dim; where indices repeat, the last wins."""
        if reduce not in (None, "add", "multiply"):
            raise TypeError(f"scatter reduce must be None, 'add' or 'multiply', got {reduce!r}")
        if not isinstance(src, TensorOps):
            src = type(self).full(index.shape, src, self.dtype)
        elif reduce is not None:
            raise TypeError("scatter with reduce takes a scalar src; use scatter_reduce")
        if reduce is not None:
            return self.scatter_reduce(dim, index, src, {"add": "sum", "multiply": "prod"}[reduce])
        src, mask = self._pre_scatter(dim, index, src)
        # the last writer along the scattered axis wins: keep a hit only if no later hit
        n = mask.shape[-1]
        later = mask.flip(-1).cast(dtypes.int32)._cum(-1, Ops.MAX).flip(-1)
        last = mask & (later.pad((*[None] * (mask.ndim - 1), (0, 1)))
                       .shrink((*[None] * (mask.ndim - 1), (1, n + 1))) == 0)
        val = src._pick(last, -1)
        return mask.any(-1).where(val, self)

    def scatter_reduce(self, dim: int, index: Tensor, src: Tensor, reduce: str,
                       include_self: bool = True) -> Tensor:
        ops = {"sum": Ops.ADD, "prod": Ops.MUL, "amax": Ops.MAX, "amin": Ops.MIN, "mean": None}
        if reduce not in ops:
            raise InvalidArgument(f"scatter_reduce reduce must be one of {list(ops)}, "
                                  f"got {reduce!r}")
        src, mask = self._pre_scatter(dim, index, src)
        op = ops[reduce] or Ops.ADD
        ident = reduce_identity(op, self.dtype)
        vals = mask.where(src, src.full_like(ident))
        joined = include_self and op in (Ops.MAX, Ops.MIN)
        if joined:
            # self is one more element of the reduction, so a tie of self with src splits the
            # gradient evenly among all the tied elements (torch's amax/amin rule): a MAX of
            # self and the src's max gave self half and the tied src elements half between them
            vals = self.unsqueeze(-1).cat(vals, dim=-1)
        red = vals._reduce(op, -1, False)
        hit = mask.any(-1)
        if op in (Ops.MAX, Ops.MIN) and self.dtype.is_float:
            # at a max of -inf (a min of +inf) the identity fills tie with the elements too and
            # took shares of the gradient (self's 1/7 for torch's 1/2); there every element is
            # that infinity, so their mean is the same value and splits it among them alone
            count = mask.cast(self.dtype).sum(-1) + (1 if include_self else 0)
            total = mask.where(src, 0).sum(-1) + (self if include_self else 0)
            red = (red == ident).where(total / count.maximum(1), red)
        if reduce == "mean":
            count = mask.cast(dtypes.int32).sum(-1)
            total = red + (self if include_self else 0)
            count = count + (1 if include_self else 0)
            mean = total.div(count.maximum(1), rounding_mode=None if self.dtype.is_float
                             else "floor")
            return hit.where(mean.cast(self.dtype), self)
        if include_self and not joined:
            red = type(self)(red.uop.alu(op, self.uop)) if red.dtype is self.dtype else red
        return hit.where(red, self)

    # ------------------------------------------------------------------ data-dependent sizes
    def _compact(self, mask: Tensor, size: int | None, fill_value: Any) -> Tensor:
        """The rows self[i] (self: (n, c)) where the flat mask (n,) holds, in order, as `size`
        rows, those past the count `fill_value`. Output row k's source is the smallest j whose
        inclusive running count c[j] exceeds k (c is non-decreasing): a binary search of
        ceil(log2(n+1)) steps over (size,) bounds, each step one gather of c (a load), then one
        gather of the rows: O(n + size log n) work, where a one-hot over n per output was
        O(n * size). `size` None: the count, which realizes the mask first (the size is data)."""
        T, n = type(self), mask.shape[0]
        ones = mask.cast(dtypes.int32)
        count = ones._reduce(Ops.ADD, 0, False)
        if size is None:
            size = int(count.item())
        if not isinstance(size, int) or size < 0:
            raise InvalidArgument(f"size must be an int >= 0, got {size!r}")
        k = _positions(self, size, dtypes.int32)
        # row n is the fill: the search ends at n exactly for k >= count (no j has c[j] > k)
        fill = T.full((1, *self.shape[1:]), fill_value).cast(self.dtype)
        table = self.cat(fill, dim=0)
        lo, hi = k * 0, k * 0 + n  # the answer lies in lo..hi
        if n:
            running = ones._cum(0, Ops.ADD)
        for _ in range(n.bit_length()):  # ceil(log2(n + 1)) halvings of n + 1 candidates
            mid = (lo + hi) // 2  # < n while lo < hi; = lo = hi once found
            past = running.gather(0, mid) > k
            lo, hi = past.where(lo, (mid + 1).minimum(hi)), past.where(mid, hi)
        return table.gather(0, lo.reshape(size, 1).expand(size, *self.shape[1:]))

    def nonzero(self, size: int | None = None, fill_value: Any = 0) -> Tensor:
        """(count, ndim) int32: the coordinates of the nonzero elements, in row-major order.
        With `size`, exactly that many rows (past the count, `fill_value`)."""
        refuse_symbolic("nonzero", self.shape)  # (its row count is data, counted in Python)
        T, n = type(self), self.numel()
        flat = _positions(self, n, dtypes.int32).reshape(n, 1)
        strides = [math.prod(self.shape[d + 1:]) for d in range(self.ndim)]
        coords = [flat // st % sh for st, sh in zip(strides, self.shape)]
        table = T.cat(*coords, dim=1) if coords else flat.shrink((None, (0, 0)))
        return table._compact(self.flatten() != 0, size, fill_value)

    def masked_select(self, mask: Tensor, size: int | None = None, fill_value: Any = 0
                      ) -> Tensor:
        """The elements where `mask` (broadcast with self) holds, flat, in row-major order.
        With `size`, exactly that many (past the count, `fill_value`, in self's dtype)."""
        if mask.dtype is not dtypes.bool:
            raise InvalidArgument(f"masked_select needs a bool mask, got {mask.dtype.name}")
        shape = broadcast_shape(self.shape, mask.shape)
        refuse_symbolic("masked_select", shape)
        x, m = (t.reshape((1,) * (len(shape) - t.ndim) + t.shape).expand(shape)
                for t in (self, mask))
        return x.reshape(x.numel(), 1)._compact(m.reshape(m.numel()), size, fill_value).reshape(-1)

    # ------------------------------------------------------------------ einsum
    @staticmethod
    def einsum(formula: str, *operands: Any) -> Tensor:
        """numpy's einsum (explicit `->` or implicit output, `...`, repeated letters as
        diagonals) as one broadcast product and one sum."""
        xs = list(_flat(operands))
        formula = formula.replace(" ", "")
        lhs, arrow, rhs = formula.partition("->")
        inputs = lhs.split(",")
        if len(xs) != len(inputs):
            raise InvalidArgument(f"einsum {formula!r} names {len(inputs)} operands, got {len(xs)}")
        if any(s.count("...") > 1 for s in inputs):
            raise InvalidArgument(f"einsum {formula!r}: an operand has more than one '...'")
        if "..." in formula:
            spare = [c for c in string.ascii_letters if c not in formula]
            n_ell = max((x.ndim - len(s) + 3 for s, x in zip(inputs, xs) if "..." in s),
                        default=0)
            ell = "".join(spare[:n_ell])
            inputs = [s.replace("...", ell[n_ell - (x.ndim - len(s) + 3):]) if "..." in s else s
                      for s, x in zip(inputs, xs)]
            if arrow:
                rhs = rhs.replace("...", ell)
            else:
                joined = "".join(inputs)
                rhs = ell + "".join(sorted(c for c in set(joined) - set(ell)
                                           if joined.count(c) == 1))
        elif not arrow:
            joined = "".join(inputs)
            rhs = "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
        for i, (s, x) in enumerate(zip(inputs, xs)):
            if len(s) != x.ndim:
                raise InvalidArgument(f"einsum operand {i} has {x.ndim} dims, {s!r} names {len(s)}")
            while len(set(s)) != len(s):  # a repeated letter: take the diagonal
                c = next(c for c in s if s.count(c) > 1)
                j, k = s.index(c), s.index(c, s.index(c) + 1)
                x = x.diagonal(0, j, k)
                s = "".join(ch for n, ch in enumerate(s) if n not in (j, k)) + c
            inputs[i], xs[i] = s, x
        sizes: dict[str, int] = {}
        for s, x in zip(inputs, xs):
            for c, n in zip(s, x.shape):
                if sizes.setdefault(c, n) != n and n != 1 and sizes[c] != 1:
                    raise InvalidArgument(f"einsum letter {c!r} has sizes {sizes[c]} and {n}")
                if isinstance(n, UOp) or isinstance(sizes[c], UOp):  # a symbolic size wins
                    sizes[c] = n if sizes[c] == 1 else sizes[c]
                else:
                    sizes[c] = max(sizes[c], n)
        alpha = sorted(sizes)
        aligned = [x.permute([s.index(c) for c in sorted(s)])
                   .reshape([x.shape[s.index(c)] if c in s else 1 for c in alpha])
                   if s else x for s, x in zip(inputs, xs)]
        prod = aligned[0]
        for a in aligned[1:]:
            prod = prod * a
        prod = prod.expand([sizes[c] for c in alpha]) if alpha else prod
        red = [i for i, c in enumerate(alpha) if c not in rhs]
        out = prod.sum(red) if red else prod
        if out.dtype is not prod.dtype:
            # einsum keeps the operands' dtype (numpy's rule): for bools the sum of ANDs cast
            # to bool is their OR, as numpy's einsum (and our matmul) gives, not a count
            out = out.cast(prod.dtype)
        kept = [c for c in alpha if c in rhs]
        return out.permute([kept.index(c) for c in rhs]) if rhs else out


def _tri(like: Tensor, r: int | UOp, c: int | UOp, diagonal: int = 0) -> Tensor:
    """(r, c) bool mask: true where column - row >= diagonal (on `like`'s device). column -
    row lies in (-r, c): a diagonal past either end is clamped to it (the same mask), so that
    the positions plus it cannot wrap (tril(2**31 - 2) of a 5x7 kept nothing, int32)."""
    top = int(r.vmax) if isinstance(r, UOp) else r
    diagonal = max(-top, min(int(c.vmax) if isinstance(c, UOp) else c, diagonal))
    return _positions(like, r, lazy=True).unsqueeze(-1) + diagonal <= _positions(like, c, lazy=True)


def _positions(like: Tensor, n: int | UOp, dtype: DType | None = None,
               lazy: bool = False) -> Tensor:
    """0, 1, ..., n-1 (int32, or `dtype`) on `like`'s device (placed_like); over a symbolic
    size (a bound Variable), the positions up to its maximum shrunk to it, so the result has
    the symbolic size too. (type(like) is the tensor class: this module does not import
    tensor.py, which imports it.) `lazy`: read as an index by rangeify (`_position_table`)."""
    T = type(like)
    make = _position_table if lazy else lambda T, n, dtype: T.arange(n, dtype=dtype)
    if isinstance(n, UOp):
        return placed_like(like, make(T, int(n.vmax), dtype).shrink(((0, n),)))
    return placed_like(like, make(T, n, dtype))


def _position_table(T: type, n: int, dtype: DType | None) -> Tensor:
    """arange(n) (int32, int64 past int32, or `dtype`) in a Positions buffer, which rangeify
    reads as its index: a one-hot sum over it (gather, tensor indices) is folded into a load
    (rules/kernel.rules, `pick_load`)."""
    dt = to_dtype(dtype) if dtype is not None else \
        dtypes.default_int if n - 1 <= dtypes.default_int.max else dtypes.int64
    if not dt.is_int or n - 1 > dt.max:  # (a float table, or one its dtype cannot hold)
        return T.arange(n, dtype=dt)
    return T(UOp(Ops.BUFFER, dt, (), Positions(n, dt)))


def placed_like(like: Tensor, table: Tensor) -> Tensor:
    """`table` (made from numpy, on the default device) where `like` is: copied to its device,
    or a replica on each device of a sharded tensor, so that an op mixing the two (argmax's
    positions, a one-hot's classes, a triangle's mask) runs on one device each."""
    dev = like.device
    return table.shard(dev) if isinstance(dev, tuple) else table.to(dev)


def gathered_along(x: Tensor, axis: int) -> tuple[Tensor, tuple[str, ...]] | None:
    """For a tensor sharded along `axis`: it whole on its first device, and its devices (a
    sort or a scan along that axis needs every element of the axis on one device: the caller
    runs there and shards its result back). None for any other tensor."""
    devs = x.device
    if not isinstance(devs, tuple):
        return None
    from .multi import layouts  # (a sharded tensor only: the layout rewrites its graph)

    layout = layouts([x.uop])[0]
    if layout is None or layout[0] != axis:
        return None
    return x.to(devs[0]), devs


def _pow_at_zero(base: Tensor, exponent: float) -> Tensor:
    """base ** exponent (base >= 0) with gradient 0 where base is 0 (0 ** e: 0 for e > 0,
    inf for e < 0, 1 for e = 0)."""
    zero = base.eq(0)
    at_zero = 0.0 if exponent > 0 else math.inf if exponent < 0 else 1.0
    return zero.where(at_zero, zero.where(1.0, base).pow(exponent))


def _log1p(u: Tensor) -> Tensor:
    """log(1 + u), accurate for small u (Kahan's: u * (log(w) / (w - 1)) with w = 1 + u rounded
    cancels w's rounding; u itself where w rounds to 1). The divisor is 1 there, so the
    unselected side's gradient is finite (a where passes it 0, and 0 * inf would be NaN). The
    ratio first: log(w) * u of a float16 u near 1e-3 was subnormal, its digits lost."""
    w = u + 1
    one = w == 1
    return one.where(u, u * (w.log() / one.where(1.0, w - 1)))


def _expm1_nonpositive(v: Tensor) -> Tensor:
    """exp(v) - 1 for v <= 0 or NaN, as torch's expm1: accurate near 0 and -0.0 at -0.0 (Kahan's:
    (e - 1) * (v / log(e)) with e = exp(v) rounded cancels e's rounding; v itself where e
    rounds to 1). Below e = 1/2 nothing cancels: e - 1 (Kahan's log of a subnormal e was
    coarse, elu(-15.6) -1.003 in float16; and the ratio first, as a float16 (e - 1) v near 1e-7
    was subnormal). The value is computed detached; the gradient, exp(v), comes through
    `e - e`, which is 0 for every e in [0, 1] and subtracted, so -0.0 stays."""
    e = v.exp()
    d, ed = v.detach(), e.detach()
    one, near = ed == 1, ed > 0.5
    kahan = (ed - 1) * (d / (one | ~near).where(1.0, ed.log()))
    exact = one.where(d, near.where(kahan, ed - 1))
    return exact - (ed - e)


def _erf_parts(x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """fdlibm's erf pieces (Tensor.erf): (small, xs, r, mag, comp) with erf x = xs + xs r where
    |x| < 0.84375 (small), else x's sign times mag = |erf x|, and comp = 1 - mag = erfc |x|
    computed without cancelling: 1 - erx - r below 1.25, exp(...) / |x| above (its exp from
    `_exp_squared`, so erfc keeps its digits down to the subnormals), 0 past 28."""
    a = x.abs()
    # NaN takes the small piece, x + x P(x^2) / Q(x^2): NaN, and its gradient NaN as torch's
    # (the large piece's sign(x) * 1 passed none: 0)
    small, mid, tail = (a < 0.84375) | a.isnan(), a < 1.25, a < 28
    # each piece reads a harmless value where another is taken (no NaN gradient)
    xs = small.where(x, 0.0)
    at = (mid | tail.logical_not()).where(2.0, a)
    inv = 1 / at
    v = small.where(xs * xs, mid.where(a - 1, inv * inv))
    lo = at < 1 / 0.35
    fits = [(small, _ERF_P, _ERF_Q), (mid, _ERF_PA, _ERF_QA), (lo, _ERF_RA, _ERF_SA)]
    r = _picked_poly(v, [(c, p) for c, p, _ in fits], _ERF_RB) / \
        _picked_poly(v, [(c, q) for c, _, q in fits], _ERF_SB)
    near = _exp_squared(r - 0.5625 - at * at) * inv
    mag = mid.where(_ERX + r, tail.where(1 - near, 1.0))
    comp = mid.where((1 - _ERX) - r, tail.where(near, 0.0))
    return small, xs, r, mag, comp


def _exp_squared(t: Tensor) -> Tensor:
    """exp(t) for t <= 0 as exp(t / 2)^2, the argument kept at or above `_exp_floor` (in
    float64, libmvec's fast path: exp(-|v|) made a product's gelu epilogue 2.6x slower): the
    square reaches the subnormals where exp(t) would, so a value made of it keeps its relative
    precision down to the dtype's least value (2 ulps of exp's error, not 1)."""
    h = (t * 0.5).maximum(_exp_floor(t.dtype)).exp()
    return h * h


# |x| past which gelu's sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3), is exactly 0 or 1 in
# every float dtype (2|u| = 1155 there: exp(-1155) is 0 even in float64, whose least value is
# exp(-745)), while 25^3 = 15625 is still finite in float16 (its largest value is 65504)
GELU_SATURATED = 25.0


def _nan_slope_at_inf(x: Tensor, y: Tensor) -> Tensor:
    """y (gelu's), whose gradient at x = +-inf is NaN, as torch's: its derivative, cdf(x) +
    x pdf(x), meets inf * 0 there, where ours, of clamped pieces, was the limit (1 and 0). At an
    infinite x the select takes y, and its other side's gradient, 0, times inf is NaN; elsewhere
    that side is y * 1. The select is in y's dtype: two Python floats would make it float32,
    and a float64 gelu's y * CAST(select) hid it from opt.rules' `select_actions`, which take
    y * 1 out of the forward (its kernels kept both compares against +-inf and two selects)."""
    inf = x.isinf()
    return inf.where(y, y * inf.where(y.const_like(math.inf), y.const_like(1.0)))


def _sigmoid_squared(v: Tensor) -> Tensor:
    """sigmoid(v) from e = exp(-|v|) by `_exp_squared`: x sigmoid(v) keeps its relative
    precision down to the dtype's least value, in float64 at libmvec's fast path's speed (a gelu
    epilogue of a product, over pre-activations of +-16, ran 2.6x slower with exp(-|v|))."""
    pos = v >= 0
    e = _exp_squared(pos.where(-v, v))
    r = 1 / (1 + e)
    return pos.where(r, e * r)


def _exp_floor(dt: DType) -> float:
    """The least argument tanh and erf (and gelu through them) give their exps, which changes no
    value (each is +-1 well before), for two reasons. In float64 it is the least for which exp
    is a normal float: below it libmvec's vector exp (a float64 EXP's in a vector loop) takes a
    scalar call for its whole vector (a product's gelu epilogue over pre-activations past +-10
    ran 7x slower); float32's and float16's exp, our own (backends/c/vexp.py), has no such path.
    In every dtype it keeps the gradient at large x the limit (gelu's 0 and 1): past the floor
    the exp's argument gets none, where exp's 0 times its argument's infinite derivative was
    NaN. (At +-inf itself gelu's gradient is NaN, torch's: `_nan_slope_at_inf`.)"""
    return -708.0 if dt is dtypes.float64 else -80.0


def _half_exp(v: Tensor) -> Tensor:
    """e^v / 2, finite up to v = log(2 max): e^v alone overflows past log(max), and sinh and
    cosh were inf from 88.73 to 89.41 in float32 (torch's are finite). There it is e^(v - c)
    * (e^c / 2), c the power of two below log(max): v - c is exact (Sterbenz: v < 2c), and
    the gradient is the value itself on one path (e^(v/2) / 2 * e^(v/2) summed its factors'
    gradients at v/2 as e^v, inf there). It takes over at the whole number below log(max):
    log(max) in the dtype rounds up (88.72284 in float32, whose e^v / 2 was inf). 1.5 ulp;
    e^v / 2 elsewhere, 0.5; each side reads a constant where the other is taken."""
    top = math.log({2: 65504.0, 4: 3.4028234663852886e38,
                    8: 1.7976931348623157e308}[v.dtype.itemsize])
    c = 2.0 ** math.floor(math.log2(top))
    over = v > math.floor(top)
    return over.where((over.where(v, c) - c).exp() * (math.exp(c) / 2),
                      over.where(0.0, v).exp() / 2)


def _eps(dt: DType) -> float:
    """The float dtype's machine epsilon, 2^-(its mantissa bits): a fact of the dtype."""
    return {2: 2.0 ** -10, 4: 2.0 ** -23, 8: 2.0 ** -52}[dt.itemsize]


def check_index_bounds(index: Tensor, n: int | UOp, what: str, axis: int | None,
                       wrap: bool, ignore: int | None = None) -> None:
    """Refuse, as torch and numpy do, an index past an axis of n (`wrap`: -n..n-1, numpy's
    indexing; else 0..n-1, torch's gather and scatter), when the index's values are known
    without computing anything: a constant, or host data or a realized buffer (a list, an
    array, `Tensor(array)`, a view of a realized tensor). Such an index read 0 silently.
    The check is a min and max over that data, skipped where the dtype cannot leave the range
    (a uint8 index into 256 rows). An index computed in the graph is not read back: that
    would cost a realize of it, break its fusion into the reading kernel and stop a jitted
    step's replay; it still reads 0 where it is out of range (docs/tensor.md). `ignore` is
    a value let through (a loss's ignore_index, as torch's nll_loss lets it). Inside a
    `rulegrad.jit` step's recorded calls no index is read either: the read refused the step's
    replay (a host read), and a replay runs no Python to check its new index with."""
    if capture.active is not None:
        return
    n = actual((n,))[0]
    lo_ok = -n if wrap else 0
    dt = index.dtype
    if dt.min >= lo_ok and dt.max < n:
        return
    data = _known_values(index)
    if data is not None and ignore is not None:
        data = data[data != ignore]
    if data is None or not data.size:
        return
    lo, hi = data.min().item(), data.max().item()
    if lo < lo_ok or hi >= n:
        bad = lo if lo < lo_ok else hi
        where = "" if axis is None else f"for axis {axis} "
        raise IndexError(f"{what}: index {bad} is out of bounds {where}with size {n}")


def _known_values(t: Tensor) -> np.ndarray | None:
    """t's values when reading them computes nothing (a constant, host data, a realized
    buffer or a view of one), else None."""
    record = getattr(t, "record", None)  # (a LazyTensor's; a plain Tensor's slot is unset)
    if record is not None:  # (an op over host data is computed: not read)
        return t.numpy() if record.build is None else None
    base = view_base(t.uop)
    if base.op is Ops.CONST:  # (its one value, unless its view has no element: none read)
        return None if 0 in actual(t.shape) else np.asarray(base.arg)
    if buffer_of(t.uop) is not None or stored_view(t.uop):
        return t.numpy()
    return None


def in_range(index: Tensor, n: int | UOp) -> Tensor:
    """Where 0 <= index < n (a symbolic n by its bound value: a node of the graph)."""
    top = type(index)(n) if isinstance(n, UOp) else n
    return (index >= 0) & (index < top)


def zero_outside(picked: Tensor, inside: Tensor) -> Tensor:
    """A pick (`_pick`) with +0.0 where its index was out of range: a float pick's sum starts
    from -0.0 (to keep a picked -0.0), so nothing picked read -0.0 where the docs say 0. An
    elementwise where on the index, outside the sum: the sum is still folded into a load."""
    return inside.where(picked, 0.0) if picked.dtype.is_float else picked


def _exceeds(s: int | UOp, t: int | UOp) -> bool:
    """Whether size s is larger than size t (a symbolic size by its bound value)."""
    return s is not t and actual((s,))[0] > actual((t,))[0]


def _few_long_rows(shape: tuple[int, ...]) -> bool:
    """Whether a scan along the last axis of `shape` has fewer rows than the kernels' threads
    while its work (one step per element) is worth threading (target.py's `parallel_min_work`,
    the parallel action's own bound): a running accumulator per row then leaves threads idle
    (one row of 400,009 ran on one of 4 cores), and the blocked scan (`_scan_blocks`) threads
    its blocks instead: a chunk per thread, each chunk's total, their scan, each chunk from it."""
    *lead, n = shape
    rows = math.prod(lead)
    return rows < threads() and rows * n >= parallel_min_work() and n > SCAN_BLOCK


def _window_size(lead: tuple[int, ...], n: int) -> int:
    """How many elements the windows of a pooled scan (`_scan_pooled`) along a last axis of n
    have, as `_pool` builds them: the axis padded to 2n - 1 and repeated n + 1 times, about 2n
    per element where the reduced window is n (counted as n, a cumsum of 800,000 elements was
    refused by the work limit: its windows' 1.28e12 elements)."""
    return math.prod(lead) * (n + 1) * (2 * n - 1)


def _running_key(x: Tensor) -> Tensor | None:
    """The running max of cummax's key along x's last axis, whose low 32 bits over 2 are the
    index of the running max, torch's: the last maximum so far (its >= keeps the later tie, -0.0
    and 0.0 tie), and the last NaN once there is one; its high 32 bits are the running max's
    rank (an int's value; a float's bits, runtime/running_max.py), its lowest bit whether that
    is a -0.0. One scan: a running max of the int64 key rank(x[j]) * 2^32 + j * 2 + s, where
    rank orders x as torch
    does (a float's bits read as a sign-magnitude integer, the zeros one rank, NaN above all;
    an int is its own rank), so the largest key is the latest of the largest values (where
    matching each element with the running max's scan was a second scan over both).
    None where the key has no room: a rank of more than 32 bits (float64, int64, and uint32,
    whose values pass int32's), an axis past 2^31, or a symbolic one."""
    n = x.shape[-1]
    dt = x.dtype
    if not isinstance(n, int) or n > 2 ** 31 or dt.itemsize > 4 or dt is dtypes.uint32:
        return None
    if dt.is_float:
        f = x.cast(dtypes.float32) + 0.0  # (exact; -0.0 + 0.0 is 0.0: the zeros tie)
        bits = f.bitcast(dtypes.int32)
        rank = (bits < 0).where(bits ^ 0x7FFFFFFF, bits).cast(dtypes.int64)
        rank = f.isnan().where(2 ** 31 - 1, rank)  # (above inf's bits: any NaN, either sign)
    else:
        rank = x.cast(dtypes.int64)
    low = _positions(x, n, dtypes.int64, lazy=True) * 2
    if dt.is_float:  # (the spare low bit: a -0.0, whose sign the rank dropped)
        low = low + ((f == 0) & (x.cast(dtypes.float32).bitcast(dtypes.int32) < 0)).cast(
            dtypes.int64)
    return (rank * 2 ** 32 + low)._cum(-1, Ops.MAX)


def _keyed(x: Tensor) -> bool:
    """Whether a float cummax along x's last axis reads its values from the running key
    (runtime/running_max.py): a key that fits (`_running_key`) and a row whose gradient's
    counts of infinities and NaN fit their 21 bits."""
    n = x.shape[-1]
    return isinstance(n, int) and not has_symbolic(x.shape) and n < 2 ** 21 \
        and x.dtype.itemsize <= 4


def _take_running(x: Tensor, idx: Tensor) -> Tensor:
    """x[..., idx[..., i]] along the last axis, for a running index (nondecreasing, idx[i] <= i,
    idx[0] = 0: cummax's), with the gradient to the element taken. Each element picks from a
    one-hot row of the axis (`_pick`: bit for bit, a load forward, and each taken element gets
    the gradient of the elements that took it, torch's scatter of cummax's gradient); a long
    axis picks within its block of SCAN_BLOCK (n * SCAN_BLOCK work, forward and backward, where
    the whole row's one-hot was n^2), and an element whose index is in an earlier block takes
    the previous block's last pick, which is the same problem over the blocks' last elements."""
    n = x.shape[-1]
    if not isinstance(n, int) or n <= 2 * SCAN_BLOCK:
        return x.unsqueeze(-2)._pick(idx.unsqueeze(-1)._one_hot_along_dim(n), -1)
    *lead, _ = x.shape
    nb = -(-n // SCAN_BLOCK)
    grow = (*[None] * len(lead), (0, nb * SCAN_BLOCK - n))
    xb = x.pad(grow).reshape(*lead, nb, SCAN_BLOCK)
    ib = idx.pad(grow).reshape(*lead, nb, SCAN_BLOCK)
    local = ib - (_positions(x, nb, lazy=True) * SCAN_BLOCK).reshape(nb, 1)  # < 0: an earlier block
    # (an index in an earlier block matches nothing here: -0.0, replaced by `before` below)
    mine = xb.unsqueeze(-2)._pick(local.unsqueeze(-1)._one_hot_along_dim(SCAN_BLOCK), -1)
    tail = (*[None] * (len(lead) + 1), (SCAN_BLOCK - 1, SCAN_BLOCK))
    last, last_inside = mine.shrink(tail), local.shrink(tail) >= 0
    last = last.reshape(*lead, nb)
    # the block whose pick each block's last element holds: the last one to hold its own
    # (block 0 always does: idx[i] <= i)
    owner = last_inside.reshape(*lead, nb).where(_positions(x, nb, lazy=True), -1)._cum(-1, Ops.MAX)
    # (a buffer: each element of a block reads its block's owner, a scan of the blocks that a
    # reader fused with it ran once per element: nb steps each, 263 per element at 65536)
    owner = owner.contiguous()
    held = _take_running(last, owner)
    before = held.pad((*[None] * len(lead), (1, 0))).shrink((*[None] * len(lead), (0, nb)))
    out = (local >= 0).where(mine.contiguous(), before.unsqueeze(-1))
    return out.reshape(*lead, nb * SCAN_BLOCK).shrink((*[None] * len(lead), (0, n))).contiguous()


def _combine(op: Ops, a: Tensor, b: Tensor) -> Tensor:
    """a op b elementwise, for a scan's op (ADD, MUL, MAX, MIN)."""
    return {Ops.ADD: a.__add__, Ops.MUL: a.__mul__, Ops.MAX: a.maximum,
            Ops.MIN: a.minimum}[op](b)


def _lower_triangle(like: Tensor, n: int | UOp) -> Tensor:
    """(n, n) bool, [i, j] true where j <= i (n may be symbolic), on `like`'s device."""
    pos = _positions(like, n)
    return pos.reshape(1, n) <= pos.reshape(n, 1)


def _precedes(b: Tensor, a: Tensor, descending: bool) -> Tensor:
    """Where b sorts strictly before a, in torch's order: NaN above every number (so ascending
    puts it last, descending first); -0.0 and 0.0 are equal."""
    if not b.dtype.is_float:
        return (b > a) if descending else (b < a)
    if descending:
        return (b > a) | (b.isnan() & a.isnan().logical_not())
    return (b < a) | (a.isnan() & b.isnan().logical_not())


def _ties(a: Tensor, b: Tensor) -> Tensor:
    """Where a and b sort as equal: equal numbers, or both NaN."""
    return (a == b) | (a.isnan() & b.isnan()) if a.dtype.is_float else a == b


# fdlibm's s_erf.c: erf(x) = x + x P(x^2) / Q(x^2) for |x| < 0.84375
_ERF_P = [-2.37630166566501626084e-05, -5.77027029648944159157e-03, -2.84817495755985104766e-02,
          -3.25042107247001499370e-01, 1.28379167095512558561e-01]
_ERF_Q = [-3.96022827877536812320e-06, 1.32494738004321644526e-04, 5.08130628187576562776e-03,
          6.50222499887672944485e-02, 3.97917223959155352819e-01, 1.0]

# fdlibm's s_erf.c: erf(x) = erx + P(s) / Q(s) at s = |x| - 1 for 0.84375 <= |x| < 1.25 (erx
# is exact in float32), and 1 - exp(-x^2 - 0.5625 + R(u) / S(u)) / |x| at u = 1 / x^2 for
# 1.25 <= |x| < 1 / 0.35 (RA / SA) and up to 6 (RB / SB)
_ERX = 8.45062911510467529297e-01
_ERF_PA = [-2.16637559486879084300e-03, 3.54783043256182359371e-02, -1.10894694282396677476e-01,
           3.18346619901161753674e-01, -3.72207876035701323847e-01, 4.14856118683748331666e-01,
           -2.36211856075265944077e-03]
_ERF_QA = [1.19844998467991074170e-02, 1.36370839120290507362e-02, 1.26171219808761642112e-01,
           7.18286544141962662868e-02, 5.40397917702171048937e-01, 1.06420880400844228286e-01,
           1.0]
_ERF_RA = [-9.81432934416914548592e+00, -8.12874355063065934246e+01, -1.84605092906711035994e+02,
           -1.62396669462573470355e+02, -6.23753324503260060396e+01, -1.05586262253232909814e+01,
           -6.93858572707181764372e-01, -9.86494403484714822705e-03]
_ERF_SA = [-6.04244152148580987438e-02, 6.57024977031928170135e+00, 1.08635005541779435134e+02,
           4.29008140027567833386e+02, 6.45387271733267880336e+02, 4.34565877475229228821e+02,
           1.37657754143519042600e+02, 1.96512716674392571292e+01, 1.0]
_ERF_RB = [-4.83519191608651397019e+02, -1.02509513161107724954e+03, -6.37566443368389627722e+02,
           -1.60636384855821916062e+02, -1.77579549177547519889e+01, -7.99283237680523006574e-01,
           -9.86494292470009928597e-03]
_ERF_SB = [-2.24409524465858183362e+01, 4.74528541206955367215e+02, 2.55305040643316442583e+03,
           3.19985821950859553908e+03, 1.53672958608443695994e+03, 3.25792512996573918826e+02,
           3.03380607434824582924e+01, 1.0]

# Cephes' tanh.c: tanh(x) = x + x z P(z) / Q(z) at z = x^2 for |x| < 0.625
_TANH_P = [-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3]
_TANH_Q = [1.0, 1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3]

# fdlibm's e_asin.c: asin(x) = x + x R(x^2) on [-0.5, 0.5], R(z) = z P(z) / Q(z)
_ASIN_P = [3.47933107596021167570e-05, 7.91534994289814532176e-04, -4.00555345006794114027e-02,
           2.01212532134862925881e-01, -3.25565818622400915405e-01, 1.66666666666666657415e-01]
_ASIN_Q = [7.70381505559019352791e-02, -6.88283971605453293030e-01, 2.02094576023350569471e+00,
           -2.40339491173441421878e+00, 1.0]


def _asin_small(v: Tensor) -> Tensor:
    """asin(v) for |v| <= 0.5."""
    z = v * v
    return v + v * (z * _poly(z, _ASIN_P) / _poly(z, _ASIN_Q))


def _asin_halves(x: Tensor) -> tuple[Tensor, Tensor]:
    """Where |x| < 0.5, and sqrt((1 - |x|) / 2) (asin(|x|) = pi/2 - 2 asin of it) read at a
    harmless 0.75 there: sqrt's gradient at 0 (|x| = 1) is infinite, times the 0 that the
    untaken side gets it would be NaN."""
    a = x.abs()
    small = a < 0.5
    return small, ((1 - small.where(0.75, a)) / 2).sqrt()


def _picked_poly(x: Tensor, picks: list[tuple[Tensor, list[float]]], last: list[float]) -> Tensor:
    """A polynomial in x (Horner, highest coefficient first) whose coefficients each lane takes
    from the first of `picks` whose condition holds there, else from `last` (shorter lists are
    padded with leading zeros): one evaluation of several fits, each lane its own."""
    n = max(len(last), *(len(c) for _, c in picks))
    pad = lambda c: [0.0] * (n - len(c)) + c  # noqa: E731
    out = None
    for i in range(n):
        coef = x.full_like(pad(last)[i])
        for cond, c in reversed(picks):
            coef = cond.where(pad(c)[i], coef)
        out = coef if out is None else out * x + coef
    return out


def _poly(x: Tensor, coef: list[float]) -> Tensor:
    out = x * 0 + coef[0]
    for c in coef[1:]:
        out = out * x + c
    return out


def _strided(x: UOp, axis: int, start: int, count: int, step: int) -> UOp:
    """Elements start, start + step, ..., start + (count - 1) * step of `axis` (all in range):
    a shrink; for a step > 1 also a pad to whole steps (never read), a reshape and a shrink."""
    shape = tuple(x.shape)

    def along(pair: tuple[int, int], dims: tuple[int, ...], at: int) -> tuple:
        return tuple(pair if a == at else (0, n) for a, n in enumerate(dims))

    if step == 1:
        return x.shrink(along((start, start + count), shape, axis))
    end = min(shape[axis], start + count * step)
    x = x.shrink(along((start, end), shape, axis))
    x = x.pad(tuple((0, count * step - (end - start)) if a == axis else (0, 0)
                    for a in range(len(shape))))
    split = shape[:axis] + (count, step) + shape[axis + 1:]
    x = x.reshape(split).shrink(along((0, 1), split, axis + 1))
    return x.reshape(shape[:axis] + (count,) + shape[axis + 1:])
