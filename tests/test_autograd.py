"""Gradients through the Tensor API (runtime/autograd.py + rules/gradient.rules), computed by
the scheduler and C, against central finite differences of numpy's own float64 forward
function: one case per op that has a gradient rule, plus programs that chain them."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.autograd import GradientError

H = 1e-6


def numeric_grad(f, xs: list[np.ndarray], i: int) -> np.ndarray:
    """d sum(f(*xs)) / d xs[i] by central differences, in float64."""
    out = np.zeros_like(xs[i])
    for j in np.ndindex(xs[i].shape):
        hi = [x.copy() for x in xs]
        lo = [x.copy() for x in xs]
        hi[i][j] += H
        lo[i][j] -= H
        out[j] = (np.sum(f(*hi)) - np.sum(f(*lo))) / (2 * H)
    return out


def check(f_rg, f_np, *xs: np.ndarray, rtol: float = 1e-5, atol: float = 1e-7) -> None:
    ts = [Tensor(x, requires_grad=True) for x in xs]
    out = f_rg(*ts).sum()
    grads = out.gradient(*ts)
    got = [g.numpy() for g in grads]  # realized together with nothing else: lazily, per grad
    for i, x in enumerate(xs):
        want = numeric_grad(f_np, [x.astype(np.float64) for x in xs], i)
        np.testing.assert_allclose(got[i], want, rtol=rtol, atol=atol, err_msg=f"source {i}")


rng = np.random.default_rng(0)


def free(*shape):
    return rng.uniform(-2, 2, shape)


def positive(*shape):
    return rng.uniform(0.5, 2, shape)


def apart(*shape):  # distinct values, at least 0.1 apart: no ties at max/min
    n = int(np.prod(shape))
    return rng.permutation(np.arange(n) * 0.1 - n * 0.05).reshape(shape)


UNARY = {  # name: (rulegrad, numpy, input)
    "neg": (lambda a: -a, lambda a: -a, free),
    "exp": (lambda a: a.exp(), np.exp, free),
    "log": (lambda a: a.log(), np.log, positive),
    "sqrt": (lambda a: a.sqrt(), np.sqrt, positive),
    "sin": (lambda a: a.sin(), np.sin, free),
    "reciprocal": (lambda a: a.reciprocal(), lambda a: 1 / a, positive),
    "relu": (lambda a: a.relu(), lambda a: np.maximum(a, 0), lambda *s: apart(*s) + 0.05),
    "sigmoid": (lambda a: a.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), free),
    "tanh": (lambda a: a.tanh(), np.tanh, free),
    "abs": (lambda a: a.abs(), np.abs, lambda *s: apart(*s) + 0.05),
    "cast_f32": (lambda a: a.cast("float32").cast("float64"), lambda a: a, free),
    "pow_const": (lambda a: a ** 3, lambda a: a ** 3, free),
    "exp2": (lambda a: 2.0 ** a, lambda a: 2.0 ** a, free),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradient(name):
    f_rg, f_np, draw = UNARY[name]
    rtol = 1e-3 if name == "cast_f32" else 1e-5
    check(f_rg, f_np, draw(3, 4), rtol=rtol, atol=1e-4 if name == "cast_f32" else 1e-7)


BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b, free, free),
    "sub": (lambda a, b: a - b, lambda a, b: a - b, free, free),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, free, free),
    "div": (lambda a, b: a / b, lambda a, b: a / b, free, positive),
    "pow": (lambda a, b: a ** b, lambda a, b: a ** b, positive, free),
    "maximum": (lambda a, b: a.maximum(b), np.maximum, apart, lambda *s: apart(*s)[::-1] + .03),
    "minimum": (lambda a, b: a.minimum(b), np.minimum, apart, lambda *s: apart(*s)[::-1] + .03),
    "where": (lambda a, b: (a < b).where(a * 2, b * 3),
              lambda a, b: np.where(a < b, a * 2, b * 3), apart, lambda *s: apart(*s) + .05),
    "broadcast": (lambda a, b: a * b[0], lambda a, b: a * b[0], free, free),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradient(name):
    f_rg, f_np, da, db = BINARY[name]
    check(f_rg, f_np, da(3, 4), db(3, 4))


RAMP = np.arange(12.0).reshape(3, 4)  # weights, so that each output counts differently
REDUCE_AND_MOVE = {
    "sum": (lambda a: a.sum(axis=1) * Tensor([1.0, 2.0, 3.0], "float64"),
            lambda a: a.sum(axis=1) * np.array([1.0, 2.0, 3.0])),
    "max": (lambda a: a.max(axis=0) * 2, lambda a: a.max(axis=0) * 2),
    "min": (lambda a: a.min(axis=1, keepdim=True) * a, lambda a: a.min(axis=1, keepdims=True) * a),
    "mean_var": (lambda a: a.var(axis=1) + a.mean(), lambda a: a.var(axis=1, ddof=1) + a.mean()),
    "reshape": (lambda a: a.reshape(6, 2) * Tensor(np.arange(12.0).reshape(6, 2)),
                lambda a: a.reshape(6, 2) * np.arange(12.0).reshape(6, 2)),
    "permute": (lambda a: a.T * Tensor(np.arange(12.0).reshape(4, 3)),
                lambda a: a.T * np.arange(12.0).reshape(4, 3)),
    "expand": (lambda a: a[:, :1].expand(3, 5) * Tensor(np.arange(15.0).reshape(3, 5)),
               lambda a: np.broadcast_to(a[:, :1], (3, 5)) * np.arange(15.0).reshape(3, 5)),
    "pad": (lambda a: a.pad(((1, 0), (0, 2))).exp(), lambda a: np.exp(np.pad(a, ((1, 0), (0, 2))))),
    "shrink_flip": (lambda a: a[1:, ::-1][:, 1:] * a[:2, 1:],
                    lambda a: a[1:, ::-1][:, 1:] * a[:2, 1:]),
    "strided": (lambda a: a[::2, 1::2] ** 2, lambda a: a[::2, 1::2] ** 2),
    "cat": (lambda a: Tensor.cat(a, a * 2, dim=1).sin(),
            lambda a: np.sin(np.concatenate([a, a * 2], axis=1))),
    "matmul": (lambda a: a @ a.T, lambda a: a @ a.T),
    "softmax": (lambda a: a.softmax() * Tensor(RAMP),
                lambda a: np.exp(a) / np.exp(a).sum(-1, keepdims=True) * RAMP),
    "log_softmax": (lambda a: a.log_softmax()[:, 0],
                    lambda a: (a - np.log(np.exp(a).sum(-1, keepdims=True)))[:, 0]),
    "layernorm": (lambda a: a.layernorm() * Tensor(RAMP),
                  lambda a: (a - a.mean(-1, keepdims=True))
                  / np.sqrt(a.var(-1, keepdims=True) + 1e-5) * RAMP),
}


@pytest.mark.parametrize("name", sorted(REDUCE_AND_MOVE))
def test_reduce_and_movement_gradient(name):
    f_rg, f_np = REDUCE_AND_MOVE[name]
    check(f_rg, f_np, apart(3, 4), rtol=1e-5, atol=1e-6)


def test_conv2d_gradient():
    x, w = free(1, 2, 5, 5), free(3, 2, 3, 3)

    def conv_np(x, w):
        out = np.zeros((1, 3, 3, 3))
        for i in range(3):
            for j in range(3):
                out[0, :, i, j] = np.einsum("chw,ochw->o", x[0, :, i:i + 3, j:j + 3], w)
        return out * np.arange(27.0).reshape(1, 3, 3, 3)

    check(lambda x, w: x.conv2d(w) * Tensor(np.arange(27.0).reshape(1, 3, 3, 3)), conv_np, x, w)


# ---------------------------------------------------------------------- the API
def test_backward_accumulates_and_skips_tensors_without_requires_grad():
    a = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    b = Tensor(np.array([4.0, 5.0, 6.0]))  # requires_grad None: no .grad
    (a * b).sum().backward()
    (a * a).sum().backward()  # a second backward adds to .grad
    np.testing.assert_allclose(a.grad.numpy(), [4 + 2, 5 + 4, 6 + 6])
    assert b.grad is None


def test_detach_stops_the_gradient():
    a = Tensor(np.array([1.0, -2.0]), requires_grad=True)
    (a * a.detach()).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0, -2.0])  # d/da (a * c) = c


def test_parameters_out_of_reach():
    a = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    b = Tensor(np.array([3.0]), requires_grad=True)  # only behind DETACH: a zero gradient
    c = Tensor(np.array([5.0]), requires_grad=True)  # not in the graph: untouched (tinygrad's)
    loss = (a * 3 + b.detach()).sum()
    loss.backward()
    np.testing.assert_allclose(b.grad.numpy(), [0.0])
    assert c.grad is None
    # gradient() of a target no gradient reaches: zeros (tinygrad's and torch's)
    gb, gc = loss.gradient(b, c)
    np.testing.assert_array_equal(gb.numpy(), [0.0])
    np.testing.assert_array_equal(gc.numpy(), [0.0])


def test_gradient_of_an_op_that_gives_its_input_back():
    """`x.sum()` of a 0-d x and `x.reshape(x.shape)` are x itself, a buffer: its gradient is
    the seed, not the 'kept no graph' error meant for a realized loss."""
    x = Tensor(np.array(3.0, dtype=np.float32))
    (g,) = x.sum().sum().gradient(x)
    np.testing.assert_array_equal(g.numpy(), 1.0)
    y = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    (g,) = y.reshape(2, 3).sum().gradient(y)
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 3)))
    loss = (y * 2).sum()  # (y requires no gradient: the realize keeps no graph, as torch's)
    loss.realize()
    with pytest.raises(GradientError, match="kept no graph"):
        loss.gradient(y)


def test_bad_roots_have_clear_errors():
    a = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(GradientError, match="shape"):
        (a * 2).backward()  # not a scalar, no gradient given
    with pytest.raises(GradientError, match="float"):
        (a > 1).sum().backward()
    with pytest.raises(GradientError, match="no tensor with requires_grad"):
        (Tensor(np.array([1.0])) * 2).sum().backward()


def test_vector_root_with_given_gradient():
    x = rng.uniform(-1, 1, (4,))
    a = Tensor(x, requires_grad=True)
    seed = Tensor(np.array([1.0, 0.0, 2.0, -1.0]))
    (g,) = (a * a).gradient(a, gradient=seed)
    np.testing.assert_allclose(g.numpy(), 2 * x * np.array([1.0, 0.0, 2.0, -1.0]))


def test_deep_chain_needs_no_recursion():
    # 3,000 ops deep: a recursive walk would pass Python's default limit of 1,000
    a = Tensor(np.array([0.5]), requires_grad=True)
    y = a
    for _ in range(3000):
        y = y * 1.0001
    (g,) = y.sum().gradient(a)
    np.testing.assert_allclose(Tensor.numpy(g), [1.0001 ** 3000], rtol=1e-9)


def test_gradient_of_a_realized_loss():
    """A realized loss over a tensor that requires a gradient keeps its graph for backward,
    as torch's (d sum(2a) / da = 2); the cases of tests/test_adversarial_43.py go further."""
    a = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    loss = (a * 2).sum()
    loss.realize()
    loss.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])
