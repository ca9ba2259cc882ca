"""Lazy records: a tensor of host data and the elementwise ops over such tensors, kept as a
small record until something needs their UOp graph.

In: a Buffer of host data (`Lazy.leaf`), then ops over records (`Lazy.op`: a builder function,
its extra arguments, the source records). Out: on demand, the UOp graph the eager front end
would have built (`materialize`: the builders are the ones the eager ops call, so the nodes are
the very ones), and at once, with no graph: the record's *token* and its leaves' buffers. The
token says what the graph is with each buffer as its position among the leaves (builders,
extras, dtypes, shapes), so two records with equal tokens and the same pattern of repeated
buffers build the same program over other buffers: a form plan's key without a graph walk
(runtime/plans.py's `run_record`).

Why: `(Tensor(x) + Tensor(y)).numpy()` over fresh arrays each call built three nodes, walked
them for the form's key and dropped them again; the tensors' records are what it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .buffer import Buffer
from .dtype import DType
from .ops import Ops
from .uop import UOp

# a record over more leaves or ops than this is not made (its op builds eagerly): a token is a
# nested tuple, hashed whole at each lookup, and a long chain gains nothing from it
MAX_RECORD = 32
_BUFFER = Ops.BUFFER


class Lazy:
    """One tensor's value, not yet a graph: its dtype and shape, how to build its node from
    its sources' nodes (`build(*nodes, *extra)`; None: a leaf over `buf`), its token, its
    leaves' buffers in token order, and its node once built."""

    __slots__ = ("dtype", "shape", "build", "extra", "srcs", "token", "bufs", "count", "node")

    def __init__(self, dtype: DType, shape: tuple[int, ...], build: Callable[..., UOp] | None,
                 extra: tuple, srcs: tuple[Lazy, ...], token: tuple, bufs: tuple[Buffer, ...],
                 count: int):
        self.dtype, self.shape, self.build, self.extra = dtype, shape, build, extra
        self.srcs, self.token, self.bufs, self.count = srcs, token, bufs, count
        self.node: UOp | None = None


_new = object.__new__


def leaf(buf: Buffer, dtype: DType, shape: tuple[int, ...]) -> Lazy:
    """Host data in `buf` (allocated, on the default device), as a tensor of `shape`. (Made
    without `Lazy.__init__`: a frame less of every `Tensor(array)`.)"""
    r = _new(Lazy)
    r.dtype, r.shape, r.build, r.extra, r.srcs = dtype, shape, None, (), ()
    r.token, r.bufs, r.count, r.node = (dtype, shape), (buf,), 1, None
    return r


def op(build: Callable[..., UOp], extra: tuple, key: tuple, srcs: tuple[Lazy, ...],
       dtype: DType, shape: tuple[int, ...]) -> Lazy | None:
    """`build(*srcs' nodes, *extra)` as a record, or None when it would be too large. `key`:
    what of `extra` decides the graph, hashable and exact (a float by its hex form)."""
    if len(srcs) == 2:  # (a binary op, the common record, without the loop's tuple growing)
        a, b = srcs
        count, bufs, token = 1 + a.count + b.count, a.bufs + b.bufs, (build, key, a.token, b.token)
    else:
        count = 1
        bufs: tuple[Buffer, ...] = ()
        token: tuple[Any, ...] = (build, key)
        for s in srcs:  # (a loop: a generator would be a frame per source)
            count += s.count
            bufs += s.bufs
            token += (s.token,)
    if count > MAX_RECORD:
        return None
    r = _new(Lazy)  # (`Lazy.__init__`'s work, without its frame)
    r.dtype, r.shape, r.build, r.extra, r.srcs = dtype, shape, build, extra, srcs
    r.token, r.bufs, r.count, r.node = token, bufs, count, None
    return r


def aliasing(bufs: tuple[Buffer, ...]) -> tuple[int, ...] | None:
    """Which leaves share a buffer (each leaf's first position with the same buffer), or None
    when none does: `x + x` and `x + y` are two programs."""
    if len(bufs) == len(set(bufs)):  # (a Buffer hashes by identity)
        return None
    first: dict[int, int] = {}
    return tuple([first.setdefault(id(b), i) for i, b in enumerate(bufs)])


def materialize(root: Lazy) -> UOp:
    """The record's UOp graph, built once (kept on each record: the same nodes for every
    tensor over it). Iterative: no recursion on the record's depth."""
    if root.build is None:  # (a tensor of host data, read as a graph: a jit's argument)
        if root.node is None:
            root.node = _leaf_node(root)
        return root.node
    stack = [root]
    while stack:
        r = stack[-1]
        if r.node is not None:
            stack.pop()
            continue
        pending = [s for s in r.srcs if s.node is None]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        r.node = _leaf_node(r) if r.build is None else r.build(*[s.node for s in r.srcs],
                                                                 *r.extra)
    return root.node  # type: ignore[return-value]


def built_nodes(root: Lazy) -> list[UOp]:
    """The nodes already built (`materialize`d, by this record or a tensor over one of its
    sources) of the records under root, root's included."""
    out, stack, seen = [], [root], set()
    while stack:
        r = stack.pop()
        if r.node is not None:
            out.append(r.node)
        for s in r.srcs:
            if id(s) not in seen:
                seen.add(id(s))
                stack.append(s)
    return out


def _leaf_node(r: Lazy) -> UOp:
    """A leaf's node, as `Tensor(array)` builds it: BUFFER, reshaped unless 1-d."""
    node = UOp(_BUFFER, r.dtype, (), r.bufs[0])
    return node if len(r.shape) == 1 else node.reshape(r.shape)
