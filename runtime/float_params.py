"""Float constants as kernel arguments: a loop with a new learning rate each step is one program.

In: the float constants of a tensor graph (`graph_key` finds them) and the schedule made for it.
Out: the same kernels with each of those constants read from a one-element buffer (a kernel
argument), and which constant of the graph fills each buffer. The rule passes still see every
constant as a CONST (they fold it, users' `c:CONST` patterns match it); the constants are lifted
after the kernel ASTs are built, so the compiled library holds no value and serves every step.

Only "generic" values are lifted (`liftable`): finite floats that are neither whole numbers nor
powers of two. Structural constants (0, 1, -1, 2, 0.5, -inf, the identities) stay literals,
both because rules and the C compiler specialise on them and because a rule may rewrite the
graph differently for them (x*1 -> x), which a replay with another value would get wrong.

Whether a schedule may be replayed with other values is checked, not assumed: the schedule cache
(`runtime/schedule_cache.py`) keys a graph with its liftable values masked out ("its form"), and
only after two schedules of one form, made for different values, came out identical once lifted
(same kernels, each lifted constant mapped to the same constant of the graph, every other
constant equal) does it replay the form for new values. A constant folded with another (a
`full(n, lr) * 3`) or rewritten by a value-dependent rule shows up as a difference, and that
form keeps being scheduled per value (correct, just not shared). `RULEGRAD_FLOAT_PARAMS=0` turns
the lifting off.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence

import numpy as np

from .buffer import Buffer
from .dtype import DType, dtypes
from .env import env_flag
from .ops import Ops
from .uop import UOp, substitute, toposort


def enabled() -> bool:
    return env_flag("RULEGRAD_FLOAT_PARAMS", default=True)


def liftable(value: object, dtype: DType) -> bool:
    """A float constant worth passing at run time rather than printing into the C."""
    if type(value) is not float or not dtype.is_float or not math.isfinite(value):
        return False
    return value != math.floor(value) and math.frexp(value)[0] not in (0.5, -0.5)


def slot_of(values: Sequence[tuple[DType, float]]) -> dict[tuple[DType, str], int]:
    """(dtype, value's hex) -> the first slot holding it."""
    out: dict[tuple[DType, str], int] = {}
    for i, (dt, v) in enumerate(values):
        out.setdefault((dt, v.hex()), i)
    return out


def lift(ast: UOp, nbufs: int, slots: dict[tuple[DType, str], int]) -> tuple[UOp, tuple[int, ...]]:
    """The kernel with every CONST whose value is a slot's read from a new buffer
    (DEFINE_GLOBAL nbufs, nbufs+1, ...), and the slot each new buffer holds."""
    mapping: dict[UOp, UOp] = {}
    params: list[int] = []
    zero = UOp.const(dtypes.index, 0)
    for n in toposort(ast):
        if n.op is not Ops.CONST or type(n.arg) is not float:
            continue
        slot = slots.get((n.dtype, n.arg.hex()))
        if slot is None:
            continue
        glob = UOp(Ops.DEFINE_GLOBAL, n.dtype, (), nbufs + len(params))
        mapping[n] = UOp(Ops.LOAD, n.dtype, (UOp(Ops.INDEX, n.dtype, (glob, zero)),))
        params.append(slot)
    return substitute(ast, mapping), tuple(params)


# the one-element buffers `param_buffer` made, weakly, each with (its dtype, its value's hex): a
# step plan (runtime/plans.py) that holds one writes the next step's value into it (an lr
# schedule), and must know it from any other buffer of host data
_params: weakref.WeakKeyDictionary[Buffer, tuple[DType, str]] = weakref.WeakKeyDictionary()


def param_buffer(dtype: DType, value: float) -> Buffer:
    """A slot's value as the one-element buffer its kernels read (one per realize)."""
    buf = Buffer(1, dtype, np.full(1, value, dtype.np))
    _params[buf] = (dtype, value.hex())
    return buf


def param_value(buf: Buffer) -> tuple[DType, str] | None:
    """(dtype, value's hex) of a buffer `param_buffer` made, else None."""
    return _params.get(buf)
