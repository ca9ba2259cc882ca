"""Helpers of `opt.rules`' parallel action: which loop of each group of stores is split across
cores.

In: a lowered kernel (backends/KERNEL_AST.md, "after lowering") whose STOREs have their own
actions. Out: `parallel(sink)`, the SINK with a `Parallel` as its arg naming those loops by
range id, which backends/c/render.py prints as `omp parallel for` (each thread a contiguous
share of the iterations); None when no loop is worth the threads.

A group is the stores the renderer prints as one loop nest (`store_groups`, which render.py's
`render` prints by): those sharing their loops, or a STORE with an action of its own. The
threaded loop is the group's
outermost one, as printed: the first output loop, but for a register tile of an interchanged
reduce the first loop of at least 2 iterations outside it, or the tile loops over its rows,
then its columns. Threads pay only for enough work: the loop iterations of the group, its
reduce loops included, times the kernel's loads, at least PARALLEL_MIN_WORK.

Packed products and flash kernels (their `Pack` and `Flash` say which of their loops take
threads), a reduce given threads of its own (`thread_reduce`) and an interchanged reduce whose
column blocks are threaded (`Interchange.block`) take none here. Threads change no value:
every iteration computes what it computed on one core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rulegrad.rules.choices import current, pick
from rulegrad.rules.flash_helpers import Flash
from rulegrad.rules.interchange_helpers import Interchange
from rulegrad.rules.pack_helpers import PARALLEL_MIN_WORK, Pack
from rulegrad.runtime.loops import range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort


@dataclass(frozen=True)
class Parallel:
    """The parallel action on a kernel (its SINK's arg): the ids of the ranges whose loops
    (for a register tile's rows or columns, whose tile loops) are split across cores."""

    ranges: tuple[int, ...]


def _outermost(st: UOp) -> UOp | None:
    """The RANGE whose loop takes the threads when a group of stores led by `st` is threaded
    (the first printed of at least 2 iterations: a tile loop's are tiles); None when no loop
    of it can."""
    how, ranges = st.arg, st.src[2:]
    if isinstance(how, (Pack, Flash)):
        return None
    if isinstance(how, Interchange) and how.block and how.threads:
        return None  # its column blocks are split across cores
    if isinstance(how, Interchange) and how.tile is not None:
        loops = [(r, range_size(r)) for r in ranges[:-2]]
        loops += [(r, range_size(r) // t)  # type: ignore[operator]
                  for r, t in zip(ranges[-2:], how.tile)]
    elif isinstance(how, Interchange):
        loops = [(r, range_size(r)) for r in ranges[:-1]][:1]  # j runs inside its reduce
    else:
        loops = [(r, range_size(r)) for r in ranges[:1]]
    return next((r for r, n in loops if n >= 2), None)  # type: ignore[operator]


def store_groups(sink: UOp) -> list[list[UOp]]:
    """The kernel's stores by loop nest, in order: those sharing their loops, and a STORE with
    an action of its own (packed, interchanged) alone."""
    groups: dict[tuple, list[UOp]] = {}
    for st in sink.src:
        groups.setdefault((st.src[2:], st if st.arg is not None else None), []).append(st)
    return list(groups.values())


def _threads(sink: UOp) -> tuple[int, ...]:
    order = toposort(sink)
    if any(n.op is Ops.RANGE and range_size(n) is None for n in order):
        return ()  # (a symbolic size: the C renderer takes none)
    reduces = [n for n in order if n.op is Ops.REDUCE]
    if any(r.arg[1] == "thread" for red in reduces for r in red.src[1:]):
        return ()  # the kernel's threads are its reduce's
    loads = sum(n.op is Ops.LOAD for n in order)
    chosen = []
    for stores in store_groups(sink):
        loop = _outermost(stores[0])
        if loop is None:
            continue
        ranges = set(stores[0].src[2:])
        for red in reduces:  # (every REDUCE of the kernel: several groups are rare, and
            ranges.update(red.src[1:])  # overcounting only threads a loop a little early)
        work = math.prod(range_size(r) for r in ranges) * max(1, loads)  # type: ignore[misc]
        if work >= pick(current().parallel_min_work, PARALLEL_MIN_WORK):  # (or searched)
            chosen.append(loop.arg[0])
    return tuple(chosen)


def parallel(sink: UOp) -> UOp | None:
    """The kernel with its threaded loops named in its arg (a `Parallel`); None when it has
    its threads already or no loop is worth them."""
    if sink.arg is not None:
        return None
    chosen = _threads(sink)
    return sink.replace(arg=Parallel(chosen)) if chosen else None
