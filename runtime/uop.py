"""The UOp: an immutable, hash-consed node of the IR, and the graph utilities over it.

`UOp(op, dtype, src, arg, tag)` returns the one existing node with those fields when there is
one, so nodes compare with `is`. Shapes (tensor level) and `vmin`/`vmax` bounds (index level)
are derived from the graph and cached on the node. Every walk here is iterative: graphs a
million nodes deep work at Python's default recursion limit.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import operator
import struct
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .device_use import born_multi, born_placed
from .dtype import DType, dtypes
from .ops import ARITY, GroupOp, Ops

Shape = tuple[int, ...]
# the hash-consing table: fields -> weak reference to the node. An entry leaves the table the
# moment its node dies: its key holds the node's sources and arg (a BUFFER's storage), so a
# lingering key would keep a whole dead graph, and its buffers, alive.
class _Entry(weakref.ref):
    """A weak reference that knows its key. Built by weakref's own C constructor, then given
    its key: a Python-level __new__/__init__ would cost two calls per new node."""

    __slots__ = ("key",)


def _drop_entry(entry: _Entry) -> None:
    # one hash of the key, not two (a get, then a del): a key tuple's hash is not cached, and
    # this runs for every node that dies. The entry found is another node's only when a node
    # was built again between this one's death and its callback: it goes back.
    found = _cache.pop(entry.key, None)
    if found is not entry and found is not None:
        _cache[entry.key] = found


_cache: dict[tuple, _Entry] = {}
# the number of sources of each ALU op (the IR spec's ARITY): a node of another count is
# refused when it is made (generated matchers unpack an inner ALU node's sources by its op, with
# no len(); the printer, the oracle and the checker read them by arity too); a test of a made
# node only (a cached one was tested when it was made)
_ALU_ARITY: dict[Ops, int] = {op: ARITY[op] for op in GroupOp.ALU}


def _arity_error(op: Ops, src: tuple) -> ValueError:
    want = _ALU_ARITY[op]
    return ValueError(f"{op.name} takes {want} source{'s' if want != 1 else ''} (runtime/ops.py "
                      f"ARITY), not {len(src)}: "
                      f"{op.name}({', '.join(_short(s) for s in src)})")
# bound once: UOp.__new__ runs for every node built (a global's load, not an attribute's)
_cache_get, _object_new = _cache.get, object.__new__
# the ops under a node (`UOp._ops`): a conservative summary in 8 bits. The ops the scheduler's
# passes are rooted on get bits of their own, every other op shares the last: a pass whose rules
# are rooted only on own-bit ops has nothing to do in a subgraph whose bits miss its own. The
# summary of a node is its op's bit or'ed with its sources' (always below 256: Python's cached
# small ints, no allocation per node).
_OTHER = 128
OP_BIT: dict[Ops, int] = {op: _OTHER for op in Ops}
# (REDUCE_AXIS, a tensor graph's reduction, and REDUCE, a kernel's, share a bit: a kernel with
# no reduction is known without a walk)
OP_BIT.update({Ops.SINK: 1, Ops.BUFFERIZE: 2, Ops.STORE: 2, Ops.REALIZE: 4, Ops.INDEX: 8,
               Ops.REDUCE_AXIS: 16, Ops.REDUCE: 16, Ops.ASSIGN: 32, Ops.CONTIGUOUS: 32,
               Ops.COPY: 32, Ops.BUFFER_VIEW: 32, Ops.INVALID: 64, Ops.BIND: 64})
# (BIND, a bound variable of a tensor graph, shares INVALID's bit, a lowered kernel's: `unbind`
# takes every BIND out before a kernel is made. A view whose arg holds a bound size gets the
# bit too: a graph without it holds no bound variable, and runtime/variable.py's unbind does
# not walk it)
BIND_BIT = 64


def ops_mask(ops: Any) -> int:
    """The `_ops` bits of a collection of ops (a matcher's table, an op group)."""
    mask = 0
    for op in ops:
        mask |= OP_BIT[op]
    return mask


# Small integer and bool constants (0, 1, True, a stride) live as long as the process, as
# CPython's small ints do: rules make them and drop them over and over (x < 10 -> True,
# x // 8 -> 0, x * 0 -> 0, a folded coefficient), and making a dead node again costs its
# construction and its death (the cache entry's callback) each time. At most
# 2 * SMALL_CONST + 1 nodes per integer dtype, each without sources: they keep nothing else alive.
SMALL_CONST = 256
_immortal: list[Any] = []

_UNSET: Any = object()
UNSET = _UNSET  # a cached fact (fill_facts) not derived yet


def _bind_bit_in(arg: Any) -> int:
    """BIND_BIT when a node's arg is, or holds (a view's shape, a shrink's bounds, nested one
    deep), a bound variable or an expression of one, else 0."""
    if isinstance(arg, UOp):
        return arg._ops & BIND_BIT
    if type(arg) is not tuple:
        return 0
    for x in arg:
        for y in x if type(x) is tuple else (x,):
            if isinstance(y, UOp) and y._ops & BIND_BIT:
                return BIND_BIT
    return 0


def const_value(dtype: DType, value: Any) -> Any:
    """The arg `UOp.const(dtype, value)` keeps: a float rounded to a float16/float32 dtype (a
    pattern's literal 0.99 matches the float16 constant written 0.99, which holds 0.9897...)."""
    return _const_arg(dtype, value)


_pack_f32, _unpack_f32 = struct.Struct("f").pack, struct.Struct("f").unpack
_pack_f16, _unpack_f16 = struct.Struct("e").pack, struct.Struct("e").unpack


def _const_arg(dtype: DType, value: Any) -> Any:
    """Canonical Python value of a constant of `dtype` (so 1 and 1.0 are different nodes)."""
    if not isinstance(value, (bool, int, float)):
        return value
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind == "f":
        # the value the dtype holds (3e-154 is 0.0 as a float32): a guard reading `c.arg`, the
        # checker and the kernels all see one number
        value = float(value)
        if dtype.itemsize == 4:
            return _unpack_f32(_pack_f32(value))[0]
        if dtype.itemsize == 2:
            try:
                return _unpack_f16(_pack_f16(value))[0]
            except OverflowError:  # (struct refuses what rounds past float16's largest)
                return math.copysign(math.inf, value)
        return value
    if dtype.kind in "iux":
        return int(value)
    return value


# The ops the hot paths below test, as module globals: on Python 3.11 `Ops.X` is read through
# EnumType.__getattr__, several times the cost of loading a global.
_CONST, _RANGE, _DEFINE_VAR, _BIND, _BUFFER, _BUFFERIZE, _INVALID = (
    Ops.CONST, Ops.RANGE, Ops.DEFINE_VAR, Ops.BIND, Ops.BUFFER, Ops.BUFFERIZE, Ops.INVALID)
# whether any BIND node (a bound variable's value) was ever made in this process: until one is,
# no graph holds one, in its sources or in a view's shape (every node is made by UOp.__new__)
bind_made = [False]
_RESHAPE, _EXPAND, _PERMUTE, _PAD, _SHRINK, _REDUCE_AXIS = (
    Ops.RESHAPE, Ops.EXPAND, Ops.PERMUTE, Ops.PAD, Ops.SHRINK, Ops.REDUCE_AXIS)
_ADD, _SUB, _MUL, _IDIV, _MOD, _NEG, _MAX, _MIN, _SHR = (
    Ops.ADD, Ops.SUB, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.NEG, Ops.MAX, Ops.MIN, Ops.SHR)
_WHERE, _CMPLT, _CMPNE, _CMPEQ, _AND, _OR, _CAST = (
    Ops.WHERE, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.CAST)
_FDIV, _XOR, _SINK, _FLIP, _VIEW, _MULTI = (
    Ops.FDIV, Ops.XOR, Ops.SINK, Ops.FLIP, Ops.VIEW, Ops.MULTI)
_index, _bool, _void = dtypes.index, dtypes.bool, dtypes.void
# the nodes that put a value on a device other than the default (a DEVICE, a copy's
# destination) or shard it: runtime/device_use.py counts them while they live
_DEVICE = Ops.DEVICE
_PLACING = frozenset({Ops.DEVICE, Ops.MULTI, Ops.MSTACK, Ops.MSELECT})

# the first item of a variable's mark, the tag `(VARIABLE_MARK, n)` that makes a leaf's node its
# own (runtime/tensor.py's `_marked`; the schedule cache numbers them, the schedulers drop them)
VARIABLE_MARK = "variable"
_Comparison, _Elementwise, _Movement = GroupOp.Comparison, GroupOp.Elementwise, GroupOp.Movement


class UOp:
    """One node. Build with `UOp(op, dtype, src, arg, tag)`; change with `replace(...)`."""

    # _shape, _bounds, _device: facts derived from the graph, cached (UNSET until asked for;
    # `_device` belongs to runtime/device.py). _ops: the bits (OP_BIT) of the ops in the node's
    # graph, set when it is built: a walk skips a subgraph in which no rule can fire (and
    # BIND_BIT for a bound variable in an arg too: a realize skips unbind's walk).
    # memo (public): a per-node cache in which a rule helper keeps the answer of a pure function
    # of the node (nodes are immutable, so an answer never goes stale, and a rule set tries its
    # helpers on the same nodes pass after pass). UNSET, or a pair (owner, answer): a helper
    # reads it back only when `owner` is its own key (an object of its module), so no helper
    # reads another's answer; the last to set it keeps it. rules/symbolic_helpers.py's
    # fold_divmod keeps its answer on IDIV and MOD nodes; runtime/tensor.py's `_graph_reads`
    # the buffers a tensor's graph reads, on the tensor's root (an assign's reader scan).
    __slots__ = ("op", "dtype", "src", "arg", "tag", "_shape", "_bounds", "_device", "memo",
                 "_ops", "__weakref__")
    op: Ops
    dtype: DType
    src: tuple[UOp, ...]
    arg: Any
    tag: Any

    def __new__(cls, op: Ops, dtype: DType = dtypes.void, src: tuple[UOp, ...] = (),
                arg: Any = None, tag: Any = None) -> UOp:
        # floats key by their hex form: 0.0 and -0.0 differ, and NaN equals itself
        key = (op, dtype, src, arg.hex() if type(arg) is float else arg, tag)
        ref = _cache_get(key)
        if ref is not None and (node := ref()) is not None:
            return node
        if op in _ALU_ARITY and len(src) != _ALU_ARITY[op]:
            raise _arity_error(op, src)
        node = _object_new(cls)
        node.op = op
        node.dtype = dtype
        node.src = src
        node.arg = arg
        node.tag = tag
        node._shape = node._bounds = node._device = node.memo = _UNSET
        ops = OP_BIT[op]
        for s in src:
            ops |= s._ops
        if op is _BIND:
            bind_made[0] = True  # (until then no arg holds a BIND: no look at any)
        elif arg is not None and bind_made[0] and not ops & BIND_BIT:
            ops |= _bind_bit_in(arg)  # (a bound size in a view's arg: a BIND in its graph)
        node._ops = ops
        entry = _cache[key] = _Entry(node, _drop_entry)
        entry.key = key
        if op in _PLACING:  # (a node that puts a value on a device: counted while it lives)
            (born_placed if op is _DEVICE else born_multi)(node)
        if op is _CONST and (type(arg) is int or type(arg) is bool) and not src and tag is None \
                and -SMALL_CONST <= arg <= SMALL_CONST:
            _immortal.append(node)
        return node

    def replace(self, *, op: Any = _UNSET, dtype: Any = _UNSET, src: Any = _UNSET,
                arg: Any = _UNSET, tag: Any = _UNSET) -> UOp:
        """The node with some fields changed; the same object when nothing changes (keywords,
        not a **kwargs dict to pop: rules call this on most firings)."""
        return new_uop(UOp, self.op if op is _UNSET else op,
                       self.dtype if dtype is _UNSET else dtype,
                       self.src if src is _UNSET else tuple(src),
                       self.arg if arg is _UNSET else arg, self.tag if tag is _UNSET else tag)

    def __reduce__(self) -> tuple:  # copies go back through the cache
        return (UOp, (self.op, self.dtype, self.src, self.arg, self.tag))

    def __deepcopy__(self, memo: dict) -> UOp:  # immutable: a copied context shares its nodes
        return self

    def __bool__(self) -> bool:
        raise TypeError(f"a UOp has no truth value ({self.op.name}); compare with `is`")

    # ---------------------------------------------------------------- printing
    def __repr__(self) -> str:
        srcs = ", ".join(_short(s) for s in self.src)
        extra = "" if self.arg is None else f" arg={self.arg!r}"
        extra += "" if self.tag is None else f" tag={self.tag!r}"
        return f"<{self.op.name} {self.dtype.name}{extra} ({srcs})>"

    def __str__(self) -> str:
        return print_graph(self)

    # ---------------------------------------------------------------- constructors
    @staticmethod
    def const(dtype: DType, value: Any) -> UOp:
        return new_uop(UOp, _CONST, dtype, (), _const_arg(dtype, value))

    def const_like(self, value: Any) -> UOp:
        """A constant of this node's dtype, broadcast to its shape when it has one."""
        dtype = self.dtype
        c = new_uop(UOp, _CONST, dtype, (), _const_arg(dtype, value))
        shape = self._shape
        if shape is _UNSET:
            shape = self.shape
        if shape is None or shape == ():
            return c
        return c.reshape((1,) * len(shape)).expand(shape)

    @staticmethod
    def sink(*srcs: UOp, **kwargs: Any) -> UOp:
        return UOp(_SINK, _void, tuple(srcs), **kwargs)

    @staticmethod
    def variable(name: str, vmin: int, vmax: int, dtype: DType = dtypes.index) -> UOp:
        return UOp(Ops.DEFINE_VAR, dtype, (), (name, vmin, vmax))

    def bind(self, value: int) -> UOp:
        """A Variable (DEFINE_VAR) bound to `value`: a clear error when the value is not an
        int or is outside the variable's range."""
        if self.op is not Ops.DEFINE_VAR:
            raise TypeError(f"bind() needs a Variable, got {self.op.name}")
        name, lo, hi = self.arg
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"Variable {name!r} must be bound to an int, got {value!r}")
        if not lo <= value <= hi:
            raise ValueError(f"Variable {name!r} bound to {value}, outside its range [{lo}, {hi}]")
        return UOp(Ops.BIND, self.dtype, (self, UOp.const(self.dtype, int(value))))

    @staticmethod
    def range(size: int | UOp, axis: int, kind: str = "loop") -> UOp:
        end = size if isinstance(size, UOp) else UOp.const(_index, size)
        return new_uop(UOp, _RANGE, _index, (end,), (axis, kind))

    def f(self, op: Ops, **kwargs: Any) -> UOp:
        """A new node `op` over this one (kwargs: dtype, arg, tag; dtype defaults to ours)."""
        return UOp(op, kwargs.pop("dtype", self.dtype), (self,), **kwargs)

    # ---------------------------------------------------------------- ALU builders
    def alu(self, op: Ops, *others: UOp | int | float | bool) -> UOp:
        if len(others) == 1:  # a binary op (most calls): no generator frame
            o = others[0]
            srcs = (self, o if isinstance(o, UOp) else self.const_like(o))
        elif len(others) == 2:  # a select (two in every relu and clamp): no generator frame
            o, p = others
            srcs = (self, o if isinstance(o, UOp) else self.const_like(o),
                    p if isinstance(p, UOp) else self.const_like(p))
        else:
            srcs = (self,) + tuple([o if isinstance(o, UOp) else self.const_like(o)
                                    for o in others])
        if op is _WHERE:
            dtype = srcs[1].dtype
        elif op in _Comparison:
            dtype = _bool
        else:
            dtype = self.dtype
        return new_uop(UOp, op, dtype, srcs)

    def _rbin(self, op: Ops, other: int | float | bool) -> UOp:
        return self.const_like(other).alu(op, self)

    # (the ops as module globals: see _CONST above)
    def __add__(self, o): return self.alu(_ADD, o)
    def __radd__(self, o): return self._rbin(_ADD, o)
    def __sub__(self, o): return self.alu(_SUB, o)
    def __rsub__(self, o): return self._rbin(_SUB, o)
    def __mul__(self, o): return self.alu(_MUL, o)
    def __rmul__(self, o): return self._rbin(_MUL, o)
    def __truediv__(self, o): return self.alu(_FDIV, o)
    def __floordiv__(self, o): return self.alu(_IDIV, o)  # C semantics: toward zero
    def __mod__(self, o): return self.alu(_MOD, o)
    def __neg__(self): return self.alu(_NEG)
    def __and__(self, o): return self.alu(_AND, o)
    def __or__(self, o): return self.alu(_OR, o)
    def __xor__(self, o): return self.alu(_XOR, o)
    def lt(self, o): return self.alu(_CMPLT, o)
    def ne(self, o): return self.alu(_CMPNE, o)
    def eq(self, o): return self.alu(_CMPEQ, o)
    def maximum(self, o): return self.alu(_MAX, o)
    def minimum(self, o): return self.alu(_MIN, o)
    def where(self, a, b): return self.alu(_WHERE, a, b)
    def cast(self, dtype: DType) -> UOp:
        return self if dtype is self.dtype else new_uop(UOp, _CAST, dtype, (self,))

    # ---------------------------------------------------------------- movement builders
    def _mop(self, op: Ops, arg: Any) -> UOp:
        return new_uop(UOp, op, self.dtype, (self,), arg)

    # (reshape and expand run for most nodes a tensor op or a gradient rule builds: the shape
    # cached on the node is read in place, the property only when it is not derived yet)
    def reshape(self, shape: Shape) -> UOp:
        shape = tuple(shape)
        have = self._shape
        if have is _UNSET:
            have = self.shape
        return self if have == shape else new_uop(UOp, _RESHAPE, self.dtype, (self,), shape)

    def expand(self, shape: Shape) -> UOp:
        shape = tuple(shape)
        have = self._shape
        if have is _UNSET:
            have = self.shape
        return self if have == shape else new_uop(UOp, _EXPAND, self.dtype, (self,), shape)

    def permute(self, order: tuple[int, ...]) -> UOp:
        order = tuple(order)
        return self if order == tuple(range(len(order))) else self._mop(_PERMUTE, order)

    def pad(self, padding: tuple[tuple[int, int], ...]) -> UOp:
        padding = tuple(tuple(p) for p in padding)
        return self if all(p == (0, 0) for p in padding) else self._mop(_PAD, padding)

    def shrink(self, bounds: tuple[tuple[int, int], ...]) -> UOp:
        bounds = tuple(tuple(b) for b in bounds)
        if self.shape is not None and all(b == (0, s) for b, s in zip(bounds, self.shape)):
            return self
        return self._mop(_SHRINK, bounds)

    def flip(self, axes: tuple[bool, ...]) -> UOp:
        axes = tuple(bool(a) for a in axes)
        return self if not any(axes) else self._mop(_FLIP, axes)

    # ---------------------------------------------------------------- derived facts
    @property
    def shape(self) -> Shape | None:
        """The tensor shape, or None for nodes that have none (index math, kernels, SINK)."""
        shape = self._shape
        if shape is _UNSET:
            for s in self.src:  # a loop, not all(...): no generator frame per node
                if s._shape is _UNSET:  # a source without a shape: derive them all, in order
                    return _fill_shape(self)
            shape = self._shape = _derive_shape(self)  # the common case: no walk
        return shape

    @property
    def ndim(self) -> int:
        shape = self.shape
        if shape is None:
            raise ValueError(f"{self.op.name} has no shape")
        return len(shape)

    @property
    def size(self) -> int:
        shape = self.shape
        if shape is None:
            raise ValueError(f"{self.op.name} has no shape")
        return math.prod(shape)

    @property
    def base(self) -> UOp:
        """This node with movement ops stripped from its top."""
        node = self
        while node.op in _Movement:
            node = node.src[0]
        return node

    # guards read these on every attempt: the cached bounds without a second call
    @property
    def vmin(self) -> int | float | bool:
        bounds = self._bounds
        return (self._bounds_() if bounds is _UNSET else bounds)[0]

    @property
    def vmax(self) -> int | float | bool:
        bounds = self._bounds
        return (self._bounds_() if bounds is _UNSET else bounds)[1]

    def _bounds_(self) -> tuple[Any, Any]:
        bounds = self._bounds
        if bounds is _UNSET:
            for s in self.src:
                if s._bounds is _UNSET:  # a source without bounds: derive them all, in order
                    return _fill_bounds(self)
            bounds = self._bounds = _derive_bounds(self)  # the common case: no walk
        return bounds

    def toposort(self) -> list[UOp]:
        return toposort(self)

    def substitute(self, mapping: dict[UOp, UOp]) -> UOp:
        return substitute(self, mapping)

    def render(self) -> str:
        return render_expr(self)


