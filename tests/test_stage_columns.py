"""The stage action (rules/stage_helpers.py) never stages a row operand that reads a column the
interchange action moved inside the reduce loops. Such an operand was filled per column per step
of k, and once mask50 gave compares and selects vector lanes, an MLP's weight gradient through
relu's mask stored a vector into a scalar array: a compile error on every SGD step of a relu
MLP. The oracle is numpy's hand-written backward pass of the same MLP."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn.optim import SGD


def _numpy_step(ws, bs, x, y, lr):
    """One SGD step of a relu MLP with a log-softmax loss, by hand (relu's gradient at 0 is 0)."""
    pre, acts = [], [x]
    for i, (w, b) in enumerate(zip(ws, bs)):
        z = acts[-1] @ w + b
        pre.append(z)
        acts.append(np.maximum(z, 0) if i + 1 < len(ws) else z)
    out = acts[-1]
    e = np.exp(out - out.max(1, keepdims=True))
    d = (e / e.sum(1, keepdims=True) - y) / len(x)
    new_w, new_b = [None] * len(ws), [None] * len(bs)
    for i in range(len(ws) - 1, -1, -1):
        new_w[i], new_b[i] = ws[i] - lr * (acts[i].T @ d), bs[i] - lr * d.sum(0)
        if i:
            d = (d @ ws[i].T) * (pre[i - 1] > 0)
    return new_w, new_b


@pytest.mark.parametrize("sizes, batch", [((6, 8, 8, 8, 3), 5), ((6, 8, 8, 3), 1),
                                          ((7, 13, 11, 3), 3), ((5, 16, 16, 4), 7)])
def test_a_relu_mlps_sgd_step_equals_numpys(sizes, batch):
    rng = np.random.default_rng(sum(sizes) + batch)
    ws = [(rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32)
          for d, h in zip(sizes, sizes[1:])]
    bs = [rng.standard_normal(h).astype(np.float32) * 0.1 for h in sizes[1:]]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    params = []
    for w, b in zip(ws, bs):
        params += [Tensor(w, requires_grad=True), Tensor(b, requires_grad=True)]
    opt = SGD(params, lr=0.1)
    h = Tensor(x)
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i + 2 < len(params):
            h = h.relu()
    loss = -(h.log_softmax(1) * Tensor(y)).sum(1).mean()
    loss.backward()
    opt.step(loss)
    want_w, want_b = _numpy_step(ws, bs, x, y, 0.1)
    for p, want in zip(params, [v for pair in zip(want_w, want_b) for v in pair]):
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-4, atol=1e-5)
