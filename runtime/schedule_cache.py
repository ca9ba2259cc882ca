"""Schedule cache: a program whose graph was scheduled before is not scheduled again.

The scheduler is a function of the tensor graph's structure alone: its ops, dtypes, args and
which buffer is read where, never what a buffer holds. So a training step or an inference loop,
which builds the same graph every call over the same (or other, same-shaped) buffers, gets the
same kernels each time, and the rule passes (about a millisecond for a small program) can be
skipped.

The key is the graph in topological order with every BUFFER replaced by its slot (first-seen
order, with size, dtype and whether it is allocated), so two graphs over different buffers of
the same shapes share an entry. The entry is the schedule with each buffer as a reference: an
input slot, or a buffer the schedule creates (size, dtype), which a replay allocates fresh, as
the scheduler would. A lookup costs one walk of the graph; an optimizer step over a fresh batch
walks only its update's nodes, going on with the walk its backward made (`KeyWalk`,
`note_step`); that walk's key is an alias of the graph's own (`_aliased`), so the same graph
keyed either way is one entry.

Float constants from the program (a learning rate) are not part of the key once a form has
shown it does not depend on them: `runtime/float_params.py` lifts them into kernel arguments
(one-element buffers filled at each replay), and `_Form` records per masked key whether two
schedules for different values agreed.

A rule that reads a constant's value (a user's guard `c.arg > 0`) makes the schedule hold for
the values on one side of it only, and two values on the same side agree. So while a miss is
scheduled, the passes that may read values say which constants they could have read
(`note_reads`, from schedule.py's users' passes: generator/user.py's `value_reads`); the slots
holding those values are "pinned": never free in the form, the key keeps their values, and a
value on the other side of the guard is scheduled again. Values no such pass looked at still
replay.

`RULEGRAD_SCHEDULE_CACHE=0` turns it off. It is bypassed while something watches the passes
run (rule tracing, `RULEGRAD_MATCH_STATS`, `RULEGRAD_SPEC`) and with the interpreted matcher
(`RULEGRAD_MATCHER=interp`), which is there to be compared with the generated one, pass by pass.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from weakref import ref

from rulegrad.rules import mode

from . import float_params
from .buffer import Buffer
from .env import env_flag
from .matcher import stats_enabled
from .ops import Ops
from .rewrite import tracing_active
from .schedule_item import ScheduleItem
from .uop import VARIABLE_MARK, UOp, toposort

MAX_ENTRIES = 256

# a buffer of a recorded schedule: its input slot (< the graph's buffer count), else that count
# plus its index among the buffers the schedule creates (a replay picks them in one C call)
Ref = int


# A recorded schedule: kernels ((name, ast, buffer refs) each), new_buffers ((size, dtype,
# device) per buffer it creates), outs (per root: its buffer ref, its shape), params (per
# kernel: the float slot of each extra buffer), extra (what the schedule function gave beside
# the schedule: a sharded graph's lowering, runtime/realize.py); equal when all five are. (A
# namedtuple, and _Form a class of slots, not dataclasses: a dataclass writes its methods as
# source and compiles them when its module is imported, ~1 ms each of a process's first
# realize.)
_Entry = namedtuple("_Entry", ("kernels", "new_buffers", "outs", "params", "extra"),
                    defaults=((), None))


class _Form:
    """What is known of a form (a key with its liftable floats masked): the values and lifted
    schedule of its first miss, until a second miss with other values agrees (`free` then says
    which slots may take any value; the others must equal `values`), or disagrees (`failed`)."""

    __slots__ = ("values", "entry", "free", "failed", "pinned")

    def __init__(self, values: tuple[tuple[object, float], ...], entry: _Entry,
                 pinned: frozenset[int] = frozenset()):
        self.values = values
        self.entry = entry
        self.free: tuple[bool, ...] | None = None
        self.failed = False
        self.pinned = pinned  # slots whose value some pass may have read

    def serves(self, values: list[tuple[object, float]]) -> bool:
        return self.free is not None and all(
            f or a[1].hex() == b[1].hex() for f, a, b in zip(self.free, values, self.values))

    def learn(self, values: list[tuple[object, float]], entry: _Entry,
              pinned: frozenset[int]) -> None:
        self.pinned |= pinned
        if self.free is not None and any(self.free[i] for i in pinned):
            # a slot it replayed freely was read this time: free no more
            self.free = tuple(f and i not in self.pinned for i, f in enumerate(self.free))
        if self.failed or self.free is not None:
            return
        if entry != self.entry:
            self.failed = True  # the schedule depends on the values: keyed by them for good
            return
        free = tuple(a[1].hex() != b[1].hex() and i not in self.pinned
                     for i, (a, b) in enumerate(zip(values, self.values)))
        if any(free):
            self.free = free


_reading = threading.local()  # .read: the (dtype, value's hex) a miss's passes may have read


@contextmanager
def reading() -> Iterator[set[tuple[object, str]]]:
    """Collect, while a graph is scheduled, the constants some pass may have read the value of
    (`note_reads`)."""
    outer = getattr(_reading, "read", None)
    _reading.read = read = set()
    try:
        yield read
    finally:
        _reading.read = outer
        if outer is not None:
            outer |= read


def note_reads(sink: UOp, roots: frozenset[Ops] | None, depth: int) -> None:
    """A pass that may read constants' values runs on `sink`: its rules look at most `depth`
    sources below a node whose op is in `roots` (None: any). Every float constant there counts
    as read (nothing is recorded unless a miss is being scheduled)."""
    read = getattr(_reading, "read", None)
    if read is None:
        return
    const = Ops.CONST
    for n in toposort(sink):
        if roots is not None and n.op not in roots:
            continue
        level, k = {n}, 0
        while level:
            for m in level:
                if m.op is const and type(m.arg) is float:
                    read.add((m.dtype, m.arg.hex()))
            k += 1
            level = {s for m in level for s in m.src} if k <= depth else set()


# Both tables are keyed by the form's hash (and the floats' values): a graph's key is a tuple
# of a node's entry per node, and hashing it costs some 0.2 us per node (a tuple's hash is not
# kept), so it is hashed once per lookup, not at each get, `in` and move_to_end. Each value
# holds the form's key, compared once on a hit (two forms with one hash: the later one wins).
_cache: OrderedDict[tuple[int, tuple], tuple[tuple, _Entry]] = OrderedDict()
_forms: OrderedDict[int, tuple[tuple, _Form]] = OrderedDict()
# A walk's key (a step keyed by going on with its backward's walk) -> (that key, the graph's
# own key, its hash, and per slot of the graph key the walk's slot): `_aliased`
_aliases: OrderedDict[int, tuple[tuple, tuple, int, list[int], list[int]]] = OrderedDict()
_lock = threading.Lock()
# The last graph keyed, its roots and buffers as weak references: (roots, lift, salt, form key,
# its hash, buffers, floats). An optimizer keeps its step's graph until the next step
# (api/nn/optim.py), so the next step over the same buffers realizes the very same roots: their
# key, a function of the nodes alone once every buffer is allocated, is read back, not walked
# and hashed again (a small MLP's step: some 170 nodes). Held weakly, it keeps nothing alive.
_last: list[tuple | None] = [None]
# The walk of the last backward's loss and gradients (runtime/gradient_forms.py), until the
# realize of the optimizer step built on them goes on with it (`_keyed`): a step over a fresh
# batch is other nodes each time, and its key's walk (its whole graph: some 120 nodes on a
# small MLP) walked again what backward had just walked.
_step: list[KeyWalk | None] = [None]
_held: list[ref | None] = [None]  # the weak reference to the walk's loss (`step_held_by`)
# the roots and graph buffers of the last step a plan ran (`step_done`), weakly
_read: list[tuple | None] = [None]
stats = {"hits": 0, "misses": 0, "went_on": 0}


def enabled() -> bool:
    if not env_flag("RULEGRAD_SCHEDULE_CACHE", default=True):
        return False
    spec = env_flag("RULEGRAD_SPEC")
    return not (spec or stats_enabled() or tracing_active()) and mode() == "generated"


class KeyWalk:
    """A graph key being built, which a later walk may go on with: the nodes met so far (each
    with its entry's position), the buffers and liftable floats in slot order, the variables'
    marks and the entries. A walk over more roots adds only the nodes not met yet, numbered
    after the others, so a graph built on top of a keyed one (an optimizer's update over the
    loss and its gradients) is keyed without walking the part below again (`go_on`)."""

    __slots__ = ("lift", "index", "slots", "buffers", "floats", "marks", "entries", "__weakref__")

    def __init__(self, lift: bool):
        self.lift = lift
        self.index: dict[UOp, int] = {}  # node -> its entry (nodes hash by identity)
        self.slots: dict[int, int] = {}
        self.buffers: list[Buffer] = []
        self.floats: list[tuple[object, float]] = []
        self.marks: dict[object, int] = {}
        self.entries: list[tuple] = []

    def key(self, uops: list[UOp]) -> tuple:
        """The key of the nodes met, with `uops` (met: walk them first) as its roots."""
        index = self.index
        return (*self.entries, (None, tuple([index[u] for u in uops])))


def graph_key(uops: list[UOp], lift: bool = False, nodes: list[UOp] | None = None,
              order: list[UOp] | None = None
              ) -> tuple[tuple, list[Buffer], list[tuple[object, float]]]:
    """The structural key of the roots' graph, its buffers in slot order, and (with `lift`) its
    liftable float constants in slot order, which the key then holds as `("float", slot)`.

    One entry per node, sources before users, each naming its sources by their entries'
    positions; the last entry names the roots. Two graphs get one key exactly when they are the
    same program over other buffers of the same sizes, dtypes and devices, read in the same
    places. It is also a realize plan's key for graphs of one form (runtime/plans.py), looked
    up on every call over fresh inputs: one walk, no SINK node built, no second pass, and a
    gradient's (runtime/gradient_forms.py). `nodes`, when given, gets the graph's nodes in the
    key's order: entry i is node i's, in any graph of the same key. `order`, when given, is a
    walk of (part of) the graph made already (backward's toposort of the loss): its nodes are
    numbered in its order with no second walk, then what the roots hold beyond it."""
    walk = KeyWalk(lift)
    go_on(walk, uops, order)
    index = walk.index
    if nodes is not None:
        nodes.extend(index)  # (a dict keeps its insertion order: the entries')
    # (walk.key's, inlined: a step keyed here is counted in Python calls, tests/test_device_use)
    return (*walk.entries, (None, tuple([index[u] for u in uops]))), walk.buffers, walk.floats


def go_on(walk: KeyWalk, uops: list[UOp], order: list[UOp] | None = None) -> None:
    """Add to `walk` the nodes of the roots' graphs it has not met: `order`'s first, in its order
    (sources before users, as `toposort` gives them), then the rest, walked from the roots and
    stopping at the nodes met."""
    index, slots, buffers, floats, marks, key = (walk.index, walk.slots, walk.buffers,
                                                 walk.floats, walk.marks, walk.entries)
    lift = walk.lift
    buffer_op, const_op = Ops.BUFFER, Ops.CONST
    # a node is looked at again once its sources are done (a node found twice is done once);
    # `order`'s nodes go on top, first first: each finds its sources done and is not walked
    stack = list(reversed(uops))
    if order:
        stack += reversed(order)
    push, pop = stack.append, stack.pop
    while stack:
        n = stack[-1]
        if n in index:
            pop()
            continue
        src = n.src
        pending = False
        for s in src:
            if s not in index:
                push(s)
                pending = True
        if pending:
            continue
        pop()
        arg, op = n.arg, n.op
        if op is buffer_op:
            slot = slots.setdefault(id(arg), len(buffers))
            if slot == len(buffers):
                buffers.append(arg)
            # (positions: rangeify reads a Positions buffer as its index, not as memory)
            arg = ("slot", slot, arg.size, arg.dtype, arg.device, arg.data is not None,
                   arg.positions)
        elif type(arg) is float:
            if lift and op is const_op and float_params.liftable(arg, n.dtype):
                floats.append((n.dtype, arg))
                arg = ("float", len(floats) - 1)
            else:
                arg = arg.hex()  # 0.0 and -0.0 are different programs (as in UOp's own key)
        tag = n.tag
        if type(tag) is tuple and tag[0] == VARIABLE_MARK:
            # a variable's mark (runtime/tensor.py's `_marked`) is numbered by the order the
            # walk meets it: its own number only keeps its node apart, and the schedulers drop
            # it, so a fresh leaf each step (an input with requires_grad) or a second model of
            # the same shapes is the same program, not a schedule made again
            tag = (VARIABLE_MARK, marks.setdefault(tag[1], len(marks)))
        index[n] = len(key)
        if not src:
            refs: tuple[int, ...] = ()
        elif len(src) == 1:  # (most nodes: no comprehension, a function call in 3.11)
            refs = (index[src[0]],)
        else:
            refs = tuple(map(index.__getitem__, src))  # (no comprehension's frame)
        key.append((op, n.dtype, arg, tag, refs))


def _out_buffer(out: UOp) -> tuple[Buffer, tuple[int, ...] | None] | None:
    """The buffer a root landed in, when the schedule left it as BUFFER or BUFFER.reshape."""
    if out.op is Ops.BUFFER:
        return out.arg, None
    if out.op is Ops.RESHAPE and out.src[0].op is Ops.BUFFER:
        return out.src[0].arg, out.shape
    return None


def _record(items: list[ScheduleItem], outs: list[UOp], inputs: list[Buffer],
            extra: object = None) -> _Entry | None:
    """The schedule with its buffers as references; None if some root is not a plain buffer,
    or some buffer that is not the graph's already holds data (one the schedule function
    made with its values: a replay's fresh buffer would not hold them)."""
    slot_of = {id(b): i for i, b in enumerate(inputs)}
    created: dict[int, int] = {}
    new_buffers: list[tuple[int, object, str]] = []

    def ref(buf: Buffer) -> Ref:
        if id(buf) in slot_of:
            return slot_of[id(buf)]
        if id(buf) not in created:
            if buf.data is not None:
                raise _NotRecorded
            created[id(buf)] = len(new_buffers)
            new_buffers.append((buf.size, buf.dtype, buf.device))
        return len(inputs) + created[id(buf)]

    try:
        kernels = tuple((it.name, it.ast, tuple(ref(b) for b in it.bufs)) for it in items)
        out_refs = []
        for out in outs:
            found = _out_buffer(out)
            if found is None:
                return None
            out_refs.append((ref(found[0]), found[1]))
    except _NotRecorded:
        return None
    return _Entry(kernels, tuple(new_buffers), tuple(out_refs), (), extra)


class _NotRecorded(Exception):
    """`_record` of a schedule that cannot be replayed."""


def _lift(entry: _Entry, floats: list[tuple[object, float]]) -> _Entry:
    """The entry with the graph's liftable floats read from kernel arguments."""
    slots = float_params.slot_of(floats)  # type: ignore[arg-type]
    kernels, params = [], []
    for name, ast, refs in entry.kernels:
        ast, p = float_params.lift(ast, len(refs), slots)
        kernels.append((name, ast, refs))
        params.append(p)
    return _Entry(tuple(kernels), entry.new_buffers, entry.outs, tuple(params), entry.extra)


def _replay(entry: _Entry, inputs: list[Buffer], floats: list[tuple[object, float]] = ()
            ) -> tuple[list[ScheduleItem], list[UOp]]:
    fresh = [Buffer(size, dtype, device=device)  # type: ignore[arg-type]
             for size, dtype, device in entry.new_buffers]
    values: dict[int, Buffer] = {}  # the float slots' buffers, made when a kernel reads one

    def value(slot: int) -> Buffer:
        if slot not in values:
            values[slot] = float_params.param_buffer(*floats[slot])  # type: ignore[arg-type]
        return values[slot]

    # (each kernel's buffers picked by a C call, not a Python call per buffer: a training
    # step's replay has some seventy)
    pick = [*inputs, *fresh].__getitem__
    params = entry.params or ((),) * len(entry.kernels)
    items = []
    for (name, ast, refs), p in zip(entry.kernels, params):
        bufs = tuple(map(pick, refs))
        if p:
            bufs += tuple(map(value, p))
        items.append(ScheduleItem(name, ast, bufs))

    outs = []
    for r, shape in entry.outs:
        b = pick(r)
        node = UOp(Ops.BUFFER, b.dtype, (), b)
        outs.append(node if shape is None else node.reshape(shape))
    return items, outs


def buffers_read(uops: list[UOp]) -> list[Buffer] | None:
    """The buffers the graph of `uops` reads, when they are the roots keyed last (no walk);
    None when they are not (or one of the buffers died)."""
    last = _last[0]
    if last is None or [r() for r in last[0]] != uops:
        read = _read[0]  # (a step a plan ran: runtime/plans.py)
        if read is None or [r() for r in read[0]] != uops:
            return None
        bufs = [r() for r in read[1]]
        return None if None in bufs else bufs  # type: ignore[return-value]
    bufs = [r() for r in last[5]]
    return None if None in bufs else bufs  # type: ignore[return-value]


def note_step(walk: KeyWalk | None) -> None:
    """The key's walk of a loss, its gradients and what they read (runtime/gradient_forms.py):
    the next realize that writes (an optimizer step, built on them) goes on with it."""
    _step[0] = walk


def step_held_by(owner: object) -> None:
    """Keep the walk noted last (`note_step`) only while `owner` lives (the loss tensor whose
    backward made it): the walk holds the loss's graph and its batch, and a loop that calls
    backward with no optimizer step after it (a gradient read, then the batch dropped) would
    keep its last batch alive until some step."""
    walk = _step[0]
    if walk is not None:
        _held[0] = ref(owner, partial(_let_go, ref(walk)))


def step_form(uops: list[UOp]
              ) -> tuple[tuple, list[Buffer], list[tuple[object, float]]] | None:
    """A realize that writes (an optimizer step) keyed by going on with the walk of its
    backward (`note_step`), with no walk of its own: (the key and whether its floats were
    lifted; the graph's buffers in the key's slot order; its lifted floats, (dtype, value) in
    slot order), or None when no walk is pending or no root writes. Two graphs of one such key
    are one program over other buffers in the same slots, as for `graph_key`, once the floats'
    values are given: the key leaves them out (an lr schedule is one key), and a step plan
    (runtime/plans.py) checks them. The walk is left pending for `_keyed` (the ordinary path,
    on a miss) until `step_done`."""
    walk = _step[0]
    if walk is None or not any([u.op is Ops.ASSIGN for u in uops]):
        return None
    go_on(walk, uops)
    return (walk.key(uops), walk.lift), walk.buffers, walk.floats


def free_values(uops: list[UOp]) -> frozenset[tuple[object, str]]:
    """The lifted floats, (dtype, value's hex), of the roots keyed last whose form's schedule
    was shown not to depend on them (`_Form.free`: two schedules of other values alike once
    lifted, no pass read them): a plan of this realize may run with other values there. Empty
    when these are not the roots keyed last or nothing is known yet."""
    last = _last[0]
    if last is None or [r() for r in last[0]] != uops or not last[6]:
        return frozenset()
    got = _forms.get(last[4])
    if got is None or got[0] != last[3] or got[1].failed or got[1].free is None:
        return frozenset()
    free, floats = got[1].free, last[6]
    if len(free) != len(floats):
        return frozenset()
    # (a value some slot holds that is not free is not free: a lifted kernel reads one buffer
    # per value)
    return frozenset({(dt, v.hex()) for f, (dt, v) in zip(free, floats) if f}
                     - {(dt, v.hex()) for f, (dt, v) in zip(free, floats) if not f})


def step_done(uops: list[UOp], bufs: list[Buffer]) -> None:
    """The step `step_form` keyed (roots `uops`, graph buffers `bufs`) was run by a plan: its
    walk is let go (it holds the batch), and `buffers_read` answers for these roots."""
    _step[0] = None
    _read[0] = ([ref(u) for u in uops], [ref(b) for b in bufs])


def _let_go(walk: ref[KeyWalk], _: object) -> None:
    if _step[0] is not None and _step[0] is walk():
        _step[0] = None


def _keyed(uops: list[UOp], lift: bool, salt: tuple
           ) -> tuple[tuple, int, list[Buffer], list[tuple[object, float]]]:
    """(salt, graph_key), its hash, the graph's buffers and floats: read back from the last
    call when the roots are the very same nodes (`_last`), else walked and hashed; a realize
    that writes goes on with the walk its backward noted (`note_step`), if any."""
    last = _last[0]
    if last is not None and last[1] is lift and last[2] == salt \
            and [r() for r in last[0]] == uops:
        inputs = [r() for r in last[5]]
        return last[3], last[4], inputs, last[6]  # type: ignore[return-value]
    walk = _step[0]
    if walk is not None and any([u.op is Ops.ASSIGN for u in uops]):
        _step[0] = None  # (used once, and let go: it holds the batch)
    else:
        walk = None
    if walk is not None and walk.lift is lift:
        # an optimizer step over a fresh batch: its loss and gradients were keyed by backward
        # (their nodes numbered first, their floats and buffers in their slots); only the
        # update's nodes are walked, and the key is the graph's own key (`_aliased`)
        go_on(walk, uops)
        stats["went_on"] += 1
        form_key, form_hash, inputs, floats = _aliased(uops, walk, salt)
    else:
        key, inputs, floats = graph_key(uops, lift)
        form_key = (salt, key)
        form_hash = hash(form_key)  # (the one hash of the whole key: see _cache)
    for b in inputs:
        if b.data is None:  # (its slot's key says not allocated: it may be by the next call)
            break
    else:
        _last[0] = ([ref(u) for u in uops], lift, salt, form_key, form_hash,
                    [ref(b) for b in inputs], floats)
    return form_key, form_hash, inputs, floats


def _aliased(uops: list[UOp], walk: KeyWalk, salt: tuple
             ) -> tuple[tuple, int, list[Buffer], list[tuple[object, float]]]:
    """The graph's own key (`graph_key`'s), its hash, buffers and floats, from the key of a walk
    gone on with (`go_on`): a graph has one key, whichever way it was keyed, so a step keyed by
    its backward's walk and the same nodes keyed by a walk of their own (once `_last` holds
    another graph: a realize between two steps) are one schedule, not two misses. The walk's key
    numbers its nodes in backward's order: the first time, the graph is walked too, and the
    walk's key kept with the graph key and the slots' order between them (`_aliases`), which
    are the same for every graph of the walk's key."""
    walk_key = (salt, walk.key(uops))
    walk_hash = hash(walk_key)
    with _lock:
        got = _aliases.get(walk_hash)
        if got is not None and got[0] == walk_key:
            _aliases.move_to_end(walk_hash)
    if got is None or got[0] != walk_key:
        nodes: list[UOp] = []
        key, _, _ = graph_key(uops, walk.lift, nodes=nodes)
        form_key = (salt, key)
        # each slot of the graph key: the walk's slot of the same buffer or float constant
        bufs, fls = [], []
        for n, (op, _, arg, _, _) in zip(nodes, key):
            if op is Ops.BUFFER:
                bufs.append(walk.entries[walk.index[n]][2][1])
            elif op is Ops.CONST and type(arg) is tuple:  # (a lifted float: ("float", slot))
                fls.append(walk.entries[walk.index[n]][2][1])
        got = (walk_key, form_key, hash(form_key), bufs, fls)
        with _lock:
            _aliases[walk_hash] = got
            if len(_aliases) > MAX_ENTRIES:
                _aliases.popitem(last=False)
    _, form_key, form_hash, bufs, fls = got
    inputs, floats = walk.buffers, walk.floats
    return form_key, form_hash, [inputs[i] for i in bufs], [floats[i] for i in fls]


def cached_schedule(uops: list[UOp],
                    schedule: Callable[[list[UOp]], tuple[list[ScheduleItem], list[UOp]]],
                    salt: tuple = ()) -> tuple[list[ScheduleItem], list[UOp]]:
    """`schedule(uops)`, or the replay of the schedule of an earlier graph of the same form
    (scheduled with the same `salt`: what else the schedule depends on, e.g. users' passes)."""
    items, outs, _ = cached_prepared(uops, lambda u: (*schedule(u), None), salt)
    return items, outs


def cached_prepared(uops: list[UOp],
                    schedule: Callable[[list[UOp]], tuple[list[ScheduleItem], list[UOp], object]],
                    salt: tuple = ()) -> tuple[list[ScheduleItem], list[UOp], object]:
    """`cached_schedule` of a schedule function that gives something else of the form's
    beside the items and the roots' outputs (a sharded graph's lowering: kept with the entry
    and given back by a replay), which this gives back too."""
    if not enabled():
        return schedule(uops)
    lift = float_params.enabled()
    form_key, form_hash, inputs, floats = _keyed(uops, lift, salt)
    key = (form_hash, tuple([v.hex() for _, v in floats]))
    with _lock:  # realize may run in several threads; the LRU bookkeeping is not atomic
        got = _forms.get(form_hash) if floats else None
        form = got[1] if got is not None and got[0] == form_key else None
        if form is not None and form.serves(floats):
            entry = form.entry
            _forms.move_to_end(form_hash)
            if key in _cache:  # (the same values as a miss's: that entry is used too)
                _cache.move_to_end(key)
        else:
            got = _cache.get(key)
            entry = got[1] if got is not None and got[0] == form_key else None
            if entry is not None:
                _cache.move_to_end(key)
    if entry is not None:
        stats["hits"] += 1
        return (*_replay(entry, inputs, floats), entry.extra)
    stats["misses"] += 1
    with reading() as read:
        items, outs, extra = schedule(uops)
    pinned = frozenset(i for i, (dt, v) in enumerate(floats) if (dt, v.hex()) in read)
    entry = _record(items, outs, inputs, extra)
    if entry is None:
        return items, outs, extra
    if floats:  # this run too reads its floats as arguments: its library serves every value
        entry = _lift(entry, floats)
    with _lock:
        _cache[key] = (form_key, entry)
        _cache.move_to_end(key)
        if len(_cache) > MAX_ENTRIES:
            _cache.popitem(last=False)
        if floats:
            got = _forms.get(form_hash)
            if got is None or got[0] != form_key:
                _forms[form_hash] = (form_key, _Form(tuple(floats), entry, pinned=pinned))
                _forms.move_to_end(form_hash)
                if len(_forms) > MAX_ENTRIES:
                    _forms.popitem(last=False)
            else:
                got[1].learn(floats, entry, pinned)
    return (*_replay(entry, inputs, floats), extra) if floats else (items, outs, extra)


def clear() -> None:
    with _lock:
        _cache.clear()
        _forms.clear()
        _aliases.clear()
        _step[0] = None
        _read[0] = None
