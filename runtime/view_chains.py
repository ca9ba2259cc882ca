"""Which chains of movement ops are views of the storage under them (torch's views).

The plain view ops (RESHAPE, PERMUTE, SHRINK, FLIP; and EXPAND, read-only) always are. A PAD
is a copy, except where the chain's SHRINK drops every padded place again: a strided slice whose
span is no whole number of steps (`s[::2]` of 5 rows is padded to 6, split into steps of 2, and
its first column kept) reads only s. Realize, assign and the gradient of an assign (origins)
walk views with these sets, below all of them.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from .ops import Ops
from .uop import UOp, toposort
from .variable import has_symbolic

# the views an ASSIGN can write through: each of their elements is one element of the storage
# under them (an EXPAND repeats elements, a PAD makes ones that are stored nowhere)
WRITABLE_VIEWS = frozenset({Ops.RESHAPE, Ops.PERMUTE, Ops.SHRINK, Ops.FLIP})

# the movement ops a view of storage is made of (torch's views: a PAD is a copy in torch, and
# an assign's readers treat it as one: runtime/tensor.py's _ALIAS_OPS)
VIEW_OPS = WRITABLE_VIEWS | {Ops.EXPAND}


def view_ops(top: UOp, ops: frozenset[Ops] = VIEW_OPS) -> frozenset[Ops]:
    """The ops a walk down the view `top` passes: `ops`, and PAD too when each element of top
    is one of the node under its chain. A strided slice whose span is no whole number of steps
    (`s[::2]` of 5 rows: padded to 6, split into steps of 2, the first column kept) needs a PAD
    that its SHRINK drops again; it is a view of s as torch's is (an assign or a step through
    it writes s, and it sees a write into s). A PAD whose places are read is a copy."""
    node = top
    while node.op in ops or node.op is Ops.PAD:
        if node.op is Ops.PAD:
            return ops | {Ops.PAD} if _pads_dropped(top, ops) else ops
        node = node.src[0]
    return ops


def _pads_dropped(top: UOp, ops: frozenset[Ops]) -> bool:
    """Whether each element of the chain `top` (of `ops` and PADs) reads its base (asked of
    the chain's shapes and arguments: a step's new nodes over the same storage ask it once)."""
    chain, node = [], top
    while node.op in ops or node.op is Ops.PAD:
        chain.append(node)
        node = node.src[0]
    steps = tuple((n.op, n.arg) for n in reversed(chain))
    if not (has_symbolic(node.shape) or any(has_symbolic(n.shape) for n in chain)):
        return _chain_reads_all(node.shape, steps)
    # (its bound values left out: every value of the variables is tried, whichever is bound,
    # so a loop binding n = 1, 2, 3, ... proves the chain once, not once per value)
    return _reads_all_at_every_size(*_unbound((node.shape, steps)))


# the most bindings of a chain's variables tried, each one mask: beyond it a symbolic chain
# is not proven (`s[:n, ::2]` with n in [1, 1024] is 1024 masks of at most 1024 x 5, 0.1 s once
# per chain; 4096 took 0.64 s)
MAX_BINDINGS = 1024
_ARITH = {Ops.ADD: lambda a, b: a + b, Ops.SUB: lambda a, b: a - b, Ops.MUL: lambda a, b: a * b,
          Ops.IDIV: lambda a, b: a // b, Ops.MOD: lambda a, b: a % b, Ops.MAX: max, Ops.MIN: min}


@functools.lru_cache(maxsize=256)
def _reads_all_at_every_size(shape: tuple, steps: tuple[tuple[Ops, object], ...]) -> bool:
    """_chain_reads_all of a chain with symbolic sizes, at every value of its variables in
    their ranges (a proof by cases, as the strided axis's own size is concrete: `s[:n, ::2]`
    of 5 columns); False where there are more than MAX_BINDINGS cases or a size it cannot
    evaluate."""
    sizes = [x for x in _flat((shape, *(arg for _, arg in steps))) if isinstance(x, UOp)]
    names: dict[str, tuple[int, int]] = {}
    for v in (v for size in sizes for v in toposort(size)):
        if v.op is Ops.DEFINE_VAR:
            names[v.arg[0]] = (int(v.arg[1]), int(v.arg[2]))
        elif v.op not in _ARITH and v.op not in (Ops.BIND, Ops.CONST):
            return False
    if math.prod(hi - lo + 1 for lo, hi in names.values()) > MAX_BINDINGS:
        return False
    fits = False
    for values in itertools.product(*(range(lo, hi + 1) for lo, hi in names.values())):
        env = dict(zip(names, values))
        at = functools.partial(_at, env=env)
        try:
            # (not through _chain_reads_all's cache: a case is asked once)
            if not _chain_reads_all.__wrapped__(at(shape),
                                                tuple((op, at(arg)) for op, arg in steps)):
                return False
        except (ValueError, ZeroDivisionError):
            # a value the chain's concrete sizes do not fit: `s[:n][::2]` pads and reshapes
            # n's rows by sizes made at its bound value (n = 3: 4 rows as (2, 2, 3)), which
            # no other n's rows make; no binding of the chain runs at it
            continue
        fits = True
    return fits


def _unbound(x: object) -> object:
    """A movement arg (nested tuples) with each bound variable's BIND replaced by the
    variable."""
    if isinstance(x, tuple):
        return tuple(_unbound(y) for y in x)  # (as deep as an arg's nesting)
    if not isinstance(x, UOp):
        return x
    binds = {v: v.src[0] for v in toposort(x) if v.op is Ops.BIND}
    return x.substitute(binds) if binds else x


def _flat(x: object) -> list:
    out, todo = [], [x]
    while todo:
        y = todo.pop()
        if isinstance(y, tuple):
            todo.extend(y)
        else:
            out.append(y)
    return out


def _at(x: object, env: dict[str, int]) -> object:
    """A movement arg (nested tuples of ints and size expressions) at the variables' values."""
    if isinstance(x, tuple):
        return tuple(_at(y, env) for y in x)  # (as deep as an arg's nesting: two levels)
    if not isinstance(x, UOp):
        return x
    value: dict[UOp, int] = {}
    for v in toposort(x):
        if v.op is Ops.DEFINE_VAR:
            value[v] = env[v.arg[0]]
        elif v.op is Ops.BIND:
            value[v] = value[v.src[0]]
        elif v.op is Ops.CONST:
            value[v] = int(v.arg)
        else:
            value[v] = _ARITH[v.op](*(value[s] for s in v.src))
    return value[x]


@functools.lru_cache(maxsize=256)
def _chain_reads_all(shape: tuple[int, ...], chain: tuple[tuple[Ops, object], ...]) -> bool:
    """The chain of movement ops run on a mask of a base of `shape` (a PAD's places are
    False): all True at its top."""
    mask = np.ones(shape, dtype=bool)
    for op, arg in chain:
        if op is Ops.PAD:
            mask = np.pad(mask, arg, constant_values=False)
        elif op is Ops.SHRINK:
            mask = mask[tuple(slice(b, e) for b, e in arg)]
        elif op is Ops.RESHAPE:
            mask = mask.reshape(arg)
        elif op is Ops.PERMUTE:
            mask = mask.transpose(arg)
        elif op is Ops.FLIP:
            mask = np.flip(mask, [i for i, f in enumerate(arg) if f])
        else:  # EXPAND
            mask = np.broadcast_to(mask, arg)
    return bool(mask.all())
