"""rev47a: an adversarial review of round 46's front-end changes (the jit's keys and numpy
arguments, leaves that need a gradient), each test a bug it found.

Oracles: numpy (values, dtypes, the sign of infinities) and torch (gradients).
"""

from __future__ import annotations

import numpy as np
import pytest

import rulegrad
from rulegrad import Tensor
from rulegrad.nn.optim import SGD, Adam

torch = pytest.importorskip("torch")
X = np.array([1.0, 2.0, -3.0], np.float32)
XI = np.array([1, 2, 3], np.int32)
WARM = 4  # calls of one key before its replay (runs, two recordings, then replays)


@pytest.mark.parametrize("how", ["keyword", "numpy scalar", "a lazy argument"])
def test_a_replay_is_keyed_by_a_numbers_sign_and_type(how):
    """A call the quick key cannot take (a keyword beside a positional, a numpy scalar, a
    Tensor not realized yet) is keyed by its structure, where a number was `("V", x)`:
    -0.0 equals 0.0 and 2 equals 2.0, so the replay recorded for one ran for the other. 1/(x*s)
    gave -inf for s=0.0; x_int * 2.0 gave int32 values (numpy: float64)."""
    if how == "keyword":
        def make(s, x=X):
            return (Tensor(x).realize(),), {"s": s}
        first, second, cast = -0.0, 0.0, float
    elif how == "numpy scalar":
        def make(s, x=X):
            return (Tensor(x).realize(), s), {}
        first, second, cast = np.float32(-0.0), np.float32(0.0), np.float32
    else:
        def make(s, x=X):
            return (Tensor(x) + 0, s), {}
        first, second, cast = -0.0, 0.0, float

    step = rulegrad.jit(lambda t, s: 1 / (t * s))
    for _ in range(WARM):
        args, kw = make(first)
        step(*args, **kw)
    args, kw = make(second)
    got = step(*args, **kw).numpy()
    with np.errstate(divide="ignore"):
        want = 1 / (X * cast(second))
    np.testing.assert_array_equal(got, want)

    step = rulegrad.jit(lambda t, s: t * s)  # an int, then a float of the same value
    for _ in range(WARM):
        args, kw = make(2, XI)
        step(*args, **kw)
    args, kw = make(2.0, XI)
    got = step(*args, **kw).numpy()
    assert got.dtype == (XI * 2.0).dtype
    np.testing.assert_array_equal(got, XI * 2.0)


def test_a_leaf_computed_from_a_former_variable_gets_a_node_of_its_own():
    """w required a gradient, then no longer (`requires_grad = False`); y = w * 2 is a new leaf.
    w stayed among the variables, so y counted as computed from one and kept its node, which
    the loss's own w * 2 shares: y.grad summed both uses (torch: the other factor alone)."""
    w = Tensor(X).realize()
    w.requires_grad = True
    w.requires_grad = False
    y = (w * 2).requires_grad_()
    (y * (w * 2)).sum().backward()
    tw = torch.tensor(X, requires_grad=True)
    tw.requires_grad = False
    ty = (tw * 2).requires_grad_()
    (ty * (tw * 2)).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())
    assert w.grad is None


@pytest.mark.parametrize("how", ["a lazy Tensor beside it", "a keyword beside it",
                                 "a numpy scalar beside it"])
def test_a_numpy_argument_is_a_tensor_in_every_call(how):
    """The jit gives a numpy array argument to the step as `Tensor(array)` (docs/jit.md), but
    only when the quick key took the call: beside a Tensor not realized yet, a keyword, or a
    numpy scalar, the step got the raw array (and `x.relu()` raised AttributeError)."""
    step = rulegrad.jit(lambda x, y: x.relu() * 2 + y)
    rng = np.random.default_rng(47)
    for _ in range(WARM + 2):
        a = rng.standard_normal(5).astype(np.float32)
        b = rng.standard_normal(5).astype(np.float32)
        if how == "a lazy Tensor beside it":
            got = step(a, Tensor(b) + 0)
        elif how == "a keyword beside it":
            got = step(a, y=Tensor(b))
        else:
            b = np.float32(b[0])
            got = step(a, b)
        np.testing.assert_allclose(got.numpy(), np.maximum(a, 0) * 2 + b, rtol=1e-6)


def test_requires_grad_set_again_or_after_false_trains_as_torch():
    """`requires_grad_()` on a tensor that requires a gradient already, or again after
    `requires_grad_(False)`, added a second weak reference of it to the set of variables, whose
    lookup compared the tensor with itself by `==` (an elementwise Tensor) and raised "bool() of
    a tensor of shape (3,)". Gradients then accumulate as torch's: none while it is off."""
    def run(make):
        w = make(X)
        w.requires_grad_()
        w.requires_grad_()
        v = make(X * 3)
        v.requires_grad_()
        (w * v).sum().backward()
        w.requires_grad_(False)
        (w * v * 2).sum().backward()
        w.requires_grad_(True)
        (w * w * v).sum().backward()
        return w.grad.numpy(), v.grad.numpy()

    ours = run(Tensor)
    theirs = run(torch.tensor)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


