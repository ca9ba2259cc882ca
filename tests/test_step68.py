"""The small training step without `rulegrad.jit` (issue 33), step by step against numpy's own
step in float64 (its gradients written out by hand), while the step changes under the cached
plans of the step before it: a changed batch size, dtype, constant, Python branch or op order
must build anew (a plan or template of the other step would give other values), random numbers
drawn in the step must be new each step, `.item()` inside the step must keep working (and may
steer a branch), and a deep graph must not recurse. Also the gradient of a realized value
through its kept graph (runtime/origins.py's `watch`, which finds the roots that reach a
parameter)."""

from __future__ import annotations

import sys

import numpy as np

from rulegrad import Tensor
from rulegrad.nn.optim import SGD

D, H, OUT, LR = 7, 11, 4, 0.05
NAMES = ("w1", "b1", "w2", "b2")


def _setup(seed: int = 0):
    rng = np.random.default_rng(seed)
    w = {"w1": (rng.standard_normal((D, H)) / np.sqrt(D)).astype(np.float32),
         "b1": (rng.standard_normal(H) * 0.1).astype(np.float32),
         "w2": (rng.standard_normal((H, OUT)) / np.sqrt(H)).astype(np.float32),
         "b2": (rng.standard_normal(OUT) * 0.1).astype(np.float32)}
    p = {k: Tensor(v.copy(), requires_grad=True).realize() for k, v in w.items()}
    return p, SGD([p[k] for k in NAMES], lr=LR), {k: v.astype(np.float64) for k, v in w.items()}


def _batch(rng: np.random.Generator, b: int, dtype=np.float32):
    x = rng.standard_normal((b, D)).astype(dtype)
    return x, np.eye(OUT, dtype=dtype)[rng.integers(0, OUT, b)]


def _step(p, opt, x, y, scale=1.0, bias_first=True, tanh=False, noise=None):
    """rulegrad's step: `bias_first` relu(x@w1 + b1) or relu(x@w1) + b1 (op order), `tanh` for
    relu (a branch), `noise` (b, H) multiplies the hidden layer; the loss Tensor."""
    opt.zero_grad()
    z = x @ p["w1"]
    h = (z + p["b1"]).relu() if bias_first else z.relu() + p["b1"]
    if tanh:
        h = (z + p["b1"]).tanh()
    if noise is not None:
        h = h * noise
    logits = h @ p["w2"] + p["b2"]
    loss = -(logits.log_softmax(1) * y).sum(1).mean() * scale
    loss.backward()
    opt.step(loss)
    return loss


def _np_step(w, x, y, scale=1.0, bias_first=True, tanh=False, noise=None) -> float:
    """numpy's step in float64, as `_step`: the loss before the update; `w` updated in place."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    z = x @ w["w1"]
    if tanh:
        h = np.tanh(z + w["b1"])
        dpre = lambda dh: dh * (1 - h0 ** 2)  # noqa: E731
    elif bias_first:
        h = np.maximum(z + w["b1"], 0)
        dpre = lambda dh: dh * (z + w["b1"] > 0)  # noqa: E731
    else:
        h = np.maximum(z, 0) + w["b1"]
        dpre = lambda dh: dh * (z > 0)  # noqa: E731
    h0 = h
    a = h if noise is None else h * noise
    lg = a @ w["w2"] + w["b2"]
    zs = lg - lg.max(1, keepdims=True)
    ls = zs - np.log(np.exp(zs).sum(1, keepdims=True))
    loss = -(ls * y).sum(1).mean() * scale
    dl = (np.exp(ls) * y.sum(1, keepdims=True) - y) * scale / len(x)
    da = dl @ w["w2"].T
    dh = da if noise is None else da * noise
    dz = dpre(dh)
    # b1: through the relu when added before it, straight when added after
    db1 = dz.sum(0) if (bias_first or tanh) else dh.sum(0)
    grads = {"w1": x.T @ dz, "b1": db1, "w2": a.T @ dl, "b2": dl.sum(0)}
    for k in NAMES:
        w[k] -= LR * grads[k]
    return float(loss)


def _check(p, ref, loss: float, want: float) -> None:
    np.testing.assert_allclose(loss, want, rtol=1e-4, atol=1e-5)
    for k in NAMES:
        np.testing.assert_allclose(p[k].numpy(), ref[k], rtol=1e-4, atol=1e-5)


# each a step's (batch, dtype, scale, bias_first, tanh), three steps each, in turn, then back
# to the first: each changes one thing from the one before, whose cached plans, gradient and
# update templates (runtime/plans.py, gradient_forms.py) must not serve it. (The scale goes
# 0.5 then -1.0: a scale of 1.0 leaves no constant to change; a batch of 4 between 9 and 1,
# the same change of shape again, cost 5 of the test's 35 compiler runs: rev68a)
CHANGES = [(9, np.float32, 1.0, True, False),
           (1, np.float32, 1.0, True, False), (9, np.float64, 1.0, True, False),
           (9, np.float32, 0.5, True, False), (9, np.float32, -1.0, True, False),
           (9, np.float32, 1.0, False, False), (9, np.float32, 1.0, True, True),
           (9, np.float32, 1.0, True, False)]


def test_step_changed_between_steps_builds_anew_and_agrees_with_numpy():
    p, opt, ref = _setup(1)
    rng = np.random.default_rng(2)
    kept = []  # (each step's tensors alive: no later step lands on their addresses)
    for b, dtype, scale, bias_first, tanh in CHANGES:
        for _ in range(3):
            x, y = _batch(rng, b, dtype)
            kept.append((Tensor(x), Tensor(y)))
            loss = _step(p, opt, *kept[-1], scale, bias_first, tanh)
            kept.append(loss)
            _check(p, ref, loss.item(), _np_step(ref, x, y, scale, bias_first, tanh))


def test_item_inside_the_step_steers_a_branch():
    """The loss read with `.item()` before backward; a Python branch on it picks the scale of
    the step's gradient (a step keyed by its ops alone would miss the read)."""
    p, opt, ref = _setup(3)
    rng = np.random.default_rng(4)
    seen = set()
    for _ in range(8):
        x, y = _batch(rng, 6)
        opt.zero_grad()
        logits = (Tensor(x) @ p["w1"] + p["b1"]).relu() @ p["w2"] + p["b2"]
        loss = -(logits.log_softmax(1) * Tensor(y)).sum(1).mean()
        first = loss.item()
        big = first > 1.5
        seen.add(big)
        scaled = loss * (2.0 if big else 0.5)
        scaled.backward()
        opt.step(scaled)
        want = _np_step(ref, x, y, 2.0 if big else 0.5)
        _check(p, ref, scaled.item(), want)
    assert seen == {True, False}  # (both ways taken: the threshold is between the losses)


