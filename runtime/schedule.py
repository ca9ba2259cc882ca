"""The scheduler: a tensor graph -> kernels, by the rangeify rule passes of `rules/rangeify.rules`.

In: the tensor-level root UOps to compute. Out: `ScheduleItem`s (name, kernel AST, buffers; see
backends/KERNEL_AST.md) in an order that runs every producer before its consumers and every
read of a buffer before an ASSIGN overwrites it, plus, for each root, the buffer that will hold
its value.

`rangeify` is the pipeline: one line per pass, in order, each a named rule set (the rules say
what each pass does; this file only says in which order and why). With `RULEGRAD_SPEC=1` the
graph is checked after every pass (`runtime/spec.py`). `DEBUG=2` prints each kernel's name,
shape and buffers; `DEBUG=3` also its AST.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from rulegrad.rules import matcher
from rulegrad.rules.rangeify_helpers import (
    ChildrenContext,
    KernelContext,
    RangeifyContext,
    RealizeContext,
    predict_buffers,
)

from .buffer import Buffer
from .env import env_flag, env_int
from .ops import Ops
from .rewrite import graph_rewrite
from .schedule_cache import cached_schedule
from .uop import UOp, print_graph, toposort


@dataclass(frozen=True)
class ScheduleItem:
    """One kernel: `bufs[i]` is its DEFINE_GLOBAL i (bufs[0] is the output)."""

    name: str
    ast: UOp
    bufs: tuple[Buffer, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        """The sizes of the kernel's output loops (outermost first)."""
        return tuple(r.src[0].arg for r in self.ast.src[0].src[2:])


# ====================================================================== users' rule sets
# the passes of `rangeify` a user's rule set can run before or after (do_realize only collects,
# and the rest works on kernels, not on the tensor graph)
STAGES = ("earliest", "add_realize", "pm_children", "pm_rangeify", "pm_cleanups",
          "split_kernels")


@dataclass(frozen=True)
class UserPass:
    """A rule set of a user's `.rules` file, run as a pass of its own at a point of the
    pipeline. Also a context manager: `with add_rules(...):` removes it at the end."""

    path: str
    rule_set: str
    when: str  # "before" or "after"
    stage: str
    bottom_up: bool
    matcher: Any

    def __enter__(self) -> UserPass:
        return self

    def __exit__(self, *exc: object) -> None:
        remove_rules(self)


_user_passes: list[UserPass] = []


def add_rules(path: str | os.PathLike[str], rule_set: str | None = None, *,
              before: str | None = None, after: str | None = None, bottom_up: bool = False,
              module_dir: str | os.PathLike[str] | None = None,
              regenerate: bool = True) -> UserPass:
    """Run rule set `rule_set` of the user's rules file `path` as a pass of the scheduler,
    just `before` or `after` one of its passes (`STAGES`), for every program realized from now
    on; in a `with` block, only for the programs realized inside it.

    The file's generated module (`module_dir/<stem>.py`, default `generated/` beside the file)
    is regenerated when missing or stale; with `regenerate=False` that is an error naming the
    module instead. `rule_set` may be omitted when the file has one."""
    from rulegrad.generator.user import UserRulesError, load_rules

    if (before is None) == (after is None):
        raise ValueError("add_rules: say where the pass runs, before=STAGE or after=STAGE "
                         f"(one of {', '.join(STAGES)})")
    stage = before if before is not None else after
    if stage not in STAGES:
        raise ValueError(f"add_rules: no pass {stage!r} to run beside; the stages are "
                         f"{', '.join(STAGES)}")
    found = load_rules(path, module_dir, regenerate)
    if rule_set is None:
        if len(found) != 1:
            raise UserRulesError(f"{path} has rule sets {', '.join(found)}: name one")
        (rule_set,) = found
    if rule_set not in found:
        raise UserRulesError(f"{path} has no rule set {rule_set!r}; it has: {', '.join(found)}")
    up = UserPass(str(path), rule_set, "before" if before is not None else "after", stage,
                  bottom_up, found[rule_set])
    _user_passes.append(up)
    return up


def remove_rules(up: UserPass) -> None:
    """Take a pass added by `add_rules` out of the pipeline (nothing if it is not there)."""
    for i, other in enumerate(_user_passes):
        if other is up:
            del _user_passes[i]
            return


def _user(when: str, stage: str, sink: UOp) -> UOp:
    for up in list(_user_passes):
        if up.when == when and up.stage == stage:
            sink = graph_rewrite(sink, up.matcher, bottom_up=up.bottom_up, name=up.rule_set)
    return sink


