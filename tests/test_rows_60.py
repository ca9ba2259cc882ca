"""Short and middling rows (issue 32's sweep): a row max, sum, mean subtracted, softmax and
logsumexp over rows of 1..65 values and 1..8192 rows, against numpy in float64, with a NaN, +inf
and -inf in rows, rows of -inf whole and rows of -0.0; and which form the optimizer's count of a
core's work per row (rules/across_helpers.py's `_cost` and `_across_cost`) picks where the two
forms' times differ most (bench/across_ab.py): a row minus its mean keeps its row form (its
values gathered into lanes and scattered out again cost more than the scalar loads and adds),
a softmax and a logsumexp go across (their exps as vectors), and so does a row max of 9 to 16
(the row form's reduction per row combines four vectors of partials). Which form was chosen is
read from the optimized kernels, never timed."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

import rulegrad.rules.across_helpers as across_helpers
from rulegrad import Tensor
from rulegrad.runtime import target
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort


@pytest.fixture(autouse=True)
def _measured_cpu(monkeypatch):
    """The CPU the forms asserted here were timed on (this project's AMD EPYC, bench/across_ab.py
    --cpu): the count's shuffle pipes and issue width are the CPU's (across_helpers' `_amd`,
    Intel's and an unknown CPU's fewer), so on another machine its choices may differ; each
    test here is of the count as measured, and of numpy's values in the form it takes."""
    monkeypatch.setattr(across_helpers, "cpu",
                        lambda: target.Cpu("AMD EPYC", target.cpu().flags))


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _logsumexp(a: np.ndarray) -> np.ndarray:
    m = a.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # torch's: a row whose max is +-inf is not shifted
    return (np.log(np.exp(a - m).sum(-1, keepdims=True)) + m)[..., 0]


PROGRAMS = {
    "max": (lambda t: t.max(1), lambda a: a.max(1)),
    "sum": (lambda t: t.sum(1), lambda a: a.sum(1)),
    "meansub": (lambda t: t - t.mean(1, keepdim=True), lambda a: a - a.mean(1, keepdims=True)),
    "softmax": (lambda t: t.softmax(-1), _softmax),
    "logsumexp": (lambda t: t.logsumexp(-1), _logsumexp),
}
# rows of 1, 2, 3, 5, 7, 8 (a vector), 16 (the unroll bound), 17, 31, 33, 64, 65 (a vector
# reduce's tail); one row, 7 (fewer than a vector), 1000, 8192 and a prime count of rows
SHAPES = [(1, 1), (7, 2), (1000, 3), (8192, 5), (1000, 7), (7, 8), (1000, 8), (4099, 16),
          (1000, 17), (1, 31), (1031, 31), (8192, 33), (7, 64), (1000, 64), (1000, 65),
          (1, 65), (4099, 13)]
TOL = {"float32": (2e-5, 2e-6), "float16": (2e-3, 2e-3)}


