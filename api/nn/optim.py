"""Optimizers with tinygrad's signatures: `opt = SGD(params, lr=...)`, `opt.zero_grad()`,
`loss.backward()`, `opt.step()`.

In: parameter tensors (realized, buffer-backed: the constructor realizes them), their `.grad`
from `backward()`. Out: each `step()` writes the updated parameters and the optimizer's state
(momentum, Adam's moments and bias-correction powers) in place. Every update is an ASSIGN, and
all of one step's ASSIGNs, the gradients and any tensors passed to `step(loss, ...)` are
realized as one schedule: the forward and backward graphs, the gradients and the updates fuse
where the scheduler can, and kernels that read a parameter's old value run before the kernel
that overwrites it (runtime/schedule_item.py's `order_assigns`). Read lazily in program order:
a value built before `schedule_step()` from a parameter holds its old value, one built after
from the parameter its new value, and one built after from both (`w + old`) reads a copy of the
old value made before the write (`copy_old_reads`). A view of a parameter's buffer taken before
the step (`v = w.T`, `w[1:]`, `w.reshape(-1)`, an expand or flip of it) is a view, not a value:
the step points it at the buffer as the write leaves it (`_apply`), so `v * 2` built after the
step, realized with it, reads the new value, as torch's view sees its base's write
(docs/tensor.md states the rule). A parameter that is a view itself (`p = s.T`, `s[-1:]`) or
sharded is written through its view: s and the other views of its storage are pointed at the
storage as the write leaves it (`_storage_after`), and read the storage again once the step is
written (`_unpoint`). Once a realize has written the step, every tensor that still
holds one of its ASSIGNs reads the written buffer instead (runtime/realize.py's
`after_assigns`): realized later, it does not step again. Parameters that are views of one
buffer (`w[0]` and `w[1:]`, `w` and `w.T`) are the exception: torch updates them one after
another, each reading what the earlier ones wrote, so they are stepped in rounds, a schedule
each (`Optimizer._rounds`).

The gradients are realized with the step, so `p.grad` still holds this step's gradient after
the parameters changed; `zero_grad()` drops them (the next backward() starts afresh).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from weakref import ref

import numpy as np

from rulegrad.runtime import capture
from rulegrad.runtime.device import DEFAULT, device_of, in_use
from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.multi import layouts
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.realize import (
    after_assigns,
    buffer_of,
    pending_assign,
    read_before,
    realize_tensors,
    shards_of,
    stored_view,
    target_buffers,
    view_base,
)
from rulegrad.runtime.schedule_cache import buffers_read
from rulegrad.runtime.tensor import Tensor, reader_of, readers_of, views_of, written_by
from rulegrad.runtime.uop import VARIABLE_MARK, UOp, build_recorded, toposort
from rulegrad.runtime.variable import concrete, has_symbolic
from rulegrad.runtime.view_chains import WRITABLE_VIEWS, view_ops


def _drop_kept(opt: ref[Optimizer], step: int, _: object) -> None:
    """A tensor of the batch of kept step `step` went: the optimizer lets go of that graph."""
    o = opt()
    if o is not None and o._steps == step:
        o._kept = []


def _same(old: object, new: object) -> bool:
    """Whether a setting set again keeps its value, as a replayed kernel saw it: the same
    object, or one of the same type and the same bits (a float by its hex form: -0.0 is not
    0.0 and NaN is NaN; a numpy scalar by its bytes; an int, bool, str or None by ==: True is
    not 1, 1 is not 1.0; a tuple of such, element by element). Anything else (a Tensor, a
    list) is taken as changed."""
    if old is new:
        return True
    t = type(old)
    if t is not type(new):
        return False
    if t is float:
        return old.hex() == new.hex()  # type: ignore[attr-defined]
    if t in (int, bool, str, bytes):
        return old == new
    if t is tuple:
        return len(old) == len(new) and all(map(_same, old, new))  # type: ignore[arg-type]
    if isinstance(old, np.generic):
        return old.tobytes() == new.tobytes()  # type: ignore[attr-defined]
    return False


# per optimizer (by id, with a weak reference to it), the resets of the jits that replay a step
# of it (`_replayed_by`): kept out of its attributes, which copy and pickle take (a weak method
# is neither copied nor pickled); a plain dict, so that a setting set with no jit costs no
# Python call beyond `__setattr__` (a WeakKeyDictionary's get is one)
_Forget = Callable[[], Callable[[], None] | None]
_forgets: dict[int, tuple[ref[Optimizer], list[_Forget]]] = {}


def _forget_gone(key: int, gone: ref) -> None:
    """An optimizer's weak reference died: its resets go with it (unless the id was taken
    again and registered already)."""
    if (entry := _forgets.get(key)) is not None and entry[0] is gone:
        del _forgets[key]


def forgets_of(opt: Optimizer) -> list[_Forget]:
    """The resets `opt` calls when a setting changes (for tests: the list does not grow)."""
    entry = _forgets.get(id(opt))
    return [] if entry is None or entry[0]() is not opt else list(entry[1])


class Optimizer:
    """The parameters, their state, and the one-schedule step; subclasses give the update."""

    def __setattr__(self, name: str, value: object) -> None:
        """A public attribute (a setting: lr, momentum, a subclass's own `self.clip`) set to
        another value (`_same`) drops every `rulegrad.jit` replay of a step of this optimizer
        (`_replayed_by`): a replay runs no Python, so the recorded kernels went on with the old
        value (a step schedule's `opt.lr = 0.01` after the jit's fourth call changed nothing);
        the jit then records the step again. (Before, only the names the library declared
        were watched: a subclass's own setting was frozen by the replay.)"""
        if name == "weight_decay":  # torch's name of `wd` (it had made an attribute no step read)
            name = "wd"
        d = self.__dict__
        if name[0] != "_" and _forgets and (entry := _forgets.get(id(self))) is not None \
                and entry[0]() is self and not _same(d.get(name, _same), value):
            # (a new attribute is a change too)
            del _forgets[id(self)]
            forgets = entry[1]
            d[name] = value
            for forget in forgets:
                if (reset := forget()) is not None:
                    reset()
            return
        object.__setattr__(self, name, value)

    # torch's name of the weight decay, read as `wd` (`__setattr__` writes it there)
    weight_decay = property(lambda self: self.wd)

    def __init__(self, params: Iterable[Tensor], lr: float):
        self.params = list(dict.fromkeys(params))  # once each, in order
        if not self.params:
            raise ValueError("an optimizer needs at least one parameter tensor")
        for p in self.params:
            if not p.dtype.is_float:
                raise ValueError(f"parameter of dtype {p.dtype.name}: only floats train")
            if p.requires_grad is None:  # tinygrad's convention: an optimized tensor trains
                p.requires_grad = True
        realize_tensors([p for p in self.params if buffer_of(p.uop) is None])
        self.lr = lr
        self._kept: list[UOp] = []  # the last step's graph (`_keep`)
        self._steps = 0  # steps kept so far
        self._watched: list[ref] = []  # its batch's tensors, weakly (`_hold_by_batch`)
        self._trace: tuple | None = None  # the last update, a template (`_traced_update`)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def _state(self, like: Tensor | None = None, value: float = 0.0) -> Tensor:
        """A realized state tensor: like a parameter (shape and dtype), or a float32 scalar."""
        if like is None:
            if any(p.device != DEFAULT for p in self.params):
                # (read beside sharded parameters or ones on another device: a realized
                # constant, of no device, is read on each of theirs; one on CPU met them in a
                # DeviceMismatch)
                return Tensor.full((), value, dtype=dtypes.float32).contiguous().realize()
            return Tensor(np.array(value, dtype=np.float32))
        if has_symbolic(like.shape):  # (`p = a[:n]`): its bound rows of a buffer of vmax rows,
            # as a symbolic tensor is stored (runtime/variable.py); an assign writes those only
            full = Tensor(np.full(concrete(like.shape), value, dtype=like.dtype.np))
            return full.shrink(tuple((0, s) for s in like.shape))
        state = Tensor(np.full(like.shape, value, dtype=like.dtype.np))
        if (shards := shards_of(like.uop)) is not None:  # laid out as its parameter is
            state = state.shard(shards.devices, shards.axis).realize()
        elif isinstance(like.device, tuple):  # a view of shards (`p = s.T`): laid out as it is
            layout = layouts([like.uop])[0]  # (`.to` a tuple of devices is refused)
            state = state.shard(like.device, None if layout is None else layout[0]).realize()
        elif like.device != state.device:  # on its parameter's device (CPU:1 met CPU before)
            state = state.to(like.device).realize()
        return state

    def _shared(self, assign: bool) -> tuple[Tensor, ...]:
        """The state every parameter's update reads (Adam's bias-correction powers): with
        `assign`, `_assign`ed its new value and read from the ASSIGNs; without, read as it is
        (updated by an earlier round of this step: `_schedule_step`)."""
        return ()

    def _update_param(self, i: int, g: Tensor, shared: tuple[Tensor, ...]) -> None:
        """`_assign` parameter i (and its own state) its new value, from gradient g."""
        raise NotImplementedError

    def _update(self, grads: list[Tensor | None], which: Sequence[int], first: bool = True
                ) -> None:
        """`_assign` the parameters `which` (and their state) their new values, but for those
        without a gradient (frozen); `first`: the shared state too."""
        shared = self._shared(first)
        for i in which:
            g = grads[i]
            if g is not None:
                self._update_param(i, g, shared)

    def _tensors(self) -> list[Tensor]:
        """The parameters, then every state tensor the optimizer holds (an attribute that is a
        Tensor, or a list, tuple or dict of them or of tuples of them), in a fixed order."""
        out = list(self.params)
        for name, v in vars(self).items():
            if name == "params" or name.startswith("_"):
                continue
            items = v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) \
                else (v,)
            for t in items:
                out.extend(t if isinstance(t, tuple) else (t,))
        return [t for t in out if isinstance(t, Tensor)]

    def _trace_key(self, grads: list[Tensor | None], tensors: list[Tensor]) -> tuple | None:
        """What the update's nodes depend on beside the gradients' nodes: the optimizer's
        class and settings (momentum, ...; a float lr is not, `_traced_update` replays it), each
        state tensor's node (the same realized buffers step after step), each gradient's dtype,
        shape and device. None: not traced (a frozen parameter; a subclass, whose update may do
        more in Python than build nodes)."""
        if type(self) not in _TRACED or any(g is None for g in grads):
            return None
        # (a float by its hex form, an int or bool with its type: `==` takes -0.0 for 0.0,
        # and lr -0.0 steps p = -0.0 to 0.0 where lr 0.0 leaves it; True for 1)
        # (a float lr is left out: its constants are found and replayed with the new value,
        # `_lr_positions`; the trace holds the lr it was built with)
        settings = tuple((k, "float" if k == "lr" and type(v) is float else
                          v.hex() if type(v) is float else (type(v), v))
                         for k, v in vars(self).items()
                         if not k.startswith("_") and type(v) in (int, float, bool))
        # (and each gradient's device: one on another device than its parameter is refused
        # as the update is built, before the step changes anything; replayed, the step's
        # realize failed with the parameter already pointed at its ASSIGN, broken for good)
        # (no value on another device alive, runtime/device_use.py: every node is on the
        # default one or none, which the update is built alike for, and the fresh batch's
        # gradients are not walked for their devices, some 150 Python calls a step; keyed as
        # the default device, a trace made while another device lived still replays after)
        placed = in_use["devices"]
        return (type(self), settings, tuple(t.uop for t in tensors),
                tuple((g.uop.dtype, g.uop.shape,  # type: ignore[union-attr]
                       device_of(g.uop) if placed else DEFAULT) for g in grads))

    def _traced_update(self, grads: list[Tensor | None]) -> None:
        """`_update` of every parameter, or the last step's update replayed: a fresh batch
        each step gives gradients of other nodes but the same update over them, so the nodes
        the update added last time (a template, as runtime/gradient_forms.py records a
        gradient's) are built again over this step's gradients, with no Tensor op run (Adam's
        update was some 2,000 Python calls a step). The template holds the state tensors'
        nodes (realized buffers the optimizer holds anyway), no gradient and no batch. A new
        float lr (a schedule) is replayed too, once two builds showed which constants are the
        rate (`_lr_positions`); before, each new rate traced the update again."""
        tensors = self._tensors()
        key = self._trace_key(grads, tensors)
        if key is None:
            self._trace = None
            self._update(grads, range(len(self.params)))
            return
        ins = [g.uop for g in grads] + [t.uop for t in tensors]  # type: ignore[union-attr]
        lr = self.lr
        lr_bits = lr.hex() if type(lr) is float else None
        last = self._trace
        if last is not None and last[0] == key and (last[3] == lr_bits or last[4] is not None):
            _, entries, assigns, at_bits, lr_at = last
            if at_bits != lr_bits:  # (a schedule's new rate: its constants take the new value;
                # kept as the trace, a rate held for several steps costs no copy after the first)
                entries = _with_lr(entries, lr_at, lr)
                self._trace = (key, entries, assigns, lr_bits, lr_at)
            built = list(ins)
            build_recorded(entries, built)
            for i, r in assigns:
                self._assigns.append((tensors[i], pending_assign(built[r], tensors[i])))
            self._replayed()
            return
        self._update(grads, range(len(self.params)))
        made = _record_update(key, ins, tensors, self._assigns)
        lr_at = None
        if made is not None and last is not None and last[0] == key and last[2] == made[2]:
            # (the same update but for the rate: which constants are the rate is learnt from
            # the two builds; replayed from now on for any float rate)
            lr_at = _lr_positions(last[1], last[3], made[1], lr_bits)
        self._trace = None if made is None else (*made, lr_bits, lr_at)

    def _replayed(self) -> None:
        """The Python state a replayed update changes as `_update` would (Adam's counts)."""

    def _counts(self) -> tuple:
        """A copy of the Python state `_update` changes (Adam's counts of steps): the step in
        rounds builds the update once to learn its targets and again round by round, and sets
        these back between (`_set_counts`). Before, Adam counted two steps a step there, and
        a parameter that sat out steps trained again with bias powers b1^(2t) of its own."""
        return ()

    def _set_counts(self, counts: tuple) -> None:
        """Put back the state `_counts` copied."""

    def step(self, *also: Tensor) -> None:
        """Update the parameters in place; `also` (e.g. the loss) is realized in the same
        schedule, from the values before the update."""
        tensors = self._schedule_step(also) + list(also)
        self._keep(tensors)
        realize_tensors(tensors)
        self._hold_by_batch()

    def _keep(self, tensors: list[Tensor]) -> None:
        """Keep the step's graph (its roots before the realize) until the next step: the next
        forward, backward and update over the same buffers are then the very same nodes (they
        are hash-consed), whose gradient and schedule key are read back, not derived again
        (runtime/autograd.py, runtime/schedule_cache.py). It holds one step's graph and the
        buffers it reads, as a plan holds its roots; a batch's only while its tensors live
        (`_hold_by_batch`)."""
        self._kept = [t.uop for t in tensors]
        self._steps += 1
        self._watched = []

    def _hold_by_batch(self) -> None:
        """Once `step()` ran: keep the graph only while the tensors of the batch it read live.
        The same batch again builds the same nodes; a fresh batch each step (`Tensor(array)`
        in a loop) builds other ones, and the graph kept would hold the last batch until the
        next step. So each buffer the step read and does not write, made by `Tensor(array)`
        (`Buffer.owner`), has its tensor watched: when one goes, so does the graph (a tensor
        gone already: let go now). The buffers come from the step's schedule key (no walk);
        without it (the schedule cache off), or when no buffer read is such a tensor's (all
        computed inputs), the graph is kept until the next step, as before."""
        roots = self._kept
        bufs = buffers_read(roots)
        if bufs is None:  # (the realize keyed the roots it had to compute: gradients read
            # before the step, `p.grad.numpy()`, were realized already and left out)
            bufs = buffers_read([u for u in roots if buffer_of(u) is None
                                 and not stored_view(u)])
        if bufs is None:
            return
        written = {id(b) for u in roots if u.op is Ops.ASSIGN for b in target_buffers(u)}
        owners = []
        for b in bufs:
            if id(b) in written:
                continue
            if b.owner is None:  # (no tensor of host data, a computed input: a gradient
                continue  # read before the step; the batch's tensors tell when the graph goes)
            t = b.owner()
            if t is None:  # its tensor is gone: a live tensor that reads the buffer (the view
                # `Tensor(a).reshape(...)` a loop steps on again) owns it now; none: no step
                # builds these nodes again
                t = reader_of(b)
                if t is None:
                    self._kept = []
                    return
                b.owner = ref(t)
            owners.append(t)
        if owners:
            drop = partial(_drop_kept, ref(self), self._steps)
            self._watched = [ref(t, drop) for t in owners]

    def schedule_step(self) -> list[Tensor]:
        """The step's tensors, not yet realized (tinygrad's name): each parameter and state
        tensor now holds its ASSIGN, and the gradients come along (see the module docstring).
        `Tensor.realize(*opt.schedule_step())` is `opt.step()`. (Parameters that share storage
        are updated one after another: all but the last of them are realized here.)"""
        tensors = self._schedule_step(())
        self._keep(tensors)
        return tensors

    def _replayed_by(self, forget: Callable[[], Callable[[], None] | None]) -> None:
        """A jit replays a step of this one: `forget()` (its reset, or None once it is gone)
        is called when a setting changes (`__setattr__`)."""
        entry = _forgets.get(id(self))
        if entry is None or entry[0]() is not self:
            entry = _forgets[id(self)] = (ref(self, partial(_forget_gone, id(self))), [])
        forgets = entry[1]
        # (a jit gone, or this jit again after its reset(): dropped, so a jit per epoch or a
        # reset per epoch does not grow the list until a setting changes)
        forgets[:] = [f for f in forgets if f() is not None and f != forget]
        forgets.append(forget)

    def _schedule_step(self, also: Sequence[Tensor]) -> list[Tensor]:
        """schedule_step, leaving out of its readers the tensors `also` realizes with it."""
        if capture.active is not None:  # (rulegrad.jit records this step: `__setattr__`)
            capture.watch(self._replayed_by)
        # a parameter frozen since the last step (`p.requires_grad = False`: backward() gave it
        # no gradient) is left as it is, its state too, as torch's step skips a None .grad
        missing = [i for i, p in enumerate(self.params) if p.grad is None and p.requires_grad]
        if missing:
            named = ", ".join(f"{i} (shape {self.params[i].shape})" for i in missing)
            raise ValueError(f"parameter(s) {named} have no gradient: call loss.backward() "
                             "before step()")
        # each gradient is realized with the step in a buffer of its own (CONTIGUOUS): an update
        # that reads it then reads no parameter at other elements, so it is written in place
        # (without, a gradient that reads the parameter through the forward pass is an assign
        # hazard, and the new value would take a buffer and a copy kernel)
        for p in self.params:
            if p.grad is not None and buffer_of(p.grad.uop) is None \
                    and p.grad.uop.op is not Ops.CONTIGUOUS:
                p.grad = p.grad.contiguous()
        every = [p.grad for p in self.params]  # (None: a frozen parameter)
        grads = [g for g in every if g is not None]
        self._assigns: list[tuple[Tensor, UOp]] = []
        rounds = self._rounds()
        counts = self._counts() if len(rounds) > 1 else None
        self._traced_update(every)
        targets = [t for t, _ in self._assigns]
        # a lazy tensor that reads a parameter or a state (the loss of `loss.backward();
        # opt.step(); loss.item()`) is realized in the step, from the values before it, as
        # torch computed it before its step
        readers = readers_of(written_by(targets), skip=[*targets, *grads, *also])
        if counts is not None:  # the rounds build the update again: counted once a step
            self._set_counts(counts)
            return self._step_in_rounds(rounds, every, [*grads, *readers, *also])
        # (a value of the new w realized before the step, `w.numpy()`, realizes these with it)
        read_before([node for _, node in self._assigns], [*grads, *readers])
        return self._apply() + grads + readers  # type: ignore[operator]

    def _rounds(self) -> list[list[int]]:
        """The parameters in rounds, each round at most one parameter of a storage, in order:
        one round unless parameters are views of one buffer (`w[0]` and `w[1:]`, `w` and
        `w.T`). torch updates them one after another, each reading what the earlier ones wrote
        where they overlap; one schedule cannot (its kernels each read the buffer before any
        writes it, and two writes of one buffer ordered after each other's reads are a cycle:
        runtime/schedule_item.py's `order_assigns`)."""
        bases = [view_base(p.uop) for p in self.params]
        if all(b.op is Ops.BUFFER for b in bases) and len(set(bases)) == len(bases):
            return [list(range(len(self.params)))]  # (the common case, asked every step)
        written = [written_by([p]) for p in self.params]
        at: list[int] = []
        for i, w in enumerate(written):
            at.append(max((at[j] + 1 for j in range(i) if not w.isdisjoint(written[j])),
                          default=0))
        rounds: list[list[int]] = [[] for _ in range(max(at) + 1)]
        for i, r in enumerate(at):
            rounds[r].append(i)
        return rounds

    def _step_in_rounds(self, rounds: list[list[int]], grads: list[Tensor | None],
                        before: list[Tensor]) -> list[Tensor]:
        """_schedule_step for parameters that share storage: the gradients and the readers of
        the old values are realized first, then each round's updates, each round reading the
        values the earlier ones wrote; the last round is left for the caller to realize."""
        realize_tensors(before)
        for n, which in enumerate(rounds):
            self._assigns = []
            self._update(grads, which, first=n == 0)
            targets = self._apply()
            if n < len(rounds) - 1:
                realize_tensors(targets)
        return targets + [g for g in grads if g is not None]

    def _apply(self) -> list[Tensor]:
        """Point each target at its ASSIGN (only once every value was built from old ones),
        and each view of a target's buffer (`v = w.T` taken before the step) at the buffer as
        the ASSIGN leaves it, as torch's view sees its base's write; the targets."""
        targets = [t for t, _ in self._assigns]
        keep = [*targets, *self.params]  # (a parameter that is a view is stepped in its round)
        after: dict[UOp, UOp] = {}
        for target, node in self._assigns:
            if not has_symbolic(target.shape) and (found := _storage_after(target.uop, node)):
                after[found[0]] = found[1]
            target.uop = node
        if after:  # (one pass over the live tensors for every target, not one per target)
            for v in views_of(set(after), skip=keep):
                before, v.uop = v.uop, v.uop.substitute(after)
                _pointed[id(v)] = (ref(v), before, v.uop)
        self._assigns = []  # (applied: kept, they held the step's graph and its batch)
        return targets

    def _assign(self, target: Tensor, value: Tensor) -> Tensor:
        """The ASSIGN of value into target, as a tensor to read the new value from (reading
        it orders the reader after the write, as tinygrad's `assign`); applied by step()."""
        node = pending_assign(
            UOp(Ops.ASSIGN, target.dtype, (target.uop, value.cast(target.dtype).uop)), target)
        self._assigns.append((target, node))
        return Tensor(node)


def _record_update(key: tuple, ins: list[UOp], tensors: list[Tensor],
                   assigns: list[tuple[Tensor, UOp]]) -> tuple | None:
    """(key, the nodes the update added over `ins` as build_recorded's entries, per ASSIGN
    its target's index in `tensors` and its node's ref), or None when it cannot be replayed:
    an ASSIGN into a tensor not among them, a node of a buffer not among `ins` (a state made
    in the update), a variable's mark, an input's node used twice in `ins`."""
    if len(set(ins)) < len(ins):
        return None
    ref_of = {n: i for i, n in enumerate(ins)}
    index = {id(t): i for i, t in enumerate(tensors)}
    entries: list[tuple] = []
    out = []
    for target, node in assigns:
        if id(target) not in index:
            return None
        for n in toposort(node, stop=ref_of.__contains__):
            tag = n.tag
            if n.op is Ops.BUFFER or type(tag) is tuple and tag and tag[0] == VARIABLE_MARK:
                return None
            entries.append((n.op, n.dtype, n.arg, tag, tuple([ref_of[s] for s in n.src]),
                            n.shape))
            ref_of[n] = len(ref_of)
        out.append((index[id(target)], ref_of[node]))
    return key, tuple(entries), tuple(out)


def _lr_const(bits: str, dtype: DType) -> float | None:
    """The CONST arg a float rate (given by its hex form) becomes as an operand of `dtype`, as
    the Tensor ops make it (numpy's conversion to the dtype); None when the dtype has none."""
    try:
        with np.errstate(all="ignore"):
            out = dtype.np.type(float.fromhex(bits)).item()
    except (TypeError, ValueError, AttributeError):
        return None
    return out if type(out) is float else None


def _bits(arg: object) -> object:
    return arg.hex() if type(arg) is float else arg  # (-0.0 is not 0.0)


def _lr_positions(old: tuple, old_lr: str | None, new: tuple, new_lr: str | None
                  ) -> tuple[tuple[int, DType], ...] | None:
    """The entries (index, dtype) that are the rate's constants, from two recordings of one
    update built with rates old_lr and new_lr (hex forms): the entries where they differ, each
    a float CONST of old_lr's value in the first and new_lr's in the second, all else alike.
    None when not so shown: another difference, or a constant of old_lr's value that did not
    change (a rate that rounds alike in its dtype cannot be told from another constant)."""
    if old_lr is None or new_lr is None or old_lr == new_lr or len(old) != len(new):
        return None
    at = []
    for i, (a, b) in enumerate(zip(old, new)):
        if a[:2] != b[:2] or a[3:] != b[3:]:
            return None
        was = _lr_const(old_lr, a[1]) if a[0] is Ops.CONST and type(a[2]) is float else None
        if _bits(a[2]) == _bits(b[2]):
            if was is not None and was.hex() == a[2].hex():
                return None
            continue
        now = _lr_const(new_lr, a[1])
        if was is None or now is None or was.hex() != a[2].hex() or now.hex() != _bits(b[2]):
            return None
        at.append((i, a[1]))
    return tuple(at) or None


def _with_lr(entries: tuple, lr_at: tuple[tuple[int, DType], ...], lr: float) -> tuple:
    """The recorded update with the rate's constants (`_lr_positions`) of value lr."""
    out = list(entries)
    bits = lr.hex()
    for i, dtype in lr_at:
        op, dt, _, tag, refs, shape = out[i]
        out[i] = (op, dt, _lr_const(bits, dtype), tag, refs, shape)
    return tuple(out)


# the views `_apply` pointed at a pending step, each with the node it had before: once the
# step is written, the storage holds the new values and each reads it again as it did
# (`_unpoint`). Left on the written ASSIGN's target, its chain would grow every step and hold
# the parameter's own node: `a` under a leaf `b = a.T` led a second gradient to b.
_pointed: dict[int, tuple[ref, UOp, UOp]] = {}


def _unpoint(done: dict[UOp, UOp]) -> None:
    """After a realize wrote the ASSIGNs `done`: the views pointed at them read their storage
    as before (`_pointed`), also one realized with them (a slice parameter's base, pointed at
    a select, got a buffer of its own: a copy no later step writes)."""
    for key, (view, before, pointed) in list(_pointed.items()):
        written = pointed.substitute(done)
        if written is pointed:  # (another step's: not written yet)
            continue
        del _pointed[key]
        if (v := view()) is not None and (v.uop is pointed or v.uop is written or
                                         buffer_of(v.uop) is not None):
            v.uop = before


after_assigns(_unpoint)


def _storage_after(view: UOp, node: UOp) -> tuple[UOp, UOp] | None:
    """The storage under a target `view` (its BUFFER, or the MULTI of its realized shards) and
    that storage as the ASSIGN `node` into the view leaves it: the view's chain undone on node
    (`p = s.T`: s after the step is node permuted back; sharded p: node itself). A slice of one
    buffer (`p = s[1:]`) is undone as node where it lies and the storage's own values outside
    it (the write leaves them; read beside the write, they are read from a copy made before
    it: runtime/schedule_item.py's `copy_old_reads`). None for anything else."""
    after, ops = node, view_ops(view, WRITABLE_VIEWS)
    while view.op in ops:
        under = view.src[0]
        if view.op is Ops.PAD:  # (a strided slice's, whose SHRINK drops what it adds)
            after = after.shrink(tuple((b, b + n) for (b, _), n in zip(view.arg, under.shape)))
        elif view.op is Ops.SHRINK:
            if isinstance(device_of(view), tuple) or has_symbolic(under.shape):
                return None  # (a slice of shards: not undone here)
            pads = tuple((b, n - e) for (b, e), n in zip(view.arg, under.shape))
            inside = UOp.const(dtypes.bool, True).reshape((1,) * len(pads)).expand(view.shape)
            after = inside.pad(pads).alu(Ops.WHERE, after.pad(pads), under)
        else:
            arg = under.shape if view.op is Ops.RESHAPE else \
                tuple(np.argsort(view.arg).tolist()) if view.op is Ops.PERMUTE else view.arg
            after = UOp(view.op, node.dtype, (after,), arg)
        view = under
    if buffer_of(view) is not None and view.op is Ops.BUFFER:
        return view, after
    if shards_of(view) is not None:
        return view, after
    return None


class SGD(Optimizer):
    """Stochastic gradient descent, with momentum (and Nesterov) and weight decay as tinygrad:
    g = grad + wd * p; b = momentum * b + g; p -= lr * (g + momentum * b if nesterov else b)."""

    def __init__(self, params: Iterable[Tensor], lr: float = 0.001, momentum: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        super().__init__(params, lr)
        self.momentum, self.wd, self.nesterov = momentum, weight_decay, nesterov
        self.b = [self._state(p) for p in self.params] if momentum else []

    def _update_param(self, i: int, g: Tensor, shared: tuple[Tensor, ...]) -> None:
        p = self.params[i]
        g = g + self.wd * p if self.wd else g
        if self.momentum:
            b = self._assign(self.b[i], self.momentum * self.b[i] + g)
            g = g + self.momentum * b if self.nesterov else b
        self._assign(p, p - self.lr * g)


class Adam(Optimizer):
    """Adam (Kingma & Ba) as tinygrad's: m, v moments, bias correction by b1^t and b2^t kept
    as tensors (so every step is the same program: no constant changes, nothing recompiles)."""

    def __init__(self, params: Iterable[Tensor], lr: float = 0.001, b1: float = 0.9,
                 b2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(params, lr)
        self.b1, self.b2, self.eps, self.wd = b1, b2, eps, weight_decay
        self.m = [self._state(p) for p in self.params]
        self.v = [self._state(p) for p in self.params]
        self.b1_t, self.b2_t = self._state(value=1.0), self._state(value=1.0)
        # the steps each parameter sat out, frozen, and those it took: torch counts steps per
        # parameter, so one that sat out steps has b1^(its steps) of its own (`own`, a state
        # made when it first trains again): the shared b1^t over b1^skipped underflowed (0.9^t
        # is 0 in float32 past t = 980: 0 / 0.9^k, a NaN step for a layer unfrozen after that)
        self.skipped = [0] * len(self.params)
        self.taken = [0] * len(self.params)
        self.own: dict[int, tuple[Tensor, Tensor]] = {}

    def _trace_key(self, grads: list[Tensor | None], tensors: list[Tensor]) -> tuple | None:
        if any(self.skipped):  # (a parameter that sat out steps has bias powers of its own)
            return None
        return super()._trace_key(grads, tensors)

    def _replayed(self) -> None:
        for i in range(len(self.params)):
            self.taken[i] += 1

    def _counts(self) -> tuple:
        return list(self.skipped), list(self.taken)

    def _set_counts(self, counts: tuple) -> None:
        # (in place: a public attribute rebound is a setting changed, `__setattr__`)
        self.skipped[:], self.taken[:] = counts[0], counts[1]

    def _update(self, grads: list[Tensor | None], which: Sequence[int], first: bool = True
                ) -> None:
        for i in which:
            self.skipped[i] += grads[i] is None
        super()._update(grads, which, first)

    def _shared(self, assign: bool) -> tuple[Tensor, ...]:
        if not assign:
            return self.b1_t, self.b2_t
        return (self._assign(self.b1_t, self.b1_t * self.b1),
                self._assign(self.b2_t, self.b2_t * self.b2))

    def _update_param(self, i: int, g: Tensor, shared: tuple[Tensor, ...]) -> None:
        p, (b1_t, b2_t) = self.params[i], shared
        if self.skipped[i]:
            if i not in self.own:
                taken = self.taken[i]
                self.own[i] = (self._state(value=self.b1 ** taken),
                               self._state(value=self.b2 ** taken))
            o1, o2 = self.own[i]
            b1_t, b2_t = self._assign(o1, o1 * self.b1), self._assign(o2, o2 * self.b2)
        self.taken[i] += 1
        m = self._assign(self.m[i], self.b1 * self.m[i] + (1 - self.b1) * g)
        v = self._assign(self.v[i], self.b2 * self.v[i] + (1 - self.b2) * (g * g))
        up = (m / (1 - b1_t)) / ((v / (1 - b2_t)).sqrt() + self.eps)
        self._assign(p, p - self.lr * (up + self.wd * p) if self.wd else p - self.lr * up)


_TRACED = (SGD, Adam)  # (exactly these: a subclass's update may do more than build nodes)
