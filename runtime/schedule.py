"""The scheduler: a tensor graph -> kernels, by the pipeline declared in `rules/rangeify.rules`.

In: the tensor-level root UOps to compute. Out: `ScheduleItem`s (name, kernel AST, buffers; see
backends/KERNEL_AST.md) in an order that runs every producer before its consumers and every
read of a buffer before an ASSIGN overwrites it, plus, for each root, the buffer that will hold
its value.

The order of the passes, their directions, contexts and repetition are read from the
`pipeline rangeify { ... }` block of `rules/rangeify.rules` (runtime/pipeline.py runs it); this
file adds users' rule sets beside its passes, orders the kernels that assign, and maps each
tensor to its buffer. With `RULEGRAD_SPEC=1` the graph is checked after the passes that name a
spec stage (`runtime/spec.py`). `DEBUG=2` prints each kernel's name, shape and buffers;
`DEBUG=3` also its AST.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rulegrad.rules import pipeline

from .env import changed, env_int
from .gc_pause import gc_paused
from .kernelize import cache_salt, has_variables, schedule_kernelize, scheduler_name
from .limit_buffers import max_kernel_buffers
from .ops import Ops
from .pipeline import Pipeline
from .record import FrozenRecord
from .rewrite import graph_rewrite
from .schedule_cache import cached_prepared, cached_schedule, note_reads
from .schedule_item import ScheduleItem, copy_old_reads, order_assigns, schedule_items
from .target import cache_bytes, parallel_min_work, threads, vector_bytes
from .uop import OP_BIT, UOp, print_graph, toposort

if TYPE_CHECKING:  # the contexts are declared in rangeify.rules
    from rulegrad.rules.generated.rangeify import RangeifyContext, RealizeContext


# ====================================================================== users' rule sets
def scheduler() -> Pipeline:
    """The scheduler's pipeline, as `rules/rangeify.rules` declares it."""
    return pipeline("rangeify", "rangeify")


def stages() -> tuple[str, ...]:
    """The passes a user's rule set can run before or after (all but those that only collect:
    "before add_realize" runs ahead of do_realize, which collects for it)."""
    return scheduler().stages


class UserPass(FrozenRecord):
    """A rule set of a user's `.rules` file, run as a pass of its own at a point of the
    pipeline. Also a context manager: `with rulegrad.add_rules(...):` removes it at the end."""

    __slots__ = ("path", "rule_set", "when", "stage", "bottom_up", "matcher", "reads")
    path: str
    rule_set: str
    when: str  # "before" or "after"
    stage: str
    bottom_up: bool
    matcher: Any
    # where its rules may read constants' values (ops at their roots, None: any; how deep);
    # None: they match structure only (the schedule cache keeps the values they read)
    reads: tuple[frozenset[Ops] | None, int] | None

    def __init__(self, path: str, rule_set: str, when: str, stage: str, bottom_up: bool,
                 matcher: Any, reads: tuple[frozenset[Ops] | None, int] | None = None):
        self._init(path, rule_set, when, stage, bottom_up, matcher, reads)

    def __enter__(self) -> UserPass:
        return self

    def __exit__(self, *exc: object) -> None:
        remove_rules(self)


_user_passes: list[UserPass] = []


def register(up: UserPass) -> UserPass:
    """Put a user's pass into the pipeline (`rulegrad.add_rules`, generator/user.py, loads and
    checks it first)."""
    if up.stage not in stages():
        raise ValueError(f"add_rules: no pass {up.stage!r} to run beside; the stages are "
                         f"{', '.join(stages())}")
    _user_passes.append(up)
    changed()  # (a realize plan is keyed by the users' passes: runtime/plans.py)
    return up


def remove_rules(up: UserPass) -> None:
    """Take a pass added by `add_rules` out of the pipeline (nothing if it is not there)."""
    for i, other in enumerate(_user_passes):
        if other is up:
            del _user_passes[i]
            changed()
            return


def _user(when: str, stage: str, sink: UOp) -> UOp:
    for up in list(_user_passes):
        if up.when == when and up.stage == stage:
            if up.reads is not None:  # the values it may read: before and after it ran
                note_reads(sink, *up.reads)
            sink = graph_rewrite(sink, up.matcher, bottom_up=up.bottom_up, name=up.rule_set)
            if up.reads is not None:
                note_reads(sink, *up.reads)
    return sink