# `UOp(...)` goes through type's call machinery (a tuple of arguments, a lookup of __new__, a
# call of __init__) and costs about a third more than calling `__new__` itself: the hot paths
# (the builders here, the rewrite engine, generated matchers) call `new_uop(UOp, ...)`
new_uop = UOp.__new__


def _short(node: UOp) -> str:
    if node.op is _CONST:
        return f"{node.arg!r}"
    return node.op.name


# ---------------------------------------------------------------------- graph walks
# the answers kept while one kernel is optimized (`kept_answers`): the optimizer's helpers ask
# the same pure questions of the same nodes rule after rule (a kernel's walk, its loops' free
# ranges, an index's stride), each walking the kernel again; the table goes with the pass, so
# nothing outlives the kernel it was asked of
_kept: contextvars.ContextVar[dict | None] = contextvars.ContextVar("rulegrad_kept", default=None)
_kept_get = _kept.get


@contextlib.contextmanager
def keeping_answers() -> Iterator[None]:
    """Keep the answers of `toposort` (and of the pure questions that ask `kept_answers`) until
    the block ends (an enclosing block's table is kept on)."""
    if _kept_get() is not None:
        yield
        return
    token = _kept.set({})
    try:
        yield
    finally:
        _kept.reset(token)


def kept_answers() -> dict | None:
    """The table of the current `keeping_answers` block (None outside one): a pure function of
    nodes keys its answer on (itself, its arguments)."""
    return _kept_get()