def user_passes_key() -> tuple:
    """What the pipeline's users' passes are now (part of the schedule cache's key)."""
    return tuple((up.when, up.stage, up.bottom_up, id(up.matcher)) for up in _user_passes)


def _spec_on() -> bool:
    return env_flag("RULEGRAD_SPEC")


def _pass(sink: UOp, stem: str, rules: str, ctx: Any = None, bottom_up: bool = False,
          stage: str | None = None, users: tuple[str, ...] = ("before", "after")) -> UOp:
    """Run one rule set over the graph; with RULEGRAD_SPEC=1, check the result's invariants.
    Users' passes added beside it (`add_rules`) run before and after it (`users`)."""
    if "before" in users:
        sink = _user("before", rules, sink)
    out = graph_rewrite(sink, matcher(stem, rules), ctx=ctx, bottom_up=bottom_up, name=rules)
    if "after" in users:
        out = _user("after", rules, out)
    if stage is not None and _spec_on():
        from .spec import verify

        verify(out, stage, rules)
    return out


# ====================================================================== the pipeline
def rangeify(sink: UOp) -> tuple[UOp, dict[UOp, UOp]]:
    """SINK of tensor roots -> (SINK of ASSIGN(BUFFER, KERNEL), {tensor node: what it became}).

    A root or realized intermediate becomes `BUFFER.reshape(shape)` (a kernel writes it); a
    root that needs no kernel (a view of an existing buffer) stays what it is."""
    # earliest rewrites: drop markers, fold size 0 and stride-0 reductions, split huge reductions
    tsink = _user("before", "earliest", sink)  # users' passes (`add_rules`) run where they asked
    tsink = graph_rewrite(tsink, matcher("rangeify", "earliest_rewrites"), name="earliest")
    tsink = _user("after", "earliest", tsink)
    tsink = _user("before", "add_realize", tsink)  # ahead of do_realize, which reads the graph
    early = dict(zip(sink.src, tsink.src))  # the SINK keeps its sources' order
    # realize marking: roots, effects and COPY/ASSIGN inputs must be memory (only collects)
    realized = RealizeContext()
    graph_rewrite(tsink, matcher("rangeify", "do_realize"), ctx=realized, name="do_realize")
    # ... and each gets a REALIZE, numbered so its buffer can be found again at the end
    tsink = _pass(tsink, "rangeify", "add_realize", realized, bottom_up=True, users=("after",))
    # children: reductions read by several consumers are marked, to be reconciled in rangeify
    # (this pass also drops add_realize's marks)
    tsink = _pass(tsink, "rangeify", "pm_children", ChildrenContext(), bottom_up=True,
                  stage="tensor")
    # rangeify: INDEX from each REALIZE down to memory; movement ops become index arithmetic,
    # reductions REDUCEs over fresh ranges or buffers (rerun until its buffer choices settle)
    tsink = _user("before", "pm_rangeify", tsink)
    tsink = _user("after", "pm_rangeify", rangeify_until_settled(tsink))
    # cleanups: fold the index arithmetic rangeify wrote (symbolic), recompute cheap buffers in
    # their readers, no buffers for constants
    tsink = _pass(tsink, "rangeify", "pm_cleanups", bottom_up=True, stage="rangeified")
    # the buffers that remain are the ones some root or reader still needs
    tsink = UOp.sink(*[x for x in toposort(tsink) if x.op is Ops.BUFFERIZE and x.tag is not None])
    # bufferize -> store -> kernel: each buffer gets its BUFFER and a STORE over its ranges, and
    # each STORE is a kernel (producers first: top-down), read later through its ASSIGN
    tsink = _pass(tsink, "rangeify", "split_kernels", stage="kernels")
    # assign ordering: a kernel that reads a buffer's old value runs before it is overwritten
    tsink = order_assigns(tsink)
    return tsink, becomes_map(sink, early, realized, tsink)


def rangeify_until_settled(tsink: UOp) -> UOp:
    """pm_rangeify, rerun while it discovers nodes that must be buffered for every reader.

    Whether a shared node needs a buffer depends on all its readers, which a single bottom-up
    walk meets one at a time (tinygrad waits with RewriteNotReady; a bottom-up pass here cannot
    defer). So a run records what it had to buffer and what was read at several places, and
    the next run buffers those everywhere. The set only grows: usually one or two runs."""
    force = predict_buffers(tsink)
    while True:
        ctx = RangeifyContext(force=force)
        out = _pass(tsink, "rangeify", "pm_rangeify", ctx, bottom_up=True, stage="rangeified",
                    users=())
        again = ctx.must_buffer()
        if ctx.settled(again):
            return out
        force = again