def user_pass_ids() -> tuple[int, ...]:
    """Which users' passes are in the pipeline now, by identity (runtime/plans.py's key)."""
    return tuple(id(up) for up in _user_passes) if _user_passes else ()


def user_passes_key() -> tuple:
    """What the pipeline's users' passes are now (part of the schedule cache's key)."""
    return tuple((up.when, up.stage, up.bottom_up, id(up.matcher)) for up in _user_passes)


# ====================================================================== the pipeline
def rangeify(sink: UOp) -> tuple[UOp, dict[UOp, UOp]]:
    """SINK of tensor roots -> (SINK of ASSIGN(BUFFER, KERNEL), {tensor node: what it became}).

    A root or realized intermediate becomes `BUFFER.reshape(shape)` (a kernel writes it); a
    root that needs no kernel (a view of an existing buffer) stays what it is."""
    inputs: dict[str, UOp] = {}
    # (no hook at all while no user's pass is added: one call less per pass)
    ksink, ctxs = scheduler().run(sink, _user if _user_passes else None, inputs)
    if env_int("DEBUG", 0) >= 2:  # the kernel-local cost rules' choices (when it is scheduled)
        for line in cost_report(ctxs["pm_rangeify"]):
            print(f"cost   {line}")
    # assign ordering: a kernel that reads a buffer's old value runs before it is overwritten
    # (only a tensor ASSIGN overwrites a buffer a kernel reads: without one, nothing to order)
    if sink._ops & OP_BIT[Ops.ASSIGN]:
        ksink = order_assigns(ksink)
    # the graph add_realize numbered (the SINK keeps its sources' order)
    early = dict(zip(sink.src, inputs["add_realize"].src))
    return ksink, becomes_map(sink, early, ctxs["add_realize"], ksink)


def cost_report(ctx: RangeifyContext) -> list[str]:
    """The kernel-local cost rules' choices (rules/rangeify.rules), one line per node and
    choice: what was computed in its reader's kernel (local) and what was not, and why."""
    out = []
    for n, choices in ctx.costs.items():
        what = (f"{n.arg[0].name} over axes {tuple(n.arg[1])} of {n.src[0].shape}"
                if n.op is Ops.REDUCE_AXIS else f"{n.op.name} {n.dtype.name}{list(n.shape)}")
        out.extend(f"{what}: {c}" for c in choices)
    return out


# ====================================================================== after the passes
def becomes_map(sink: UOp, early: dict[UOp, UOp], realized: RealizeContext,
                ksink: UOp) -> dict[UOp, UOp]:
    """{tensor node: what it became}: each root and each realized intermediate that got a
    buffer maps to `BUFFER.reshape(shape)` (a node later graphs can read); a root that needed
    no kernel (a view of an existing buffer) maps to itself after the earliest rewrites."""
    written: dict[int, UOp] = {}
    for a in ksink.src:
        for i in a.tag or ():
            written[i] = a.src[0]
    out: dict[UOp, UOp] = {}
    for i, x in enumerate(realized.order):
        if i in written and x.shape is not None:
            out[x] = written[i].reshape(x.shape)
    for root in sink.src:
        new = early[root]
        out[root] = out.get(new, new)
    return out


# ====================================================================== entry points
def schedule_with_outputs(uops: list[UOp],
                          scheduler: str | None = None) -> tuple[list[ScheduleItem], list[UOp]]:
    """The kernels that compute `uops`, and per root what holds its value afterwards (a graph
    of a form scheduled before is not scheduled again: runtime/schedule_cache.py). `scheduler`:
    rangeify or kernelize (runtime/kernelize.py); default RULEGRAD_SCHEDULER, else rangeify."""
    items, outs, _ = schedule_prepared(uops, None, scheduler)
    return items, outs