def toposort(root: UOp, stop: Callable[[UOp], bool] | None = None) -> list[UOp]:
    """All nodes reachable from root, sources before users; iterative.

    `stop(node)` true prunes the walk at that node (it and its sources are left out)."""
    if stop is None and (kept := _kept_get()) is not None:
        order = kept.get(root)
        if order is None:
            order = kept[root] = _toposort(root, None, kept)
        return order[:]  # (a copy: a caller may change its list)
    return _toposort(root, stop)


def _toposort(root: UOp, stop: Callable[[UOp], bool] | None,
              kept: dict | None = None) -> list[UOp]:
    """toposort's walk; `kept` (no `stop`): the walks kept so far, spliced in, not walked
    again (a kept node's order less what is done is what its walk from here would emit: what
    is under a done node is done too)."""
    order: list[UOp] = []
    if stop is not None and stop(root):
        return order
    # the stack holds bare nodes (a (node, flag) pair per visit made the cyclic collector scan
    # the whole heap again and again on a deep graph, doubling the walk's time): a node with
    # sources to do goes back under them with the marker _EMIT above it, and is emitted when
    # the marker comes up, its sources done (a DAG: nothing above the marker needs it), without
    # a second look at them; nodes hash by identity
    done: set[UOp] = set()
    stack: list[Any] = [root]
    push, pop, finish, emit = stack.append, stack.pop, done.add, order.append
    splice = None if kept is None else kept.get
    while stack:
        node = pop()
        if node is _EMIT:
            node = pop()
            finish(node)
            emit(node)
            continue
        if node in done:
            continue
        if splice is not None and (walked := splice(node)) is not None:
            for n in walked:
                if n not in done:
                    finish(n)
                    emit(n)
            continue
        waiting = False
        for s in reversed(node.src):
            if s not in done:
                if stop is not None and stop(s):
                    finish(s)  # pruned: counted as done, never emitted
                    continue
                if not waiting:
                    push(node)
                    push(_EMIT)
                    waiting = True
                push(s)
        if not waiting:
            finish(node)
            emit(node)
    return order


