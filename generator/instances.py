"""Draw concrete instances of a rule's left side, for the evaluation checks.

In: one rule's pattern and a source of choices (`draws.RandomData`, or hypothesis's `data`).
Out: an `Instance`: a UOp graph the pattern describes (every op chosen from its op set, every
capture a leaf or a small expression of a drawn dtype and shape), plus the values its variables
take (`var_vals` for DEFINE_VAR, `range_vals` for RANGE), so that the graph and its rewrite can
both be evaluated.

These kinds of rule are instantiated (`mode_of`):
- *scalar* rules (patterns over ALU ops, CAST, CONST, RANGE and DEFINE_VAR: the index and
  integer simplifications): leaves are bounded DEFINE_VARs (so vmin/vmax guards see real
  bounds), RANGEs, constants, or small expressions of those (`v + c`, `v % c`, ...), so the
  bounds the guards use are derived the way the scheduler derives them;
- *tensor* rules (movement ops, REDUCE_AXIS, the tensor markers, elementwise ops on tensors):
  leaves are BUFFERs of random data viewed at a drawn shape; shapes flow from the root down, so
  every movement op gets an argument valid for its source (a reshape of the same size, an
  expand from 1s, a pad that fits...);
  A VIEW is a drawn chain of movement ops folded into a ShapeTracker over a drawn source;
- *sharded* rules (patterns over MULTI/MSTACK/MSELECT): tensor rules whose every leaf is a MULTI
  of per-device buffers on 2-3 devices (sharded along an axis the devices divide, or replicated
  with equal parts), now and then a constant; inside an MSELECT, a per-device value;
- *index* rules (a root `INDEX(x, ...)`, rangeify's `INDEX(SHRINK(...), ...)` and friends):
  x is a tensor instance and each index a RANGE over its axis, bound to a drawn in-range value,
  so both sides name one element;
- *kernel* rules (a root REDUCE of kernel-level nodes): the REDUCE's value inside a kernel's
  loops (`Instance.loops`), over fresh reduce ranges, its leaves loads of parameters
  (`Instance.params`, DEFINE_GLOBAL 1, 2, ...) read row-major at the open ranges.

Draws shrink toward small shapes, `index`/`int32` dtypes and small values, so a counterexample
comes out small. The guard is not consulted here: the caller filters with `assume`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rulegrad.dsl import ast as A
from rulegrad.dsl.names import resolve_dtype, resolve_ops
from rulegrad.runtime.buffer import Buffer, Positions
from rulegrad.runtime.device import DeviceMismatch, device_of
from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.ops import ARITY, REDUCE_OPS, GroupOp, Ops
from rulegrad.runtime.uop import VARIABLE_MARK, UOp, toposort
from rulegrad.runtime.view import ShapeTracker, flatten

from . import draws as st
from .draws import assume, draw
from .smt import OPERAND_DOMAIN  # the dtypes each op computes on (runtime/semantics.py)

# ops a scalar (index-level) instance can hold, and those a tensor instance adds
# reduced axes drawn now and then: 2**15 and 2**16 for the rules that split big reductions
# (an int16 count wraps past 2**15), and for an int8, uint8 or int16 sum 257 as well (past
# 255: a count or sum wraps), and for floats (a sum of 2**k copies of x is exact in pairwise
# order, of 257 not: a rewrite of a float sum is checked where it rounds, `# check: sum`)
LARGE_REDUCES = (32768, 65536)
NARROW_REDUCES = (257, *LARGE_REDUCES)
SCALAR_OPS = GroupOp.ALU | {Ops.CAST, Ops.CONST, Ops.RANGE, Ops.DEFINE_VAR}
_MARKERS = frozenset({Ops.CONTIGUOUS, Ops.CONTIGUOUS_BACKWARD, Ops.DETACH, Ops.FUSE,
                      Ops.REALIZE, Ops.NOOP})
# the ops of sharded tensors (a MULTI of per-device parts, an MSTACK of them, an MSELECT of one)
SHARDED_OPS = frozenset({Ops.MULTI, Ops.MSTACK, Ops.MSELECT})
TENSOR_OPS = (GroupOp.Elementwise | GroupOp.Movement | _MARKERS | SHARDED_OPS
              | {Ops.REDUCE_AXIS, Ops.COPY, Ops.CONST, Ops.BUFFER, Ops.VIEW, Ops.ASSIGN})
# a kernel-level value (backends/KERNEL_AST.md): index math, loads of parameters, reductions
# (and the accumulator of a REDUCE in loop form: a sum with a start of its own, a pick's -0.0)
KERNEL_OPS = SCALAR_OPS | {Ops.REDUCE, Ops.LOAD, Ops.INDEX, Ops.DEFINE_GLOBAL, Ops.DEFINE_REG}
# the virtual devices a sharded instance's parts are drawn on
DEVICES = ("CPU", "CPU:1", "CPU:2", "CPU:3")
# dtypes, simplest first (the order hypothesis shrinks toward)
SCALAR_DTYPES = (dtypes.index, dtypes.int32, dtypes.int8, dtypes.uint8, dtypes.bool,
                 dtypes.float32, dtypes.int64, dtypes.uint32, dtypes.int16, dtypes.uint16,
                 dtypes.uint64, dtypes.float64, dtypes.float16)
TENSOR_DTYPES = tuple(d for d in SCALAR_DTYPES if d is not dtypes.index)


class CannotInstantiate(Exception):
    """The pattern mentions ops no instance can be drawn for (kernel-level nodes)."""


def pattern_ops(p: A.Pattern) -> set[Ops]:
    """Every op a pattern's nodes may have."""
    out: set[Ops] = set()
    for q in A.subpatterns(p):
        if isinstance(q, A.PConst):
            out.add(Ops.CONST)
        elif isinstance(q, A.PNode):
            out |= _node_ops(q)
    return out


def mode_of(rule: A.Rule) -> str:
    """'scalar', 'tensor', 'sharded' (a tensor pattern over the nodes of sharded tensors: every
    tensor leaf is sharded too) or 'index'; raises CannotInstantiate for kernel-level
    patterns. (A 'tensor' rule no plain instance fires is also drawn 'sharded', see
    examples.py: an elementwise op over MULTIs, say.)"""
    ops = pattern_ops(rule.pattern)
    if _any_node(rule.pattern) and reads_tag(rule.guard):
        return "tensor"  # a rule over any node that reads its tag: a tagged tensor node
    if ops <= SCALAR_OPS:
        return "scalar"
    root_ops = _first_ops(rule.pattern)
    if root_ops == {Ops.REDUCE} and ops <= KERNEL_OPS:
        return "kernel"  # a kernel's REDUCE over its loads, run by the kernel interpreter
    if root_ops == {Ops.LOAD} and _load_of_index(rule.pattern) is not None:
        return "index"  # LOAD(INDEX(...)): the element the INDEX names
    if root_ops == {Ops.INDEX}:
        # an index rule: the element of a tensor-level graph at drawn in-range indices
        inner = rule.pattern
        while isinstance(inner, A.PBind):
            inner = inner.pattern
        for q in inner.srcs or ():
            for sub in _pnodes(q):
                if not _node_ops(sub) & (SCALAR_OPS | TENSOR_OPS | {Ops.BUFFERIZE}):
                    raise CannotInstantiate("an INDEX over kernel-level nodes")
        return "index"
    # an op set such as `Binary` or `All` is fine when some of its ops can be built
    for q in _pnodes(rule.pattern):
        allowed = _node_ops(q) & (SCALAR_OPS | TENSOR_OPS)
        if not allowed:
            names = ", ".join(sorted(op.name for op in _node_ops(q)))
            raise CannotInstantiate(f"no instance can be drawn for {names}")
    return "sharded" if ops & SHARDED_OPS else "tensor"


# the tags tensor nodes carry (a REALIZE's number, "realized", the fuse mark, which the
# scheduler's passes put; a variable's mark, runtime/tensor.py's `_marked`), drawn on the root
# of a rule that reads its tag
TAGS = (None, "realized", "fuse", (0,), (1, 2), (VARIABLE_MARK, 0))


def _any_node(p: A.Pattern) -> bool:
    while isinstance(p, A.PBind):
        p = p.pattern
    return isinstance(p, A.PVar) and p.dtype is None


