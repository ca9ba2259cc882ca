"""grad67 (issue 31): a hunt for wrong gradients, aliasing assigns and symbolic sizes.

What the hunt found wrong: `requires_grad=True` on an int or bool tensor was taken, and
backward() gave it a zeros `.grad` of its own dtype (a bool tensor `[False, False]`), where
torch refuses the flag. It is refused now (hunt67 found it too; its test is in
tests/test_hunt67.py). The rest of the hunt (docs/gradients.md, "grad67") agreed with torch
and numpy; a few of its delicate cases are kept below, on both schedulers, as guards.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import using

torch = pytest.importorskip("torch")
F = torch.nn.functional

SCHEDULERS = ["rangeify", "kernelize"]


def test_int_value_inside_a_float_graph_passes_no_gradient():
    # (x.int() is flat: d/dx of (int(x) + x) * x is int(x) + 2x)
    x = Tensor(np.array([1.5, 2.25]), requires_grad=True)
    ((x.int().float() + x) * x).sum().backward()
    tx = torch.tensor([1.5, 2.25], dtype=torch.float64, requires_grad=True)
    ((tx.int().double() + tx) * tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def _grads(fo, ft, arrays, sched):
    w = np.random.default_rng(0).standard_normal(ft(*map(torch.tensor, arrays)).shape)
    with using(sched):
        ts = [Tensor(a, requires_grad=True) for a in arrays]
        (fo(*ts) * Tensor(w)).sum().backward()
        ours = [t.grad.numpy() for t in ts]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    (ft(*tt) * torch.tensor(w)).sum().backward()
    return ours, [t.grad.numpy() for t in tt]


A = np.array
# (name, ours, torch's, inputs): ties, zeros, kinks, views and layers, all float64
RNG = np.random.default_rng(1)
CASES = [
    ("amax ties", lambda t: t.max(1), lambda t: t.amax(1),
     [A([[1., 3., 3.], [2., 2., -1.]])]),
    ("maximum tie", lambda a, b: a.maximum(b), torch.maximum,
     [A([1., 2., 3.]), A([1., 0., 3.])]),
    ("clamp at bounds", lambda t: t.clamp(0., 1.), lambda t: t.clamp(0., 1.),
     [A([-1., 0., .5, 1., 2.])]),
    ("prod two zeros", lambda t: t.prod(1), lambda t: t.prod(1),
     [A([[2., 0., 3.], [0., 0., 1.]])]),
    ("pow zero base", lambda a, b: a ** b, torch.pow,
     [A([0., 0., 0., -0., -2.]), A([0., -1., 2., -1., 3.])]),
    ("abs sign relu at 0", lambda t: t.abs() + t.sign() + t.relu(),
     lambda t: t.abs() + t.sign() + t.relu(), [A([0., -0., 1., -1.])]),
    ("broadcast div", lambda a, b: a / b, torch.div,
     [np.arange(1, 7.).reshape(2, 3), np.arange(1, 4.)]),
    ("strided slices", lambda t: t[::2, 1::2] * t[1::2, ::2],
     lambda t: t[::2, 1::2] * t[1::2, ::2], [np.arange(16.).reshape(4, 4) + 1]),
    ("var correction 2", lambda t: t.var(1, correction=2), lambda t: t.var(1, correction=2),
     [A([[1., 2., 4.], [1., 1., 1.]])]),
    ("logsumexp -inf row", lambda t: t.logsumexp(1), lambda t: t.logsumexp(1),
     [A([[-np.inf, -np.inf], [1., 2.]])]),
    ("conv2d stride dilation groups",
     lambda a, b: a.conv2d(b, stride=3, padding=1, dilation=2, groups=2),
     lambda a, b: F.conv2d(a, b, stride=3, padding=1, dilation=2, groups=2),
     [RNG.standard_normal((2, 4, 7, 7)), RNG.standard_normal((4, 2, 3, 3))]),
    ("max_pool2d ties padded", lambda t: t.max_pool2d(kernel_size=3, stride=2, padding=1),
     lambda t: F.max_pool2d(t, 3, 2, 1), [np.round(RNG.standard_normal((1, 2, 6, 6)))]),
    ("topk ties", lambda t: t.topk(2, dim=1)[0], lambda t: t.topk(2, dim=1)[0],
     [A([[3., 3., 3.], [1., 2., 1.]])]),
]


@pytest.mark.parametrize("sched", SCHEDULERS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradients_at_delicate_points_match_torch(case, sched):
    _, fo, ft, arrays = case
    ours, theirs = _grads(fo, ft, arrays, sched)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)
