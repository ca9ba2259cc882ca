"""Optimizers with tinygrad's signatures: `opt = SGD(params, lr=...)`, `opt.zero_grad()`,
`loss.backward()`, `opt.step()`.

In: parameter tensors (realized, buffer-backed: the constructor realizes them), their `.grad`
from `backward()`. Out: each `step()` writes the updated parameters and the optimizer's state
(momentum, Adam's moments and bias-correction powers) in place. Every update is an ASSIGN, and
all of one step's ASSIGNs, the gradients and any tensors passed to `step(loss, ...)` are
realized as one schedule: the forward and backward graphs, the gradients and the updates fuse
where the scheduler can, and kernels that read a parameter's old value run before the kernel
that overwrites it (runtime/schedule.py's `order_assigns`).

The gradients are realized with the step, so `p.grad` still holds this step's gradient after
the parameters changed; `zero_grad()` drops them (the next backward() starts afresh).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from rulegrad.runtime.device import DEFAULT
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.multi import layouts
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.realize import buffer_of, realize_tensors, shards_of
from rulegrad.runtime.tensor import Tensor, readers_of, written_by
from rulegrad.runtime.uop import UOp


class Optimizer:
    """The parameters, their state, and the one-schedule step; subclasses give the update."""

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
        state = Tensor(np.full(like.shape, value, dtype=like.dtype.np))
        if (shards := shards_of(like.uop)) is not None:  # laid out as its parameter is
            state = state.shard(shards.devices, shards.axis).realize()
        elif isinstance(like.device, tuple):  # a view of shards (`p = s.T`): laid out as it is
            layout = layouts([like.uop])[0]  # (`.to` a tuple of devices is refused)
            state = state.shard(like.device, None if layout is None else layout[0]).realize()
        elif like.device != state.device:  # on its parameter's device (CPU:1 met CPU before)
            state = state.to(like.device).realize()
        return state

    def _update(self, grads: list[Tensor]) -> None:
        """`_assign` every parameter and state tensor its new value."""
        raise NotImplementedError

    def step(self, *also: Tensor) -> None:
        """Update the parameters in place; `also` (e.g. the loss) is realized in the same
        schedule, from the values before the update."""
        realize_tensors(self._schedule_step(also) + list(also))

    def schedule_step(self) -> list[Tensor]:
        """The step's tensors, not yet realized (tinygrad's name): each parameter and state
        tensor now holds its ASSIGN, and the gradients come along (see the module docstring).
        `Tensor.realize(*opt.schedule_step())` is `opt.step()`."""
        return self._schedule_step(())

    def _schedule_step(self, also: Sequence[Tensor]) -> list[Tensor]:
        """schedule_step, leaving out of its readers the tensors `also` realizes with it."""
        missing = [i for i, p in enumerate(self.params) if p.grad is None]
        if missing:
            raise ValueError(f"parameter(s) {missing} have no gradient: call loss.backward() "
                             "before step()")
        # each gradient is realized with the step in a buffer of its own (CONTIGUOUS): an update
        # that reads it then reads no parameter at other elements, so it is written in place
        # (without, a gradient that reads the parameter through the forward pass is an assign
        # hazard, and the new value would take a buffer and a copy kernel)
        for p in self.params:
            if buffer_of(p.grad.uop) is None and p.grad.uop.op is not Ops.CONTIGUOUS:
                p.grad = p.grad.contiguous()
        grads = [p.grad for p in self.params]
        self._assigns: list[tuple[Tensor, UOp]] = []
        self._update(grads)  # type: ignore[arg-type]
        targets = [t for t, _ in self._assigns]
        # a lazy tensor that reads a parameter or a state (the loss of `loss.backward();
        # opt.step(); loss.item()`) is realized in the step, from the values before it, as
        # torch computed it before its step
        readers = readers_of(written_by(targets), skip=[*targets, *grads, *also])
        for target, node in self._assigns:  # only now: every value was built from old ones
            target.uop = node
        return targets + grads + readers  # type: ignore[operator]

    def _assign(self, target: Tensor, value: Tensor) -> Tensor:
        """The ASSIGN of value into target, as a tensor to read the new value from (reading
        it orders the reader after the write, as tinygrad's `assign`); applied by step()."""
        node = UOp(Ops.ASSIGN, target.dtype, (target.uop, value.cast(target.dtype).uop))
        self._assigns.append((target, node))
        return Tensor(node)


class SGD(Optimizer):
    """Stochastic gradient descent, with momentum (and Nesterov) and weight decay as tinygrad:
    g = grad + wd * p; b = momentum * b + g; p -= lr * (g + momentum * b if nesterov else b)."""

    def __init__(self, params: Iterable[Tensor], lr: float = 0.001, momentum: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        super().__init__(params, lr)
        self.momentum, self.wd, self.nesterov = momentum, weight_decay, nesterov
        self.b = [self._state(p) for p in self.params] if momentum else []

    def _update(self, grads: list[Tensor]) -> None:
        for i, (p, g) in enumerate(zip(self.params, grads)):
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

    def _update(self, grads: list[Tensor]) -> None:
        b1_t = self._assign(self.b1_t, self.b1_t * self.b1)
        b2_t = self._assign(self.b2_t, self.b2_t * self.b2)
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m = self._assign(m, self.b1 * m + (1 - self.b1) * g)
            v = self._assign(v, self.b2 * v + (1 - self.b2) * (g * g))
            up = (m / (1 - b1_t)) / ((v / (1 - b2_t)).sqrt() + self.eps)
            self._assign(p, p - self.lr * (up + self.wd * p) if self.wd else p - self.lr * up)
