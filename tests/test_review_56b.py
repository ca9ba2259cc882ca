"""Review of session 56's gemm binding (lines56) and softmax/layernorm reciprocal (exp56), as an
adversary: the cases the near tests did not hold, each against torch or numpy.

- A hand-written attention, e / sum(e) or e * reciprocal(sum(e)), keeps the flash path and its
  masked key windows as the library softmax does (rules/flash_mask.py's `_shares`: since
  exp56 the library's softmax is the multiply form, so no other test reads the divide's branch).
- Products whose tile rows are several ranges (batch x rows, flattened), at every remainder of
  the last row tile, with an epilogue that reads each range (a residual and a per-row bias):
  gemm.py's `row_values` and `bind`.
- softmax's and layernorm's gradients along the first, a middle and the last axis, with -inf
  in a row, against torch: the backward graph changed with the forward (x * (1 / s))."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.rules.flash_helpers import Flash
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

torch = pytest.importorskip("torch")


def _flash(t: Tensor) -> Flash:
    (item,) = t.schedule()
    opt = optimize_kernel(lower_only(item.ast))
    (fl,) = [n.arg for n in toposort(opt) if n.op is Ops.STORE and isinstance(n.arg, Flash)]
    return fl


def _attention(q, k, v, keep: Tensor, form: str) -> Tensor:
    s = Tensor(q) @ Tensor(k).transpose(-1, -2) * (1 / math.sqrt(q.shape[-1]))
    s = keep.where(s, -math.inf)
    if form == "library":
        return s.softmax(-1) @ Tensor(v)
    e = (s - s.max(-1, keepdim=True).detach()).exp()
    total = e.sum(-1, keepdim=True)
    weights = e / total if form == "divide" else e * total.reciprocal()
    return weights @ Tensor(v)


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float64", 1e-11)])
@pytest.mark.parametrize("s", [7, 97])
def test_hand_written_softmax_attention_keeps_its_key_windows(s, dtype, tol):
    """A causal head written with its softmax by hand visits the keys the library's does (the
    flash action's windows, counted), and its values are torch's."""
    rng = np.random.default_rng(s)
    q, k, v = (rng.standard_normal((1, 2, s, 16)).astype(dtype) for _ in range(3))
    keep = Tensor.ones(s, s, dtype="bool").tril()
    ts = [torch.from_numpy(a) for a in (q, k, v)]
    want = torch.nn.functional.scaled_dot_product_attention(*ts, is_causal=True).numpy()
    visited = _flash(_attention(q, k, v, keep, "library")).keys_visited()
    assert visited < s * s
    for form in ("divide", "reciprocal"):
        t = _attention(q, k, v, keep, form)
        fl = _flash(t)
        assert fl.windows != (), form
        assert fl.keys_visited() == visited, form
        np.testing.assert_allclose(t.numpy(), want, rtol=tol, atol=tol)


def _row_ranges(t: Tensor) -> int:
    """How many ranges the rows of t's packed product are (0: not packed)."""
    (item,) = t.schedule()
    low = lower_only(item.ast)
    packs = [a for a in actions(optimize_kernel(low)) if a.startswith("PACK rows")]
    return len(packs[0].split(" x ")[0].split()) - 2 if packs else 0


@pytest.mark.parametrize("dtype,tol", [("float32", 3e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("m", range(12, 18))
def test_rows_of_several_ranges_at_every_last_tile(m, dtype, tol):
    """(3, m, k) @ (k, n) + a residual (3, m, n) + a bias per row (1, m, 1): the tile's rows
    are batch x row, flattened; m over 12..17 puts 3 * m at every remainder of a 6-row tile
    (and of float64's 5-row one); the epilogue reads both ranges from the flat row."""
    rng = np.random.default_rng(m)
    x, w, res, bias = (rng.standard_normal(s).astype(dtype)
                       for s in ((3, m, 40), (40, 48), (3, m, 48), (1, m, 1)))
    t = (Tensor(x) @ Tensor(w) + Tensor(res) + Tensor(bias)).tanh()
    assert _row_ranges(t) >= 2
    np.testing.assert_allclose(t.numpy(), np.tanh(x.astype(np.float64) @ w + res + bias),
                               rtol=tol, atol=tol)


def _torch_layernorm(t, axis: int):
    dev = t - t.mean(axis, keepdim=True)
    return dev / (dev.square().mean(axis, keepdim=True) + 1e-5).sqrt()


@pytest.mark.parametrize("dtype,tol", [("float32", 5e-5), ("float64", 1e-10)])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("op", ["softmax", "layernorm"])
def test_normalized_gradients_along_every_axis(op, axis, dtype, tol):
    rng = np.random.default_rng(axis + 5)
    x = (rng.standard_normal((5, 7, 11)) * 3).astype(dtype)
    if op == "softmax":  # keys a mask dropped: weight +0, gradient 0
        x[:, 2, 3] = x[1, :, 4] = -np.inf
    g = rng.standard_normal(x.shape).astype(dtype)
    t = Tensor(x, requires_grad=True)
    y = getattr(t, op)(axis)
    (y * Tensor(g)).sum().backward()
    tx = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    ty = torch.softmax(tx, axis) if op == "softmax" else _torch_layernorm(tx, axis)
    (ty * torch.from_numpy(g.astype(np.float64))).sum().backward()
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(t.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
