"""The kernelize scheduler: a tensor graph -> kernels by views and a grouper (tinygrad 0.11's
grouper.py + kernelize.py), the second pipeline beside rangeify (runtime/schedule.py).

In: the tensor-level root UOps. Out: the same as rangeify's: `ScheduleItem`s whose ASTs are the
kernel ASTs of backends/KERNEL_AST.md (so the C backend, the kernel interpreter and the oracle
serve both), and per root the node that holds its value afterwards.

Selected by `RULEGRAD_SCHEDULER=kernelize` or per call (`t.realize(scheduler="kernelize")`,
`t.schedule(scheduler=...)`); rangeify is the default. The passes, in order, each with why it is
there, are the `pipeline kernelize` at the end of `rules/kernelize.rules`.

A graph with symbolic sizes (variables) is scheduled by rangeify: views here hold ints.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rulegrad.rules import pipeline
from rulegrad.rules.kernelize_helpers import root_value

from .env import env_get
from .ops import Ops
from .schedule_item import ScheduleItem, order_assigns, schedule_items
from .uop import UOp, toposort

if TYPE_CHECKING:  # declared in rules/kernelize.rules
    from rulegrad.rules.generated.kernelize import KernelizeContext

SCHEDULERS = ("rangeify", "kernelize")
# what else a kernelize schedule depends on (part of the schedule cache's key)
FLAGS = ("MAX_KERNEL_BUFFERS", "DONT_REALIZE_EXPAND", "DONT_GROUP_REDUCES", "FUSE_ARANGE")
_chosen: contextvars.ContextVar[str | None] = contextvars.ContextVar("scheduler", default=None)


class SchedulerError(ValueError):
    """An unknown scheduler name."""


def scheduler_name(explicit: str | None = None) -> str:
    """The scheduler to use: `explicit`, else the one a `using(...)` block chose, else
    RULEGRAD_SCHEDULER, else rangeify."""
    name = explicit or _chosen.get() or (env_get("RULEGRAD_SCHEDULER") or "").strip().lower()
    name = name or "rangeify"
    if name not in SCHEDULERS:
        raise SchedulerError(f"scheduler {name!r} does not exist; choose one of "
                             f"{', '.join(SCHEDULERS)} (RULEGRAD_SCHEDULER or scheduler=)")
    return name


# the scheduler a `using(...)` block chose here (None: none chose one): the ContextVar's own
# `get`, a C call, since every plan lookup of a small program asks (a Python frame around it
# was a few percent of such a call)
chosen_scheduler: Callable[[], str | None] = _chosen.get


@contextlib.contextmanager
def using(name: str | None) -> Iterator[None]:
    """Schedule with `name` inside the block (None: no change)."""
    if name is not None:
        scheduler_name(name)  # an unknown name fails here, before any work
    token = _chosen.set(name) if name is not None else None
    try:
        yield
    finally:
        if token is not None:
            _chosen.reset(token)


def cache_salt(name: str) -> tuple:
    """What a schedule by `name` depends on besides the graph."""
    if name == "rangeify":
        return ()
    return ("kernelize",) + tuple(os.environ.get(f, "") for f in FLAGS)


# ====================================================================== the pipeline
def kernelize(sink: UOp) -> tuple[UOp, dict[UOp, UOp]]:
    """SINK of tensor roots -> (SINK of ASSIGN(BUFFER, KERNEL), {root: what holds its value}),
    by the `pipeline kernelize` of rules/kernelize.rules."""
    inputs: dict[str, UOp] = {}
    tsink, ctxs = pipeline("kernelize", "kernelize").run(sink, None, inputs)
    ctx = ctxs["do_realize"]
    early = dict(zip(sink.src, inputs["merge_views"].src))  # the SINK keeps its sources' order
    viewed = dict(zip(sink.src, inputs["do_realize"].src))
    ksink = UOp.sink(*[a for a in toposort(tsink)
                       if a.op is Ops.ASSIGN and a.src[1].op is Ops.KERNEL])
    # assign ordering: a kernel reading a buffer's old value runs before the one that assigns it
    ksink = order_assigns(ksink)
    written = {a.tag[0]: a.src[0] for a in ksink.src if a.tag is not None}
    out: dict[UOp, UOp] = {}
    for root in sink.src:
        new = becomes(ctx, written, viewed[root])
        out[root] = early[root] if new is None else new
    return ksink, out


def becomes(ctx: KernelizeContext, written: dict[int, UOp], x: UOp) -> UOp | None:
    """The node a realized tensor node reads afterwards: its buffer, shaped like it
    (`written`: REALIZE number -> the BUFFER its kernel wrote)."""
    shape = x.shape
    if x.op is Ops.BUFFER:
        return x
    if x.op is Ops.VIEW and x.src[0].op is Ops.BUFFER and x.arg.is_contiguous and \
            x.size == x.src[0].size:
        return x.src[0].reshape(shape)  # a root that already was its buffer, reshaped
    x = root_value(x)
    for i, y in enumerate(ctx.order):
        if y is x and i in written:
            return written[i].reshape(shape)
    return None


# ====================================================================== entry point
def has_variables(uops: list[UOp]) -> bool:
    """Whether the graph has symbolic sizes (which kernelize's integer views cannot hold)."""
    return any(n.op in (Ops.DEFINE_VAR, Ops.BIND) for n in toposort(UOp.sink(*uops)))


def schedule_kernelize(uops: list[UOp]) -> tuple[list[ScheduleItem], list[UOp]]:
    """The kernels that compute `uops` by kernelize, and per root what holds its value (the
    caller, runtime/schedule.py, sends a graph with variables to rangeify instead)."""
    ksink, out = kernelize(UOp.sink(*uops))
    return schedule_items(ksink), [out[u] for u in uops]
