"""adv57 (issue 31): a libm value that one of our own ops compares with itself gives numpy's
answer. numpy (and torch for the pool) is the oracle.

A kernel that computes exp, log, sin, cos, exp2, log2 or pow in a vector loop calls one of
libmvec's variants, in its remainder or a scalar loop libm's own: ulps apart. An op that reads
one value twice (argmax's max and compare, sort's ranks, a max's gradient, max_pool's) and
compared the two copies missed: argmax gave INT32_MAX, sort's order was not numpy's, a max's
gradient was NaN or 0. Such an op stores the value once (`_computed_once`). A program that
writes the comparison itself, `x.cos() == x.cos().max(0)`, gets the value stored by the
scheduler (rangeify.rules' libm_stored: tests/test_libm_compare_58.py).

The inputs are drawn from a grid of values whose images are well apart (a percent, many ulps
of float16) with many repeats: numpy's functions and ours agree on which elements are the
largest and which are equal, whatever ulps each rounds by, so any mismatch is ours.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor, Variable

# name: (ours, numpy's, its derivative, a region where it is monotonic)
FUNCS = {
    "exp": (Tensor.exp, np.exp, np.exp, (-3.0, 3.0)),
    "log": (Tensor.log, np.log, lambda x: 1 / x, (0.5, 4.0)),
    "sin": (Tensor.sin, np.sin, np.cos, (-1.4, 1.4)),
    "cos": (Tensor.cos, np.cos, lambda x: -np.sin(x), (0.3, 3.0)),
    "exp2": (Tensor.exp2, np.exp2, lambda x: np.log(2) * np.exp2(x), (-3.0, 3.0)),
    "log2": (Tensor.log2, np.log2, lambda x: 1 / (x * np.log(2)), (0.5, 4.0)),
    "pow": (lambda t: t ** 1.7, lambda x: x ** x.dtype.type(1.7),
            lambda x: 1.7 * x ** 0.7, (0.5, 4.0)),
}
DTYPES = [np.float32, np.float64, np.float16]
# tiny, one row, odd, tall and thin, one long row, primes
SHAPES = [(1, 1), (7, 7), (13, 31), (1001, 9), (1, 4096), (61, 67)]


def _grid(name: str, dtype, shape, seed: int) -> np.ndarray:
    """Values drawn with repeats from 24 points of the function's monotonic region, rounded to
    dtype (their images are a percent or more apart)."""
    lo, hi = FUNCS[name][3]
    points = np.unique(np.linspace(lo, hi, 24).astype(dtype))
    return np.random.default_rng(seed).choice(points, size=shape)


def _cases():
    """Each function in each dtype, on two of the shapes (cycled)."""
    for i, name in enumerate(FUNCS):
        for j, dt in enumerate(DTYPES):
            for k in (0, 3):
                yield name, dt, SHAPES[(i + j + k) % len(SHAPES)]


CASES = list(_cases())
IDS = [f"{n}-{np.dtype(d).name}-{'x'.join(map(str, s))}" for n, d, s in CASES]


@pytest.mark.parametrize("name, dt, shape", CASES, ids=IDS)
def test_argmax_of_a_function_is_numpys(name, dt, shape):
    """The first position of the max (no INT32_MAX: some element equals it)."""
    ours, theirs = FUNCS[name][:2]
    a = _grid(name, dt, shape, 58)
    x, y = Tensor(a), theirs(a)
    for axis in (0, 1, None):
        np.testing.assert_array_equal(ours(x).argmax(axis).numpy(), y.argmax(axis))
        np.testing.assert_array_equal(ours(x).argmin(axis).numpy(), y.argmin(axis))


def _split(y: np.ndarray, axis: int, pick) -> np.ndarray:
    """The max's (or min's) gradient share of each element: 1 / ties at the picks, else 0."""
    hit = (y == pick(y, axis=axis, keepdims=True)).astype(np.float64)
    return hit / hit.sum(axis, keepdims=True)


@pytest.mark.parametrize("name, dt, shape", CASES, ids=IDS)
def test_the_gradient_of_a_max_or_min_of_a_function_is_numpys(name, dt, shape):
    """d/dx sum(f(x).max(1)) and of min(0): f'(x) shared among the ties, never NaN or 0 where
    the compare missed every copy of the max."""
    ours, theirs, deriv = FUNCS[name][:3]
    a = _grid(name, dt, shape, 59)
    y, d = theirs(a), deriv(a.astype(np.float64))
    for axis, red, pick in ((1, "max", np.max), (0, "min", np.min)):
        x = Tensor(a).requires_grad_()
        (g,) = getattr(ours(x), red)(axis).sum().gradient(x)
        want = _split(y, axis, pick) * d
        tol = 1e-2 if dt is np.float16 else 1e-4
        np.testing.assert_allclose(g.numpy().astype(np.float64), want, rtol=tol, atol=tol,
                                   err_msg=red)


@pytest.mark.parametrize("name, dt, shape", CASES[::3], ids=IDS[::3])
def test_sorting_a_function_orders_as_numpy(name, dt, shape):
    """sort's indices (stable: repeats in their order) and topk's values are numpy's: each
    element's rank compares it with every other, each computed in the sort's kernels."""
    ours, theirs = FUNCS[name][:2]
    a = _grid(name, dt, shape[::-1] if shape[1] > 300 else shape, 60)  # (its work is n^2)
    y = theirs(a)
    _, idx = ours(Tensor(a)).sort(1)
    np.testing.assert_array_equal(idx.numpy(), np.argsort(y, 1, kind="stable"))
    k = min(3, a.shape[1])
    vals, _ = ours(Tensor(a)).topk(k, 1)
    np.testing.assert_allclose(vals.numpy().astype(np.float64),
                               -np.sort(-y.astype(np.float64), 1)[:, :k], rtol=2e-3)


@pytest.mark.parametrize("name", list(FUNCS))
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_a_max_pool_of_a_function_and_its_gradient_are_torchs(name, dt):
    """max_pool2d of f(x), 3x3 windows over 13x31 and 7x7: the values, and the gradient at
    the window's first max (torch's), whatever kernel recomputes f."""
    torch = pytest.importorskip("torch")
    ours, theirs, deriv = FUNCS[name][:3]
    for shape in ((2, 1, 13, 31), (1, 3, 7, 7)):
        a = _grid(name, dt, shape, 61)
        x = Tensor(a).requires_grad_()
        out = ours(x).max_pool2d((3, 3))
        (g,) = out.sum().gradient(x)
        t = torch.tensor(theirs(a).astype(np.float64), requires_grad=True)
        want = torch.nn.functional.max_pool2d(t, (3, 3))
        want.sum().backward()
        np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-5)
        np.testing.assert_allclose(g.numpy(), t.grad.numpy() * deriv(a), rtol=1e-5)


@pytest.mark.parametrize("name", ["exp", "sin", "cos", "log2"])
def test_over_a_symbolic_axis_argmax_of_a_function_is_numpys(name):
    """A symbolic axis (its loop bound known at run time: a vector body and a remainder of any
    length) under argmax's max and compare: numpy's on the bound rows."""
    ours, theirs = FUNCS[name][:2]
    full = _grid(name, np.float32, (40, 9), 62)
    for v in (1, 7, 13, 33, 40):
        t = Tensor(full).shrink(((0, Variable("n", 1, 40).bind(v)), None))
        y = theirs(full[:v])
        np.testing.assert_array_equal(ours(t.T).argmax(1).numpy(), y.T.argmax(1),
                                      err_msg=f"n={v}")
