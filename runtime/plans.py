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

A graph built again over new buffers (`Tensor(array) + 1` with a fresh array each call, a
model's forward over each new batch) is a new graph: its roots are new nodes. Its *form* is not:
`schedule_cache.graph_key` (ops, dtypes, args, constants' values, and each buffer as a slot with
its size, dtype and device) is the same for every graph that is the same program over other
buffers. When a second graph of a form is recorded, the form gets a plan too: the same program,
each graph buffer the kernels read as a parameter filled from this call's graph (found by the
walk that builds the key), its own buffers as a roots plan's. A form plan holds no buffer of any
graph, so a loop over fresh inputs keeps none alive. Looking one up costs that one walk, and is
tried only for roots whose (op, dtype, shape) are some form plan's: other graphs pay nothing.
A form plan is made only when every root lands in a buffer the run allocates and no size is
symbolic. A form plan that serves a graph over the same buffers twice in a row (tensors realized
once, the graph over them built again in a loop after fresh arrays made the form's plan) gives
those roots a plan of their own: else they would pay the walk at every call.

No plan is kept for a graph with a buffer on a device other than the default ("CPU:1"): a
plan holds its inputs and its own buffers, and a live buffer on another device keeps the
device checks on (runtime/device_use.py: some 170 Python calls more per training step, for as
long as the plan lives, and the buffer's memory with it). A one-device program's plans are as
they were; a program on other devices realizes through the schedule cache.

Because a plan keeps its graph's buffers alive, a graph is planned only if its buffers hold at
most `PLAN_MAX_BYTES` (a form plan: its own buffers), and the plans kept (of roots and of forms,
in one table) hold at most `PLANS_MAX_BYTES` in all and number at most `MAX_PLANS`, least
recently used dropped first. A loop over fresh inputs thus keeps at most that much memory
alive, while a loop over the same ones (inference, a benchmark, a 1 ms reduction where 0.1 ms of
graph work is a tenth of the call) runs its plan.

A plan is looked up under the settings that could change what the ordinary path would do
(scheduler, flags, users' passes, debug output, ...), read from the environment's raw table
only after a write to os.environ or another change (a tracing block, a user's pass: one counter,
runtime/env.py's `generation`, compared inline): reading them per call cost a quarter of this
path. Nothing is planned while DEBUG, rule tracing, match statistics or spec
checks watch the passes, for ASSIGN roots (a write's ordering is the scheduler's), or for
sharded roots. `RULEGRAD_PLANS=0` turns plans off
(on/off, true/false, yes/no also read; any other value is an `EnvError` naming the variable).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter
from sys import getrefcount
from typing import Any

from . import buffer as _buffer
from . import capture
from . import env as _env
from .buffer import Buffer, addresses, result_node
from .device import DEFAULT
from .env import counted_environ, env_flag, environ_version, raw_reader
from .float_params import param_buffer, param_value
from .kernelize import chosen_scheduler
from .ops import Ops
from .rewrite import tracing_active
from .schedule import user_pass_ids
from .schedule_cache import free_values, graph_key, step_done, step_form
from .uop import UOp

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
             "RULEGRAD_L3_BYTES", "RULEGRAD_THREADS", "OMP_NUM_THREADS", "RULEGRAD_BEAM",
             "RULEGRAD_BLOCK_LIBRARY")
_OFF = (None, b"", b"0", "", "0")  # unset or 0: these do not watch the passes
# set to anything else, these turn plans off (the passes are being watched)
_WATCHERS = tuple(_SETTINGS.index(k) for k in ("DEBUG", "RULEGRAD_SPEC", "RULEGRAD_MATCH_STATS",
                                              "RULEGRAD_MATCHER"))
_ON = (None, b"", b"1", "", "1")  # RULEGRAD_PLANS unset, empty or 1: plans on, not parsed

_settings = raw_reader(_SETTINGS)  # (bytes on POSIX: _OFF and _ON hold both kinds)
# what the settings allow, read again only after a write to os.environ or a `changed()`
# (runtime/env.py): (environ_version then, plans may run, the id of the settings and the users'
# passes: a small int hashes at no cost)
_env_state: tuple[object, bool, int] = (None, False, -1)
_env_ids: dict[tuple, int] = {}
_counted = counted_environ()  # (os.environ while its writes are counted: `generation` holds)


class Plan:
    __slots__ = ("roots", "shapes", "inputs", "sig", "getters", "prog", "fixed", "fresh", "args",
                 "outs", "var_vals", "held", "busy", "owned", "nodes", "mine", "addrs", "calls",
                 "own_addrs", "moves", "epoch", "recent", "take", "dropped", "watch", "written",
                 "spare", "lifted", "__weakref__")

    def __init__(self, roots: tuple[UOp, ...], prog: Any, fixed: list[Buffer | None],
                 fresh: list[tuple[int, Any, str]], args: list[tuple[int, ...]],
                 outs: list[int], var_vals: dict[str, int], held: int,
                 inputs: list[int] | None = None):
        # a roots plan holds its roots (the same nodes come back while the plan lives); a form
        # plan holds none (`inputs`: per fixed slot, the graph buffer that fills it at each run,
        # by its slot in the form, or -1: the plan's own, a float argument's value)
        self.roots = roots if inputs is None else ()
        self.shapes = [r.shape for r in roots]
        self.inputs = inputs
        # a form plan whose every fixed slot is a graph buffer (none a float argument's of its
        # own): the function that picks them from a run's graph buffers
        self.take = _picker(tuple(inputs)) if inputs and min(inputs) >= 0 else None
        self.sig = _signature(roots) if inputs is not None else None
        # a form plan's kernels' arguments, picked from a run's slots
        self.getters = [_picker(a) for a in args] if inputs is not None else []
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
        # the intermediates of a run whose results were handed over (`_handed`), for the next
        self.spare: list[Buffer | None] | None = None
        self.nodes: list[UOp] = []
        self.mine: list[tuple[UOp, UOp, Buffer]] = []
        self.addrs: list[tuple[int, ...]] = []
        self.calls: list[Callable[[], None]] = []
        self.own_addrs: list[int] = []  # a form plan's: its own buffers' addresses, in slot order
        self.moves = -1
        self.epoch = -1  # `_epoch` when it was last moved to the table's end
        self.dropped = False  # out of the table (a lazy record's trail then looks again)
        # a form plan's: its last run's graph buffers, by uid (the same again: a roots plan)
        self.recent: list[int] | None = None
        self.watch: list[weakref.ref] = []  # a roots plan's: its batch's tensors (`_watch`)
        # a step plan's: the graph buffers its ASSIGNs write, by slot (`_run_step`)
        self.written: tuple[int, ...] = ()
        # a step plan's: how its lifted floats are given (`_lifted`, `_refill`)
        self.lifted: tuple[tuple, tuple] = ((), ())


def _picker(slots: tuple[int, ...]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """A function of a run's addresses that gives a kernel's: these slots' (one C call; also
    picks buffers)."""
    if len(slots) == 1:
        return lambda addrs, i=slots[0]: (addrs[i],)
    return itemgetter(*slots)


def _signature(roots: Sequence[UOp]) -> tuple:
    """What a form plan's roots are (op, dtype, shape each), known without a walk: a graph
    whose roots match no form plan's is not walked for its form."""
    if len(roots) == 1:
        r = roots[0]
        return (r.op, r.dtype, r.shape)
    return tuple([(r.op, r.dtype, r.shape) for r in roots])


_plans: OrderedDict[tuple, Plan] = OrderedDict()
_held = 0  # the plans' `held`, summed
# counts the plans recorded: a plan hit is moved to the table's end once per recording, since
# only a recording drops plans (from the front: those not run since the last one, oldest first)
_epoch = 0
_lock = threading.Lock()
# the form plans' root signatures, each with how many form plans have it
_signatures: dict[tuple, int] = {}
# the forms recorded lately (keys only: no buffer): a form gets a plan when a second graph of
# it is recorded, one over other buffers (the same graph again runs its roots plan)
_seen: OrderedDict[tuple, None] = OrderedDict()
stats = {"hits": 0, "form_hits": 0, "recorded": 0, "step_hits": 0}


def _read_environment() -> tuple[object, bool, int]:
    """(version, whether the settings let plans run, the id of the settings and the users'
    passes), read now. Kept until the next write to os.environ or `changed()`: a tracing
    block entered or left, a user's pass added or removed (runtime/rewrite.py, schedule.py)."""
    global _env_state
    version = environ_version()
    env = _settings()
    # (a value of RULEGRAD_PLANS that is no on/off setting is an error naming the variable:
    # raised on every call, since the state is then not kept)
    on = env[0] in _ON or env_flag("RULEGRAD_PLANS", default=True)
    on = on and all(env[i] in _OFF for i in _WATCHERS) and not tracing_active()
    _env_state = (version, on, _env_ids.setdefault((env, user_pass_ids()), len(_env_ids)))
    return _env_state


def key(uops: Sequence[UOp]) -> tuple | None:
    """The lookup key of these roots now, or None when nothing may be planned."""
    state = _env_state  # (the settings, read again only after a change: one compare)
    if state[0] != _env.generation or os.environ is not _counted:
        state = _read_environment()
    if not state[1] or capture.active is not None:  # (rulegrad.jit records the launches)
        return None
    return (tuple(uops), state[2], chosen_scheduler())


def lookup(uops: Sequence[UOp], hand_over: bool = False) -> list[UOp] | None:
    """The roots' result nodes (`BUFFER.reshape(shape)`) by the plan of `key(uops)`, else by
    `run_form`'s plan of their graph's form; None when there is none (or nothing may be
    planned). One call for a realize's every lookup (`key`'s work inline: this is every small
    realize). `hand_over`: the plan keeps no hold on them (`_run`)."""
    state = _env_state
    if state[0] != _env.generation or os.environ is not _counted:
        state = _read_environment()
    if not state[1] or capture.active is not None:
        return None
    k = (tuple(uops), state[2], chosen_scheduler())
    # one lock per run, the plan's own: the table's lookups and its least-recently-used order
    # are single OrderedDict calls, each atomic under the GIL, so they take none (`_lock` is
    # for what changes several things at once: recording, dropping, clearing)
    plan = _plans.get(k)
    if plan is not None and (nodes := _run(k, plan, None, hand_over)) is not None:
        return nodes
    return run_form(uops, k, hand_over)  # (also when the plan's library was unloaded)


def run_form(uops: Sequence[UOp], k: tuple, hand_over: bool = False) -> list[UOp] | None:
    """The roots' result nodes, computed by the plan of their graph's form (`k`: their
    `key`), with this graph's buffers as its inputs; None when there is none. A graph built
    again over new buffers (`Tensor(array) + 1` each call) gets its program this way."""
    if any([u.op is _ASSIGN for u in uops]):
        return _run_step(uops, k, hand_over)
    if not _signatures or _signature(uops) not in _signatures:
        return None  # (no walk: no form plan has such roots)
    form, bufs, _ = graph_key(uops)
    fk = (form, *k[1:])
    plan = _plans.get(fk)
    if plan is None:
        return None
    # the buffers of its last run again (a graph over tensors realized once, built again in a
    # loop): its roots get a plan of their own, so that from the next call on they cost a
    # lookup, not this walk. (Not at the first: a graph over fresh buffers each call would
    # fill the table. A buffer's uid is never reused, as an id is, and holds nothing alive.)
    uids = [b.uid for b in bufs]
    if uids == plan.recent:
        own = _promote(k, plan, bufs)
        if own is not None:
            return _run(k, own, None, hand_over)
    plan.recent = uids
    stats["form_hits"] += 1
    return _run(fk, plan, bufs, hand_over)


# the last step's form (`_run_step`), weakly, for the `record` of the ordinary path that follows
# a miss: (its roots, its key, its graph's buffers, its lifted floats)
_step_seen: list[tuple | None] = [None]
_ASSIGN = Ops.ASSIGN


def _run_step(uops: Sequence[UOp], k: tuple, hand_over: bool) -> list[UOp] | None:
    """A step plan's run: roots that write (an optimizer step's ASSIGNs, with its gradients and
    loss) keyed by going on with their backward's walk (`schedule_cache.step_form`), as a form
    plan is keyed by a walk of its own: a training loop over fresh batches is one form each
    step, and its realize (schedule-cache key, schedule items, buffers, the program's lookup,
    the arguments) was some 300 Python calls. The ASSIGNs' targets are graph buffers, written
    in place (`Buffer.prepare_write` first, as the ordinary path does); every other root lands
    in a buffer of the plan's run. None: no walk pending, or no plan of the form yet."""
    got = step_form(list(uops))
    if got is None:
        _step_seen[0] = None
        return None
    form, bufs, floats = got
    fk = (form, *k[1:])
    plan = _plans.get(fk)
    values: tuple[tuple[int, float], ...] | None = ()
    if plan is None or (floats and (values := _refill(plan, floats)) is None):
        _step_seen[0] = ([weakref.ref(u) for u in uops], fk, [weakref.ref(b) for b in bufs],
                         list(floats))
        return None
    _step_seen[0] = None
    for j in plan.written:  # (an array handed out by .numpy() keeps its values)
        bufs[j].prepare_write()
    # (the rates go in under the plan's lock, by `_run`: written here, another thread's step
    # of this plan could write its own between this write and this run)
    nodes = _run(fk, plan, bufs, hand_over, values)
    if nodes is None:
        return None
    step_done(list(uops), bufs)
    stats["step_hits"] += 1
    n_fixed = len(plan.fixed)
    for i, (u, slot) in enumerate(zip(uops, plan.outs)):
        if slot < n_fixed:  # an ASSIGN: its target, read as the ordinary path's `_result`
            buf, target = bufs[plan.inputs[slot]], u.src[0]  # type: ignore[index]
            base = target.base
            nodes[i] = target if base.op is Ops.BUFFER and base.arg is buf \
                else result_node(buf, u.shape)
    return nodes


def _refill(plan: Plan, floats: list[tuple[object, float]]
            ) -> tuple[tuple[int, float], ...] | None:
    """This step's lifted floats (`step_form`'s, by slot) as the values of the plan's float
    arguments, (fixed slot, value) each (an lr schedule: a new rate each step, one plan), for
    `_run` to write under the plan's lock; None when the plan cannot take them: a slot that
    must keep its value (`_lifted`) has another, or slots that share one argument differ.
    Nothing is written here: another thread may be running the plan."""
    pinned, groups = plan.lifted
    for i, bits in pinned:
        if floats[i][1].hex() != bits:
            return None
    values = []
    for j, slots in groups:
        value = floats[slots[0]][1]
        bits = value.hex()
        for i in slots[1:]:
            if floats[i][1].hex() != bits:
                return None
        values.append((j, value))
    return tuple(values)


def _lifted(roots: tuple[UOp, ...], fixed: list[Buffer | None],
            floats: list[tuple[object, float]]) -> tuple[tuple, tuple]:
    """How a step plan takes the lifted floats of later steps (`_refill`): (the slots that must
    keep this step's value, each with its hex; per float argument the plan holds, its fixed
    slot and the float slots it gives). A slot may take other values when the schedule cache
    showed the form's schedule does not depend on it (`free_values`) and a float argument of
    the plan holds it."""
    free = free_values(list(roots))
    at: dict[tuple[object, str], int] = {}
    for j, b in enumerate(fixed):
        v = None if b is None else param_value(b)
        if v is not None:
            at[v] = j
    pinned: list[tuple[int, str]] = []
    groups: dict[int, list[int]] = {}
    for i, (dt, value) in enumerate(floats):
        v = (dt, value.hex())
        if v in free and v in at:
            groups.setdefault(at[v], []).append(i)
        else:
            pinned.append((i, v[1]))
    # (an argument of a pinned value is in no group: it keeps its value, as its slots must)
    return tuple(pinned), tuple((j, tuple(s)) for j, s in groups.items())


def _stepped(roots: tuple[UOp, ...]
             ) -> tuple[tuple, list[Buffer], list[tuple[object, float]]] | None:
    """The key, graph buffers and lifted floats `_run_step` found for these roots (and no
    plan), if any."""
    seen, _step_seen[0] = _step_seen[0], None
    if seen is None or len(seen[0]) != len(roots) \
            or any([r() is not u for r, u in zip(seen[0], roots)]):
        return None
    bufs = [r() for r in seen[2]]
    return None if None in bufs else (seen[1], bufs, seen[3])  # type: ignore[return-value]


def _promote(k: tuple, form: Plan, graph_bufs: list[Buffer]) -> Plan | None:
    """A plan of the roots in `k` made from their form's plan (`graph_bufs`: their graph's
    buffers, by slot), kept as `record` keeps one; None when it would hold too much."""
    prog = form.prog()
    if prog is None:
        return None
    graph_bytes = sum(b.size * b.dtype.itemsize for b in graph_bufs)
    own = sum(size * dt.itemsize for size, dt, _ in form.fresh)
    if graph_bytes + own > PLAN_MAX_BYTES:
        return None
    plan = Plan(k[0], prog, _fixed(form, graph_bufs), form.fresh, form.args, form.outs, {},
                graph_bytes + own)
    _watch(k, plan, graph_bufs)
    _keep([(k, plan)])
    return plan


def _run(k: tuple, plan: Plan, graph_bufs: list[Buffer] | None,
         hand_over: bool = False, floats: tuple[tuple[int, float], ...] | None = None
         ) -> list[UOp] | None:
    """Run a roots plan (`graph_bufs` None) or a form plan over this graph's buffers.
    `floats`: a step plan's values of its float arguments for this run, (fixed slot, value)
    each (`_refill`).
    `hand_over`: the results will keep the graph they were computed from (runtime/origins.py),
    so the plan lets go of them now; held by an idle plan, they would keep that graph's
    buffers alive (a form plan's promise: it holds none), and the next run makes new ones."""
    prog = plan.prog()
    if prog is None:  # its library was unloaded
        _drop(k, plan)
        return None
    stats["hits"] += 1
    if not plan.busy.acquire(False):  # another thread runs it: all buffers fresh
        # (positional: a keyword costs a C call's parsing, half the lock's price)
        fixed = _fixed(plan, graph_bufs)
        if floats:  # (a step's rates in arguments of this run's own: the plan's are in use)
            fixed = list(fixed)
            for j, value in floats:
                fixed[j] = param_buffer(fixed[j].dtype, value)
        return _run_fresh(plan, prog, fixed)
    try:
        if floats:  # a step plan's rates (`_refill`), written while no other run reads them
            for j, value in floats:  # (a float32 argument: numpy rounds it as the C would)
                plan.fixed[j].data[0] = value  # type: ignore[union-attr, index]
        if plan.epoch != _epoch:  # (a hot loop's plan moves once, not on every run)
            plan.epoch = _epoch
            try:
                _plans.move_to_end(k)
            except KeyError:  # (dropped by another thread since the lookup: it still runs once)
                pass
        prog.touch()
        if plan.owned is None or not _ours(plan.mine):
            _new_results(plan)
        else:  # the last results are no one's any more: written again, as new values
            for _, _, buf in plan.mine:  # (Buffer.rewritten, inline: a frame per result)
                buf.version += 1
                buf.origin = None
        if graph_bufs is not None:  # a form plan: this graph's inputs, wherever they are
            if plan.moves != _buffer.moves:  # (its own buffers' addresses, kept while none moved)
                plan.own_addrs = [b.address() for b in plan.owned]
                plan.moves = _buffer.moves
            if plan.take is not None:  # (every fixed slot a graph buffer: picked in one C
                slots = addresses(plan.take(graph_bufs))  # call, their addresses in one more)
            else:
                slots = [graph_bufs[j].address() if j >= 0 else c.address()
                         for j, c in zip(plan.inputs, plan.fixed)]
            slots += plan.own_addrs
            if prog.threaded:
                prog.run_addresses([get(slots) for get in plan.getters])
            else:  # (the kernels called directly, each picking its slots in one C call)
                for kernel, get in zip(prog.kernels, plan.getters):
                    kernel.fn(*get(slots))
            return _handed(plan) if hand_over else list(plan.nodes)
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
        return _handed(plan) if hand_over else list(plan.nodes)
    finally:
        plan.busy.release()


def _handed(plan: Plan) -> list[UOp]:
    """The results of the run that just ended, no longer the plan's: it makes all its buffers
    anew at its next run (`_new_results`)."""
    nodes = list(plan.nodes)
    if plan.owned is not None:  # (its intermediates stay its own: no one else sees them, and
        # they hold no graph; a step's were some ten allocations a run)
        n_fixed = len(plan.fixed)
        outs = {i - n_fixed for i in plan.outs if i >= n_fixed}
        plan.spare = [None if i in outs else b for i, b in enumerate(plan.owned)]
    plan.owned, plan.nodes, plan.mine = None, [], []
    return nodes


def _forget(plan: Plan) -> None:
    """Count a plan out of the table (under `_lock`)."""
    global _held
    plan.dropped = True
    _held -= plan.held
    if plan.sig is not None:
        if _signatures[plan.sig] == 1:
            del _signatures[plan.sig]
        else:
            _signatures[plan.sig] -= 1


def _drop(k: tuple, plan: Plan) -> None:
    with _lock:
        if _plans.get(k) is plan:
            _forget(_plans.pop(k))


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
    the plan's own intermediate buffers on its first run. (A form plan's results are all its
    own buffers: a node over one of the graph's would be this call's only.)"""
    n_fixed = len(plan.fixed)
    outs = {i - n_fixed for i in plan.outs if i >= n_fixed}
    owned = plan.owned or plan.spare or [None] * len(plan.fresh)
    for i, (size, dt, dev) in enumerate(plan.fresh):
        if owned[i] is None or i in outs:  # (an intermediate stays: no one else sees it)
            owned[i] = Buffer(size, dt, device=dev)
            owned[i].ensure()
    plan.owned, plan.spare = owned, None
    bufs = plan.fixed + owned
    # (a step plan's ASSIGN lands in a graph buffer, this run's: its node is `_run_step`'s)
    plan.nodes = [None if bufs[i] is None else result_node(bufs[i], shape)  # type: ignore[misc]
                  for i, shape in zip(plan.outs, plan.shapes)]
    plan.mine = []
    for i, node in zip(plan.outs, plan.nodes):
        if i >= n_fixed:  # (a root over a buffer of the graph is only read: never checked)
            plan.mine.append((node, node.base, bufs[i]))
    plan.moves = -1  # new addresses


def _fixed(plan: Plan, graph_bufs: list[Buffer] | None) -> list[Buffer]:
    """The buffers in the plan's fixed slots for this run."""
    if graph_bufs is None:
        return plan.fixed
    return [c if j < 0 else graph_bufs[j] for j, c in zip(plan.inputs, plan.fixed)]


def _run_fresh(plan: Plan, prog: Any, fixed: list[Buffer]) -> list[UOp]:
    """A run with buffers of its own (while another thread runs the plan's)."""
    bufs = fixed + [Buffer(size, dt, device=dev) for size, dt, dev in plan.fresh]
    addrs = [[bufs[i].address() for i in a] for a in plan.args]
    prog.run_addresses(addrs, None, plan.var_vals)
    return [result_node(bufs[i], shape) for i, shape in zip(plan.outs, plan.shapes)]


def record(k: tuple, items: Sequence[Any], prog: Any, outs: Sequence[Buffer],
           var_vals: dict[str, int]) -> None:
    """Keep what the ordinary path did for the roots in `k`, when they may be planned: as a
    plan of these roots and, when another graph of their form was recorded lately (no symbolic
    size, every result a buffer the run allocates), as a plan of the form, which holds none of
    the graph's buffers."""
    roots = k[0]
    step = any([r.op is _ASSIGN for r in roots])
    if len(prog.kernels) != len(items):
        return
    if step:  # (a step plan: keyed by its backward's walk, `_run_step`; no roots plan)
        got = _stepped(roots)
        if got is None:
            return
        fk, graph_bufs, step_floats = got
        unplanned: tuple = (Ops.MULTI, Ops.MSTACK, Ops.COPY)
        if any(e[0] in unplanned for e in fk[0][0]):
            return
    else:
        form, graph_bufs, _ = graph_key(list(roots))
        unplanned = (Ops.ASSIGN, Ops.MULTI, Ops.MSTACK, Ops.COPY)  # (read once)
        if any(e[0] in unplanned for e in form):
            return
        fk = (form, *k[1:])
    in_graph = {id(b): j for j, b in enumerate(graph_bufs)}
    graph_bytes = sum(b.size * b.dtype.itemsize for b in graph_bufs)
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
            if b.device != DEFAULT:  # (the module docstring: no plan holds such a buffer)
                return
            if id(b) in in_graph or b.from_host:
                slot[id(b)] = len(fixed)
                fixed.append(b)
            else:
                slot[id(b)] = -1 - len(created)
                created.append(b)
    for b in outs:
        if id(b) not in slot:
            if id(b) not in in_graph or b.device != DEFAULT:
                return  # a root whose buffer no kernel writes and the graph does not hold
            slot[id(b)] = len(fixed)
            fixed.append(b)
    own = sum(b.size * b.dtype.itemsize for b in created)  # the plan's own, once it ran
    n_fixed = len(fixed)

    def at(b: Buffer) -> int:
        s = slot[id(b)]
        return s if s >= 0 else n_fixed - 1 - s

    args = [tuple(at(b) for b in item.bufs[:k_.nparams]) for item, k_ in zip(items, prog.kernels)]
    fresh = [(b.size, b.dtype, b.device) for b in created]
    out_slots = [at(b) for b in outs]
    new: list[tuple[tuple, Plan]] = []
    if graph_bytes + own <= PLAN_MAX_BYTES and not step:
        new.append((k, Plan(roots, prog, fixed, fresh, args, out_slots, dict(var_vals),
                            graph_bytes + own)))
        _watch(k, new[0][1], graph_bufs)
    inputs = [in_graph.get(id(b), -1) for b in fixed]
    # (a step's ASSIGN lands in its target, a graph buffer; every other root in one of the run's)
    written = tuple(inputs[i] for r, i in zip(roots, out_slots) if i < n_fixed
                    and r.op is _ASSIGN and inputs[i] >= 0)
    if fk in _seen and not var_vals and \
            sum([i >= n_fixed for i in out_slots]) + len(written) == len(out_slots):
        consts: list[Buffer | None] = [b if j < 0 else None for j, b in zip(inputs, fixed)]
        held = own + sum(b.size * b.dtype.itemsize for b in consts if b is not None)
        if held <= PLAN_MAX_BYTES:
            plan = Plan(roots, prog, consts, fresh, args, out_slots, {}, held, inputs)
            plan.written = written
            if step and step_floats:
                plan.lifted = _lifted(roots, consts, step_floats)
            new.append((fk, plan))
    with _lock:
        _seen[fk] = None
        _seen.move_to_end(fk)
        if len(_seen) > MAX_PLANS:
            _seen.popitem(last=False)
    _keep(new)


def _watch(k: tuple, plan: Plan, graph_bufs: list[Buffer]) -> None:
    """Keep a roots plan only while the tensors of host data its graph reads live (a batch:
    `Tensor(array)`, the buffer's `owner`). Once one goes, no one can build those roots again
    (each new `Tensor(array)` is a new buffer) unless a view of it lives on (`Tensor(a)
    .reshape(...)`, its tensor gone at once, has no owner left to watch: kept as before), and
    the plan held that batch, its graph and its gradients' inputs until the table dropped it:
    the first graphs of a form, recorded before the form had a plan (a gradient read in a
    training loop over fresh batches), kept two batches alive for 64 plans."""
    owners = [t for b in graph_bufs if b.owner is not None and (t := b.owner()) is not None]
    if owners:
        gone = partial(_batch_gone, k, weakref.ref(plan))
        plan.watch = [weakref.ref(t, gone) for t in owners]


# roots plans whose batch went while `_lock` was held (a collection inside a locked section):
# dropped by the next `_keep`, which holds it
_stale: list[tuple[tuple, weakref.ref]] = []


def _batch_gone(k: tuple, plan: weakref.ref, _: object) -> None:
    """A tensor of host data the roots plan `plan` (key `k`) reads went: drop the plan."""
    if plan() is None:
        return
    if _lock.acquire(False):  # (never waits: this runs wherever the tensor happened to go)
        try:
            if _plans.get(k) is plan():
                _forget(_plans.pop(k))
            _drop_stale()  # (and those whose batch went while the lock was held: else each
            # waited for a recording, which a loop served by its plans never makes)
        finally:
            _lock.release()
    else:
        _stale.append((k, plan))


def _drop_stale() -> None:
    """Drop the plans of `_stale` still in the table (under `_lock`)."""
    while _stale:
        key_, gone = _stale.pop()
        if gone() is not None and _plans.get(key_) is gone():
            _forget(_plans.pop(key_))


def _keep(new: list[tuple[tuple, Plan]]) -> None:
    """Put the plans in the table (each replaces one of its key), dropping the least recently
    run ones beyond the table's bounds."""
    global _held, _epoch
    with _lock:
        _drop_stale()
        for key_, plan in new:
            old = _plans.pop(key_, None)
            if old is not None:
                _forget(old)
            _plans[key_] = plan
            _held += plan.held
            if plan.sig is not None:
                _signatures[plan.sig] = _signatures.get(plan.sig, 0) + 1
            stats["recorded"] += 1
        _epoch += 1
        while len(_plans) > MAX_PLANS or _held > PLANS_MAX_BYTES:
            _forget(_plans.popitem(last=False)[1])


def held_bytes() -> int:
    """What the plans kept keep alive, in bytes."""
    return _held


def clear() -> None:
    global _held
    with _lock:
        for plan in _plans.values():
            plan.dropped = True
        _plans.clear()
        _signatures.clear()
        _trails.clear()
        _seen.clear()
        _held = 0


# ---------------------------------------------------------------------- lazy records
# the form plans of lazy records (runtime/lazy.py): (token, aliasing, settings) -> (the form
# plan's key, per graph buffer slot its leaf's position, and the plan found, weakly), learnt
# at a record's first realize; bounded, as the plans are (entries hold no buffer, no plan)
_trails: OrderedDict[tuple, list] = OrderedDict()  # [form key, picker, weakref to its plan]


def _no_plan() -> None:
    """A trail's plan before it found one (a dead weak reference's answer)."""
    return None


_NO_PLAN = _no_plan
MAX_TRAILS = 4 * MAX_PLANS


def run_record(token: tuple, bufs: tuple[Buffer, ...], shared: tuple[int, ...] | None
               ) -> tuple[list[UOp] | None, tuple | None]:
    """A lazy record's result node (its token, its leaves' buffers `bufs`, which of them share
    one: `shared`), computed by the plan of its graph's form with no graph built, and its
    lookup key: (nodes, key); (None, key) when no plan is known for it yet (`learn_trail`
    teaches it); (None, None) when nothing may be planned. (`key`'s checks, inline: this is
    every call of a small program over fresh arrays.)"""
    state = _env_state
    if state[0] != _env.generation or os.environ is not _counted:
        state = _read_environment()
    if not state[1] or capture.active is not None:
        return None, None
    tk = (token, shared, state[2], chosen_scheduler())
    entry = _trails.get(tk)
    if entry is None:
        return None, tk
    fk, pick, ref = entry
    # the form's plan as the trail last found it, weakly: looking it up by the form's key
    # hashed the whole form, a tuple per node, at every call (a tenth of a small call)
    plan = ref()
    if plan is None or plan.dropped:
        plan = _plans.get(fk)
        if plan is None:
            return None, tk
        entry[2] = weakref.ref(plan)  # (a list's item: one store, atomic under the GIL)
    stats["form_hits"] += 1
    return _run(fk, plan, pick(bufs)), tk


def learn_trail(tk: tuple, bufs: tuple[Buffer, ...], roots: list[UOp]) -> None:
    """Note which form the record keyed `tk` builds (`roots`: its graph, built) and where its
    leaves' buffers go in that form's slots, so that `run_record` finds the form's plan."""
    if tk in _trails:
        return
    form, graph_bufs, _ = graph_key(roots)
    where = {id(b): i for i, b in reversed(list(enumerate(bufs)))}  # (each buffer's first leaf)
    slots = [where.get(id(b)) for b in graph_bufs]
    if None in slots:  # (a buffer not from a leaf: no form plan is made of such a graph)
        return
    with _lock:
        _trails[tk] = [(form, *tk[2:]), _picker(tuple(slots)), _NO_PLAN]
        if len(_trails) > MAX_TRAILS:
            _trails.popitem(last=False)