def kernel_passes(store: UOp, ctx: KernelContext) -> UOp:
    """The AST of one kernel (called by `split_kernels` for each STORE)."""
    # DEFINE_GLOBALs for buffers, LOADs for reads, ranges renumbered from 0, and the index
    # arithmetic folded once more, now that loads have split off their masks
    ast = graph_rewrite(UOp.sink(store), matcher("kernel", "to_kernel"), ctx=ctx, bottom_up=True,
                        name="to_kernel")
    if _spec_on():
        from .spec import verify

        verify(ast, "kernel", "to_kernel")
    return ast


# ====================================================================== after the passes
def order_assigns(sink: UOp) -> UOp:
    """A kernel that reads the old value of a buffer another kernel assigns to must run first:
    the assigning kernel gets the reader as an extra dependency (tinygrad's fix_assign).

    The graph is rebuilt once, in an order that counts the new dependencies, so that a kernel
    which gains a dependency is the same node everywhere it is used (several assigns in one
    schedule: an optimizer step, where the parameter's update reads the old momentum)."""
    nodes = toposort(sink)
    readers: dict[UOp, list[UOp]] = {}
    for a in nodes:
        if a.op is Ops.ASSIGN and a.src[1].op is Ops.KERNEL:
            for s in a.src[1].src:
                if s.op is Ops.BUFFER:
                    readers.setdefault(s, []).append(a)
    extra: dict[UOp, tuple[UOp, ...]] = {}  # kernel -> the assigns that must run before it
    for w in nodes:
        if w.op is Ops.ASSIGN and w.src[1].op is Ops.KERNEL:
            before = tuple(r for r in readers.get(w.src[0], ()) if r is not w)
            if before:
                extra[w.src[1]] = extra.get(w.src[1], ()) + before
    if not extra:
        return sink
    new: dict[UOp, UOp] = {}
    for node in _order_with(sink, extra):
        src = tuple(new[s] for s in node.src) + tuple(new[e] for e in extra.get(node, ()))
        new[node] = node if src == node.src else node.replace(src=src)
    return new[sink]


def _order_with(sink: UOp, extra: dict[UOp, tuple[UOp, ...]]) -> list[UOp]:
    """Sources (and extra dependencies) before users; iterative; a cycle is an error."""
    order: list[UOp] = []
    state: dict[UOp, int] = {}  # 1: on the walk's path, 2: done
    stack: list[tuple[UOp, bool]] = [(sink, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            state[node] = 2
            order.append(node)
            continue
        if state.get(node) == 2:
            continue
        state[node] = 1
        stack.append((node, True))
        for s in reversed(node.src + extra.get(node, ())):
            if state.get(s) == 1:
                buf = node.src[0].arg if node.op is Ops.ASSIGN else "?"
                raise RuntimeError(f"cycle: a kernel reads buffer {buf} both before and after "
                                   "an assign to it in the same schedule")
            if state.get(s) != 2:
                stack.append((s, False))
    return order


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
def schedule_with_outputs(uops: list[UOp]) -> tuple[list[ScheduleItem], list[UOp]]:
    """The kernels that compute `uops`, and per root what holds its value afterwards (a graph
    of a form scheduled before is not scheduled again: runtime/schedule_cache.py)."""
    items, outs = cached_schedule(list(uops), _schedule_uncached, salt=user_passes_key())
    debug = env_int("DEBUG", 0)
    if debug >= 2:
        for i, item in enumerate(items):
            bufs = ", ".join(f"{b.dtype.name}[{b.size}]" + ("" if b.device == "CPU" else
                                                              f"@{b.device}") for b in item.bufs)
            print(f"kernel {i:3d} {item.name:24s} shape={item.shape} bufs=({bufs})")
            if debug >= 3:
                print(print_graph(item.ast))
    return items, outs


def _schedule_uncached(uops: list[UOp]) -> tuple[list[ScheduleItem], list[UOp]]:
    ksink, becomes = rangeify(UOp.sink(*uops))
    items = [ScheduleItem(k.arg.name, k.arg.ast, k.arg.bufs)
             for k in toposort(ksink) if k.op is Ops.KERNEL]
    return items, [becomes[u] for u in uops]


def create_schedule(uops: list[UOp]) -> list[ScheduleItem]:
    """The kernels that compute `uops`, producers first (nothing is run)."""
    return schedule_with_outputs(list(uops))[0]
