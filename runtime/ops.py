"""The op vocabulary of the UOp IR, and the named op groups that rules use (`Movement(x)`).

Names follow tinygrad's so that a rule reads like the pass it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, EnumType, auto
from typing import Any


class Ops(Enum):
    # -- graph structure
    SINK = auto()
    NOOP = auto()
    GROUP = auto()
    # -- tensor sources and devices
    BUFFER = auto()       # arg: the Buffer (storage, hashed by identity); shape (size,)
    DEVICE = auto()
    UNIQUE = auto()
    CONST = auto()        # arg: the Python value (bool, int or float)
    DEFINE_VAR = auto()   # arg: (name, min, max); a symbolic integer
    BIND = auto()         # src: (DEFINE_VAR, CONST)
    # -- movement ops (arg: the movement's argument; shapes are derived from them)
    RESHAPE = auto()      # arg: new shape
    PERMUTE = auto()      # arg: permutation
    EXPAND = auto()       # arg: new shape
    PAD = auto()          # arg: ((before, after), ...)
    SHRINK = auto()       # arg: ((start, end), ...)
    FLIP = auto()         # arg: tuple of bools, one per axis
    # -- tensor-level markers
    CONTIGUOUS = auto()
    CONTIGUOUS_BACKWARD = auto()
    DETACH = auto()
    FUSE = auto()
    REALIZE = auto()
    COPY = auto()         # src: (x, DEVICE)
    BUFFER_VIEW = auto()
    ASSIGN = auto()       # src: (target, value)
    MSELECT = auto()      # src: (x,); arg: i. Part i of a value on several devices
    MSTACK = auto()       # src: one value per device; arg: the devices. Those parts as one value
    MULTI = auto()        # src: (x,); arg: (axis, devices). x's parts joined along axis (None:
                          # each part is the whole value): a sharded tensor
    REDUCE_AXIS = auto()  # arg: (reduce op, axes[, start]); reduced axes keep size 1
    CHILD = auto()
    CHILDREN = auto()
    # -- scheduler / kernel level
    BUFFERIZE = auto()    # src: (value, *ranges); arg: its device, or a Placed (below)
    RANGE = auto()        # src: (size,); arg: (axis id, axis type)
    END = auto()
    INDEX = auto()        # src: (buffer, *indices) or (buffer, index, valid)
    LOAD = auto()
    STORE = auto()        # src: (index, value, *ranges); arg: a BUFFERIZE's Placed order
    REDUCE = auto()       # src: (value, *reduce ranges); arg: reduce op
    DEFINE_GLOBAL = auto()
    DEFINE_LOCAL = auto()
    DEFINE_REG = auto()
    KERNEL = auto()
    IF = auto()
    ENDIF = auto()
    INVALID = auto()      # the value of an index outside a PAD's valid region
    # -- unary ALU
    CAST = auto()
    BITCAST = auto()
    NEG = auto()
    EXP = auto()
    LOG = auto()
    EXP2 = auto()
    LOG2 = auto()
    SIN = auto()
    SQRT = auto()
    RECIPROCAL = auto()
    TRUNC = auto()
    # -- binary ALU
    ADD = auto()
    SUB = auto()
    MUL = auto()
    FDIV = auto()         # true division (floats)
    IDIV = auto()         # integer division, truncating toward zero (C semantics)
    MOD = auto()          # remainder with the sign of the dividend (C semantics)
    MAX = auto()
    MIN = auto()
    POW = auto()
    CMPLT = auto()
    CMPNE = auto()
    CMPEQ = auto()
    AND = auto()
    OR = auto()
    XOR = auto()
    SHL = auto()
    SHR = auto()
    # -- ternary ALU
    WHERE = auto()
    MULACC = auto()
    # -- the kernelize scheduler's views (runtime/view.py); last, so no other op renumbers
    VIEW = auto()         # src: (base,); arg: the ShapeTracker the base is read through
    # -- unary ALU added after VIEW (so that no op renumbers)
    COS = auto()          # the C library's cos: sin(pi/2 - x) and 1 - 2 sin(x/2)^2 were not

    # members are singletons: identity hashing is exact, and C-level instead of Enum's
    # Python-level hash of the name (ops are dict keys on every matcher dispatch)
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"Ops.{self.name}"

    def __lt__(self, other: Ops) -> bool:  # lets ops sort, for deterministic output
        return self.value < other.value


@dataclass(frozen=True)
class Placed:
    """A BUFFERIZE's arg when its loops run in another order than its memory's axes
    (rules/rangeify.rules' `placed`): its device, and its axes in loop order, outermost first.
    kernel.rules' to_store gives the order to the STORE, whose kernel loops so; the buffer's
    offsets and its readers' indices keep the memory's order."""

    device: Any
    order: tuple[int, ...]


class _OpsType(type):
    """Enum's metaclass without its `__getattr__`. On Python 3.11 a metaclass that defines
    `__getattr__` sends every class attribute read through a Python-level call of
    `type.__getattribute__` (CPython's slot_tp_getattr_hook), so `Ops.ADD` cost ~180 ns, a
    global load ~20 ns: a tenth of a generated matcher's time per node, more of the helpers'
    (`Ops.X` is read everywhere in the hot paths; 3.12 dropped the hook). EnumType's
    `__getattr__` only falls back to `_member_map_` for members not in the class's dict, and
    every member of Ops is, so the lookup finds the same objects. Everything else of EnumType
    (Ops[name], Ops(value), iteration, len, `in`, repr, no reassignment) is the same methods."""


for _name, _attr in vars(EnumType).items():
    if _name not in ("__getattr__", "__dict__", "__weakref__", "__module__", "__qualname__",
                     "__doc__"):
        setattr(_OpsType, _name, _attr)
assert all(Ops.__dict__.get(name) is m for name, m in Ops.__members__.items())
Ops.__class__ = _OpsType  # (a class's metaclass can be swapped for one of the same layout)


# the ops printed as libm calls that may round otherwise in a vector loop (libmvec's variants,
# a few ulps from libm's): one value computed twice, once in each kind of loop, may differ
LIBM_CALLS = frozenset({Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS, Ops.POW})


class GroupOp:
    """Named sets of ops. Every attribute here is usable as a group name in `.rules` files."""

    Unary = frozenset({Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.COS,
                       Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC})
    Binary = frozenset({Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN,
                        Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR,
                        Ops.SHL, Ops.SHR})
    Ternary = frozenset({Ops.WHERE, Ops.MULACC})
    ALU = Unary | Binary | Ternary
    Elementwise = ALU | {Ops.CAST, Ops.BITCAST}
    Commutative = frozenset({Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN, Ops.CMPNE, Ops.CMPEQ, Ops.AND,
                             Ops.OR, Ops.XOR})
    Associative = frozenset({Ops.ADD, Ops.MUL, Ops.AND, Ops.OR, Ops.MAX, Ops.MIN})
    Comparison = frozenset({Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ})
    Movement = frozenset({Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP})
    Buffer = frozenset({Ops.LOAD, Ops.STORE, Ops.INDEX})
    Defines = frozenset({Ops.DEFINE_GLOBAL, Ops.DEFINE_LOCAL, Ops.DEFINE_REG})
    Meta = frozenset({Ops.DETACH, Ops.CONTIGUOUS_BACKWARD, Ops.FUSE})
    All = frozenset(Ops)


OP_GROUPS: dict[str, frozenset[Ops]] = {
    name: value for name, value in vars(GroupOp).items() if isinstance(value, frozenset)
}

REDUCE_OPS = frozenset({Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN})


def reduce_identity(op: Ops, dtype: Any) -> Any:
    """The identity of a reduce op in `dtype`: the value a reduction over no elements has
    (the smallest value of the dtype for MAX, -inf for floats; the largest for MIN)."""
    if op is Ops.ADD:
        return 0
    if op is Ops.MUL:
        return 1
    if op in (Ops.MAX, Ops.MIN):
        return dtype.min if op is Ops.MAX else dtype.max
    raise ValueError(f"{op} is not a reduce op")


def reduce_start(arg: tuple) -> Any:
    """The value a REDUCE_AXIS (arg `(op, axes[, start])`) starts from, when it is not its op's
    identity: a pick (a float sum of one marked element, the rest -0.0) starts from -0.0, the
    identity of IEEE addition, so that a picked -0.0 keeps its sign; a plain sum starts from
    +0.0, as numpy's (a sum of one -0.0 is +0.0). None: reduce_identity."""
    return arg[2] if len(arg) > 2 else None


def reduce_from(arg: tuple, dtype: Any) -> Any:
    """What a REDUCE_AXIS (arg `(op, axes[, start])`) starts from, and so its value over no
    elements: its start, else its op's identity."""
    start = reduce_start(arg)
    return reduce_identity(arg[0], dtype) if start is None else start


# how many sources an op takes, for the ops whose count is fixed (the rules checker uses it)
ARITY: dict[Ops, int] = {
    **{op: 1 for op in GroupOp.Unary}, **{op: 2 for op in GroupOp.Binary},
    Ops.WHERE: 3, Ops.MULACC: 3, Ops.CAST: 1, Ops.BITCAST: 1,
    **{op: 1 for op in GroupOp.Movement},
    Ops.REDUCE_AXIS: 1, Ops.CONTIGUOUS: 1, Ops.CONTIGUOUS_BACKWARD: 1, Ops.DETACH: 1,
    Ops.FUSE: 1, Ops.COPY: 2, Ops.ASSIGN: 2, Ops.CONST: 0, Ops.DEFINE_VAR: 0, Ops.BIND: 2,
    Ops.RANGE: 1, Ops.BUFFER: 0, Ops.DEFINE_GLOBAL: 0,
}  # (not LOAD: a gated one is LOAD(INDEX(b, off), gate, alt), rules/lower_helpers.py)
