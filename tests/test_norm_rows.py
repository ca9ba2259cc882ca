"""Normalization rows (softmax, log_softmax, logsumexp, layernorm) over the shapes of issue 33's
sweep, in float16, float32 and float64, with NaN, +inf and -inf in rows (a masked softmax's
-inf, a row masked whole), against numpy in float64; batch 1's long row, which
`split_reduceop` keeps whole (rangeify.rules' `keeps_row`) so that its exp is computed once;
and rows of any count, whose `omp simd` loops end in a full vector overlapping the one before
(render.py's `_overlap_tails`), never where an iteration reads what the loop writes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from row_oracles import log_softmax, logsumexp, softmax

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.rules.generated.rangeify import local_max_row
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import PARALLEL_MIN_WORK, SPLIT_MIN_ROWS, vector_bytes
from rulegrad.runtime.uop import toposort

SHAPES = [(13, 7), (7, 1009), (1, 50257), (8, 64, 1000), (1024, 1024), (4096, 1024)]
DTYPES = ["float16", "float32", "float64"]
# (relative, absolute) tolerance of each dtype against the float64 oracle: float16 rounds each
# op's result (exp, the shift, the quotient) to 11 bits
TOL = {"float16": (2e-2, 2e-3), "float32": (2e-5, 2e-6), "float64": (1e-12, 1e-14)}


def _np_layernorm(a: np.ndarray) -> np.ndarray:
    d = a - a.mean(-1, keepdims=True)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5)


PROGRAMS = {
    "softmax": (lambda t: t.softmax(-1), softmax),
    "log_softmax": (lambda t: t.log_softmax(-1), log_softmax),
    "logsumexp": (lambda t: t.logsumexp(-1), logsumexp),
    "layernorm": (lambda t: t.layernorm(), _np_layernorm),
}


def _rows(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """Normal values, and where there are rows enough: row 0 half -inf (a causal mask's row),
    row 1 with a NaN, row 2 with a +inf, row 3 all -inf (a row masked whole), row 4 with a
    -inf; a single row gets its second half -inf."""
    x = np.random.default_rng(seed).standard_normal(shape).reshape(-1, shape[-1]) * 3
    n = shape[-1]
    x[0, n // 2:] = -np.inf
    if x.shape[0] >= 5:
        x[1, n // 3] = np.nan
        x[2, n - 1] = np.inf
        x[3, :] = -np.inf
        x[4, 0] = -np.inf
    return x.reshape(shape).astype(dtype)


def _check(name: str, shape: tuple[int, ...], dtype: str) -> None:
    program, oracle = PROGRAMS[name]
    x = _rows(shape, dtype, seed=sum(shape))
    got = program(Tensor(x)).numpy()
    assert got.dtype == np.dtype(dtype), got.dtype
    want = oracle(x.astype(np.float64))
    rtol, atol = TOL[dtype]
    # NaN where the oracle has NaN, the same infinities, every other value within tolerance
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol,
                               err_msg=f"{name} {shape} {dtype}")


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_float32_rows_equal_numpy(name, shape):
    _check(name, shape, "float32")


# the other dtypes over every shape but the largest (their kernels are the same loops)
@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("shape", SHAPES[:-1], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_float16_and_float64_rows_equal_numpy(name, shape, dtype):
    _check(name, shape, dtype)


def _exps(t: Tensor) -> tuple[int, int]:
    """(kernels, EXP nodes in them) of t's schedule."""
    items = t.schedule()
    return len(items), sum(n.op is Ops.EXP for item in items for n in toposort(item.ast))


# rows past split_reduceop's SPLIT_MIN_ROWS and within local_max_row() (the suite's 1 MB of L2:
# 65536), too few values in all to thread: batch 1 (a prime, an even length, the bound itself)
# and 3 rows (2:1 on the suite's 2 threads)
KEPT = [(1, 50257), (1, 40000), (1, local_max_row()), (3, 40009)]


@pytest.mark.parametrize("shape", KEPT, ids=lambda s: "x".join(map(str, s)))
def test_a_few_long_rows_are_one_kernel_with_one_exp_per_element(shape):
    """A softmax over rows that fit local_max_row() and are too little work to thread stays
    whole (split, its partials ran nested in the same kernel on one core, and each exp was
    computed twice: once for the sum, once for the output): one kernel with one EXP (each
    element's exp kept in the row's local array); logsumexp and layernorm one REDUCE per
    reduction, not partials. Values against numpy."""
    assert SPLIT_MIN_ROWS < shape[1] <= local_max_row()
    assert shape[0] * shape[1] < PARALLEL_MIN_WORK
    x = _rows(shape, "float32", seed=shape[1])
    t = Tensor(x).softmax(-1)
    assert _exps(t) == (1, 1), [k.name for k in t.schedule()]
    np.testing.assert_allclose(t.numpy(), softmax(x.astype(np.float64)), rtol=2e-5,
                               atol=2e-6)
    # layernorm: two sums (mean, variance), each one REDUCE over the row
    items = Tensor(x).layernorm().schedule()
    assert sum(n.op is Ops.REDUCE for k in items for n in toposort(k.ast)) == 2
    for name in ("logsumexp", "layernorm"):
        _check(name, shape, "float32")


# row lengths around the vector widths (4, 8 and 16 float32 lanes): short of one, whole, one
# over, primes, a row of 77 (4 vectors of 16 and 13 values)
COUNTS = [3, 4, 5, 7, 9, 10, 15, 16, 17, 31, 33, 77, 97, 250]


@pytest.mark.parametrize("n", COUNTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_of_any_count_equal_numpy(n, dtype):
    """Each program over 6 rows of n (a masked, a NaN, an inf and a -inf row among them): its
    loops' last iterations run again in a vector overlapping the one before, the same
    values written twice."""
    for name in PROGRAMS:
        _check(name, (6, n), dtype)


def _simd_loops(t: Tensor) -> list[tuple[int, int]]:
    """(start, end) of every `omp simd` loop of t's one kernel, as printed."""
    (item,) = t.schedule()
    src = render_kernel(optimize_kernel(lower_only(item.ast)), "k").source
    return [(int(a), int(b)) for a, b in re.findall(
        r"#pragma omp simd\n\s*for \(int64_t \w+ = (\d+); \w+ < (\d+);", src)]


def test_a_row_of_77_runs_in_whole_vectors():
    """softmax over rows of 77: its exp's fill and its output loop are each the whole vectors
    (64 of 16 lanes on a 512-bit target) and the last vector, overlapping them (61..77), not
    13 values gcc finishes in narrower vectors and one at a time (5 scalar exp calls a row).
    (3 rows: 4 would run in a block, whose passes' loops over its rows are test_rows_63's.)"""
    lanes = min(16, vector_bytes() // 4)
    soft = Tensor(np.zeros((3, 77), np.float32)).softmax(-1)
    loops = _simd_loops(soft)
    if not loops:
        # (a 256-bit target writes the row in explicit 8-lane vectors: roof67's row of exps,
        # whose last vector starts clamped, `r_v < 69 ? r_v : 69`: the same whole vectors)
        loops = _explicit_loops(soft)
        assert loops and all(step == lanes for *_, step in loops), loops
        assert all(last == end - step for _, end, last, step in loops), loops
        return
    assert all((b - a) % lanes == 0 for a, b in loops), loops
    assert (77 - lanes, 77) in loops, loops


def _explicit_loops(t: Tensor) -> list[tuple[int, int, int, int]]:
    """(start, end, last vector's start, step) of every explicit vector loop of t's one
    kernel whose last vector is clamped to end within the row, as printed."""
    (item,) = t.schedule()
    src = render_kernel(optimize_kernel(lower_only(item.ast)), "k").source
    return [(int(a), int(b), int(c), int(d)) for a, b, d, c in re.findall(
        r"for \(int64_t (?:\w+)_v = (\d+); \w+ < (\d+); \w+ \+= (\d+)\) \{\n"
        r"\s*const int64_t \w+ = \w+ < (\d+) \?", src)]


def test_an_update_in_place_is_not_run_twice():
    """x.assign(x * 2 + 1) reads the buffer it writes: its loop keeps its n iterations (run
    again, the last ones would be doubled twice; x * 2 + 1 into a new buffer is split).
    float64: gcc's `omp simd`, not explicit vectors. Values against numpy."""
    for n in (77, 10, 250):
        a = np.arange(n, dtype=np.float64)
        t = Tensor(a.copy()).realize()
        assert _simd_loops(t * 2 + 1) != [(0, n)]  # into a new buffer: split
        t.assign(t * 2 + 1).realize()
        np.testing.assert_array_equal(t.numpy(), a * 2 + 1)
