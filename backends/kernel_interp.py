"""The numpy interpreter for kernel ASTs: runs a schedule without a compiler.

In: `ScheduleItem`s (runtime/schedule.py; the AST of backends/KERNEL_AST.md) whose buffers are
allocated or not. Out: their output buffers filled, in place.

Vectorised over ranges: every RANGE of a kernel is one numpy axis (the STORE's loops first,
outermost first, then the reduce ranges), and each node evaluates to an array broadcastable to
that grid (size 1 on the axes it does not depend on). A REDUCE reduces its ranges' axes; a
LOAD gathers with fancy indexing, reading 0 where its valid mask is false without touching
memory there; a STORE scatters its value over its loops. No Python loop per element. A grid
larger than `CHUNK` elements (a matmul's rows x columns x k) is run a block of its outer loops
at a time (`_blocks`), so no array of the whole grid is ever made: a broadcast product costs
the memory of a block, as the C kernel's loop costs none.
The lowered form (`rules/lower.rules`: gated LOADs, REDUCEs over a DEFINE_REG accumulator)
runs too, so lowering can be checked against the AST it came from (generator/passdiff.py).

The elementwise and reduce semantics are runtime/semantics.py's table, the oracle's too, so
the two backends cannot drift apart on what an op means.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from rulegrad.backends.oracle import _identity
from rulegrad.runtime import semantics
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

CHUNK = 1 << 20  # grid elements evaluated at once: 8 MB per int64 or float64 array of a block


class KernelInterpError(RuntimeError):
    """A kernel AST the interpreter cannot run (a node outside KERNEL_AST.md)."""


def run_schedule(items: Sequence[Any], var_vals: dict[str, int] | None = None) -> None:
    """Run each item in order (the schedule's order is already producers first); a DEFINE_VAR
    reads its value from `var_vals`."""
    for item in items:
        run_kernel(item.ast, [b.ensure() for b in item.bufs], var_vals)


def run_kernel(ast: UOp, bufs: list[np.ndarray], var_vals: dict[str, int] | None = None) -> None:
    """Run one kernel (SINK of STOREs) on flat arrays, `bufs[i]` being DEFINE_GLOBAL i."""
    if ast.op is not Ops.SINK:
        raise KernelInterpError(f"a kernel AST is a SINK of STOREs, got {ast.op.name}")
    with np.errstate(all="ignore"):
        for st in ast.src:
            _run_store(st, bufs, var_vals or {})


def _axes_of(st: UOp) -> dict[UOp, int]:
    """Grid axis of each range: the STORE's loops in order, then reduce ranges as met."""
    axes: dict[UOp, int] = {r: i for i, r in enumerate(st.src[2:])}
    for n in toposort(st.src[1]):
        if n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL):
            for r in n.src[1:]:
                axes.setdefault(r, len(axes))
    return axes


def _run_store(st: UOp, bufs: list[np.ndarray], var_vals: dict[str, int]) -> None:
    if st.op is not Ops.STORE or st.src[0].op is not Ops.INDEX:
        raise KernelInterpError(f"expected STORE(INDEX, value, *ranges), got {st!r}")
    axes = _axes_of(st)
    loops = tuple(int(r.src[0].arg) for r in st.src[2:])
    if any(s == 0 for s in loops):
        return
    inner = 1  # the grid elements of one iteration of the loops: the reduce ranges'
    for r, a in axes.items():
        if a >= len(loops):
            inner *= int(r.src[0].arg)
    order = [n for n in toposort(UOp.sink(st.src[0].src[1], st.src[1])) if n.op is not Ops.SINK]
    whole = _local_axes(st, axes)
    split = _reduce_split(order, axes, inner) if inner > CHUNK and not whole else None
    if split is not None:  # one iteration of the loops is too large: a REDUCE in runs
        red, r, step = split
        below = toposort(red)
        order = _above(order, [st.src[0].src[1], st.src[1]], red)  # (red itself: `fixed`)
        size = int(r.src[0].arg)
    for window in _blocks(loops, inner, whole):
        fixed: dict[UOp, np.ndarray] = {}
        if split is not None:
            for lo in range(0, size, step):
                part = _run_block(st, below, bufs, var_vals, axes, loops,
                                  {**window, axes[r]: (lo, min(lo + step, size))}, {}, red)
                fixed[red] = part if red not in fixed else \
                    semantics.alu(red.arg, red.dtype.np, fixed[red], part)
        _run_block(st, order, bufs, var_vals, axes, loops, window, fixed)


def _above(order: list[UOp], roots: list[UOp], stop: UOp) -> list[UOp]:
    """The nodes of `order` the roots read without going through `stop` (and `stop`)."""
    needed, stack = {stop}, [x for x in roots if x is not stop]
    while stack:
        n = stack.pop()
        if n not in needed:
            needed.add(n)
            stack.extend(s for s in n.src if s not in needed)
    return [n for n in order if n in needed]


