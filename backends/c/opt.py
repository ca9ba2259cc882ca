"""The kernel optimizer's pass and its report: lowered kernel AST -> the same kernel with the
actions of `rules/opt.rules` applied, and the list of actions taken.

In: a kernel after `lower` (backends/KERNEL_AST.md, "after lowering"). Out: the kernel with
small reduces unrolled, innermost loops marked for vectorizing (RANGE kind "upcast", or "vector"
for explicit vectors; a reduce's own "vector" range: vectors of partial results), reduces
interchanged (the STORE's last output range marked "upcast" and run inside the reduce loops,
maybe split into blocks or, with the row range, into an unrolled register tile) and sums of
products packed (a `Pack` in the STORE's arg: rows, columns, register tile, packed operand,
threaded loop), which `render.py` and `gemm.py` print;
`actions(before, after)` names what changed, and `render.py` adds how it printed them (a
launched loop, the block library), so `DEBUG=2` shows every decision taken for a kernel;
the loops split across cores are named in the SINK's arg (a `Parallel`).

`RULEGRAD_OPT=0` switches the optimizer off: the kernel is printed as the plain loop nest it
was lowered to (no action, so no packed, flash, staged or threaded path), computing the same
values; a way to tell the optimizer's fault from the rest's.
"""

from __future__ import annotations

import math

from rulegrad.rules import matcher
from rulegrad.rules.choices import DEFAULT, Choices, chosen
from rulegrad.rules.flash_helpers import Flash
from rulegrad.rules.interchange_helpers import ACCUMULATED, columns, describe
from rulegrad.rules.opt_helpers import VECTOR_LANES, reduce_vectors
from rulegrad.rules.pack_helpers import Pack
from rulegrad.rules.parallel_helpers import Parallel
from rulegrad.rules.wide_exps import fills_sum
from rulegrad.runtime.env import env_flag
from rulegrad.runtime.loops import range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.rewrite import graph_rewrite
from rulegrad.runtime.target import REDUCE_VECTORS, vector_lanes
from rulegrad.runtime.uop import UOp, toposort


def optimizer_on() -> bool:
    """Whether the optimizer runs (`RULEGRAD_OPT`, default on; read at each program: a program
    compiled with it off is kept apart from one compiled with it on)."""
    return env_flag("RULEGRAD_OPT", default=True)


def optimize_kernel(ast: UOp, choices: Choices = DEFAULT) -> UOp:
    """The kernel with the optimizer's actions applied, sized by `choices` (rules/choices.py:
    the heuristic's by default, or a record found by search, backends/c/beam.py)."""
    if not optimizer_on() or any(n.op is Ops.RANGE and range_size(n) == 0 for n in toposort(ast)):
        # (a loop of 0 trips: the plain nest does no work, or only writes a reduce's identity,
        # and the actions' sizing is not defined on it: the transpose's took a max of nothing)
        return ast
    # unroll first (sources are rewritten before their STORE): a STORE whose reduces were all
    # unrolled is then an elementwise loop the upcast rule can vectorize
    with chosen(choices):
        return graph_rewrite(ast, matcher("opt", "opt"), name="opt")


def _values(red: UOp) -> int:
    """How many values a REDUCE of constant loops combines."""
    return math.prod(int(r.src[0].arg) for r in red.src[1:])


def _masked_exps(k: UOp) -> int:
    """How many selects of two exps the kernel computes."""
    return sum(1 for n in toposort(k) if n.op is Ops.WHERE
               and n.src[1].op is Ops.EXP and n.src[2].op is Ops.EXP)


