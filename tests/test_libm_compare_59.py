"""misc59 (issue 31): a compare that meets a libm value as two computations gives numpy's answer
bit for bit, on both schedulers, whatever the path: once through a shared value above it and once
beside it (`e = x.exp(); s = e * 2; s.max(0) * 0.5 == e`), through a buffer on one side, or
through several shared values in a row.

read_twice (rules/read_twice.py) kept, per node, only the topmost shared libm value under it:
`s` hid `e`, the max's loop computed e (libmvec's vector exp, say) and the compare's loop
computed it again (libm's scalar exp), ulps apart, and the largest e matched no element. It now
keeps every shared value under a node (bitsets), and how it is read: in the node's loop, through
a view, or from a buffer (per buffer).

Inputs come from a grid of points where the function is monotonic, spaced far more than an ulp
apart, with repeats (tests/test_libm_compare_58.py's): numpy's functions and ours agree on the
order of any two elements, so any mismatch is ours. Every multiplier is a power of two (exact).
numpy is the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.rules.read_twice import read_twice
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.kernelize import using
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp

FUNCS = {
    "exp": (Tensor.exp, np.exp, (-3.0, 3.0)),
    "log": (Tensor.log, np.log, (0.5, 4.0)),
    "cos": (Tensor.cos, np.cos, (0.3, 3.0)),
    "log2": (Tensor.log2, np.log2, (0.5, 4.0)),
    "pow": (lambda t: t ** 1.7, lambda x: x ** x.dtype.type(1.7), (0.5, 4.0)),
}
SCHEDULERS = ["rangeify", "kernelize"]
# one element, one row (batch 1), tiny, primes, tall and thin, short and wide
SHAPES = [(1, 1), (1, 9), (5, 3), (61, 67), (1001, 9), (7, 2003)]


def _grid(name: str, dtype, shape, seed: int) -> np.ndarray:
    lo, hi = FUNCS[name][2]
    points = np.unique(np.linspace(lo, hi, 400).astype(dtype))
    return np.random.default_rng(seed).choice(points, size=shape)


# program: (ours, numpy's) of the function's value e: e compared with a max (or min) of a value
# above it, exactly undone (powers of two, a negation), and that value read again beside it;
# x: the input
PROGRAMS = {
    "(s.max(0) * 0.5 == e) & (s > -10)": (
        lambda e, x: ((s := e * 2).max(0) * 0.5 == e) & (s > -10),
        lambda e, x: ((s := e * 2).max(0) * 0.5 == e) & (s > -10)),
    "s.max(0) * 0.5 == e, s.sum()": (  # s shared by a reader outside the compare
        lambda e, x: ((s := e * 2).max(0) * 0.5 == e, s.sum()),
        lambda e, x: ((e * 2).max(0) * 0.5 == e, None)),
    "two shared in a row": (  # t over s over e, each read by a sum beside
        lambda e, x: ((t := -((s := e * 4) * 0.5)).min(1, keepdim=True) * -0.5 == e,
                      s.sum(), t.sum()),
        lambda e, x: ((-(e * 4 * 0.5)).min(1, keepdims=True) * -0.5 == e, None, None)),
    "through a buffer": (  # the max reads a stored s, the compare recomputes e
        lambda e, x: ((s := e * 2).contiguous().max(0) * 0.5 >= e, s.sum()),
        lambda e, x: ((e * 2).max(0) * 0.5 >= e, None)),
    "along a row, where": (
        lambda e, x: (((s := e * 0.25).max(-1, keepdim=True) * 4 == e)
                      & (s < 1e6)).where(x, 0.0),
        lambda e, x: np.where(((s := e * 0.25).max(-1, keepdims=True) * 4 == e) & (s < 1e6),
                              x, x.dtype.type(0))),
}


def _cases():
    for i, name in enumerate(FUNCS):
        for j, dt in enumerate((np.float32, np.float64)):
            for k, sched in enumerate(SCHEDULERS):
                yield name, dt, sched, SHAPES[(i + j + 2 * k) % len(SHAPES)]


CASES = list(_cases())
IDS = [f"{n}-{np.dtype(d).name}-{sc}-{'x'.join(map(str, s))}" for n, d, sc, s in CASES]


@pytest.mark.parametrize("name, dt, scheduler, shape", CASES, ids=IDS)
def test_a_value_read_through_a_shared_value_and_beside_it_is_numpys(name, dt, scheduler,
                                                                      shape):
    ours, theirs = FUNCS[name][:2]
    for a in (_grid(name, dt, shape, 59), _grid(name, dt, (61, 67), 60)):
        with using(scheduler):
            x = Tensor(a)
            e = ours(x)
            outs = {p: f(e, x) for p, (f, _) in PROGRAMS.items()}
            Tensor.realize(*[t for o in outs.values() for t in (o if isinstance(o, tuple)
                                                                  else (o,))])
        w = theirs(a)
        for p, (_, g) in PROGRAMS.items():
            got, want = outs[p], g(w, a)
            got, want = (got[0], want[0]) if isinstance(got, tuple) else (got, want)
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{p} {a.shape}")


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_the_blind_spot_over_many_columns_is_numpys(dt, scheduler):
    """The brief's program over 4001 columns (a column's max that libm and libmvec round apart
    is then all but certain): every column's max is an element, as numpy's."""
    for name in ("exp", "cos"):
        ours, theirs = FUNCS[name][:2]
        a = _grid(name, dt, (9, 4001), 61)
        with using(scheduler):
            e = ours(Tensor(a))
            s = e * 2
            hit = ((s.max(0) * 0.5 == e) & (s > -10)).sum(0)
            got = hit.numpy()
        w = theirs(a)
        np.testing.assert_array_equal(got, ((w * 2).max(0) * 0.5 == w).sum(0), err_msg=name)
        assert (got >= 1).all(), name


# ---------------------------------------------------------------------- what is stored
def _sink(*ts: Tensor) -> UOp:
    return UOp(Ops.SINK, dtypes.void, tuple(t.uop for t in ts))


def test_the_value_under_a_shared_one_is_stored():
    """read_twice names e, which s hid (a read through s and one beside it), also in a row of
    shared values; and with s stored, e read from s's buffer and recomputed beside it."""
    x = Tensor(np.linspace(0.5, 3.0, 12 * 7, dtype=np.float32).reshape(12, 7))
    e = x.exp()
    s = e * 2
    assert read_twice(_sink(s.max(0) * 0.5 == e, s.sum())) == [e.uop]
    # (the AND reads s twice, but compares no ulps of it: e alone is stored)
    assert read_twice(_sink((s.max(0) * 0.5 == e) & (s > -10))) == [e.uop]
    stored = s.uop.substitute({s.uop: s.uop.f(Ops.CONTIGUOUS)})
    again = Tensor(stored)
    assert read_twice(_sink((again.max(0) * 0.5 == e) & (again > -10))) == [e.uop]
    t = -(s * 0.5)
    assert read_twice(_sink(t.min(1, keepdim=True) * -0.5 == e, s.sum(), t.sum())) == [e.uop]
    # one buffer read twice is one computation: nothing to store
    c = s.contiguous()
    assert read_twice(_sink(c.max(0) * 0.5 == c, e.sum())) == []


