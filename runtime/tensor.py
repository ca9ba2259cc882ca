"""The lazy Tensor front end: a tinygrad-compatible subset that builds tensor-level UOp graphs.

In: Python data, numpy arrays, and calls such as `(a @ b).relu().sum(axis=1)`. Out: a UOp graph
per tensor (`t.uop`), evaluated only by `realize()` / `numpy()` through `runtime/realize.py`.

Graph conventions (the scheduler depends on them):

- host data is `BUFFER(Buffer).reshape(shape)` (0-d data: reshaped to `()`); a constant is a
  scalar CONST reshaped to `(1,)*ndim` and expanded, except a Python float operand of
  `+ - * /`, which is a one-element BUFFER expanded the same way (a kernel parameter, so a new
  learning rate each step is the same program). A realized tensor is again
  `BUFFER.reshape(shape)`.
- a tensor that requires a gradient and reads storage (a buffer, a view of one) has its top
  movement op tagged `("variable", n)`, a node no other tensor has (`_marked`); the
  schedulers drop the tag first.
- broadcasting is explicit RESHAPE + EXPAND: the sources of every elementwise op have one shape.
- dtypes follow numpy 2 (Python scalars are weak, NEP 50); the result dtype of each op is asked
  of numpy itself on a one-element probe, and explicit CASTs give each ALU op operands of one
  dtype. Comparisons give bool; WHERE's condition is bool. Bool `+` is OR and `*` is AND.
- reductions are REDUCE_AXIS (reduced axes kept as size 1) then a RESHAPE when keepdim=False;
  `sum` of ints/bools first casts to numpy's sum dtype (int32 -> int64, uint8 -> uint64, ...).
  Bool ADD/MUL reductions are emitted as MAX/MIN (OR/AND).

Where this differs from numpy or tinygrad, on purpose:

- Python lists and scalars default to tinygrad's dtypes (float32 for floats, int32 for ints);
  numpy arrays keep their dtype.
- `max`/`min` over an empty axis give -inf/+inf (the dtype's min/max for ints) like tinygrad;
  numpy raises. `var(correction=1)` is tinygrad's default (numpy's ddof=0).
- `//` and `%` follow numpy (floor): of floats they are numpy's own algorithm spelled out in IR
  ops (`_float_divmod`), of ints the IR's truncating IDIV/MOD corrected to the floor, and
  `x // 0 == x % 0 == 0` for ints.
- An integer tensor raised to a negative integer tensor power does not raise (numpy does).
- `transpose(dim0=1, dim1=0)` has tinygrad's signature (numpy's `.transpose()` reverses axes;
  use `.T` for that).
- `dot` is `matmul`.
- `assign` writes at the call, not at the next `realize()` (see `Tensor.assign`); a lazy tensor
  reads a buffer when it is realized, so one built before an assign sees the new value.
- `t[index] = v` is such an assign of the whole of t (`Tensor.__setitem__`). A view such as
  `u = t[1:]` is a lazy tensor of its own, not numpy's view: `u[0] = v` realizes u and writes
  u, not t.
- sort orders as torch does: NaN above every number, -0.0 equal to 0.0 (both keep their sign).
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
import operator
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from . import capture, origins
from .autograd import GradientError, compute_gradient, seed_gradient
from .buffer import Buffer, host_copy
from .device import (
    DEFAULT,
    DeviceMismatch,
    canonical,
    canonical_devices,
    describe,
    device_of,
    in_use,
    to_device,
)
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
from .errors import AxisError, DtypeError, InvalidArgument, need_int, need_real
from .gradient_forms import key_walk
from .lazy import Lazy, built_nodes, leaf, materialize
from .lazy import op as lazy_op
from .limits import ALWAYS_ALLOWED, check_buffer, check_shape
from .nn import NNOps
from .ops import GroupOp, Ops
from .realize import (
    after_assigns,
    buffer_of,
    copied_view,
    learn_record,
    pending_assign,
    realize_tensors,
    run_record,
    shards_of,
    stored_view,
    view_base,
    view_bases,
)
from .schedule_cache import KeyWalk, step_held_by
from .tensor_ops import (
    TensorOps,
    broadcast_shape,
    check_index_bounds,
    half_in_float32,
    in_range,
    stored_value,
    takes_requires_grad,
    zero_outside,
)
from .uop import (
    OP_BIT,
    VARIABLE_MARK,
    Shape,
    UOp,
    build_recorded,
    is_kept,
    keep_order,
    toposort,
)
from .variable import actual, concrete, has_symbolic, is_bound, refuse_symbolic, show, size_text
from .view_chains import MAX_BINDINGS, VIEW_OPS, WRITABLE_VIEWS, view_ops

# (an Enum member read from its class: several times a plain name's cost)
_SHRINK, _RESHAPE, _BUFFER = Ops.SHRINK, Ops.RESHAPE, Ops.BUFFER

Scalar = bool | int | float
_PYTHON_SCALARS = (bool, int, float)


# ---------------------------------------------------------------------- helpers
def _check_nested(data: list | tuple) -> None:
    """Refuse, as torch does, a nested list holding something no number is (None, a string):
    numpy made None a NaN (`Tensor([1, None])`)."""
    stack = [data]
    while stack:
        for x in stack.pop():
            if isinstance(x, (list, tuple)):
                stack.append(x)
            elif not isinstance(x, Tensor):
                need_real("Tensor(list): each element", x)


def _numpy_scalars_dtype(data: list | tuple, arr: np.ndarray) -> DType | None:
    """The dtype of a (nested) list holding numpy scalars, as torch.tensor infers it: each
    element's own dtype (a Python int the default int, int64 when the list's ints need it; a
    float the default float), promoted together, a float over any int. None for a list of
    Python numbers only. numpy's own array of the list took a Python int as int64 and a float
    as float64, and our dtype was then chosen from the array's kind: `[np.int8(1)]` was int32
    and `[np.float64(0.1)]` float32, where torch keeps int8 and float64. A numpy array in the
    list counts by its dtype, as torch.tensor counts it (`[float64 array, float64 array]`
    was float32). (`[np.uint64(1), 2]`,
    which torch refuses to promote, is numpy's float64: uint64 with an int.)"""
    kinds: set[type] = set()
    held: set[np.dtype] = set()
    level: Sequence = data
    while level:  # (one `map` per nesting level, not per list: walked at C speed; a Python
        # loop per row made a 100000-row nested list twice as slow to read)
        here = set(map(type, level))
        kinds |= here
        if np.ndarray in here:  # (an array in the list: its dtype, as a numpy scalar's)
            held |= {x.dtype for x in level if isinstance(x, np.ndarray)}
        if list not in here and tuple not in here:
            break
        rows = level if here <= {list, tuple} else \
            [x for x in level if isinstance(x, (list, tuple))]
        level = list(itertools.chain.from_iterable(rows))
    found = [np.dtype(k) for k in kinds if issubclass(k, np.generic)] + list(held)
    if not found:
        return None
    if int in kinds:  # (a bool among ints is no int: its type is bool)
        lo, hi = (arr.min(), arr.max()) if arr.dtype.kind in "iu" else (0, 0)
        found.append(_int_data_dtype(lo, hi).np)
    if float in kinds:
        found.append(dtypes.default_float.np)
    if bool in kinds:
        found.append(np.dtype(np.bool_))
    # torch's promotion: a float wins over every int, and floats promote among themselves
    # (`[np.float16(1), 2]` is float16, where numpy's int32 + float16 is float64)
    floats = [d for d in found if d.kind == "f"]
    return dtypes.from_np(functools.reduce(np.promote_types, floats or found))


def _int_data_dtype(lo: int, hi: int, what: str = "Tensor") -> DType:
    """The dtype of Tensor data of ints in [lo, hi], no dtype given: tinygrad's int32, or int64
    where int32 cannot hold them (arange's choice; numpy's "out of bounds for int32" was the
    error). Past int64 it is refused, as torch.tensor refuses it (numpy made the list's ints
    float32 silently, and a bool among them a 1.0)."""
    lo, hi = int(lo), int(hi)
    for dt in (dtypes.default_int, dtypes.int64):
        if dt.min <= lo and hi <= dt.max:
            return dt
    big = hi if hi > dtypes.int64.max else lo
    raise OverflowError(f"{what}: the int {big} fits no int64, the widest int a tensor's data "
                        "is read as (torch refuses it too); give dtype= (a float type holds its "
                        "nearest float) or write it as a float")


def _names_dtype(name: str) -> bool:
    """Whether `name` is a dtype's name and no device's (`t.to("float16")`, as torch's)."""
    try:
        canonical(name)
    except InvalidArgument:
        try:
            to_dtype(name)
        except (TypeError, ValueError, KeyError, AttributeError):
            return False
        return True
    return False


def _numpy_ints(index: Any) -> Any:
    """numpy int arrays in an index read as numpy reads them: a 0-d one as its int, any other
    as an int tensor (advanced indexing); `t[np.array([0, 2])]` was an "unsupported index"
    where a bool array already indexed as a mask."""
    def one(it: Any) -> Any:
        if type(it) is np.ndarray and it.dtype.kind in "iu":
            return int(it) if it.ndim == 0 else Tensor(it)
        return it

    return tuple(map(one, index)) if type(index) is tuple else one(index)


def _argfix(args: tuple) -> tuple:
    """`f((1, 2))` and `f(1, 2)` mean the same, as in tinygrad."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _default_dtype(value: Any) -> DType:
    if isinstance(value, bool):
        return dtypes.bool
    if isinstance(value, int):
        return dtypes.default_int
    return dtypes.default_float


_const_values: dict[tuple, Scalar] = {}


def _const_value(value: Scalar, dtype: DType) -> Scalar:
    """`value` as `dtype` would hold it (raises OverflowError for ints that do not fit).

    Kept per (dtype, type, value) — floats by their hex form, so 0.0 and -0.0 stay apart —
    since numpy's conversion costs microseconds and graphs repeat their constants."""
    kind = type(value)
    # Python scalars only: a numpy -0.0 equals 0.0 as a key (and a numpy NaN never matches)
    key = (dtype, kind, value.hex() if kind is float else value) if kind in _PYTHON_SCALARS \
        else None
    out = _const_values.get(key) if key is not None else None
    if out is None:
        with np.errstate(all="ignore"):
            out = dtype.np.type(value).item()
        if key is not None and len(_const_values) < 65536:
            _const_values[key] = out
    return out


_wrapped_values: dict[tuple, Scalar] = {}


def _wrapped(value: Scalar, dtype: DType) -> Scalar:
    """`value` converted as numpy's unsafe casting does (ints wrap around); kept per (dtype,
    type, value) as `_const_value` keeps its values (`relu` asks for 0 at every call)."""
    kind = type(value)
    key = (dtype, kind, value.hex() if kind is float else value) if kind in _PYTHON_SCALARS \
        else None
    out = _wrapped_values.get(key) if key is not None else None
    if out is None:
        with np.errstate(all="ignore"):
            out = np.asarray(value).astype(dtype.np).item()
        if key is not None:
            _store_bounded(_wrapped_values, key, out, 65536)
    return out


_lifted: dict[tuple, UOp] = {}


def _store_bounded(cache: dict, key: tuple, value: object, most: int) -> None:
    """cache[key] = value, the oldest entry dropped once `most` are kept: a full cache that took
    nothing new stopped serving a long session's constants (a test suite's, a sweep's)."""
    if len(cache) >= most:
        del cache[next(iter(cache))]
    cache[key] = value


def _const_uop(value: Scalar, dtype: DType, shape: Shape) -> UOp:
    """A Python scalar as an operand: CONST.reshape(1, ...).expand(shape). Kept per (dtype,
    type, value, shape), like `_const_values`: a chain `x = x * 0.5 + 1.0` lifts the same two
    constants at every op, and building the three nodes was most of an op's cost."""
    kind = type(value)
    # Python scalars only (numpy's -0.0 equals 0.0 as a key); floats by their hex form
    key = (dtype, kind, value.hex() if kind is float else value, shape) if (
        kind in _PYTHON_SCALARS and type(shape) is tuple) else None
    out = _lifted.get(key) if key is not None else None
    if out is None:
        const = UOp.const(dtype, _const_value(value, dtype))
        out = const.reshape((1,) * len(shape)).expand(shape)
        if key is not None:  # bounded: a new learning rate adds one
            _store_bounded(_lifted, key, out, 4096)
    return out


def _from_numpy(arr: np.ndarray, dtype: DType) -> UOp:
    """The caller's array as a buffer of `dtype`: copied, once, into C order (the tensor never
    aliases the array: a later write to it does not change the tensor)."""
    return _from_owned(np.array(arr, dtype=dtype.np, order="C"), dtype)


def _from_owned(arr: np.ndarray, dtype: DType | None = None) -> UOp:
    """A fresh array no one else holds, as a buffer (no copy); `dtype`: its DType, if known."""
    dtype = dtype or dtypes.from_np(arr.dtype)
    node = UOp(Ops.BUFFER, dtype, (), Buffer(arr.size, dtype, arr.reshape(-1)))
    return node if arr.ndim == 1 else node.reshape(arr.shape)  # (a BUFFER's shape is 1-d)


_CHUNK = 1 << 16  # elements of float64 scratch per step when filling a float arange


def _arange_array(start: Scalar, step: Scalar, n: int, dt: DType) -> np.ndarray:
    """numpy's `arange(start, start + n*step, step).astype(dt)`, bit for bit, made at `dt`: no
    float64 array of the whole size on the way (numpy fills x[i] = x[0] + i*(x[1] - x[0]))."""
    check_buffer(n, dt, "arange")  # (made on the host: a buffer)
    if not dt.is_float and all(isinstance(v, int) for v in (start, step)):
        return np.arange(start, start + n * step, step, dtype=dt.np)
    out = np.empty(n, dt.np)
    first = np.float64(start)
    with np.errstate(all="ignore"):  # the casts numpy's astype would make, warnings included
        delta = (first + np.float64(step)) - first
        for i in range(0, n, _CHUNK):
            idx = np.arange(i, min(n, i + _CHUNK), dtype=np.float64)
            out[i:i + len(idx)] = first + idx * delta
        if n > 1:  # numpy stores the first two values as computed, not through delta
            out[1] = first + np.float64(step)
        if n:
            out[0] = first
    return out


def _broadcast_uop(uop: UOp, shape: Shape) -> UOp:
    """Explicit broadcasting: left-pad the shape with 1s, then EXPAND."""
    own = uop.shape
    if own == shape:  # (most operands: nothing to do, and nothing asked twice)
        return uop
    return uop.reshape((1,) * (len(shape) - len(own)) + own).expand(shape)


_INT_RANGES = tuple((int(np.iinfo(t).min), int(np.iinfo(t).max))
                    for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                              np.int64, np.uint64))
_SMALL_INT = (int, (True,) * len(_INT_RANGES))
_probed: dict[tuple, DType] = {}


def _operand_kind(item: Tensor | Scalar) -> object:
    """What numpy's result dtype depends on: a tensor's dtype; a Python scalar's type, and for
    an int, which integer types can hold it (numpy raises OverflowError for one that cannot)."""
    if isinstance(item, Tensor):
        return item.dtype
    if type(item) is int:
        if 0 <= item <= 127:  # (most int operands) every integer type holds it
            return _SMALL_INT
        # past int64 and uint64: refused for every dtype, as torch's "int too big to convert"
        # (a float tensor took it as its nearest float, a bool one raised numpy's bare error)
        scalar_int(item, "operand")
        return (int, tuple(lo <= item <= hi for lo, hi in _INT_RANGES))
    return type(item)


def _np_concatenate(*xs: np.ndarray) -> np.ndarray:
    return np.concatenate(xs)


def _np_where(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.ones(1, bool), a, b)


def _np_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(a.reshape(1, 1), b.reshape(1, 1))


def _scalar_operand(value: Scalar, dtype: DType) -> Scalar:
    """A Python number as the operand of an op of `dtype`: an int the (int) dtype cannot hold
    wraps to its bits, as torch does (int8 + 300 is int8 + 44, uint8 - 1 is 255); numpy 2 raises
    instead. (A constant made on its own, `full` or `Tensor(300, int8)`, is refused, as torch
    refuses it.)"""
    if type(value) is int and dtype.is_int and not 0 <= value <= 127:
        return _wrapped(value, dtype)
    return value


def _divisor_operand(value: Any, dtype: DType) -> None:
    """Refuse a Python int divisor that wraps to 0 in an int `dtype` (`uint8 // 256`): the
    wrapped constant would divide by zero, whose result (0, runtime/semantics.py) is no answer
    to the division written; torch raises ZeroDivisionError there, numpy 2 OverflowError."""
    if type(value) is int and value != 0 and dtype.is_int and _scalar_operand(value, dtype) == 0:
        raise ZeroDivisionError(f"the divisor {value} wraps to 0 in {dtype.name} (a Python int "
                                f"past an int dtype wraps to its bits, as torch computes it); "
                                "cast the tensor to a wider integer type first")


def _probe(fn: Callable, *items: Tensor | Scalar) -> DType:
    """The dtype numpy gives `fn` on operands of these dtypes (Python scalars stay weak).

    Asking numpy costs tens of microseconds, so answers are kept per (function, operand kinds):
    pass a function that is the same object at every call (a ufunc, a module-level def)."""
    key = (fn, *map(_operand_kind, items))
    dt = _probed.get(key)
    if dt is None:
        args = [np.ones(1, i.dtype.np) if isinstance(i, Tensor) else i for i in items]
        with np.errstate(all="ignore"):
            try:
                try:
                    dt = dtypes.from_np(np.asarray(fn(*args)).dtype)
                except OverflowError:
                    # a Python int the tensor's int dtype cannot hold: numpy 2 refuses it, torch
                    # keeps the tensor's dtype (and wraps the int, _scalar_operand); an int past
                    # every int64 and uint64 is refused (torch: "int too big to convert")
                    args = [1 if type(i) is int and -2**63 <= i < 2**64 else i for i in args]
                    dt = dtypes.from_np(np.asarray(fn(*args)).dtype)
                    # ... but only where that dtype is a tensor's own: a bool tensor's int64
                    # (numpy's default int) wrapped `bool + 2**63` to -2**63, which numpy and
                    # torch both refuse (not kept: the next call refuses again)
                    big = next((i for i in items if type(i) is int and dt.is_int
                                and not dt.min <= i <= dt.max), None)
                    if big is not None and not any(isinstance(i, Tensor) and i.dtype is dt
                                                   for i in items):
                        raise OverflowError(f"Python int {big} is out of {dt.name}'s range, the "
                                            "dtype of this op's result (numpy and torch refuse "
                                            "it too)") from None
            except ValueError as e:  # e.g. ints to negative int powers: numpy's refusal
                raise InvalidArgument(str(e)) from None
            except TypeError as e:  # no loop for these dtypes (floats to `&`, bools to `-`)
                raise DtypeError(str(e)) from None
        if len(_probed) < 4096:  # bounded, should a caller pass a fresh function per call
            _probed[key] = dt
    return dt


def _lift(items: Sequence[Tensor | Scalar], dtype: DType) -> list[UOp]:
    """Operands as UOps of one dtype and one (broadcast) shape. (A Python float stays a
    CONST; runtime/float_params.py makes it a kernel argument once the kernels are built.)"""
    shapes = []
    for i in items:  # (loops, not generators: a generator is a frame per operand)
        if isinstance(i, Tensor):
            shapes.append(i.uop.shape)
    shape = shapes[0] if len(shapes) == 1 else broadcast_shape(*shapes)
    out = []
    for i in items:  # a loop: an operand already of this dtype and shape is taken as it is
        if isinstance(i, Tensor):
            u = i.uop.cast(dtype)
            out.append(u if u.shape == shape else _broadcast_uop(u, shape))
        else:
            out.append(_const_uop(_scalar_operand(i, dtype), dtype, shape))
    return out


# The nodes of the ops a lazy record may hold (runtime/lazy.py), built by these functions
# whether the op runs eagerly or its record is built later: the very same nodes either way.
def _same_shape_binary(a: UOp, b: UOp, op: Ops, dt: DType) -> UOp:
    """`a op b` of one shape, each cast to `dt` (numpy's result dtype) first."""
    if a.dtype is not dt:
        a = a.cast(dt)
    if b.dtype is not dt:
        b = b.cast(dt)
    if dt is dtypes.bool:  # numpy's bool + and * are logical or / and
        op = _BOOL_OPS.get(op, op)
    return a.alu(op, b)


def _broadcast_binary(a: UOp, b: UOp, op: Ops, dt: DType, shape: Shape) -> UOp:
    """`a op b` broadcast to `shape`, as `_binary` builds it for operands of two shapes
    (`_lift`: each cast to `dt`, then broadcast)."""
    a, b = a.cast(dt), b.cast(dt)
    return _same_shape_binary(_broadcast_uop(a, shape), _broadcast_uop(b, shape), op, dt)


def _broadcast(a: Shape, b: Shape) -> Shape | None:
    """The shape two operands broadcast to, or None when they do not (the eager op then
    raises its own error). Kept per pair: a loop over one program asks the same pair again."""
    shape = _broadcasts.get((a, b))
    if shape is None:
        try:
            shape = broadcast_shape(a, b)
        except InvalidArgument:
            return None
        if len(_broadcasts) < 4096:  # (bounded, as `_probed` is)
            _broadcasts[(a, b)] = shape
    return shape


_broadcasts: dict[tuple[Shape, Shape], Shape] = {}