def _rows(shape: tuple[int, int], seed: int) -> np.ndarray:
    """Normal values; where there are rows enough: row 0 with a NaN, row 1 a +inf, row 2 all
    -inf, row 3 a -inf, row 4 all -0.0, row 5 half +-0.0."""
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    n, d = shape
    if n >= 7:
        x[0, d // 2] = np.nan
        x[1, d - 1] = np.inf
        x[2, :] = -np.inf
        x[3, 0] = -np.inf
        x[4, :] = -0.0
        x[5, : d // 2] = 0.0
        x[5, d // 2:] = -0.0
    return x


def _check(name: str, shape: tuple[int, int], dtype: str) -> None:
    program, oracle = PROGRAMS[name]
    x = _rows(shape, seed=sum(shape)).astype(dtype)
    got = program(Tensor(x)).numpy()
    with np.errstate(all="ignore"):
        want = oracle(x.astype(np.float64))
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    rtol, atol = TOL[dtype]
    if name in ("sum", "meansub"):  # (a sum's rounding grows with its row, near 0 whole)
        atol *= shape[1]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol,
                               err_msg=f"{name} {shape} {dtype}")
    if name == "max" and shape[0] >= 7:  # a row of -0.0's max is -0.0 (no +0.0 in it)
        assert np.signbit(got[4]), got[4]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_rows_equal_numpy(name, shape):
    _check(name, shape, "float32")


@pytest.mark.parametrize("shape", [(7, 2), (1000, 5), (1000, 16), (1000, 17), (8192, 33),
                                   (7, 65)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", ["sum", "softmax"])
def test_float16_rows_equal_numpy(name, shape):
    _check(name, shape, "float16")


def _across(t: Tensor) -> bool:
    """Whether a kernel of t's schedule runs its rows across lanes: a STORE over a "vector" row
    loop with no reduce left in its kernel."""
    for k, _ in optimized_kernels(t):
        nodes = toposort(k)
        if any(n.op is Ops.STORE and n.src[-1].arg[1] == "vector" for n in nodes) and \
                not any(n.op is Ops.REDUCE for n in nodes):
            return True
    return False


# (rows of 5 and 7 minus their mean: across lanes 1.4x to 1.9x slower than the row form, rows
# of 5 softmax 10x and logsumexp 4x faster; bench/across_ab.py). One tensor read twice, as
# PROGRAMS' meansub and bench/across_ab.py's: `Tensor(x) - Tensor(x).mean(...)` was two input
# buffers, a row's values never the same loads as its mean's (rev61b); its values against
# numpy's at the shape asked, not at 1000 rows
@pytest.mark.parametrize("shape", [(4096, 5), (65536, 5), (4096, 7), (1031, 6)],
                         ids=lambda s: "x".join(map(str, s)))
def test_rows_minus_their_mean_keep_the_row_form(shape):
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    t = PROGRAMS["meansub"][0](Tensor(x))
    assert not _across(t)
    want = PROGRAMS["meansub"][1](x.astype(np.float64))
    np.testing.assert_allclose(t.numpy().astype(np.float64), want, rtol=2e-5,
                               atol=2e-6 * shape[1])


@pytest.mark.parametrize("shape", [(4096, 5), (4096, 7), (4099, 13), (8192, 16)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", ["softmax", "logsumexp"])
def test_exps_of_short_rows_go_across(name, shape):
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    assert _across(PROGRAMS[name][0](Tensor(x)))


# a row max of 9 to 16: its row form a call of the row reduction per row (blocks.py: four
# vectors of partial maxes, combined, then their lanes) for one or two vectors of values;
# across lanes 1.3x to 1.7x faster (bench/across_ab.py --cpu), where rows of 5 and 7 keep
# gcc's vectors across rows (upcast_store: no action of this one)
@pytest.mark.parametrize("shape", [(1000, 9), (4096, 12), (4099, 13), (8192, 16)],
                         ids=lambda s: "x".join(map(str, s)))
def test_row_max_of_nine_to_sixteen_goes_across(shape):
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    assert _across(Tensor(x).max(1))
    _check("max", (1000, shape[1]), "float32")


# rows of 9 to 16 minus their max (logf61): the row form's max is the same library call, but
# across lanes every output is scattered to its row (an extract to memory a value, one a cycle)
# on top of the gathered reads: across lanes 0.87x (rows of 9) to 0.53x (16) the row form's
# speed (bench/across_ab.py --cpu), where the count had taken rows of 9 across. Its minus-max
# rows of 5 and 7 still go across (2.0x, 2.7x); numpy's values either way
@pytest.mark.parametrize("shape", [(4096, 9), (8192, 9), (1031, 12), (4099, 13), (4096, 16)],
                         ids=lambda s: "x".join(map(str, s)))
def test_rows_of_nine_to_sixteen_minus_their_max_keep_the_row_form(shape):
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    a = Tensor(x)
    t = a - a.max(1, keepdim=True)
    assert not _across(t)
    np.testing.assert_array_equal(t.numpy(), x - x.max(1, keepdims=True))


@pytest.mark.parametrize("shape", [(4096, 5), (4096, 7)], ids=lambda s: "x".join(map(str, s)))
def test_rows_of_five_and_seven_minus_their_max_go_across(shape):
    x = np.random.default_rng(10).standard_normal(shape).astype(np.float32)
    a = Tensor(x)
    t = a - a.max(1, keepdim=True)
    assert _across(t)
    np.testing.assert_array_equal(t.numpy(), x - x.max(1, keepdims=True))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("width", [9, 13, 16])
def test_one_special_in_every_position_across_lanes(op, width):
    """tests/test_opt_reduce_shapes.py's rows with one NaN, or one +0.0 among -0.0 (one -0.0
    among +0.0), in every position, now across lanes: numpy's bits, the zero's sign kept."""
    x = np.full((3 * width, width), -1.0 if op == "max" else 1.0, np.float32)
    at = np.arange(width)
    x[at, at] = np.nan
    x[width:2 * width] = -0.0
    x[width + at, at] = 0.0
    x[2 * width:] = 0.0
    x[2 * width + at, at] = -0.0
    t = getattr(Tensor(x), op)(axis=1)
    assert _across(t)
    got, want = t.numpy(), getattr(np, op)(x, axis=1)  # (numpy's: a NaN in a row wins)
    # a max of zeros is +0.0 where any is, a min -0.0 (numpy's keeps whichever came first)
    want[width:] = 0.0 if op == "max" else -0.0
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[width:], want[width:])  # (zeros: a NaN's sign means nothing)
    assert np.array_equal(np.signbit(got[width:]), np.signbit(want[width:])), got
