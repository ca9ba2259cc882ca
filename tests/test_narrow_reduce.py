"""Reductions with narrow outputs (rangeify.rules' narrow_reduce: a long reduce over a run of
adjacent axes to a few columns per batch as shares x vector-lane partials plus a peeled tail)
and reductions over short rows read far apart (opt_helpers' whole_rows: lane-by-lane strided
vector loads), each checked against numpy at prime, power-of-two and short lengths, with NaN,
-0.0 and ints, and by the work their kernels do (kernels, actions applied, threads, vector
loops), never by time."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels as _kernels

from rulegrad import Ops, Tensor, UOp, dtypes, graph_rewrite
from rulegrad.rules import matcher
from rulegrad.runtime.target import threads


def _data(rng: np.random.Generator, shape: tuple[int, ...], dt: type) -> np.ndarray:
    if dt is np.int32:
        return rng.integers(-50, 50, size=shape).astype(dt)
    x = rng.standard_normal(shape).astype(dt)
    flat = x.reshape(-1, shape[-1])
    flat[:, 0] = -0.0  # a column of -0.0 only: numpy's sum is +0.0, its max and min -0.0
    if shape[-1] > 2:
        flat[rng.integers(0, flat.shape[0]), 1] = np.nan  # one NaN: that column's result
    flat[rng.integers(0, flat.shape[0], 4), -1] = -0.0
    return x


def _check(got: np.ndarray, want: np.ndarray, op: str, rows: int) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if op in ("sum", "prod") and want.dtype.kind == "f":
        # a float sum's order is the reduction contract's: within a bound that grows with rows
        np.testing.assert_allclose(got, want, rtol=1e-5 * np.sqrt(rows), atol=1e-4 * np.sqrt(rows))
    else:  # MAX, MIN and ints: exact in any order
        np.testing.assert_array_equal(got, want)
    zero = want.reshape(-1, want.shape[-1])[:, 0] if want.ndim else want
    np.testing.assert_array_equal(np.signbit(got.reshape(zero.shape + (-1,))[..., 0]
                                             if want.ndim else got), np.signbit(zero))


# the largest lengths with 2 and 3 columns only (more would be 4M+ elements per case)
_ROWS_COLS = [(r, c) for r in (1009, 65521, 999983, 1 << 20) for c in (2, 3, 7, 16, 17)
              if r * c <= 4_000_000]


@pytest.mark.parametrize("rows, cols", _ROWS_COLS)
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_a_long_reduce_to_a_few_columns_equals_numpy(rows, cols, op):
    for dt in (np.float32, np.float64, np.int32):
        x = _data(np.random.default_rng(rows + cols), (rows, cols), dt)
        got = getattr(Tensor(x), op)(axis=0).numpy()
        _check(got, getattr(x, op)(axis=0), op, rows)


@pytest.mark.parametrize("shape, axes", [((1009, 97, 3), (0, 1)), ((2, 999983, 3), (1,)),
                                         ((3, 65521), (1,)), ((1, 65521, 5), (0, 1)),
                                         ((999983,), (0,)), ((65521, 1, 2), (0, 1))])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_leading_middle_and_last_axes_equal_numpy(shape, axes, op):
    x = _data(np.random.default_rng(len(shape)), shape, np.float32)
    got = getattr(Tensor(x), op)(axis=axes).numpy()
    want = getattr(x, op)(axis=axes)
    if op == "sum":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-2)
    else:
        np.testing.assert_array_equal(got, want)


def test_a_product_down_narrow_columns_equals_numpy():
    # values near 1, so the product of 65521 rows stays finite; ints wrap as numpy's do
    rng = np.random.default_rng(3)
    x = (1 + rng.standard_normal((65521, 3)) * 1e-3).astype(np.float32)
    np.testing.assert_allclose(Tensor(x).prod(axis=0).numpy(), x.prod(axis=0), rtol=1e-3)
    xi = rng.choice(np.array([-1, 1, 1, 3], np.int32), size=(65521, 3))
    np.testing.assert_array_equal(Tensor(xi).prod(axis=0).numpy(), xi.prod(axis=0))


@pytest.mark.parametrize("rows, cols", [(999983, 2), (1 << 20, 3), (65521, 16), (1 << 20, 5),
                                        (1 << 20, 16)])
def test_a_long_narrow_reduce_takes_threads_and_vector_partials(rows, cols):
    # one loop keeps `cols` accumulators on one core; split, a kernel of T x L partials takes
    # the threads (one share each) and keeps its L partials in vectors
    x = np.random.default_rng(5).standard_normal((rows, cols)).astype(np.float32)
    t = Tensor(x).sum(axis=0)
    kernels = _kernels(t)
    assert len(kernels) == 2, [a for _, a in kernels]  # the partials, then head + tail
    (part, acts), _ = kernels
    (st,) = [n for n in part.toposort() if n.op is Ops.STORE]
    shares, lanes = (r.src[0].arg for r in st.src[2:])
    # one reduce over the share's rows: not split again into a loop nest (split_reduceop)
    assert len([n for n in part.toposort() if n.op is Ops.REDUCE]) == 1, acts
    assert shares % threads() == 0 and lanes % cols == 0 and lanes >= 32, (shares, lanes)
    # the partials are accumulators inside the rows' loop (explicit vectors, or gcc's simd)
    assert st.src[-1].arg[1] in ("vector", "upcast") and acts[0].startswith("INTERCHANGE"), acts
    if threads() > 1 and rows * cols >= 2 << 20:  # (two threads' shares of the region's cost)
        assert any(a.startswith("PARALLEL") for a in acts), acts
    np.testing.assert_allclose(t.numpy(), x.sum(0), rtol=1e-4, atol=1e-2)


def test_a_short_or_broadcast_reduce_keeps_its_one_loop():
    # within L1 the split's extra kernels cost more than they save; a variance's squares read
    # the mean per column (a gather per lane): both stay one kernel per reduction
    x = np.random.default_rng(6).standard_normal((1009, 3)).astype(np.float32)
    assert len(_kernels(Tensor(x).sum(axis=0))) == 1
    y = np.random.default_rng(7).standard_normal((65521, 5)).astype(np.float32)
    var = Tensor(y).var(axis=0, correction=0)
    # the mean's partials, then one kernel: the mean (their sum and the tail) and the squares'
    # sum in its one loop (split too, the squares' partials would be a third kernel)
    assert len(_kernels(var)) == 2
    np.testing.assert_allclose(var.numpy(), y.var(axis=0), rtol=1e-4)


@pytest.mark.parametrize("rows, cols", [(65521, 7), (8191, 5), (4099, 6), (97, 7)])
@pytest.mark.parametrize("op", ["max", "min", "sum"])
def test_a_reduce_over_short_rows_runs_its_outputs_on_vectors(rows, cols, op):
    # each output reads `cols` values `cols` apart along the output loop: the loads together
    # read every row whole, so the loop runs 8 outputs per step, lane-by-lane loads
    x = _data(np.random.default_rng(rows), (rows, cols), np.float32)
    t = getattr(Tensor(x), op)(axis=1)
    ((k, acts),) = _kernels(t)
    (st,) = [n for n in k.toposort() if n.op is Ops.STORE]
    assert st.src[-1].arg[1] == "vector", acts
    got, want = t.numpy(), getattr(x, op)(axis=1)
    if op == "sum":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


def test_a_transposed_read_is_not_a_whole_row():
    # out[c, n] = x[n, c] * 2: one read 7 apart per output, a line's other values unread; left to
    # the transpose action (no lane-by-lane loads)
    x = np.random.default_rng(8).standard_normal((4099, 7)).astype(np.float32)
    t = (Tensor(x) * 2).permute(1, 0).contiguous()
    for k, acts in _kernels(t):
        for st in (n for n in k.toposort() if n.op is Ops.STORE):
            assert all(r.arg[1] != "vector" for r in st.src[2:]), acts
    np.testing.assert_array_equal(t.numpy(), (x * 2).T)


def test_a_flattened_view_of_a_vector_run_recombines_its_index():
    # ((t * 64 + l) // 2) * 2 + l % 2 (divmod_fold leaves l % 2 of the sum's remainder) is
    # t * 64 + l: the partials read one contiguous run, not a gather
    t, j = UOp.range(5, 0), UOp.range(64, 1)
    x = t * 64 + j
    e = (x // 2) * 2 + j % 2
    sym = matcher("symbolic", "sym")
    assert graph_rewrite(e, sym) is graph_rewrite(x, sym)
    # not when the remainders differ: (t * 63 + j) // 2 * 2 + j % 2 is not t * 63 + j
    y = t * 63 + j
    kept = graph_rewrite((y // 2) * 2 + j % 2, sym)
    assert Ops.IDIV in {n.op for n in kept.toposort()}
    assert dtypes.index == kept.dtype


# reductions over a run of adjacent axes whose kept last axes are short (3, 5, 13, 19, 65
# columns), with kept batches before the run or none, and the brief's sweep of tiny, prime,
# batch 1, tall and skinny shapes
_RUNS = [((1, 1, 1), (1,)), ((1, 1, 1), (0, 1)), ((2, 3, 5), (0, 1)), ((2, 3, 5), (1,)),
         ((16, 127, 127, 3), (1, 2)), ((1, 63, 257, 65), (1, 2)), ((4096, 3), (0,)),
         ((3, 4096), (0,)), ((7, 13, 17, 19), (1, 2)), ((7, 1021, 13, 13), (1, 2)),
         ((3, 20011, 5), (1,)), ((1, 9973, 65), (0, 1))]


@pytest.mark.parametrize("shape, axes", _RUNS)
@pytest.mark.parametrize("op", ["sum", "max", "min", "mean"])
def test_a_reduce_over_adjacent_axes_to_short_columns_equals_numpy(shape, axes, op):
    rows = int(np.prod([shape[a] for a in axes]))
    for dt in (np.float32, np.float64, np.int32):
        if op == "mean" and dt is np.int32:
            continue
        x = _data(np.random.default_rng(sum(shape)), shape, dt)
        got = getattr(Tensor(x), op)(axis=axes).numpy()
        want = getattr(x, op)(axis=axes)
        _check(got, want.astype(got.dtype), "sum" if op == "mean" else op, rows)


@pytest.mark.parametrize("shape, axes, cols, lanes", [((16, 127, 127, 3), (1, 2), 3, 48),
                                                      ((7, 1021, 13, 13), (1, 2), 13, 52),
                                                      ((3, 20011, 5), (1,), 5, 40)])
@pytest.mark.parametrize("op", ["mean", "max"])
def test_short_columns_in_batches_keep_vector_partials(shape, axes, cols, lanes, op):
    # per batch, rows of `cols` values side by side as `lanes` vector-lane partials (lane l the
    # partial of column l mod cols; 52 = 4 rows of 13, its last vector overlapping the one
    # before it), not `cols` scalar accumulators each waiting on its last add every row
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    t = getattr(Tensor(x), op)(axis=axes)
    kernels = _kernels(t)
    (part, acts), *_ = kernels
    (st,) = [n for n in part.toposort() if n.op is Ops.STORE]
    batch = int(np.prod(shape[:min(axes)]))
    assert [r.src[0].arg for r in st.src[2:]][-1] == lanes and st.src[-1].arg[1] == "vector", acts
    assert np.prod([r.src[0].arg for r in st.src[2:]]) % (batch * lanes) == 0, acts
    got, want = t.numpy(), getattr(x, op)(axis=axes)
    if op == "mean":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


def test_many_short_columns_share_the_rows_not_the_columns():
    # 65 columns down 32639 rows (2.1M values: two threads' shares of the region's cost), one
    # batch: each thread reduces a share of the rows (one stream of its own), not a block of
    # the columns over every row (5 blocks of 13 columns: every row read once per block)
    x = np.random.default_rng(10).standard_normal((1, 127, 257, 65)).astype(np.float32)
    t = Tensor(x).max(axis=(1, 2))
    kernels = _kernels(t)
    for k, acts in kernels:
        for st in (n for n in k.toposort() if n.op is Ops.STORE):
            assert all(r.arg[1] != "block" for r in st.src[2:]), acts
    (part, acts), *_ = kernels
    (st,) = [n for n in part.toposort() if n.op is Ops.STORE]
    shares = st.src[2].src[0].arg
    assert shares % threads() == 0 and st.src[-1].src[0].arg == 65, acts
    if threads() > 1:
        assert any(a.startswith("PARALLEL") for a in acts), acts
    np.testing.assert_array_equal(t.numpy(), x.max(axis=(1, 2)))


@pytest.mark.parametrize("rows, cols", [(100003, 13), (65521, 5), (999983, 2), (4099, 7),
                                        (300, 13), (97, 8)])
@pytest.mark.parametrize("op", ["max", "min", "sum"])
def test_on_one_core_a_rows_columns_stay_in_registers_read_once(monkeypatch, rows, cols, op):
    # one core: no thread takes a block of the columns, so no block is made (each block read
    # every row again), and a max or min whose row fits one block of 8-lane vectors keeps its
    # accumulators in registers (a narrow reduce's 52 partials of 13 columns, or the 13
    # columns themselves), not in memory, where a step loaded, blended in four ops and stored
    # each one; a sum's one add a step is gcc's, at the target's width, rows per pass
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    x = _data(np.random.default_rng(rows * cols), (rows, cols), np.float32)
    t = getattr(Tensor(x), op)(axis=0)
    kernels = _kernels(t)
    columns = [acts for _, acts in kernels if acts and acts[0].startswith("INTERCHANGE")]
    assert columns, [a for _, a in kernels]
    for acts in columns:
        registers = "accumulators in registers" in acts[0]
        assert registers == (op != "sum") and ("blocks of" in acts[0]) == registers, acts
        assert not any(a.startswith(("PARALLEL", "LAUNCH")) for a in acts), acts
    _check(t.numpy(), getattr(x, op)(axis=0), op, rows)
