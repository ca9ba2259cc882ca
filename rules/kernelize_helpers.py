"""Python helpers of the kernelize scheduler's rules (`kernelize.rules`).

In: the captures of a rule that matched (UOps, and the pass's `KernelizeContext`). Out: the
replacement UOp, or None for "no rewrite". What each pass does is said by its rules and by
runtime/kernelize.py; a helper is here only because it walks the graph (the grouper's children
walk, the buffers feeding an op) or does a view's index arithmetic.

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
from dataclasses import dataclass, field

from rulegrad.rules.rangeify_helpers import (
    FIRST_RANGE,
    idx_const,
    index,
)
from rulegrad.runtime.buffer import Buffer
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.env import env_flag, env_int
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.uop import UOp, toposort
from rulegrad.runtime.view import ShapeTracker, flatten, unflatten

# nodes that are memory already (or need none): never realized by a view above them
ALWAYS_CONTIGUOUS = frozenset({Ops.CONTIGUOUS, Ops.ASSIGN, Ops.COPY, Ops.BUFFER, Ops.BUFFER_VIEW,
                               Ops.CONST, Ops.BIND, Ops.DEVICE, Ops.DEFINE_VAR, Ops.REALIZE})
# ops with op(0, ..., 0) == 0: a masked (padded) read through them is still 0 where masked.
# Everything else (log, exp, reciprocal, division, ==, ...) is unsafe before a pad.
PAD_SAFE = frozenset({Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.MAX, Ops.MIN, Ops.AND, Ops.OR,
                      Ops.XOR, Ops.CMPLT, Ops.CMPNE, Ops.WHERE, Ops.CAST, Ops.SQRT, Ops.TRUNC,
                      Ops.SHL, Ops.SHR, Ops.MULACC})
# the tag of a REDUCE_AXIS that Tensor.fuse() (or FUSE_ARANGE) pushes into its reader
FUSED = "fuse"
REALIZED_MARK = "realized"


@dataclass(frozen=True)
class Flags:
    """The environment's kernelize switches, read once per schedule (so a recorded pass context
    replays the same decisions)."""

    max_kernel_buffers: int = 0
    dont_realize_expand: bool = False
    dont_group_reduces: bool = False
    fuse_arange: bool = False

    @staticmethod
    def from_env() -> Flags:
        return Flags(env_int("MAX_KERNEL_BUFFERS", 0), env_flag("DONT_REALIZE_EXPAND"),
                     env_flag("DONT_GROUP_REDUCES"), env_flag("FUSE_ARANGE"))


@dataclass
class KernelizeContext:
    """What the passes share: the switches, the realize decisions, fresh range ids."""

    flags: Flags = field(default_factory=Flags)
    realizes: dict[UOp, None] = field(default_factory=dict)
    order: list[UOp] = field(default_factory=list)   # REALIZE arg i -> the node realized
    next_range: int = FIRST_RANGE

    def new_range(self, size: int, kind: str) -> UOp:
        if size == 1:
            return idx_const(0)
        r = UOp.range(size, self.next_range, kind)
        self.next_range += 1
        return r


# ====================================================================== 0. fuse markers
def stops_fuse(x: UOp) -> bool:
    """FUSE ends at memory and at what makes memory (CONTIGUOUS, COPY, ASSIGN, constants)."""
    return x.op not in GroupOp.Elementwise | GroupOp.Movement | {
        Ops.REDUCE_AXIS, Ops.DETACH, Ops.CONTIGUOUS_BACKWARD, Ops.FUSE}


def fuse_srcs(x: UOp) -> UOp:
    """FUSE pushed to every source of x (it travels down to the reductions it marks)."""
    return x.replace(src=tuple(s.f(Ops.FUSE) for s in x.src))


def fuse_reduce(r: UOp) -> UOp:
    """A reduction under FUSE: marked, so the grouper never realizes it for its readers."""
    return r.replace(src=(r.src[0].f(Ops.FUSE),), tag=FUSED)


def is_arange(ctx: KernelizeContext, r: UOp) -> bool:
    """FUSE_ARANGE: a reduction of constants only (an arange's cumulative sum) is fused into its
    reader instead of being a kernel of its own."""
    if not ctx.flags.fuse_arange or r.tag is not None:
        return False
    return all(n.op is not Ops.BUFFER for n in toposort(r.src[0]))


# ====================================================================== 2. merge views
def view_of(m: UOp, x: UOp) -> UOp:
    """A movement op over x -> x read through a view (x's own view, when x is one)."""
    if x.op is Ops.VIEW:
        return UOp(Ops.VIEW, m.dtype, x.src, x.arg.apply(m.op.name, m.arg))
    return UOp(Ops.VIEW, m.dtype, (x,), ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg))


def view_view(inner: UOp, outer: UOp) -> UOp:
    return UOp(Ops.VIEW, outer.dtype, inner.src, inner.arg + outer.arg)


# ====================================================================== 3. realize decisions
def realize(ctx: KernelizeContext, x: UOp) -> None:
    ctx.realizes[x] = None


def realize_roots(ctx: KernelizeContext, sink: UOp) -> None:
    """Every root gets a buffer, except one that already is memory in row-major order."""
    for x in sink.src:
        if x.op is Ops.BUFFER or (x.op is Ops.VIEW and x.src[0].op is Ops.BUFFER
                                  and x.arg.is_contiguous and x.size == x.src[0].size):
            continue
        # a reshape of a value: the value is realized, and the root reads its buffer reshaped
        base = _reshaped_base(x)
        ctx.realizes[x if base is None else base] = None


def _reshaped_base(x: UOp) -> UOp | None:
    if x.op is Ops.VIEW and x.arg.is_contiguous and x.size == x.src[0].size and \
            x.src[0].op not in ALWAYS_CONTIGUOUS:
        return x.src[0]
    return None


def can_pad(ctx: KernelizeContext, x: UOp) -> bool:
    """No op under x (down to memory) turns a padded 0 into something else."""
    for n in toposort(x, stop=lambda n: n in ctx.realizes and n is not x):
        if n.op in GroupOp.Elementwise and n.op not in PAD_SAFE:
            return False
    return True


def is_computed(x: UOp) -> bool:
    """x is a value some kernel computes (not memory, a constant or a marker of memory)."""
    return x.op not in ALWAYS_CONTIGUOUS


def realize_before_view(ctx: KernelizeContext, v: UOp, x: UOp) -> None:
    """tinygrad's realize_before_view: x is realized before a masked view when an op in it is
    unsafe to pad (log(0) is not 0), and before an expanding view (else each of its elements
    would be computed once per copy), unless DONT_REALIZE_EXPAND. A fused reduction stays."""
    st: ShapeTracker = v.arg
    if x.op is Ops.REDUCE_AXIS and x.tag == FUSED:
        return
    if st.masked and not can_pad(ctx, x):
        ctx.realizes[x] = None
        return
    if len(st.views) == 1 and (m := st.views[0].mask) is not None and \
            x.size >= math.prod(e - b for b, e in m):
        return  # a plain pad that reads each element at most once
    if x.size < st.size and not ctx.flags.dont_realize_expand:
        ctx.realizes[x] = None


def _edge_view(s: UOp) -> tuple[UOp, ShapeTracker]:
    """(the node a source reads, the view it reads it through)."""
    if s.op is Ops.VIEW:
        return s.src[0], s.arg
    return s, ShapeTracker.from_shape(s.shape or ())


def group_realizes(ctx: KernelizeContext, sink: UOp) -> None:
    """The grouper: each reduction joins the kernel of the one realized node its value flows
    into, when it flows there only through elementwise ops and contiguous views, meets no other
    reduction on the way, and that kernel has no reduction yet. Otherwise it is realized.
    (DONT_GROUP_REDUCES: every reduction is realized.)"""
    nodes = toposort(sink)
    children: dict[UOp, dict[UOp, None]] = {}
    for u in nodes:
        if u.op in (Ops.VIEW, Ops.SINK):
            continue
        for s in u.src:
            children.setdefault(_edge_view(s)[0], {})[u] = None
    reduce_for: dict[UOp, UOp] = {}
    for r in nodes:
        if r.op is not Ops.REDUCE_AXIS or r in ctx.realizes or r.tag == FUSED:
            continue
        if ctx.flags.dont_group_reduces:
            ctx.realizes[r] = None
            continue
        group = _walk_group(ctx, r, children, reduce_for)
        forced = r in group or len(group) != 1 or any(g.op is Ops.ASSIGN for g in group)
        if forced:
            ctx.realizes[r] = None
            reduce_for[r] = r
        else:
            reduce_for.update((g, r) for g in group)


def _walk_group(ctx: KernelizeContext, r: UOp, children: dict[UOp, dict[UOp, None]],
                reduce_for: dict[UOp, UOp]) -> dict[UOp, None]:
    """The realized nodes r's value reaches, with r itself among them when it cannot fuse."""
    group: dict[UOp, None] = {}
    seen: set[tuple[UOp, ShapeTracker]] = set()
    stack = [(r, ShapeTracker.from_shape(r.shape))]
    while stack:
        tr, st = stack.pop()
        if (tr, st) in seen:
            continue
        seen.add((tr, st))
        if tr in ctx.realizes and tr is not r:
            # only a contiguous read of the whole reduction, into a kernel without one yet
            if not st.is_contiguous or st.size != r.size or tr in reduce_for:
                group[r] = None
            group[tr] = None
            continue
        for nxt in children.get(tr, {}):
            if nxt.op is Ops.REDUCE_AXIS and nxt.tag != FUSED:  # one reduction per kernel
                group[r] = None
                return group
            views = {_edge_view(s)[1] for s in nxt.src if _edge_view(s)[0] is tr}
            if len(views) > 1:  # read at two places: not one contiguous read
                group[r] = None
                return group
            (v,) = views
            stack.append((nxt, st + v if not v.is_contiguous or v.shape != st.shape else st))
    return group


# ====================================================================== 4. add_contiguous
def to_wrap(ctx: KernelizeContext, x: UOp) -> bool:
    return x in ctx.realizes and x.tag != REALIZED_MARK


def realize_wrap(ctx: KernelizeContext, x: UOp) -> UOp:
    """x -> REALIZE(x, arg=i); x is marked so the bottom-up pass does not wrap it twice."""
    ctx.order.append(x)
    return UOp(Ops.REALIZE, x.dtype, (x.replace(tag=REALIZED_MARK),), len(ctx.order) - 1)


# ====================================================================== 5. finalize: limit_bufs
def limit_bufs(ctx: KernelizeContext, root: UOp) -> UOp | None:
    """MAX_KERNEL_BUFFERS: when the buffers flowing into `root`, plus the output, exceed a
    kernel's limit, its sources that are not memory get buffers of their own (sources first, so
    each kernel below already fits)."""
    limit = ctx.flags.max_kernel_buffers
    if not limit:
        return None
    bufs: dict[UOp, None] = {}

    def is_input(n: UOp) -> bool:  # memory ends the walk (and is counted, once)
        if n.op in (Ops.BUFFER, Ops.REALIZE, Ops.ASSIGN):
            bufs[n] = None
            return True
        return False

    toposort(root, stop=is_input)
    if len(bufs) + 1 <= limit:  # its inputs and the output fit (tinygrad splits one earlier)
        return None
    src = tuple(s if _edge_view(s)[0] in bufs or _edge_view(s)[0].op in ALWAYS_CONTIGUOUS
                or not _reads_memory(s) else UOp(Ops.REALIZE, s.dtype, (s,), None)
                for s in root.src)
    return None if src == root.src else root.replace(src=src)


def _reads_memory(s: UOp) -> bool:
    return any(n.op in (Ops.BUFFER, Ops.REALIZE, Ops.ASSIGN) for n in toposort(s))


# ====================================================================== 6. create_kernels
def create_kernel(ctx: KernelizeContext, r: UOp) -> UOp:
    """REALIZE(x) -> its kernel: a STORE of x over loops of its shape into a new buffer (an
    ASSIGN's into its target), the value's reads built by `create_ast`; then `to_kernel`.
    Readers get `VIEW(ASSIGN(BUFFER, KERNEL))`: the buffer once this kernel has written it."""
    from rulegrad.runtime.kernelize import ast_passes

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


def split_store(st: UOp) -> UOp:
    """One STORE is one kernel, made by kernel.rules' `split_store` as rangeify's are."""
    from rulegrad.rules import matcher

    a = matcher("kernel", "split_kernels").rewrite(st)
    assert a is not None and a.op is Ops.ASSIGN
    return a


# ---------------------------------------------------------------------- create_ast
def push_index(x: UOp, idx: UOp) -> UOp:
    """INDEX of an elementwise op -> the op of its INDEXed sources (same indices)."""
    return x.replace(src=tuple(index(s, *idx.src[1:], arg=idx.arg) for s in x.src))


def push_index_first(x: UOp, idx: UOp) -> UOp:
    """INDEX of COPY/CONTIGUOUS: index the data source, keep the others."""
    return x.replace(src=(index(x.src[0], *idx.src[1:], arg=idx.arg),) + x.src[1:])


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
    if not new:  # axes of size 1: a float sum is still 0.0 + x (of one -0.0: +0.0, as numpy)
        return value + 0.0 if op is Ops.ADD and red.dtype.is_float else value
    return UOp(Ops.REDUCE, red.dtype, (value, *new), arg=op)


def becomes(ctx: KernelizeContext, written: dict[int, UOp], x: UOp) -> UOp | None:
    """The node a realized tensor node reads afterwards: its buffer, shaped like it
    (`written`: REALIZE number -> the BUFFER its kernel wrote)."""
    shape = x.shape
    if x.op is Ops.BUFFER:
        return x
    if x.op is Ops.VIEW and x.src[0].op is Ops.BUFFER and x.arg.is_contiguous and \
            x.size == x.src[0].size:
        return x.src[0].reshape(shape)  # a root that already was its buffer, reshaped
    base = _reshaped_base(x)
    x = x if base is None else base
    for i, y in enumerate(ctx.order):
        if y is x and i in written:
            return written[i].reshape(shape)
    return None