def _scalar_binary(x: UOp, op: Ops, dt: DType, c: UOp, reverse: bool) -> UOp:
    """`x op c` (`c op x` reversed), c a lifted constant of `dt` and x's shape."""
    if x.dtype is not dt:
        x = x.cast(dt)
    if dt is dtypes.bool:
        op = _BOOL_OPS.get(op, op)
    return c.alu(op, x) if reverse else x.alu(op, c)


def _float_unary(x: UOp, op: Ops) -> UOp:
    """A float function, computed in numpy's float type for the input (int8 -> float16)."""
    return x.cast(least_float(x.dtype)).alu(op)


def _float_relu(x: UOp) -> UOp:
    """`(x <= 0).where((x < 0).where(0.0, x).detach(), x)` of a float x, the very nodes, built
    directly: the Tensor ops' probes and broadcasts were most of a small program's cost."""
    zero = _const_uop(0.0, x.dtype, x.shape)
    below = x.alu(Ops.CMPLT, zero)
    at_most = below.alu(Ops.OR, x.alu(Ops.CMPEQ, zero))  # (`<=` as `_compare` builds it)
    return at_most.alu(Ops.WHERE, below.alu(Ops.WHERE, zero, x).f(Ops.DETACH), x)


def _relu_tensor(x: Tensor) -> Tensor:
    return Tensor(_float_relu(x.uop))


def _tensors_broadcast(a: Tensor, b: Tensor, op: Ops, probe: Callable) -> Tensor:
    """`a op b` of two tensors of other shapes, in numpy's dtype for them (`probe`)."""
    dt = _probe(probe, a, b)
    x, y = _lift((a, b), dt)
    return Tensor(_same_shape_binary(x, y, op, dt))  # (both of dt and one shape: no cast)


def _normalized(x: Tensor, s: Tensor) -> Tensor:
    """x / s for s a value per row (softmax's sum of exps, layernorm's deviation) as jax
    computes it: 1 / s once per row, then x * (1 / s), a multiply per element where a divide
    cost a 1024x1024 softmax a fifth of its time. Not x / s's bits: two roundings, so within
    2 ulps of x / s where 1 / s is normal (always here: a softmax's sum is in [1, n], a
    layernorm's deviation at least sqrt(eps) and at most sqrt(float max)); zeros, infinities
    and NaN give what x / s gives (docs/tensor.md, tests/test_normalized_rows.py). float16
    keeps the divide: its 1 / s rounded to a half would cost up to an ulp more of 11 bits.
    The reciprocal is of s broadcast to x's shape, as the divide read it: kernelize's fused
    softmax (`.fuse()`) realized a reciprocal of the row's sum before its broadcast apart
    (test_kernelize); the C computes it once per row (the loop's invariant) when the rows run
    along the innermost loop; along another axis (softmax(0), a middle axis) s varies along
    that loop, and the scheduler computes 1 / s once per column beside s's reduction
    (rangeify.rules' recip_column), not a divide per element."""
    if x.dtype is dtypes.float16:
        return x / s
    return x * s.expand(x.shape).reciprocal()


_BOOL_OPS = {Ops.ADD: Ops.OR, Ops.MUL: Ops.AND}


def _lazy_binary(x: Tensor, lazy: Lazy, other: Any, op: Ops, probe: Callable,
                 reverse: bool) -> Tensor | None:
    """`_binary` of a lazy tensor and another lazy tensor (of its shape or broadcast with it)
    or a Python number, as a record; None when it is built eagerly (another operand, shapes
    that do not broadcast, a record too large)."""
    kind = type(other)
    if kind is LazyTensor:
        o = other.record
        a, b = (o, lazy) if reverse else (lazy, o)
        dt = _probed.get((probe, a.dtype, b.dtype))
        if dt is None:
            dt = _probe(probe, *((other, x) if reverse else (x, other)))
        if o.shape == lazy.shape:
            record = lazy_op(_same_shape_binary, (op, dt), (op, dt), (a, b), dt, lazy.shape)
        else:  # (a broadcast: the result's shape decides the graph, with the leaves' shapes)
            shape = _broadcast(a.shape, b.shape)
            if shape is None:
                return None
            record = lazy_op(_broadcast_binary, (op, dt, shape), (op, dt, shape), (a, b), dt,
                             shape)
    elif kind is float or kind is int:
        dt = None
        if kind is float or 0 <= other <= 127:
            k = float if kind is float else _SMALL_INT
            dt = _probed.get((probe, k, lazy.dtype) if reverse else (probe, lazy.dtype, k))
        if dt is None:
            dt = _probe(probe, *((other, x) if reverse else (x, other)))
        other = _scalar_operand(other, dt)
        c = _const_uop(other, dt, lazy.shape)
        # (the constant by its type and value, a float by its hex form: -0.0 is not 0.0)
        value = other.hex() if kind is float else other
        record = lazy_op(_scalar_binary, (op, dt, c, reverse), (op, dt, kind, value, reverse),
                         (lazy,), dt, lazy.shape)
    else:
        return None
    return _lazy_tensor(record, op._name_)


# A binary op of a tensor and a Python scalar or a tensor, built before, gives the same node
# again (nodes are hash-consed), after a dtype probe, constant lifting and broadcasting that
# cost several times the node itself. So the node is kept, weakly, per (op, operands); the
# entry leaves with its node. The node holds both operands' nodes, so while it lives the key's
# nodes are the ones it was built from.
class _Kept(weakref.ref):
    __slots__ = ("key",)  # (weakref's own constructor, then the key: no Python __init__)


def _forget(entry: _Kept) -> None:
    if _binaries.get(entry.key) is entry:
        del _binaries[entry.key]


_binaries: dict[tuple, _Kept] = {}
# the nodes an op (matmul, sum, mean, log_softmax) added over its operands' nodes, by the op,
# the operands' dtypes and shapes, its other arguments and the default dtypes: `build_recorded`'s
# entries (`_by_form`); no node of any graph is held (an entry's arg is no buffer)
_forms: dict[tuple, tuple] = {}
MAX_FORMS = 512


def _by_form(build: Callable[..., Tensor], operands: tuple[Tensor, ...], extra: tuple
             ) -> Tensor:
    """`build(*operands, *extra)`, whose nodes over the operands' nodes depend on their dtypes
    and shapes alone: built once per form, then rebuilt from that record with no shape
    inference, broadcast or dtype probe (a model's forward over a fresh batch each step: a
    product was 85 Python calls, now 26). Not while a value on another device or sharded
    lives (the nodes then depend on devices), nor for a symbolic size or an unhashable
    argument (`sum(axis=[0, 1])`)."""
    nodes = tuple([t.uop for t in operands])
    if in_use["devices"] or in_use["multi"]:
        return build(*operands, *extra)
    key = (build, tuple([(u.dtype, u.shape) for u in nodes]), extra, dtypes.default_float,
           dtypes.default_int)
    try:
        entries = _forms.get(key)
    except TypeError:  # (an unhashable argument)
        return build(*operands, *extra)
    if entries is not None:
        built = list(nodes)
        build_recorded(entries, built)
        return Tensor(built[-1])
    out = build(*operands, *extra)
    if not any([has_symbolic(u.shape) for u in nodes]) and \
            (made := _record_nodes(out.uop, nodes)) is not None:
        if len(_forms) >= MAX_FORMS:  # (bounded: the forms of a shape sweep)
            _forms.clear()
        _forms[key] = made
    return out


def _record_nodes(out: UOp, ins: tuple[UOp, ...]) -> tuple | None:
    """The nodes `out`'s graph adds over the nodes `ins` as `build_recorded`'s entries (out's
    last), or None when it holds a buffer or a variable's mark (not the same for other
    operands) or an input is the other (`x @ x`: recorded apart, it is a form of its own)."""
    if len(set(ins)) < len(ins) or _may_be_built(ins):
        return None
    ref_of = {n: i for i, n in enumerate(ins)}
    entries = []
    for n in toposort(out, stop=ref_of.__contains__):
        if n.op is Ops.BUFFER or n.tag is not None:
            return None
        entries.append((n.op, n.dtype, n.arg, n.tag, tuple([ref_of[s] for s in n.src]),
                        n.shape))
        ref_of[n] = len(ref_of)
    return tuple(entries) if entries and ref_of[out] == len(ref_of) - 1 else None


def _may_be_built(ins: tuple[UOp, ...]) -> bool:
    """Whether a node the op builds may be an operand's node itself (nodes are hash-consed),
    where the walk that records the op's nodes stops and reads the operand: an operand whose
    graph holds another (`B.T @ B`: the product's transpose of B is the node `B.T`, and every
    later product of that form gave `a @ a.T`), or one of constants alone, as the op builds
    them (`Tensor.ones(7, 1).mean(1, keepdim=True)` divides by those very nodes: later means of
    that form gave x / x). A walk of the operands' graphs, only while their form has no
    record yet; a lone operand's stops at its first leaf that is no constant."""
    marks = set(ins)
    lone = len(ins) == 1
    for n in ins:
        seen = {n}
        stack = [n]
        pop, push, add = stack.pop, stack.append, seen.add
        leaf = False
        while stack:
            m = pop()
            src = m.src
            if not src and m.op is not Ops.CONST:
                leaf = True
                if lone:
                    break
            for s in src:
                if s in marks:
                    return True
                if s not in seen:
                    add(s)
                    push(s)
        if not leaf:
            return True
    return False


def _keep(key: tuple, node: UOp) -> None:
    entry = _binaries[key] = _Kept(node, _forget)
    entry.key = key


def _tensor_operator(op: Ops, probe: Callable, reverse: bool) -> Callable[..., Tensor]:
    """A Tensor's `+ - * /` (and reversed): the node this op built last time over the same
    operands (`_binaries`, keyed as `_binary_key` keys it), found here, else `_binary`. (`x +
    y` went `__add__` -> `add` -> `_binary` -> `_binary_key`: four frames of the seven an
    op over realized tensors costs.) The very op and probe `add`, `sub`, `mul`, `div` pass."""

    def operator(self: Tensor, other: Any) -> Tensor:
        kind = type(other)
        if kind is Tensor:
            key: tuple = (op, probe, reverse, self.uop, other.uop)
        elif kind is int or kind is bool or kind is float and other != 0.0 and other == other:
            key = (op, probe, reverse, self.uop, kind, other)  # (-0.0, NaN: `_binary_key`'s)
        else:
            return self._binary(other, op, probe, reverse)
        if (ref := _binaries.get(key)) is not None and (node := ref()) is not None:
            return _tensor(node)
        return self._binary(other, op, probe, reverse)

    return operator


def _compare_probe(or_equal: bool) -> str:
    """The memo key's stand-in for a comparison's probe: `<=` and `<` differ by `or_equal`."""
    return "<=" if or_equal else "<"


def _binary_key(x: Tensor, other: Any, op: Ops, probe: Callable, reverse: bool) -> tuple | None:
    kind = type(other)
    if kind is Tensor or kind is LazyTensor:
        return (op, probe, reverse, x.uop, other.uop)
    if kind is float:
        if other == 0.0 or other != other:  # -0.0 equals 0.0 as a key; NaN never matches
            return None
    elif kind is not int and kind is not bool:
        return None
    return (op, probe, reverse, x.uop, kind, other)


def _where_key(cond: Tensor, x: Tensor | Scalar, y: Tensor | Scalar) -> tuple | None:
    """The memo key of `cond.where(x, y)` (see _binaries): the operands' nodes, and a Python
    number by its type and value (a float by its hex form: -0.0 and 0.0 are two constants).
    A select is most of `relu` and of every clamp, rebuilt at each call of a small program."""
    key: list[Any] = [Ops.WHERE, cond.uop]
    for v in (x, y):
        kind = type(v)
        if kind is Tensor or kind is LazyTensor:
            key.append(v.uop)  # type: ignore[union-attr]
        elif kind is float:
            key.append((kind, v.hex()))  # type: ignore[union-attr]
        elif kind is int or kind is bool:
            key.append((kind, v))
        else:
            return None
    return tuple(key)


def _tensor(node: UOp) -> Tensor:
    """A Tensor over a node that was a Tensor's before (its shape already checked once; the
    limit is read again, it may have changed)."""
    check_shape(node.shape, node.dtype, "an op")
    t = object.__new__(Tensor)
    t.uop, t.grad, t._requires_grad = node, None, None
    _live_add(_ref(t, _live_discard))
    return t


def _lazy_tensor(record: Lazy | None, what: str) -> LazyTensor | None:
    """A Tensor over a lazy record (runtime/lazy.py), no node built; None when there is no
    record (too large: the caller builds the node). Its shape is checked as an op's is."""
    if record is None:
        return None
    if math.prod(record.shape) > ALWAYS_ALLOWED:  # (a record's sizes are ints: no loop here)
        check_shape(record.shape, record.dtype, what)
    t = object.__new__(LazyTensor)
    t.record, t.grad, t._requires_grad = record, None, None
    _live_add(_ref(t, _live_discard))  # (an assign's reader scan reads its uop: its graph)
    return t


def _coerce(x: Any) -> Tensor | Scalar:
    """Tensors and Python scalars pass; numpy values and lists become tensors."""
    if isinstance(x, Tensor) or type(x) in _PYTHON_SCALARS:
        return x
    if isinstance(x, (np.ndarray, np.generic, list, tuple)):
        return Tensor(x)
    if isinstance(x, UOp) and x.dtype is dtypes.index:  # t.numel(), t.shape[0] of a symbolic t
        raise InvalidArgument(f"the symbolic size {size_text(x)} as an operand: a size is no "
                              "number of the graph; take it as a tensor, Tensor(size)")
    raise TypeError(f"cannot use {type(x).__name__} as a tensor operand")


# numpy dtypes as DTypes, as dtypes.from_np gives them (asked once each: `Tensor(array)` of
# each batch of a loop reads it)
_np_dtypes: dict[np.dtype, DType] = {}


# ---------------------------------------------------------------------- the Tensor
# tensors whose requires_grad was set true (weakly): runtime/origins.py's `needs_grad`
_needs_grad, _any_need = origins.needs_grad, origins.any_need
# each variable's own node (`Tensor._own_node`), with the tensor it was made for: a tensor set to
# require a gradient again while its node is still that one keeps it (a graph built before
# reads it; a new mark left that graph's gradient out)
_own_nodes: weakref.WeakKeyDictionary[UOp, weakref.ref] = weakref.WeakKeyDictionary()
# every tensor, weakly: an assign writes its target's buffer at the call, so the lazy tensors
# built before it that compute from that buffer are found here and kept on its old contents
# (`_keep_old_reads`). A set of weak references, each discarding itself when its tensor dies:
# adding one and dropping it are C calls (a WeakSet's add and removal are Python functions, paid
# by every op of a small program)
_live: set[weakref.ref] = set()
_live_add, _live_discard, _ref = _live.add, _live.discard, weakref.ref


def _wrap_grads(targets: Sequence[Tensor], uops: Sequence[UOp], grads: dict[UOp, UOp],
                back: dict[UOp, UOp]) -> list[Tensor]:
    """Each target's gradient (found by its node `uops[i]`) as a tensor, reading realized
    values rather than computing them again (`back`: origins.collapse); a target no gradient
    reaches (not in the graph, behind DETACH or integer values) gets zeros, as tinygrad's and
    torch's: d sign(x) / dx, d copysign(x, y) / dy. A sharded target's gradient is laid out
    as the target is: one that arrives whole (the constant of `xs.sum()`'s) is split, one
    replicated or sharded along another axis (through a reduction over the other axis, a
    flip, a matmul) is cut or resharded (runtime/multi.py's relayout)."""
    out = [Tensor(origins.collapse(grads[u], back)) if u in grads else
           Tensor.zeros(t.shape, dtype=t.dtype) for t, u in zip(targets, uops)]
    sharded = [k for k, u in enumerate(uops) if in_use["multi"]
               and isinstance(device_of(u), tuple)]
    if sharded:
        from .multi import UNKNOWN, layout_of, layouts, relayout

        nodes = [uops[k] for k in sharded] + [out[k].uop for k in sharded]
        found = layout_of(nodes)  # (read off the graphs in one walk: no rewrite)
        unknown = [i for i, f in enumerate(found) if f is UNKNOWN]
        if unknown:  # the rules themselves, in one pass, where the walk cannot say
            try:
                for i, f in zip(unknown, layouts([nodes[i] for i in unknown])):
                    found[i] = f
            except InvalidArgument:  # (an op multi_pm refuses: said when it is realized)
                pass
        for k, want, have in zip(sharded, found, found[len(sharded):]):
            if want not in (None, UNKNOWN) and have not in (want, UNKNOWN):
                out[k] = Tensor(relayout(out[k].uop, *want))  # type: ignore[misc]
    return out


def _gradients(ex: origins.Expanded, targets: Sequence[Tensor], uops: Sequence[UOp],
               seed: Tensor | None, walk: KeyWalk | None = None) -> list[Tensor]:
    """The gradients of the root `ex.roots[0]` with respect to the targets, whose nodes in the
    expanded graph are `uops` (origins.expand: realized values, `loss.item()` before
    `loss.backward()`, are differentiated through the graphs they were computed from, and
    the gradients read the realized values). `walk`: the key's walk that made `ex.order`."""
    root = ex.roots[0]
    seed_node = seed_gradient(root, None if seed is None else seed.uop, list(uops))
    _refuse_lost(ex)
    for g, why in ex.stale:  # a realized value whose graph reads what changed since
        if _reaches(g, set(uops)):
            raise GradientError(
                "this gradient flows through a realized value whose graph no longer computes "
                f"it: {why}. torch refuses such a graph too (modified by an inplace "
                "operation): take the gradient before the step, or compute the value again")
    grads = compute_gradient(root, seed_node, list(uops), ex.order, walk)
    return _wrap_grads(targets, uops, grads, ex.back)


def _refuse_lost(ex: origins.Expanded) -> None:
    """Refuse a gradient through a value a jit replay computed: it kept no graph, and the
    gradient would silently leave its path out (runtime/origins.py's `lose`)."""
    if not ex.lost:
        return
    for n in ex.lost:  # (a value an assign into a sharded view wrote: said as such)
        if "jit" not in (why := origins.why_lost(n)) and _reaches(ex.roots[0], {n}):
            raise GradientError(f"this gradient flows through a value that keeps no graph: "
                                f"{why}")
    if _reaches(ex.roots[0], set(ex.lost)):
        raise GradientError(
            "this gradient flows through a value a jit replay computed (rulegrad.jit), which "
            "keeps no graph: call the function without the jit for a value to differentiate "
            "through, or detach() it to use it as a constant")


def _reaches(root: UOp, nodes: set[UOp]) -> bool:
    """A node of `nodes` is in root's graph, reached through ops a gradient flows through."""
    stack, seen = [root], {root}
    while stack:
        n = stack.pop()
        if n in nodes:
            return True
        if n.op is Ops.DETACH or n.op is Ops.ASSIGN:
            continue
        for s in n.src:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return False


