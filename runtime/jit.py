"""`rulegrad.jit`: record the kernels a step launches once, then replay them with no graph work.

In: a function of Tensors (a forward pass, a training step) that returns Tensors. Out: the same
function; from its fourth call with inputs of the same kind, a call runs the recorded C kernels
over the new inputs' buffers (tinygrad's TinyJit, CUDA graphs): no graph is built, scheduled,
looked up or compiled.

How a call goes, per key (each Tensor argument's shape, dtype and device, which arguments share
a buffer, each numpy array's shape and dtype, and every other argument's value, a float by its
hex form; Tensor arguments are realized first, a numpy array is given to the step as
`Tensor(array)`; a Tensor of host data not read yet, `Tensor(array)` made for the call, is
keyed by its record, with no graph built):

1. the first call runs the function as it is (it may make state: an optimizer's buffers);
2. the second runs it with the launches recorded;
3. the third runs it recorded again, and the two recordings must agree: the same programs, each
   buffer in the same role (an argument, state that outlives the call, a buffer the call made),
   and the same contents in every buffer the call made from Python values (a learning rate
   read from a global, `Tensor([...])`, `Tensor.rand`). If they do not, the step is not
   replayable: it runs as it is on every later call, and `jit.refused` says why;
4. later calls replay the third recording: the arguments' buffers take the recorded ones'
   places, each returned tensor gets a buffer of its own (a result someone still holds keeps
   its values; one no one holds any more is written again: `_holders`), and every other buffer
   is the recorded one, written in place as the step wrote it (parameters, optimizer state,
   the gradients the step left on them). A numpy argument is copied into a buffer of the
   replay's own (a new one per call when the step writes or returns that argument). A
   returned view of a buffer (`a.T`, a slice) is the same view of this call's buffer. The
   kernels' argument lists are prepared once: a replay patches in its arguments' and results'
   addresses (those that changed) and calls the kernels (several of them in one C call, the
   backend's `calls`).

What is not replayed, and so makes a step run as it is: reading a value back to Python inside
the step (`.item()`, `.numpy()`: a branch on it would be frozen), a symbolic size, a sharded
argument or result, a backend other than C, and a result that is not a Tensor. What a replay
cannot see: Python code in the function does not run again, so a state change must be a Tensor
`assign` (as optimizers do), not a rebinding of a Python name; a Python branch taken
differently on a later call is not seen (but an optimizer's setting changed, `opt.lr = ...`,
drops the replays of its step: capture's `watch`, api/nn/optim.py's `Optimizer.__setattr__`);
nor are settings of the runtime: a kernel keeps the team the optimizer gave it when recorded (a
threaded loop's, rules/parallel_helpers.py), run on at most RULEGRAD_THREADS' count at the call
(recorded on 4 threads and replayed at 1: one; at 8: its 4). `jit.reset()` forgets every
recording. Not thread-safe.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from sys import getrefcount
from typing import Any
from weakref import getweakrefcount

import numpy as np

from . import buffer as _buffer
from . import capture, origins
from .buffer import Buffer, host_copy, result_node
from .dtype import DType, dtypes
from .ops import Ops
from .realize import backend_name, buffer_of
from .tensor import LazyTensor, Tensor
from .uop import UOp
from .view_chains import view_ops

RECORD = 1  # calls of a key run as they are before its first recording


@dataclass(slots=True)
class _Fresh:
    """A result the step makes, in a buffer of its own per call: where it goes, what a new
    buffer for it is, and the Tensor handed out over it last (its node, BUFFER node, Buffer),
    with the reference counts they have while no one but the replay holds them (`_holders`)."""

    slot: int
    size: int
    dtype: DType
    device: str
    shape: tuple
    tensor: Tensor | None = None
    node: UOp | None = None
    base: UOp | None = None  # (the node itself, or the BUFFER node it reshapes)
    buf: Buffer | None = None
    alone: tuple[int, ...] = ()
    # the recorded call's result kept its graph for a gradient (runtime/origins.py): each
    # buffer a replay makes for it is marked as keeping none (`origins.lose`)
    lost: bool = False


@dataclass(slots=True)
class _Replay:
    """A step's recorded launches, prepared so that a replay only patches addresses and calls
    the kernels: each kernel's function with its list of argument addresses, and for each slot
    the places in those lists that its buffer's address fills."""

    base: list[Buffer | None]          # per slot: the recorded buffer (None: filled per call)
    inputs: list[int]                  # per Tensor argument: its slot
    fresh: list[_Fresh]                # each result made per call
    written: list[Buffer]              # recorded buffers written in place
    written_args: list[int]            # the arguments written in place (their indexes)
    # per result: the fresh one, (slot, shape) of an argument's or state's buffer, or a view
    results: list[_Fresh | tuple[int, tuple] | _View]
    arg_sites: list[list[tuple[list[int], int]]]  # per argument: its slot's sites
    calls: list[tuple[Callable[..., None], list[int]]]  # per kernel: (function, addresses)
    sites: list[list[tuple[list[int], int]]]  # per slot: (a kernel's addresses, position)
    progs: list[Any]                   # the programs (their libraries stay loaded)
    needs_args: bool                   # it writes or returns an argument's buffer
    # every kernel over the addresses in place, as one call of no argument (None: to be
    # prepared again, after an address changed)
    kernels: Callable[[], None] | None = None
    moves: int = -1                    # buffer.moves when the recorded addresses were filled
    patched: Any = None                # the _Last whose arguments' addresses fill the sites
    # the kernels as one C call (the backend's `calls`: filled with `calls`' addresses when
    # they change, then called), or None: each called from Python (`kernels`)
    native: Any = None
    # per Tensor argument given as a numpy array: the replay's own buffer for it (its array,
    # shaped as the argument), which each call copies the array into; None: a new buffer per
    # call (the step writes or returns that argument), or an argument of another kind
    host_dst: list[np.ndarray | None] = field(default_factory=list)