_EMIT: Any = object()  # toposort's marker: the node under it has its sources done
# the orders `keep_order` keeps, each as long as its root lives (weakly keyed: a kept order
# holds the nodes under its root, which the root holds alive anyway, and goes when it goes)
_orders: weakref.WeakKeyDictionary[UOp, list[UOp]] = weakref.WeakKeyDictionary()


def order_of(root: UOp, done: set[UOp] | None = None) -> list[UOp]:
    """`toposort(root)` (less the nodes in `done` and what is under them: `toposort(root,
    stop=done.__contains__)`), from the order `keep_order` kept when it did."""
    order = _orders.get(root)
    if order is None:
        return toposort(root) if done is None else toposort(root, stop=done.__contains__)
    if done is None:
        return order + [root]
    if root in done:
        return []
    # (a node under a done one is done too: what is left keeps sources before users)
    return [n for n in order if n not in done] + [root]


def is_kept(root: UOp) -> bool:
    """Whether `keep_order` kept root's walk."""
    return root in _orders


def keep_order(root: UOp, order: list[UOp]) -> None:
    """Keep `order`, root's `toposort`, for `order_of`: backward walks a loss's graph, and the
    realize of its optimizer step walks it again to find the values that keep a graph for a
    gradient (runtime/origins.py's `watch`). (Root itself is left out of the kept list: the
    weak key would never die.)"""
    _orders[root] = order[:-1]