class Tensor(TensorOps, NNOps):
    """A lazy tensor: a UOp graph (`self.uop`) evaluated on `realize()` / `numpy()`.

    The core ops are here; the rest of tinygrad's API, composed from them, comes from the
    mixins `TensorOps` (runtime/tensor_ops.py) and `NNOps` (runtime/nn.py)."""

    # (`record`: a LazyTensor's record, below; a Tensor never reads it)
    __slots__ = ("uop", "record", "_requires_grad", "grad", "__weakref__")
    __array_ufunc__ = None  # `ndarray op Tensor` defers to our reflected operators
    # made by the first draw, not at import: numpy.random (and the hashlib/secrets it imports)
    # is ~10 ms of a process's first `import rulegrad`, which most programs never draw from
    _rng: np.random.Generator | None = None

    def __init__(self, data: Any, dtype: DType | str | None = None,
                 requires_grad: bool | None = None, device: str | None = None):
        self.grad: Tensor | None = None
        self._requires_grad: bool | None = None
        if type(data) is np.ndarray and dtype is None and requires_grad is None and \
                device is None and type(self) is Tensor:  # (a subclass keeps its class)
            # (host data as it is, the most common call, e.g. each batch of a loop): its own
            # copy as one flat array, as a lazy record (its node is built when first read).
            # Not in `_live`: a tensor over a buffer is no reader an assign looks for
            # (`readers_of`), and it never comes to compute from other buffers (realize and
            # assign leave it over a buffer or an ASSIGN), so the weak reference would be work
            # for nothing at its birth and its death
            dt = _np_dtypes.get(data.dtype)  # (dtypes.from_np's answer, without its frame)
            if dt is None:
                dt = dtypes.from_np(data.dtype)
                if len(_np_dtypes) < 64:  # (bounded: every byte order of a dtype is a key)
                    _np_dtypes[data.dtype] = dt
            buf = host_copy(data, dt)
            buf.owner = _ref(self)  # (the batch's tensor, which an optimizer's kept step watches)
            self.record = leaf(buf, dt, data.shape)
            self.__class__ = LazyTensor  # (the same layout: a LazyTensor adds no slot)
            return
        dt = None if dtype is None else to_dtype(dtype)
        if type(data) is np.ndarray:  # (host data, the most common argument: tested first)
            self.uop = _from_numpy(data, dt or dtypes.from_np(data.dtype))
        elif isinstance(data, UOp):
            self.uop = data if dt is None else data.cast(dt)
            # before any work (`_name_`: Enum's `name` property costs a tenth of a small op)
            check_shape(self.uop.shape, self.uop.dtype, self.uop.op._name_)
            if in_use["devices"]:  # ops over tensors of different devices fail here, named
                device_of(self.uop)
        elif isinstance(data, Tensor):
            uop = data.uop
            if buffer_of(uop) is not None or stored_view(uop) or shards_of(uop) is not None:
                # a copy of storage, as torch.tensor(t) is (`t.detach().clone()`): an assign
                # into either tensor (an optimizer's step) changed the other, and a gradient
                # through the new tensor reached t. (A lazy value has no storage: realized,
                # each tensor gets a buffer of its own.)
                uop = uop.f(Ops.DETACH).f(Ops.CONTIGUOUS)
            self.uop = uop if dt is None else uop.cast(dt)
        elif type(data) in _PYTHON_SCALARS:
            if dt is None:
                dt = _int_data_dtype(data, data) if type(data) is int else _default_dtype(data)
            else:  # torch.tensor's checked conversion: uint8 holds -1 as 255, not 300 or NaN
                data = stored_scalar(data, dt, "Tensor", check_float=False, widest=None)
            self.uop = UOp.const(dt, _const_value(data, dt))
        elif isinstance(data, (list, tuple)):
            arr = np.array(data)
            kind = arr.dtype.kind
            if kind in "OUS":  # (numbers only make numeric arrays: the rare list is walked)
                _check_nested(data)
            if kind == "f" and arr.dtype == np.float64 and (np.abs(arr) >= 2.0 ** 63).any():
                # numpy reads ints past int64 as float64 or objects (`[2**63, 1]`, `[2**70]`):
                # each element's own type says whether the list held a float at all
                arr = np.array(data, dtype=object)
                kind = "O"
            if dt is None:
                dt = _numpy_scalars_dtype(data, arr)
            if dt is None:
                if kind in "iu" and arr.size or kind == "O" and not any(
                        isinstance(v, (float, np.floating)) for v in arr.flat):
                    # (ints past int64: kind O; a numpy float is a float too, np.float64(1e20))
                    dt = _int_data_dtype(min(arr.flat), max(arr.flat))
                else:
                    dt = {"b": dtypes.bool, "i": dtypes.default_int}.get(kind,
                                                                       dtypes.default_float)
            if kind == "i" and dt.is_unsigned and arr.size and arr.min() < 0:
                # torch.tensor's, as a number's above: a negative int down to -max wraps
                # (`Tensor([-1, 2], uint8)` is [255, 2]), anything past is refused
                lo, hi = int(arr.min()), int(arr.max())
                for v in (lo, hi):
                    stored_scalar(v, dt, "Tensor")
                self.uop = _from_owned(arr.astype(dt.np), dt)
            else:  # (a float past the dtype's range is inf, as torch.tensor's: no warning)
                with np.errstate(over="ignore"):
                    self.uop = _from_owned(np.array(data, dtype=dt.np), dt)  # (a new array)
        elif isinstance(data, np.generic) and dt is not None and data.dtype.kind in "biuf":
            # a numpy number is a number to torch.tensor too: checked as a Python one
            # (`Tensor(np.int64(300), uint8)` wrapped to 44, NaN to int became 0)
            value = stored_scalar(data.item(), dt, "Tensor", check_float=False)
            with np.errstate(over="ignore"):  # (a float16 holds 1e5 as inf, as torch's)
                self.uop = _from_numpy(np.asarray(value, dtype=dt.np), dt)
        elif isinstance(data, (np.ndarray, np.generic)):
            dt = dt or dtypes.from_np(data.dtype)
            self.uop = _from_numpy(np.asarray(data), dt)
        else:
            raise TypeError(f"cannot make a Tensor from {type(data).__name__}")
        if device is not None:  # host data is placed there; anything else is copied there
            dev = canonical(device)
            if self.uop.base.op is Ops.BUFFER and not isinstance(data, (UOp, Tensor)):
                self.uop.base.arg.place(dev)  # a fresh buffer no graph has seen yet
            else:
                self.uop = self.to(dev).uop
        if requires_grad is not None:  # (after the node: a variable needs one of its own)
            self.requires_grad = requires_grad
        _live_add(_ref(self, _live_discard))  # (last: a tensor in the set always has its uop)

    # ------------------------------------------------------------------ facts
    @property
    def shape(self) -> Shape:
        return self.uop.shape

    @property
    def dtype(self) -> DType:
        return self.uop.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        refuse_symbolic("len()", self.shape, (0,))  # (len must be an int)
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        """The rows along axis 0, as torch's. Without it Python iterated through __getitem__
        until an IndexError, and a 0-d tensor's first index raised one: `list(Tensor(3.0))`
        was [] where torch and numpy refuse."""
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        refuse_symbolic("iteration", self.shape, (0,))
        return (self[i] for i in range(self.shape[0]))

    def __setstate__(self, state: tuple) -> None:
        """A copy or an unpickled tensor (`copy.copy`, `deepcopy`, `pickle`): its slots, and
        registered as a tensor made by an op is (`_live`, and `_needs_grad` when it needs
        one): a copy of `t + 1` shares t's buffer, and an assign to t must find it to keep it
        on t's old contents, as it keeps the original. (`deepcopy` then gives its copy buffers
        of its own: `__deepcopy__`.)"""
        attrs, slots = state if type(state) is tuple else (state, None)
        for part in (attrs, slots):  # (attrs: a user subclass's __dict__)
            for name, value in (part or {}).items():
                setattr(self, name, value)
        _live_add(_ref(self, _live_discard))
        if self._requires_grad:
            _needs_grad.add(self)

    def __deepcopy__(self, memo: dict) -> Tensor:
        """A copy with storage of its own, as torch's deepcopy: each buffer its graph reads
        (its own, when realized) is copied, once per deepcopy (`memo`: two tensors over one
        buffer, copied together, share the copy), so a later assign or in-place op on the
        original leaves the copy alone; its `.grad` and attributes are deep-copied too.
        (copy.copy shares the storage, as torch's does: an assign into a realized original is
        seen by its shallow copy, as by a view.) A lazy graph keeps its ops, over the copies."""
        self.uop  # noqa: B018 (a LazyTensor materializes: now a Tensor, copied as one)
        out = object.__new__(type(self))
        memo[id(self)] = out
        _, _, state = self.__reduce_ex__(4)[:3]
        out.__setstate__(copy.deepcopy(state, memo))
        copies: dict[UOp, UOp] = {}
        for n in toposort(out.uop):
            if n.op is Ops.BUFFER and n.arg.data is not None:
                buf = n.arg
                if (mine := memo.get(id(buf))) is None:  # (a Buffer deep-copies as itself)
                    mine = memo[id(buf)] = Buffer(buf.size, buf.dtype, buf.data.copy(),
                                                  buf.device)
                copies[n] = UOp(Ops.BUFFER, n.dtype, (), mine)
        out.uop = out.uop.substitute(copies)
        return out

    def __repr__(self) -> str:
        """The values of a realized tensor (read from its buffer); for any other, its shape,
        dtype and device, and that it is lazy: a repr never compiles or runs anything."""
        devs = self.device
        buf = buffer_of(self.uop) if not isinstance(devs, tuple) else None
        if buf is None or buf.data is None:
            state = "lazy" if shards_of(self.uop) is None else "realized, sharded"
            return (f"<Tensor {state} shape={show(self.shape)} dtype={self.dtype.name} "
                    f"device={devs!r}>")
        data = buf.data.reshape(concrete(self.shape))
        if has_symbolic(self.shape):
            data = data[tuple(slice(0, n) for n in actual(self.shape))]
        body = np.array2string(data, separator=", ", prefix="Tensor(")
        where = f", device={devs!r}" if devs != DEFAULT else ""
        return f"Tensor({body}, dtype={self.dtype.name}{where})"

    # __eq__ builds a tensor, so hash by identity (like tinygrad); object's own: no Python call
    __hash__ = object.__hash__

    def _scalar(self, to: str) -> Scalar:
        """The value of a one-element tensor (computed, if lazy), for float(), int(), bool()."""
        if has_symbolic(self.shape) or self.numel() != 1:
            raise InvalidArgument(f"{to}() of a tensor of shape {show(self.shape)}: only a "
                                  "one-element tensor has one value (use .numpy(), .tolist(), "
                                  ".any() or .all())")
        return self.item()

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    # ------------------------------------------------------------------ creation
    @staticmethod
    @takes_requires_grad
    def full(shape: Shape | int, fill_value: Scalar, dtype: DType | str | None = None) -> Tensor:
        shape = _check_shape(_argfix((shape,)), symbolic=True)
        # a one-element tensor is read as torch's full reads it, a number (int() of a NaN
        # tensor was a bare ValueError)
        fill_value = python_scalar(fill_value.item() if isinstance(fill_value, Tensor)
                                   else fill_value)
        need_real("full: fill_value", fill_value)  # (a Variable too: a size, not a value)
        if dtype is None:  # (an int past int32: int64, as arange and Tensor(data) choose)
            dt = _int_data_dtype(fill_value, fill_value, "full") if type(fill_value) is int \
                else _default_dtype(fill_value)
        else:  # (checked as torch's full checks it: uint8 holds -1 as 255, not 300)
            dt = to_dtype(dtype)
            fill_value = stored_scalar(fill_value, dt, "full: fill_value")
        return Tensor(_const_uop(fill_value, dt, shape))

    @staticmethod
    @takes_requires_grad
    def zeros(*shape: Any, dtype: DType | str | None = None) -> Tensor:
        return Tensor.full(_argfix(shape), 0.0, dtype or dtypes.default_float)

    @staticmethod
    @takes_requires_grad
    def ones(*shape: Any, dtype: DType | str | None = None) -> Tensor:
        return Tensor.full(_argfix(shape), 1.0, dtype or dtypes.default_float)

    @staticmethod
    @takes_requires_grad
    def arange(start: Scalar, stop: Scalar | None = None, step: Scalar = 1,
               dtype: DType | str | None = None) -> Tensor:
        """Like tinygrad: int arguments give int32 (int64 when the range does not fit int32),
        any float argument gives float32; values the dtype cannot hold raise OverflowError."""
        if stop is None:
            start, stop = 0, start
        start, stop, step = (python_scalar(v) for v in (start, stop, step))
        if any(isinstance(v, UOp) for v in (start, stop, step)):
            raise InvalidArgument(f"arange({size_text(start)}, {size_text(stop)}, "
                                  f"{size_text(step)}): a symbolic size is no count; shrink "
                                  "an arange of its maximum to it instead")
        for name, v in (("start", start), ("end", stop), ("step", step)):
            need_real(f"arange: {name}", v)
        if step == 0:
            raise InvalidArgument("arange: step must not be zero")
        if any(not isinstance(v, int) and not math.isfinite(v) for v in (start, stop, step)):
            raise InvalidArgument(f"arange({start}, {stop}, {step}): the ends and the step "
                                  "must be finite")
        n = max(0, math.ceil((stop - start) / step))
        ends = (start, start + (n - 1) * step) if n else ()
        if dtype is None:
            all_int = all(isinstance(v, int) for v in (start, stop, step))
            dtype = dtypes.default_int if all_int else dtypes.default_float
            if all_int and any(not dtype.min <= v <= dtype.max for v in ends):
                dtype = dtypes.int64
        dt = to_dtype(dtype)
        if any(not dt.min <= v <= dt.max for v in ends):
            raise OverflowError(f"arange [{start}, {stop}) step {step} is not representable in "
                                f"{dt.name}")
        return Tensor(_from_owned(_arange_array(start, step, n, dt)))

    @staticmethod
    @takes_requires_grad
    def eye(n: int, m: int | None = None, dtype: DType | str = dtypes.default_float) -> Tensor:
        """The identity, built lazily from movement ops (a strided diagonal of ones)."""
        m = n if m is None else m
        if isinstance(n, UOp) or isinstance(m, UOp):
            raise InvalidArgument(f"eye({size_text(n)}, {size_text(m)}): a symbolic size is no "
                                  "count; shrink an eye of its maximum to it instead")
        need_int("eye: n", n)
        need_int("eye: m", m)
        n, m = operator.index(n), operator.index(m)  # (a numpy int reached the pads' sizes)
        if n < 0 or m < 0:
            raise InvalidArgument(f"eye: sizes must be non-negative, got ({n}, {m})")
        # ones in column 0 of an (n, n+1) grid become the diagonal when read as (n, n)
        grid = Tensor.ones(n, 1, dtype=dtypes.bool).pad((None, (0, n)))
        diag = grid.reshape(n * (n + 1)).shrink(((0, n * n),)).reshape(n, n)
        diag = diag.pad((None, (0, m - n))) if m > n else diag.shrink((None, (0, m)))
        return diag.cast(dtype)

    @staticmethod
    def manual_seed(seed: int = 0) -> None:
        Tensor._rng = np.random.default_rng(seed)

    @staticmethod
    def _generator() -> np.random.Generator:
        if Tensor._rng is None:
            Tensor._rng = np.random.default_rng(0)
        return Tensor._rng

    @staticmethod
    @takes_requires_grad
    def rand(*shape: Any, dtype: DType | str = dtypes.default_float) -> Tensor:
        """Uniform in [0, 1) from host randomness (seeded by `manual_seed`, 0 at import)."""
        shape = _check_shape(_argfix(shape))
        dt = to_dtype(dtype)
        if not dt.is_float:
            raise InvalidArgument(f"rand needs a float dtype, got {dt.name}")
        check_buffer(math.prod(shape), dt, "rand")  # (drawn on the host: a buffer)
        if dt in (dtypes.float32, dtypes.float64):  # drawn at the target dtype, into place
            return Tensor(_from_owned(Tensor._generator().random(shape, dtype=dt.np)))
        # float16: k / 2^11 for a random 11-bit k, as torch draws it. A float32 draw rounded to
        # float16 came out 1.0 once in ~4000 (every draw past 1 - 2^-12), outside [0, 1).
        digits = np.finfo(dt.np).nmant + 1
        out = np.empty(math.prod(shape), dt.np)  # a chunk at a time: peak near the output
        rng = Tensor._generator()
        for i in range(0, out.size, _CHUNK):
            out[i:i + _CHUNK] = rng.integers(0, 1 << digits, min(_CHUNK, out.size - i), np.int32)
        out *= dt.np.type(2.0 ** -digits)  # (exact: a power of two)
        return Tensor(_from_owned(out.reshape(shape)))

    # ------------------------------------------------------------------ movement
    def reshape(self, *shape: Any) -> Tensor:
        shape = tuple(self.shape[i] if s is None else s for i, s in enumerate(_argfix(shape)))
        if has_symbolic(self.shape) or has_symbolic(shape):
            # stored at vmax, a symbolic axis keeps its place: only 1s may come and go
            if _non_ones(self.shape) != _non_ones(shape) or \
                    any(isinstance(s, UOp) and not is_bound(s) for s in shape):
                raise ValueError(f"cannot reshape {show(self.shape)} to {show(shape)}: with a "
                                 "symbolic "
                                 f"size, "
                                 "a reshape may only add or drop axes of size 1")
            return Tensor(self.uop.reshape(shape))
        return Tensor(self.uop.reshape(_resolve_reshape(self.shape, shape)))

    def permute(self, *order: Any) -> Tensor:
        order = _argfix(order)
        norm = [o + self.ndim if isinstance(o, int) and o < 0 else o for o in order]
        if sorted(norm) != list(range(self.ndim)):
            raise InvalidArgument(f"permute order {order} is not a permutation of the axes of a "
                             f"tensor of shape {show(self.shape)}")
        return Tensor(self.uop.permute(tuple(norm)))

    def expand(self, *shape: Any) -> Tensor:
        shape = _argfix(shape)
        if len(shape) < self.ndim:
            raise InvalidArgument(f"cannot expand shape {show(self.shape)} to {shape}: fewer "
                                  f"dimensions")
        old = (1,) * (len(shape) - self.ndim) + self.shape
        new = []
        for i, (o, s) in enumerate(zip(old, shape)):
            s = o if s == -1 and i >= len(shape) - self.ndim else s
            if is_bound(s) and (o is s or o == 1):  # to a symbolic size
                new.append(s)
                continue
            if not isinstance(s, int) or s < 0 or (o != s and o != 1):
                raise InvalidArgument(f"cannot expand shape {show(self.shape)} to {shape}: axis "
                                      f"{i} has size {show((o,))[1:-2]}, and only size-1 axes "
                                      f"expand")
            new.append(s)
        return Tensor(_broadcast_uop(self.uop, tuple(new)))

    def pad(self, padding: Sequence[Any], mode: str = "constant", value: Scalar = 0) -> Tensor:
        """Per axis `(before, after)` or None; or flat ints in torch order (last axis first).

        `mode` is tinygrad's: "constant" (fill with `value`), "reflect", "replicate" or
        "circular". A negative pad cuts that many elements off (a SHRINK)."""
        arg = _resolve_pad(self.shape, padding)  # (its shape names the axes, sizes unread)
        cuts_symbolic = any((isinstance(s, UOp) and p != (0, 0)) or min(p) < 0
                            for s, p in zip(self.shape, arg))
        if has_symbolic(self.shape) and (mode != "constant" or cuts_symbolic):
            raise InvalidArgument(f"pad {padding}: a symbolic-size axis cannot be padded, and a "
                                  f"tensor of symbolic shape {show(self.shape)} takes only "
                                  f"constant, "
                                  "non-negative pads of its other axes")
        if mode != "constant":
            from .tensor_ops import pad_mode  # the modes are built from cat, flip and repeat
            return pad_mode(self, arg, mode)
        if all(p == (0, 0) for p in arg):
            # itself (tinygrad's too): a fill value would leave a WHERE over an all-true mask,
            # which blocks merging the views around it (max_pool2d pads by 0 with -inf)
            return self
        cut = tuple((max(-b, 0), s - max(-a, 0)) for (b, a), s in zip(arg, concrete(self.shape)))
        if any(e < b for b, e in cut):
            raise InvalidArgument(f"padding {padding} cuts more than the whole of shape "
                                  f"{show(self.shape)}")
        x = self.shrink(cut) if any(b < 0 or a < 0 for b, a in arg) else self
        arg = tuple((max(b, 0), max(a, 0)) for b, a in arg)
        padded = x.uop.pad(arg)
        if value == 0 and not (isinstance(value, float) and math.copysign(1, value) < 0):
            return Tensor(padded)
        # PAD fills with zeros: put the value where a padded mask of ones is false
        mask = _const_uop(True, dtypes.bool, x.shape).pad(arg)
        # (checked as torch's pad checks it: no negative value for an unsigned tensor)
        value = stored_scalar(python_scalar(value), x.dtype, "pad: value", strict_unsigned=True)
        fill = _const_uop(value, x.dtype, mask.shape)
        return Tensor(mask.alu(Ops.WHERE, padded, fill))

    def shrink(self, arg: Sequence[tuple[int, int] | None]) -> Tensor:
        arg = tuple(arg)
        if len(arg) != self.ndim:
            raise InvalidArgument(f"shrink {arg} needs one (start, end) per axis of shape "
                                  f"{show(self.shape)}")
        bounds = []
        for i, (a, s) in enumerate(zip(arg, self.shape)):
            if a is None:
                bounds.append((0, s))
                continue
            b, e = a
            if b == 0 and e is s:  # the whole axis, symbolic or not
                bounds.append((0, s))
                continue
            if isinstance(s, UOp) and isinstance(e, (int, np.integer)) and \
                    0 <= b <= e <= actual((s,))[0]:
                # a concrete part of the bound rows (topk's first k): the same rows of the
                # storage at every value that holds them, and this value does
                bounds.append((int(b), int(e)))
                continue
            if is_bound(e) or isinstance(s, UOp):  # a symbolic size: (0, bound variable)
                if not (b == 0 and is_bound(e) and not isinstance(s, UOp) and e.vmax <= s):
                    raise ValueError(f"shrink {arg}: a symbolic size is (0, v) for a bound "
                                     f"Variable v whose max fits axis {i} ({s!r}), on a concrete "
                                     "axis")
                bounds.append((0, e))
                continue
            if isinstance(e, UOp):
                raise ValueError(f"shrink {arg}: axis {i} ends at an unbound Variable; "
                                 "bind it first (v.bind(value))")
            if not 0 <= b <= e <= s:
                raise InvalidArgument(f"shrink {arg} is out of range for shape {show(self.shape)} "
                                 f"(axis {i}: ({b}, {e}) not within (0, {s}))")
            bounds.append((b, e))
        return Tensor(self.uop.shrink(tuple(bounds)))

    def flip(self, axis: int | Sequence[int], *args: int) -> Tensor:
        axes = self._axes(_argfix((axis, *args)) if args else axis)
        if any(isinstance(self.shape[a], UOp) for a in axes):
            raise ValueError(f"flip: a symbolic-size axis cannot be flipped (shape "
                             f"{show(self.shape)})")
        return Tensor(self.uop.flip(tuple(i in axes for i in range(self.ndim))))

    def transpose(self, dim0: int = 1, dim1: int = 0) -> Tensor:
        """Swap two axes (tinygrad's signature: the default swaps axes 0 and 1)."""
        a, b = self._axis(dim0), self._axis(dim1)
        order = list(range(self.ndim))
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self) -> Tensor:  # noqa: N802 - numpy's and tinygrad's name
        return self.permute(tuple(reversed(range(self.ndim))))

    # torch's `*_as`: the other tensor's shape or dtype (a new user's torch code called them)
    def expand_as(self, other: Tensor) -> Tensor: return self.expand(other.shape)
    def reshape_as(self, other: Tensor) -> Tensor: return self.reshape(other.shape)
    def view_as(self, other: Tensor) -> Tensor: return self.reshape(other.shape)
    def type_as(self, other: Tensor) -> Tensor: return self.cast(other.dtype)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        a, b = self._axis(start_dim), self._axis(end_dim)
        return self.reshape(self.shape[:a] + (math.prod(self.shape[a:b + 1]),)
                            + self.shape[b + 1:])

    def unsqueeze(self, dim: int) -> Tensor:
        if not -self.ndim - 1 <= dim <= self.ndim:
            raise AxisError(f"unsqueeze dim {dim} is out of range for shape {show(self.shape)}")
        dim = dim + self.ndim + 1 if dim < 0 else dim
        return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])

    def squeeze(self, dim: int | Sequence[int] | None = None) -> Tensor:
        if dim is None:
            return self.reshape(tuple(s for s in self.shape if s != 1))
        if isinstance(dim, (tuple, list)):
            # torch 2's tuple of dims: each listed axis of size 1 is dropped, the others kept
            # (it was "axis (0, 2) is out of range" for a shape that has both)
            if self.ndim == 0 and all(d in (0, -1) for d in dim):
                if len(dim) > 1:  # (0 and -1 both name the one axis: torch refuses it too)
                    raise InvalidArgument(f"squeeze: dim {tuple(dim)} names an axis twice")
                return self
            axes = [self._axis(d) for d in dim]
            if len(set(axes)) != len(axes):
                raise InvalidArgument(f"squeeze: dim {tuple(dim)} names an axis twice")
            return self.reshape(tuple(s for i, s in enumerate(self.shape)
                                      if i not in axes or s != 1))
        if self.ndim == 0 and dim in (0, -1):
            return self
        a = self._axis(dim)
        if self.shape[a] != 1:
            return self
        return self.reshape(self.shape[:a] + self.shape[a + 1:])

    def __getitem__(self, index: Any) -> Tensor:
        """numpy's basic indexing (ints, slices, None, ...) as movement ops; int tensors and
        lists of ints index as numpy's advanced indexing does (an out-of-range index reads 0,
        as in tinygrad), and so does a boolean mask alone or among other indices. A bool
        scalar (`t[True]`, `t[1:, False]`) is numpy's 0-d mask: a new axis of 1 or 0."""
        index = _numpy_ints(index)
        if _has_bool_scalar(index):
            return _bool_scalar_index(self, index)
        if (mask := _as_mask(index)) is not None:
            return _mask_index(self, mask)
        if isinstance(index, list) and not _is_int_list(index):
            index = tuple(index)
        items = index if isinstance(index, tuple) else (index,)
        if any(_as_mask(it) is not None for it in items):
            items = _masks_as_ints(self, items)
        if not any(isinstance(it, (Tensor, list, tuple)) for it in items):
            return Tensor(_index(self.uop, index))
        return _advanced_index(self, items)

    def __setitem__(self, index: Any, value: Any) -> None:
        """`t[index] = value` as numpy does it, for basic indices (ints, slices with any step,
        None, ...) and boolean masks (`t[t > 0.5] = 0`, or one among basic indices as
        `t[m, 1:3] = 0`); the value is cast to t's dtype and broadcast to what the index reads
        (a mask takes one value).

        It is an `assign` of the whole tensor, `where(index, value, t)`, so it writes t's
        buffer now (a lazy t is realized first): graphs built from t before the write keep
        their values (as after `assign`); views of t see the write. A value that reads t
        (`t[1:] = t[:-1]`) reads it before the write, as assign does."""
        index = _numpy_ints(index)
        if buffer_of(self.uop) is None and shards_of(self.uop) is None:
            self.realize()  # (a view, t[1:], becomes a tensor of its own: it does not write t)
        if type(value) in _PYTHON_SCALARS or isinstance(value, np.generic):
            # checked as torch's item write checks it (uint8: -1 is 255, 300 is refused; a
            # float16 takes 1e5 as inf, unchecked, where float32 refuses 1e39: it stored inf)
            # (an int past int64 too: torch's item write reads an int64, "Overflow when
            # unpacking long long", where its fill takes a uint64 as well)
            value = stored_scalar(python_scalar(value), self.dtype, "t[...] = value",
                                  check_float=self.dtype is not dtypes.float16,
                                  widest=dtypes.int64.max)
        val = value if isinstance(value, Tensor) else Tensor(value, dtype=self.dtype)
        val = val.cast(self.dtype)
        if _has_bool_scalar(index) and _as_mask(index) is None:
            return _bool_scalar_write(self, index, val)
        if (mask := _as_mask(index)) is not None:
            _check_mask(self, mask)
            # checked as torch's masked write checks it (uint8: Tensor(300) refused; of
            # several values each is stored: Tensor([300, 5]) wrapped to 44, where torch's
            # index_put refuses a source of another dtype)
            val = stored_value(value if isinstance(value, Tensor) else val, self.dtype,
                               "t[mask] = value")
            if val.numel() != 1:
                self.assign(_mask_values_write(self, mask, val))
                return
            hit = mask.reshape(mask.shape + (1,) * (self.ndim - mask.ndim)).expand(self.shape)
            self.assign(hit.where(val.reshape(()).expand(self.shape), self))
            return
        items = index if isinstance(index, tuple) else (index,)
        masks = [i for i, it in enumerate(items) if _as_mask(it) is not None]
        if len(masks) == 1 and not isinstance(index, list) and not any(
                isinstance(it, (Tensor, list, np.ndarray)) for i, it in enumerate(items)
                if i != masks[0]):
            # a masked write: checked as t[mask] = value (torch's index_put refuses 300 too)
            val = stored_value(value if isinstance(value, Tensor) else val, self.dtype,
                               "t[mask, ...] = value")
            self.assign(_masked_write(self, items, masks[0], val))
            return
        if isinstance(index, list) or any(isinstance(it, (Tensor, list, np.ndarray))
                                          for it in items):
            given = ", ".join(_index_kind(it) for it in items)
            raise IndexError(f"item assignment takes ints, slices, None, ... and one boolean "
                             f"mask among them; got {given} (int tensor indices are not "
                             "supported: use scatter)")
        plan = _basic_plan(self.shape, index)
        if has_symbolic(tuple(plan[3])):
            raise InvalidArgument(f"t[...] = value over a symbolic span (shape "
                                  f"{show(tuple(plan[3]))}): the value would be padded by a "
                                  "symbolic amount, which cannot be made")
        view = tuple(plan[3])
        try:
            val = val.expand(view) if val.shape != view else val
        except InvalidArgument:
            raise InvalidArgument(f"could not broadcast a value of shape {show(val.shape)} into "
                                  f"t[{index!r}] of shape {view}") from None
        hit = _place(Tensor.ones(*view, dtype=dtypes.bool), self.shape, plan)
        self.assign(hit.where(_place(val, self.shape, plan), self))

    def cat(self: Tensor | Sequence[Tensor], *args: Tensor, dim: int = 0) -> Tensor:
        """Concatenate along `dim`: each part padded to the full length, then summed (OR)."""
        tensors, dim = _tensor_list(self, args, dim)
        first = tensors[0]
        if first.ndim == 0:
            raise AxisError("cannot concatenate 0-d tensors (shapes "
                             f"{[t.shape for t in tensors]})")
        axis = first._axis(dim)
        for t in tensors:
            if t.ndim != first.ndim or any(a != b for i, (a, b) in
                                           enumerate(zip(t.shape, first.shape)) if i != axis):
                raise InvalidArgument(f"cat along dim {dim} needs equal shapes off that axis, got "
                                      f"{', '.join(show(t.shape) for t in tensors)}")
        if any(isinstance(t.shape[axis], UOp) for t in tensors):
            shapes = ", ".join(show(t.shape) for t in tensors)
            raise InvalidArgument(f"cat along dim {dim}, a symbolic-size axis (shapes {shapes}): "
                                  "the parts would be padded along it, and a symbolic axis "
                                  "cannot be padded")
        dt = _probe(_np_concatenate, *tensors)
        total = sum(t.shape[axis] for t in tensors)
        combine = Ops.OR if dt is dtypes.bool else Ops.ADD
        out, offset = None, 0
        for t in tensors:
            pad = [(0, 0)] * first.ndim
            pad[axis] = (offset, total - offset - t.shape[axis])
            part = t.uop.cast(dt).pad(tuple(pad))
            if dt.is_float and len(tensors) > 1:
                # floats are padded with -0.0, the identity of ADD: x + 0.0 would turn a -0.0
                # of the part into 0.0
                part = Tensor(t.uop.cast(dt)).pad(tuple(pad), value=-0.0).uop
            out = part if out is None else out.alu(combine, part)
            offset += t.shape[axis]
        return Tensor(out)

    def stack(self: Tensor | Sequence[Tensor], *args: Tensor, dim: int = 0,
              axis: int | None = None) -> Tensor:
        """Join tensors of one shape along a new axis `dim` (numpy's name `axis` also works)."""
        tensors, dim = _tensor_list(self, args, dim if axis is None else axis)
        if any(t.shape != tensors[0].shape for t in tensors):
            raise InvalidArgument("stack needs tensors of one shape, got "
                                  f"{', '.join(show(t.shape) for t in tensors)}")
        ndim = tensors[0].ndim + 1
        if not -ndim <= dim < ndim:
            raise AxisError(f"stack dim {dim} is out of range for shape {show(tensors[0].shape)}")
        return Tensor.cat(*(t.unsqueeze(dim) for t in tensors), dim=dim)

    # ------------------------------------------------------------------ elementwise
    def _binary(self, other: Any, op: Ops, probe: Callable, reverse: bool = False) -> Tensor:
        key = _binary_key(self, other, op, probe, reverse)
        if key is not None and (ref := _binaries.get(key)) is not None and (
                node := ref()) is not None:
            return _tensor(node)  # the node this op built last time (see _binaries)
        kind = type(other)
        if kind is float or kind is int:
            # a Python number (most operands of a long chain of ops): _lift's work without
            # its generality (one shape, nothing to broadcast). _probe's own key, looked up
            # here for a float and a small int (no call per operand); any other int is keyed
            # by the integer types that hold it, in _probe
            x = self.uop
            dt = None
            if kind is float or 0 <= other <= 127:
                kind = float if kind is float else _SMALL_INT
                dt = _probed.get((probe, kind, x.dtype) if reverse else (probe, x.dtype, kind))
            if dt is None:
                dt = _probe(probe, *((other, self) if reverse else (self, other)))
            node = _scalar_binary(x, op, dt, _const_uop(_scalar_operand(other, dt), dt,
                                                        x.shape), reverse)
        elif (kind is Tensor or kind is LazyTensor) and self.uop.shape == other.uop.shape:
            # two tensors of one shape (most binary ops of a model): nothing to broadcast,
            # and _probe's key for two tensors (their dtypes) looked up here
            a, b = (other.uop, self.uop) if reverse else (self.uop, other.uop)
            dt = _probed.get((probe, a.dtype, b.dtype))
            if dt is None:
                dt = _probe(probe, *((other, self) if reverse else (self, other)))
            node = _same_shape_binary(a, b, op, dt)
        elif kind is Tensor:
            # two tensors to broadcast (a bias added to a product): by form, the probe and
            # the broadcast done once per (op, dtypes, shapes)
            out = _by_form(_tensors_broadcast, (other, self) if reverse else (self, other),
                           (op, probe))
            if key is not None:
                _keep(key, out.uop)
            return out
        else:
            other = _coerce(other)
            items = (other, self) if reverse else (self, other)
            dt = _probe(probe, *items)
            a, b = _lift(items, dt)
            node = _same_shape_binary(a, b, op, dt)  # (both of dt and one shape: no cast)
        out = Tensor(node)
        if key is not None:
            _keep(key, out.uop)
        return out

    def add(self, x: Any, reverse: bool = False) -> Tensor:
        return self._binary(x, Ops.ADD, np.add, reverse)

    def sub(self, x: Any, reverse: bool = False) -> Tensor:
        return self._binary(x, Ops.SUB, np.subtract, reverse)

    def mul(self, x: Any, reverse: bool = False) -> Tensor:
        return self._binary(x, Ops.MUL, np.multiply, reverse)

    def div(self, x: Any, reverse: bool = False, rounding_mode: str | None = None) -> Tensor:
        """True division, in numpy's float type for the operands (int / int -> float64).

        `rounding_mode` is torch's and tinygrad's: "trunc" rounds toward zero, "floor" down;
        both keep an int dtype for int operands (and give 0 for a division by zero)."""
        if rounding_mode is None:
            return self._binary(x, Ops.FDIV, np.true_divide, reverse)
        if rounding_mode == "floor":
            return self.idiv(x, reverse)
        if rounding_mode != "trunc":
            raise RuntimeError(f"div rounding_mode must be None, 'trunc' or 'floor', "
                               f"got {rounding_mode!r}")
        other = _coerce(x)
        items = (other, self) if reverse else (self, other)
        dt = _probe(np.floor_divide, *items)
        if not reverse:
            _divisor_operand(other, dt)
        a, b = _lift(items, dt)
        return Tensor(a.alu(Ops.FDIV, b).alu(Ops.TRUNC) if dt.is_float else a.alu(Ops.IDIV, b))

    def pow(self, x: Any, reverse: bool = False) -> Tensor:
        """`self ** x`: the IR's POW, C's pow. A Python float exponent of 0.5 is SQRT instead,
        as numpy and torch compute it (they differ from pow at -0.0 and -inf: -0.0 and NaN
        where pow gives +0.0 and +inf); the choice is made here, on the Python value, so the
        IR's POW means one thing however its exponent is laid out (runtime/semantics.py)."""
        if not reverse and type(x) is float and x == 0.5:
            return Tensor(self.uop.cast(_probe(np.power, self, x)).alu(Ops.SQRT))
        if not reverse and type(x) is int and self.dtype.is_int and not (
                self.dtype.min <= x <= self.dtype.max):
            # wrapping an exponent changes the power (3 ** 300 is not 3 ** 44 in int8): refused,
            # as torch refuses it
            raise InvalidArgument(f"the exponent {x} is outside {self.dtype.name}'s range "
                                  f"[{self.dtype.min}, {self.dtype.max}]; cast the tensor to a "
                                  "wider integer type first")
        return self._binary(x, Ops.POW, np.power, reverse)

    def _shift(self, x: Any, op: Ops, reverse: bool) -> Tensor:
        other = _coerce(x)
        items = (other, self) if reverse else (self, other)
        # a bool shifts as numpy's int8 (np.left_shift has no bool loop); a float not at all
        if any(isinstance(i, float) or (isinstance(i, Tensor) and i.dtype.is_float)
               for i in items):
            got = " and ".join(i.dtype.name if isinstance(i, Tensor) else type(i).__name__
                               for i in items)
            raise DtypeError(f"shifts need integer or bool operands, got {got}")
        dt = _probe(np.left_shift, *items)
        a, b = _lift(items, dt)
        return Tensor(a.alu(op, b))

    def lshift(self, x: Any, reverse: bool = False) -> Tensor:
        """`<<` of ints (numpy's dtype rules); bits shifted past the width are lost."""
        return self._shift(x, Ops.SHL, reverse)

    def rshift(self, x: Any, reverse: bool = False) -> Tensor:
        """`>>` of ints: arithmetic (sign-filling) for signed dtypes, as numpy and C."""
        return self._shift(x, Ops.SHR, reverse)

    def maximum(self, x: Any) -> Tensor:
        if type(x) is int and self.dtype.is_int and not self.dtype.min <= x <= self.dtype.max:
            return self.clamp(x, None)  # (see minimum)
        return self._binary(x, Ops.MAX, np.maximum)

    def minimum(self, x: Any) -> Tensor:
        # a Python int past an int dtype is clamp's bound: one that changes nothing is dropped,
        # one that would change every value is refused; wrapped to the dtype's bits, as an
        # arithmetic operand is, `uint8.minimum(300)` was `minimum(44)`
        if type(x) is int and self.dtype.is_int and not self.dtype.min <= x <= self.dtype.max:
            return self.clamp(None, x)
        return self._binary(x, Ops.MIN, np.minimum)

    def idiv(self, x: Any, reverse: bool = False) -> Tensor:
        """Floor division like numpy's `//` (see the module docstring for floats)."""
        other = _coerce(x)
        items = (other, self) if reverse else (self, other)
        dt = _probe(np.floor_divide, *items)
        if not reverse:
            _divisor_operand(other, dt)
        a, b = _lift(items, dt)
        if dt.is_float:
            return Tensor(_float_divmod(a, b)[0])
        q = a.alu(Ops.IDIV, b)  # truncates; step down when the remainder's sign differs
        if dt.is_unsigned:
            return Tensor(q)
        return Tensor(q.alu(Ops.SUB, _floor_fix(a.alu(Ops.MOD, b), b).cast(dt)))

    def mod(self, x: Any, reverse: bool = False) -> Tensor:
        """Remainder like numpy's `%`: the sign of the divisor."""
        other = _coerce(x)
        items = (other, self) if reverse else (self, other)
        dt = _probe(np.remainder, *items)
        if not reverse:
            _divisor_operand(other, dt)
        a, b = _lift(items, dt)
        if dt.is_float:
            return Tensor(_float_divmod(a, b)[1])
        r = a.alu(Ops.MOD, b)
        if dt.is_unsigned:
            return Tensor(r)
        return Tensor(_floor_fix(r, b).alu(Ops.WHERE, r.alu(Ops.ADD, b), r))

    def fmod(self, x: Any) -> Tensor:
        """Remainder with the sign of the dividend: C's fmod, the IR's MOD, which is exact (x
        - trunc(x / y) * y was not: 1e30 fmod 7 was 0, not 1, 5 fmod inf NaN, -3 fmod 3 +0)."""
        if type(x) is int:
            _divisor_operand(x, self.dtype)  # (an int tensor's dtype is fmod's with an int)
        return self._binary(x, Ops.MOD, np.fmod)

    def copysign(self, other: Any) -> Tensor:
        """|self| with other's sign bit, in the float type numpy's copysign gives the pair (an
        int self gave ints, and abs(int32 min) < 0; a float64 other gave a float32 self's)."""
        if not isinstance(other, (Tensor, int, float, np.generic)):  # (an array or a list)
            other = Tensor(other)
        dt = _probe(np.copysign, self, other)  # (a Python number weak, as numpy's)
        o = (other if isinstance(other, Tensor) else Tensor(other))._float()
        mag = self.cast(dt).abs()
        # the sign bit itself: o < 0 or 1/o < 0 missed a NaN's (copysign(2, -nan) is -2)
        neg = o.bitcast({2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}[o.dtype.itemsize]) < 0
        return neg.where(-mag, mag)

    def _compare(self, other: Any, op: Ops, reverse: bool = False, or_equal: bool = False
                 ) -> Tensor:
        key = _binary_key(self, other, op, _compare_probe(or_equal), reverse)
        if key is not None and (ref := _binaries.get(key)) is not None and (
                node := ref()) is not None:
            return _tensor(node)  # built before (see _binaries)
        other = _coerce(other)
        if self.dtype.is_float:
            # an int past int64 and uint64, refused as torch refuses it: a float compares with
            # it rounded (`float64 == 2**70 + 1` was true); an int or bool tensor compares
            # with any int exactly, as numpy 2 (below)
            scalar_int(other, "comparison")
        if type(other) is int and (self.dtype.is_int or self.dtype.is_bool) and not (
                self.dtype.min <= other <= self.dtype.max):
            # numpy 2 compares a Python int outside the tensor's integer type exactly
            # (`uint8 < 256` is all true, `uint64 == -1` all false): every element sits on
            # one side of it, as the type's least value does (and never equal to it); so
            # does a bool tensor's 0 and 1 (`bool < 2**63` wrapped the int to -2**63)
            lo, hi = (other, self.dtype.min) if reverse else (self.dtype.min, other)
            return Tensor.full(self.shape, lo < hi if op is Ops.CMPLT else op is Ops.CMPNE,
                               dtypes.bool)
        items = (other, self) if reverse else (self, other)
        dt = _probe(np.add, *items)
        a, b = _lift(items, dt)
        out = a.alu(op, b)
        if or_equal:  # a <= b as (a < b) | (a == b): NaN compares false both ways
            out = out.alu(Ops.OR, a.alu(Ops.CMPEQ, b))
        t = Tensor(out)
        if key is not None:
            _keep(key, t.uop)
        return t

    __add__ = _tensor_operator(Ops.ADD, np.add, False)
    __radd__ = _tensor_operator(Ops.ADD, np.add, True)
    __sub__ = _tensor_operator(Ops.SUB, np.subtract, False)
    __rsub__ = _tensor_operator(Ops.SUB, np.subtract, True)
    __mul__ = _tensor_operator(Ops.MUL, np.multiply, False)
    __rmul__ = _tensor_operator(Ops.MUL, np.multiply, True)
    __truediv__ = _tensor_operator(Ops.FDIV, np.true_divide, False)
    __rtruediv__ = _tensor_operator(Ops.FDIV, np.true_divide, True)
    def __floordiv__(self, x: Any) -> Tensor: return self.idiv(x)
    def __rfloordiv__(self, x: Any) -> Tensor: return self.idiv(x, True)
    def __mod__(self, x: Any) -> Tensor: return self.mod(x)
    def __rmod__(self, x: Any) -> Tensor: return self.mod(x, True)
    def __pow__(self, x: Any) -> Tensor:
        # numpy's `a ** 2` is np.square (its operator's fast path), int8 for a bool a where
        # np.power(a, 2) is int64; for every other dtype the two agree
        if type(x) is int and x == 2 and self.dtype.is_bool:
            return self.square()
        return self.pow(x)
    def __rpow__(self, x: Any) -> Tensor: return self.pow(x, True)
    def __and__(self, x: Any) -> Tensor: return self._binary(x, Ops.AND, np.bitwise_and)
    def __rand__(self, x: Any) -> Tensor: return self._binary(x, Ops.AND, np.bitwise_and, True)
    def __or__(self, x: Any) -> Tensor: return self._binary(x, Ops.OR, np.bitwise_or)
    def __ror__(self, x: Any) -> Tensor: return self._binary(x, Ops.OR, np.bitwise_or, True)
    def __xor__(self, x: Any) -> Tensor: return self._binary(x, Ops.XOR, np.bitwise_xor)
    def __rxor__(self, x: Any) -> Tensor: return self._binary(x, Ops.XOR, np.bitwise_xor, True)
    def __lshift__(self, x: Any) -> Tensor: return self.lshift(x)
    def __rshift__(self, x: Any) -> Tensor: return self.rshift(x)
    def __rlshift__(self, x: Any) -> Tensor: return self.lshift(x, True)
    def __rrshift__(self, x: Any) -> Tensor: return self.rshift(x, True)
    def __matmul__(self, x: Any) -> Tensor: return self.matmul(x)

    # in place, as torch and tinygrad (`x += 1` is `x.assign(x + 1)`): every reference to x, and
    # a view's base (`v = a[:, ::2]; v *= 2` changes a), sees the write
    def __iadd__(self, x: Any) -> Tensor: return self._inplace(self.add(x))
    def __isub__(self, x: Any) -> Tensor: return self._inplace(self.sub(x))
    def __imul__(self, x: Any) -> Tensor: return self._inplace(self.mul(x))
    def __itruediv__(self, x: Any) -> Tensor: return self._inplace(self.div(x))
    def __ifloordiv__(self, x: Any) -> Tensor: return self._inplace(self.idiv(x))
    def __imod__(self, x: Any) -> Tensor: return self._inplace(self.mod(x))
    def __ipow__(self, x: Any) -> Tensor: return self._inplace(self.pow(x))
    def __iand__(self, x: Any) -> Tensor: return self._inplace(self & x)
    def __ior__(self, x: Any) -> Tensor: return self._inplace(self | x)
    def __ixor__(self, x: Any) -> Tensor: return self._inplace(self ^ x)
    def __ilshift__(self, x: Any) -> Tensor: return self._inplace(self.lshift(x))
    def __irshift__(self, x: Any) -> Tensor: return self._inplace(self.rshift(x))

    def _inplace(self, value: Tensor) -> Tensor:
        """`x op= y`: the result written into x, cast to x's dtype where numpy's in-place ufunc
        would (same kind: int32 += int64), else numpy's refusal (int += float). A tensor with no
        storage of its own to write (a lazy view of a lazy value, a padded view) is rebound to
        the result, as before in-place operators existed."""
        if value.dtype is not self.dtype:
            if not np.can_cast(value.dtype.np, self.dtype.np, casting="same_kind"):
                raise InvalidArgument(f"in-place operator: its result {value.dtype.name} cannot "
                                      f"be cast to the tensor's {self.dtype.name} (numpy's "
                                      "same_kind rule; torch refuses it too)")
            value = value.cast(self.dtype)
        if buffer_of(self.uop) is None and self.uop.op in GroupOp.Movement and \
                not _view_of_buffer(self.uop):
            return value
        return self.assign(value)
    def __rmatmul__(self, x: Any) -> Tensor: return Tensor(x).matmul(self)
    def __neg__(self) -> Tensor: return self.neg()

    def __pos__(self) -> Tensor:
        """numpy's `+x`: a copy, refused for bool as np.positive refuses it."""
        unary_result("positive", np.positive, self.dtype)
        return self.copy_node()
    def __abs__(self) -> Tensor: return self.abs()

    def __invert__(self) -> Tensor:
        _probe(np.invert, self)  # numpy's TypeError for floats
        ones = self.dtype.max if self.dtype.is_unsigned or self.dtype.is_bool else -1
        return Tensor(self.uop.alu(Ops.XOR, self.uop.const_like(ones)))

    def __lt__(self, x: Any) -> Tensor: return self._compare(x, Ops.CMPLT)
    def __gt__(self, x: Any) -> Tensor: return self._compare(x, Ops.CMPLT, reverse=True)
    def __le__(self, x: Any) -> Tensor: return self._compare(x, Ops.CMPLT, or_equal=True)
    def __ge__(self, x: Any) -> Tensor:
        return self._compare(x, Ops.CMPLT, reverse=True, or_equal=True)
    def __eq__(self, x: Any) -> Tensor: return self._compare(x, Ops.CMPEQ)  # type: ignore[override]
    def __ne__(self, x: Any) -> Tensor: return self._compare(x, Ops.CMPNE)  # type: ignore[override]

    def where(self, x: Any, y: Any) -> Tensor:
        """`cond.where(x, y)`: x where cond is true (nonzero), else y. Two Python scalars
        give the dtype a Python list of them would: int32, or int64 past int32, or float32."""
        x, y = _coerce(x), _coerce(y)
        key = _where_key(self, x, y)
        if key is not None and (ref := _binaries.get(key)) is not None and (
                node := ref()) is not None:
            return _tensor(node)  # the node this select built last time (see _binaries)
        cond = self if self.dtype is dtypes.bool else self != 0
        for v in (x, y):  # (torch refuses an int past int64 and uint64, bool or float result)
            scalar_int(v, "where")
        if isinstance(x, Tensor) or isinstance(y, Tensor):
            dt = _probe(_np_where, x, y)
        else:
            # (an int past int32: int64, as Tensor([2**40, 0]) and torch's and numpy's where;
            # it was int32, and `c.where(2**40, 0)` an OverflowError)
            dt = max((_int_data_dtype(v, v, "where") if type(v) is int else _default_dtype(v)
                      for v in (x, y)),
                     key=lambda d: (d.is_float, d.is_int or d.is_float, d.itemsize))
        shapes = [cond.shape]
        for t in (x, y):
            if isinstance(t, Tensor):
                shapes.append(t.shape)
        shape = broadcast_shape(*shapes)
        c = _broadcast_uop(cond.uop, shape)
        # a scalar an int result cannot hold is refused, as torch refuses it (uint8 takes -1
        # as 255, but not 300: numpy's wrap-around gave 44); a float one is converted
        a, b = [_broadcast_uop(t.uop.cast(dt), shape) if isinstance(t, Tensor)
                else _const_uop(stored_scalar(t, dt, "where") if dt.is_int else _wrapped(t, dt),
                                dt, shape) for t in (x, y)]
        out = Tensor(c.alu(Ops.WHERE, a, b))
        if key is not None:
            _keep(key, out.uop)
        return out

    def _unary_float(self, op: Ops) -> Tensor:
        """A float function, computed in numpy's float type for the input (int8 -> float16)."""
        return Tensor(_float_unary(self.uop, op))

    def neg(self) -> Tensor:
        _probe(np.negative, self)  # numpy's TypeError for bool
        return Tensor(self.uop.alu(Ops.NEG))

    def exp(self) -> Tensor: return self._unary_float(Ops.EXP)
    def log(self) -> Tensor: return self._unary_float(Ops.LOG)
    def sqrt(self) -> Tensor: return self._unary_float(Ops.SQRT)
    def sin(self) -> Tensor: return self._unary_float(Ops.SIN)

    def reciprocal(self) -> Tensor:
        """1 / x, in the dtype numpy gives `1 / x` (the float type, even for ints)."""
        return Tensor(self.uop.cast(_probe(np.true_divide, 1, self)).alu(Ops.RECIPROCAL))

    def abs(self) -> Tensor:
        if self.dtype.is_bool or self.dtype.is_unsigned:
            return self.copy_node()
        if self.dtype.is_float:  # x * s, exactly |x| (NaN stays NaN); + 0.0 makes
            # abs(-0.0) +0.0 (numpy). Its gradient is torch's, ctx * sign(x): 0 at 0, and NaN
            # there when ctx is infinite (sqrt(abs(x)) at 0), where a where would mask it to 0;
            # s is torch's sign, 0 at NaN, so the gradient there is 0 too (it was NaN)
            s = (self > 0).where(1.0, (self < 0).where(-1.0, 0.0)).cast(self.dtype)
            return self * s + 0.0
        return (self < 0).where(-self, self)

    def relu(self) -> Tensor:
        """max(x, 0) as torch's: NaN stays NaN (a `x > 0` select made it 0) and -0.0 stays
        -0.0; the gradient is 1 where x > 0 or x is NaN, 0 elsewhere (at 0 too)."""
        if not self.dtype.is_float:
            return (self > 0).where(self, 0)
        return _by_form(_relu_tensor, (self,), ())  # (its six nodes once per form)

    @half_in_float32
    def sigmoid(self) -> Tensor:
        x = self.cast(least_float(self.dtype))
        # from e = exp(-|x|) <= 1, never inf: 1 / (1 + exp(-x)) for x >= 0, e / (1 + e) below.
        # The textbook form's gradient at x = -300 is exp(300) * 0 = NaN (torch gives 0)
        pos = x >= 0
        e = pos.where(-x, x).exp()  # -|x| by the branch taken, so the gradient at 0 is right
        r = 1 / (1 + e)
        return pos.where(r, e * r)

    def cast(self, dtype: DType | str) -> Tensor:
        return Tensor(self.uop.cast(to_dtype(dtype)))

    def bitcast(self, dtype: DType | str) -> Tensor:
        """The same bits read as `dtype`, which must have the same item size (numpy's
        `.view(dtype)`); no gradient flows through it."""
        dt = to_dtype(dtype)
        if dt.itemsize != self.dtype.itemsize:
            raise InvalidArgument(f"bitcast from {self.dtype.name} ({self.dtype.itemsize} bytes) "
                                  f"to {dt.name} ({dt.itemsize} bytes): the item sizes must match")
        if dt is self.dtype:
            return self
        return Tensor(UOp(Ops.BITCAST, dt, (self.uop,)))

    # ------------------------------------------------------------------ reductions
    def _axis(self, axis: int) -> int:
        ndim = self.ndim  # (once: a property call per read)
        if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
            raise AxisError(f"axis {axis} is out of range for a tensor of shape {show(self.shape)}")
        return int(axis) % ndim

    def _axes(self, axis: int | Sequence[int] | None) -> tuple[int, ...]:
        ndim = self.ndim
        if axis is None:
            return tuple(range(ndim))
        items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        if ndim == 0 and all(a in (0, -1) for a in items):
            return ()  # a 0-d tensor's axis 0 (or -1) is the tensor itself, as in torch/tinygrad
        axes = [self._axis(a) for a in items]
        if len(set(axes)) != len(axes):
            raise InvalidArgument(f"axis {axis} repeats an axis of shape {show(self.shape)}")
        return tuple(sorted(axes))

    def _reduce(self, op: Ops, axis: Any, keepdim: bool, dtype: DType | None = None,
                start: Any = None) -> Tensor:
        """The reduction over `axis`, from `start` when given (runtime/ops.py, reduce_start)."""
        axes = self._axes(axis)
        uop = self.uop if dtype is None else self.uop.cast(dtype)
        if uop.dtype is dtypes.bool:  # OR and AND of bools, as MAX and MIN
            op = {Ops.ADD: Ops.MAX, Ops.MUL: Ops.MIN}.get(op, op)
        if axes:
            uop = UOp(Ops.REDUCE_AXIS, uop.dtype, (uop,),
                      (op, axes) if start is None else (op, axes, start))
        elif start is not None:  # no axis: start op x, as one step of the loop
            uop = uop.alu(op, uop.const_like(start))
        if not keepdim:
            uop = uop.reshape(tuple([s for i, s in enumerate(self.shape) if i not in axes]))
        return Tensor(uop)

    def sum(self, axis: Any = None, keepdim: bool = False,
            dtype: DType | str | None = None) -> Tensor:
        """Sum in numpy's dtype for it: ints widen to int64/uint64, bools count as int64;
        `dtype` accumulates (and returns) in that dtype instead."""
        return _by_form(Tensor._sum, (self,), (axis, keepdim, dtype))

    def _sum(self, axis: Any = None, keepdim: bool = False,
             dtype: DType | str | None = None) -> Tensor:
        acc = _probe(np.sum, self) if dtype is None else to_dtype(dtype)
        return self._reduce(Ops.ADD, axis, keepdim, acc)

    def max(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        self._refuse_empty("max", self._axes(axis))
        return self._reduce(Ops.MAX, axis, keepdim)

    def min(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        self._refuse_empty("min", self._axes(axis))
        return self._reduce(Ops.MIN, axis, keepdim)

    def _refuse_empty(self, op: str, axes: tuple[int, ...]) -> None:
        """An InvalidArgument (a ValueError) for a max, min, argmax or argmin over an empty axis:
        it has no element to give (the reduction's identity, -inf or +inf, was given). numpy and
        torch raise too, even where the output is empty. A symbolic size is taken as not 0."""
        shape = self.shape
        if empty := [a for a in axes if isinstance(shape[a], int) and shape[a] == 0]:
            raise InvalidArgument(f"{op} over the empty axis {empty[0]} of shape {show(shape)}: "
                                  f"it has no element to give")

    def _max_shift(self, axis: Any) -> Tensor:
        """The max over `axis`, kept, with no gradient: softmax's shift, which only guards exp
        against overflow (tinygrad's choice; it cancels exactly, and the backward graph needs no
        max mask). Over an empty axis -inf, as there are no exps to guard (no refusal: torch's
        softmax there is empty, its logsumexp -inf)."""
        return self._reduce(Ops.MAX, axis, True).detach()

    def _count(self, axis: Any) -> Any:
        sizes = [self.shape[a] for a in self._axes(axis)]
        count: Any = math.prod(s for s in sizes if not isinstance(s, UOp))
        for s in sizes:  # a symbolic size counts as its bound variable, a scalar in the graph
            if isinstance(s, UOp):
                count = Tensor(s).cast(dtypes.int64) * count
        return count

    def mean(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        """numpy's mean dtype (ints -> float64); float16 accumulates in float32, as numpy does."""
        return _by_form(Tensor._mean, (self,), (axis, keepdim))

    def _mean(self, axis: Any = None, keepdim: bool = False) -> Tensor:
        out = _probe(np.mean, self)
        acc = accumulate_float(out)
        total = self.cast(acc).sum(axis, keepdim)
        return (total / self._count(axis)).cast(out)

    def var(self, axis: Any = None, keepdim: bool = False, correction: int = 1) -> Tensor:
        """Variance dividing by max(n - correction, 0); correction=1 as tinygrad (numpy: 0)."""
        out = _probe(np.var, self)
        acc = accumulate_float(out)
        x = self.cast(acc)
        count = self._count(axis) - correction  # a tensor over a symbolic size
        # correction >= n: torch's value divides by 0 (inf, or NaN where all are equal), and its
        # gradient is its analytic 2 (x - mean) / (n - correction), by the divisor unclamped:
        # +-inf at n - correction = 0 (NaN where x is the mean), finite below. Through the
        # graph it was NaN everywhere (inf - inf where the mean's gradient is subtracted). The
        # mean's gradient term is 0 analytically, so it is detached then (only then: a second
        # derivative needs it)
        degenerate = not isinstance(count, Tensor) and count <= 0
        mean = x.mean(axis, keepdim=True)
        dev = x - (mean.detach() if degenerate else mean)
        squares = (dev * dev).sum(axis, keepdim)
        if isinstance(count, Tensor):
            return (squares / count.maximum(0)).cast(out)
        if not degenerate:
            return (squares / count).cast(out)
        if count == 0:
            return (squares / 0).cast(out)
        slope = squares / count  # (finite: only its gradient is used, its value cancels)
        return ((squares / 0).detach() + (slope - slope.detach())).cast(out)

    def softmax(self, axis: int = -1) -> Tensor:
        x = self.cast(least_float(self.dtype))
        e = (x - x._max_shift(axis)).exp()
        return _normalized(e, e.sum(axis, keepdim=True))

    def log_softmax(self, axis: int = -1) -> Tensor:
        return _by_form(Tensor._log_softmax, (self,), (axis,))

    def _log_softmax(self, axis: int = -1) -> Tensor:
        x = self.cast(least_float(self.dtype))
        shifted = x - x._max_shift(axis)
        return shifted - shifted.exp().sum(axis, keepdim=True).log()

    def layernorm(self, axis: int = -1, eps: float = 1e-5) -> Tensor:
        """(x - mean) / sqrt(var + eps) over `axis`, var without correction (tinygrad's),
        in float32 for float16 as torch's (float16 squares overflow past 256)."""
        out = least_float(self.dtype)
        x = self.cast(accumulate_float(out))
        dev = x - x.mean(axis, keepdim=True)
        return _normalized(dev, ((dev * dev).mean(axis, keepdim=True) + eps).sqrt()).cast(out)

    def matmul(self, w: Any) -> Tensor:
        """numpy's matmul (1-D and batched N-D), built as reshape + expand + mul + sum (once
        per form of the operands: `_by_form`)."""
        w = w if isinstance(w, Tensor) else Tensor(w)
        return _by_form(Tensor._matmul, (self, w), ())

    def _matmul(self, w: Tensor) -> Tensor:
        # (each shape read once: a property call per read, some twenty per product)
        a_shape, b_shape = self.shape, w.shape
        if not a_shape or not b_shape:
            raise InvalidArgument(f"matmul needs operands with at least 1 dimension, got shapes "
                             f"{show(a_shape)} and {show(b_shape)}")
        x1 = self.reshape(1, -1) if len(a_shape) == 1 else self
        w1 = w.reshape(-1, 1) if len(b_shape) == 1 else w
        x_shape, w_shape = x1.shape, w1.shape
        if x_shape[-1] != w_shape[-2]:
            raise InvalidArgument(f"matmul shapes {show(a_shape)} and {show(b_shape)} do not "
                                  f"match: the contracted axes' sizes "
                                  f"{show((x_shape[-1], w_shape[-2]))} differ")
        try:
            batch = broadcast_shape(x_shape[:-2], w_shape[:-2])
        except ValueError:
            raise InvalidArgument(f"matmul batch dimensions of shapes {show(a_shape)} and "
                                  f"{show(b_shape)} "
                             f"cannot be broadcast together") from None
        dt = _probe(_np_matmul, self, w)
        # float16 operands are multiplied and summed in float32 and the sum rounded once, as
        # numpy's and torch's float16 matmul: each product exact, not rounded to float16 by
        # MUL's meaning (a product past 65504 was inf, one under 2**-25 was 0; rev66b)
        wide = dtypes.float32 if dt is dtypes.float16 else dt
        (n, k), m = x_shape[-2:], w_shape[-1]
        full = batch + (n, m, k)
        xs = _broadcast_uop(x1.uop.cast(dt).cast(wide).reshape(x_shape[:-1] + (1, k)), full)
        wn = len(w_shape)
        wt = w1.uop.cast(dt).cast(wide).permute(tuple(range(wn - 2)) + (wn - 1, wn - 2))
        ws = _broadcast_uop(wt.reshape(wt.shape[:-2] + (1, m, k)), full)
        prod = xs.alu(Ops.AND if dt is dtypes.bool else Ops.MUL, ws)
        out = Tensor(prod)._reduce(Ops.ADD, -1, keepdim=False).cast(dt)
        if len(a_shape) == 1:
            out = out.reshape(out.shape[:-2] + out.shape[-1:])
        if len(b_shape) == 1:
            out = out.reshape(out.shape[:-1])
        return out

    def dot(self, w: Any) -> Tensor:
        return self.matmul(w)

    # ------------------------------------------------------------------ gradients
    # (runtime/autograd.py computes them on UOps; the rules are rules/gradient.rules)
    @property
    def requires_grad(self) -> bool | None:
        """True: backward() fills `.grad`. None (the default) and False: it does not."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool | None) -> None:
        # the set holds one weak reference per tensor: a second one of the same tensor has its
        # hash, and the set compared the two tensors with `==`, whose truth value raises for
        # more than one element (`requires_grad_()` twice, or again after False)
        if value and not self.dtype.is_float:
            # torch's refusal: an int or bool tensor has no gradient (it was accepted, and
            # backward() left its .grad None, or zeros, silently)
            raise DtypeError(f"only tensors of a floating point dtype can require gradients, "
                             f"got {self.dtype.name} (cast it: .float())")
        was, self._requires_grad = self._requires_grad, value
        if value:
            if not was:  # (once: a second node would not be the one graphs read)
                if (own := _own_nodes.get(self.uop)) is None or own() is not self:
                    self._own_node()
                    _own_nodes[self.uop] = weakref.ref(self)
                _needs_grad.add(self)
        elif was:  # (found by identity: no `==` of tensors)
            for ref in [r for r in _needs_grad.data if r() is self]:
                _needs_grad.data.discard(ref)

    def _own_node(self) -> None:
        """A tensor that needs a gradient is a variable, and its node must be its own. Nodes
        are shared by value, so a constant or a value computed from no variable (`Tensor(3.0)`,
        `Tensor.ones(3)`, `x * 2` of a plain x) is the very node an equal constant or
        computation elsewhere builds, and backward summed both uses' gradients into it:
        `Tensor(3.0, requires_grad=True) * 3.0` gave 6 where torch gives 3. Such a tensor gets
        a buffer of its own, holding its value now, as torch's leaf does. A buffer, or a view of
        one, is marked instead (`_marked`): it still reads that storage, as torch's views do
        (an optimizer's step through `b = a.T` writes a), but no other tensor has its node.
        A value computed from a variable (torch's non-leaf: its gradient flows on to the
        variable) keeps its node. A view of symbolic size is marked on its own top op (a
        bare RESHAPE to a symbolic shape is not made; `a[:n]` made a leaf beside `a[:n]`
        got twice torch's gradient). Realized
        shards, or a view of them, are marked as a buffer is (`Tensor(s, requires_grad=True)`
        of a realized sharded s was s's node: twice torch's gradient)."""
        base = view_base(self.uop)
        if base.op is Ops.BUFFER or buffer_of(base) is not None or shards_of(base) is not None:
            if not has_symbolic(self.shape) or self.uop.op in GroupOp.Movement:
                self.uop = _marked(self.uop)
            return
        # (a symbolic-size constant too: `Tensor.ones(n, requires_grad=True)` beside
        # `Tensor.ones(n)` was one node, its gradient both uses'; realized, it is a shrink of a
        # buffer of its own)
        # (the set keeps a tensor whose requires_grad was set false later: not a variable)
        variables = {t.uop for t in list(_needs_grad) if t is not self and t.requires_grad}
        # (a DETACH passes no gradient: `Tensor(b)` of a variable b, a copy, is a leaf)
        if variables and any(u in variables for u in toposort(self.uop, stop=_is_detach)):
            return
        device = device_of(self.uop)
        self.uop = Tensor(self.uop).contiguous().realize().uop
        if isinstance(device, str) and device != DEFAULT and device_of(self.uop) != device \
                and not has_symbolic(self.shape):
            # a realized constant has no device (each reader reads it on its own), and the
            # variable `Tensor.ones(3).to("CPU:1")` with requires_grad said it was on CPU: an
            # optimizer's state made beside it met its CPU:1 gradient in a DeviceMismatch
            self.uop = Tensor(self.numpy()).to(device).contiguous().realize().uop

    def requires_grad_(self, value: bool = True) -> Tensor:
        self.requires_grad = value
        return self

    def gradient(self, *targets: Tensor, gradient: Tensor | None = None) -> list[Tensor]:
        """d self / d target for each target, as lazy tensors (self a scalar, or `gradient`
        given: the gradient of self)."""
        ex = origins.expand([self.uop, *(t.uop for t in targets)])
        grads = _gradients(ex, targets, ex.roots[1:], gradient)
        step_held_by(self)
        return grads

    def backward(self, gradient: Tensor | None = None) -> Tensor:
        """Add d self / d t to `t.grad` for every tensor t with requires_grad in self's graph
        (zeros for none: a parameter the loss does not use)."""
        live = [t for t in list(_needs_grad) if t.requires_grad]
        root = self.uop
        # the schedule key's walk of the loss is backward's order too (one walk, not a toposort
        # and then the key's pass over it), kept for expand's look for realized values and for
        # the optimizer step's realize, which walk it again (keep_order). Not for a loss whose
        # order was kept (the very nodes again, one batch every step): no walk, as before
        walk = None if is_kept(root) else key_walk(root)
        if walk is not None:
            keep_order(root, list(walk.index))
        ex = origins.expand([root, *(t.uop for t in live)])
        if ex.roots[0] is not root:  # (realized values put back by their graphs: another root)
            walk = None
        if ex.order is None:  # (the walk that looked for realized values made it, else none)
            ex.order = toposort(ex.roots[0])
        if walk is None:
            keep_order(ex.roots[0], ex.order)  # (its optimizer step's realize walks it again)
        nodes = set(ex.order) if walk is None else walk.index
        found = [(t, u) for t, u in zip(live, ex.roots[1:]) if u in nodes]
        params, uops = [t for t, _ in found], [u for _, u in found]
        if not params:
            _refuse_lost(ex)
            seed_gradient(ex.roots[0], None if gradient is None else gradient.uop, [])
            raise GradientError("backward(): no tensor with requires_grad=True in this graph")
        for t, g in zip(params, _gradients(ex, params, uops, gradient, walk)):
            # (detached, as torch's .grad: a value, through which no later gradient flows)
            g = Tensor(g.uop.f(Ops.DETACH))
            t.grad = g if t.grad is None else t.grad + g
        step_held_by(self)  # (the key's walk for the step after it: while this loss lives)
        return self

    def detach(self) -> Tensor:
        """The same value, through which no gradient flows."""
        return Tensor(self.uop.f(Ops.DETACH))

    # ------------------------------------------------------------------ realization
    def contiguous(self) -> Tensor:
        return Tensor(self.uop.f(Ops.CONTIGUOUS))

    def realize(self, *others: Tensor, scheduler: str | None = None) -> Tensor:
        """Compute this tensor (and `others`, together) and keep the result as its buffer.
        `scheduler`: "rangeify" or "kernelize" (default: RULEGRAD_SCHEDULER, else rangeify)."""
        tensors = [self, *others]
        if (bases := view_bases([t.uop for t in tensors])):
            # views of a lazy value (`a.T` of a lazy `a`): the value is realized, with the
            # tensors that hold it or other views of it, and they all read its buffer, as
            # torch's views of a tensor (runtime/realize.py's _views; a LazyTensor's graph is
            # not built: it holds no node yet)
            listed = {id(t) for t in tensors}
            tensors += [t for r in list(_live) if type(t := r()) is Tensor and
                        id(t) not in listed and view_base(t.uop) in bases]
        realize_tensors(tensors, scheduler)
        return self

    def fuse(self) -> Tensor:
        """Ask the kernelize scheduler to compute the reductions in this value inside the kernel
        that reads it, instead of in kernels of their own (a softmax becomes one kernel).
        rangeify ignores it: its own cost rules decide."""
        return Tensor(self.uop.f(Ops.FUSE))

    def assign(self, x: Any) -> Tensor:
        """Write x into this tensor's buffer in place, now. A reshape, permute, shrink or flip
        of a realized tensor is a target too: written through in place.

        A lazy tensor built before the write from the buffer (`y = x + 1`, a loss, a
        gradient) keeps the value it had when built, as torch's eager ops and tinygrad's
        deferred assign give: it is pointed at a copy of the old contents first
        (`_keep_old_reads`). Views of the buffer (`x.T`, `x[1:]`) see the write, as torch's do.

        tinygrad defers the write to `realize()`; doing it at the call means an assign is
        applied exactly once even when other graphs already refer to the ASSIGN (the usual
        `w.assign(w - lr * g).realize()` behaves the same). The ASSIGN node exists only for
        the backend that performs the write.

        A sharded target (or a reshape, permute, shrink or flip of one that keeps each shard
        whole) is written part by part on its devices (`rules/multi.rules`); an unsharded
        value is scattered to them first."""
        if type(x) in _PYTHON_SCALARS or isinstance(x, np.generic):
            # a number written as torch's fill_ writes it (uint8: -1 is 255; 300 and NaN are
            # refused, naming the dtype; a float16 refuses 65520, which it would hold as inf)
            x = stored_scalar(python_scalar(x), self.dtype, "assign")
        value = x if isinstance(x, Tensor) else Tensor(x, dtype=self.dtype)
        if value.ndim == 0 and self.ndim != 0:
            value = value.expand(self.shape)
        if value.shape != self.shape or value.dtype is not self.dtype:
            raise InvalidArgument(f"assign of shape {show(value.shape)} {value.dtype.name} into "
                                  f"a tensor "
                                  "of "
                             f"shape {show(self.shape)} {self.dtype.name}: shapes and dtypes "
                             f"must match")
        if buffer_of(self.uop) is None and self.uop.op is not Ops.MULTI and \
                self.uop.op not in GroupOp.Movement:
            # a lazy value (`a.clone()`, `a + 1`), no view of anything: it gets a buffer of its
            # own to write, as __setitem__'s target does (tinygrad's assign takes it too)
            self.realize()
        # the value object itself is not copied: after the write the target holds its values,
        # so it becomes a copy of the target (made only if read), not a read of the old buffer
        kept = value if value is x else None
        # the new value's graph, kept for a gradient through it (torch's copy_)
        grad = origins.before_assign(self.uop, value.uop) if _any_need else None
        if _keep_old_reads(self, kept):
            self._write(value)
            kept.uop = self.uop.f(Ops.CONTIGUOUS)  # type: ignore[union-attr]
        else:
            self._write(value)
        if grad is not None:
            origins.after_assign(grad)
        return self

    def _write(self, value: Tensor) -> None:
        """assign's write into this tensor's storage, once value is checked."""
        if (cut := _cut_of_shards(self.uop)) is not None:
            _assign_cut(*cut, value)
            return
        here, there = device_of(self.uop), device_of(value.uop)
        if isinstance(there, tuple) and not isinstance(here, tuple):
            # the target stays where it is (an assign never moves it): a realized constant, on
            # no device, reached the schedulers' internals with a sharded value and crashed
            raise DeviceMismatch(f"assign of tensors on different devices: a value sharded over "
                                 f"{describe(there)} into a tensor on {describe(here or DEFAULT)}"
                                 "; gather the value first (.to(device))")
        layout = _sharded_target(self.uop) if isinstance(device_of(self.uop), tuple) else None
        if layout is None and buffer_of(self.uop) is None and _view_of_buffer(self.uop):
            # a view of one buffer (a flip, permute, shrink): written in place through it
            Tensor(UOp(Ops.ASSIGN, self.dtype, (self.uop, value.uop))).realize()
            return
        # (a view read before, `v.numpy()`, holds its copy now: refused as before the read)
        chain = copied_view(self) if buffer_of(self.uop) is not None else self.uop
        if layout is None and chain is not None and buffer_of(chain) is None and \
                (pad := _padded_view(chain)):
            # (a strided slice's PAD is a view where its SHRINK drops it, proven at concrete
            # sizes, or at each value of a few symbolic ones: view_chains._pads_dropped)
            why = "its size is symbolic, and a strided slice's PAD is proven a view at " \
                  "concrete sizes only, or at each of at most " \
                  f"{MAX_BINDINGS} values of its variables" \
                if pad == "PAD" and _symbolic_chain(chain) else \
                  "it repeats or invents elements"
            raise InvalidArgument(
                f"assign into a {pad} view of a buffer: {why}, so it has no storage to write; "
                "write it with `x[...] = value` instead")
        if layout is None and buffer_of(self.uop) is None:
            raise InvalidArgument(f"assign needs a realized, buffer-backed target; this tensor of "
                             f"shape {show(self.shape)} is a lazy {self.uop.op.name} (realize it "
                             f"first)")
        if layout is not None and not isinstance(device_of(value.uop), (tuple, type(None))):
            value = value.shard(layout[1], layout[0])  # scattered to the target's devices
        node = pending_assign(UOp(Ops.ASSIGN, self.dtype, (self.uop, value.uop)), self)
        device_of(node)  # a value on other devices is refused before the target changes
        if layout is not None and self.uop.op is not Ops.MULTI:
            Tensor(node).realize()  # a view: its shards are written in place, it reads them again
            return
        self.uop = node
        self.realize()

    # ------------------------------------------------------------------ devices
    @property
    def device(self) -> str | tuple[str, ...]:
        """Its device ("CPU", "CPU:1", ...), or for a sharded tensor the tuple of its devices."""
        return device_of(self.uop) or DEFAULT

    def to(self, device: str | DType | None = None, dtype: DType | str | None = None) -> Tensor:
        """This tensor on `device`: a COPY (a kernel that copies, once realized); itself when it
        is there already. A sharded tensor is gathered whole onto that device. As torch's, a
        dtype casts too: `.to(dtypes.float16)`, `.to("float16")` (a dtype's name, no device's),
        `.to("CPU:1", dtypes.int32)`, `.to(dtype=...)` (it was "unknown device dtypes.float16")."""
        if isinstance(device, (DType, np.dtype, type)) or \
                isinstance(device, str) and _names_dtype(device):
            if dtype is not None:
                raise TypeError(f"to({device!r}, dtype={dtype!r}): two dtypes")
            device, dtype = None, device
        out = self if dtype is None else self.cast(dtype)
        if device is None:
            return out
        dev = canonical(device)
        if device_of(out.uop) == dev:
            return out
        return Tensor(to_device(out.uop, dev))

    def shard(self, devices: Sequence[str], axis: int | None = None) -> Tensor:
        """Split this tensor along `axis` into equal parts, part i on `devices[i]` (axis None:
        a whole copy on each). Ops on sharded tensors run on each device's part
        (`rules/multi.rules`); a reduction over the sharded axis combines the parts of every
        device (an all-reduce). `numpy()` gives the whole value."""
        devs = canonical_devices(devices)
        if isinstance(device_of(self.uop), tuple):
            raise InvalidArgument(f"this tensor is already sharded over {describe(self.device)}: "
                                  "copy it to one device (.to(device)) before sharding again")
        if has_symbolic(self.shape):
            raise InvalidArgument(f"shard needs a concrete shape, got {show(self.shape)}: shard "
                                  f"the "
                                  "tensor first, then shrink it to a symbolic size")
        if axis is not None:
            axis = self._axis(axis)
            if self.shape[axis] % len(devs):
                raise InvalidArgument(f"cannot shard shape {show(self.shape)} along axis {axis} "
                                      f"over "
                                      f"{len(devs)} devices: {self.shape[axis]} is not a multiple "
                                      f"of {len(devs)}")
        from .multi import relayout

        out = Tensor(relayout(self.uop, axis, devs))  # (part i cut, then moved to device i)
        if self.requires_grad:  # (tinygrad's shard keeps it: the sharded tensor gets a .grad)
            out.requires_grad = True
        return out

    def numpy(self) -> np.ndarray:
        """The result as a read-only view of its buffer: no copy. A later `assign` moves the
        buffer to new storage first (`Buffer.prepare_write`), so the array never changes;
        `.copy()` it to get a writable array. A sharded tensor is gathered onto its first
        device first."""
        uop = self.uop
        # a realized result outside a jit recording (the common read): its storage's view
        if uop.op is _BUFFER and capture.active is None and (data := uop.arg.data) is not None:
            out = data.view()
            out.setflags(False)  # write=False, positional: keyword parsing costs as much again
            return out
        if capture.active is not None:  # (rulegrad.jit: a value read in a step is not replayed)
            capture.host_read()
        op = uop.op
        # a realized tensor is BUFFER, or BUFFER.reshape(shape): its storage read without a call
        # (a small op's read is mostly calls); only a RESHAPE or SHRINK may be another's view
        # of a buffer (`buffer_of`): an op's node (ADD, ...) is not realized, asked nothing
        if op is _BUFFER or op is _RESHAPE and uop.src[0].op is _BUFFER:
            buf = uop.arg if op is _BUFFER else uop.src[0].arg
        else:
            buf = buffer_of(uop) if op is _RESHAPE or op is _SHRINK else None
        if buf is None or buf.data is None:
            # (a sharded tensor's device is a tuple; without sharding, no walk for the device)
            if in_use["multi"] and isinstance(devs := device_of(uop), tuple):
                return self.to(devs[0]).numpy()
            realize_tensors([self], None)
            uop = self.uop
            op = uop.op
            # (a result is BUFFER or BUFFER.reshape(shape): read as above, without a call)
            if op is _BUFFER or op is _RESHAPE and uop.src[0].op is _BUFFER:
                buf = uop.arg if op is _BUFFER else uop.src[0].arg
            elif stored_view(uop):  # a view of a buffer stays one: read through a copy
                return Tensor(uop.f(Ops.CONTIGUOUS)).numpy()
            else:
                buf = buffer_of(uop)
        assert buf is not None and buf.data is not None
        if op is _BUFFER:  # (its shape is the storage's)
            out = buf.data.view()
        elif op is _SHRINK:  # a symbolic size: vmax rows stored; the bound ones are the value
            out = buf.data.reshape(concrete(self.shape))[tuple(slice(0, n) for n in
                                                              actual(self.shape))]
        else:  # (a RESHAPE's argument is its shape)
            out = buf.data.reshape(uop.arg if op is _RESHAPE else uop.shape)
        out.setflags(False)  # write=False, positional: keyword parsing costs as much again
        return out

    def item(self) -> Scalar:
        if self.numel() != 1:
            raise InvalidArgument(f"item() needs a tensor of one element, got shape "
                                  f"{show(self.shape)}")
        return self.numpy().reshape(-1)[0].item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def schedule(self, *others: Tensor, scheduler: str | None = None) -> Any:
        """The kernels that would compute these tensors, without running them. Bound Variables
        are taken out first, as realize does: the kernels read their values when they run."""
        from rulegrad.runtime.multi import lower_multi
        from rulegrad.runtime.schedule import create_schedule
        from rulegrad.runtime.variable import unbind

        roots, _ = unbind(lower_multi([self.uop, *(t.uop for t in others)])[0])
        return create_schedule(roots, scheduler)


def _record_operator(op: Ops, probe: Callable, reverse: bool) -> Callable[..., Tensor]:
    """A LazyTensor's `+ - * /` (and reversed): its record at once, or Tensor's own op when no
    record can be made. (`x + y` went `__add__` -> `add` -> `_binary` first: three frames of
    the dozen a small program's op costs.) The very op and probe `add`, `sub`, `mul` and `div`
    pass."""

    def operator(self: LazyTensor, other: Any) -> Tensor:
        out = _lazy_binary(self, self.record, other, op, probe, reverse)
        return Tensor._binary(self, other, op, probe, reverse) if out is None else out

    return operator


class LazyTensor(Tensor):
    """A Tensor of host data, or an elementwise op over such tensors, whose graph is not built
    yet: `record` holds its record (runtime/lazy.py). Its `uop` is the graph, built when first
    read; the tensor then becomes a plain Tensor (its class changes, so a Tensor's own `uop`
    stays a slot, the interpreter's fastest read). Meanwhile its shape and dtype are the
    record's, the ops a record can hold make records, and `numpy()` runs the plan of the
    record's form, with no graph at all, once one is known."""

    __slots__ = ()

    @property
    def uop(self) -> UOp:  # type: ignore[override]
        node = materialize(self.record)
        self.uop = node
        return node

    @uop.setter
    def uop(self, node: UOp) -> None:
        record = getattr(self, "record", None)  # (unset while a LazyTensor is being made)
        host = record is not None and record.build is None
        self.record = None
        self.__class__ = Tensor  # (the same layout: a LazyTensor adds no slot)
        self.uop = node  # (Tensor's slot now)
        if host:  # host data (`Tensor(array)` joins no list while it is a record): now a node,
            # views may be taken of it (`p = s.T` trained), and a step through one must find
            # it (`views_of`) to point it at the storage as the write leaves it
            _live_add(_ref(self, _live_discard))

    def __reduce_ex__(self, protocol: Any) -> Any:
        # pickle and copy as the Tensor it becomes: object's own reduce took the class first
        # and then read the slots, whose `uop` changes the class (pickle refused the pair)
        self.uop  # noqa: B018 (materialize: now a Tensor)
        return self.__reduce_ex__(protocol)

    @property
    def shape(self) -> Shape:
        return self.record.shape

    @property
    def dtype(self) -> DType:
        return self.record.dtype

    def _binary(self, other: Any, op: Ops, probe: Callable, reverse: bool = False) -> Tensor:
        out = _lazy_binary(self, self.record, other, op, probe, reverse)
        return Tensor._binary(self, other, op, probe, reverse) if out is None else out

    __add__ = _record_operator(Ops.ADD, np.add, False)
    __radd__ = _record_operator(Ops.ADD, np.add, True)
    __sub__ = _record_operator(Ops.SUB, np.subtract, False)
    __rsub__ = _record_operator(Ops.SUB, np.subtract, True)
    __mul__ = _record_operator(Ops.MUL, np.multiply, False)
    __rmul__ = _record_operator(Ops.MUL, np.multiply, True)
    __truediv__ = _record_operator(Ops.FDIV, np.true_divide, False)
    __rtruediv__ = _record_operator(Ops.FDIV, np.true_divide, True)

    def _unary_float(self, op: Ops) -> Tensor:
        lazy = self.record
        out = _lazy_tensor(lazy_op(_float_unary, (op,), (op,), (lazy,), least_float(lazy.dtype),
                                   lazy.shape), op._name_)
        return Tensor._unary_float(self, op) if out is None else out

    def relu(self) -> Tensor:
        lazy = self.record
        out = None
        if lazy.dtype.is_float:
            out = _lazy_tensor(lazy_op(_float_relu, (), (), (lazy,), lazy.dtype, lazy.shape),
                               "WHERE")
        return Tensor.relu(self) if out is None else out

    def numpy(self) -> np.ndarray:
        lazy = self.record
        # an op's record: computed by its form's plan, no graph; unless a tensor that needs a
        # gradient is in it (the graph is kept for it: runtime/origins.py)
        if lazy.build is not None and not (_any_need and _record_needs_grad(lazy)):
            node, tk = run_record(lazy)
            if node is not None:  # (a Tensor now: its `uop` is the slot, not the property)
                self.__class__ = Tensor
                self.uop, self.record = node, None
                # (the plan's result, BUFFER.reshape(shape): read as Tensor.numpy reads it,
                # without its frame)
                base = node if node.op is _BUFFER else node.src[0]
                if base.op is _BUFFER and capture.active is None and \
                        (data := base.arg.data) is not None:
                    out = data.view() if base is node else data.reshape(node.arg)
                    out.setflags(False)
                    return out
            elif tk is not None:  # (no plan known yet: the graph, realized, says which form)
                root = self.uop
                realize_tensors([self], None)
                learn_record(tk, lazy, root)
        return Tensor.numpy(self)


def _record_needs_grad(lazy: Lazy) -> bool:
    """A tensor that requires a gradient is one of the record's (reading the wanted tensors'
    nodes builds a lazy one's graph, whose nodes its record keeps: runtime/lazy.py)."""
    wanted = origins.wanted()
    return bool(wanted) and not wanted.isdisjoint(built_nodes(lazy))


# ---------------------------------------------------------------------- shape arithmetic
def _non_ones(shape: tuple) -> list:
    return [s for s in shape if isinstance(s, UOp) or s != 1]


def _check_shape(shape: tuple, symbolic: bool = False) -> Shape:
    """The shape as ints; with `symbolic`, a bound Variable may stand for a size (a constant
    of symbolic shape: `zeros_like` of a tensor shrunk to a Variable)."""
    # (a bool is an int to Python, and no size to torch: `zeros(True)`)
    if not all((isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0)
               or (symbolic and is_bound(s)) for s in shape):
        raise InvalidArgument(f"shape {shape} must be non-negative integers"
                              + (" or bound Variables" if symbolic else ""))
    return tuple(s if is_bound(s) else int(s) for s in shape)


def _resolve_reshape(old: Shape, shape: tuple) -> Shape:
    size = math.prod(old)
    if sum(1 for s in shape if s == -1) > 1:
        raise InvalidArgument(f"cannot reshape {old} to {shape}: more than one -1")
    if not all(isinstance(s, (int, np.integer)) and s >= -1 for s in shape):
        raise InvalidArgument(f"cannot reshape {old} to {shape}: sizes must be integers >= 0 "
                              "(or -1)")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or size % known:
            raise InvalidArgument(f"cannot reshape tensor of shape {old} ({size} elements) to "
                                  f"{shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    elif known != size:
        raise InvalidArgument(f"cannot reshape tensor of shape {old} ({size} elements) to {shape} "
                         f"({known} elements)")
    return tuple(int(s) for s in shape)


def _resolve_pad(shape: Shape, padding: Sequence[Any]) -> tuple[tuple[int, int], ...]:
    padding = tuple(padding)
    if padding and all(isinstance(p, (int, np.integer)) for p in padding):
        # flat, torch order: (last_before, last_after, second_last_before, ...)
        if len(padding) % 2 or len(padding) // 2 > len(shape):
            raise InvalidArgument(f"flat padding {padding} does not fit shape {show(shape)}")
        pairs = [(padding[i], padding[i + 1]) for i in range(0, len(padding), 2)][::-1]
        padding = (None,) * (len(shape) - len(pairs)) + tuple(pairs)
    if len(padding) != len(shape):
        raise InvalidArgument(f"padding {padding} needs one (before, after) per axis of shape "
                              f"{show(shape)}")
    if any(isinstance(v, UOp) for p in padding if p is not None for v in p):
        raise InvalidArgument(f"a pad of shape {show(shape)} by a symbolic amount (a scatter, "
                              "or a write, along a symbolic axis) cannot be made")
    arg = tuple((0, 0) if p is None else (int(p[0]), int(p[1])) for p in padding)
    return arg


def _index(uop: UOp, index: Any) -> UOp:
    """Basic indexing (ints, slices with any step, None, Ellipsis) as movement ops."""
    bounds, flips, strides, final = _basic_plan(uop.shape, index)
    out = uop.shrink(tuple(bounds)).flip(tuple(flips))
    for axis, (step, phase) in enumerate(strides):
        if step > 1:
            out = _stride(out, axis, step, phase)
    return out.reshape(tuple(final))


def _basic_plan(shape: Shape, index: Any) -> tuple[list, list, list, list]:
    """What a basic index reads, per axis of `shape`: the (start, end) span, whether it is
    read backwards, the step; and the result's shape (None axes in, int-indexed axes out)."""
    items = index if isinstance(index, tuple) else (index,)
    for it in items:
        if isinstance(it, bool) or not (it is None or it is Ellipsis or isinstance(it, slice)
                                        or isinstance(it, (int, np.integer))):
            shown = size_text(it) if isinstance(it, UOp) else repr(it)
            raise IndexError(f"unsupported index {shown} (ints, slices, None, ..., int tensors "
                             f"and int lists only; a Variable slices as [:v])")
    if sum(it is Ellipsis for it in items) > 1:
        raise IndexError(f"an index can only have a single ellipsis, got {index!r}")
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"too many indices for tensor of shape {show(shape)}: {index!r}")
    fill = (slice(None),) * (len(shape) - used)
    if Ellipsis in [it for it in items if it is Ellipsis]:
        at = next(i for i, it in enumerate(items) if it is Ellipsis)
        items = items[:at] + fill + items[at + 1:]
    else:
        items = items + fill
    bounds, flips, strides, final = [], [], [], []
    axis = 0
    for it in items:
        if it is None:
            final.append(1)
            continue
        size = shape[axis]
        if isinstance(it, slice) and any(isinstance(v, UOp) for v in (it.start, it.stop,
                                                                        it.step)):
            # a slice by a Variable (`t[:, :v]`) is shrink's symbolic size, (0, v): the only
            # span whose length and place are known at every value v takes (slice.indices
            # would raise a bare TypeError on it)
            bound = _symbolic_stop(it, size, axis, shape)
            bounds.append((0, bound)), flips.append(False), strides.append((1, 0))
            final.append(bound)
            axis += 1
            continue
        if isinstance(size, UOp) and it == slice(None):  # a symbolic axis kept whole
            bounds.append((0, size)), flips.append(False), strides.append((1, 0))
            final.append(size)
            axis += 1
            continue
        if isinstance(size, UOp):  # else its bound rows, indexed as concrete ones
            size = actual((size,))[0]
        if isinstance(it, slice):
            start, stop, step = it.indices(size)
            n = len(range(start, stop, step))
            if n == 0:
                bounds.append((0, 0)), flips.append(False), strides.append((1, 0))
            elif step > 0:
                b, e, phase = _whole_steps(start, n, step, size)
                bounds.append((b, e)), flips.append(False), strides.append((step, phase))
            else:  # read the covered span backwards: flipped, start is its first element
                b, e, phase = _whole_steps(size - 1 - start, n, -step, size)
                bounds.append((size - e, size - b))
                flips.append(True), strides.append((-step, phase))
            final.append(n)
        else:
            i = int(it)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size} "
                                 f"(tensor of shape {show(shape)})")
            i %= size
            bounds.append((i, i + 1)), flips.append(False), strides.append((1, 0))
        axis += 1
    return bounds, flips, strides, final


def _symbolic_stop(it: slice, size: Any, axis: int, shape: Shape) -> UOp:
    """The bound Variable v of a slice `[:v]` (or `[0:v]`, `[:v:1]`) over a concrete axis that
    holds its largest value; anything else a Variable is in is refused by name."""
    stop = it.stop
    plain = _is_int(it.start, (None, 0)) and _is_int(it.step, (None, 1))
    if plain and is_bound(stop) and not isinstance(size, UOp) and stop.vmax <= size:
        return stop
    if not plain or not isinstance(stop, UOp):
        why = "only [:v] (from 0, step 1, to a bound Variable v) has a known place and length"
    elif not is_bound(stop):
        why = "the Variable must be bound first (v.bind(value))"
    elif isinstance(size, UOp):
        why = f"the axis is symbolic ({size_text(size)})"
    else:
        why = f"the Variable's max {stop.vmax} is past the axis's size {size}"
    text = ":".join("" if v is None else size_text(v) if isinstance(v, UOp) else str(v)
                    for v in (it.start, it.stop, it.step))
    raise IndexError(f"slice [{text}] of axis {axis} of a tensor of shape {show(shape)}: {why} "
                     "(a symbolic slice is t.shrink(((0, v), ...)))")


def _is_int(v: Any, allowed: tuple) -> bool:
    """v is one of `allowed` (None or ints), compared without a Variable's operators."""
    return not isinstance(v, UOp) and v in allowed


def _place(value: Tensor, shape: Shape, plan: tuple[list, list, list, list]) -> Tensor:
    """`value`, of the shape a basic index reads, at the places it reads in `shape` (zeros
    elsewhere): `_index`'s movement ops backwards (unstride, flip, pad)."""
    bounds, flips, strides, _ = plan
    spans = [e - b for b, e in bounds]
    counts = [-(-span // step) for span, (step, _) in zip(spans, strides)]
    out = value.reshape(counts)
    for axis, (step, phase) in enumerate(strides):
        if step > 1 and counts[axis]:  # every step-th place: the rest of each step is zeros
            split = out.unsqueeze(axis + 1)
            split = split.pad(tuple((phase, step - 1 - phase) if i == axis + 1 else None
                                    for i in range(split.ndim)))
            out = split.reshape(out.shape[:axis] + (counts[axis] * step,) + out.shape[axis + 1:])
            out = out.shrink(tuple((0, spans[axis]) if i == axis else None
                                   for i in range(out.ndim)))
    if any(flips):
        out = out.flip([i for i, f in enumerate(flips) if f])
    return out.pad(tuple((b, s - e) for (b, e), s in zip(bounds, shape)))


def _mask_index(x: Tensor, mask: Tensor) -> Tensor:
    """numpy's `x[mask]` for a bool mask over x's leading axes: the selected elements (or rows
    of the remaining axes) in row-major order. The count is data: the mask is computed first."""
    _check_mask(x, mask)
    if has_symbolic(x.shape[mask.ndim:]) and not has_symbolic(mask.shape):
        # a symbolic axis past the mask's cannot be flattened: index by its True coordinates
        return _advanced_index(x, _masks_as_ints(x, (mask,)))
    refuse_symbolic("indexing by a boolean mask", x.shape)  # (its rows are flattened)
    k = mask.ndim
    rows, rest = math.prod(x.shape[:k]), x.shape[k:]
    picked = x.reshape(rows, math.prod(rest))._compact(mask.reshape(rows), None, 0)
    return picked.reshape((picked.shape[0], *rest))


def _mask_values_write(x: Tensor, mask: Tensor, val: Tensor) -> Tensor:
    """x with `x[mask] = val` written, val one value per True of the mask (or per row of the
    axes past it), as numpy and torch write it: the k-th True place takes val[k]. Its count
    is data (a realize, as `x[mask]` reads it). `t[mask] += 1` is this write of `t[mask] + 1`:
    it was refused, taking one value only."""
    refuse_symbolic("t[mask] = values", x.shape)
    rows, rest = math.prod(mask.shape), x.shape[mask.ndim:]
    count = int(mask.sum().item())
    try:
        val = val.expand((count, *rest)) if val.shape != (count, *rest) else val
    except InvalidArgument:
        raise InvalidArgument(f"t[mask] = values: a value of shape {show(val.shape)} cannot "
                              f"be written into the {count} places of shape "
                              f"{show((count, *rest))} the mask selects") from None
    if count == 0:
        return x.copy_node()
    flat = mask.reshape(rows)
    order = (flat.cast(dtypes.int32).cumsum(0) - 1).maximum(0)  # (the k-th True: k)
    spread = val[order].reshape(x.shape)
    hit = mask.reshape(mask.shape + (1,) * len(rest)).expand(x.shape)
    return hit.where(spread, x)


def _masked_write(x: Tensor, items: tuple, at: int, val: Tensor) -> Tensor:
    """x with one value written where `x[items]` reads, items[at] being a boolean mask among
    basic indices (numpy's `t[mask, 1:3] = v`, `t[0, mask] = v`): the mask stands for full
    slices over its axes in a basic plan, and the places it reads are where it is True."""
    mask = _as_mask(items[at])
    if mask.ndim == 0:
        raise IndexError("a 0-d boolean index among other indices is not supported")
    if val.numel() != 1:
        raise InvalidArgument(f"t[..., mask, ...] = value takes one value (a scalar or a "
                              f"one-element tensor), got shape {show(val.shape)}")
    basic = items[:at] + (slice(None),) * mask.ndim + items[at + 1:]
    plan = _basic_plan(x.shape, basic)
    view = tuple(plan[3])
    if has_symbolic(view):
        raise InvalidArgument(f"t[...] = value over a symbolic span (shape {show(view)}) is "
                              "not supported")
    # the view's axes before the mask's: one per slice and None, an Ellipsis's span, no int's
    used = sum(1 for it in basic if it is not None and it is not Ellipsis)
    first = sum(x.ndim - used if it is Ellipsis else int(not isinstance(it, (int, np.integer)))
                for it in items[:at])
    if view[first:first + mask.ndim] != mask.shape:
        raise IndexError(f"boolean index of shape {show(mask.shape)} does not match the axes "
                         f"{show(view[first:first + mask.ndim])} it indexes in the tensor of "
                         f"shape {show(x.shape)}")
    spread = (1,) * first + mask.shape + (1,) * (len(view) - first - mask.ndim)
    hit = _place(mask.reshape(spread).expand(view), x.shape, plan)
    return hit.where(val.reshape(()).expand(x.shape), x)


def _masks_as_ints(x: Tensor, items: tuple) -> tuple:
    """numpy's boolean index among other indices (`x[mask, 2]`, `x[1:, mask]`): a k-d mask
    is the k int index arrays of its True coordinates (`mask.nonzero()`), over the k axes of x
    it stands at; the advanced-indexing path then broadcasts them with any other int index.
    The count of True is data: the mask is computed first, as for `x[mask]`."""
    masks = [_as_mask(it) for it in items]
    width = [m.ndim if m is not None else 0 if it is None or it is Ellipsis else 1
             for it, m in zip(items, masks)]
    spread = x.ndim - sum(width)  # the axes an Ellipsis stands for
    out, axis = [], 0
    for it, m, w in zip(items, masks, width):
        if it is Ellipsis:
            axis += max(spread, 0)
        if m is None:
            out.append(it)
            axis += w
            continue
        if m.ndim == 0:
            raise IndexError("a 0-d boolean index among other indices is not supported")
        if tuple(x.shape[axis:axis + m.ndim]) != m.shape:
            raise IndexError(f"boolean index of shape {show(m.shape)} does not match the axes "
                             f"{show(tuple(x.shape[axis:axis + m.ndim]))} it indexes (from "
                             f"axis {axis}) in the tensor of shape {show(x.shape)}")
        refuse_symbolic("indexing by a boolean mask", m.shape)  # (its count of True is data)
        where = m.nonzero()
        out.extend(where[:, j] for j in range(m.ndim))
        axis += m.ndim
    return tuple(out)


def _is_bool_scalar(it: Any) -> bool:
    """A 0-d boolean index: a Python or numpy bool, a 0-d bool array or tensor."""
    if isinstance(it, (bool, np.bool_)):
        return True
    if isinstance(it, Tensor):
        return it.dtype is dtypes.bool and it.ndim == 0
    return isinstance(it, np.ndarray) and it.dtype == np.bool_ and it.ndim == 0


def _has_bool_scalar(index: Any) -> bool:
    """A bool scalar alone as the index, or one among a tuple's items; a 0-d bool tensor
    alone is left to the mask path (x[m] is its rows, 1 or 0 of them)."""
    if isinstance(index, tuple):
        return any(_is_bool_scalar(it) for it in index)
    return isinstance(index, (bool, np.bool_))


def _bool_scalar_index(x: Tensor, index: Any) -> Tensor:
    """numpy's bool scalar among indices (`x[True]`, `x[0, False]`): a 0-d boolean mask, an
    advanced index of one axis, 1 long for True and 0 for False, that consumes no axis of x
    and broadcasts with the other advanced indices. Each becomes an index into a new axis of
    1 put in its place: an int index [0] or [] for a constant, a 1-d mask for a 0-d bool
    tensor (its count is data). Alone among basic indices, the new axis is sliced whole or
    to nothing, with no gather."""
    items = index if isinstance(index, tuple) else (index,)
    scalar = [_is_bool_scalar(it) for it in items]
    view: list = []
    for it, s in zip(items, scalar):
        if s:
            view.append(None)
        elif it is Ellipsis:
            view.append(Ellipsis)
        elif it is not None:
            mask = _as_mask(it)
            view.extend([slice(None)] * (mask.ndim if mask is not None else 1))
    if view.count(Ellipsis) > 1:
        raise IndexError(f"an index can only have a single ellipsis, got {index!r}")
    used = sum(1 for it in view if it is not None and it is not Ellipsis)
    if used > x.ndim:
        raise IndexError(f"too many indices for tensor of shape {show(x.shape)}: {index!r}")
    wide = Tensor(_index(x.uop, tuple(view)))
    others = [it for it, s in zip(items, scalar) if not s and it is not None
              and it is not Ellipsis and not isinstance(it, slice)]
    if sum(scalar) == 1 and not others and not isinstance(items[scalar.index(True)], Tensor):
        keep = bool(items[scalar.index(True)])
        return wide[tuple(it if not s else slice(None) if keep else slice(0, 0)
                          for it, s in zip(items, scalar))]
    out = []
    for it, s in zip(items, scalar):
        if not s:
            out.append(it)
        elif isinstance(it, Tensor):
            out.append(it.reshape(1))
        else:
            out.append(Tensor(np.zeros(int(bool(it)), np.int64)))
    return wide[tuple(out)]


def _bool_scalar_write(x: Tensor, index: Any, val: Tensor) -> None:
    """`x[True] = v`, `x[0, False] = v`: numpy's 0-d masks among basic indices. The value
    broadcasts to what the index reads; a False writes nothing, and True's axes are of size
    1, so the value keeps its order with them dropped."""
    items = index if isinstance(index, tuple) else (index,)
    rest = tuple(it for it in items if not _is_bool_scalar(it))
    if any(isinstance(it, (Tensor, list)) or (isinstance(it, np.ndarray)
                                               and not _is_bool_scalar(it)) for it in items):
        given = ", ".join(_index_kind(it) for it in items)
        raise IndexError(f"item assignment with a bool scalar takes ints, slices, None and ... "
                         f"beside it; got {given}")
    view = x[index].shape
    try:
        val = val.expand(view) if val.shape != view else val
    except InvalidArgument:
        raise InvalidArgument(f"could not broadcast a value of shape {show(val.shape)} into "
                              f"shape {show(view)}") from None
    if all(bool(it) for it in items if _is_bool_scalar(it)):
        x[rest] = val.reshape(x[rest].shape)


def _index_kind(it: Any) -> str:
    """An index item as an error message names it: its kind and, for an array, its dtype."""
    if isinstance(it, (Tensor, np.ndarray)):
        return f"{'a tensor' if isinstance(it, Tensor) else 'an array'} of {it.dtype.name}"
    return "a list" if isinstance(it, list) else repr(it)


def _check_mask(x: Tensor, mask: Tensor) -> None:
    if mask.ndim > x.ndim or mask.shape != x.shape[:mask.ndim]:
        raise IndexError(f"boolean index of shape {show(mask.shape)} does not match the tensor of "
                         f"shape {show(x.shape)}: it must have the shape of its leading axes")


def _as_mask(index: Any) -> Tensor | None:
    """A boolean index (a bool tensor, bool array or list of bools only) as a bool tensor."""
    if isinstance(index, Tensor):
        return index if index.dtype is dtypes.bool else None
    if isinstance(index, np.ndarray) and index.dtype == np.bool_:
        return Tensor(index)
    if isinstance(index, list) and index:
        try:
            arr = np.asarray(index)
        except ValueError:  # ragged: not a mask (the int-list path says what is wrong)
            return None
        return Tensor(arr) if arr.dtype == np.bool_ else None
    return None


def _is_int_list(x: Any) -> bool:
    """A (nested) list of ints is one tensor index, not a tuple of indices. Bools among ints
    are the ints 0 and 1 (torch makes an int tensor of `[True, False, 2]`); a list of bools
    only would be a mask, which is not an index here."""
    leaves: list = []
    todo = [x]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, (bool, np.bool_, int, np.integer)):
            leaves.append(item)
        else:
            return False
    return isinstance(x, list) and not (leaves and all(isinstance(i, (bool, np.bool_))
                                                       for i in leaves))


def _list_index(items: list | tuple) -> Tensor:
    """A (nested) list or tuple of ints inside an index is an int tensor index, as in numpy."""
    arr = np.array(items)
    if arr.dtype.kind not in "iu" and arr.size:
        raise IndexError(f"index {items!r} holds non-integers; only ints index")
    return Tensor(arr.astype(np.int32))


def _advanced_index(x: Tensor, items: tuple) -> Tensor:
    """Indexing with int tensors: basic indexing first (each tensor index read as `:`), then
    per tensor index a one-hot mask along its axis, multiplied and summed away (tinygrad's
    method: no gather op, a reduction the scheduler fuses)."""
    tensors = [_list_index(it) if isinstance(it, (list, tuple)) else it for it in items]
    for t in tensors:
        if isinstance(t, Tensor) and not t.dtype.is_int:
            raise IndexError(f"tensor index of dtype {t.dtype.name}: only int tensors index")
    # numpy: with a tensor index present, an int is an advanced index too, and the advanced
    # indices' axes stay in place only when they sit next to each other in the index (an
    # Ellipsis between them separates them, even one that spans no axis)
    at = [i for i, it in enumerate(tensors) if isinstance(it, (Tensor, int, np.integer))]
    adjacent = at == list(range(at[0], at[0] + len(at)))
    used = sum(1 for it in tensors if it is not None and it is not Ellipsis)
    if Ellipsis in [it for it in tensors if it is Ellipsis]:
        at = next(i for i, it in enumerate(tensors) if it is Ellipsis)
        tensors = tensors[:at] + [slice(None)] * max(x.ndim - used, 0) + tensors[at + 1:]
    basic, dims, idx, out = [], [], [], 0
    for it in tensors:
        if isinstance(it, Tensor):
            dims.append(out)
            idx.append(it)
            basic.append(slice(None))
        else:
            basic.append(it)
        out += 0 if isinstance(it, (int, np.integer)) else 1
    x = Tensor(_index(x.uop, tuple(basic)))
    refuse_symbolic("indexing by a tensor", x.shape, dims)
    try:
        big = broadcast_shape(*(t.shape for t in idx))
    except ValueError as e:
        raise IndexError(f"tensor indices cannot be broadcast together: {e}") from None
    for d, t in zip(dims, idx):
        check_index_bounds(t, x.shape[d], "indexing", d, wrap=True)
    idx = [_from_end(t, x.shape[d]) for d, t in zip(dims, idx)]
    first = dims[0]
    full = x.shape[:first] + big + x.shape[first:]
    mask = None
    for d, t in zip(dims, idx):
        i = t.reshape(t.shape + (1,) * (x.ndim - first)).expand(full)
        hot = i._one_hot_along_dim(x.shape[d], dim=d - x.ndim)
        mask = hot if mask is None else mask & hot
    spread = x.reshape(x.shape[:first] + (1,) * len(big) + x.shape[first:])
    out = spread._pick(mask, tuple(d + len(big) for d in dims))
    if out.dtype.is_float:  # (an index out of range reads +0.0, not the pick's -0.0)
        inside = functools.reduce(operator.and_, (in_range(t, x.shape[d]) for d, t in
                                                  zip(dims, idx)))
        lead = out.ndim - first - len(big)
        out = zero_outside(out, inside.reshape((1,) * first + inside.shape + (1,) * lead))
    if first != 0 and not adjacent:
        # numpy: advanced indices separated by a slice, None or ... put their axes first
        nb = len(big)
        out = out.permute(*range(first, first + nb), *range(first), *range(first + nb, out.ndim))
    return out


def _from_end(t: Tensor, n: int) -> Tensor:
    """Index t along an axis of n, negatives counted from the end (numpy's). Unsigned ones
    are never negative; a signed dtype too narrow for n wraps in int32 (int64 past it): t + n
    in int8 with n = 300 raised OverflowError, so an int8 or uint8 index into 256+ rows did."""
    if t.dtype.is_unsigned:
        return t
    if n > t.dtype.max:
        t = t.cast(dtypes.int32 if n <= dtypes.int32.max else dtypes.int64)
    return (t < 0).where(t + n, t)


def _whole_steps(start: int, n: int, step: int, size: int) -> tuple[int, int, int]:
    """The span (b, e) that `_stride` splits into `n` steps of `step` along an axis of `size`
    to read start, start + step, ...; and which column of each step is read. n whole steps
    from start (column 0) or ending just after the last element read (column step - 1) when
    the axis holds them, so no PAD is needed; else the elements' own span, padded by `_stride`
    (a PAD its SHRINK drops: still a view of storage, view_chains.view_ops)."""
    last = start + (n - 1) * step
    if start + n * step <= size:
        return start, start + n * step, 0
    if start - (step - 1) >= 0:
        return start - (step - 1), last + 1, step - 1
    return start, last + 1, 0


def _stride(uop: UOp, axis: int, step: int, phase: int = 0) -> UOp:
    """Every `step`-th element along `axis` from column `phase` of each step: pad to a
    multiple (none when the span is whole steps), split the axis, keep that column."""
    shape = uop.shape
    length = shape[axis]
    n = -(-length // step)
    pad = tuple((0, n * step - length) if i == axis else (0, 0) for i in range(len(shape)))
    split = shape[:axis] + (n, step) + shape[axis + 1:]
    keep = tuple((phase, phase + 1) if i == axis + 1 else (0, s) for i, s in enumerate(split))
    return uop.pad(pad).reshape(split).shrink(keep).reshape(shape[:axis] + (n,) + shape[axis + 1:])


def _tensor_list(first: Tensor | Sequence[Tensor], rest: tuple,
                 dim: int) -> tuple[list[Tensor], int]:
    """`Tensor.cat(a, b)`, `a.cat(b)` and `Tensor.cat([a, b])` all name the same tensors; and
    the dim, which torch's spelling `Tensor.cat([a, b], 1)` gives after the sequence (it was
    refused as a tensor passed both ways)."""
    if isinstance(first, (list, tuple)) and len(rest) == 1 and isinstance(rest[0], int) \
            and not isinstance(rest[0], bool):
        rest, dim = (), rest[0]
    if isinstance(first, (list, tuple)) and rest:
        raise InvalidArgument("pass the tensors either as one sequence or as arguments, not both")
    items = [*first, *rest] if isinstance(first, (list, tuple)) else [first, *rest]
    if not items:
        raise InvalidArgument("need at least one tensor")
    return [t if isinstance(t, Tensor) else Tensor(t) for t in items], dim


# ---------------------------------------------------------------------- float helpers
def _float_divmod(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """numpy's floor division and remainder of floats, op by op as its `npy_divmod` computes
    them (so the bits are numpy's: `1.0 // 0.1` is 9.0, not floor(1.0 / 0.1) = 10.0); float16
    computes in float32 and rounds each result once, as numpy's half loops do."""
    half = a.dtype is dtypes.float16
    if half:
        a, b = a.cast(dtypes.float32), b.cast(dtypes.float32)
    zero, one = a.const_like(0.0), a.const_like(1.0)
    m = a.alu(Ops.MOD, b)  # fmod: exact, with the sign of a
    div = a.alu(Ops.SUB, m).alu(Ops.FDIV, b)  # very nearly an integer
    # a nonzero remainder whose sign is not b's moves to the floor convention
    adjust = _floor_fix(m, b)
    # a zero remainder takes b's sign. Written from m, not as a constant, so that d mod / d a
    # is 1 there too, as everywhere (torch's remainder): +-0 + 0 is +0, negated for b < 0
    plus_zero = m.alu(Ops.ADD, zero)
    b_zero = b.alu(Ops.CMPLT, zero).alu(Ops.WHERE, m.alu(Ops.NEG).alu(Ops.ADD, zero)
                                      .alu(Ops.NEG), plus_zero)
    mod = adjust.alu(Ops.WHERE, m.alu(Ops.ADD, b), m.alu(Ops.CMPEQ, zero).alu(Ops.WHERE, b_zero, m))
    div = adjust.alu(Ops.WHERE, div.alu(Ops.SUB, one), div)
    # snapped to the nearest integer: floor(div), one more when div - floor(div) > 0.5
    t = div.alu(Ops.TRUNC)
    fl = div.alu(Ops.CMPLT, t).alu(Ops.WHERE, t.alu(Ops.SUB, one), t)
    up = a.const_like(0.5).alu(Ops.CMPLT, div.alu(Ops.SUB, fl))  # div - fl > 0.5
    snapped = up.alu(Ops.WHERE, fl.alu(Ops.ADD, one), fl)
    quot = a.alu(Ops.FDIV, b)
    # a zero quotient takes the sign of a / b (finite there: |a| < |b|, so times 0 is +-0)
    q = div.alu(Ops.CMPNE, zero).alu(Ops.WHERE, snapped, quot.alu(Ops.MUL, zero))
    q = b.alu(Ops.CMPEQ, zero).alu(Ops.WHERE, quot, q)  # x // 0 is x / 0 (inf or NaN)
    if half:
        q, mod = q.cast(dtypes.float16), mod.cast(dtypes.float16)
    return q, mod


def _floor_fix(r: UOp, b: UOp) -> UOp:
    """Where a C remainder `r` of division by `b` must move to numpy's floor convention."""
    zero = r.const_like(0)
    differ = r.alu(Ops.CMPLT, zero).alu(Ops.CMPNE, b.alu(Ops.CMPLT, zero))
    return r.alu(Ops.CMPNE, zero).alu(Ops.AND, differ)


def _cut_of_shards(uop: UOp) -> tuple[UOp, tuple] | None:
    """(the sharded tensor, the shrink) when `uop` is a slice of realized shards that cuts the
    sharded axis (`x[2:6]`, `x[3]`: a SHRINK, maybe reshaped), which no shard can write on its
    own; else None."""
    node = uop.src[0] if uop.op is Ops.RESHAPE else uop
    if node.op is not Ops.SHRINK or (shards := shards_of(node.src[0])) is None:
        return None
    axis, full = shards.axis, node.src[0].shape
    if axis is None or node.arg[axis] == (0, full[axis]):
        return None
    return node.src[0], node.arg


def _assign_cut(multi: UOp, arg: tuple, value: Tensor) -> None:
    """x[slice].assign(value) across shards: the whole of x assigned, the value where the
    slice is (padded out to x's shape and sharded like it) and x's own elements elsewhere."""
    axis, devs = multi.arg
    x = Tensor(multi)
    part = value.reshape(tuple(e - b for b, e in arg))
    if isinstance(device_of(part.uop), tuple):
        part = part.to(devs[0])  # to pad along the sharded axis: on one device first
    pads = tuple((b, n - e) for (b, e), n in zip(arg, x.shape))
    inside = Tensor.ones(*part.shape, dtype=dtypes.bool).pad(pads)
    whole = part.pad(pads)
    if device_of(whole.uop) is not None:
        whole = whole.shard(devs, axis)
    x.assign(inside.where(whole, x))


def _sharded_target(uop: UOp) -> tuple[int | None, tuple[str, ...]]:
    """The (axis, devices) of a sharded assign target, which must be realized shards or a
    view of them that each shard can write on its own (`WRITABLE_VIEWS` that keep the
    sharded axis whole)."""
    from .multi import layouts

    node, ops = uop, view_ops(uop, WRITABLE_VIEWS)  # (a strided slice's dropped PAD too)
    while node.op in ops:
        node = node.src[0]
    where = f"a tensor sharded over {describe(device_of(uop))}"
    if node.op in GroupOp.Movement:  # an EXPAND or a PAD
        raise InvalidArgument(f"assign into a {node.op.name} view of {where}: it repeats or "
                              "invents elements, so it has no storage to write")
    if shards_of(node) is None:
        raise InvalidArgument(f"assign needs realized shards; this is {where} computed lazily "
                              f"({node.op.name}): realize it first")
    try:
        layout = layouts([uop])[0]
    except InvalidArgument as e:
        raise InvalidArgument(f"assign into this view of {where}: each shard must write its "
                              f"own part, but {str(e).split(';')[0]}") from None
    assert layout is not None
    return layout


def _padded_view(uop: UOp) -> str | None:
    """The name of the first PAD or EXPAND in a chain of movement ops over a realized buffer
    (a view with no storage of its own to write); None for any other tensor."""
    found, ops = None, view_ops(uop, WRITABLE_VIEWS)
    while uop.op in GroupOp.Movement:
        if uop.op not in ops and found is None:
            found = uop.op.name
        uop = uop.src[0]
    return found if buffer_of(uop) is not None else None


def _symbolic_chain(uop: UOp) -> bool:
    """Whether a node of the chain of movement ops `uop` (or the node under it) has a symbolic
    size."""
    while uop.op in GroupOp.Movement and not has_symbolic(uop.shape):
        uop = uop.src[0]
    return has_symbolic(uop.shape)


def _keep_old_reads(target: Tensor, kept: Tensor | None) -> bool:
    """Before an assign writes target's buffers: every other live lazy tensor that computes
    from them (`y = x + 1`, a gradient, a loss, built before `x.assign(...)`) is pointed at a
    copy of their contents now, so it gives the value it had when it was built, as in torch
    (eager) and tinygrad (`test_assign_corealize_order_independent`). A copy, not a realize:
    the reader keeps its graph (a gradient through it). `kept` (the assigned value) is not
    copied; the answer says whether it reads the buffers."""
    written = _written(target)
    old: dict[UOp, UOp] = {}
    for t in readers_of(written, skip=(target, kept)):
        for b in written - old.keys():
            buf = b.arg
            kept_buf = Buffer(buf.size, buf.dtype, buf.data.copy(), buf.device)
            origins.carry(buf, kept_buf)  # (the old value's graph too: a gradient through it)
            old[b] = UOp(Ops.BUFFER, b.dtype, (), kept_buf)
        t.uop = t.uop.substitute(old)
    return kept is not None and not _is_view(kept.uop) and _reads(kept.uop, written)


def _written(target: Tensor) -> set[UOp]:
    """The BUFFER nodes an assign into target writes."""
    if (buf := buffer_of(target.uop)) is not None:  # (most targets: no walk)
        return {UOp(Ops.BUFFER, buf.dtype, (), buf)}
    return {n for n in toposort(target.uop) if n.op is Ops.BUFFER and n.arg.data is not None}


def readers_of(written: set[UOp], skip: Sequence[Tensor | None] = ()) -> list[Tensor]:
    """The live lazy tensors (not in `skip`) that compute from the BUFFER nodes `written`: what
    an assign into them would change if it ran first. Not views of the buffers (`x.T`,
    `x[1:]`: they alias it, as torch's views do, and see a write), and not a graph holding an
    ASSIGN (an optimizer's pending update: it names its target).

    Each tensor's answer comes from the buffers its graph reads, kept on its root node
    (`_graph_reads`): a loop that keeps its lazy losses and assigns each step walks each loss's
    graph once, not once per later assign (which made such a loop quadratic in its steps)."""
    if not written:
        return []
    walked: dict[UOp, tuple[frozenset[UOp], int]] = {}  # shared by the graphs walked here
    skipped = {id(t) for t in skip}
    out = []
    for r in list(_live):
        t = r()
        if t is None or id(t) in skipped or buffer_of(t.uop) is not None:
            continue
        u = t.uop
        # a graph with no ASSIGN (its op bits say so), whose root is no view of storage, that
        # reads a written buffer (a search that stops there: the logits of an optimizer step
        # read the last bias a few nodes down) is a reader, with no walk of the whole graph;
        # one over a fresh batch each step is other nodes each time, and its kept answer
        # (`_graph_reads`) was never asked again. A root whose answer is kept is not searched:
        # a live lazy value that reads no parameter (kept across a loop's steps) was searched
        # to its leaves at every step, which made the loop quadratic in its steps
        memo = u.memo
        if type(memo) is tuple and memo[0] is _GRAPH_READS:
            bufs, flags = memo[1]
        elif not u._ops & _ASSIGN_BIT and u.op not in _ALIAS_OPS and _reads(u, written):
            out.append(t)
            continue
        else:
            bufs, flags = _graph_reads(u, walked)
        # (a strided slice `s[::2]` of 5 rows holds a PAD, which _graph_reads calls a copy:
        # its SHRINK drops the padding, so it is a view of the storage: stored_view)
        if flags == 0 and not bufs.isdisjoint(written) and not stored_view(u):
            out.append(t)
    return out


def reader_of(buf: Buffer) -> Tensor | None:
    """A live lazy tensor whose graph reads `buf` (a view of it, or a value computed from it),
    or None: `Tensor(a).reshape(...)` keeps the buffer of the tensor gone (api/nn/optim.py's
    `_hold_by_batch`). Each graph's answer is kept on its root (`_graph_reads`)."""
    node = UOp(Ops.BUFFER, buf.dtype, (), buf)
    walked: dict[UOp, tuple[frozenset[UOp], int]] = {}
    for r in list(_live):
        t = r()
        if t is not None and node in _graph_reads(t.uop, walked)[0]:
            return t
    return None


def views_of(written: set[UOp], skip: Sequence[Tensor] = ()) -> list[Tensor]:
    """The live tensors (not in `skip`) that are views of the BUFFER nodes `written`: the bare
    buffer, or a chain of torch's views over it (a reshape, permute, slice, flip or expand;
    not a pad, a copy in torch, nor `contiguous()` or arithmetic). They read the storage, so
    they see a write into it (an optimizer step: `Optimizer._apply`)."""
    skipped = {id(t) for t in skip}
    out = []
    for r in list(_live):
        t = r()
        if t is not None and id(t) not in skipped and (t.uop in written or (
                t.uop.op in VIEW_OPS and view_base(t.uop) in written)):
            out.append(t)
    return out


def _settle_assigns(done: dict[UOp, UOp]) -> None:
    """After a realize wrote the ASSIGNs `done` (each to the view it wrote): every other live
    tensor whose graph holds one reads that view instead, as tinygrad applies a realize's
    results to all its tensors. Without, a value built from a pending step (`w * 2` after
    `schedule_step()`, a view of w taken before it) and realized later ran the ASSIGN again:
    the step applied twice."""
    walked: dict[UOp, tuple[frozenset[UOp], int]] = {}
    for r in list(_live):
        t = r()
        if t is not None and t.uop.op is not Ops.ASSIGN and buffer_of(t.uop) is None and \
                _graph_reads(t.uop, walked)[1] & _ASSIGNS:
            t.uop = t.uop.substitute(done)


after_assigns(_settle_assigns)


def written_by(targets: Sequence[Tensor]) -> set[UOp]:
    """The BUFFER nodes that assigns into `targets` write (for `readers_of`)."""
    return set().union(*(_written(t) for t in targets))


# what a view of storage is made of (torch's views: a reshape, permute, slice, flip or expand
# of a tensor, sharded or not, reads the tensor's memory, so it sees a later write)
_ALIAS_OPS = WRITABLE_VIEWS | {Ops.EXPAND, Ops.MULTI, Ops.MSTACK, Ops.BUFFER}
_VIEW, _ASSIGNS = 2, 4  # a graph of views of storage only; a graph holding an ASSIGN


def _is_view(uop: UOp) -> bool:
    """A view of storage (what `_graph_reads` marks _VIEW), read down its chain of views (a
    strided slice's PAD, which its SHRINK drops, too: `view_ops`, asked of the chain's top;
    asked of the node the walk stopped at, a PAD is never a view op)."""
    ops = _ALIAS_OPS | view_ops(uop)
    while uop.op in ops and len(uop.src) == 1:
        uop = uop.src[0]
    return uop.op is Ops.BUFFER or (uop.op in _ALIAS_OPS and _graph_reads(uop, {})[1] & _VIEW > 0)


def _reads(root: UOp, written: set[UOp]) -> bool:
    """root reads a node of `written` (a walk that stops at the first: a value such as
    `w - lr * g` names w near its root)."""
    stack, seen = [root], {root}
    while stack:
        n = stack.pop()
        if n in written:
            return True
        for src in n.src:
            if src not in seen:
                seen.add(src)
                stack.append(src)
    return False


_ASSIGN_BIT = OP_BIT[Ops.ASSIGN]  # (shared with CONTIGUOUS and COPY: no bit, no ASSIGN)
_NO_BUFFERS: frozenset[UOp] = frozenset()
_GRAPH_READS = object()  # this module's key in `UOp.memo` (runtime/uop.py)


def _graph_reads(root: UOp, walked: dict[UOp, tuple[frozenset[UOp], int]]
                 ) -> tuple[frozenset[UOp], int]:
    """The BUFFER nodes root's graph reads, and its _VIEW/_ASSIGNS flags. Kept on root in
    `UOp.memo`: a pure function of an immutable node, it never goes stale, and it goes when the
    graph goes (a tensor's old graph, with the buffers it held, is not kept alive by it). A
    walk fills `walked` for the nodes under root (a set is shared with a source when it adds
    nothing to it) and stops at the nodes already there or kept from an earlier walk."""
    def known(n: UOp) -> bool:  # walked here, or a root of an earlier walk (its memo)
        if n in walked:
            return True
        memo = n.memo
        if type(memo) is tuple and memo[0] is _GRAPH_READS:
            walked[n] = memo[1]
            return True
        return False

    for n in toposort(root, stop=known):
        op = n.op
        bufs = frozenset((n,)) if op is Ops.BUFFER else _NO_BUFFERS
        flags = (_VIEW if op in _ALIAS_OPS else 0) | (_ASSIGNS if op is Ops.ASSIGN else 0)
        for src in n.src:
            src_bufs, src_flags = walked[src]
            if not src_bufs <= bufs:
                bufs = src_bufs if bufs <= src_bufs else bufs | src_bufs
            flags = (flags | (src_flags & _ASSIGNS)) & ~(0 if src_flags & _VIEW else _VIEW)
        walked[n] = (bufs, flags)
    if root.op is not Ops.BUFFER:  # (a BUFFER's set holds itself: no cycle through its memo)
        root.memo = (_GRAPH_READS, walked[root])
    return walked[root]


_marks = itertools.count()


def _marked(uop: UOp) -> UOp:
    """A variable's own node over the storage `uop` reads (a buffer, or a view of one): its top
    movement op tagged with a number no other node has (a bare BUFFER gets a RESHAPE to its
    own shape to carry it). Nodes are shared by value: without the mark, `b = a.T` made a leaf
    and `a.T` elsewhere in the loss were one node, and backward gave b the gradient of both
    (twice torch's). Still a view of the storage for everything that reads views (realize,
    assign, numpy, the jit); the schedulers drop the tag first (rules/rangeify.rules'
    `variable_mark`), so the kernels and their compiled code do not change (a schedule is
    cached per graph, its marks numbered in the order met: runtime/schedule_cache.py's
    `graph_key`, so fresh leaves each step replay it). An assign keeps
    the mark: the tensor is pointed back at its target node (runtime/realize.py's `_result`).
    A node marked already (another variable's, `Tensor(b, requires_grad=True)` of a marked b)
    gets a mark of its own."""
    if uop.op in GroupOp.Movement:
        return uop.replace(tag=(VARIABLE_MARK, next(_marks)))
    return UOp(Ops.RESHAPE, uop.dtype, (uop,), uop.shape, (VARIABLE_MARK, next(_marks)))


def _is_detach(uop: UOp) -> bool:
    return uop.op is Ops.DETACH


def _view_of_buffer(uop: UOp) -> bool:
    """A chain of WRITABLE_VIEWS over a realized buffer: each element is one of its storage
    (a strided slice's PAD, which its SHRINK drops, too: `view_ops`)."""
    ops = view_ops(uop, WRITABLE_VIEWS)
    while uop.op in ops:
        uop = uop.src[0]
    return buffer_of(uop) is not None