def reads_tag(e: Any) -> bool:
    """Whether an expression (a guard) reads some node's tag."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, A.EAttr) and x.attr == "tag":
            return True
        if isinstance(x, tuple):
            stack.extend(x)
        elif hasattr(x, "__dataclass_fields__") and not isinstance(x, A.Span):
            stack.extend(getattr(x, f) for f in x.__dataclass_fields__ if f != "span")
    return False


def _load_of_index(p: A.Pattern) -> A.Pattern | None:
    """The INDEX pattern under a `LOAD(INDEX(...))` pattern, or None."""
    while isinstance(p, A.PBind):
        p = p.pattern
    if not isinstance(p, A.PNode) or not p.srcs or len(p.srcs) != 1:
        return None
    return p.srcs[0] if _first_ops(p.srcs[0]) == {Ops.INDEX} else None


def _pnodes(p: A.Pattern) -> list[A.PNode]:
    return [q for q in A.subpatterns(p) if isinstance(q, A.PNode)]


def _node_ops(q: A.PNode) -> set[Ops]:
    out: set[Ops] = set()
    for ref in q.ops:
        out |= resolve_ops(ref.name) or set()
    return out


@dataclass
class Instance:
    root: UOp
    mode: str = "scalar"
    var_vals: dict[str, int] = field(default_factory=dict)
    range_vals: dict[UOp, int] = field(default_factory=dict)
    # a kernel instance: the kernel's loops (the STORE's ranges) and its input parameters
    # (DEFINE_GLOBAL 1, 2, ...; slot 0 is the output the evaluation allocates)
    loops: tuple[UOp, ...] = ()
    params: list[np.ndarray] = field(default_factory=list)
    # each drawn Buffer's first contents: an ASSIGN writes into them when evaluated, and the
    # right side must start from what the left side started from (`restore`)
    buffers: list[tuple[Buffer, np.ndarray]] = field(default_factory=list)

    def restore(self) -> None:
        for buf, data in self.buffers:
            buf.ensure()[...] = data

    def bind_ranges(self, node: UOp) -> UOp:
        """`node` with every RANGE replaced by the CONST of its drawn value (the oracle has no
        loops; the element a range reaches is the one at that value)."""
        mapping = {r: UOp.const(r.dtype, v) for r, v in self.range_vals.items()}
        return _substitute(node, mapping) if mapping else node


def _substitute(root: UOp, mapping: dict[UOp, UOp]) -> UOp:
    # runtime.uop.substitute tests `mapping.get(s) or ...`, which a UOp's __bool__ refuses
    new: dict[UOp, UOp] = {}
    for n in toposort(root):
        if n in mapping:
            new[n] = mapping[n]
            continue
        src = tuple(new[s] for s in n.src)
        new[n] = n if src == n.src else n.replace(src=src)
    return new[root]


# ---------------------------------------------------------------------- value strategies
def rounding_ties(dt: DType) -> list[int]:
    """Integers of `dt` where a conversion to a narrower float rounds: the first integer
    each float cannot hold (2^p + 1), and at the top of `dt`'s range a tie (to the even float
    below), the integer past it (rounded up once, but down when first rounded to a wider float
    lands on the tie: int64 -> float64 -> float32) and the integer before an odd tie (the
    other way). Two of them are one float where the integers differ. Uniform draws hit these
    about once in 2^29; small ones never do."""
    if dt is dtypes.index or not dt.is_int:
        return []
    bits = dt.itemsize * 8 - (0 if dt.is_unsigned else 1)  # value bits
    out: set[int] = set()
    for p in (11, 24, 53):  # float16, float32, float64 significands, the implicit bit counted
        if p >= bits:
            continue
        e = bits - 1  # at 2^e the float's step is 2^(e-p+1): ties at 2^e + (2k+1) 2^(e-p)
        half = 1 << (e - p)
        out.update({(1 << p) + 1, (1 << e) + half, (1 << e) + half + 1, (1 << e) + 3 * half - 1})
    if not dt.is_unsigned:
        out |= {-v for v in out}
    return sorted(out)


def int_values(dt: DType) -> st.Strategy:
    """Small values mostly, the dtype's edges sometimes (where wraparound bugs live), and
    integers at a float's rounding ties (where conversions part)."""
    # index math is assumed never to overflow int64: keep its values small enough that the
    # products of a few of them stay exact
    lo, hi = (-(1 << 20), 1 << 20) if dt is dtypes.index else (int(dt.min), int(dt.max))
    small = st.integers(max(lo, -17), min(hi, 17))
    edges = st.sampled_from(sorted({lo, hi, lo + 1, hi - 1, 0}))
    ties = rounding_ties(dt)
    if not ties:
        return st.one_of(small, edges, st.integers(lo, hi))
    # twice the weight: a given conversion parts at a few of them (4 of int64's 24 for a
    # double rounding to float32), and a rule's example is its first few leaves
    tie = st.sampled_from(ties)
    return st.one_of(small, edges, st.integers(lo, hi), tie, tie)


def float_ties(dt: DType) -> list[float]:
    """Floats of `dt` where a conversion to each narrower float rounds: a tie (to the even
    value below), the float of `dt` just past it (rounded up once, but down when first rounded
    to a float between the two lands on the tie: float64 -> float32 -> float16) and the one
    just before an odd tie. Random bits land there about once in 2^12 or far less."""
    significand = {2: 11, 4: 24, 8: 53}[dt.itemsize]
    ulp = 2.0 ** (1 - significand)  # of dt, at 1
    out: list[float] = []
    for p in (11, 24):  # float16, float32 significands, the implicit bit counted
        if p < significand:
            half = 2.0 ** -p  # half the narrower float's step at 1
            out += [1 + half, 1 + half + ulp, 1 + 3 * half - ulp]
    return out + [-v for v in out]


def float_values(dt: DType) -> st.Strategy:
    width = {2: 16, 4: 32, 8: 64}[dt.itemsize]
    # the edges of the dtype too: the largest finite value (x * 2 overflows there), the
    # smallest normal and subnormal (x / 2 underflows there), as z3 may choose them
    info = np.finfo(dt.np)
    edges = st.sampled_from([float(info.max), -float(info.max), float(info.tiny),
                             float(info.smallest_subnormal)])
    special = st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan])
    options = [st.floats(width, -8, 8).map(lambda v: float(round(v))), special, edges,
               st.floats(width)]
    ties = float_ties(dt)
    if ties:
        options.append(st.sampled_from(ties))
    return st.one_of(*options)


def rule_literals(rule: A.Rule) -> tuple[Any, ...]:
    """The numbers a rule's guard, `where` names and right side are written with (`c.arg ==
    3.0`, `c.arg > -1`): where a guard on a constant's value changes its answer. Random
    constants almost never equal them, so a tensor rule guarded on one was never run. And
    the ops they name (`r.arg[0] is Ops.ADD`), which a reduction's drawn op favours."""
    out: list[Any] = []
    todo: list[Any] = [rule.guard, rule.rhs, *(e for _, e in rule.lets)]
    while todo:
        e = todo.pop()
        if isinstance(e, A.ELit):
            v = e.value
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v not in out:
                out.append(v)
        elif (isinstance(e, A.EAttr) and isinstance(e.obj, A.EOpName) and e.obj.name == "Ops"
              and e.attr in Ops.__members__ and Ops[e.attr] not in out):
            out.append(Ops[e.attr])  # `r.arg[0] is Ops.ADD`: the reduce op the guard wants
        elif isinstance(e, (tuple, list)):
            todo.extend(e)
        elif isinstance(e, A.EIndex):  # `r.arg[0]`: a position, not a value
            todo.append(e.obj)
        elif hasattr(e, "__dataclass_fields__") and not isinstance(e, A.Span):
            todo.extend(getattr(e, f) for f in e.__dataclass_fields__ if f != "span")
    return tuple(out)


