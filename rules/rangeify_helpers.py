"""Python helpers of the rangeify scheduler's rules (`rangeify.rules`, `kernel.rules`).

In: the captures of a rule that matched (UOps, and the pass's context object). Out: the
replacement UOp, or None for "no rewrite". Each helper is here only because its rewrite needs a
loop over a node's axes or sources (reshape's index arithmetic, the children reconciliation, the
substitution of a buffer's ranges); *when* it runs is said by the rule that calls it.

Conventions of the rangeified graph (see runtime/schedule.py for the whole pipeline):

- `INDEX(x, i0, ..., in)` at tensor level: the element of the n-d tensor `x` at the index
  expressions `i*` (dtype `index`). `INDEX(BUFFER, off)` reads a flat buffer.
- A loop variable is `RANGE(size, arg=(id, "loop"|"reduce"))`; an axis of size 1 gets the
  constant 0 instead of a range, so it never becomes a loop.
- An index that is only meaningful under a condition (inside a PAD) is `WHERE(valid, i, INVALID)`;
  `split_valid` pulls the conditions out again when a kernel's loads are built.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rulegrad.rules.symbolic_helpers import wrap
from rulegrad.runtime.buffer import Buffer
from rulegrad.runtime.device import DEFAULT, device_of
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import GroupOp, Ops, reduce_identity
from rulegrad.runtime.uop import UOp, toposort

# the nodes that already are memory (or need none): never wrapped in a REALIZE of their own
ALWAYS_CONTIGUOUS = frozenset({Ops.CONTIGUOUS, Ops.ASSIGN, Ops.COPY, Ops.BUFFER, Ops.BUFFER_VIEW,
                               Ops.CONST, Ops.BIND, Ops.DEVICE, Ops.DEFINE_VAR})
# the tag that marks a node already wrapped by `add_realize` (removed right after that pass)
REALIZED_MARK = "realized"
# the scheduler's ranges are numbered from here, a kernel's own from 0: a renumbered range can
# never be mistaken for one still to renumber (kernel.rules' `renumber` tests r.arg[0])
FIRST_RANGE = 1 << 30


def idx_const(v: int) -> UOp:
    return UOp.const(dtypes.index, v)


def index(x: UOp, *idxs: UOp, arg: Any = None) -> UOp:
    """The tensor-level INDEX node: `x` read at `idxs` (one per axis of x). Its arg, when set,
    holds the ranges an EXPAND above it dropped: x's value is reused across those loops."""
    return UOp(Ops.INDEX, x.dtype, (x, *idxs), arg)