def test_random_numbers_drawn_in_the_step_are_new_each_step():
    """A mask drawn with Tensor.rand inside each step: numpy's step over the values drawn (read
    back after the step) agrees, and no two steps draw the same (none frozen by a plan)."""
    p, opt, ref = _setup(5)
    rng = np.random.default_rng(6)
    draws = []
    for _ in range(5):
        x, y = _batch(rng, 5)
        noise = Tensor.rand(5, H) + 0.5
        loss = _step(p, opt, Tensor(x), Tensor(y), noise=noise)
        got = loss.item()
        draws.append(noise.numpy().astype(np.float64))
        _check(p, ref, got, _np_step(ref, x, y, noise=draws[-1]))
    for i in range(len(draws)):
        for j in range(i):
            assert not np.allclose(draws[i], draws[j])


def test_deep_step_does_not_recurse():
    """A step whose loss is a chain of 1,500 ops, under a recursion limit of 400: the build,
    backward, the step's realize and its watch of the loss walk without recursion."""
    w = Tensor(np.full(3, 0.5, np.float32), requires_grad=True).realize()
    opt = SGD([w], lr=0.1)
    x = np.array([1.0, -2.0, 0.25], np.float32)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        for _ in range(2):
            opt.zero_grad()
            h = Tensor(x) * w
            for i in range(750):
                h = h * 1.001 + (0.001 if i % 2 else -0.001)
            loss = h.sum()
            loss.backward()
            opt.step(loss)
            got = loss.item()
    finally:
        sys.setrecursionlimit(old)
    # numpy: h = x*w*1.001**750 + c; d loss / d w = x * 1.001**750, two steps
    ww, c = np.full(3, 0.5), 0.0
    for i in range(750):
        c = c * 1.001 + (0.001 if i % 2 else -0.001)
    for _ in range(2):
        want = float((x * ww * 1.001 ** 750 + c).sum())
        ww = ww - 0.1 * x * 1.001 ** 750
    np.testing.assert_allclose(got, want, rtol=1e-4)
    np.testing.assert_allclose(w.numpy(), ww, rtol=1e-4, atol=1e-4)  # (750 float32 products)


def test_gradient_through_a_realized_value_whose_graph_reaches_the_weight_deep_down():
    """`h` realized before the loss is built: its gradient reaches w only through the graph
    the realize kept (origins.watch must find that h reaches w, here under its first source,
    a chain of ops, and under a realized value's own kept graph in turn)."""
    rng = np.random.default_rng(7)
    xv, wv = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    w = Tensor(wv.astype(np.float32), requires_grad=True).realize()
    g = (Tensor(xv.astype(np.float32)) @ w).realize()  # (kept: g's graph reaches w)
    h = ((g * 2.0).exp() * 0.5 + Tensor(np.ones((5, 4), np.float32))).realize()
    loss = (h * h).sum()
    loss.backward()
    gv = xv @ wv
    hv = np.exp(gv * 2) * 0.5 + 1
    dg = 2 * hv * np.exp(gv * 2)  # d/dg of (exp(2g)/2 + 1)^2
    np.testing.assert_allclose(w.grad.numpy(), xv.T @ dg, rtol=1e-4, atol=1e-4)
