"""Reverse-mode differentiation of tensor graphs by the rules of `rules/gradient.rules`.

In: a tensor-level root UOp, the gradient flowing into it, and target UOps. Out: for each
target reached, the UOp graph of the root's gradient with respect to it (lazy: it is scheduled,
fused and run like any other program, together with the forward graph when realized with it).
This module knows UOps only: `Tensor.gradient` and `Tensor.backward` (runtime/tensor.py) pick
the targets, wrap the results in tensors and fill `.grad`.

The walk is tinygrad's `compute_gradient`: the nodes that lie on a path from the root to a
target, visited users before sources (reverse topological order, iterative: no recursion on
graph depth); each node's gradient is handed to the `pm_gradient` rule of its op, which gives
one gradient per source (or, past a chain of views it knows as a whole, {node below: gradient}),
and the contributions to a node from its several users are summed.
Gradients do not flow through DETACH or ASSIGN, nor into integer or boolean values.
"""

from __future__ import annotations

from weakref import ref

from rulegrad.rules import matcher

from .device import device_of, to_device
from .gradient_forms import gradient_by_form
from .matcher import RuleMatcher
from .ops import Ops
from .schedule_cache import KeyWalk
from .uop import UOp, toposort
from .variable import show, size_text


class GradientError(RuntimeError):
    """A gradient that cannot be computed (an op without a gradient rule, bad shapes)."""


def _on_path(order: list[UOp], targets: set[UOp]) -> list[UOp]:
    """The nodes of a graph (`order`: its toposort) from which a target is reachable, sources
    before users."""
    reaches: dict[UOp, bool] = {}
    path = []
    no_grad = (Ops.DETACH, Ops.ASSIGN)
    for node in order:
        r = node in targets
        if not r and node.op not in no_grad:
            for s in node.src:  # (a loop, not any(...): no generator frame per node)
                if reaches[s]:
                    r = True
                    break
        reaches[node] = r
        if r:
            path.append(node)
    return path


def compute_gradient(root: UOp, root_grad: UOp, targets: list[UOp],
                     order: list[UOp] | None = None, walk: KeyWalk | None = None
                     ) -> dict[UOp, UOp]:
    """{node: d root / d node, scaled by root_grad} for every target (and node between).
    `order`: root's graph in `toposort` order, when the caller walked it already; `walk`: the
    key's walk that made that order (runtime/gradient_forms.py's `key_walk`), if one did."""
    rules = matcher("gradient", "pm_gradient")
    last = _last[0]
    if last is not None and last[0]() is root and last[1]() is root_grad and last[2] is rules \
            and [r() for r in last[3]] == targets:
        grads = {t: g for r, q in last[4] if (t := r()) is not None and (g := q()) is not None}
        if len(grads) == len(last[4]):
            return grads
    grads = gradient_by_form(root, root_grad, targets, order, rules, _compute_gradient, walk)
    _last[0] = (ref(root), ref(root_grad), rules, [ref(t) for t in targets],
                [(ref(t), ref(g)) for t, g in grads.items()])
    return grads


# The last gradient computed, as weak references: (root, root_grad, rules, targets, (target,
# gradient) pairs). An optimizer keeps its step's graph until the next step (api/nn/optim.py),
# so the next forward over the same buffers is the very same nodes (hash-consed), and its
# gradient, a pure function of them and the rules, is read back here, not derived again (a
# small MLP's backward was a fifth of its step). Held weakly, it keeps no graph alive itself.
# Other nodes of a form seen before (a fresh batch each step) rebuild its gradient's template
# (runtime/gradient_forms.py); the rules derive the first graph of each form.
_last: list[tuple | None] = [None]


