"""Python helpers of the kernelize scheduler's rules (`kernelize.rules`).

In: the captures of a rule that matched (UOps, and the pass's `KernelizeContext`). Out: the
replacement UOp, or None for "no rewrite"; or, for the analyses, an answer about nodes. What
each pass does and decides is said by its rules (and its context, declared there); a function is
here only because it walks the graph (a node's readers, where a reduction's value flows, what a
pad reads).

The graph's conventions: kernelize.rules' opening comment (VIEW(base, arg=ShapeTracker)) and
`kernel_view` (a realized node's buffer), rangeify_helpers.py's (INDEX, masked offsets).
"""

from __future__ import annotations

from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.uop import UOp, toposort
from rulegrad.runtime.view import ShapeTracker

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
def is_computed(x: UOp) -> bool:
    """x is a value some kernel computes (not memory, a constant or a marker of memory)."""
    return x.op not in ALWAYS_CONTIGUOUS


def root_value(x: UOp) -> UOp:
    """The node a root's buffer holds: the value, when the root is a reshape of a value (the
    root then reads the buffer reshaped)."""
    if x.op is Ops.VIEW and x.arg.is_contiguous and x.size == x.src[0].size and \
            x.src[0].op not in ALWAYS_CONTIGUOUS:
        return x.src[0]
    return x


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