def build_recorded(entries: Iterable[tuple], built: list[UOp]) -> None:
    """Append to `built` a node per entry (op, dtype, arg, tag, refs, shape), its sources the
    nodes of `built` at its refs, and its shape the one recorded when it is not derived yet
    (runtime/gradient_forms.py rebuilds a recorded gradient this way: no walk derives the
    shapes again)."""
    add, pick = built.append, built.__getitem__
    for op, dtype, arg, tag, refs, shape in entries:
        node = new_uop(UOp, op, dtype, tuple(map(pick, refs)), arg, tag)
        if node._shape is _UNSET:
            node._shape = shape
        add(node)


def fill_facts(root: UOp, slot: str, derive: Callable[[UOp], Any]) -> Any:
    """The fact a node caches in `slot` (UNSET until derived; `derive(node)` reads its
    sources'), filled in for `root` and every node under it that lacks it, sources first, and
    root's returned. Iterative; the fact itself marks a node done, so the walk needs no seen-set
    and stops where facts are known (a node is pushed once per user that finds it missing)."""
    stack = [root]
    pop, push = stack.pop, stack.append
    while stack:
        node = stack[-1]
        if getattr(node, slot) is not _UNSET:
            pop()
            continue
        pending = False
        for s in node.src:
            if getattr(s, slot) is _UNSET:
                push(s)
                pending = True
        if not pending:
            setattr(node, slot, derive(node))
            pop()
    return getattr(root, slot)