def _reduce_split(order: list[UOp], axes: dict[UOp, int], inner: int
                  ) -> tuple[UOp, UOp, int] | None:
    """A REDUCE to evaluate in runs of one of its ranges (the longest; a range no other REDUCE
    has), and the run's length: its partial results combine with its op (ADD, MUL, MAX, MIN);
    None when there is none (the grid is then evaluated whole)."""
    reduces = [n for n in order if n.op is Ops.REDUCE]
    owners: dict[UOp, int] = {}
    for red in reduces:
        for r in red.src[1:]:
            owners[r] = owners.get(r, 0) + 1
    best: tuple[UOp, UOp, int] | None = None
    for red in reduces:
        if red.arg not in (Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN):
            continue
        for r in red.src[1:]:
            size = int(r.src[0].arg)
            if owners[r] == 1 and r in axes and size > 1 and (best is None or size > best[2]):
                best = (red, r, size)
    if best is None:
        return None
    red, r, size = best
    return red, r, max(1, CHUNK // (inner // size))


def _local_axes(st: UOp, axes: dict[UOp, int]) -> set[int]:
    """The axes of kernel-local arrays' own ranges: always evaluated whole."""
    return {axes[r] for n in toposort(st.src[1]) if n.op is Ops.DEFINE_LOCAL
            for r in n.src[1:] if r in axes}


def _blocks(loops: tuple[int, ...], inner: int, whole: set[int]
            ) -> Iterator[dict[int, tuple[int, int]]]:
    """Windows (loop axis -> [lo, hi)) that tile the loops so each block of the grid holds at
    most CHUNK elements where it can: the inner loops whole, the next one in runs, the outer
    ones an index at a time. One empty window (the whole grid) when it fits."""
    rest, j = inner, len(loops) - 1  # rest: the elements of one index of loop j
    while j >= 0 and rest * loops[j] <= CHUNK:
        rest *= loops[j]
        j -= 1
    if j < 0 or any(a in whole for a in range(j + 1)):
        yield {}  # fits (or a local array's own loop, which is evaluated whole)
        return
    step = max(1, CHUNK // rest)
    for outer in itertools.product(*(range(n) for n in loops[:j])):
        window = {a: (i, i + 1) for a, i in enumerate(outer)}
        for lo in range(0, loops[j], step):
            yield {**window, j: (lo, min(lo + step, loops[j]))}


def _run_block(st: UOp, order: list[UOp], bufs: list[np.ndarray], var_vals: dict[str, int],
               axes: dict[UOp, int], loops: tuple[int, ...],
               window: dict[int, tuple[int, int]], fixed: dict[UOp, np.ndarray],
               until: UOp | None = None) -> np.ndarray | None:
    """Evaluate (`order`: the store's offset and value, sources first; `fixed`: values known
    already) and store the block of the grid `window` marks (its ranges' runs); with `until`,
    evaluate only up to that node and return its value, storing nothing."""
    ndim = len(axes)
    target = st.src[0]
    data = bufs[target.src[0].arg]
    values: dict[UOp, np.ndarray] = dict(fixed)
    for n in order:
        if n in values:
            continue
        if n.op is Ops.DEFINE_VAR:
            if n.arg[0] not in var_vals:
                raise KernelInterpError(f"variable {n.arg[0]!r} has no value")
            values[n] = np.full((1,) * ndim, var_vals[n.arg[0]], dtype=n.dtype.np)
            continue
        values[n] = _eval(n, values, axes, ndim, bufs, window)
    if until is not None:
        return values[until]
    sizes = tuple(window[a][1] - window[a][0] if a in window else n for a, n in enumerate(loops))
    grid = sizes + (1,) * (ndim - len(loops))
    off = np.broadcast_to(values[target.src[1]], grid).reshape(-1)
    val = np.broadcast_to(values[st.src[1]], grid).reshape(-1)
    data[off] = val.astype(data.dtype, copy=False)
    return None


def _eval(n: UOp, values: dict[UOp, np.ndarray], axes: dict[UOp, int], ndim: int,
          bufs: list[np.ndarray], window: dict[int, tuple[int, int]]) -> np.ndarray:
    op = n.op
    if op is Ops.CONST:
        return np.full((1,) * ndim, n.arg, dtype=n.dtype.np)
    if op is Ops.RANGE:  # its values in the block (a loop `window` splits), else all of them
        shape = [1] * ndim
        lo, hi = window.get(axes[n], (0, int(n.src[0].arg)))
        shape[axes[n]] = hi - lo
        return np.arange(lo, hi, dtype=np.int64).reshape(shape)
    if op in (Ops.DEFINE_GLOBAL, Ops.INDEX):
        return np.zeros((1,) * ndim, dtype=np.int64)  # only meaningful under LOAD / STORE
    src = [values[s] for s in n.src]
    if op is Ops.DEFINE_LOCAL:  # the array's elements: its value over its own ranges' axes
        return src[0]
    if op is Ops.LOAD:
        if n.src[0].src[0].op is Ops.DEFINE_LOCAL:
            return _load_local(n.src[0], values, axes)
        if len(n.src) == 3:  # lowered: LOAD(INDEX(b, off), gate, alt) reads b only at gate
            return _gated(n, values, bufs)
        return _load(n.src[0], values, bufs, ndim)
    if op is Ops.DEFINE_REG:  # lowered REDUCE's accumulator: op(acc, v) is then v, reduced
        return np.full((1,) * ndim, n.arg, dtype=n.dtype.np)
    if op is Ops.REDUCE:
        return _reduce(n, src[0], axes, window)
    if op is Ops.CAST:
        return semantics.cast(src[0], n.dtype.np)
    if op is Ops.BITCAST:
        return np.ascontiguousarray(src[0]).view(n.dtype.np)
    if op not in semantics.ALU and op is not Ops.MULACC:
        raise KernelInterpError(f"the kernel interpreter cannot run {op.name}: {n!r}")
    return semantics.alu(op, n.dtype.np, *src)


def _load(idx: UOp, values: dict[UOp, np.ndarray], bufs: list[np.ndarray],
          ndim: int) -> np.ndarray:
    data = bufs[idx.src[0].arg]
    off = values[idx.src[1]]
    if len(idx.src) == 2:
        return data[off]
    valid = values[idx.src[2]].astype(bool)
    off, valid = np.broadcast_arrays(off, valid)
    if data.size == 0:
        return np.zeros(off.shape, dtype=data.dtype)
    # an invalid read never touches memory: it gathers element 0 and is replaced by 0
    return np.where(valid, data[np.where(valid, off, 0)], np.zeros((), dtype=data.dtype))


def _load_local(idx: UOp, values: dict[UOp, np.ndarray], axes: dict[UOp, int]) -> np.ndarray:
    """A read of a kernel-local array: on the grid axes of the local's own ranges its value
    is laid out row-major and gathered at the reader's offset; on the other axes (the loops
    around it) value and offset broadcast against each other."""
    dl = idx.src[0]
    own = [axes[r] for r in dl.src[1:]]
    value = values[dl]
    shape = list(value.shape)
    for r in dl.src[1:]:
        shape[axes[r]] = int(r.src[0].arg)
    value = np.broadcast_to(value, shape)
    off = values[idx.src[1]]
    if any(off.shape[a] != 1 for a in own):
        raise KernelInterpError("a local array is read at its own ranges: " + repr(idx))
    keep = len(shape) - len(own)
    flat = np.moveaxis(value, own, list(range(keep, len(shape)))).reshape(
        [s for a, s in enumerate(shape) if a not in own] + [-1])
    at = np.squeeze(off, axis=tuple(own))[..., None]
    lead = np.broadcast_shapes(at.shape[:-1], flat.shape[:-1])
    flat = np.broadcast_to(flat, lead + flat.shape[-1:])
    out = np.take_along_axis(flat, np.broadcast_to(at, lead + (1,)), axis=-1)[..., 0]
    return np.expand_dims(out, tuple(sorted(own)))


def _gated(n: UOp, values: dict[UOp, np.ndarray], bufs: list[np.ndarray]) -> np.ndarray:
    data = bufs[n.src[0].src[0].arg]
    off, gate = np.broadcast_arrays(values[n.src[0].src[1]], values[n.src[1]].astype(bool))
    read = data[np.where(gate, off, 0)] if data.size else np.zeros(off.shape, data.dtype)
    return np.where(gate, read, values[n.src[2]]).astype(n.dtype.np, copy=False)


def _reduce(n: UOp, value: np.ndarray, axes: dict[UOp, int],
            window: dict[int, tuple[int, int]]) -> np.ndarray:
    red_axes = tuple(axes[r] for r in n.src[1:])
    shape = list(value.shape)
    for r in n.src[1:]:  # a value constant along a range still counts n times (of its run)
        lo, hi = window.get(axes[r], (0, int(r.src[0].arg)))
        shape[axes[r]] = hi - lo
    value = np.broadcast_to(value, shape)
    op: Ops = n.arg
    out = semantics.reduce(op, value, red_axes, _identity(op, n.dtype))
    return out if out.dtype == n.dtype.np else out.astype(n.dtype.np)
