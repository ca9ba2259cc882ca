"""libm58 (issue 31): a user program that compares a libm value with a reduction of itself, or
with another view of itself, gives numpy's answer bit for bit, on both schedulers.

`x.cos() == x.cos().max(0)` reads the cosine twice: the scheduler recomputed a cheap
elementwise value in each kernel (and loop) that read it, one a vector loop calling libmvec's
variant, one a scalar loop calling libm's, ulps apart, and the max equalled no element. numpy
computes it once. rangeify.rules' `libm_stored` (rules/read_twice.py) stores such a value once.

The inputs are drawn from a grid of points of a region where the function is monotonic, with
repeats (ties), spaced so that their images are far more than an ulp apart: numpy's functions
and ours then agree on the order of any two elements, whatever ulps each rounds by, so any
mismatch is ours. numpy is the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.rules.read_twice import read_twice
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.kernelize import using
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp

# name: (ours, numpy's, a region where it is monotonic)
FUNCS = {
    "exp": (Tensor.exp, np.exp, (-3.0, 3.0)),
    "log": (Tensor.log, np.log, (0.5, 4.0)),
    "sin": (Tensor.sin, np.sin, (-1.4, 1.4)),
    "cos": (Tensor.cos, np.cos, (0.3, 3.0)),
    "exp2": (Tensor.exp2, np.exp2, (-3.0, 3.0)),
    "log2": (Tensor.log2, np.log2, (0.5, 4.0)),
    "pow": (lambda t: t ** 1.7, lambda x: x ** x.dtype.type(1.7), (0.5, 4.0)),
    "tanh": (Tensor.tanh, np.tanh, (-2.0, 2.0)),
}
DTYPES = [np.float32, np.float64, np.float16]
# one element, tiny, odd, tall and thin, one long row, primes
SHAPES = [(1,), (7,), (13, 31), (1001, 9), (4096,), (61, 67)]
SCHEDULERS = ["rangeify", "kernelize"]


def _grid(name: str, dtype, shape, seed: int) -> np.ndarray:
    """Values drawn with repeats from points of the function's monotonic region, rounded to
    dtype: 24 in float16 (images a few percent apart, many of its ulps), 400 in float32 and
    float64 (a few tenths of a percent, thousands of ulps), so that a column's max is most
    often a point of its own."""
    lo, hi = FUNCS[name][2]
    points = np.unique(np.linspace(lo, hi, 24 if dtype == np.float16 else 400).astype(dtype))
    return np.random.default_rng(seed).choice(points, size=shape)


# program: (ours, numpy's) of the function's value v and the input x: v compared with its own
# max or min, kept or not, over an axis or all of it, directly or after arithmetic
PROGRAMS = {
    "v == v.max(0)": (lambda v, x: v == v.max(0), lambda v, x: v == v.max(0)),
    "v >= v.max(-1, keepdim)": (lambda v, x: v >= v.max(-1, keepdim=True),
                                lambda v, x: v >= v.max(-1, keepdims=True)),
    "v <= v.min()": (lambda v, x: v <= v.min(), lambda v, x: v <= v.min()),
    "v != v.min(0, keepdim)": (lambda v, x: v != v.min(0, keepdim=True),
                               lambda v, x: v != v.min(0, keepdims=True)),
    "where(v == v.max(-1), x, 0)": (
        lambda v, x: (v == v.max(-1, keepdim=True)).where(x, 0.0),
        lambda v, x: np.where(v == v.max(-1, keepdims=True), x, x.dtype.type(0))),
    "v - v.max() == 0": (lambda v, x: (v - v.max()) == 0, lambda v, x: (v - v.max()) == 0),
    "v > v.min(0) * 1": (lambda v, x: v > v.min(0) * 1.0, lambda v, x: v > v.min(0)),
}


def _cases():
    """Each function in each dtype, on two of the shapes (cycled), each on one scheduler (both
    over a function's cases)."""
    for i, name in enumerate(FUNCS):
        for j, dt in enumerate(DTYPES):
            for k in (0, 3):
                shape = SHAPES[(i + j + k) % len(SHAPES)]
                yield name, dt, shape, SCHEDULERS[(i + j + k // 3) % 2]


CASES = list(_cases())
IDS = [f"{n}-{np.dtype(d).name}-{'x'.join(map(str, s))}-{sc}" for n, d, s, sc in CASES]


@pytest.mark.parametrize("name, dt, shape, scheduler", CASES, ids=IDS)
def test_a_function_compared_with_its_own_max_or_min_is_numpys(name, dt, shape, scheduler):
    """Each program of PROGRAMS, realized together (one schedule), equals numpy's bit for bit."""
    ours, theirs = FUNCS[name][:2]
    a = _grid(name, dt, shape, 58)
    with using(scheduler):
        x = Tensor(a)
        outs = {p: f(ours(x), x) for p, (f, _) in PROGRAMS.items()}
        Tensor.realize(*outs.values())
    for p, (_, g) in PROGRAMS.items():
        np.testing.assert_array_equal(outs[p].numpy(), g(theirs(a), a), err_msg=p)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_a_function_compared_with_another_view_of_itself_is_numpys(dt, scheduler):
    """The outer compare of f(x) with itself (its diagonal, and the repeats, equal), and each
    element's rank among the others, counted by a sum over the compares: numpy's."""
    for name in ("cos", "sin", "log2", "pow"):
        ours, theirs = FUNCS[name][:2]
        for n in (7, 31, 200):
            a = _grid(name, dt, (n,), 59)
            with using(scheduler):
                v = ours(Tensor(a))
                eq, rank = v[:, None] == v[None, :], (v[:, None] < v[None, :]).sum(1)
                Tensor.realize(eq, rank)
            w = theirs(a)
            np.testing.assert_array_equal(eq.numpy(), w[:, None] == w[None, :], err_msg=name)
            np.testing.assert_array_equal(rank.numpy(), (w[:, None] < w[None, :]).sum(1),
                                          err_msg=name)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_a_row_of_equal_values_equals_its_mean_and_half_its_sum(dt, scheduler):
    """Rows of two equal values v: their sum is exactly 2v and their mean v in any order, so
    numpy's `v * 2 == v.sum` and `v >= v.mean` hold everywhere; ours, if the sum's loop and the
    compare's computed v each its own way, did not."""
    for name in ("exp", "sin", "cos", "log", "pow"):
        ours, theirs = FUNCS[name][:2]
        for rows in (13, 1001):
            a = np.repeat(_grid(name, dt, (rows, 1), 60), 2, axis=1)
            with using(scheduler):
                v = ours(Tensor(a))
                twice, above = v * 2 == v.sum(1, keepdim=True), v >= v.mean(1, keepdim=True)
                Tensor.realize(twice, above)
            w = theirs(a)
            np.testing.assert_array_equal(twice.numpy(), w * 2 == w.sum(1, keepdims=True),
                                          err_msg=name)
            np.testing.assert_array_equal(above.numpy(), w >= w.mean(1, keepdims=True),
                                          err_msg=name)


@pytest.mark.parametrize("name", ["exp", "sin", "cos", "log2", "pow"])
def test_over_a_symbolic_axis_a_function_compared_with_its_max_is_numpys(name):
    """A symbolic axis (its loop bound known at run time: a vector body and a remainder of any
    length) under the max and the compare, down it and along it."""
    ours, theirs = FUNCS[name][:2]
    for dt in (np.float32, np.float64):
        full = _grid(name, dt, (40, 9), 62)
        for n in (1, 7, 13, 33, 40):
            v = ours(Tensor(full).shrink(((0, Variable("n", 1, 40).bind(n)), None)))
            down, along = v == v.max(0), v.T >= v.T.max(1, keepdim=True)
            Tensor.realize(down, along)
            w = theirs(full[:n])
            np.testing.assert_array_equal(down.numpy(), w == w.max(0), err_msg=f"n={n}")
            np.testing.assert_array_equal(along.numpy(), w.T >= w.T.max(1, keepdims=True),
                                          err_msg=f"n={n}")


# ---------------------------------------------------------------------- what is stored
def _sink(*ts: Tensor) -> UOp:
    return UOp(Ops.SINK, dtypes.void, tuple(t.uop for t in ts))


def test_only_a_compare_of_two_views_stores_the_value():
    """read_twice names the libm value of the programs above, and nothing in programs whose
    compares read one view (or none): softmax, logsumexp, gelu, layernorm, attention, a power's
    or an entropy's row sum keep their fused kernels (no buffer more, so no time more)."""
    x = Tensor(np.linspace(0.5, 3.0, 12 * 7, dtype=np.float32).reshape(12, 7))
    w = Tensor(np.linspace(-1.0, 1.0, 7 * 5, dtype=np.float32).reshape(7, 5))
    c = x.cos()
    assert read_twice(_sink(c == c.max(0))) == [c.uop]
    assert read_twice(_sink(c.flatten()[:, None] < c.flatten()[None, :])) == [c.uop]
    d = c * 2  # the topmost value both views read
    assert read_twice(_sink(d == d.max(1, keepdim=True))) == [d.uop]
    # c is read twice too (by d and by its sum), but the compare meets it only through d
    assert read_twice(_sink(d == d.max(1, keepdim=True), c.sum())) == [d.uop]
    plain = [x.softmax(-1), x.log_softmax(0), x.logsumexp(1), (x @ w).gelu(), x.layernorm(),
             (x @ x.T).softmax(-1) @ x, (x ** 1.7).sum(1), (x * x.log()).sum(1), x.exp() > 1,
             c * c.sum(), (x.exp() == x.max(0)), x.sigmoid() < 0.5]
    for t in plain:
        assert read_twice(_sink(t)) == [], t
    # a value read twice at one view (the sigmoid's e, in 1 / (1 + e) and e * r), though summed
    # elsewhere: the compare's loop computes it once
    assert read_twice(_sink(x.sigmoid() < 0.5, x.sigmoid().sum())) == []
    stored = c.contiguous()
    assert read_twice(_sink(stored == stored.max(0))) == []  # stored already: read once
    # sort and topk store their input and compare it with itself: each compare reads the one
    # buffer (a softmax's values, a cosine's), nothing more is stored; read beside its buffer
    # (the max recomputes it), the value is (its readers then read the buffer sort writes)
    for t in (x.softmax(-1).topk(3, -1)[0], c.sort(0)[0], c.argsort(1)):
        assert read_twice(_sink(t)) == [], t
    assert read_twice(_sink(c.sort(0)[0][-1] == c.max(0))) == [c.uop]


# ---------------------------------------------------------------------- rev58a: the blind spots
@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_a_value_stored_on_one_path_and_recomputed_on_the_other_is_numpys(dt, scheduler):
    """A compare that reads a libm value once through a buffer (the user's `contiguous`, or
    sort's and topk's own store of their input) and once recomputed (its max, or itself): the
    buffer's kernel and the compare's each computed the value, ulps apart, and the largest
    sorted value was not the max. numpy's answers: all True, and `w == w.max(0)`."""
    for name in ("cos", "exp", "log2"):
        ours, theirs = FUNCS[name][:2]
        for shape in ((13, 31), (5, 3), (1, 9)):
            a = _grid(name, dt, shape, 63)
            with using(scheduler):
                v = ours(Tensor(a))
                top = v.sort(0)[0][-1] == v.max(0)
                first = v.topk(1, 0)[0][0] == v.max(0)
                kept = v.contiguous() == v.max(0)
                same = v.contiguous() == v
                Tensor.realize(top, first, kept, same)
            w = theirs(a)
            for got in (top, first, same):
                assert got.numpy().all(), (name, shape)
            np.testing.assert_array_equal(kept.numpy(), w == w.max(0), err_msg=name)