def _fill_shape(root: UOp) -> Shape | None:
    """fill_facts(root, "_shape", _derive_shape), with the slot read in place (a rule's
    constant asks the shape of the node it replaces, often one a rewrite has just built)."""
    stack = [root]
    pop, push = stack.pop, stack.append
    while stack:
        node = stack[-1]
        if node._shape is not _UNSET:
            pop()
            continue
        pending = False
        for s in node.src:
            if s._shape is _UNSET:
                push(s)
                pending = True
        if not pending:
            node._shape = _derive_shape(node)
            pop()
    return root._shape


def _fill_bounds(root: UOp) -> tuple[Any, Any]:
    """fill_facts(root, "_bounds", _derive_bounds), with the slot read in place (guards read
    bounds of nodes a rewrite has just built: this runs for most of them)."""
    stack = [root]
    pop, push = stack.pop, stack.append
    while stack:
        node = stack[-1]
        if node._bounds is not _UNSET:
            pop()
            continue
        pending = False
        for s in node.src:
            if s._bounds is _UNSET:
                push(s)
                pending = True
        if not pending:
            node._bounds = _derive_bounds(node)
            pop()
    return root._bounds


def substitute(root: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """root with every node in `mapping` replaced (the replacements themselves not revisited)."""
    if not mapping:
        return root
    if root in mapping:
        return mapping[root]
    # the replacements seed the table, so a source's new form is one lookup; the walk's stop
    # and the rebuild call C methods, not a Python frame per node (upcast substitutes a RANGE
    # under every node of a kernel: a 1.25M-op chain's whole graph)
    new: dict[UOp, UOp] = dict(mapping)
    get = new.get
    # while answers are kept (an optimized kernel), root's whole walk, kept or kept from here:
    # the helpers substitute in the same value again and again (a loop's index at its first
    # and last trip), and what a replaced node hides is a few nodes (a RANGE's bound); nodes
    # under a replaced node are rebuilt for nothing, never read
    kept = _kept_get()
    if kept is None:
        order = _toposort(root, mapping.__contains__)
    elif (order := kept.get(root)) is None:
        order = kept[root] = _toposort(root, None, kept)
    # (only a node with a changed source is rebuilt and entered: most are left as they are)
    changed = new.__contains__
    for node in order:
        src = node.src
        if any(map(changed, src)) and node not in mapping:
            new[node] = new_uop(UOp, node.op, node.dtype, tuple([get(s, s) for s in src]),
                                node.arg, node.tag)
    return get(root, root)


def print_graph(root: UOp) -> str:
    """The compact printed form: one line per node, `%n = OP dtype arg (srcs)`."""
    names: dict[UOp, str] = {}
    lines = []
    for node in toposort(root):
        names[node] = f"%{len(names)}"
        srcs = ", ".join(names[s] for s in node.src)
        arg = "" if node.arg is None else f" {node.arg!r}"
        tag = "" if node.tag is None else f" tag={node.tag!r}"
        lines.append(f"{names[node]} = {node.op.name} {node.dtype.name}{arg}{tag} ({srcs})")
    return "\n".join(lines)


_INFIX = {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.IDIV: "//", Ops.MOD: "%",
          Ops.FDIV: "/", Ops.CMPLT: "<", Ops.CMPNE: "!=", Ops.CMPEQ: "==", Ops.AND: "&",
          Ops.OR: "|", Ops.XOR: "^"}


def render_expr(root: UOp) -> str:
    """An index expression as text: `(r0*4+r1)`; other ops print as calls."""
    text: dict[UOp, str] = {}
    for n in toposort(root):
        s = [text[x] for x in n.src]
        if n.op is Ops.CONST:
            text[n] = repr(n.arg)
        elif n.op is Ops.RANGE:
            text[n] = f"r{n.arg[0]}"
        elif n.op is Ops.DEFINE_VAR:
            text[n] = str(n.arg[0])
        elif n.op in _INFIX and len(s) == 2:
            text[n] = f"({s[0]}{_INFIX[n.op]}{s[1]})"
        elif n.op is Ops.WHERE:
            text[n] = f"({s[0]}?{s[1]}:{s[2]})"
        else:
            text[n] = f"{n.op.name.lower()}({', '.join(s)})"
    return text[root]


# ---------------------------------------------------------------------- shapes
_SAME_SHAPE = frozenset({Ops.CONTIGUOUS, Ops.CONTIGUOUS_BACKWARD, Ops.DETACH, Ops.FUSE,
                         Ops.REALIZE, Ops.COPY, Ops.ASSIGN, Ops.NOOP, Ops.CHILD, Ops.CHILDREN,
                         Ops.BUFFER_VIEW, Ops.MSTACK, Ops.MSELECT})


def _derive_shape(n: UOp) -> Shape | None:
    op, arg = n.op, n.arg
    if op in _Elementwise:  # the most common op by far; no op tested below is one
        for s in n.src:  # both callers derive the sources' shapes first
            if s._shape is None:
                return None
        return n.src[0]._shape
    if op is _BUFFER:
        return (arg.size,)
    if op in (_CONST, _DEFINE_VAR, _BIND):
        return ()
    if op in (_RESHAPE, _EXPAND):
        return arg
    if op is _VIEW:
        return arg.shape
    if op in _SAME_SHAPE:
        return n.src[0].shape
    if op is _MULTI:  # arg (axis, devices): the shards joined along axis (None: replicas)
        shape, axis = n.src[0].shape, arg[0]
        if axis is None or shape is None:
            return shape
        return shape[:axis] + (shape[axis] * len(arg[1]),) + shape[axis + 1:]
    if op in _Movement:
        shape = n.src[0].shape
        if op is _PERMUTE:
            return tuple(shape[i] for i in arg)
        if op is _PAD:
            return tuple(s if b == a == 0 else s + b + a for s, (b, a) in zip(shape, arg))
        if op is _SHRINK:
            return tuple(e if b == 0 else e - b for b, e in arg)  # (0, v): v itself
        return shape  # FLIP
    if op is _REDUCE_AXIS:
        shape = n.src[0].shape
        return tuple([1 if i in arg[1] else s for i, s in enumerate(shape)])
    if op is _BUFFERIZE:
        return tuple(int(r.vmax) + 1 for r in n.src[1:] if r.op is not _CONST)
    return None


# ---------------------------------------------------------------------- bounds
def _idiv_trunc(a: int, b: int) -> int:
    """a // b rounded toward zero, exactly (C's integer division)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_bounds_of = operator.attrgetter("_bounds")


def _derive_bounds(n: UOp) -> tuple[Any, Any]:
    """Conservative [vmin, vmax] of an integer or bool expression."""
    op, dt = n.op, n.dtype
    if op is _CONST:
        return (n.arg, n.arg)
    if op is _RANGE:
        return (0, n.src[0].vmax - 1)
    if op is _DEFINE_VAR:
        return (n.arg[1], n.arg[2])
    if op is _BIND:
        return n.src[0]._bounds_()
    if dt.kind not in "iuxb":  # neither an integer nor a bool: a float, or a kernel's void
        return (-math.inf, math.inf)  # (an int load's ASSIGN reads its KERNEL: no bounds there)
    # both callers derive the sources' bounds first (map, not a comprehension: no frame)
    s = tuple(map(_bounds_of, n.src))
    if op is _ADD:
        lo, hi = s[0][0] + s[1][0], s[0][1] + s[1][1]
    elif op is _SUB:
        lo, hi = s[0][0] - s[1][1], s[0][1] - s[1][0]
    elif op is _NEG:
        lo, hi = -s[0][1], -s[0][0]
    elif op is _MUL:
        (a0, a1), (b0, b1) = s
        corners = (a0 * b0, a0 * b1, a1 * b0, a1 * b1)
        lo, hi = min(corners), max(corners)
    elif op is _IDIV and s[1][0] == s[1][1] and s[1][0] != 0:
        c = s[1][0]
        a0, a1 = _idiv_trunc(s[0][0], c), _idiv_trunc(s[0][1], c)  # monotonic in the dividend
        lo, hi = (a0, a1) if a0 <= a1 else (a1, a0)
    elif op is _MOD and s[1][0] == s[1][1] and s[1][0] > 0:
        c = s[1][0]
        if s[0][0] >= 0 and s[0][1] < c:
            lo, hi = s[0]
        elif s[0][0] >= 0:
            lo, hi = 0, c - 1
        else:
            lo, hi = -(c - 1), c - 1
    elif op is _MAX:
        lo, hi = max(s[0][0], s[1][0]), max(s[0][1], s[1][1])
    elif op is _MIN:
        lo, hi = min(s[0][0], s[1][0]), min(s[0][1], s[1][1])
    elif op is _WHERE and n.src[2].op is _INVALID:
        lo, hi = s[1]  # an invalid index is never used, so only the valid branch bounds it
    elif op is _WHERE and n.src[1].op is _INVALID:
        lo, hi = s[2]
    elif op is _WHERE:
        lo, hi = min(s[1][0], s[2][0]), max(s[1][1], s[2][1])
    elif op is _CMPLT:
        lo, hi = s[0][1] < s[1][0], s[0][0] < s[1][1]
    elif op is _CMPNE:
        disjoint = s[0][1] < s[1][0] or s[1][1] < s[0][0]
        same = s[0][0] == s[0][1] == s[1][0] == s[1][1]
        lo, hi = disjoint, not same
    elif op is _CMPEQ:
        disjoint = s[0][1] < s[1][0] or s[1][1] < s[0][0]
        same = s[0][0] == s[0][1] == s[1][0] == s[1][1]
        lo, hi = same, not disjoint
    elif op is _AND and dt.kind == "b":
        lo, hi = s[0][0] and s[1][0], s[0][1] and s[1][1]
    elif op is _OR and dt.kind == "b":
        lo, hi = s[0][0] or s[1][0], s[0][1] or s[1][1]
    elif op is _CAST and n.src[0].dtype.is_int and dt.is_int:
        lo, hi = s[0]
    elif op is _SHR and s[1][0] == s[1][1] and s[1][0] >= 0:
        # a shift right by a constant is a floor division by a power of two: monotonic
        # (lower.rules' idiv_pow2 makes an index's // 2^k one; the peel action reads its bounds)
        lo, hi = s[0][0] >> s[1][0], s[0][1] >> s[1][0]
    else:
        return (dt.min, dt.max)
    if dt.kind == "b":
        return (bool(lo), bool(hi))
    # a fixed-width result outside its type wraps around, so any value is possible
    # (index math is 64-bit and assumed never to overflow)
    if dt is not _index and (lo < dt.min or hi > dt.max):
        return (dt.min, dt.max)
    return (lo, hi)