def actions(before: UOp, after: UOp) -> list[str]:
    """The optimizer's actions on one kernel, as `UNROLL r4x r5 (4 values)` and `UPCAST r3
    (32)`, read from the kernel before and after `optimize_kernel`."""
    done: list[str] = []
    def ids(red: UOp) -> tuple[int, ...]:  # (a thread action changes a range's kind, not id)
        return tuple(r.arg[0] for r in red.src[1:])

    kept = {ids(n) for n in toposort(after) if n.op is Ops.REDUCE}
    # a max whose scale moved out of it (opt.rules' max_scale): its value was x * c, now is x
    scaled = {ids(n): n.src[0].src[1] for n in toposort(before)
              if n.op is Ops.REDUCE and n.arg in (Ops.MAX, Ops.MIN) and len(n.src[0].src) == 2
              and n.src[0].src[1].op is Ops.MUL
              and any(x.op is Ops.CONST for x in n.src[0].src[1].src)}
    # a reduce's own "vector" range is its vector accumulators, not an upcast output loop
    accumulated = {n.src[-1] for n in toposort(after)
                   if n.op is Ops.REDUCE and n.src[1:] and n.src[-1].arg[1] == "vector"}
    # a reduce whose adjacent loops were merged (opt.rules' merge_reduce) keeps the id of each
    # run's innermost loop, and the same number of values
    after_ids = {ids(n): n for n in toposort(after) if n.op is Ops.REDUCE}
    # a reduce of a reduce by one op made one (opt.rules' unnest_reduce): the inner one's gone
    # (both's loops in one reduce after)
    nests = {n.src[0].src[1]: n for n in toposort(before) if n.op is Ops.REDUCE
             and len(n.src[0].src) == 2 and n.src[0].src[1].op is Ops.REDUCE
             and n.src[0].src[1].arg is n.arg and ids(n.src[0].src[1]) not in kept
             and any(set(ids(n)) | set(ids(n.src[0].src[1])) <= set(k) for k in kept)}
    # a reduce's one loop split in blocks (opt.rules' split_reduce) keeps its id on the blocks'
    # inner loop, of another size; the tail, if any, is the other reduce of the same op after it
    split = {ids(n)[-1]: n for n in toposort(after) if n.op is Ops.REDUCE and len(n.src) == 3}
    # a window run as a running accumulator (opt.rules' scan_store): its range is gone, and a
    # REDUCE of its op rides a "scan" loop of the STORE instead
    scans = [n for n in toposort(after) if n.op is Ops.REDUCE and n.src[1:]
             and n.src[1].arg[1] == "scan"]
    left = {n.arg[0] for n in toposort(after) if n.op is Ops.RANGE}
    for s in scans:
        done.append(f"SCAN {s.arg.name} along r{s.src[1].arg[0]} ({int(s.src[1].src[0].arg)} "
                    "values, a running accumulator)")
    for n in toposort(before):
        if n.op is Ops.REDUCE and len(n.src) == 2 and n.src[1].arg[0] not in left and any(
                s.arg is n.arg for s in scans):
            scans.remove(next(s for s in scans if s.arg is n.arg))
            continue
        into = split.get(ids(n)[0]) if n.op is Ops.REDUCE and len(n.src) == 2 else None
        if into is not None and ids(n) not in kept and into.arg is n.arg:
            outer, inner = into.src[1:]
            size, block = int(n.src[1].src[0].arg), int(inner.src[0].arg)
            blocks = size // block
            tail = f" + a tail of {size - blocks * block}" if size % block else ""
            done.append(f"SPLIT {n.arg.name} over r{ids(n)[0]} ({size} values) into "
                        f"r{outer.arg[0]} x r{inner.arg[0]} ({blocks} blocks of {block}{tail})")
            continue
        if n.op is Ops.REDUCE and ids(n) not in kept:
            names = " ".join(f"r{r.arg[0]}" for r in n.src[1:])
            count = _values(n)
            into = next((k for k in after_ids if set(k) < set(ids(n)) and ids(n)[-1] in k
                         and _values(after_ids[k]) == count and after_ids[k].arg is n.arg), None)
            outer = nests.get(n)
            if outer is not None:
                done.append(f"UNNEST {n.arg.name} over {names} into the reduce over "
                            f"{' '.join(f'r{i}' for i in ids(outer))}")
            elif into is None:
                done.append(f"UNROLL {n.arg.name} over {names} ({count} values)")
            else:
                loops = " ".join(f"r{i}" for i in into)
                done.append(f"MERGE {n.arg.name} over {names} into {loops}")
    # a STORE whose adjacent output loops were merged (merge_store), found by its buffer
    stores = {n.src[0].src[0]: n for n in toposort(before) if n.op is Ops.STORE}
    # a row of outputs as one STORE per column, its rows across lanes (opt.rules' rows_across)
    per_buffer: dict[UOp, list[UOp]] = {}
    for n in after.src:
        per_buffer.setdefault(n.src[0].src[0], []).append(n)
    across = {b for b, sts in per_buffer.items() if len(sts) > 1 and b in stores
              and len(stores[b].src) > len(sts[0].src) and sts[0].src[-1].arg[1] == "vector"}
    for b in across:
        old, i = stores[b], per_buffer[b][0].src[-1]
        done.append(f"ACROSS r{i.arg[0]} ({range_size(i)} rows across vector lanes, the row "
                    f"r{old.src[-1].arg[0]} as {len(per_buffer[b])} stores)")
    for n in toposort(after):
        old = stores.get(n.src[0].src[0]) if n.op is Ops.STORE else None
        if old is not None and n.src[0].src[0] in across:
            continue
        kept = [r for r in n.src[2:] if r.arg[1] != "block"] if old is not None else []
        if old is not None and len(kept) < len(old.src) - 2:  # (a split's blocks: not merged)
            names = " ".join(f"r{r.arg[0]}" for r in old.src[2:])
            done.append(f"MERGE loops {names} into {' '.join(f'r{r.arg[0]}' for r in kept)}")
        # a transpose tile (transpose_store): an outer loop's points now run last, in blocks
        last = n.src[-1] if old is not None and len(n.src) > 3 else None
        if last is not None and last.arg[1] == "loop" and old.src[-1].arg[0] != last.arg[0] \
                and any(r.arg[1] == "block" for r in n.src[2:]):
            done.append(f"TILE r{last.arg[0]} in blocks of {int(last.src[0].arg)}, innermost "
                        f"(a transpose: r{old.src[-1].arg[0]} reads a line per step)")
    interchanged = {c for n in toposort(after) if n.op is Ops.STORE for c in columns(n)}
    blocked = {n.src[3]: f", in {int(n.src[2].src[0].arg)} blocks r{n.src[2].arg[0]}"  # threads'
               for n in toposort(after) if n.op is Ops.STORE and n.src[3:]  # (parallel_helpers)
               and n.src[2].arg[1] == "block" and n.src[3] not in interchanged}
    # an upcast loop with a short loop unrolled inside it (opt_helpers' upcast_across)
    unrolled = {n.src[-2]: f", r{n.src[-1].arg[0]} ({int(n.src[-1].src[0].arg)}) unrolled inside"
                for n in toposort(after) if n.op is Ops.STORE and len(n.src) > 3
                and n.src[-2].arg[1] == "upcast" and n.src[-1].arg[1] == "unroll"
                and n.src[-2] not in interchanged}
    for n in toposort(after):
        if n.op is Ops.REDUCE and n.src[1:] and n.src[1].arg[1] == "thread":
            done.append(f"THREAD {n.arg.name} over r{n.src[1].arg[0]} "
                        f"({int(n.src[1].src[0].arg)} iterations)")
        if n.op is Ops.RANGE and n.arg[1] == "upcast" and n not in interchanged:
            done.append(f"UPCAST r{n.arg[0]} ({int(n.src[0].arg)} iterations"
                        f"{unrolled.get(n, '')}{blocked.get(n, '')})")
        if n.op is Ops.RANGE and n.arg[1] == "simd":
            done.append(f"UPCAST r{n.arg[0]} ({int(n.src[0].arg)} iterations, 512-bit by gcc"
                        f"{blocked.get(n, '')})")
        if n.op is Ops.REDUCE and ids(n) in scaled and len(n.src[0].src) == 2 \
                and n.src[0].src[1].op is not Ops.MUL:
            c = next(x.arg for x in scaled[ids(n)].src if x.op is Ops.CONST)
            done.append(f"UNSCALE {n.arg.name} over {' '.join(f'r{i}' for i in ids(n))} "
                        f"(times {c:g} after)")
        # a "fill" sum (opt.rules' fill_reduce): added up as its row is filled where wide_exps'
        # `fills_sum` says; else it reads the row back, a vector reduce
        if n.op is Ops.REDUCE and n.src[1:] and n.src[-1].arg[1] == "fill" \
                and fills_sum(n.src[0].src[1].src[0].src[0]):
            done.append(f"FILL {n.arg.name} over r{n.src[-1].arg[0]} ({int(n.src[-1].src[0].arg)} "
                        f"values: {REDUCE_VECTORS} vectors of 8 partial results, added as the "
                        "loop that fills its row stores them)")
        if n.op is Ops.REDUCE and (n.src[-1] in accumulated or n.src[1:] and n.src[-1].arg[1]
                                   == "fill" and not fills_sum(n.src[0].src[1].src[0].src[0])):
            size = int(n.src[-1].src[0].arg)
            lanes = vector_lanes(n.dtype.itemsize)
            nvec = reduce_vectors(n.arg, size, lanes)
            done.append(f"VECTOR {n.arg.name} over r{n.src[-1].arg[0]} ({size} values: "
                        f"{nvec} vector{'s' if nvec > 1 else ''} of {lanes} partial "
                        "results)")
        if n.op is Ops.RANGE and n.arg[1] == "vector" and n not in accumulated | interchanged:
            size = int(n.src[0].arg)
            tail = ", the last overlapping" if size % VECTOR_LANES else ""
            count = -(-size // VECTOR_LANES)
            done.append(f"UPCAST r{n.arg[0]} ({size} iterations, {count} vector"
                        f"{'s' if count > 1 else ''} of {VECTOR_LANES}{tail})")
        if n.op is Ops.STORE and isinstance(n.arg, (Pack, Flash)):
            done.append(n.arg.describe())
        if n.op is Ops.STORE and any(r.arg[1] in ACCUMULATED for r in n.src[2:]):
            line = describe(n)  # (an interchanged STORE: its columns inside the reduce loops)
            if line is not None:
                done.append(line)
    # an exp of a masked value (opt.rules' mask_actions): a select of two exps, the masked arm's
    # the same along its row
    masked = _masked_exps(after) - _masked_exps(before)
    if masked:
        done.append(f"MASK EXP: {masked} exp{'s' if masked > 1 else ''} of a select taken "
                    "through it (the masked arm once per row)")
    if isinstance(after.arg, Parallel):
        loops = {n.arg[0]: n for n in toposort(after) if n.op is Ops.RANGE}
        done += after.arg.describe({i: int(n.src[0].arg) for i, n in loops.items()})
    return done
