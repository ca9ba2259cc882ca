"""Reductions off the benchmark's shapes: short rows and rows wider than the interchange keeps.

A max or min along a contiguous row of a vector or more (8 to 16 values too, where the unroll
action used to take it) keeps vectors of partial results, its last values one vector
overlapping the whole ones and its lanes combined as vectors (render.py's `_vector_reduce`,
blocks.py's row reduction for a row of memory, ctext.py's `rg_vhmax_f32`); a reduce down the
columns of a row wider than INTERCHANGE_MAX accumulators runs in blocks of them, one after
another, the last one narrower. Values against
numpy through runtime/semantics.py's reduce (max and min bit for bit, NaN, signed zeros and
infinities in every position; an interchanged sum keeps each column's order, so numpy's running
sum bit for bit), under both schedulers; the actions read from the optimized kernel.
"""

from __future__ import annotations

import numpy as np
import pytest
from special_values import assert_same_bits as _same_bits
from special_values import sprinkled

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import semantics, target
from rulegrad.runtime.kernelize import SCHEDULERS
from rulegrad.runtime.ops import Ops

SPECIAL = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.0]


@pytest.fixture(params=SCHEDULERS, autouse=True)
def scheduler(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)
    return request.param


def _data(shape: tuple[int, ...], dt: type, seed: int) -> np.ndarray:
    """Random values with NaN, signed zeros and infinities in a sixth of the positions."""
    return sprinkled(shape, dt, seed, SPECIAL, share=6)


def _oracle(op: str, x: np.ndarray, axis: int) -> np.ndarray:
    if op == "sum":  # an interchanged sum keeps each column's order: numpy's running sum
        out = np.zeros(x.shape[:axis] + x.shape[axis + 1:], x.dtype)
        for k in range(x.shape[axis]):
            out = out + np.take(x, k, axis=axis)
        return out
    o = Ops.MAX if op == "max" else Ops.MIN
    ident = -np.inf if op == "max" else np.inf
    return np.squeeze(semantics.reduce(o, x, (axis,), ident), axis=axis)


def _acts(t: Tensor) -> tuple[list[str], str]:
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    return actions(opt), render_kernel(opt, "k").source


# ---------------------------------------------------------------- short rows
@pytest.fixture(params=["library", "printed"])
def library(request, monkeypatch):
    """A row of memory's reduction from the block library (blocks.py), or printed in the
    kernel (RULEGRAD_BLOCK_LIBRARY=0): each is checked against numpy."""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_BLOCK_LIBRARY", "1" if request.param == "library" else "0")
    run._programs.clear()  # (a program is kept by its kernels' ASTs, the same either way)
    yield request.param
    run._programs.clear()


@pytest.fixture
def row_form(monkeypatch):
    """opt.rules' rows_across declining every kernel: a row max of 8 or 13 values over rows
    enough goes across lanes where the count says so (tests/test_rows_60.py); these tests
    check the VECTOR reduce a row keeps otherwise (fewer rows than a vector, float64 rows)."""
    import rulegrad.rules.generated.opt as generated_opt
    monkeypatch.setattr(generated_opt, "across", lambda sink: None)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("width, vectors", [(8, 1), (13, 1), (17, 2), (33, 4), (63, 4), (250, 4)])
def test_short_row_max_keeps_vectors_and_numpy_bits(library, row_form, op, width, vectors):
    x = _data((37, width), np.float32, seed=width)
    t = getattr(Tensor(x), op)(axis=1)
    acts, src = _acts(t)
    s = "s" if vectors > 1 else ""
    assert f"VECTOR {op.upper()} over r1 ({width} values: {vectors} vector{s} of 8 partial " \
           "results)" in acts, acts
    # its lanes combined as vectors: in the kernel, or in the library's reduction it calls
    assert (f"rg_reduce_{op}_f32(&p1[" if library == "library" else f"rg_vh{op}_f32(") in src
    _same_bits(t.numpy(), _oracle(op, x, 1))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("width", [8, 13, 21, 40, 107])
def test_one_special_in_every_position_of_a_short_row(library, row_form, op, width):
    # row i holds one NaN at position i (the whole vectors, the overlapping last one, and the
    # values both cover); then rows of +0.0 and -0.0 with the odd one out in every position,
    # whose sign MAX (MIN) must keep whichever lane it lands in
    x = np.full((3 * width, width), -1.0 if op == "max" else 1.0, np.float32)
    at = np.arange(width)
    x[at, at] = np.nan
    x[width:2 * width] = -0.0
    x[width + at, at] = 0.0
    x[2 * width:] = 0.0
    x[2 * width + at, at] = -0.0
    t = getattr(Tensor(x), op)(axis=1)
    assert any(a.startswith(f"VECTOR {op.upper()}") for a in _acts(t)[0])
    _same_bits(t.numpy(), _oracle(op, x, 1))