def substitute(root: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """root with the nodes of `mapping` replaced (iterative; replacements are not revisited)."""
    if not mapping:
        return root
    if root in mapping:
        return mapping[root]
    new: dict[UOp, UOp] = {}
    for node in toposort(root, stop=lambda n: n in mapping):
        src = tuple(mapping[s] if s in mapping else new.get(s, s) for s in node.src)
        new[node] = node if src == node.src else node.replace(src=src)
    return new[root]


def ranges_in(*exprs: UOp) -> list[UOp]:
    """The RANGE nodes an index expression depends on, in a stable order."""
    out: dict[UOp, None] = {}
    for e in exprs:
        for n in toposort(e):
            if n.op is Ops.RANGE:
                out[n] = None
    return list(out)


# ====================================================================== 0. assign hazards
# ops after which element i of a node is element i of its sources (row-major): a value built
# only from these reads the target exactly where the ASSIGN writes
_SAME_INDEX = GroupOp.Elementwise | GroupOp.Meta | {Ops.RESHAPE, Ops.CONTIGUOUS}


def reads_target_moved(target: UOp, value: UOp) -> bool:
    """Does `value` read the buffer under `target` at other elements than the one an ASSIGN
    writes (through a flip, a shift, a transpose, a broadcast, a reduction ...)? Then one loop
    that reads and writes that buffer would read elements it already overwrote. Conservative:
    any op other than elementwise ones and reshapes on the way to the buffer counts."""
    buf = target.base
    reads: set[UOp] = set()  # nodes whose value depends on buf
    moved: set[UOp] = set()  # ... at some other element than their own
    for n in toposort(value):
        if n is buf:
            reads.add(n)
            continue
        if any(s in moved for s in n.src):
            moved.add(n)
        if any(s in reads for s in n.src):
            reads.add(n)
            if n.op not in _SAME_INDEX:
                moved.add(n)
    return value in moved


# ====================================================================== 1. realize marking
@dataclass
class RealizeContext:
    """Which tensor nodes must become buffers (`do_realize`), in discovery order."""

    realize: dict[UOp, None] = field(default_factory=dict)
    order: list[UOp] = field(default_factory=list)  # REALIZE tag i -> the realized node


def realize_sink_srcs(ctx: RealizeContext, sink: UOp) -> None:
    """Every root of the schedule is materialised (roots that are buffers already are not)."""
    for x in sink.src:
        if x.op is not Ops.BUFFER and not (x.op is Ops.RESHAPE and x.src[0].op is Ops.BUFFER):
            ctx.realize[x] = None


def realize_node(ctx: RealizeContext, x: UOp) -> None:
    ctx.realize[x] = None


def realize_copy_source(ctx: RealizeContext, c: UOp) -> None:
    """What a COPY copies is computed on its own device first (a view of a buffer or a
    constant needs no kernel: the copy reads it directly)."""
    if c.src[0].base.op not in (Ops.BUFFER, Ops.CONST):
        ctx.realize[c.src[0]] = None


def keep_copy_source(c: UOp, idx: UOp, b: UOp) -> UOp:
    """The buffer a COPY reads stays a buffer (the cost function would recompute a cheap one
    inside the copy, on the wrong device): its value is marked CONTIGUOUS (tinygrad's
    pre_bufferize)."""
    kept = b.replace(src=(b.src[0].f(Ops.CONTIGUOUS),) + b.src[1:])
    return c.replace(src=(idx.replace(src=(kept,) + idx.src[1:]),) + c.src[1:])


def realize_assign_value(ctx: RealizeContext, a: UOp) -> None:
    """An ASSIGN's value gets a buffer (the cleanups drop it again when recomputing is cheap)."""
    if a.src[1].op not in ALWAYS_CONTIGUOUS:
        ctx.realize[a.src[1]] = None


def wrap_realize(ctx: RealizeContext, x: UOp) -> UOp:
    """x -> REALIZE(x) tagged with x's number; x itself is marked so it is not wrapped twice."""
    ctx.order.append(x)
    return UOp(Ops.REALIZE, x.dtype, (x.replace(tag=REALIZED_MARK),), tag=(len(ctx.order) - 1,))


# ====================================================================== 2. children marking
@dataclass
class ChildrenContext:
    """The nodes with several consumers whose recomputation would be costly (reductions)."""

    children: dict[UOp, list[UOp]] | None = None


def extract_children(ctx: ChildrenContext, sink: UOp) -> None:
    """One walk over the graph: the consumers of each REDUCE_AXIS used more than once."""
    if ctx.children is not None:
        return None
    users: dict[UOp, list[UOp]] = {}
    for n in toposort(sink):
        if n.op is Ops.SINK:
            continue
        for s in dict.fromkeys(n.src):
            if s.op is Ops.REDUCE_AXIS:
                users.setdefault(s, []).append(n)
    ctx.children = {k: v for k, v in users.items() if len(v) > 1}
    return None


def has_marked_child(ctx: ChildrenContext, x: UOp) -> bool:
    return bool(ctx.children) and any(s in ctx.children for s in x.src)


def mark_children(ctx: ChildrenContext, x: UOp) -> UOp:
    """x's shared sources s -> CHILD(CHILDREN(s)), CHILD numbered by x's place among s's users."""
    assert ctx.children is not None
    srcs = []
    for s in x.src:
        users = ctx.children.get(s)
        if users is None:
            srcs.append(s)
            continue
        parent = UOp(Ops.CHILDREN, s.dtype, (s,), arg=len(users))
        srcs.append(UOp(Ops.CHILD, s.dtype, (parent,), arg=(users.index(x), len(users))))
    return x.replace(src=tuple(srcs))


# ====================================================================== 3. rangeify
@dataclass
class RangeifyContext:
    """Fresh ranges, the buffers made during rangeify, and what each shared node was read at.

    `force` holds the nodes an earlier run of rangeify found must be buffered (a shared node
    whose readers disagree, a reduction some reader could not compute in place): this run reads
    them from their buffer everywhere, so no reader recomputes them."""

    force: frozenset[UOp] = frozenset()
    next_range: int = FIRST_RANGE
    group: dict[UOp, tuple[UOp, ...]] = field(default_factory=dict)  # range -> its buffer's ranges
    buffers: dict[UOp, UOp] = field(default_factory=dict)  # node -> the BUFFERIZE made for it
    reads: dict[UOp, set[tuple]] = field(default_factory=dict)  # shared node -> its reads
    inlined: set[UOp] = field(default_factory=set)  # reductions / shared nodes computed in place
    # reduce range -> the loop ranges of the kernel its REDUCE runs in
    kernel_loops: dict[UOp, tuple[UOp, ...]] = field(default_factory=dict)

    def must_buffer(self) -> frozenset[UOp]:
        """What the next run must buffer everywhere: all this run buffered, and the shared
        nodes read at more than one place."""
        disagree = {c for c, reads in self.reads.items() if len(reads) > 1}
        return self.force | frozenset(self.buffers) | frozenset(disagree)

    def settled(self, again: frozenset[UOp]) -> bool:
        """A rerun would change nothing when no node it must buffer was computed in place."""
        return not (again - self.force) & self.inlined

    def new_range(self, size: int, kind: str = "loop") -> UOp:
        if size == 1:
            return idx_const(0)  # a size-1 axis is never a loop
        r = UOp.range(size, self.next_range, kind)
        self.next_range += 1
        return r

    def new_ranges(self, shape: tuple[int, ...]) -> tuple[UOp, ...]:
        rngs = tuple(self.new_range(s) for s in shape)
        real = tuple(r for r in rngs if r.op is Ops.RANGE)
        for r in real:
            self.group[r] = real
        return rngs


def predict_buffers(sink: UOp) -> frozenset[UOp]:
    """The reductions rangeify will buffer, guessed from the tensor graph: those read through
    an EXPAND (broadcast) before any REALIZE (one read only inside another reduction may nest
    in its kernel: `inline_reduce_ok` decides). Rangeify's first
    run starts from this guess, so it seldom needs a second (runtime/schedule.py)."""
    under: dict[UOp, bool] = {}
    nodes = toposort(sink)
    for n in reversed(nodes):  # every consumer before its sources
        here = under.get(n, False)
        passes = n.op is not Ops.REALIZE and (here or n.op is Ops.EXPAND)
        if passes:
            for s in n.src:
                under[s] = True
    return frozenset(n for n in nodes if n.op is Ops.REDUCE_AXIS and under.get(n, False))


def buffer_device(x: UOp) -> str | None:
    """The device x's buffer goes on (a BUFFERIZE's arg): x's own (None: constants only, which
    go on the default device)."""
    return device_of(x)


def map_realize(ctx: RangeifyContext, r: UOp) -> UOp:
    """REALIZE(x) -> BUFFERIZE(INDEX(x, fresh ranges), fresh ranges): a loop nest over x's shape."""
    x = r.src[0]
    rngs = ctx.new_ranges(x.shape)
    return UOp(Ops.BUFFERIZE, x.dtype, (index(x, *rngs), *rngs), buffer_device(x), tag=r.tag)


def bufferize_here(ctx: RangeifyContext, x: UOp, idx: UOp) -> UOp:
    """Read x from a buffer of its own (made once per node) at idx's indices."""
    b = ctx.buffers.get(x)
    if b is None:
        rngs = ctx.new_ranges(x.shape)
        b = ctx.buffers[x] = UOp(Ops.BUFFERIZE, x.dtype, (index(x, *rngs), *rngs),
                                 buffer_device(x))
    return index(b, *idx.src[1:])


def index_child(ctx: RangeifyContext, c: UOp, idx: UOp) -> UOp:
    """A shared node read by one of its consumers. Computed in place unless an earlier run
    saw its consumers read it at different places (then every consumer reads a buffer); the
    read is recorded for that decision."""
    if c in ctx.force:
        return bufferize_here(ctx, c, idx)
    ctx.reads.setdefault(c, set()).add((idx.src[1:], idx.arg))
    ctx.inlined.add(c)
    return index(c, *idx.src[1:], arg=idx.arg)


def inline_reduce_ok(ctx: RangeifyContext, idx: UOp) -> bool:
    """Whether a reduction read by idx is computed once per output element of its kernel:
    no EXPAND above it dropped a range, and its indices use no enclosing reduce range and
    every loop range of the kernel (otherwise the same reduction would be recomputed for each
    broadcast element or reduce step)."""
    if idx.arg:
        return False
    rngs = ranges_in(*idx.src[1:])
    if not rngs:
        return True  # read at one constant place, and not broadcast: once per kernel
    loops = {r for r in rngs if r.arg[1] == "loop"}
    reds = [r for r in rngs if r.arg[1] != "loop"]
    if reds:
        # inside another reduction: once per element when the read uses all of that
        # reduction's ranges and all of its kernel's loops (a sum then a max, a reduction
        # read through a reshape by another), so it nests in the same kernel
        known = all(r in ctx.group and r in ctx.kernel_loops for r in reds)
        return known and all(set(ctx.group[r]) <= set(rngs) for r in reds) and \
            all(set(ctx.kernel_loops[r]) == loops for r in reds)
    group = ctx.group.get(rngs[0])
    return group is not None and set(group) == set(rngs)


def map_reduce(ctx: RangeifyContext, red: UOp, idx: UOp) -> UOp:
    """INDEX(REDUCE_AXIS(x)) -> REDUCE(INDEX(x, fresh reduce ranges on the reduced axes))."""
    own = ctx.buffers.get(red)
    defining = own is not None and own.src[0] is idx  # the read that fills red's own buffer
    if not defining and (red in ctx.force or not inline_reduce_ok(ctx, idx)):
        return bufferize_here(ctx, red, idx)
    if not defining:
        ctx.inlined.add(red)
    op, axes = red.arg
    rngs = list(idx.src[1:])
    new = []
    for i, s in enumerate(red.src[0].shape):
        if i in axes:
            rngs[i] = ctx.new_range(s, "reduce")
            if rngs[i].op is Ops.RANGE:
                new.append(rngs[i])
    # the new reduce ranges: one group, in the kernel whose loops this read uses
    loops: tuple[UOp, ...] = ()
    for r in ranges_in(*idx.src[1:]):
        if r.arg[1] == "loop" and r in ctx.group:
            loops = ctx.group[r]
        elif r in ctx.kernel_loops:
            loops = ctx.kernel_loops[r]
    for r in new:
        ctx.group[r], ctx.kernel_loops[r] = tuple(new), loops
    value = index(red.src[0], *rngs)
    if not new:
        return value if value.dtype is red.dtype else value.cast(red.dtype)
    return UOp(Ops.REDUCE, red.dtype, (value, *new), arg=op)


def push_index(x: UOp, idx: UOp) -> UOp:
    """INDEX of an elementwise op -> the op of its INDEXed sources (same indices)."""
    return x.replace(src=tuple(index(s, *idx.src[1:], arg=idx.arg) for s in x.src))


def push_index_first(x: UOp, idx: UOp) -> UOp:
    """INDEX of COPY/CONTIGUOUS: index the data source, keep the others (the DEVICE of a COPY)."""
    return x.replace(src=(index(x.src[0], *idx.src[1:], arg=idx.arg),) + x.src[1:])


def unprocessed_index(x: UOp) -> UOp:
    raise RuntimeError(f"rangeify: no rule pushes an INDEX through {x.op.name}: {x!r}")


# ---------------------------------------------------------------------- movement ops
def map_shrink(r: UOp, idx: UOp) -> UOp:
    new = [a + s if s != 0 else a for a, (s, _) in zip(idx.src[1:], r.arg)]
    return index(r.src[0], *new, arg=idx.arg)


def map_permute(r: UOp, idx: UOp) -> UOp:
    new: list[UOp | None] = [None] * len(r.arg)
    for out_axis, src_axis in enumerate(r.arg):
        new[src_axis] = idx.src[1 + out_axis]
    return index(r.src[0], *new, arg=idx.arg)


def map_flip(r: UOp, idx: UOp) -> UOp:
    new = [(s - 1) - a if f else a for a, s, f in zip(idx.src[1:], r.shape, r.arg)]
    return index(r.src[0], *new, arg=idx.arg)


def map_expand(r: UOp, idx: UOp) -> UOp:
    """Broadcast axes read index 0; the ranges they drop are remembered in the INDEX's arg."""
    new, dropped = [], []
    for a, x, y in zip(idx.src[1:], r.src[0].shape, r.shape):
        if x == y:
            new.append(a)
        else:
            new.append(idx_const(0))
            dropped.append(a)
    ended = ranges_in(*dropped)
    arg = tuple(dict.fromkeys((idx.arg or ()) + tuple(ended))) or None
    return index(r.src[0], *new, arg=arg)


def map_pad(r: UOp, idx: UOp) -> UOp:
    """x padded, read at i: where i is inside x, x at i - before (an index valid only there);
    outside, 0."""
    new = list(idx.src[1:])
    valid: UOp | None = None
    for i, (size, (before, after)) in enumerate(zip(r.shape, r.arg)):
        if before == 0 and after == 0:
            continue
        cond: UOp | None = None
        if after > 0:
            cond = new[i].lt(size - after)
        if before > 0:
            ge = idx_const(before - 1).lt(new[i])  # i >= before
            cond = ge if cond is None else cond & ge
        assert cond is not None
        valid = cond if valid is None else valid & cond
        shifted = new[i] - before if before else new[i]
        new[i] = cond.where(shifted, UOp(Ops.INVALID, dtypes.index))
    inner = index(r.src[0], *new, arg=idx.arg)
    if valid is None:
        return inner
    return valid.where(inner, UOp.const(r.dtype, 0))


_SYM: Any = None


def simplify(x: UOp) -> UOp:
    """x under the symbolic rules (symbolic.rules' `sym`), loaded on first use."""
    global _SYM
    if _SYM is None:
        from rulegrad.rules import matcher

        _SYM = matcher("symbolic", "sym")
    from rulegrad.runtime.rewrite import graph_rewrite

    return graph_rewrite(x, _SYM, name="sym")


def _blocks(old: tuple[int, ...], new: tuple[int, ...]) -> list[tuple[list[int], list[int]]]:
    """Pair runs of axes of `old` and `new` (size-1 axes left out) with equal products."""
    a = [i for i, s in enumerate(old) if s != 1]
    b = [i for i, s in enumerate(new) if s != 1]
    out: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(a) or j < len(b):
        ai, bj = [a[i]], [b[j]]
        pa, pb = old[a[i]], new[b[j]]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb:
                ai.append(a[i])
                pa *= old[a[i]]
                i += 1
            else:
                bj.append(b[j])
                pb *= new[b[j]]
                j += 1
        out.append((ai, bj))
    return out


def _unflatten(flat: UOp, sizes: list[int]) -> list[UOp]:
    """Row-major indices of `sizes` from a flat index (the outermost needs no %)."""
    out: list[UOp] = []
    for k, size in enumerate(reversed(sizes)):
        outermost = k == len(sizes) - 1
        out.append(flat if outermost else flat % size)
        flat = flat // size
    return out[::-1]


def map_reshape(r: UOp, idx: UOp) -> UOp:
    """Reshape is a change of strides: per run of axes whose sizes multiply to the same number,
    flatten the output indices and unflatten them into the input's. A split or an unsqueeze
    needs no division; only a true mix of axes gets % and //, then the symbolic rules."""
    old, new = r.src[0].shape, r.shape
    if 0 in old:
        # an empty tensor has no element to read: every index into it is masked off
        never = UOp.const(dtypes.bool, False).where(idx_const(0), UOp(Ops.INVALID, dtypes.index))
        return index(r.src[0], *[never] * len(old), arg=idx.arg)
    out: list[UOp] = [idx_const(0)] * len(old)
    mixed: list[UOp] = []
    for ai, bj in _blocks(old, new):
        flat: UOp | None = None
        acc = 1
        for b in reversed(bj):
            term = idx.src[1 + b] if acc == 1 else idx.src[1 + b] * acc
            flat = term if flat is None else term + flat
            acc *= new[b]
        assert flat is not None
        if len(ai) == 1:
            out[ai[0]] = flat
            continue
        for a, e in zip(ai, _unflatten(flat, [old[a] for a in ai])):
            out[a] = e
            mixed.append(e)
    if mixed:
        done = dict(zip(mixed, simplify(UOp.sink(*mixed)).src))
        out = [done.get(e, e) for e in out]
    return index(r.src[0], *out, arg=idx.arg)


# ====================================================================== 3.5 cleanups
def merge_tags(inner: UOp, outer: UOp) -> UOp:
    """A buffer copied into another over the same ranges is the same buffer: keep one."""
    tags = (inner.tag or ()) + (outer.tag or ())
    return inner.replace(tag=tags or None)


_EXPENSIVE = frozenset({Ops.REDUCE, Ops.COPY, Ops.ASSIGN})


def remove_bufferize(src: UOp, buf: UOp, idx: UOp) -> UOp | None:
    """The cost function: a buffer whose value is elementwise over other memory is recomputed
    by its reader (its ranges replaced by the reader's indices). Reductions, copies, assigns
    and the user's CONTIGUOUS keep their buffers."""
    if src.op is Ops.CONTIGUOUS:
        return None
    for n in toposort(src, stop=lambda n: n.op in (Ops.INDEX, Ops.BUFFERIZE) and n is not src):
        if n.op in _EXPENSIVE:
            return None
    mapping = {r: i for r, i in zip(buf.src[1:], idx.src[1:]) if r.op is Ops.RANGE}
    return substitute(src, mapping)


# ====================================================================== 4. bufferize -> store
def flat_offset(rngs: tuple[UOp, ...]) -> UOp:
    """The row-major flat offset of a buffer whose axes are `rngs` (size-1 axes are CONST 0)."""
    off: UOp | None = None
    acc = 1
    for r in reversed(rngs):
        if r.op is Ops.RANGE:
            term = r if acc == 1 else r * acc
            off = term if off is None else term + off
            acc *= r.src[0].arg
    return off if off is not None else idx_const(0)


def bufferize_to_store(b: UOp) -> UOp:
    """BUFFERIZE(value, ranges) -> STORE(INDEX(BUFFER, offset), value, ranges): a new buffer
    written over the ranges. An ASSIGN writes into its target's buffer instead."""
    rngs = b.src[1:]
    value = b.src[0]
    if value.op is Ops.ASSIGN:
        target, value = value.src[0], value.src[1]
        return UOp(Ops.STORE, dtypes.void, (target, value, *rngs), tag=b.tag)
    size = math.prod(int(r.src[0].arg) for r in rngs if r.op is Ops.RANGE)
    buf = UOp(Ops.BUFFER, b.dtype, (), Buffer(size, b.dtype, device=b.arg or DEFAULT))
    target = UOp(Ops.INDEX, b.dtype, (buf, flat_offset(rngs)))
    return UOp(Ops.STORE, dtypes.void, (target, value, *rngs), tag=b.tag)


# ====================================================================== 5. split into kernels
@dataclass(frozen=True, eq=False)
class Kernel:
    """The arg of a KERNEL node: the kernel AST, its buffers (param order), a readable name."""

    name: str
    ast: UOp
    bufs: tuple[Buffer, ...]


@dataclass
class KernelContext:
    """One kernel being built: its buffer slots, what it depends on, its range numbering."""

    slots: dict[Buffer, int] = field(default_factory=dict)
    deps: dict[UOp, None] = field(default_factory=dict)
    ranges: dict[UOp, UOp] = field(default_factory=dict)

    def define_global(self, b: UOp) -> UOp:
        slot = self.slots.setdefault(b.arg, len(self.slots))
        return UOp(Ops.DEFINE_GLOBAL, b.dtype, (), slot)


def split_valid(off: UOp) -> tuple[UOp, UOp | None]:
    """An offset with `WHERE(valid, i, INVALID)` parts -> (plain offset, AND of the valids)."""
    nodes = toposort(off)
    masked = [n for n in nodes if n.op is Ops.WHERE and n.src[2].op is Ops.INVALID]
    if not masked:
        if any(n.op is Ops.INVALID for n in nodes):
            return idx_const(0), UOp.const(dtypes.bool, False)
        return off, None
    # innermost first: a condition may itself mention a masked index of an earlier PAD
    plain: dict[UOp, UOp] = {}
    conds: list[UOp] = []
    for w in masked:
        plain[w] = substitute(w.src[1], plain)
        conds.append(substitute(w.src[0], plain))
    valid = conds[0]
    for c in conds[1:]:
        valid = valid & c
    off = substitute(off, plain)
    if any(n.op is Ops.INVALID for n in toposort(off)):
        # a mask the symbolic rules proved always false: the read never happens
        return idx_const(0), UOp.const(dtypes.bool, False)
    return off, valid


def load_index(dg: UOp, off: UOp) -> UOp:
    plain, valid = split_valid(off)
    srcs = (dg, plain) if valid is None else (dg, plain, valid)
    return UOp(Ops.LOAD, dg.dtype, (UOp(Ops.INDEX, dg.dtype, srcs),))


def define_store(ctx: KernelContext, st: UOp) -> UOp:
    """The kernel's output: slot 0; its loop ranges are numbered first, outermost first."""
    target, value = st.src[0], st.src[1]
    rngs = tuple(r for r in st.src[2:] if r.op is Ops.RANGE)
    for r in rngs:
        renumber_range(ctx, r)
    dg = ctx.define_global(target.src[0])
    # a store index is masked only when it writes an empty tensor: its loops never run
    plain, _ = split_valid(target.src[1])
    return UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, dg.dtype, (dg, plain)), value, *rngs))


