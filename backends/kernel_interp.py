"""The numpy interpreter for kernel ASTs: runs a schedule without a compiler.

In: `ScheduleItem`s (runtime/schedule.py; the AST of backends/KERNEL_AST.md) whose buffers are
allocated or not. Out: their output buffers filled, in place.

Vectorised over ranges: every RANGE of a kernel is one numpy axis (the STORE's loops first,
outermost first, then the reduce ranges), and each node evaluates to an array broadcastable to
that grid (size 1 on the axes it does not depend on). A REDUCE reduces its ranges' axes; a
LOAD gathers with fancy indexing, reading 0 where its valid mask is false without touching
memory there; a STORE scatters its value over its loops. No Python loop per element. A kernel
whose largest array would hold more than `CHUNK` elements (a matmul's broadcast product, rows x
columns x k) is run a block of its outer loops at a time (`_blocks`), each node's array being
as large as the axes it spans (`_spans`), not the whole grid: a broadcast product costs the
memory of a block, as the C kernel's loop costs none, and a softmax row whose grid is rows x
keys x keys x keys but whose arrays are rows x keys runs in one block.
The lowered form (`rules/lower.rules`: gated LOADs, REDUCEs over a DEFINE_REG accumulator)
runs too, so lowering can be checked against the AST it came from (generator/passdiff.py).
So does the optimized one (`rules/opt.rules`): an unrolled window is plain arithmetic, a
RANGE of any kind is a loop, and a float sum whose order an action fixed is summed in that
order (a "vector" range: partial results per vector lane, and a "fill" range the same steps;
a "thread" range: a partial per iteration, combined in order; a packed product, a `Pack` in
its STORE's arg: over k in order, each step one fused multiply-add), so the interpreter gives
its C kernel's bits where `exact_order` says so (generator/optdiff.py checks them). What an
action only tells the printer about speed (a `Flash`, a `Parallel` in the SINK's arg) changes
no value here: the check runs those kernels in C before and after the action as well. An
interchanged STORE is its loop nest in the AST (split and reordered ranges, rows unrolled into a
reduce's update): run as any other.

The elementwise and reduce semantics are runtime/semantics.py's table, the oracle's too, so
the two backends cannot drift apart on what an op means.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from rulegrad.runtime import semantics
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import Ops, reduce_identity
from rulegrad.runtime.target import cpu
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
    # (the offset, a store's gate where it has one: an interchange's overlapping last block)
    order = [n for n in toposort(UOp.sink(*st.src[0].src[1:], st.src[1])) if n.op is not Ops.SINK]
    spans = _spans(order, axes, len(loops))
    extent = {a: 1 if a < len(loops) else int(r.src[0].arg) for r, a in axes.items()}
    # (and a scan's loop: its accumulator runs along all of it)
    whole = _local_axes(st, axes) | {a for r, a in axes.items() if r.arg[1] == "scan"}
    chained = _fused_chains(st)  # packed float32 sums: k in order (their ranges never split)
    split = (_reduce_split(order, axes, spans, extent)
             if _footprint(spans, extent) > CHUNK and not whole and not chained else None)
    if split is not None:  # one iteration of the loops is too large: a REDUCE in runs
        red, r, step = split
        below = toposort(red)
        order = _above(order, [*st.src[0].src[1:], st.src[1]], red)  # (red itself: `fixed`)
        size = int(r.src[0].arg)
        extent[axes[r]] = step
    for window in _blocks(loops, spans, extent, whole):
        fixed: dict[UOp, np.ndarray] = {}
        if split is not None:
            for lo in range(0, size, step):
                part = _run_block(st, below, bufs, var_vals, axes, loops,
                                  {**window, axes[r]: (lo, min(lo + step, size))}, {}, chained,
                                  red)
                fixed[red] = part if red not in fixed else \
                    semantics.alu(red.arg, part.dtype, fixed[red], part)
            if fixed[red].dtype != red.dtype.np:  # (a float16 sum's
                fixed[red] = fixed[red].astype(red.dtype.np)  # runs, added in float32)
        _run_block(st, order, bufs, var_vals, axes, loops, window, fixed, chained)


def _spans(order: list[UOp], axes: dict[UOp, int], nloops: int) -> list[frozenset[int]]:
    """The grid axes along which each node's array is more than 1 long (the others broadcast),
    with a REDUCE's own axes, which its work spans, and the STORE's loops (the values it
    scatters): a block's arrays are as large as its largest span, however large the grid (a
    softmax row's grid is rows x scores x keys x keys, and none of its arrays is more than
    rows x keys). An over-estimate only makes the blocks smaller."""
    of: dict[UOp, frozenset[int]] = {}
    out = [frozenset(range(nloops))]
    for n in order:
        if n.op is Ops.RANGE and n in axes:
            s = frozenset((axes[n],))
        elif n.op is Ops.INDEX and n.src[0].op is Ops.DEFINE_LOCAL:  # (and its LOAD)
            dl = n.src[0]  # (the local's own axes are read at the offset)
            own = {axes[r] for r in dl.src[1:] if r in axes}
            s = (of[dl] - own).union(*(of.get(x, frozenset()) for x in n.src[1:]))
        else:
            s = frozenset().union(*(of.get(x, frozenset()) for x in n.src))
        if n.op is Ops.REDUCE:
            red = frozenset(axes[r] for r in n.src[1:] if r in axes)
            out.append(s | red)
            s = s - red
        of[n] = s
        out.append(s)
    return out


def _footprint(spans: list[frozenset[int]], extent: dict[int, int]) -> int:
    """The elements of a block's largest array, the block being `extent` long on each axis."""
    return max(math.prod(extent[a] for a in s) for s in spans)