@pytest.mark.parametrize("op", ["max", "min"])
def test_a_long_row_max_is_numpy_bits_on_its_fast_pass_and_its_exact_one(library, op):
    """A row of memory's max (min) in the block library takes x86's max per vector with NaNs
    flagged apart, and the exact pass when a NaN is flagged or the result is a zero (whose sign
    a tie leaves to the order): rows of 4099 values (128 blocks of 4 vectors, a whole vector,
    one overlapping the row's end) with the special value in a block, in the whole vector and
    in the overlap. Plain rows, one NaN, zeros of both signs the extreme, every value -0.0,
    infinities without a NaN: numpy's bits each."""
    width, sign = 4099, -1.0 if op == "max" else 1.0  # sign: the side away from the extreme
    rng = np.random.default_rng(11)
    far = (sign * np.abs(rng.standard_normal((14, width)))).astype(np.float32)
    x = rng.standard_normal((14, width)).astype(np.float32)
    for i, at in enumerate((5, 4093, 4098)):
        x[2 + i, at] = np.nan
        x[5 + i] = far[5 + i]
        x[5 + i, ::7] = sign * 0.0  # the extreme's zeros, one of the other sign at `at`
        x[5 + i, at] = -sign * 0.0
        x[8 + i] = far[8 + i]
        x[8 + i, at] = -sign * np.inf
    x[11] = sign * 0.0
    x[12] = sign * np.inf
    x[13] = far[13]
    x[13, 4000] = np.inf  # both infinities, the extreme's only once
    x[13, 17] = -np.inf
    t = getattr(Tensor(x), op)(axis=1)
    assert any(a.startswith(f"VECTOR {op.upper()}") for a in _acts(t)[0])
    _same_bits(t.numpy(), _oracle(op, x, 1))


def test_short_row_max_of_computed_values_overlaps_its_last_vector():
    # a value computed along the row (not a plain read), the last 5 values of a row of 21 in a
    # vector overlapping the two whole ones: computed again, the same max
    x = _data((9, 21), np.float32, seed=3)
    t = (Tensor(x) * -3.0 + 1.0).max(axis=1)
    acts, src = _acts(t)
    assert "VECTOR MAX over r1 (21 values: 2 vectors of 8 partial results)" in acts, acts
    assert "const int64_t r1 = 13 + r1_u * 8;" in src  # the vector ending at the row's end
    with np.errstate(invalid="ignore", over="ignore"):
        want = _oracle("max", x * np.float32(-3.0) + np.float32(1.0), 1)
    _same_bits(t.numpy(), want)


def test_rows_shorter_than_a_vector_are_not_vectors_of_partial_results():
    for t in (Tensor(np.ones((8, 7), np.float32)).max(axis=1),
              Tensor(np.ones((8, 7), np.float32)).sum(axis=1)):
        assert not any(a.startswith("VECTOR") for a in _acts(t)[0])


@pytest.mark.parametrize("width, vectors", [(17, "2 vectors"), (20, "2 vectors"), (33, "4 vectors"),
                                            (63, "4 vectors")])
@pytest.mark.parametrize("computed", [False, True])
def test_short_row_sum_keeps_the_vectors_it_fills(width, vectors, computed):
    """A float32 sum along a row past UNROLL_MAX keeps as many vectors of partial results as
    the row fills (not gcc's `omp simd reduction(+)`, which zeroes and sums a vector-wide array
    in memory per row), the last values one by one: a row of memory through the block library,
    a computed value printed in the kernel. Within the reduction contract of the float64 sum;
    NaN and infinities where numpy has them."""
    x = _data((11, width), np.float32, seed=width)
    t = (Tensor(x) * 2.0 + 1.0).sum(axis=1) if computed else Tensor(x).sum(axis=1)
    acts, src = _acts(t)
    assert f"VECTOR ADD over r1 ({width} values: {vectors} of 8 partial results)" in acts, acts
    assert ("rg_reduce_add_f32(" in src) is not computed
    v = x * np.float32(2.0) + np.float32(1.0) if computed else x
    with np.errstate(invalid="ignore"):
        want = v.astype(np.float64).sum(axis=1)
        bound = 2 * (width - 1) * np.finfo(np.float32).eps * np.abs(v).astype(np.float64).sum(1)
    got = t.numpy().astype(np.float64)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    assert np.all(np.abs(got - want)[finite] <= bound[finite] + 1e-30)