def define_load(ctx: KernelContext, b: UOp, off: UOp) -> UOp:
    """A read of an input buffer (its value from before this schedule)."""
    ctx.deps[b] = None
    return load_index(ctx.define_global(b), off)


def define_load_after(ctx: KernelContext, a: UOp, idx: UOp) -> UOp:
    """A read of a buffer another kernel of this schedule writes: depend on that kernel and
    read at the offset its STORE used, its ranges replaced by our indices."""
    ctx.deps[a] = None
    off, rngs = a.arg
    off = substitute(off, {r: i for r, i in zip(rngs, idx.src[1:]) if r.op is Ops.RANGE})
    return load_index(ctx.define_global(a.src[0]), off)


def scheduler_range(r: UOp) -> bool:
    """A range of the tensor graph's rangeify (not yet a kernel's own)."""
    return r.arg[0] >= FIRST_RANGE


def renumber_range(ctx: KernelContext, r: UOp) -> UOp:
    """Ranges numbered from 0 in the order the kernel meets them, so equal kernels are equal."""
    new = ctx.ranges.get(r)
    if new is None:
        new = ctx.ranges[r] = r.replace(arg=(len(ctx.ranges), r.arg[1]))
    return new


def kernel_name(store: UOp, ranges: list[UOp]) -> str:
    """E_<loop sizes> for elementwise kernels, r_<loop sizes>_<reduce sizes> with a reduction
    (`ranges`: the kernel's renumbered ranges)."""
    loops = [str(r.src[0].arg) for r in store.src[2:]]
    reduces = [str(r.src[0].arg) for r in sorted(ranges, key=lambda r: r.arg[0])
               if r.arg[1] == "reduce"]
    if reduces:
        return "r_" + "_".join(loops + reduces)
    return "E_" + "_".join(loops or ["1"])


