"""The MLP training step the benchmarks time, written once for rulegrad and tinygrad.

An MLP 784-256-10 on a batch of 64: forward, cross-entropy against one-hot labels, backward,
and an SGD update of the four parameters. `step_tensors` returns what one step realizes (the
loss, then the optimizer's tensors: parameters holding their ASSIGNs, and for rulegrad the
gradients), built from the library's own Tensor and SGD classes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SHAPES = {"w1": (784, 256), "b1": (256,), "w2": (256, 10), "b2": (10,)}
BATCH, LR = 64, 0.01
NAME = "mlp train step 784-256-10 b64"


def data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {k: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
           for k, s in SHAPES.items()}
    out["x"] = rng.standard_normal((BATCH, 784)).astype(np.float32)
    out["y"] = np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)]
    return out


def setup(T: Any, arrays: dict[str, np.ndarray]) -> tuple[dict[str, Any], Any]:  # noqa: N803
    """The tensors (parameters realized, requires_grad) and the library's SGD over them."""
    if T.__module__.startswith("tinygrad"):
        from tinygrad.helpers import TRAINING
        from tinygrad.nn.optim import SGD

        TRAINING.value = 1  # tinygrad's optimizers refuse to step otherwise
    else:
        from rulegrad.nn.optim import SGD
    t = {k: T(v) for k, v in arrays.items()}
    for k in SHAPES:
        t[k].requires_grad = True
    T.realize(*t.values())
    return t, SGD([t[k] for k in SHAPES], lr=LR)


def step_tensors(t: dict[str, Any], opt: Any) -> list[Any]:
    """One step's tensors to realize together: the loss first."""
    opt.zero_grad()
    logits = (t["x"] @ t["w1"] + t["b1"]).relu() @ t["w2"] + t["b2"]
    loss = -(logits.log_softmax(1) * t["y"]).sum(1).mean()
    loss.backward()
    return [loss, *opt.schedule_step()]
