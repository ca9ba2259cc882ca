"""Python helpers of the kernelize scheduler's rules (`kernelize.rules`).

In: the captures of a rule that matched (UOps, and the pass's `KernelizeContext`). Out: the
replacement UOp, or None for "no rewrite"; or, for the analyses, an answer about nodes. What
each pass does and decides is said by its rules (and its context, declared there); a function is
here only because it walks the graph (a node's readers, where a reduction's value flows, the
buffers feeding an op) or does a view's or a kernel's index arithmetic.

Conventions of the kernelize graph:

- Movement ops are merged into `VIEW(base, arg=ShapeTracker)` (runtime/view.py): the base read
  through a stack of views. A realized node is `REALIZE(x, arg=i)` until its kernel exists, then
  `VIEW(ASSIGN(BUFFER, KERNEL), contiguous)`: its buffer, once the kernel has written it.
- Kernel values are built like rangeify's: `INDEX(x, i0, ..., in)` is x at index expressions; the
  `create_ast` rules push it down to memory reads `INDEX(BUFFER, flat)`, where a view's masked
  offset is `WHERE(valid, off, INVALID)`, the form `kernel.rules`' `to_kernel` takes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rulegrad.rules.rangeify_helpers import (
    FIRST_RANGE,
    idx_const,
    index,
    reduce_at,
)
from rulegrad.runtime.buffer import Buffer
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import GroupOp, Ops, reduce_start
from rulegrad.runtime.rewrite import graph_rewrite
from rulegrad.runtime.uop import UOp, toposort
from rulegrad.runtime.view import ShapeTracker, flatten, unflatten

if TYPE_CHECKING:  # declared in kernelize.rules
    from rulegrad.rules.generated.kernelize import KernelizeContext

# nodes that are memory already (or need none): never realized by a view above them
ALWAYS_CONTIGUOUS = frozenset({Ops.CONTIGUOUS, Ops.ASSIGN, Ops.COPY, Ops.BUFFER, Ops.BUFFER_VIEW,
                               Ops.CONST, Ops.BIND, Ops.DEVICE, Ops.DEFINE_VAR, Ops.REALIZE})
# ops with op(0, ..., 0) == 0: a masked (padded) read through them is still 0 where masked.
# Everything else (log, exp, reciprocal, division, ==, ...) is unsafe before a pad.
PAD_SAFE = frozenset({Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.MAX, Ops.MIN, Ops.AND, Ops.OR,
                      Ops.XOR, Ops.CMPLT, Ops.CMPNE, Ops.WHERE, Ops.CAST, Ops.SQRT, Ops.TRUNC,
                      Ops.SHL, Ops.SHR, Ops.MULACC})
# the tag of a REDUCE_AXIS that Tensor.fuse() (or FUSE_ARANGE) pushes into its reader (the rules
# read it too)
FUSED = "fuse"


# ====================================================================== analyses
def stops_fuse(x: UOp) -> bool:
    """FUSE ends at memory and at what makes memory (CONTIGUOUS, COPY, ASSIGN, constants)."""
    return x.op not in GroupOp.Elementwise | GroupOp.Movement | {
        Ops.REDUCE_AXIS, Ops.DETACH, Ops.CONTIGUOUS_BACKWARD, Ops.FUSE}


def constants_only(x: UOp) -> bool:
    """x reads no buffer (an arange's cumulative sum, which FUSE_ARANGE fuses)."""
    return all(n.op is not Ops.BUFFER for n in toposort(x))


def is_computed(x: UOp) -> bool:
    """x is a value some kernel computes (not memory, a constant or a marker of memory)."""
    return x.op not in ALWAYS_CONTIGUOUS


def row_major_buffer(x: UOp) -> bool:
    """x is memory in row-major order already: a BUFFER, or all of one reshaped."""
    return x.op is Ops.BUFFER or (x.op is Ops.VIEW and x.src[0].op is Ops.BUFFER
                                  and x.arg.is_contiguous and x.size == x.src[0].size)


def root_value(x: UOp) -> UOp:
    """The node a root's buffer holds: the value, when the root is a reshape of a value (the
    root then reads the buffer reshaped)."""
    if x.op is Ops.VIEW and x.arg.is_contiguous and x.size == x.src[0].size and \
            x.src[0].op not in ALWAYS_CONTIGUOUS:
        return x.src[0]
    return x


def plain_pad(v: UOp, x: UOp) -> bool:
    """v is one masked view that reads each element of x at most once (no expand)."""
    views = v.arg.views
    return len(views) == 1 and (m := views[0].mask) is not None and \
        x.size >= math.prod(e - b for b, e in m)


# ====================================================================== walks
def can_pad(realizes: dict[UOp, None], x: UOp) -> bool:
    """No op under x (down to memory: a node in `realizes` or below) turns a padded 0 into
    something else."""
    for n in toposort(x, stop=lambda n: n in realizes and n is not x):
        if n.op in GroupOp.Elementwise and n.op not in PAD_SAFE:
            return False
    return True


def _edge_view(s: UOp) -> tuple[UOp, ShapeTracker]:
    """(the node a source reads, the view it reads it through)."""
    if s.op is Ops.VIEW:
        return s.src[0], s.arg
    return s, ShapeTracker.from_shape(s.shape or ())


def children_of(sink: UOp) -> dict[UOp, dict[UOp, None]]:
    """Each node -> the nodes that read it (through a view or not), in graph order."""
    children: dict[UOp, dict[UOp, None]] = {}
    for u in toposort(sink):
        if u.op in (Ops.VIEW, Ops.SINK):
            continue
        for s in u.src:
            children.setdefault(_edge_view(s)[0], {})[u] = None
    return children


def kernel_reads(children: dict[UOp, dict[UOp, None]], realizes: dict[UOp, None],
                 r: UOp) -> dict[UOp, bool] | None:
    """Where reduction r's value flows, through its readers down to the first realized nodes:
    each realized node it reaches -> whether every read of it there is a contiguous read of the
    whole of r. None when the flow meets another (unfused) reduction, or a node reads the value
    through two different views (neither fits in one kernel with r)."""
    reads: dict[UOp, bool] = {}
    seen: set[tuple[UOp, ShapeTracker]] = set()
    stack = [(r, ShapeTracker.from_shape(r.shape))]
    while stack:
        tr, st = stack.pop()
        if (tr, st) in seen:
            continue
        seen.add((tr, st))
        if tr in realizes and tr is not r:
            reads[tr] = reads.get(tr, True) and st.is_contiguous and st.size == r.size
            continue
        for nxt in children.get(tr, {}):
            if nxt.op is Ops.REDUCE_AXIS and nxt.tag != FUSED:  # one reduction per kernel
                return None
            views = {_edge_view(s)[1] for s in nxt.src if _edge_view(s)[0] is tr}
            if len(views) > 1:  # read at two places: not one contiguous read
                return None
            (v,) = views
            stack.append((nxt, st + v if not v.is_contiguous or v.shape != st.shape else st))
    return reads


# ====================================================================== 6. create_kernels
def create_kernel(ctx: KernelizeContext, r: UOp) -> UOp:
    """REALIZE(x) -> its kernel: a STORE of x over loops of its shape into a new buffer (an
    ASSIGN's into its target), the value's reads built by `create_ast`; then `to_kernel`.
    Readers get `VIEW(ASSIGN(BUFFER, KERNEL))`: the buffer once this kernel has written it."""
    x = r.src[0]
    rngs = tuple(ctx.new_range(s, "loop") for s in x.shape)
    if x.op is Ops.ASSIGN:
        target = ast_passes(index(x.src[0], *rngs), ctx)
        value = ast_passes(index(x.src[1], *rngs), ctx)
        buf = target.src[0]
    else:
        buf = UOp(Ops.BUFFER, x.dtype, (), Buffer(math.prod(x.shape), x.dtype))
        target = UOp(Ops.INDEX, x.dtype, (buf, flatten(rngs, x.shape, idx_const(0))))
        value = ast_passes(index(x, *rngs), ctx)
    store = UOp(Ops.STORE, dtypes.void, (target, value, *rngs))
    a = split_store(store)
    # readers index the buffer with a flat offset: the placeholder `p` stands for it
    p = UOp.range(max(buf.arg.size, 1), FIRST_RANGE - 1)
    # the tag keeps the REALIZE's number: `becomes` finds the buffer of tensor node i by it
    a = a.replace(arg=(p, (p,)), tag=None if r.arg is None else (r.arg,))
    return UOp(Ops.VIEW, x.dtype, (a,), ShapeTracker.from_shape(x.shape))


def ast_passes(value: UOp, ctx: KernelizeContext) -> UOp:
    """One kernel's value, read down to memory by kernelize.rules' `create_ast`."""
    from rulegrad.rules import matcher

    return graph_rewrite(value, matcher("kernelize", "create_ast"), ctx=ctx, bottom_up=True,
                         name="create_ast")


def split_store(st: UOp) -> UOp:
    """One STORE is one kernel, made by kernel.rules' `split_store` as rangeify's are."""
    from rulegrad.rules import matcher

    a = matcher("kernel", "split_kernels").rewrite(st)
    assert a is not None and a.op is Ops.ASSIGN
    return a


# ---------------------------------------------------------------------- create_ast
def index_view(v: UOp, idx: UOp) -> UOp:
    """x read through a view at idx: memory gets the view's flat offset (masked: WHERE(valid,
    off, INVALID)); a computed base gets that offset unflattened into its own indices, and is 0
    where the mask is off."""
    base, st = v.src[0], v.arg
    off, valid = st.index(list(idx.src[1:]))
    if isinstance(off, int):
        off = idx_const(off)
    if base.op is Ops.CONST:
        return base if valid is None else valid.where(base, UOp.const(base.dtype, 0))
    invalid = UOp(Ops.INVALID, dtypes.index)
    if base.op is Ops.BUFFER or (base.op is Ops.ASSIGN and base.src[1].op is Ops.KERNEL):
        flat = off if valid is None else valid.where(off, invalid)
        return UOp(Ops.INDEX, base.dtype, (base, flat))
    idxs = [idx_const(i) if isinstance(i, int) else i for i in unflatten(off, base.shape)]
    if valid is None:
        return index(base, *idxs)
    inner = index(base, *[valid.where(i, invalid) for i in idxs])
    return valid.where(inner, UOp.const(base.dtype, 0))


def index_reduce(ctx: KernelizeContext, red: UOp, idx: UOp) -> UOp:
    """A reduction at idx: REDUCE over fresh reduce ranges of its source at idx, with the
    reduced axes replaced by those ranges."""
    op, axes = red.arg[0], red.arg[1]
    src_shape = red.src[0].shape
    new: list[UOp] = []
    rngs = list(idx.src[1:])
    for a in axes:
        rng = ctx.new_range(src_shape[a], "reduce")
        rngs[a] = rng
        if rng.op is Ops.RANGE:
            new.append(rng)
    value = index(red.src[0], *rngs).cast(red.dtype)
    return reduce_at(value, new, op, reduce_start(red.arg))