def make_kernel(st: UOp, ast: UOp, ctx: KernelContext) -> UOp:
    """STORE -> ASSIGN(BUFFER, KERNEL): the buffer, once the kernel has written it. The ASSIGN's
    arg keeps the offset and ranges of the STORE, so readers can index it like the tensor."""
    bufs = tuple(sorted(ctx.slots, key=ctx.slots.__getitem__))
    name = kernel_name(ast.src[0], list(ctx.ranges.values()))
    if st.src[1].op is Ops.COPY:  # the one kind of kernel that reads another device's buffer
        name = "copy_" + name[2:]
    kernel = UOp(Ops.KERNEL, dtypes.void, tuple(ctx.deps), arg=Kernel(name, ast, bufs))
    target = st.src[0]
    return UOp(Ops.ASSIGN, target.dtype, (target.src[0], kernel), arg=(target.src[1], st.src[2:]),
               tag=st.tag)


def split_store(st: UOp) -> UOp:
    """One STORE with all its ranges closed is one kernel: build its AST with `to_kernel`."""
    from rulegrad.runtime.schedule import kernel_passes

    ctx = KernelContext()
    ast = kernel_passes(st, ctx)
    return make_kernel(st, ast, ctx)


# ====================================================================== 0. earliest rewrites
identity_value = reduce_identity  # the rules' name for it