def guard_values(literals: tuple[Any, ...], dt: DType) -> list[Any]:
    """Values of `dt` at and beside each literal: v and -v, and for floats v rounded to dt, the
    neighbouring floats of dt and v / 2 (a bound `c > -1` is crossed at -0.5), both zeros for
    0; for ints v - 1, v + 1 and v // 2. Those dt cannot hold are left out."""
    if dt.is_bool or not literals:
        return []
    out: list[Any] = []
    for lit in literals:
        if isinstance(lit, Ops):
            continue
        for v in (lit, -lit):
            if dt.is_float:
                f = dt.np.type
                x = f(v)
                if not np.isfinite(x) and np.isfinite(v):
                    continue
                near = [x, np.nextafter(x, f(np.inf)), np.nextafter(x, f(-np.inf)), x / f(2)]
                near += [f(0.0), f(-0.0)] if x == 0 else []
                # the literal as written too: a CONST keeps its Python value (UOp.const(float32,
                # 0.1).arg is 0.1), the Tensor API's rounded to the dtype
                out += [float(v)] + [float(y) for y in near]
            elif math.isfinite(v):
                k = math.floor(v)
                out += [w for w in (k - 1, k, k + 1, math.ceil(v), k // 2)
                        if int(dt.min) <= w <= int(dt.max)]
    keep, seen = [], set()
    for v in out:  # each once; -0.0 beside 0.0
        key = (v, math.copysign(1.0, v)) if isinstance(v, float) else (v, 1.0)
        if key not in seen:
            seen.add(key)
            keep.append(v)
    return keep


# (id(literals), dt) -> (literals, their guard_values): every instance of a rule draws its
# constants from the same literals, some 120,000 times in a `rulegrad check` of one rule set
_NEAR: dict[tuple[int, DType], tuple[tuple[Any, ...], list[Any]]] = {}


def _guard_values_of(literals: tuple[Any, ...], dt: DType) -> list[Any]:
    """`guard_values`, worked out once per rule's literals (kept here, so their id stays theirs
    while the entry is; the table is emptied past 256 entries)."""
    known = _NEAR.get((id(literals), dt))
    if known is None:
        if len(_NEAR) >= 256:
            _NEAR.clear()
        known = _NEAR[(id(literals), dt)] = (literals, guard_values(literals, dt))
    return known[1]


def interval_points(literals: tuple[Any, ...], dt: DType) -> list[Any]:
    """Points of `dt` strictly inside each interval the guard's numbers (and their negations)
    cut the line into: its midpoint and, for ints or when one lies inside, an integer. A rule
    wrong only inside a guard's interval (c = 3 of `c.arg > 2 and c.arg < 4`) is not reached
    from the boundaries and their neighbours."""
    if dt.is_bool:
        return []
    ends: set[float] = set()
    for lit in literals:
        if not isinstance(lit, Ops) and math.isfinite(lit):
            for v in (lit, -lit):
                x = dt.np.type(v) if dt.is_float else v
                if (np.isfinite(x) if dt.is_float else int(dt.min) <= v <= int(dt.max)):
                    ends.add(float(x))
    out: list[Any] = []
    bounds = sorted(ends)
    for a, b in zip(bounds, bounds[1:], strict=False):
        mid = a / 2 + b / 2
        whole = math.floor(mid)
        if dt.is_float:
            x = float(dt.np.type(mid))
            out += [x] if a < x < b else []
            out += [float(whole)] if a < whole < b and float(dt.np.type(whole)) == whole else []
        elif a < whole < b:
            out.append(whole)
    return list(dict.fromkeys(out))


def special_floats(dt: DType) -> list[float]:
    """The floats of `dt` where rounding, underflow and overflow part two formulas: both ends
    of the subnormals, the smallest normal, the largest finite value (each of either sign),
    -0.0, NaN and both infinities."""
    info = np.finfo(dt.np)
    sub = float(info.smallest_subnormal)
    ends = [sub, float(info.tiny) - sub, float(info.tiny), float(info.max)]
    return ends + [-v for v in ends] + [-0.0, math.nan, math.inf, -math.inf]


def scalar_values(dt: DType) -> st.Strategy:
    if dt.is_bool:
        return st.booleans()
    if dt.is_float:
        return float_values(dt)
    return int_values(dt)


def _random_array(seed: int, size: int, dt: DType) -> np.ndarray:
    """Buffer contents: random values with the interesting ones mixed in."""
    rng = np.random.default_rng(seed)
    if dt.is_bool:  # a quarter of the time all true: a count as long as its axis
        return rng.integers(0, 2, size).astype(bool) | (rng.random() < 0.25)
    if dt.is_float:
        data = rng.normal(0, 4, size).round(1)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0])
        mask = rng.random(size) < 0.2
        data[mask] = rng.choice(specials, int(mask.sum()))
        ties = float_ties(dt)
        if ties:  # where a conversion to a narrower float rounds
            near = rng.random(size) < 0.1
            data[near] = rng.choice(np.array(ties), int(near.sum()))
        return data.astype(dt.np)
    info = np.iinfo(dt.np)
    data = rng.integers(max(info.min, -9), min(info.max, 9), size, dtype=dt.np, endpoint=True)
    edges = rng.random(size) < 0.1
    data[edges] = rng.choice(np.array([info.min, info.max], dtype=dt.np), int(edges.sum()))
    ties = rounding_ties(dt)
    if ties:  # where a conversion to float rounds (and two such integers become one float)
        near = rng.random(size) < 0.1
        data[near] = rng.choice(np.array(ties, dtype=dt.np), int(near.sum()))
    return data