# ---------------------------------------------------------------- wide rows down the columns
@pytest.mark.parametrize("dt, op", [(np.float32, "max"), (np.float64, "min"), (np.float32, "sum"),
                                    (np.int32, "sum")])
@pytest.mark.parametrize("shape, axis, blocks", [
    ((33, 130), 0, "3 blocks of 48"),     # 48 + 48 + 34: the last block narrower
    ((37, 131), 0, "3 blocks of 48"),     # a prime width
    ((3, 19, 131), 1, "3 blocks of 48"),  # inside an output loop
    ((17, 128), 0, "2 blocks of 64"),     # whole blocks
])  # (more than 16 rows: fewer are unrolled, opt.rules' unroll_reduce)
def test_column_reduce_wider_than_its_accumulators_runs_in_blocks(monkeypatch, dt, op, shape,
                                                                  axis, blocks):
    from rulegrad.rules import interchange_helpers

    # (a small INTERCHANGE_MAX keeps the kernels small; the sweep's 33x8192 crosses 4096)
    monkeypatch.setattr(interchange_helpers, "INTERCHANGE_MAX", 64)
    if dt is np.int32:
        x = np.random.default_rng(7).integers(-2**31, 2**31, shape).astype(dt)
    elif op == "sum":
        x = np.random.default_rng(7).standard_normal(shape).astype(dt)
    else:
        x = _data(shape, dt, seed=7)
    t = getattr(Tensor(x), op)(axis=axis)
    acts, _ = _acts(t)
    j = len(shape) - 2  # the output's last range
    assert f"INTERCHANGE r{j} inside the reduce loops, in {blocks}" in acts, acts
    got = t.numpy()
    _same_bits(got, _oracle(op, x.astype(got.dtype), axis))  # (an int32 sum is int64's)


def test_column_max_wider_than_the_stack_accumulators_is_interchanged():
    # the real bound: 4099 columns (a prime), two blocks of 2056 and 2043
    x = _data((23, 4099), np.float32, seed=11)
    t = Tensor(x).max(axis=0)
    acts, _ = _acts(t)
    assert "INTERCHANGE r0 inside the reduce loops, in 2 blocks of 2056" in acts, acts
    _same_bits(t.numpy(), _oracle("max", x, 0))


@pytest.mark.parametrize("width, want", [
    (128, "in 2 blocks of 64"),  # equal blocks of at most INTERCHANGE_MAX: threads
    (134, "in 3 blocks of 48"),  # 2 x 67: no equal split fits, the last block overlapping
])
def test_threaded_column_blocks_stay_within_the_stack_accumulators(monkeypatch, width, want):
    from rulegrad.rules import interchange_helpers

    monkeypatch.setattr(interchange_helpers, "INTERCHANGE_MAX", 64)
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 100)
    x = _data((33, width), np.float32, seed=width)
    t = Tensor(x).max(axis=0)
    acts, _ = _acts(t)
    assert f"INTERCHANGE r0 inside the reduce loops, {want}" in acts, acts
    # the blocks (a range of the kernel, the last ending at the row's end) are the loop the
    # parallel action threads
    assert any(a.startswith("PARALLEL") for a in acts), acts
    _same_bits(t.numpy(), _oracle("max", x, 0))


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("source, expanded, shape, axes", [
    ((2, 1, 1, 4), (2, 3, 3, 4), None, (0, 1, 2)),  # fuzz seed 1000550: two axes merged to 9
    ((2, 1, 1, 4), (2, 3, 3, 4), (2, 3, 3, 4, 1), (0, 1, 2)),
    ((5, 1), (5, 17), None, (1,)),  # one broadcast row of 17, a vector and more
    ((1, 3), (40, 3), None, (0,)),  # down a broadcast column
    ((3, 1, 7), (3, 11, 7), None, (1,)),
])
def test_a_reduce_over_broadcast_axes_reads_each_value_where_it_is(op, source, expanded, shape,
                                                                   axes):
    # a value read 0 apart along the reduce's loop is no row of memory: it was summed as the
    # contiguous values after it (past the end of the buffer: 4e21), or its max taken over them
    a = np.random.default_rng(len(expanded)).standard_normal(source).astype(np.float32)
    want_full = np.broadcast_to(a, expanded).reshape(shape or expanded)
    t = Tensor(a).expand(expanded).reshape(shape or expanded)
    got = getattr(t, op)(axis=axes, keepdim=True).numpy()
    want = getattr(want_full, op)(axis=axes, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