@dataclass(slots=True)
class _View:
    """A result that is a view of a buffer (`a.T` of an argument, a slice of a result, a
    result read in another shape): the fresh result or the slot whose buffer it views, and
    the view's nodes above that buffer's BUFFER node, bottom up, as (op, dtype, arg, tag)."""

    of: _Fresh | int
    chain: tuple


@dataclass(slots=True)
class _Entry:
    """One key's calls: how many, its recordings, and its replay or why it has none."""

    calls: int = 0
    recording: capture.Recording | None = None
    args: list[Buffer | None] | None = None  # the argument buffers of that recording
    replay: _Replay | None = None
    template: Any = None    # the recorded call's result, whose structure replays return
    one: _Fresh | None = None  # the one result, when the step returns one Tensor of its own
    refused: str | None = None


@dataclass(slots=True)
class _Last:
    """The last replayed call of Tensors only: its keywords' names (None: positional), its
    arguments' nodes, weakly (a node is immutable and keeps its buffer: the same nodes again
    are the same key, found without building it), its entry and replay, the one result it
    returns when that is all it returns (a Tensor of its own), and that result again when the
    step also writes nothing in place and neither writes nor returns an argument (`lone`: the
    common step, replayed over the same arguments with no address to patch and no guard)."""

    names: tuple | None
    nodes: list[weakref.ref]
    entry: _Entry
    replay: _Replay
    one: _Fresh | None
    lone: _Fresh | None


def _flatten(args: tuple, kwargs: dict) -> tuple[list[Tensor], tuple]:
    """The Tensor arguments (positional, keyword, and one level into lists, tuples and dicts)
    and a key of the call: each Tensor's shape and dtype, and every other argument's value."""
    tensors: list[Tensor] = []

    def one(x: Any) -> Any:
        if isinstance(x, Tensor):
            tensors.append(x)
            return (x.shape, x.dtype)
        if isinstance(x, list | tuple):
            return (type(x).__name__, tuple(one(v) for v in x))
        if isinstance(x, dict):
            return ("dict", tuple((k, one(v)) for k, v in sorted(x.items())))
        # a number by its type and, a float, its hex form, as `_quick_key`: -0.0 == 0.0 and
        # 2 == 2.0 == True as keys, and one's replay gave the other's values and dtype
        if isinstance(x, float | np.floating):
            return ("V", type(x), float(x).hex())
        return ("V", type(x), x)

    key = tuple(one(a) for a in args) + tuple((k, one(kwargs[k])) for k in sorted(kwargs))
    return tensors, key


def _buffers(tensors: Sequence[Tensor]) -> list[Buffer | None]:
    """The arguments' buffers, realizing them first when some are not (that is not part of
    the step: it is neither recorded nor replayed)."""
    bufs = [buffer_of(t.uop) for t in tensors]
    if None in bufs:
        Tensor.realize(*tensors)
        bufs = [buffer_of(t.uop) for t in tensors]
    return bufs