def test_a_chain_of_layers_stores_each_layers_value_in_one_run():
    """Each layer compares its own exp with its max (`y - y.max()`, read by the next layer, and
    `> 0` at the end): every layer's exp is met twice at its own op, so all are named at once
    (one run of the rule, not one per layer over a graph as long as the chain)."""
    x = Tensor(np.linspace(0.1, 1.0, 24, dtype=np.float32).reshape(4, 6))
    exps = []
    for _ in range(40):
        y = (x * 0.5).exp()
        exps.append(y.uop)
        x = y - y.max(-1, keepdim=True)
    assert read_twice(_sink(x > 0)) == exps


def _programs():
    rng = np.random.default_rng(0)

    def t(*shape: int) -> Tensor:
        return Tensor(rng.standard_normal(shape).astype(np.float32)).requires_grad_()

    x, w, w2, q = t(12, 7), t(7, 5), t(5, 3), t(2, 6, 8)
    img, k = t(2, 3, 9, 9), t(4, 3, 3, 3)
    yield "softmax", (x,), x.softmax(-1)
    yield "log_softmax", (x,), x.log_softmax(0)
    yield "logsumexp", (x,), x.logsumexp(1)
    yield "layernorm", (x,), x.layernorm()
    yield "attention", (q,), (q @ q.transpose(-1, -2) / 8 ** 0.5).softmax(-1) @ q
    yield "gelu", (x, w), (x @ w).gelu()
    yield "gelu erf", (x, w), (x @ w).gelu(approximate="none")
    yield "mlp", (x, w, w2), ((x @ w).relu() @ w2).log_softmax(-1)
    yield "tanh mlp", (x, w, w2), ((x @ w).tanh() @ w2).softmax(-1)
    yield "conv", (img, k), img.conv2d(k).relu()


# (built in the test, not at collection: leaves with requires_grad kept alive for the whole
# session are walked by every later backward in the worker, `Tensor.backward`'s live list)
@pytest.mark.parametrize("name", [n for n, _, _ in _programs()])
def test_common_programs_and_their_gradients_store_nothing(name):
    """No value of these programs, nor of their gradients, is read as two computations by a
    compare (their compares, relu's and a max's gradient's, read no libm value twice), so
    libm_stored leaves their schedules (kernel counts) as they were."""
    inputs, y = next((i, y) for n, i, y in _programs() if n == name)
    grads = y.sum().gradient(*inputs)
    assert read_twice(_sink(y, *grads)) == [], name