# ---------------------------------------------------------------------- the instance builder
class Builder:
    """Draws one instance of a pattern: `Builder(data, mode).build(pattern)`."""

    def __init__(self, data: Any, mode: str, literals: tuple[Any, ...] = (),
                 tag_root: bool = False, swept: Any = None):
        self.data, self.mode = data, mode
        # a sweep instance (examples.py): (a joint.JointSweep, its index k); its guarded
        # constants take the k-th joint assignment, its first other leaf the k-th leaf value
        self.swept = swept
        self.assignment: dict[str, Any] | None = None
        self.leaf_count = 0  # unguarded leaves given a sweep value so far
        self.naming: str | None = None  # the name a CONST being built is bound to
        self.tag_root = tag_root  # the rule reads a tag: the root gets one of TAGS
        self.literals = literals  # the numbers the rule's guard and right side are written with
        self.edge: bool | None = None  # an edge instance (see `scalar`), decided at first use
        self.bound: dict[str, UOp] = {}
        self.inst = Instance(UOp.const(dtypes.index, 0))
        self._ids = itertools.count()
        self.ints: dict[DType, list[int]] = {}  # the integers drawn so far, per dtype
        self.floats: dict[DType, list[float]] = {}  # ... and the floats
        # the divisors an index sum drawn so far invites (`_index_sum`): its coefficients, their
        # multiples, its largest value and one past it
        self.divisors: list[int] = []
        # a sharded instance: the devices every sharded leaf is laid over, and the kind of leaf
        # inside an MSELECT (a per-device value: `_PER_DEVICE_ANY` leaves, or MSTACKs only)
        self.devices: tuple[str, ...] = ()
        self.per_device = _NOT_PER_DEVICE
        self.axis_choice = 0
        self.ranges: list[UOp] = []  # a kernel instance: the ranges open where a node is built
        self.reduce_ranges: list[UOp] = []  # ... and those of the innermost REDUCE
        self.broadcast = False  # a kernel pattern naming a RANGE: some loads skip the REDUCE's
        self.indexed = False  # building the tensor an index instance reads (a BUFFERIZE may be)

    def draw(self, strategy: st.Strategy) -> Any:
        return draw(self.data, strategy)

    def scalar(self, dt: DType, guarded: bool = False, name: str | None = None) -> Any:
        """A constant's value of `dt`: when the rule is written with numbers, a quarter of the
        time one of them as written, a quarter of the time one beside it (`guard_values`).
        A third of the instances of such a rule are *edge* instances: a pattern's CONST
        (`guarded`, what the guard reads) is at a boundary, beside it or inside an interval
        (`interval_points`), and every other float leaf is one of `special_floats`, so a rule
        wrong only at a subnormal x with c inside the guard is met within the default count.
        A sweep instance's values are the sweep's (`swept_value`)."""
        if self.swept is not None:
            return self.swept_value(dt, guarded, name)
        if dt is dtypes.index and self.divisors and self.draw(st.integers(0, 2)):
            return self.draw(st.sampled_from(self.divisors))  # (a sum's divisor: see _index_sum)
        near = _guard_values_of(self.literals, dt)
        if self.edge is None:
            self.edge = bool(self.literals) and self.draw(st.integers(0, 2)) == 0
        if self.edge and guarded and near:
            inside = interval_points(self.literals, dt)
            if inside and self.draw(st.integers(0, 2)):
                return self.draw(st.sampled_from(inside))
            return self.draw(st.sampled_from(near))
        if self.edge and not guarded and dt.is_float:
            return self._opposite_earlier(dt, self.draw(st.sampled_from(special_floats(dt))))
        if near:
            pick = self.draw(st.integers(0, 3))
            exact = [v for v in self.literals if not isinstance(v, Ops) and _literal_fits(v, dt)
                     and (dt.is_float or int(dt.min) <= v <= int(dt.max))]
            if pick == 0 and exact:
                return self.draw(st.sampled_from(exact))
            if pick <= 1:
                return self.draw(st.sampled_from(near))
        v = self.draw(scalar_values(dt))
        if dt.is_float and not guarded:
            return self._opposite_earlier(dt, v)
        return self._near_earlier(dt, v, int(dt.min), int(dt.max)) if dt.is_int else v

    def swept_value(self, dt: DType, guarded: bool, name: str | None) -> Any:
        """A constant of a sweep instance: a guarded one its value in the k-th assignment of
        the plan of the first guarded constant's dtype (joint.py); the first other one the
        k-th of the dtype's leaf values, the later ones one of them at random."""
        sweep, k = self.swept
        if guarded and name in sweep.names:
            if self.assignment is None:
                plan = sweep.plan(dt)
                assume(plan)
                self.assignment = plan[(k // sweep.stride) % len(plan)]
            value = sweep.fit(self.assignment[name], dt)
            assume(value is not None)
            return value
        leaves = sweep.leaf_values(dt)
        self.leaf_count += 1
        if self.leaf_count == 1:
            return leaves[k % len(leaves)]
        if self.leaf_count == 2 and dt.is_float and self.draw(st.integers(0, 1)) == 0:
            return -leaves[k % len(leaves)]  # the first's opposite: see _opposite_earlier
        return self.draw(st.sampled_from(leaves))

    def _either_zero(self, value: Any, dt: DType) -> Any:
        """A float CONST a pattern's literal 0 matches: +0.0 or -0.0, since the matcher compares
        with == and -0.0 == 0.0 (`SUB(x, 0.0) -> x` is wrong only at the -0.0 it also matches)."""
        if dt.is_float and not isinstance(value, bool) and value == 0:
            return self.draw(st.sampled_from((0.0, -0.0)))
        return value

    def _opposite_earlier(self, dt: DType, v: float) -> float:
        """`v`, or now and then an earlier float of `dt` or its negation: floats drawn apart
        are almost never equal or opposite, and x*c + y*c -> (x + y)*c is wrong only where
        x*c and y*c overflow to opposite infinities (x = -y = the largest finite float,
        c = 2: NaN against 0), z3 gave up on it and 114 independent draws had passed it."""
        earlier = self.floats.setdefault(dt, [])
        if earlier and self.draw(st.integers(0, 2)) == 0:
            v = self.draw(st.sampled_from(earlier)) * self.draw(st.sampled_from((1.0, -1.0)))
        earlier.append(v)
        return v

    def _near_earlier(self, dt: DType, v: int, lo: int, hi: int) -> int:
        """`v`, or now and then an earlier integer of `dt` or its neighbour: values drawn
        apart are almost never equal or one apart, and x, x + 1 past 2^53 are one float64
        (a comparison through a cast), x, x a tie."""
        if dt is dtypes.index:
            return v
        earlier = self.ints.setdefault(dt, [])
        if earlier and self.draw(st.integers(0, 2)) == 0:
            near = self.draw(st.sampled_from(earlier)) + self.draw(st.sampled_from((-1, 0, 1)))
            v = near if lo <= near <= hi else v
        earlier.append(v)
        return v

    def build(self, pattern: A.Pattern) -> Instance:
        self.inst.mode = self.mode
        if self.mode == "index":
            self.inst.root = self._index_root(pattern)
            return self.inst
        if self.mode == "kernel":  # up to 2 loops of 1..4 iterations around the value
            sizes = self.draw(st.lists(st.integers(1, 4), self.draw(st.integers(0, 2))))
            self.inst.loops = tuple(self._kernel_range(n, "loop") for n in sizes)
            self.ranges = list(self.inst.loops)
            self.broadcast = Ops.RANGE in pattern_ops(pattern)
        dtypes_ = SCALAR_DTYPES if self.mode == "scalar" else TENSOR_DTYPES
        dt = self._pick_dtype(_pattern_dtypes(pattern), dtypes_, _first_ops(pattern))
        shape = () if self.mode == "scalar" else self._shape()
        if _reduces_at_root_shape(pattern) and 1 not in shape:
            # a reduction keeps its reduced axes as 1s: a root without one is no instance, and
            # most drawn shapes have none (a rule guarded on its op then ran once in a hundred;
            # under a CAST of the sum, as a narrow accumulator's rule is, never)
            at = self.draw(st.integers(0, len(shape)))
            shape = shape[:at] + (1,) + shape[at + 1:]
        if self.mode == "sharded":  # 2 or 3 devices, in any order; a preferred sharded axis
            self.devices = tuple(self.draw(st.permutations(DEVICES)))[:self.draw(st.integers(2, 3))]
            self.axis_choice = self.draw(st.integers(0, 3))
        if self.mode == "tensor" and _any_node(pattern):  # a leaf or a movement op, tagged
            root = self.leaf(dt, shape, "x") if self.draw(st.booleans()) else self._movement(
                self.draw(st.sampled_from(sorted(GroupOp.Movement))), None, dt, shape, None, None)
            self.inst.root = root.replace(tag=self.draw(st.sampled_from(TAGS)))
        else:
            self.inst.root = self.node(pattern, dt, shape)
            if self.tag_root and self.mode == "tensor":
                self.inst.root = self.inst.root.replace(tag=self.draw(st.sampled_from(TAGS)))
        if self.devices:
            try:  # a graph whose sources sit on different devices is no program
                device_of(self.inst.root)
            except DeviceMismatch:
                assume(False)
        return self.inst

    def _index_root(self, pattern: A.Pattern) -> UOp:
        """INDEX(x, i0, ..., in): x a tensor-level instance of the first source pattern, each
        index a RANGE over its axis (the constant 0 on an axis of size 1, as rangeify makes)."""
        name = None
        while isinstance(pattern, A.PBind):
            name, pattern = pattern.name, pattern.pattern
        assert isinstance(pattern, A.PNode)
        inner = _load_of_index(pattern)
        if inner is not None:  # LOAD(INDEX(...)): a load of the element
            idx = self._index_root(inner)
            load = UOp(Ops.LOAD, idx.dtype, (idx,), self._fixed(pattern.arg),
                       self._fixed(pattern.tag))
            if name is not None:
                self.bound[name] = load
            return load
        pats = list(pattern.srcs or ())
        assume(pats)
        ndim = len(pats) - 1
        if pattern.ellipsis or pattern.srcs is None:
            ndim = self.draw(st.integers(ndim, max(ndim, 3)))
        elif len(pats) == 3:  # the kernel form INDEX(buffer, offset, valid): a flat buffer
            return self._kernel_index(pattern, pats, name)
        self.mode, self.indexed = "tensor", True
        dt = self._pick_dtype(None, TENSOR_DTYPES)
        shape = self._shape(ndim)
        x = self.node(pats[0], dt, shape)
        self.mode, self.indexed = "scalar", False
        idxs = []
        for d, size in enumerate(shape):
            if d + 1 < len(pats):
                idxs.append(self.node(pats[d + 1], dtypes.index, ()))
            elif size == 1:
                idxs.append(UOp.const(dtypes.index, 0))
            else:
                idxs.append(self._range(UOp.const(dtypes.index, size), dtypes.index))
        root = UOp(Ops.INDEX, dt, (x, *idxs), self._fixed(pattern.arg), self._fixed(pattern.tag))
        if name is not None:
            self.bound[name] = root
        self.mode = "index"
        return root

    def _kernel_index(self, pattern: A.PNode, pats: list, name: str | None) -> UOp:
        self.mode = "tensor"
        dt = self._pick_dtype(None, TENSOR_DTYPES)
        size = self.draw(st.integers(1, 8))
        b = self.node(pats[0], dt, (size,))
        self.mode = "scalar"
        off = self.node(pats[1], dtypes.index, ())
        valid = self.node(pats[2], dtypes.bool, ())
        root = UOp(Ops.INDEX, dt, (b, off, valid), self._fixed(pattern.arg),
                   self._fixed(pattern.tag))
        if name is not None:
            self.bound[name] = root
        self.mode = "index"
        return root

    # -- choices
    def _shape(self, ndim: int | None = None) -> tuple[int, ...]:
        n = self.draw(st.integers(0, 3)) if ndim is None else ndim
        # now and then an empty axis (size-0 tensors have rules of their own); shrinks to 1..4
        dim = st.integers(0, 7).flatmap(lambda k: st.just(0) if k == 7 else st.integers(1, 4))
        return tuple(self.draw(st.lists(dim, n)))

    def _pick_dtype(self, allowed: frozenset[DType] | None, order: tuple[DType, ...],
                    ops: set[Ops] | None = None) -> DType:
        choices = [d for d in order if allowed is None or d in allowed]
        if ops:  # the root's ops compute on some dtypes only (IDIV: ints, FDIV: floats)
            fits = [d for d in choices if any(_op_accepts(op, d) for op in ops)]
            choices = fits or choices
        assume(choices)
        return self.draw(st.sampled_from(choices))

    # -- patterns
    def node(self, p: A.Pattern, dt: DType, shape: tuple[int, ...]) -> UOp:
        if isinstance(p, A.PBind):
            if p.name in self.bound:
                return self._reuse(p.name, dt, shape)
            self.naming = p.name if isinstance(p.pattern, A.PNode) else None
            u = self.node(p.pattern, dt, shape)
            self.bound[p.name] = u
            return u
        if isinstance(p, A.PVar):
            _require(p.dtype, dt)
            if p.name is not None and p.name in self.bound:
                return self._reuse(p.name, dt, shape)
            u = self.leaf(dt, shape, p.name or "w")
            if p.name is not None:
                self.bound[p.name] = u
            return u
        if isinstance(p, A.PConst):
            _require(p.dtype, dt)
            assume(_literal_fits(p.value, dt) and (self.mode == "scalar" or shape == ()))
            return UOp.const(dt, self._either_zero(p.value, dt))
        return self.pnode(p, dt, shape)

    def _reuse(self, name: str, dt: DType, shape: tuple[int, ...]) -> UOp:
        u = self.bound[name]
        assume(u.dtype is dt and (self.mode == "scalar" or u.shape == shape))
        return u

    def pnode(self, p: A.PNode, dt: DType, shape: tuple[int, ...]) -> UOp:
        name, self.naming = self.naming, None  # (`c:CONST`: the name this node is bound to)
        _require(p.dtype, dt)
        usable = {"scalar": SCALAR_OPS, "kernel": KERNEL_OPS}.get(self.mode,
                                                                 TENSOR_OPS | SCALAR_OPS)
        if self.indexed:  # the tensor an INDEX reads may be one of rangeify's buffers
            usable = usable | {Ops.BUFFERIZE}
        ops = sorted(op for op in _node_ops(p) & usable if _op_accepts(op, dt))
        assume(ops)
        op = self.draw(st.sampled_from(ops))
        arg = self._fixed(p.arg)
        tag = self._fixed(p.tag)
        srcs = list(p.srcs or ())
        if op is Ops.CONST:
            assume(self.mode == "scalar" or shape == ())  # a CONST has shape ()
            value = (self._either_zero(arg, dt) if p.arg is not None
                     else self.scalar(dt, True, name))
            return UOp.const(dt, value)
        if op is Ops.RANGE:
            return self._range(srcs[0] if srcs else None, dt)
        if op is Ops.REDUCE and self.mode == "kernel":
            return self._kernel_reduce(srcs, dt, arg, tag)
        if op is Ops.DEFINE_REG and self.mode == "kernel":
            return self._kernel_acc(dt, arg)
        if op is Ops.DEFINE_VAR:
            return self._var(dt)
        if op is Ops.BUFFER:  # memory itself: a flat buffer
            assume(len(shape) == 1)
            return self._buffer(dt, shape).base
        if op is Ops.VIEW:
            assume(len(srcs) <= 1)
            return self._view(srcs[0] if srcs else None, dt, shape, tag)
        if op is Ops.BUFFERIZE and self.mode == "tensor" and self.indexed:
            return self._bufferize(srcs, dt, shape, arg, tag)
        if op in SHARDED_OPS or op is Ops.ASSIGN:
            return self._sharded_node(op, srcs, dt, shape, arg, tag)
        want = ARITY.get(op, 1 if op in _MARKERS else None)
        if want is None or (p.srcs is not None and not p.ellipsis and len(srcs) != want):
            assume(False)
        if len(srcs) > want:
            assume(False)
        pats: list[A.Pattern | None] = list(srcs) + [None] * (want - len(srcs))
        # the matcher must find the pattern in either order: build the sources in the written
        # order (so names bind where the pattern binds them), then maybe swap them
        swap = p.commutative and len(pats) == 2 and self.draw(st.booleans())
        if op in GroupOp.Movement:
            return self._movement(op, pats[0], dt, shape, arg, tag)
        if op is Ops.REDUCE_AXIS:
            return self._reduce(pats[0], dt, shape, arg, tag)
        if op in _MARKERS:
            return UOp(op, dt, (self._src(pats[0], dt, shape),), arg, tag)
        if op is Ops.COPY:
            # to a device of the sharded instance, or to one it is not on
            device = UOp(Ops.DEVICE, dtypes.void, (), self.draw(st.sampled_from(
                DEVICES[:len(self.devices) + 1] if self.devices else ("CPU",))))
            return UOp(op, dt, (self._src(pats[0], dt, shape), device), arg, tag)
        node = self._alu(op, pats, dt, shape, arg, tag)
        return node.replace(src=node.src[::-1]) if swap else node

    def _src(self, p: A.Pattern | None, dt: DType, shape: tuple[int, ...]) -> UOp:
        return self.leaf(dt, shape, "w") if p is None else self.node(p, dt, shape)

    def _fixed(self, e: A.Expr | None) -> Any:
        if e is None:
            return None
        from .interp import Interpreter  # evaluates literal constraints like (Ops.ADD, (0,))

        return Interpreter({}).evaluate(e, {}, None)

    def _alu(self, op: Ops, pats: list, dt: DType, shape: tuple[int, ...], arg: Any,
             tag: Any) -> UOp:
        if op in GroupOp.Comparison:
            assume(dt is dtypes.bool)
            written = [d for q in pats if q is not None and (d := _pattern_dtypes(q)) is not None]
            src_dt = self._pick_dtype(written[0] if written else None, self._dtypes())
            srcs = [self._src(q, src_dt, shape) for q in pats]
        elif op is Ops.WHERE:
            srcs = [self._src(pats[0], dtypes.bool, shape)]
            srcs += [self._src(q, dt, shape) for q in pats[1:]]
        elif op is Ops.CAST and self.mode == "kernel" and _first_ops(pats[0]) == {Ops.RANGE}:
            src_dt = dtypes.index  # a loop's index as a value (a one-hot's positions)
            srcs = [self._src(pats[0], src_dt, shape)]
        elif op is Ops.CAST or op is Ops.BITCAST:
            # the source's own constraints first (`CAST(REDUCE_AXIS(x:int8))`): one dtype in
            # twelve drawn blind left such a rule without instances
            src_dt = self._pick_dtype(_pattern_dtypes(pats[0]) if pats[0] is not None else None,
                                      self._dtypes())
            if op is Ops.BITCAST:
                assume(src_dt.itemsize == dt.itemsize)
            srcs = [self._src(pats[0], src_dt, shape)]
        else:
            srcs = [self._src(q, dt, shape) for q in pats]
        return UOp(op, dt, tuple(srcs), arg, tag)

    def _dtypes(self) -> tuple[DType, ...]:
        return SCALAR_DTYPES if self.mode == "scalar" else TENSOR_DTYPES

    # -- rangeify's buffers: BUFFERIZE(value, *ranges), the value at each point of its ranges
    def _bufferize(self, srcs: list, dt: DType, shape: tuple[int, ...], arg: Any,
                   tag: Any) -> UOp:
        """A BUFFERIZE of `shape`: a fresh RANGE per axis, its value an element expression over
        them (a drawn tensor read at the ranges, an op of two such, or a constant)."""
        assume(len(srcs) <= 1 and all(n >= 1 for n in shape))
        ranges = [UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, n),),
                      (next(self._ids), "loop")) for n in shape]

        def element() -> UOp:
            return UOp(Ops.INDEX, dt, (self._buffer(dt, shape), *ranges))

        p = srcs[0] if srcs else None
        if p is not None and not _any_node(p):
            assume(_first_ops(p) == {Ops.CONST})
            value = self.node(p, dt, ())
        else:
            kind = self.draw(st.integers(0, 3))
            binary = [op for op in (Ops.ADD, Ops.MUL, Ops.MAX) if _op_accepts(op, dt)]
            if kind == 0:
                value = UOp.const(dt, self.draw(scalar_values(dt)))
            elif kind == 1 and binary:
                value = UOp(self.draw(st.sampled_from(binary)), dt, (element(), element()))
            else:
                value = element()
            if p is not None and isinstance(p, A.PBind | A.PVar) and getattr(p, "name", None):
                self.bound[p.name] = value
        return UOp(Ops.BUFFERIZE, dt, (value, *ranges), arg, tag)

    # -- kernels: values over the open ranges, read from parameters
    def _kernel_range(self, size: int, kind: str) -> UOp:
        return UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, size),),
                   (next(self._ids), kind))

    def _kernel_reduce(self, srcs: list, dt: DType, arg: Any, tag: Any) -> UOp:
        """REDUCE(v, *ranges, arg=op) over 1 or 2 fresh reduce ranges (now and then empty),
        v built with those ranges open."""
        assume(dt.is_float or dt.is_int)
        op = arg if arg is not None else self.draw(st.sampled_from(sorted(REDUCE_OPS)))
        sizes = self.draw(st.lists(st.integers(0, 6).map(lambda k: k if k < 6 else 0),
                                   self.draw(st.integers(1, 2))))
        ranges = [self._kernel_range(n, "reduce") for n in sizes]
        self.ranges += ranges
        outer, self.reduce_ranges = self.reduce_ranges, ranges
        value = self._src(srcs[0] if srcs else None, dt, ())
        del self.ranges[-len(ranges):]
        self.reduce_ranges = outer
        return UOp(Ops.REDUCE, dt, (value, *ranges), op, tag)

    def _kernel_acc(self, dt: DType, arg: Any) -> UOp:
        """The accumulator of the innermost REDUCE in loop form (backends/KERNEL_AST.md): its
        sources are that REDUCE's ranges, its arg the start, drawn (a zero of either sign now
        and then: a pick's -0.0, a sum's +0.0)."""
        assume(bool(self.reduce_ranges))
        start = arg if arg is not None else self.draw(st.one_of(
            st.just(self._either_zero(0, dt)), st.just(self.scalar(dt))))
        return UOp(Ops.DEFINE_REG, dt, tuple(self.reduce_ranges), start)

    def _kernel_load(self, dt: DType) -> UOp:
        """LOAD of a new parameter, one element per point of the open ranges (row-major); now
        and then per point of the ranges outside the innermost REDUCE only (a value it reads
        broadcast: a gather's index, constant along the axis it picks from)."""
        seen = self.ranges
        if self.broadcast and self.reduce_ranges and self.draw(st.integers(0, 2)) == 0:
            seen = [r for r in self.ranges if r not in self.reduce_ranges]
        sizes = [int(r.src[0].arg) for r in seen]
        data = _random_array(self.draw(st.integers(0, 2**32 - 1)), math.prod(sizes), dt)
        self.inst.params.append(data)
        g = UOp(Ops.DEFINE_GLOBAL, dt, (), len(self.inst.params))
        off = flatten(seen, sizes, UOp.const(dtypes.index, 0))
        return UOp(Ops.LOAD, dt, (UOp(Ops.INDEX, dt, (g, off)),))

    # -- leaves
    def leaf(self, dt: DType, shape: tuple[int, ...], name: str) -> UOp:
        if self.mode == "kernel":
            if self.draw(st.integers(0, 4)) == 0:
                return UOp.const(dt, self.draw(scalar_values(dt)))
            return self._kernel_load(dt)
        if self.mode in ("tensor", "sharded"):
            if self.per_device != _NOT_PER_DEVICE:
                return self._per_device_leaf(dt, shape)
            return self._sharded_leaf(dt, shape) if self.devices else self._buffer(dt, shape)
        kinds = ["var", "const", "expr"] if dt.is_int else ["const", "cmp"]
        if dt is dtypes.index:
            kinds += ["range", "sum", "sum"]
        if dt.is_float or (self.swept is not None and dt is not dtypes.index):
            kinds = ["const"]  # (a sweep's int leaf: at the dtype's edges, not a bounded var)
        kind = self.draw(st.sampled_from(kinds))
        if kind == "const":
            return UOp.const(dt, self.scalar(dt))
        if kind == "var":
            return self._var(dt)
        if kind == "range":
            return self._range(None, dt)
        if kind == "cmp":
            a, b = self._var(dtypes.index), self._var(dtypes.index)
            return a.lt(b)
        if kind == "sum":
            return self._index_sum()
        # a small expression: bounds derived through an op, as in real index math
        op = self.draw(st.sampled_from([Ops.ADD, Ops.MUL, Ops.IDIV, Ops.MOD]))
        v = self._var(dt)
        low = 1 if op in (Ops.IDIV, Ops.MOD) else max(-9, int(dt.min))
        c = self.draw(st.integers(low, min(9, int(dt.max))))
        return UOp(op, dt, (v, UOp.const(dt, c)))

    def _index_sum(self) -> UOp:
        """A flattened index, `r0 * k0 + r1 * k1 + ... + b`: two to four terms, each a loop or
        a non-negative variable times a coefficient, the coefficients those of a row-major
        flattening (each the product of the sizes after it) now and then nudged by one or
        scaled, so the terms below a divisor can add up to just under it, to it, or past it.
        The atoms sit at their ends most of the time, where such a sum reaches its bounds; the
        divisors it invites (`self.divisors`: coefficients, their multiples, the sum's largest
        value and one past it) are what a constant of the same draw picks from (`scalar`).
        A fold of such sums (symbolic_helpers.fold_divmod) was never drawn, so never checked."""
        n = self.draw(st.integers(2, 4))
        sizes = [self.draw(st.integers(1, 9)) for _ in range(n)]
        coeffs, stride = [], self.draw(st.sampled_from((1, 1, 2, 3)))
        for size in reversed(sizes):
            coeffs.append(max(0, stride + self.draw(st.sampled_from((0, 0, 0, -1, 1)))))
            stride *= size
        coeffs.reverse()
        b = self.draw(st.sampled_from((0, 0, 1, self.draw(st.integers(0, 9)))))
        total, top = UOp.const(dtypes.index, b) if b else None, b
        for size, k in zip(sizes, coeffs):
            if self.draw(st.integers(0, 2)):
                end = UOp.const(dtypes.index, size)
                atom = UOp(Ops.RANGE, dtypes.index, (end,), (next(self._ids), "loop"))
                at_end = self.draw(st.integers(0, 3)) > 0
                self.inst.range_vals[atom] = size - 1 if at_end else \
                    self.draw(st.integers(0, size - 1))
            else:
                name = f"v{next(self._ids)}"
                at_end = self.draw(st.integers(0, 3)) > 0
                self.inst.var_vals[name] = size - 1 if at_end else \
                    self.draw(st.integers(0, size - 1))
                atom = UOp.variable(name, 0, size - 1, dtypes.index)
            term = atom if k == 1 else atom * UOp.const(dtypes.index, k)
            total = term if total is None else total + term
            top += k * (size - 1)
        self.divisors += [d for d in (top, top, top + 1, *(k for k in coeffs if k > 1),
                          *(k * s for k, s in zip(coeffs, sizes) if k * s > 1)) if d > 0]
        return total

    def _var(self, dt: DType) -> UOp:
        assume(dt.is_int)
        values = int_values(dt)
        a, b = self.draw(values), self.draw(values)
        lo, hi = min(a, b), max(a, b)
        # an end of its range a third of the time: the drawn edges and ties are values too
        inside = st.integers(lo, hi)
        v = self.draw(st.one_of(inside, inside, st.sampled_from((lo, hi))))
        v = self._near_earlier(dt, v, lo, hi)
        name = f"v{next(self._ids)}"
        self.inst.var_vals[name] = v
        return UOp.variable(name, lo, hi, dt)

    def _range(self, end_pat: A.Pattern | UOp | None, dt: DType) -> UOp:
        assume(dt is dtypes.index)
        if self.mode == "kernel":  # inside a kernel, a RANGE is one of the loops open there
            assume(end_pat is None and bool(self.ranges))
            return self.draw(st.sampled_from(self.ranges))
        if end_pat is None:
            end = UOp.const(dtypes.index, self.draw(st.integers(1, 16)))
        elif isinstance(end_pat, UOp):
            end = end_pat
        else:
            end = self.node(end_pat, dtypes.index, ())
        assume(end.op is Ops.CONST and end.arg >= 1)
        r = UOp(Ops.RANGE, dtypes.index, (end,), (next(self._ids), "loop"))
        self.inst.range_vals[r] = self.draw(st.integers(0, end.arg - 1))
        return r

    def _buffer(self, dt: DType, shape: tuple[int, ...], device: str = "CPU",
                seed: int | None = None) -> UOp:
        size = math.prod(shape)
        if seed is None and self.indexed and dt.is_int and 0 < size <= dt.max + 1 \
                and self.draw(st.integers(0, 3)) == 0:
            # now and then the position table of a one-hot (0..size-1), which rangeify reads
            # as its index (rules/rangeify.rules, index_positions); never a part of a sharded
            # value (`seed`: its replicas hold one value)
            buf: Buffer = Positions(size, dt, device=device)
            self.inst.buffers.append((buf, buf.data.copy()))
            return UOp(Ops.BUFFER, dt, (), buf).reshape(shape)
        if seed is None:
            seed = self.draw(st.integers(0, 2**32 - 1))
        data = _random_array(seed, size, dt)
        if self.swept is not None and size:  # a sweep's leaf holds its leaf values, in turn
            leaves = self.swept[0].leaf_values(dt)
            self.leaf_count += 1
            start = self.swept[1] if self.leaf_count == 1 else self.draw(st.integers(0, 99))
            data = np.resize(np.roll(np.array(leaves, dt.np), -start), size)
        buf = Buffer(size, dt, data, device=device)
        self.inst.buffers.append((buf, data.copy()))
        return UOp(Ops.BUFFER, dt, (), buf).reshape(shape)

    # -- sharded tensors: MULTI(MSTACK(part on device 0, ...), arg=(axis, devices))
    def _sharded_node(self, op: Ops, srcs: list, dt: DType, shape: tuple[int, ...], arg: Any,
                      tag: Any) -> UOp:
        if op is Ops.ASSIGN:  # into a realized target (buffers, or shards of buffers)
            assume(len(srcs) == 2)
            target = self.node(srcs[0], dt, shape)
            assume(target.base.op is Ops.BUFFER or target.base.op is Ops.MULTI
                   and all(p.base.op is Ops.BUFFER for p in target.base.src[0].src))
            return UOp(Ops.ASSIGN, dt, (target, self.node(srcs[1], dt, shape)), arg, tag)
        assume(self.devices)
        if op is Ops.MSELECT:  # part i of a per-device value
            assume(len(srcs) <= 1)
            i = arg if arg is not None else self.draw(st.integers(0, len(self.devices) - 1))
            outer, self.per_device = self.per_device, _PER_DEVICE_ANY
            src = self._src(srcs[0] if srcs else None, dt, shape)
            self.per_device = outer
            return UOp(Ops.MSELECT, dt, (src,), i, tag)
        assume(not srcs and arg is None)
        node = self._multi(dt, shape) if op is Ops.MULTI else self._mstack(dt, shape)
        return node if tag is None else node.replace(tag=tag)

    def _sharded_leaf(self, dt: DType, shape: tuple[int, ...]) -> UOp:
        """A sharded tensor, or now and then a constant (on no device: on every one)."""
        if self.draw(st.integers(0, 3)) == 0:
            c = UOp.const(dt, self.draw(scalar_values(dt)))
            return c.reshape((1,) * len(shape)).expand(shape) if shape else c
        return self._multi(dt, shape)

    def _multi(self, dt: DType, shape: tuple[int, ...]) -> UOp:
        """A tensor of `shape` sharded over the instance's devices along an axis the devices
        divide (mostly the instance's preferred one), or replicated (axis None: every part
        holds the same values)."""
        n = len(self.devices)
        axes = [a for a, s in enumerate(shape) if s >= n and s % n == 0]
        if axes and self.draw(st.booleans()):
            axis = axes[self.axis_choice % len(axes)]
        else:
            axis = self.draw(st.sampled_from([None, *axes]))
        part = shape if axis is None else (*shape[:axis], shape[axis] // n, *shape[axis + 1:])
        seed = self.draw(st.integers(0, 2**32 - 1))
        parts = tuple(self._buffer(dt, part, dev, seed if axis is None else seed + i)
                      for i, dev in enumerate(self.devices))
        return UOp(Ops.MULTI, dt, (UOp(Ops.MSTACK, dt, parts, self.devices),),
                   (axis, self.devices))

    def _mstack(self, dt: DType, shape: tuple[int, ...]) -> UOp:
        parts = tuple(self._buffer(dt, shape, dev) for dev in self.devices)
        return UOp(Ops.MSTACK, dt, parts, self.devices)

    def _per_device_leaf(self, dt: DType, shape: tuple[int, ...]) -> UOp:
        """A value with one part per device: an MSTACK, or an op of MSTACKs."""
        kind = 0 if self.per_device == _PER_DEVICE_STACK else self.draw(st.integers(0, 3))
        if kind <= 1:
            return self._mstack(dt, shape)
        outer, self.per_device = self.per_device, _PER_DEVICE_STACK
        try:
            binary = [op for op in (Ops.ADD, Ops.MAX, Ops.MUL) if _op_accepts(op, dt)]
            if kind == 2 and binary:
                op = self.draw(st.sampled_from(binary))
                return UOp(op, dt, (self._mstack(dt, shape), self._mstack(dt, shape)))
            op = self.draw(st.sampled_from(sorted(GroupOp.Movement)))
            return self._movement(op, None, dt, shape, None, None)
        finally:
            self.per_device = outer

    # -- views: VIEW(x, arg=ShapeTracker), a drawn chain of movement ops folded into one
    def _view(self, p: A.Pattern | None, dt: DType, shape: tuple[int, ...], tag: Any) -> UOp:
        """A view of `shape` of a drawn source: up to 3 movement ops drawn from the view's shape
        down (as `_movement` draws them), applied to the source's tracker from the bottom up.
        A CONST source is a scalar, reshaped and expanded first; a BUFFER source is flat."""
        moves, cur = [], shape
        for _ in range(self.draw(st.integers(0, 3))):
            op = self.draw(st.sampled_from(sorted(GroupOp.Movement)))
            arg, cur = self._movement_arg(op, cur)
            moves.append((op.name, arg))
        src_ops = _first_ops(p) if p is not None else None
        if src_ops == {Ops.CONST}:
            base, first = (), [("RESHAPE", (1,) * len(cur)), ("EXPAND", cur)]
        elif src_ops and src_ops <= {Ops.BUFFER, Ops.ASSIGN}:
            base, first = (math.prod(cur),), [("RESHAPE", cur)]
        else:
            base, first = cur, []
        tracker = ShapeTracker.from_shape(base)
        for name, arg in first + moves[::-1]:
            tracker = tracker.apply(name, arg)
        assume(tracker.shape == shape)
        return UOp(Ops.VIEW, dt, (self._src(p, dt, base),), tracker, tag)

    # -- tensor ops: the source's shape and the op's argument, given the result's shape
    def _movement(self, op: Ops, p: A.Pattern | None, dt: DType, shape: tuple[int, ...],
                  arg: Any, tag: Any) -> UOp:
        if arg is not None:
            assume(False)  # a fixed movement argument: too rare to draw toward
        arg, src_shape = self._movement_arg(op, shape)
        src = self._src(p, dt, src_shape)
        return UOp(op, dt, (src,), arg, tag)

    def _movement_arg(self, op: Ops, shape: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
        """A drawn argument of movement op `op` whose result has `shape`, and its source's
        shape."""
        n = len(shape)
        if op is Ops.RESHAPE:
            src_shape = self._reshape_of(shape)
            arg = shape
        elif op is Ops.EXPAND:
            src_shape = tuple(s if self.draw(st.booleans()) else 1 for s in shape)
            arg = shape
        elif op is Ops.PERMUTE:
            arg = tuple(self.draw(st.permutations(range(n))))
            src_shape = tuple(shape[arg.index(i)] for i in range(n))
        elif op is Ops.PAD:
            arg, src = [], []
            for s in shape:
                before = self.draw(st.integers(0, s - 1)) if s > 1 else 0
                after = self.draw(st.integers(0, s - before - 1)) if s - before > 1 else 0
                arg.append((before, after))
                src.append(s - before - after)
            arg, src_shape = tuple(arg), tuple(src)
        elif op is Ops.SHRINK:
            arg, src = [], []
            for s in shape:
                extra, start = self.draw(st.integers(0, 3)), 0
                start = self.draw(st.integers(0, extra))
                arg.append((start, start + s))
                src.append(s + extra)
            arg, src_shape = tuple(arg), tuple(src)
        else:  # FLIP
            arg = tuple(self.draw(st.lists(st.booleans(), n)))
            src_shape = shape
        return arg, src_shape

    def _reshape_of(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """Another shape with the same number of elements."""
        size = math.prod(shape)
        if size == 1 and self.draw(st.booleans()):
            return ()  # a scalar (a CONST, say) reshaped up to the target
        factors = _prime_factors(size)
        factors = self.draw(st.permutations(factors))
        ndim = self.draw(st.integers(1, max(1, len(factors))))
        dims = [1] * ndim
        for i, f in enumerate(factors):
            dims[i % ndim] *= f
        return tuple(dims) if size else tuple(self.draw(st.sampled_from([(0,), (0, 2), (2, 0)])))

    def _reduce(self, p: A.Pattern | None, dt: DType, shape: tuple[int, ...], arg: Any,
                tag: Any) -> UOp:
        ones = [i for i, s in enumerate(shape) if s == 1]
        if arg is None:
            assume(ones)
            axes = tuple(sorted(self.draw(st.subsets(ones))))
            named = sorted(op for op in self.literals if isinstance(op, Ops) and op in REDUCE_OPS)
            ops = named if named and self.draw(st.booleans()) else sorted(REDUCE_OPS)
            arg = (self.draw(st.sampled_from(ops)), axes)
            if arg[0] is Ops.ADD and dt.is_float and self.draw(st.booleans()):
                arg = (*arg, -0.0)  # a pick's sum, from -0.0 (runtime/ops.py, reduce_start)
        axes = arg[1]
        assume(all(shape[i] == 1 for i in axes if i < len(shape)))
        # reduced axes: small or empty, and now and then large: past a narrow accumulator
        # (a count of 257 overflows int8 and uint8; 65536, int16), and enough for the rules
        # that split big reductions
        large = NARROW_REDUCES if dt.is_float or dt.is_int and dt.itemsize <= 2 else LARGE_REDUCES
        size = st.integers(0, 3).flatmap(  # one draw in four: large; shrinks to small
            lambda k: st.sampled_from(large) if k == 3 else st.integers(0, 4))
        src_shape = tuple(self.draw(size) if i in axes else s for i, s in enumerate(shape))
        assume(math.prod(src_shape) <= 1 << 17)  # one large axis, not a large volume
        return UOp(Ops.REDUCE_AXIS, dt, (self._src(p, dt, src_shape),), arg, tag)


# what a leaf is inside an MSELECT (see Builder.per_device)
_NOT_PER_DEVICE, _PER_DEVICE_ANY, _PER_DEVICE_STACK = 0, 1, 2


def _prime_factors(n: int) -> list[int]:
    """n's prime factors, ascending, each as often as it divides n (none for 0 or 1); trial
    division up to the square root: testing every number up to n cost the checker's guarded
    tests seconds on sizes of a few thousand."""
    factors, f = [], 2
    while n > 1 and f * f <= n:
        while n % f == 0:
            factors.append(f)
            n //= f
        f += 1
    return factors + [n] if n > 1 else factors


def _op_accepts(op: Ops, dt: DType) -> bool:
    """Whether `op` can produce a node of dtype dt."""
    if op in GroupOp.Comparison:
        return dt is dtypes.bool
    domain = OPERAND_DOMAIN.get(op)
    if op in (Ops.CAST, Ops.BITCAST, Ops.WHERE) or domain is None:
        return op not in (Ops.RANGE,) or dt is dtypes.index
    return dt in domain


def _require(ref: A.DTypeRef | None, dt: DType) -> None:
    if ref is not None:
        allowed = resolve_dtype(ref.name)
        assume(allowed is not None and dt in allowed)


# ops whose sources all have the node's own dtype: a constraint written on a source is one on
# the node (`REDUCE_AXIS(MUL(x:floats, c))` is a float reduction)
_SAME_DTYPE = (GroupOp.Movement | _MARKERS | {Ops.REDUCE_AXIS}
               | (GroupOp.ALU - GroupOp.Comparison - {Ops.CAST, Ops.BITCAST, Ops.WHERE,
                                                      Ops.SHL, Ops.SHR}))


def _pattern_dtypes(p: A.Pattern) -> frozenset[DType] | None:
    """The dtypes the root may have, from the constraints written on it, and on the sources
    of ops that keep their sources' dtype (drawing any dtype and rejecting it later threw away
    most instances of such a rule)."""
    allowed = None
    todo = [p]
    while todo:
        q = todo.pop()
        while isinstance(q, A.PBind):
            q = q.pattern
        if q.dtype is not None:
            r = resolve_dtype(q.dtype.name) or frozenset()
            allowed = r if allowed is None else allowed & r
        if isinstance(q, A.PNode) and q.srcs and _node_ops(q) <= _SAME_DTYPE:
            todo.extend(q.srcs)
    return allowed


def _reduces_at_root_shape(p: A.Pattern) -> bool:
    """Whether the root is a REDUCE_AXIS, or one under elementwise ops of its shape (a CAST
    of a sum), so that the root's shape must keep the reduced axes as 1s."""
    while True:
        ops = _first_ops(p)
        if ops == {Ops.REDUCE_AXIS}:
            return True
        while isinstance(p, A.PBind):
            p = p.pattern
        if not ops or not ops <= GroupOp.ALU or not isinstance(p, A.PNode) or not p.srcs:
            return False
        p = p.srcs[0]


def _first_ops(p: A.Pattern) -> set[Ops] | None:
    while isinstance(p, A.PBind):
        p = p.pattern
    return _node_ops(p) if isinstance(p, A.PNode) else None


def _literal_fits(value: Any, dt: DType) -> bool:
    """A pattern literal matches a CONST of dt only when dt can hold it (1.5 is no int)."""
    if isinstance(value, float) and not dt.is_float:
        return math.isfinite(value) and value == int(value)
    if dt.is_bool:
        return value in (0, 1)
    return True


def draw_instance(data: Any, pattern: A.Pattern, mode: str,
                  literals: tuple[Any, ...] = (), tag_root: bool = False,
                  swept: Any = None) -> Instance:
    """One instance of `pattern`, drawn from `data`: a `draws.RandomData`, or hypothesis's
    `data` from `st.data()`; its constants now and then at the `literals` (`rule_literals`);
    with `tag_root` (a rule whose guard `reads_tag`), its root tagged with one of TAGS; with
    `swept` (a joint.JointSweep and an index), the sweep's k-th instance."""
    return Builder(data, mode, literals, tag_root, swept).build(pattern)