def _tensors_key(names: tuple | None, tensors: Sequence[Tensor]) -> tuple[tuple, list]:
    """The key of a call whose arguments are all Tensors, positional (`names` None) or by
    keyword (`names`, in the call's order: a call in another order is another key), and their
    buffers: one flat tuple, each Tensor's shape, dtype and device, then which share a buffer
    (a call's cost is mostly its key: this is the common call, made in one pass)."""
    bufs = _buffers(tensors)
    key: list[Any] = [_TENSORS, names]
    for t, b in zip(tensors, bufs):
        u = t.uop
        key += (u.shape, u.dtype, None if b is None else b.device)
    if len(set(bufs)) != len(bufs):  # (Buffers hash by identity)
        key.append(tuple(map(bufs.index, bufs)))
    return tuple(key), bufs


_TENSORS = object()  # heads the key of a call of Tensors only (no key of _flatten holds it)
_HOST = object()  # marks a numpy array's place in a key (a Tensor's is its device's name)
_SCALAR = "S"  # heads a Python number's place in a key (no shape begins with a string)


def _quick_key(names: tuple | None, values: Sequence[Any],
               hosts: list[tuple[int, np.ndarray]]) -> tuple[tuple, list, bool] | None:
    """The key of a call whose arguments are realized Tensors, Tensors of host data not read
    as a graph yet (`Tensor(array)`: its record's buffer, no node built), numpy arrays and
    Python numbers, with the Tensors' buffers (None for an array: `hosts` gets its place
    among the Tensor arguments and the array) and whether all are Tensors over buffers; None
    for a call of anything else or of a Tensor not realized (`_tensors_key` realizes it).
    Each Tensor is its shape, dtype and device (as `_tensors_key` gives: the same entries),
    an array its shape and dtype, a number its type and value (a float by its hex form: -0.0
    is not 0.0, NaN is NaN)."""
    key: list[Any] = [_TENSORS, names]
    bufs: list[Buffer | None] = []
    plain = True  # (every argument a Tensor over a buffer: a `_Last` may skip the next key)
    tensors = 0
    for v in values:
        kind = type(v)
        if kind is not Tensor:
            plain = False
        if kind is Tensor:
            u = v.uop
            b = buffer_of(u)
            if b is None:
                return None
            key += (u.shape, u.dtype, b.device)
        elif kind is LazyTensor:
            lazy = v.record
            if lazy.build is not None:  # (an op's record: realized by _tensors_key)
                return None
            b = lazy.bufs[0]
            key += (lazy.shape, lazy.dtype, b.device)
        elif kind is np.ndarray:
            hosts.append((len(bufs), v))
            key += (v.shape, v.dtype, _HOST)
            bufs.append(None)
            continue
        elif kind is float:
            key.append((_SCALAR, kind, v.hex()))
            continue
        elif kind is int or kind is bool:
            key.append((_SCALAR, kind, v))
            continue
        else:
            return None
        bufs.append(b)
        tensors += 1
    if tensors > 1:  # which share a buffer (Buffers hash by identity; None: an array's place)
        shared = [b for b in bufs if b is not None] if hosts else bufs
        if len(set(shared)) != len(shared):
            key.append(tuple(map(bufs.index, bufs)))
    return tuple(key), bufs, plain


def _as_tensors(args: tuple, kwargs: dict, hosts: list[tuple[int, np.ndarray]],
                bufs: list[Buffer | None]) -> tuple[tuple, dict, list[Buffer | None]]:
    """The call with each numpy argument as `Tensor(array)` (what the step is given when it
    runs as it is or is recorded), and the Tensors' buffers."""
    # (a Tensor per place: an array passed twice is two arguments, as its replay copies it)
    made = {}
    for k, arr in hosts:
        t = made[k] = Tensor(arr)
        bufs[k] = t.record.bufs[0]
    at = 0  # (each argument's place among the Tensor arguments: numbers have none)

    def one(v: Any) -> Any:
        nonlocal at
        if type(v) is float or type(v) is int or type(v) is bool:
            return v
        at += 1
        return made.get(at - 1, v)

    if kwargs:
        kwargs = {n: one(v) for n, v in kwargs.items()}
    else:
        args = tuple([one(v) for v in args])
    return args, kwargs, bufs


def _results(out: Any) -> list[Tensor] | None:
    """The Tensors a step returned (None when it returned something else)."""
    if out is None:
        return []
    if isinstance(out, Tensor):
        return [out]
    values = list(out.values()) if isinstance(out, dict) else out
    if isinstance(out, list | tuple | dict) and all(isinstance(t, Tensor) for t in values):
        return list(values)
    return None


def _rebuild(template: Any, tensors: list[Tensor]) -> Any:
    if template is None:
        return None
    if isinstance(template, Tensor):
        return tensors[0]
    if isinstance(template, dict):
        return dict(zip(template, tensors))
    return type(template)(tensors)