CREATIONS = {
    "empty": lambda **kw: Tensor.empty(2, 3, **kw),
    "full_like": lambda **kw: Tensor(X).full_like(0.5, **kw),
    "zeros_like": lambda **kw: Tensor(X).zeros_like(**kw),
    "ones_like": lambda **kw: Tensor(X).ones_like(**kw),
    "randn": lambda **kw: Tensor.randn(2, 3, **kw),
    "normal": lambda **kw: Tensor.normal(2, 3, mean=1.0, std=2.0, **kw),
    "uniform": lambda **kw: Tensor.uniform(2, 3, low=-1.0, high=2.0, **kw),
    "scaled_uniform": lambda **kw: Tensor.scaled_uniform(2, 3, **kw),
    "glorot_uniform": lambda **kw: Tensor.glorot_uniform(2, 3, **kw),
    "kaiming_uniform": lambda **kw: Tensor.kaiming_uniform(2, 3, **kw),
    "kaiming_normal": lambda **kw: Tensor.kaiming_normal(2, 3, **kw),
    "rand_like": lambda **kw: Tensor(X).rand_like(**kw),
    "randn_like": lambda **kw: Tensor(X).randn_like(**kw),
    "full": lambda **kw: Tensor.full((2, 3), 0.5, **kw),
    "zeros": lambda **kw: Tensor.zeros(2, 3, **kw),
    "ones": lambda **kw: Tensor.ones(2, 3, **kw),
    "arange": lambda **kw: Tensor.arange(0.0, 3.0, 0.5, **kw),
    "eye": lambda **kw: Tensor.eye(3, **kw),
    "rand": lambda **kw: Tensor.rand(2, 3, **kw),
    "linspace": lambda **kw: Tensor.linspace(-1.0, 2.0, 7, **kw),
}


@pytest.mark.parametrize("name", sorted(CREATIONS))
def test_a_creation_given_requires_grad_makes_a_variable(name):
    """tinygrad's creation functions take `requires_grad=`; ours swallowed it in `**_`, so
    `Tensor.randn(2, 3, requires_grad=True)` needed no gradient: a backward over it filled no
    .grad (or raised: no tensor requires one), and full, zeros, ones, arange, eye, rand and
    linspace refused the keyword. The gradient is torch's over the same values."""
    t = CREATIONS[name](requires_grad=True)
    assert t.requires_grad is True
    tt = torch.tensor(t.numpy(), requires_grad=True)
    (t * t * 3).sum().backward()
    (tt * tt * 3).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("p", [float("inf"), -float("inf")])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normalize_by_an_infinite_norm_is_torchs(p, dim, dtype):
    """normalize(p=inf) summed |x|^inf and raised it to 1/inf: inf ** 0 is 1, and x came back
    unchanged (torch divides by the largest |x|; p=-inf by the smallest)."""
    a = np.array([[0, 1.5, -2, 0], [0, 0, 0, 0], [3, 0, 1, 1], [-4, 2, 0.5, 1]], dtype)
    got = Tensor(a).normalize(p=p, dim=dim).numpy()
    want = torch.nn.functional.normalize(torch.tensor(a), p=p, dim=dim).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


DEVS = ("CPU", "CPU:1")
B = np.arange(24, dtype=np.float32).reshape(4, 6) / 5 - 2
LEAVES = {
    "full": lambda: Tensor.full((4, 6), 2.0).requires_grad_(),
    "ones": lambda: Tensor.ones(4, 6).requires_grad_(),
    "a realized constant": lambda: Tensor.full((4, 6), 2.0).contiguous().realize()
    .requires_grad_(),
}


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_a_constant_leaf_sharded_gets_torchs_gradient(leaf, axis):
    """A leaf made of constants has no device (realized or not), so `shard` reads it on each
    device without a copy, and its gradient's parts, one per device, met in an ADD that raised
    DeviceMismatch (Tensor(array) leaves, on CPU, were copied and worked)."""
    x = LEAVES[leaf]()
    tx = torch.tensor(x.numpy(), requires_grad=True)
    loss = (x.shard(DEVS, axis=axis) * Tensor(B).shard(DEVS, axis=axis)).exp().sum()
    loss.to("CPU").backward()
    (tx * torch.tensor(B)).exp().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


OPTIMIZERS = {
    "sgd momentum": (lambda ps: SGD(ps, lr=0.1, momentum=0.9),
                     lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)),
    "adam": (lambda ps: Adam(ps, lr=0.1), lambda ps: torch.optim.Adam(ps, lr=0.1)),
}


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_an_optimizer_with_state_trains_a_sharded_parameter_as_torch(opt, axis):
    """A sharded leaf trains (its .grad keeps its layout, round 46), but an optimizer's state
    was made on CPU: momentum, Adam's moments and its bias-correction scalars met the sharded
    parameter in a DeviceMismatch at the first step. Three steps against torch's."""
    w = Tensor(B).shard(DEVS, axis=axis)
    w.requires_grad = True
    tw = torch.tensor(B, requires_grad=True)
    ours, theirs = OPTIMIZERS[opt][0]([w]), OPTIMIZERS[opt][1]([tw])
    x = np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3)
    for _ in range(3):
        ours.zero_grad()
        theirs.zero_grad()
        ((w @ Tensor(x).shard(DEVS, axis=None)).relu().sum(1) ** 2).sum().to("CPU").backward()
        ((tw @ torch.tensor(x)).relu().sum(1) ** 2).sum().backward()
        ours.step()
        theirs.step()
    assert w.device == DEVS
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-5)