def _step(spans: list[frozenset[int]], extent: dict[int, int], axis: int) -> int:
    """The longest run of `axis` whose block holds at most CHUNK elements per array (the
    other axes as `extent` says; at least 1)."""
    per = [math.prod(extent[a] for a in s if a != axis) for s in spans if axis in s]
    return max(1, CHUNK // max(per, default=1))


def _above(order: list[UOp], roots: list[UOp], stop: UOp) -> list[UOp]:
    """The nodes of `order` the roots read without going through `stop` (and `stop`)."""
    needed, stack = {stop}, [x for x in roots if x is not stop]
    while stack:
        n = stack.pop()
        if n not in needed:
            needed.add(n)
            stack.extend(s for s in n.src if s not in needed)
    return [n for n in order if n in needed]


def _reduce_split(order: list[UOp], axes: dict[UOp, int], spans: list[frozenset[int]],
                  extent: dict[int, int]) -> tuple[UOp, UOp, int] | None:
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
        if any(isinstance(r.arg, tuple) and r.arg[1] in ("vector", "thread", "scan")
               for r in red.src[1:]):
            continue  # an order the optimizer fixed is summed whole, in that order
        for r in red.src[1:]:
            size = int(r.src[0].arg)
            if owners[r] == 1 and r in axes and size > 1 and (best is None or size > best[2]):
                best = (red, r, size)
    if best is None:
        return None
    red, r, size = best
    return red, r, _step(spans, extent, axes[r])


def _local_axes(st: UOp, axes: dict[UOp, int]) -> set[int]:
    """The axes of kernel-local arrays' own ranges: always evaluated whole."""
    return {axes[r] for n in toposort(st.src[1]) if n.op is Ops.DEFINE_LOCAL
            for r in n.src[1:] if r in axes}


def _blocks(loops: tuple[int, ...], spans: list[frozenset[int]], extent: dict[int, int],
            whole: set[int]) -> Iterator[dict[int, tuple[int, int]]]:
    """Windows (loop axis -> [lo, hi)) that tile the loops so each array of a block (`spans`;
    `extent`: the other axes' lengths in a block) holds at most CHUNK elements where it can:
    the inner loops whole, the next one in runs, the outer ones an index at a time. One empty
    window (the whole grid) when it fits."""
    extent = dict(extent)
    j = len(loops) - 1
    while j >= 0:
        extent[j] = loops[j]
        if _footprint(spans, extent) > CHUNK:
            extent[j] = 1
            break
        j -= 1
    if j < 0 or any(a in whole for a in range(j + 1)):
        yield {}  # fits (or a local array's own loop, which is evaluated whole)
        return
    step = _step(spans, extent, j)
    for outer in itertools.product(*(range(n) for n in loops[:j])):
        window = {a: (i, i + 1) for a, i in enumerate(outer)}
        for lo in range(0, loops[j], step):
            yield {**window, j: (lo, min(lo + step, loops[j]))}


def _run_block(st: UOp, order: list[UOp], bufs: list[np.ndarray], var_vals: dict[str, int],
               axes: dict[UOp, int], loops: tuple[int, ...],
               window: dict[int, tuple[int, int]], fixed: dict[UOp, np.ndarray],
               chained: set[UOp], until: UOp | None = None) -> np.ndarray | None:
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
        if n in chained:
            values[n] = _fused_chain(n, values, axes)
            continue
        if n is until and n.op is Ops.REDUCE:  # a run of a split REDUCE: kept wide (_reduce)
            values[n] = _reduce(n, values[n.src[0]], axes, window, wide=True)
            continue
        values[n] = _eval(n, values, axes, ndim, bufs, window)
    if until is not None:
        return values[until]
    sizes = tuple(window[a][1] - window[a][0] if a in window else n for a, n in enumerate(loops))
    grid = sizes + (1,) * (ndim - len(loops))
    off = np.broadcast_to(values[target.src[1]], grid).reshape(-1)
    val = np.broadcast_to(values[st.src[1]], grid).reshape(-1)
    if len(target.src) > 2:  # a gated store writes only where its gate holds
        keep = np.broadcast_to(values[target.src[2]], grid).reshape(-1).astype(bool)
        off, val = off[keep], val[keep]
    data[off] = val.astype(data.dtype, copy=False)
    return None


def _eval(n: UOp, values: dict[UOp, np.ndarray], axes: dict[UOp, int], ndim: int,
          bufs: list[np.ndarray], window: dict[int, tuple[int, int]]) -> np.ndarray:
    op = n.op
    # (a lowered REDUCE's accumulator DEFINE_REG: op(acc, v) is then v, reduced)
    if op in (Ops.CONST, Ops.DEFINE_REG):
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
    if op is Ops.REDUCE:
        return _reduce(n, src[0], axes, window)
    if op is Ops.CAST:
        return semantics.cast(src[0], n.dtype.np)
    if op is Ops.BITCAST:  # (ascontiguousarray makes a 0-d array 1-d: its shape put back)
        x = np.asarray(src[0])
        return np.ascontiguousarray(x).view(n.dtype.np).reshape(x.shape)
    if op not in semantics.ALU and op is not Ops.MULACC:
        raise KernelInterpError(f"the kernel interpreter cannot run {op.name}: {n!r}")
    return semantics.alu(op, n.dtype.np, *src)


def _load(idx: UOp, values: dict[UOp, np.ndarray], bufs: list[np.ndarray],
          ndim: int) -> np.ndarray:
    data = bufs[idx.src[0].arg]
    if len(idx.src) == 2:
        return data[values[idx.src[1]]]
    return _read(data, values[idx.src[1]], values[idx.src[2]], np.zeros((), dtype=data.dtype))


def _load_local(idx: UOp, values: dict[UOp, np.ndarray], axes: dict[UOp, int]) -> np.ndarray:
    """A read of a kernel-local array: on the grid axes of the local's own ranges its value
    is laid out row-major and gathered at the reader's offset; on the other axes (the loops
    around it) value and offset broadcast against each other. One gather, no copy of the
    value (a read per block of each kernel: moving the own axes last and flattening copied
    the whole array each time)."""
    dl = idx.src[0]
    own = [axes[r] for r in dl.src[1:]]
    sizes = [int(r.src[0].arg) for r in dl.src[1:]]
    shape = list(values[dl].shape)
    for a, n in zip(own, sizes):
        shape[a] = n
    value = np.broadcast_to(values[dl], shape)
    off = values[idx.src[1]]
    if any(off.shape[a] != 1 for a in own):
        raise KernelInterpError("a local array is read at its own ranges: " + repr(idx))
    # (a negative offset counts from the end, as numpy's gather does; past either end raises)
    at = np.unravel_index(np.where(off < 0, off + int(np.prod(sizes)), off), sizes or [1])
    if not own:  # (a local of no ranges: one element, read at every offset)
        return np.broadcast_to(value, np.broadcast_shapes(value.shape, off.shape)).copy()
    index = [at[own.index(a)] if a in own else 0 if n == 1 else
             np.arange(n).reshape([n if b == a else 1 for b in range(len(shape))])
             for a, n in enumerate(shape)]
    return value[tuple(index)]


def _gated(n: UOp, values: dict[UOp, np.ndarray], bufs: list[np.ndarray]) -> np.ndarray:
    return _read(bufs[n.src[0].src[0].arg], values[n.src[0].src[1]], values[n.src[1]],
                 values[n.src[2]]).astype(n.dtype.np, copy=False)


def _read(data: np.ndarray, off: np.ndarray, gate: np.ndarray, alt: np.ndarray) -> np.ndarray:
    """data[off] where `gate` holds, else `alt`: a read the gate turns off never touches
    memory (it gathers element 0, then is replaced)."""
    off, gate = np.broadcast_arrays(off, gate.astype(bool))
    read = data[np.where(gate, off, 0)] if data.size else np.zeros(off.shape, data.dtype)
    return np.where(gate, read, alt)


def _reduce(n: UOp, value: np.ndarray, axes: dict[UOp, int],
            window: dict[int, tuple[int, int]], wide: bool = False) -> np.ndarray:
    """REDUCE `n` of `value` over the block `window` marks. `wide`: a float16 sum is left in
    float32 (one run of a REDUCE split in runs, whose runs are added in float32 and rounded
    once, as the C kernel's float32 accumulator is: rounded per run, 4,000 runs of a
    65537-long sum were 4.5 off)."""
    red_axes = tuple(axes[r] for r in n.src[1:])
    shape = list(value.shape)
    for r in n.src[1:]:  # a value constant along a range still counts n times (of its run)
        lo, hi = window.get(axes[r], (0, int(r.src[0].arg)))
        shape[axes[r]] = hi - lo
    value = np.broadcast_to(value, shape)
    op: Ops = n.arg
    # in loop form, the accumulator's start (the op's identity, or a REDUCE_AXIS's own start:
    # a pick's -0.0); the update op(acc, v) above is then v, combined from it here
    acc = n.src[0].src[0] if n.src[0].src else None
    ident = acc.arg if acc is not None and acc.op is Ops.DEFINE_REG \
        else reduce_identity(op, n.dtype)
    if wide and n.dtype is dtypes.float16 and op is Ops.ADD:  # (a split REDUCE: no fixed order)
        return np.add.reduce(value, axis=red_axes, keepdims=True, dtype=np.float32,
                             initial=np.float32(ident))
    kinds = [r.arg[1] if isinstance(r.arg, tuple) else "" for r in n.src[1:]]
    if kinds == ["scan"]:  # a running accumulator along its STORE's loop: every prefix
        out = _scan_order(op, value, red_axes[0], ident)
    elif not (n.dtype.is_float and op in (Ops.ADD, Ops.MUL)) or not kinds:  # any order
        out = semantics.reduce(op, value, red_axes, ident)
    elif kinds[-1] in ("vector", "fill") and len(red_axes) == 1:  # (a "fill": the same steps)
        out = _vector_order(op, value, red_axes[0], ident)
    elif kinds[0] == "thread" and red_axes:
        out = _threaded_order(op, value, red_axes, ident, kinds[1:] == ["vector"])
    else:
        out = semantics.reduce(op, value, red_axes, ident)
    return out if out.dtype == n.dtype.np else out.astype(n.dtype.np)


# ---------------------------------------------------------------------- the optimizer's orders
# A float sum is the one value whose bits depend on how the loop runs (runtime/semantics.py's
# reduction contract). Where the kernel optimizer (rules/opt.rules) fixed an order, the
# interpreter sums in that order, so it can be compared with the C kernel bit for bit; a plain
# reduce is numpy's (pairwise), within the contract of any order.
def _fold(op: Ops, acc: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """acc op x[0] op x[1] ... along `axis`, strictly left to right (ufunc.accumulate: no
    pairwise summation)."""
    ufunc = np.add if op is Ops.ADD else np.multiply
    x = np.moveaxis(x, axis, 0)
    if x.shape[0] == 0:
        return np.broadcast_to(acc, x.shape[1:]).copy()
    both = np.concatenate([np.broadcast_to(acc, x.shape[1:])[None].astype(x.dtype), x])
    return ufunc.accumulate(both, axis=0)[-1]


def _scan_order(op: Ops, x: np.ndarray, axis: int, start: object) -> np.ndarray:
    """A reduce over a "scan" range (rules/scan_helpers.py), as the C backend runs it: along
    `axis`, the i-th value is start op x[0] op ... op x[i], the steps strictly in order (a
    sum's and a product's: ufunc.accumulate); a MAX or MIN, exact in any order, by doubling
    strides (semantics.alu's NaN and signed-zero rules, log n whole-array steps)."""
    x = np.moveaxis(np.asarray(x), axis, 0)
    first = np.full((1, *x.shape[1:]), start, dtype=x.dtype)
    if op in (Ops.ADD, Ops.MUL):
        ufunc = np.add if op is Ops.ADD else np.multiply
        out = ufunc.accumulate(np.concatenate([first, x]), axis=0, dtype=x.dtype)[1:]
    else:
        out = np.concatenate([first, x])
        step = 1
        while step < out.shape[0]:
            out = np.concatenate([out[:step], semantics.alu(op, x.dtype, out[:-step],
                                                            out[step:])])
            step *= 2
        out = out[1:]
    return np.moveaxis(out, 0, axis)


def _vector_order(op: Ops, x: np.ndarray, axis: int, ident: object) -> np.ndarray:
    """A reduce whose range is marked "vector" (opt_helpers.vector_reduce), as the C backend
    runs it (render.py's `_vector_reduce`): REDUCE_VECTORS vectors of VECTOR_LANES partial
    results, vector u taking the values u*LANES.. of each block of VECTORS*LANES; then the
    whole vectors left, one into each of the first vectors; the values left (fewer than a
    vector) into the scalar result, in order; then the vectors into the first, and its lanes
    into the result, in order."""
    from rulegrad.rules.opt_helpers import REDUCE_VECTORS
    from rulegrad.runtime.target import vector_lanes

    x = np.moveaxis(np.asarray(x), axis, -1)
    VECTOR_LANES = vector_lanes(x.dtype.itemsize)  # noqa: N806 (8 float32 lanes, 4 float64)
    n, lead = x.shape[-1], x.shape[:-1]
    block = REDUCE_VECTORS * VECTOR_LANES
    main, whole = n - n % block, n - n % VECTOR_LANES
    ident_arr = np.full((), ident, dtype=x.dtype)
    vec = np.full(lead + (REDUCE_VECTORS, VECTOR_LANES), ident_arr, dtype=x.dtype)
    if main:
        blocks = x[..., :main].reshape(lead + (main // block, REDUCE_VECTORS, VECTOR_LANES))
        vec = _fold(op, vec, blocks, len(lead))
    for u in range((whole - main) // VECTOR_LANES):
        lo = main + u * VECTOR_LANES
        vec[..., u, :] = _fold(op, vec[..., u, :], x[..., None, lo:lo + VECTOR_LANES], -2)
    acc = _fold(op, np.full(lead, ident_arr), x[..., whole:], -1)
    first = _fold(op, vec[..., 0, :], vec[..., 1:, :], -2)
    acc = _fold(op, acc, first, -1)
    return np.expand_dims(acc, axis)


def exact_order(ast: UOp) -> bool:
    """Whether every float sum of this (optimized) kernel is summed here in the order its C
    kernel sums it: along a "vector" range or a "thread" range alone, a "thread" range over
    a "vector" one, or a packed chain of fused multiply-adds. (A plain reduce loop is printed
    with `omp simd reduction`, whose order is gcc's.)"""
    chained: set[UOp] = set()
    for st in ast.src:
        chained |= _fused_chains(st) if st.op is Ops.STORE else set()
    for n in toposort(ast):
        if n.op is not Ops.REDUCE or n.arg not in (Ops.ADD, Ops.MUL) or not n.dtype.is_float:
            continue
        kinds = tuple(r.arg[1] if isinstance(r.arg, tuple) else "" for r in n.src[1:])
        # (a "thread" range over "vector" blocks: opt.rules' split_reduce, `_threaded_order`)
        if n not in chained and kinds not in (("vector",), ("fill",), ("thread",), ("scan",),
                                              ("thread", "vector")):
            return False
    return True


def _fused_chains(st: UOp) -> set[UOp]:
    """The reduces of a STORE the packing action took (a `Pack` in its arg) that the C backend
    sums over k in order, each step one fused multiply-add (runtime/semantics.py's FMA
    contract): float32 sums of products over one range, on a CPU with FMA."""
    from rulegrad.rules.pack_helpers import Pack, operands

    if not isinstance(st.arg, Pack) or "fma" not in cpu().flags:
        return set()
    return {n for n in toposort(st.src[1]) if n.op is Ops.REDUCE and len(n.src) >= 2
            and n.dtype.np == np.float32 and operands(n) is not None}


def _fused_chain(n: UOp, values: dict[UOp, np.ndarray], axes: dict[UOp, int]) -> np.ndarray:
    """acc = fma(x_k, y_k, acc) from acc = 0 (float32), k over the reduce's ranges in
    order, the last fastest."""
    update = n.src[0]
    x, y = update.src[1].src
    ks = [axes[r] for r in n.src[1:]]
    shape = list(np.broadcast_shapes(values[x].shape, values[y].shape))
    for r in n.src[1:]:
        shape[axes[r]] = int(r.src[0].arg)
    front = list(range(len(ks)))
    xs = np.moveaxis(np.broadcast_to(values[x], shape), ks, front)
    ys = np.moveaxis(np.broadcast_to(values[y], shape), ks, front)
    rest = xs.shape[len(ks):]
    acc = np.zeros(rest, np.float32)
    for xk, yk in zip(xs.reshape((-1, *rest)), ys.reshape((-1, *rest))):
        acc = _fma32(xk, yk, acc)
    return np.expand_dims(acc, tuple(sorted(ks)))


def _fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once to float32: the product is exact in float64 and the sum's
    rounding error exact by TwoSum; rounding that float64 sum to float32 rounds twice only
    when it lands on a float32 midpoint, where the error's sign says which side is right."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    side = np.where(s > r64, np.float32(np.inf), np.float32(-np.inf))
    other = np.nextafter(r, side)
    tie = (s == (r64 + other.astype(np.float64)) / 2) & (err != 0) & np.isfinite(s)
    fix = np.where(err > 0, np.maximum(r, other), np.minimum(r, other))
    return np.where(tie, fix, r)


def _threaded_order(op: Ops, x: np.ndarray, axes: tuple[int, ...], ident: object,
                    vectors: bool = False) -> np.ndarray:
    """A reduce whose outermost range is marked "thread" (thread_helpers.threaded): each of
    its iterations reduces the inner ranges into a value of its own, and the values are
    combined in the loop's order at the end (render.py's `_launched`). The inner sums' own
    order is the printer's: with `vectors` (one inner range, marked "vector": opt.rules'
    split_reduce's blocks) each iteration's vector accumulators (`_vector_order`), else
    `omp simd`'s, numpy's here, within the contract."""
    if vectors:
        inner = _vector_order(op, x, axes[1], ident)
    else:
        inner = semantics.reduce(op, x, axes[1:], ident) if axes[1:] else x
    acc = np.full((), ident, dtype=x.dtype)
    out = _fold(op, acc, np.asarray(inner), axes[0])
    return np.expand_dims(out, axes[0])