class Jit:
    """A function whose calls replay recorded kernels (see the module's docstring)."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.entries: dict[tuple, _Entry] = {}
        self.replays = 0
        self._last: _Last | None = None  # the last replayed call of Tensors only
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        # a decorated method (tinygrad's `@TinyJit def __call__(self, ...)`): the instance is
        # an argument like any other, so each instance has calls (and replays) of its own
        return self if obj is None else functools.partial(self.__call__, obj)

    @property
    def refused(self) -> list[str]:
        """Why each kind of call that runs as it is could not be replayed."""
        return [e.refused for e in self.entries.values() if e.refused]

    def reset(self) -> None:
        """Forget every recording: the next calls warm up and record again."""
        self.entries.clear()
        self._last = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # the common call: the argument nodes of the last replayed call again (a loop over the
        # same inputs, or over inputs assigned in place), checked here without another call
        # (indexed loops, no zip or tuple of the names: this check is a third of a tiny call)
        if (last := self._last) is not None:
            refs, names = last.nodes, last.names
            if kwargs:  # the same names in the same order, each over the same node
                same = not args and names is not None and len(kwargs) == len(refs)
                if same:
                    i = 0
                    for name, v in kwargs.items():
                        if name != names[i] or type(v) is not Tensor or refs[i]() is not v.uop:
                            same = False
                            break
                        i += 1
            else:
                same = names is None and len(args) == len(refs)
                if same:
                    i = 0
                    for v in args:
                        if type(v) is not Tensor or refs[i]() is not v.uop:
                            same = False
                            break
                        i += 1
            if same:  # replay the last call's entry over the same argument nodes
                self.replays += 1
                rp = last.replay
                # the common step: the addresses in place are this call's, no buffer to guard,
                # and its one result handed out last is dropped (`_holders`, written out):
                # only the kernels run
                lone = last.lone
                if (lone is not None and rp.patched is last and rp.moves == _buffer.moves
                        and rp.kernels is not None):
                    t = lone.tensor  # (a local: counted once more than in `_holders`)
                    if t.uop is lone.node and t.grad is None and lone.alone == (  # type: ignore
                            getrefcount(t) - 1, getweakrefcount(t), getrefcount(lone.node),
                            getrefcount(lone.base), getrefcount(lone.buf),
                            getrefcount(lone.buf.data)):  # type: ignore[union-attr]
                        rp.kernels()
                        return t
                    t = None
                if rp.patched is last and rp.moves == _buffer.moves and not rp.needs_args:
                    # (their addresses are in place already) with no buffer to guard and
                    # every result handed out last dropped, only the kernels run
                    one = last.one
                    if not rp.written and rp.kernels is not None and _dropped(rp.fresh):
                        rp.kernels()
                    else:
                        _run(rp, None)
                    if one is not None:
                        return one.tensor
                    return _rebuild(last.entry.template, _outputs(rp, None))
                bufs = [buffer_of(v.uop) for v in (kwargs.values() if kwargs else args)]
                _run(rp, bufs)  # type: ignore[arg-type]
                rp.patched = last
                return _rebuild(last.entry.template, _outputs(rp, bufs))  # type: ignore
        key: tuple | None = None
        hosts: list[tuple[int, np.ndarray]] = []
        if not (args and kwargs):  # all positional or all by keyword: a flat key, cheap
            names = tuple(kwargs) if kwargs else None
            values = tuple(kwargs.values()) if kwargs else args
            quick = _quick_key(names, values, hosts)
            if quick is not None:
                key, bufs, plain = quick
                entry = self.entries.get(key)
                if entry is not None and (rp := entry.replay) is not None:
                    for k, arr in hosts:  # numpy arrays: into the replay's own buffers
                        dst = rp.host_dst[k]
                        if dst is not None:
                            dst[...] = arr  # (a copy in one C call, any layout)
                        else:  # (the step writes or returns it: a buffer of this call's)
                            bufs[k] = host_copy(arr, dtypes.from_np(arr.dtype))
                    if plain:  # the next call over the same nodes skips even this key
                        self._last = _Last(names, [weakref.ref(v.uop) for v in values], entry,
                                           rp, entry.one, None if rp.written or rp.needs_args
                                           else entry.one)
                    self.replays += 1
                    _run(rp, bufs)
                    if (one := entry.one) is not None:  # (one result, a Tensor of its own)
                        return one.tensor
                    return _rebuild(entry.template, _outputs(rp, bufs))
                if hosts:  # not replayed yet: the step gets Tensors of the arrays
                    args, kwargs, bufs = _as_tensors(args, kwargs, hosts, bufs)
            elif all(type(v) is Tensor or type(v) is LazyTensor for v in values):
                key, bufs = _tensors_key(names, values)  # (some not realized yet: realized)
        if key is None:  # anything else: a key of the whole call's structure
            # (a numpy array is given to the step as `Tensor(array)` here too: it went raw, an
            # unhashable key, and `x.relu()` of it raised; `hosts` is the quick key's alone)
            hosts = []
            if any(type(v) is np.ndarray for v in (*args, *kwargs.values())):
                args = tuple([Tensor(v) if type(v) is np.ndarray else v for v in args])
                kwargs = {n: Tensor(v) if type(v) is np.ndarray else v
                          for n, v in kwargs.items()}
            tensors, key = _flatten(args, kwargs)
            bufs = _buffers(tensors)
            # and each argument's device, and which arguments share a buffer
            key = (key, tuple([None if b is None else b.device for b in bufs]),
                   tuple(map(bufs.index, bufs)))
        try:
            entry = self.entries.get(key)
        except TypeError:  # an argument that is not hashable: no key, no replay
            return self.fn(*args, **kwargs)
        if entry is None:
            entry = self.entries[key] = _Entry()
        if entry.replay is not None:
            self.replays += 1
            _run(entry.replay, bufs)
            return _rebuild(entry.template, _outputs(entry.replay, bufs))
        if entry.refused is not None or entry.calls < RECORD:
            entry.calls += 1
            return self.fn(*args, **kwargs)
        return self._record(entry, bufs, args, kwargs, [(k, a.shape) for k, a in hosts])

    def _record(self, entry: _Entry, bufs: list[Buffer | None], args: tuple,
                kwargs: dict, hosts: list[tuple[int, tuple]]) -> Any:
        entry.calls += 1
        if backend_name() != "c":
            entry.refused = f"the backend is {backend_name()!r}: only C kernels are replayed"
        elif any(b is None for b in bufs):
            entry.refused = ("an argument is not one whole buffer: a sharded tensor, or a view "
                             "of one (x.T, x[1:], x.flip(0); pass x.contiguous() to replay)")
        if entry.refused is not None:
            return self.fn(*args, **kwargs)
        rec = capture.Recording()
        outer, capture.active = capture.active, rec
        described: list = []  # (a step that returns nothing, as an optimizer's step, has none)
        try:
            out = self.fn(*args, **kwargs)
            results = _results(out)
            if results is None:
                capture.refuse(f"it returns {type(out).__name__}, not Tensors")
            elif results:
                Tensor.realize(*results)
                # (a realized view of a buffer, such as `a.T` of an argument, is no buffer of
                # its own: the replay hands out the same view of its buffer; a sharded value
                # is neither)
                described = [_describe(t.uop) for t in results]
                if None in described:
                    capture.refuse("it returns a sharded tensor, not one buffer or a view of "
                                   "one")
        finally:
            capture.active = outer
        if rec.refused is None and rec.host_reads:
            rec.refused = "it reads values back to Python (.item(), .numpy()) inside the step"
        if rec.refused is not None:
            entry.refused = rec.refused
            return out
        rec.results = [(*d, t.shape) for d, t in zip(described, results)]  # type: ignore
        if entry.recording is None or entry.args is None:
            entry.recording, entry.args = rec, bufs
            return out
        why = _disagree(entry.recording, entry.args, rec, bufs)
        if why is not None:
            entry.refused = f"two calls differ: {why}"
            return out
        entry.replay, entry.template = _plan(rec, bufs, hosts), out
        for register in rec.watchers:  # (a setting the kernels froze changes: record again)
            register(weakref.WeakMethod(self.reset))
        if type(out) is Tensor and type(entry.replay.results[0]) is _Fresh:
            entry.one = entry.replay.results[0]  # type: ignore[assignment]
        for r, (b, _, _) in zip(entry.replay.results, rec.results):
            f = r.of if type(r) is _View else r
            if type(f) is _Fresh and b.origin is not None:
                f.lost = True
        entry.recording = entry.args = None
        return out


# ---------------------------------------------------------------------- the recordings
def _describe(node: UOp) -> tuple[Buffer, tuple | None] | None:
    """A realized result as (its buffer, None) when it is the buffer (`BUFFER.reshape(shape)`),
    or (the buffer it views, the view's nodes above the BUFFER node, bottom up, as
    (op, dtype, arg, tag)); None when it is neither (a sharded value)."""
    if (b := buffer_of(node)) is not None:
        return b, None
    chain, ops = [], view_ops(node)  # (a strided slice's dropped PAD too: `s[::2]` of 5 rows)
    while node.op in ops and len(node.src) == 1:
        chain.append((node.op, node.dtype, node.arg, node.tag))
        node = node.src[0]
    if node.op is not Ops.BUFFER or node.arg.data is None:
        return None
    return node.arg, tuple(reversed(chain))


def _chain(node: UOp) -> tuple:
    """The nodes of `node` above its BUFFER node, bottom up (`_describe`'s chain)."""
    out = []
    while node.op is not Ops.BUFFER:
        out.append((node.op, node.dtype, node.arg, node.tag))
        node = node.src[0]
    return tuple(reversed(out))


def _slots(rec: capture.Recording) -> list[tuple[Buffer, bool]]:
    """Every kernel slot of a recording, in launch order: (its buffer, whether it writes)."""
    return [(x, i in slots) for la in rec.launches
            for kernel, slots in zip(la.bufs, la.written) for i, x in enumerate(kernel)]


def _roles(rec: capture.Recording, args: list[Buffer | None]) -> list[tuple]:
    """Each slot's buffer as a role: ("arg", k), or ("buf", n) for the n-th distinct other
    buffer of the recording."""
    arg_of = {id(b): k for k, b in enumerate(args) if b is not None}
    order: dict[int, int] = {}
    return [("arg", arg_of[id(x)]) if id(x) in arg_of
            else ("buf", order.setdefault(id(x), len(order)), w) for x, w in _slots(rec)]


def _result_roles(rec: capture.Recording, args: list[Buffer | None]) -> list[tuple]:
    """Each result as its buffer's role (an argument, the n-th buffer the kernels use, or one
    they do not use), its shape and its view's nodes."""
    arg_of = {id(b): k for k, b in enumerate(args) if b is not None}
    order: dict[int, int] = {}
    for x, _ in _slots(rec):
        order.setdefault(id(x), len(order))
    return [(("arg", arg_of[id(b)]) if id(b) in arg_of else ("buf", order.get(id(b))), shape,
             chain) for b, chain, shape in rec.results]


def _disagree(a: capture.Recording, a_args: list, b: capture.Recording,
              b_args: list) -> str | None:
    """Why two recordings of one step are not the same step, or None."""
    if [la.prog for la in a.launches] != [lb.prog for lb in b.launches]:
        return "they launch different kernels (a Python branch, or a new shape inside)"
    if _roles(a, a_args) != _roles(b, b_args):
        return "their kernels read and write their buffers differently"
    if _result_roles(a, a_args) != _result_roles(b, b_args):
        return "they return other buffers, or other views of them"
    slots_a, slots_b = _slots(a), _slots(b)
    written_a = {id(x) for x, w in slots_a if w}
    written_b = {id(x) for x, w in slots_b if w}
    args = {id(x) for x in a_args + b_args}
    for (x, _), (y, _) in zip(slots_a, slots_b):
        if id(x) in args:  # (then y is the same argument of its call: the roles agree)
            continue
        if id(y) in written_a and id(y) not in written_b:
            # the second call reads, and never writes, what the first one made: state carried
            # from call to call by a Python name, which a replay would not move on
            return ("the step reads a value an earlier call made and rebinds it (keep state "
                    "in place with Tensor.assign)")
        if x is y or id(x) in written_a or id(y) in written_b:
            continue
        # read-only, and a different buffer each call: made from Python values in the step
        if x.data is None or y.data is None or not np.array_equal(x.data, y.data):
            return ("a value made from Python inside the step changes from call to call "
                    "(pass it as a Tensor argument; draw random numbers outside)")
    return None


def _plan(rec: capture.Recording, args: list[Buffer | None],
          hosts: Sequence[tuple[int, tuple]] = ()) -> _Replay:
    """The replay of a recording: its buffers as slots, the arguments' and results' slots, and
    each kernel's function with the list of addresses it is called with. `hosts`: the
    arguments given as numpy arrays (copied, at each replay, into buffers of the replay's own
    when the step neither writes nor returns them)."""
    slot: dict[int, int] = {}
    base: list[Buffer | None] = []

    def slot_of(x: Buffer) -> int:
        if id(x) not in slot:
            slot[id(x)] = len(base)
            base.append(x)
        return slot[id(x)]

    launches = [(la.prog, [[slot_of(x) for x in kernel] for kernel in la.bufs])
                for la in rec.launches]
    # every argument has a slot (one no kernel reads may still be returned: it is this call's)
    inputs = [slot_of(b) for b in args]  # type: ignore[arg-type]  (None: refused, sharded)
    for s in inputs:
        base[s] = None
    # a result the step made (its first use writes it) gets a fresh buffer per call; one that
    # is an argument's or state's buffer is that buffer; a view is of either
    first_write: dict[int, bool] = {}
    for x, w in _slots(rec):
        first_write.setdefault(id(x), w)
    fresh: dict[int, _Fresh] = {}
    results: list[_Fresh | tuple[int, tuple] | _View] = []
    for buf, chain, shape in sorted(rec.results, key=lambda r: r[1] is not None):
        # (the plain results first: a fresh result's Tensor has the shape it is returned in)
        s = slot_of(buf)
        if s not in inputs and first_write.get(id(buf), False) and s not in fresh:
            fresh[s] = _Fresh(s, buf.size, buf.dtype, buf.device,
                              shape if chain is None else (buf.size,))
    for buf, chain, shape in rec.results:
        s = slot_of(buf)
        f = fresh.get(s)
        if f is not None and chain is None and f.shape == shape:
            results.append(f)
        elif f is not None:  # (a view of it, or it in another shape)
            results.append(_View(f, chain if chain is not None else
                                 _chain(result_node(buf, shape))))
        else:
            results.append((s, shape) if chain is None else _View(s, chain))
    written = {slot[id(x)] for x, w in _slots(rec) if w} - set(fresh)
    for s in fresh:  # (a fresh result's buffer is the call's: the recorded one is not kept)
        base[s] = None
    calls: list[tuple[Callable[..., None], list[int]]] = []
    sites: list[list[tuple[list[int], int]]] = [[] for _ in base]
    for prog, kernels in launches:
        for kernel, slots in zip(prog.kernels, kernels):
            addrs = [0] * len(slots)
            calls.append((kernel.fn, addrs))
            for i, s in enumerate(slots):
                sites[s].append((addrs, i))
    # several kernels run as one C call (a ctypes call per kernel costs more than a small
    # kernel: a training step's are 0.3-15 us); one kernel is called as it is
    native = None
    if len(calls) > 1:
        native = launches[0][0].calls([k for prog, _ in launches for k in prog.kernels])
    # a numpy argument the step neither writes nor returns is copied into a buffer of the
    # replay's own: its address stays in the kernels' lists (no address to patch per call)
    returned = {r[0] for r in results if type(r) is tuple}
    returned |= {r.of for r in results if type(r) is _View and type(r.of) is int}
    host_dst: list[np.ndarray | None] = [None] * len(inputs)
    arg_sites = [sites[s] for s in inputs]
    for k, shape in hosts:
        s = inputs[k]
        if s in written or s in returned or inputs.count(s) > 1:
            continue
        b = args[k]
        own = Buffer(b.size, b.dtype, device=b.device)  # type: ignore[union-attr]
        base[s] = own  # (its address filled in as state's are)
        arg_sites[k] = []
        host_dst[k] = own.ensure().reshape(shape)
    return _Replay(base, inputs, list(fresh.values()),
                   [base[s] for s in sorted(written) if base[s] is not None],  # type: ignore[misc]
                   [k for k, s in enumerate(inputs) if s in written], results,
                   arg_sites, calls, sites,
                   [prog for prog, _ in launches],
                   any(s in written for s in inputs)
                   or bool(returned & set(inputs)),  # (it returns an argument, or a view)
                   native=native, host_dst=host_dst)


def _put(sites: list[tuple[list[int], int]], address: int) -> None:
    for addrs, i in sites:
        addrs[i] = address


def _holders(f: _Fresh) -> tuple[int, ...]:
    """Reference counts of a result's Tensor (and its weak references: `requires_grad` keeps
    one), its node, its BUFFER node, its Buffer and the storage. Counted once when the replay
    made them (it alone held them) and again before the next call: the same counts say no one
    holds the Tensor, a graph, a plan, the Buffer or an array handed out any more, so the
    buffer may be written again and the same Tensor handed out (a loop that drops each result
    allocates nothing)."""
    return (getrefcount(f.tensor), getweakrefcount(f.tensor), getrefcount(f.node),
            getrefcount(f.base), getrefcount(f.buf),
            getrefcount(f.buf.data))  # type: ignore[union-attr]


def _dropped(fresh: Sequence[_Fresh]) -> bool:
    """Whether no one holds or changed the Tensors last handed out over these results, nor
    anything of them (`_holders` counts the same as when the replay made them), so that their
    buffers may be written again and the same Tensors handed out."""
    for f in fresh:
        t = f.tensor
        if t.uop is not f.node or t.grad is not None:  # type: ignore[union-attr]
            return False
        # (`_holders`, inline: a frame per result of every replay; `t` counted once more)
        if f.alone != (getrefcount(t) - 1, getweakrefcount(t), getrefcount(f.node),
                       getrefcount(f.base), getrefcount(f.buf),
                       getrefcount(f.buf.data)):  # type: ignore[union-attr]
            return False
    return True


def _run(rp: _Replay, args: list[Buffer] | None) -> None:
    """Run a replay over this call's argument buffers (None: the last call's, whose addresses
    are in place, when the replay neither writes nor returns an argument)."""
    for b in rp.written:  # an array handed out keeps its values: the buffer moves first
        b.prepare_write()
    if args is not None:
        for k in rp.written_args:
            args[k].prepare_write()
    moved = changed = rp.moves != _buffer.moves
    if moved:  # some buffer moved to new storage: every address again
        for s, b in enumerate(rp.base):
            if b is not None:
                _put(rp.sites[s], b.address())
        rp.moves = _buffer.moves
    if args is not None:
        rp.patched = None  # (the caller says whose they are)
        for sites, b in zip(rp.arg_sites, args):
            if sites:  # (an argument copied into the replay's own buffer has none)
                address = b.address()
                addrs, i = sites[0]
                if addrs[i] != address:  # (the same buffer as last call's: nothing to patch)
                    changed = True
                    for addrs, i in sites:
                        addrs[i] = address
    for f in rp.fresh:
        # the same Tensor again if no one holds it or its result and no one changed it
        if f.tensor is None or not _dropped((f,)):
            f.tensor = f.node = f.base = f.buf = None  # (someone holds them: theirs now)
            f.buf = Buffer(f.size, f.dtype, device=f.device)
            f.buf.ensure()  # (its storage is counted too)
            if f.lost:
                origins.lose(f.buf)
            f.node = result_node(f.buf, f.shape)
            f.base = f.node.base
            f.tensor = Tensor(f.node)
            f.alone = _holders(f)  # (no local here may refer to them: counted the same)
            _put(rp.sites[f.slot], f.buf.address())
            changed = True
        elif moved:
            _put(rp.sites[f.slot], f.buf.address())  # type: ignore[union-attr]
    if changed or rp.kernels is None:
        rp.kernels = _kernels(rp)
    rp.kernels()


def _kernels(rp: _Replay) -> Callable[[], None]:
    """The replay's kernels over the addresses now in `calls`, as one call: the backend's
    one C call (filled with them), the one kernel with its arguments bound, or (a kernel the
    C loop cannot call) each kernel in turn."""
    if rp.native is not None:
        rp.native.fill([addrs for _, addrs in rp.calls])
        return rp.native
    if len(rp.calls) == 1:
        fn, addrs = rp.calls[0]
        return functools.partial(fn, *addrs)
    ready = [functools.partial(fn, *addrs) for fn, addrs in rp.calls]

    def each() -> None:
        for call in ready:
            call()

    return each


def _outputs(rp: _Replay, args: list[Buffer] | None) -> list[Tensor]:
    """The results of the replay that just ran, as Tensors."""
    out = []
    for r in rp.results:
        kind = type(r)
        if kind is _Fresh:
            out.append(r.tensor)
        elif kind is _View:
            out.append(Tensor(_view(rp, r, args)))  # type: ignore[arg-type]
        else:
            out.append(Tensor(_kept(rp, r, args)))  # type: ignore[arg-type]
    return out


def _view(rp: _Replay, v: _View, args: list[Buffer] | None) -> UOp:
    """A view result's node: its recorded view's nodes over this call's buffer."""
    if type(v.of) is _Fresh:
        node = v.of.base
    else:
        b = rp.base[v.of]
        if b is None:
            b = args[rp.inputs.index(v.of)]  # type: ignore[index]
        node = UOp(Ops.BUFFER, b.dtype, (), b)
    for op, dtype, arg, tag in v.chain:
        node = UOp(op, dtype, (node,), arg, tag)
    return node  # type: ignore[return-value]


def _kept(rp: _Replay, result: tuple[int, tuple], args: list[Buffer]) -> UOp:
    """The node of a result that is an argument's or state's own buffer."""
    s, shape = result
    b = rp.base[s]
    return result_node(b if b is not None else args[rp.inputs.index(s)], shape)


def jit(fn: Callable[..., Any]) -> Jit:
    """Decorate a step so that later calls replay its kernels (see runtime/jit.py)."""
    return Jit(fn)
