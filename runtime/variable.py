"""Symbolic sizes: a bound variable as a tensor size, and the pass that takes its value out.

In: tensor graphs whose shapes may hold bound variables, `BIND(DEFINE_VAR(name, min, max),
CONST value)`, which enter through `Tensor.shrink(((0, v), ...))`. Out (`unbind`): the same
program over concrete shapes, with every BIND replaced by its DEFINE_VAR, plus the values
(`var_vals`, name -> int).

The unbound graph holds no value, so the schedule cache and the compiled library, both keyed by
the graph, serve every value: a kernel reads the variable as a parameter (the seed's
`unbind_kernel`). Each symbolic size is stored at its variable's maximum: a SHRINK to `v` becomes
a SHRINK to `vmax`, a buffer holding a symbolic axis has `vmax` rows, and a reduction over a
symbolic axis reads the rows at or past the value as its start (`WHERE(i < v, x, start)`,
so index rules see the variable's range, not a value). Rows past the value are computed but
never read, and never written into storage that holds other data: an ASSIGN through a symbolic
view (`a[:n]`) keeps its target's old value there (`WHERE(i < v, value, target)`).

What the Tensor API does over a symbolic axis (tests/test_symbolic_ops.py):

- supported: elementwise ops; every reduction (sum, prod, max, min, mean, var, std, any, all,
  logsumexp, softmax, log_softmax, softmin, layernorm, normalize, argmax, argmin, the losses);
  the scans (cumsum, cumprod, cummax, cummin, logcumsumexp: a triangular mask, since a
  symbolic axis cannot be padded into windows); sort, argsort, topk (k at most the bound
  value); matmul and einsum over it; gather along another axis; tril, triu and attention
  (causal too); indexing (`:` keeps the axis symbolic, any other index reads the bound rows
  as concrete ones);
- refused, with an error naming the op and the axis: flip and pad of it, cat along it,
  reshapes that merge or split it (flatten, repeat, masked_select), pooling, unfold and
  convolutions of a tensor of symbolic shape, and a gradient through
  the shrink that made it (it would pad by a symbolic amount: realize the shrunk tensor and
  take the gradient with respect to it instead).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .buffer import Buffer
from .device import DEFAULT, device_of, in_use
from .dtype import dtypes
from .errors import InvalidArgument
from .ops import Ops
from .uop import BIND_BIT, UOp, toposort


def Variable(name: str, vmin: int, vmax: int) -> UOp:  # noqa: N802 - tinygrad's name
    """A symbolic size `name` in [vmin, vmax]; `.bind(value)` (UOp.bind) gives it a value."""
    if not (isinstance(vmin, int) and isinstance(vmax, int) and 0 <= vmin <= vmax):
        raise ValueError(f"Variable {name!r}: need integers 0 <= min <= max, got ({vmin}, {vmax})")
    if not name.isidentifier():
        raise ValueError(f"Variable name {name!r} must be an identifier")
    return UOp.variable(name, vmin, vmax, dtypes.index)


def _bound_in(arg: tuple) -> list[UOp]:
    flat = [y for x in arg for y in (x if isinstance(x, tuple) else (x,))]
    return [x for x in flat if isinstance(x, UOp) and x.op is Ops.BIND]


def resolve(arg: tuple) -> tuple:
    """A movement arg with each bound variable replaced by its value (the oracle's view)."""
    def one(x):
        return int(x.src[1].arg) if isinstance(x, UOp) and x.op is Ops.BIND else x
    return tuple(tuple(one(y) for y in x) if isinstance(x, tuple) else one(x) for x in arg)


def is_bound(s: object) -> bool:
    return isinstance(s, UOp) and s.op is Ops.BIND


def concrete(shape: tuple) -> tuple[int, ...]:
    """The shape as stored: each bound variable at its maximum."""
    return tuple(int(s.vmax) if isinstance(s, UOp) else s for s in shape)


def actual(shape: tuple) -> tuple[int, ...]:
    """The shape at the bound values."""
    return tuple(int(s.src[1].arg) if isinstance(s, UOp) else s for s in shape)


def show(shape: tuple) -> str:
    """A shape for a person: each bound variable as name=value, `(1, n=6, 4)`; a size computed
    from them (a flatten's `n * 6`) as its expression, `n=6*4`."""
    parts = [size_text(s) for s in shape]
    return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"


_SIZE_OPS = {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*"}


def size_text(s: object) -> str:
    """One size for a person (an int, a bound variable as name=value, or a sum or product of
    them; the recursion is as deep as a size's own expression, a few nodes)."""
    if not isinstance(s, UOp):
        return str(s)
    if s.op is Ops.BIND:
        return f"{s.src[0].arg[0]}={int(s.src[1].arg)}"
    if s.op is Ops.CONST:
        return str(s.arg)
    if s.op is Ops.DEFINE_VAR:  # (unbound: its name)
        return str(s.arg[0])
    if s.op in _SIZE_OPS:
        return _SIZE_OPS[s.op].join(size_text(x) for x in s.src if not (
            x.op is Ops.CONST and x.arg == (1 if s.op is Ops.MUL else 0)))
    return s.op.name


def refuse_symbolic(op: str, shape: tuple, axes: Iterable[int] | None = None) -> None:
    """Refuse `op` over a symbolic size among `axes` of `shape` (None: any axis), in words:
    such ops compute with the size in Python (a roll's shift modulo it, split points, a count
    of rows), which a bound variable is not. Without this each failed on its first `<`, `%`
    or `int()` of the size with a bare TypeError."""
    axes = range(len(shape)) if axes is None else axes
    hit = [a for a in axes if isinstance(shape[a], UOp)]
    if hit:
        raise InvalidArgument(f"{op} over axis {hit[0]} of symbolic size, shape {show(shape)}: "
                              "it needs the size as a number (shrink to a concrete size, or "
                              "copy into a tensor of concrete shape first)")


def has_symbolic(shape: tuple | None) -> bool:
    return shape is not None and any(isinstance(s, UOp) for s in shape)


_aranges: dict[tuple[int, str], UOp] = {}


def _arange(n: int, device: str) -> UOp:
    """0..n-1 as an int64 buffer on `device` (one per size and device, shared: graphs over it
    key alike)."""
    if (n, device) not in _aranges:
        buf = Buffer(n, dtypes.int64, np.arange(n, dtype=np.int64), device=device)
        _aranges[(n, device)] = UOp(Ops.BUFFER, dtypes.int64, (), buf)
    return _aranges[(n, device)]


def _valid(shape: tuple, axes: tuple[int, ...], var_of: dict[UOp, UOp],
           device: str) -> UOp | None:
    """The mask over concrete `shape` that is true where each symbolic axis in `axes` is below
    its variable's value."""
    cshape = concrete(shape)
    mask = None
    for a in axes:
        s = shape[a]
        if not isinstance(s, UOp):
            continue
        line = (1,) * a + (cshape[a],) + (1,) * (len(shape) - a - 1)
        idx = _arange(cshape[a], device).reshape(line).expand(cshape)
        var = var_of[s].cast(dtypes.int64).reshape((1,) * len(shape)).expand(cshape)
        m = idx.alu(Ops.CMPLT, var)
        mask = m if mask is None else mask.alu(Ops.AND, m)
    return mask


def unbind(roots: list[UOp]) -> tuple[list[UOp], dict[str, int]]:
    """The roots over concrete shapes with no bound value in them, and the values."""
    # (no bound variable in the roots' graphs, nor in their views' shapes: no walk. A process
    # that bound one once, a generation loop's, walked every later realize's graph here)
    for r in roots:
        if r._ops & BIND_BIT:
            break
    else:
        return roots, {}
    from rulegrad.runtime.ops import reduce_from

    var_vals: dict[str, int] = {}
    var_of: dict[UOp, UOp] = {}
    new: dict[UOp, UOp] = {}

    def take(b: UOp) -> None:
        name, value = b.src[0].arg[0], int(b.src[1].arg)
        if var_vals.setdefault(name, value) != value:
            raise ValueError(f"Variable {name!r} is bound to both {var_vals[name]} and {value} "
                             "in one realize")
        var_of[b] = b.src[0]

    nodes = toposort(UOp.sink(*roots))
    # bound variables sit in movement args (shapes) and, as scalars, in the graph itself (the
    # ops read once: an `Ops.X` is an enum attribute lookup, per node of a 1M-node graph)
    bind, sized = Ops.BIND, (Ops.RESHAPE, Ops.EXPAND, Ops.SHRINK)
    for n in nodes:
        if n.op is bind:
            take(n)
        elif n.op in sized:
            for b in _bound_in(n.arg):
                take(b)
    if not var_of:
        return roots, var_vals
    for n in nodes:
        if n.op is Ops.BIND:
            new[n] = n.src[0]
            continue
        src = tuple(new[s] for s in n.src)
        arg = n.arg
        if n.op in (Ops.RESHAPE, Ops.EXPAND) and has_symbolic(arg):
            arg = concrete(arg)
        elif n.op is Ops.SHRINK and any(isinstance(e, UOp) for _, e in arg):
            arg = tuple((b, int(e.vmax) if isinstance(e, UOp) else e) for b, e in arg)
        if n.op is Ops.REDUCE_AXIS and has_symbolic(n.src[0].shape):
            # (the mask is read on the reduction's device)
            device = (device_of(src[0]) if in_use["devices"] else None) or DEFAULT
            mask = _valid(n.src[0].shape, arg[1], var_of, device)
            if mask is not None:
                # the masked rows add what the reduction starts from, not its op's identity:
                # a pick starts from -0.0 (runtime/ops.py, reduce_start), and +0.0 there
                # turned a picked -0.0 into +0.0
                fill = src[0].const_like(reduce_from(arg, n.dtype))
                src = (mask.alu(Ops.WHERE, src[0], fill),)
        elif n.op is Ops.ASSIGN and has_symbolic(n.src[0].shape):
            # an assign through a symbolic view (`a[:n].assign(v)`, an optimizer's step of
            # `p = a[:n]`) writes the elements below the value only: past it is the storage of
            # the view's base, which keeps its values (written with the padded rows' values,
            # `a[n:]` changed)
            shape = n.src[0].shape
            device = (device_of(src[0]) if in_use["devices"] else None) or DEFAULT
            mask = _valid(shape, tuple(range(len(shape))), var_of, device)
            src = (src[0], mask.alu(Ops.WHERE, src[1], src[0]))  # type: ignore[union-attr]
        new[n] = n if src == n.src and arg is n.arg else n.replace(src=src, arg=arg)
    return [new[r] for r in roots], var_vals