def reduce_of_expand(red: UOp, e: UOp, x: UOp) -> UOp | None:
    """A reduction over axes an EXPAND only repeats: sum is value * count; max/min the value.
    (The older scheduler's simplify_stride0_reduce.)"""
    op, axes = red.arg
    if not all(x.shape[i] == 1 for i in axes) or op is Ops.MUL:
        return None
    other = tuple(1 if i in axes else s for i, s in enumerate(e.shape))
    y = x.expand(other)
    count = math.prod(e.shape[i] for i in axes)
    if count == 0:
        return None  # a reduction over nothing is its identity (reduce_empty), not the value
    if op is Ops.ADD and count != 1 and not red.dtype.is_bool:
        if red.dtype.is_int:
            # n copies of x sum to x * n in wrapping arithmetic: n wrapped to the dtype
            return y * wrap(red.dtype, count)
        if count > 2 ** {2: 11, 4: 24, 8: 53}[red.dtype.itemsize]:
            return None  # n itself is not exact in the float type
        return y * float(count)
    return y


def split_reduce(red: UOp, x: UOp) -> UOp | None:
    """A large reduction to few outputs becomes two: first over a split of one reduced axis
    into (d, n/d), keeping d partial results per output, then over those d.
    (The older scheduler's split_reduceop: d from 256 down to 8, at most 2**22 partials.)"""
    op, axes = red.arg
    out = max(red.size, 1)
    for axis in axes:
        for d in range(min(256, (1 << 22) // out), 7, -1):
            if x.shape[axis] % d == 0:
                break
        else:
            continue
        shape = x.shape[:axis] + (d, x.shape[axis] // d) + x.shape[axis + 1:]
        # move the d axis last: the first reduction keeps it, the second reduces it
        order = tuple(i for i in range(len(shape)) if i != axis) + (axis,)
        split = x.reshape(shape).permute(order)
        first = UOp(Ops.REDUCE_AXIS, red.dtype, (split,), arg=(op, axes))
        second = UOp(Ops.REDUCE_AXIS, red.dtype, (first,), arg=(op, (len(shape) - 1,)))
        return second.reshape(red.shape)
    return None
