"""Realize plans: a small graph realized again over the same buffers skips all graph work.

In: the roots of a realize (`runtime/realize.py` asks first). Out: their buffers, written by the
program the same roots got from the C backend last time, or None (the ordinary path runs, and
the C backend records a plan for roots that are neither buffers nor ASSIGNs).

Tensor graphs are hash-consed: building `a + 1` again over the same `a` gives the very node
built before, as long as that node is alive. A plan holds the roots it was made for (so they
stay alive, and with them the buffers they read) and what the C backend did for them: the
compiled program and, for each kernel argument, a buffer of the graph (an input, or a float
argument's one-element buffer, which holds the same value for the same graph) or a buffer the
run allocates (an output or intermediate, fresh each time, as a replayed schedule's are). A hit
costs a dictionary lookup, the allocations and the C calls: no graph walk, no schedule-cache key,
no schedule items. It is what keeps a warm realize of a small op near the cost of its C call.

Because a plan keeps its graph's buffers alive, a graph is planned only if its buffers hold at
most `PLAN_MAX_BYTES`, and the plans kept hold at most `PLANS_MAX_BYTES` in all and number at
most `MAX_PLANS`, least recently used dropped first. A loop over fresh inputs thus keeps at most
that much memory alive, while a loop over the same ones (inference, a benchmark, a 1 ms
reduction where 0.1 ms of graph work is a tenth of the call) runs its plan.

A plan is looked up under the settings that could change what the ordinary path would do
(scheduler, flags, users' passes, debug output, ...), read from the environment's raw table
only after a write to os.environ (runtime/env.py counts them): reading them per call cost a
quarter of this path. Nothing is planned while DEBUG, rule tracing, match statistics or spec
checks watch the passes, for ASSIGN roots (a write's ordering is the scheduler's), or for
sharded roots. `RULEGRAD_PLANS=0` turns plans off
(on/off, true/false, yes/no also read; any other value is an `EnvError` naming the variable).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from sys import getrefcount
from typing import Any

from . import buffer as _buffer
from . import capture
from .buffer import Buffer, result_node
from .env import env_flag, environ_version, raw_reader
from .kernelize import chosen_scheduler
from .ops import Ops
from .rewrite import tracing_active
from .schedule import user_pass_ids
from .uop import UOp, toposort

MAX_PLANS = 64
PLAN_MAX_BYTES = 64 << 20
PLANS_MAX_BYTES = 256 << 20

# what the ordinary path reads that could make it do something else for the same roots
_SETTINGS = ("RULEGRAD_PLANS", "RULEGRAD_BACKEND", "RULEGRAD_SCHEDULER", "RULEGRAD_CFLAGS",
             "RULEGRAD_CC", "DEBUG", "RULEGRAD_SCHEDULE_CACHE",
             "RULEGRAD_SPEC", "RULEGRAD_MATCH_STATS",
             "RULEGRAD_MATCHER", "RULEGRAD_FLOAT_PARAMS", "RULEGRAD_MAX_KERNEL_BUFFERS",
             "RULEGRAD_MAX_PROGRAMS", "MAX_KERNEL_BUFFERS", "DONT_REALIZE_EXPAND",
             "DONT_GROUP_REDUCES", "FUSE_ARANGE",
             "RULEGRAD_MAX_BUFFER_BYTES",  # (a plan's buffers were checked against the limit)
             # what the optimizer's choices read (backends/c/run.py's CHOICE_SETTINGS)
             "RULEGRAD_OPT", "RULEGRAD_VECTOR_BYTES", "RULEGRAD_L1_BYTES", "RULEGRAD_L2_BYTES",
             "RULEGRAD_L3_BYTES", "RULEGRAD_THREADS", "OMP_NUM_THREADS", "RULEGRAD_BEAM")
_OFF = (None, b"", b"0", "", "0")  # unset or 0: these do not watch the passes
# set to anything else, these turn plans off (the passes are being watched)
_WATCHERS = tuple(_SETTINGS.index(k) for k in ("DEBUG", "RULEGRAD_SPEC", "RULEGRAD_MATCH_STATS",
                                              "RULEGRAD_MATCHER"))
_ON = (None, b"", b"1", "", "1")  # RULEGRAD_PLANS unset, empty or 1: plans on, not parsed

_settings = raw_reader(_SETTINGS)  # (bytes on POSIX: _OFF and _ON hold both kinds)
# what the settings allow, read again only after a write to os.environ (runtime/env.py):
# (environ_version then, plans may run, the settings' id: a small int hashes at no cost)
_env_state: tuple[object, bool, int] = (None, False, -1)
_env_ids: dict[tuple, int] = {}


class Plan:
    __slots__ = ("roots", "prog", "fixed", "fresh", "args", "outs", "var_vals", "held",
                 "busy", "owned", "nodes", "mine", "addrs", "calls", "moves", "epoch")

    def __init__(self, roots: tuple[UOp, ...], prog: Any, fixed: list[Buffer],
                 fresh: list[tuple[int, Any, str]], args: list[tuple[int, ...]],
                 outs: list[int], var_vals: dict[str, int], held: int):
        self.roots = roots          # held: the same nodes come back while the plan lives
        # the CProgram, weakly: the table of programs (backends/c/run.py) bounds how many
        # libraries stay loaded, and a plan whose program it dropped is dropped too
        self.prog = weakref.ref(prog)
        self.fixed = fixed          # the graph's buffers the kernels read, slots 0..n-1
        self.fresh = fresh          # (size, dtype, device) of each buffer a run allocates
        self.args = args            # per kernel: its buffers' slots (fixed, then fresh)
        self.outs = outs            # per root: its buffer's slot
        self.var_vals = var_vals    # symbolic sizes' values (bound in the graph itself)
        self.held = held            # bytes this plan keeps alive (its graph's, its own)
        # what one run at a time reuses (`busy`): the fresh buffers (`owned`), the result node
        # per root (`nodes`) and, per output buffer, what is checked to be ours alone (`mine`),
        # the kernels' addresses (`addrs`) and each kernel bound to its own (`calls`), valid
        # while no buffer moved (`moves`)
        self.busy = threading.Lock()
        self.owned: list[Buffer] | None = None
        self.nodes: list[UOp] = []
        self.mine: list[tuple[UOp, UOp, Buffer]] = []
        self.addrs: list[tuple[int, ...]] = []
        self.calls: list[Callable[[], None]] = []
        self.moves = -1
        self.epoch = -1  # `_epoch` when it was last moved to the table's end


_plans: OrderedDict[tuple, Plan] = OrderedDict()
_held = 0  # the plans' `held`, summed
# counts the plans recorded: a plan hit is moved to the table's end once per recording, since
# only a recording drops plans (from the front: those not run since the last one, oldest first)
_epoch = 0
_lock = threading.Lock()
stats = {"hits": 0, "recorded": 0}


def _read_environment(version: object) -> tuple[object, bool, int]:
    """(version, whether the settings let plans run, the settings' id), read now."""
    global _env_state
    env = _settings()
    # (a value of RULEGRAD_PLANS that is no on/off setting is an error naming the variable:
    # raised on every call, since the state is then not kept)
    on = env[0] in _ON or env_flag("RULEGRAD_PLANS", default=True)
    on = on and all(env[i] in _OFF for i in _WATCHERS)
    _env_state = (version, on, _env_ids.setdefault(env, len(_env_ids)))
    return _env_state


def key(uops: Sequence[UOp]) -> tuple | None:
    """The lookup key of these roots now, or None when nothing may be planned."""
    state = _env_state  # the settings, read again only after a write to os.environ
    if state[0] != (version := environ_version()):
        state = _read_environment(version)
    if not state[1] or tracing_active() or capture.active is not None:  # (jit records launches)
        return None
    return (tuple(uops), state[2], chosen_scheduler(), user_pass_ids())


def run(k: tuple) -> list[UOp] | None:
    """The roots' result nodes (`BUFFER.reshape(shape)`), computed by their plan; None when
    there is none."""
    # one lock per run, the plan's own: the table's lookups and its least-recently-used order
    # are single OrderedDict calls, each atomic under the GIL, so they take none (`_lock` is
    # for what changes several things at once: recording, dropping, clearing)
    plan = _plans.get(k)
    if plan is None:
        return None
    prog = plan.prog()
    if prog is None:  # its library was unloaded
        _drop(k, plan)
        return None
    stats["hits"] += 1
    if not plan.busy.acquire(blocking=False):  # another thread runs it: all buffers fresh
        return _run_fresh(plan, prog)
    try:
        if plan.epoch != _epoch:  # (a hot loop's plan moves once, not on every run)
            plan.epoch = _epoch
            try:
                _plans.move_to_end(k)
            except KeyError:  # (dropped by another thread since the lookup: it still runs once)
                pass
        prog.touch()
        if plan.owned is None or not _ours(plan.mine):
            _new_results(plan)
        if plan.moves != _buffer.moves:  # some input moved to a copy (Buffer.prepare_write)
            slots = [b.address() for b in plan.fixed] + [b.address() for b in plan.owned]
            plan.addrs = [tuple([slots[i] for i in a]) for a in plan.args]  # (built once)
            plan.calls = [partial(kernel.fn, *addrs)
                          for kernel, addrs in zip(prog.kernels, plan.addrs)]
            plan.moves = _buffer.moves
        if plan.var_vals:
            prog.run_addresses(plan.addrs, None, plan.var_vals)
        else:  # (the kernels called directly: the common run, without a call around them)
            for call in plan.calls:
                call()
        return list(plan.nodes)
    finally:
        plan.busy.release()


def _drop(k: tuple, plan: Plan) -> None:
    global _held
    with _lock:
        if _plans.get(k) is plan:
            _held -= _plans.pop(k).held


def _ours(mine: list[tuple[UOp, UOp, Buffer]]) -> bool:
    """Whether no one but the plan holds the results it handed out last: no tensor or graph
    holds a result node or its BUFFER node, no one the Buffer, no array its storage. Then the
    next run may write them again and hand them out as new."""
    for node, base, buf in mine:
        if node is not base and node.src[0] is not base:
            return False  # a symbolic size's view of a view: not followed, never reused
        # node: plan.nodes, the tuple, `node` (and `base` when it is the BUFFER node itself),
        # getrefcount's argument; base: node.src, the tuple, `base`, the argument; buf:
        # base.arg, the hash-consing table's key for base (runtime/uop.py), plan.owned, the
        # tuple, `buf`, the argument; its storage: buf.data, the argument
        if node is base:
            if getrefcount(node) != 6:
                return False
        elif getrefcount(node) != 4 or getrefcount(base) != 4:
            return False
        if getrefcount(buf) != 6 or getrefcount(buf.data) != 2:
            return False
    return True


def _new_results(plan: Plan) -> None:
    """New buffers for the results (the last ones are someone else's now), their nodes, and
    the plan's own intermediate buffers on its first run."""
    n_fixed = len(plan.fixed)
    outs = {i - n_fixed for i in plan.outs if i >= n_fixed}
    owned = plan.owned or [None] * len(plan.fresh)
    for i, (size, dt, dev) in enumerate(plan.fresh):
        if plan.owned is None or i in outs:  # (an intermediate stays: no one else sees it)
            owned[i] = Buffer(size, dt, device=dev)
            owned[i].ensure()
    plan.owned = owned
    bufs = plan.fixed + owned
    plan.nodes = [result_node(bufs[i], r.shape) for i, r in zip(plan.outs, plan.roots)]
    plan.mine = []
    for i, node in zip(plan.outs, plan.nodes):
        if i >= n_fixed:  # (a root over a buffer of the graph is only read: never checked)
            plan.mine.append((node, node.base, bufs[i]))
    plan.moves = -1  # new addresses


def _run_fresh(plan: Plan, prog: Any) -> list[UOp]:
    """A run with buffers of its own (while another thread runs the plan's)."""
    bufs = plan.fixed + [Buffer(size, dt, device=dev) for size, dt, dev in plan.fresh]
    addrs = [[bufs[i].address() for i in a] for a in plan.args]
    prog.run_addresses(addrs, None, plan.var_vals)
    return [result_node(bufs[i], r.shape) for i, r in zip(plan.outs, plan.roots)]


def record(k: tuple, items: Sequence[Any], prog: Any, outs: Sequence[Buffer],
           var_vals: dict[str, int]) -> None:
    """Keep what the ordinary path did for the roots in `k`, when they may be planned."""
    roots = k[0]
    if any(r.op is Ops.ASSIGN for r in roots) or len(prog.kernels) != len(items):
        return
    in_graph: set[int] = set()
    held = 0
    buffer, unplanned = Ops.BUFFER, (Ops.ASSIGN, Ops.MULTI, Ops.MSTACK, Ops.COPY)  # read once
    for n in toposort(UOp.sink(*roots)):
        if n.op is buffer:
            in_graph.add(id(n.arg))
            held += n.arg.size * n.arg.dtype.itemsize
        elif n.op in unplanned:
            return
    if held > PLAN_MAX_BYTES:
        return
    # a buffer the graph holds (an input, a root's existing buffer) is fixed, and so is a float
    # argument's one-element buffer (made from host data: this graph's value); the buffers the
    # schedule created (allocated by their kernel) are allocated afresh by each run
    slot: dict[int, int] = {}
    fixed: list[Buffer] = []
    created: list[Buffer] = []
    for item in items:
        for b in item.bufs:
            if id(b) in slot:
                continue
            if id(b) in in_graph or b.from_host:
                slot[id(b)] = len(fixed)
                fixed.append(b)
            else:
                slot[id(b)] = -1 - len(created)
                created.append(b)
    for b in outs:
        if id(b) not in slot:
            if id(b) not in in_graph:
                return  # a root whose buffer no kernel writes and the graph does not hold
            slot[id(b)] = len(fixed)
            fixed.append(b)
    held += sum(b.size * b.dtype.itemsize for b in created)  # the plan's own, once it ran
    if held > PLAN_MAX_BYTES:
        return
    n_fixed = len(fixed)

    def at(b: Buffer) -> int:
        s = slot[id(b)]
        return s if s >= 0 else n_fixed - 1 - s

    args = [tuple(at(b) for b in item.bufs[:k_.nparams]) for item, k_ in zip(items, prog.kernels)]
    plan = Plan(roots, prog, fixed, [(b.size, b.dtype, b.device) for b in created], args,
                [at(b) for b in outs], dict(var_vals), held)
    global _held, _epoch
    with _lock:
        old = _plans.pop(k, None)
        _held += held - (old.held if old is not None else 0)
        _plans[k] = plan
        _epoch += 1
        stats["recorded"] += 1
        while len(_plans) > MAX_PLANS or _held > PLANS_MAX_BYTES:
            _held -= _plans.popitem(last=False)[1].held


def held_bytes() -> int:
    """What the plans kept keep alive, in bytes."""
    return _held


def clear() -> None:
    global _held
    with _lock:
        _plans.clear()
        _held = 0
