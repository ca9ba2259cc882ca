"""Helpers of `opt.rules`' stage action: a sum of products' row operand computed once per row
into a kernel-local array, not once per column it is multiplied with.

In: a lowered kernel's SINK (backends/KERNEL_AST.md, "after lowering") whose STOREs have had
their other actions. Out: `staged(sink)` (None when there is none), the SINK with each such
operand x read from a `DEFINE_LOCAL` over the reduce's ranges (fresh "local" RANGEs), which the
C renderer fills once per iteration of the loops x depends on (its row), before the loops that
read it.

Why: in the plain loop nest of sum_k x(i, k) * y(k, j), x is printed inside the loop over j, so
every operation of x runs once per column: a layernorm fused into the linear after it divided
each element 128 times (the demo's MLP: 262,528 divisions where numpy does 2,048). Packed and
flash kernels compute x once per element already (their panel copies): only stores without an
action, or with the interchange action's column loop, are staged. The array holds the same
values, read in the same order: bit for bit.
"""

from __future__ import annotations

import math

from rulegrad.rules.interchange_helpers import columns
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import free_ranges, fresh_id, local_read, range_size, row_major
from rulegrad.runtime.ops import GroupOp, Ops
from rulegrad.runtime.target import cache_bytes, stack_bytes
from rulegrad.runtime.uop import UOp, substitute, toposort


def stage_max() -> int:
    """The most elements a staged operand's array holds: as float32, half the L1 data cache, so
    it stays there beside the rows that read it (32 KB: 4K elements; rangeify's
    `local_max_array` for its own kernel-local arrays); an eighth of the stack budget as float64
    at most (runtime/target.py): the array is on the thread's stack, whatever L1 says."""
    return min(cache_bytes(1) // (2 * 4), stack_bytes() // (8 * 8))


def _computes(x: UOp) -> bool:
    """Whether x does arithmetic of its own on values (a plain read, or a cast of one, is as
    cheap to repeat as to read back from an array)."""
    return x.op is not Ops.LOAD and any(
        n.op in GroupOp.ALU and n.dtype is not dtypes.index
        for n in toposort(x, stop=lambda n: n.op is Ops.LOAD))


def _plain(st: UOp) -> bool:
    """A STORE printed as loops around each sum: no action, or the interchange action's
    column loop inside the reduce loops (which x does not read: recomputed per column there
    too). Not a packed or flash kernel (their panels hold x once per element), nor a register
    tile of the interchange action, its rows and columns unrolled (it binds the rows inside the
    k loop: a staged row's array would be filled per step of k); a narrow row's columns alone
    unrolled are its column loop (interchange_helpers' `_narrow`)."""
    return st.op is Ops.STORE and st.arg is None and sum(
        c.arg[1] == "unroll" for c in columns(st)) < 2


def _products(red: UOp) -> list[tuple[UOp, UOp]]:
    """(x, y) of each product a loop-form sum adds per step: REDUCE(ADD(acc, x * y), ..), or
    several in a row where the interchange action runs its loop in passes of rows
    (acc + x0 * y0 + x1 * y1 ..: each x its own row operand, over the pass loop)."""
    found: list[tuple[UOp, UOp]] = []
    n = red.src[0]
    while red.arg is Ops.ADD and n.op is Ops.ADD and len(n.src) == 2 and n.src[1].op is Ops.MUL:
        found.append((n.src[1].src[0], n.src[1].src[1]))
        n = n.src[0]
    return found if n.op is Ops.DEFINE_REG else []


def _plan(sink: UOp) -> dict[UOp, tuple[UOp, tuple[UOp, ...]]]:
    """Each operand to stage -> (itself, the reduce ranges its array is over)."""
    if sink.op is not Ops.SINK or not any(_plain(s) for s in sink.src):
        return {}
    deps = free_ranges(sink)
    found: dict[UOp, tuple[UOp, tuple[UOp, ...]]] = {}
    for st in sink.src:
        if not _plain(st):
            continue
        # an interchanged column runs inside the reduce loops: an x that reads it would be
        # filled per column per step of k (all of its row each time), and as a vector column's
        # lanes, which a scalar array cannot hold (an MLP's weight gradient through relu's mask)
        moved = set(columns(st, deps))
        for red in toposort(st.src[1]):
            if red.op is not Ops.REDUCE or red.arg is not Ops.ADD:
                continue
            ks = red.src[1:]
            sizes = [range_size(k) for k in ks]
            if None in sizes or math.prod(sizes) > stage_max():  # type: ignore[arg-type]
                continue
            for x, y in (xy for pair in _products(red) for xy in (pair, pair[::-1])):
                # the columns: loops around the reduce that y reads and x does not; x is then
                # the same for every one of them, and computed once per column where it stands
                cols = deps[y] - deps[x] - set(ks)
                if (any(range_size(c) != 1 for c in cols) and any(k in deps[x] for k in ks)
                        and moved.isdisjoint(deps[x]) and _computes(x) and x not in found):
                    found[x] = (x, ks)
    return found


def staged(sink: UOp) -> UOp | None:
    """The SINK with each staged operand read from its DEFINE_LOCAL (fresh "local" ranges);
    None (no rewrite) when no sum of products recomputes its row operand per column."""
    plan = _plan(sink)
    if not plan:
        return None
    nxt = fresh_id(sink)
    mapping: dict[UOp, UOp] = {}
    for x, ks in plan.values():
        local = [UOp(Ops.RANGE, k.dtype, k.src, (nxt + n, "local")) for n, k in enumerate(ks)]
        nxt += len(ks)
        dl = UOp(Ops.DEFINE_LOCAL, x.dtype, (substitute(x, dict(zip(ks, local))), *local))
        mapping[x] = local_read(dl, row_major(ks))  # (row-major, as the array is)
    return substitute(sink, mapping)