def _compute_gradient(root: UOp, root_grad: UOp, targets: list[UOp], order: list[UOp] | None,
                      rules: RuleMatcher) -> dict[UOp, UOp]:
    """compute_gradient, derived by the rules."""
    wanted = set(targets)
    grads: dict[UOp, UOp] = {root: root_grad}
    path = _on_path(toposort(root) if order is None else order, wanted)
    in_path = set(path)
    for node in reversed(path):
        grad = grads.get(node)
        if grad is None or not node.src or in_path.isdisjoint(node.src):
            continue
        if node.op is Ops.SHRINK and _symbolic_pads(node):
            raise GradientError(_symbolic_shrink_refusal(node))
        # a stack of parts (a sharded value's, Tensor.shard) is no op: MULTI's rule gave its
        # gradient as a stack of the parts' gradients, part i for source i
        out = tuple(grad.src) if node.op is Ops.MSTACK else rules.rewrite(node, grad)
        if out is None:
            raise GradientError(f"no gradient rule for {node.op.name} (rules/gradient.rules): "
                                f"{node!r}")
        # a rule that knows a chain of views below the node as a whole (a running sum's
        # windows) gives {node below: gradient}, past the chain's own n^2 backward
        pairs = out.items() if isinstance(out, dict) else zip(node.src, out) \
            if isinstance(out, tuple) and len(out) == len(node.src) else None
        if pairs is None:
            raise GradientError(f"the gradient rule for {node.op.name} gave {out!r}, not one "
                                f"gradient per source ({len(node.src)})")
        for src, g in pairs:
            if g is None or src not in in_path or not src.dtype.is_float:
                continue
            if g.shape != src.shape or g.dtype is not src.dtype:
                raise GradientError(f"the gradient rule for {node.op.name} gave a gradient of "
                                    f"{g.dtype.name}{list(g.shape)} for a source of "
                                    f"{src.dtype.name}{list(src.shape)}")
            if src in grads:
                prev = grads[src]
                # a source of no device (constants, a realized constant) read on two devices
                # (Tensor.shard's parts): its gradient's parts meet on the first one's device,
                # where their ADD raised DeviceMismatch
                d = device_of(prev)
                if isinstance(d, str) and device_of(src) is None and \
                        isinstance(device_of(g), str) and device_of(g) != d:
                    g = to_device(g, d)
                g = prev + g
            grads[src] = g
    return {t: grads[t] for t in targets if t in grads}


def _symbolic_pads(node: UOp) -> list[int]:
    """The axes along which a SHRINK's gradient, the PAD that puts its window back, would pad
    by a symbolic amount: a symbolic size not kept whole (`w[1:]` of a tensor of shape (n, 6)
    pads by 1 and n - 5). `t[:, 1:3]` keeps its symbolic axis whole and pads nothing along it."""
    return [i for i, ((b, e), s) in enumerate(zip(node.arg, node.src[0].shape))
            if UOp in (type(b), type(e), type(s)) and not (b == 0 and e is s)]


def _symbolic_shrink_refusal(node: UOp) -> str:
    """Why no gradient flows back through a shrink to a symbolic size: it would be a pad by a
    symbolic amount, which the IR cannot express (runtime/variable.py lists what is refused)."""
    spans = {i: node.arg[i] for i in _symbolic_pads(node)}
    axes = ", ".join(f"axis {i} to {'' if b == 0 else f'{size_text(b)}:'}{size_text(e)}"
                     for i, (b, e) in spans.items())
    return (f"no gradient through a shrink to a symbolic size ({axes}, from shape "
            f"{show(node.src[0].shape)}): it would pad by a symbolic amount. Take the gradient "
            "with respect to the shrunk tensor (make it a leaf: realize it, set requires_grad), "
            "or shrink to a concrete size")


def seed_gradient(root: UOp, seed: UOp | None, targets: list[UOp]) -> UOp:
    """The gradient flowing into the root: 1 for a scalar, else the caller's `seed`, checked
    (a float root whose graph is still there, a seed of its shape)."""
    # a root that is a (view of a) buffer is a realized result, unless it is a target itself
    # (`x.sum()` of a 0-d x, `x.reshape(x.shape)`: the op gave its input back); one that kept
    # its graph was expanded to it before (runtime/origins.py)
    if root.base.op is Ops.BUFFER and not set(targets) & set(toposort(root)):
        raise GradientError("this tensor is a realized value that kept no graph: it was realized "
                            "with an optimizer step, or by a jit replay, or when nothing in its "
                            "graph required a gradient, or an assign replaced it. Take gradients "
                            "before the step (loss.backward(); opt.step(loss))")
    if not root.dtype.is_float:
        raise GradientError(f"gradients need a float result, this one is {root.dtype.name}")
    if seed is None:
        if root.shape != ():
            raise GradientError(f"the gradient of a tensor of shape {root.shape} needs the "
                                "gradient of the result (`gradient=`); or reduce it to a scalar")
        return UOp.const(root.dtype, 1.0)
    if seed.shape != root.shape:
        raise GradientError(f"gradient of shape {seed.shape} for a result of shape {root.shape}")
    return seed.cast(root.dtype)