def schedule_prepared(uops: list[UOp], prepare: Callable[[list[UOp]], tuple[list[UOp], Any]]
                      | None, scheduler: str | None = None
                      ) -> tuple[list[ScheduleItem], list[UOp], Any]:
    """`schedule_with_outputs` of `prepare(uops)`'s roots, and what else `prepare` gave back
    (None without it). The graph is cached as `uops`, before `prepare`, so a graph of a form
    seen before is neither prepared nor scheduled again: `prepare` must be a function of the
    graph's form (runtime/realize.py's lowering of sharded roots, rules/multi.rules)."""
    name = scheduler_name(scheduler)
    # kernelize's views hold ints: a graph with symbolic sizes (variables) is rangeify's
    kernelized = name == "kernelize" and not has_variables(uops)
    front = schedule_kernelize if kernelized else schedule_rangeify

    def run(roots: list[UOp]) -> tuple[list[ScheduleItem], list[UOp]]:
        # (a kernel that would read a buffer before and after its ASSIGN reads a copy of the
        # old value instead: runtime/schedule_item.py)
        return front(copy_old_reads(roots))

    def run_prepared(uops: list[UOp]) -> tuple[list[ScheduleItem], list[UOp], Any]:
        roots, extra = prepare(uops)  # type: ignore[misc]
        return (*run(roots), extra)
    # the rules' cost guards read the machine model (rules/flash_cost.py, narrow_reduce's
    # shares): a form scheduled under other cache sizes (RULEGRAD_L1_BYTES, RULEGRAD_L2_BYTES),
    # threads, vector width or threading threshold may fuse or split differently
    salt = (user_passes_key() + cache_salt(name), max_kernel_buffers(), cache_bytes(1),
            cache_bytes(2), threads(), vector_bytes(), parallel_min_work())
    if prepare is None:
        items, outs = cached_schedule(list(uops), run, salt=salt)
        extra = None
    else:  # (a prepared graph's entry is not an unprepared one's)
        salt += (prepare.__module__, prepare.__qualname__)
        items, outs, extra = cached_prepared(list(uops), run_prepared, salt=salt)
    debug = env_int("DEBUG", 0)
    if debug >= 2:
        for i, item in enumerate(items):
            bufs = ", ".join(f"{b.dtype.name}[{b.size}]" + ("" if b.device == "CPU" else
                                                              f"@{b.device}") for b in item.bufs)
            print(f"kernel {i:3d} {item.name:24s} shape={item.shape} bufs=({bufs})")
            for line in kernel_locals(item.ast):
                print(f"           local {line}")
            if debug >= 3:
                print(print_graph(item.ast))
    return items, outs, extra


def kernel_locals(ast: UOp) -> list[str]:
    """The values a kernel computes locally, for DEBUG=2: each DEFINE_LOCAL array (its size),
    and each REDUCE read inside a loop it does not depend on (a scalar computed once per
    iteration of the outer loops, e.g. a softmax row's max), with what it reduces over."""
    out: list[str] = []
    free: dict[UOp, frozenset[UOp]] = {}  # the ranges each node depends on
    inside: dict[UOp, frozenset[UOp]] = {}  # the ranges bound where each node is read
    nodes = toposort(ast)
    for n in nodes:
        own = frozenset(n.src[1:]) if n.op in (Ops.REDUCE, Ops.DEFINE_LOCAL) else frozenset()
        deps = frozenset({n}) if n.op is Ops.RANGE else frozenset()
        for x in n.src[:1] if own else n.src:
            deps |= free[x]
        free[n] = deps - own
    for n in reversed(nodes):  # every reader before what it reads
        if n.op is Ops.STORE:
            inside[n] = frozenset(n.src[2:])
        here = inside.get(n, frozenset())
        if n.op is Ops.DEFINE_LOCAL:  # filled where its own value's loops are bound, once
            here = free[n]
        for k, x in enumerate(n.src):
            bound = here | frozenset(n.src[1:]) if k == 0 and n.op in (Ops.REDUCE,
                                                                      Ops.DEFINE_LOCAL) else here
            inside[x] = inside.get(x, frozenset()) | bound
    for n in nodes:
        if n.op is Ops.DEFINE_LOCAL:
            out.append(f"array {n.dtype.name}[{_sizes(n)}]")
        elif n.op is Ops.REDUCE and inside[n] - free[n]:
            out.append(f"scalar {n.dtype.name} ({n.arg.name} over {_sizes(n)})")
    return out


def _sizes(n: UOp) -> str:
    return "x".join(str(r.src[0].arg) for r in n.src[1:])


def schedule_rangeify(uops: list[UOp]) -> tuple[list[ScheduleItem], list[UOp]]:
    """The kernels that compute `uops` by rangeify, and per root what holds its value."""
    ksink, becomes = rangeify(UOp.sink(*uops))
    return schedule_items(ksink), [becomes[u] for u in uops]


def create_schedule(uops: list[UOp], scheduler: str | None = None) -> list[ScheduleItem]:
    """The kernels that compute `uops`, producers first (nothing is run)."""
    with gc_paused():  # a 1M-op graph: see runtime/gc_pause.py
        return schedule_with_outputs(list(uops), scheduler)[0]
