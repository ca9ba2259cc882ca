"""How the optimizer splits work across threads off the benchmarks' shapes: loops too short to
share evenly (a prime or 3-row outer loop), more threads than rows, a product of a few rows.

Each test counts the split (the kernel's threaded iterations, its launch shares, the panels'
claims) at several RULEGRAD_THREADS, never seconds, and checks the values against numpy: bit
for bit where the split keeps bits (threads change no value; a product's sum keeps its order
over k)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from special_values import assert_same_bits as _same_bits
from special_values import sprinkled as _data

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import semantics, target
from rulegrad.runtime.loops import range_size
from rulegrad.runtime.ops import Ops


def _kernel(t: Tensor):
    """The one kernel of t's schedule: (its actions, the rendered C)."""
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    return actions(opt), render_kernel(opt, "k")


def _idle(iterations: int, nthreads: int) -> float:
    """The longest of a static split's shares over the mean share (launch.py's split)."""
    return -(-iterations // nthreads) * nthreads / iterations


# ---------------------------------------------------------------- short outer loops flattened


@pytest.mark.parametrize("nthreads", [2, 3, 4])
@pytest.mark.parametrize("op, dt", [("max", np.float32), ("sum", np.int32), ("sum", np.float32)])
def test_a_short_outer_loop_is_flattened_with_the_next_so_every_thread_gets_an_even_share(
        monkeypatch, nthreads, op, dt):
    # 5 rows on 2 threads is 3:2, on 4 threads 2:1; 5 x 7 = 35 rows shares within 1/8
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    if dt is np.int32:
        x = np.random.default_rng(1).integers(-1000, 1000, (5, 7, 1009)).astype(dt)
    elif op == "sum":
        x = np.random.default_rng(nthreads).standard_normal((5, 7, 1009)).astype(dt)
    else:
        x = _data((5, 7, 1009), dt, seed=nthreads)
    t = getattr(Tensor(x), op)(axis=2)
    acts, rk = _kernel(t)
    # (35K loads against a region's cost of 1000: a team of every thread)
    assert [a for a in acts if a.startswith("PARALLEL")] == [
        f"PARALLEL r0 r1 (35 iterations: 5x7) on {nthreads} threads"]
    assert rk.launch == 35 and _idle(rk.launch, nthreads) <= 1.125
    got = t.numpy()
    if op == "max":  # exact in any order, and each row's order is unchanged anyway
        want = semantics.reduce(Ops.MAX, x, (2,), -np.inf).squeeze(2)
        _same_bits(got, want)
    elif dt is np.int32:
        _same_bits(got, x.sum(axis=2).astype(got.dtype))  # (exact: no sum overflows)
    else:
        np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=2), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("nthreads, want", [(2, "PARALLEL r0 (6 iterations)"),
                                            (3, "PARALLEL r0 (6 iterations)"),
                                            (4, "PARALLEL r0 r1 (30 iterations: 6x5)")])
def test_outer_loops_are_flattened_only_when_the_outermost_shares_unevenly(monkeypatch, nthreads,
                                                                            want):
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    x = _data((6, 5, 331), np.float32, seed=3)
    t = Tensor(x).max(axis=2)
    acts, rk = _kernel(t)
    assert [a for a in acts if a.startswith("PARALLEL")] == [f"{want} on {nthreads} threads"]
    _same_bits(t.numpy(), semantics.reduce(Ops.MAX, x, (2,), -np.inf).squeeze(2))


@pytest.mark.parametrize("nthreads", [2, 3])
def test_an_interchanged_reduce_flattens_its_outer_loops_not_its_columns(monkeypatch, nthreads):
    # a max down the third axis of 3x5x40x24: the loops over 3 and 5 flattened, the 24
    # columns still the accumulators' vectors inside them
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    x = _data((3, 5, 40, 24), np.float32, seed=4)
    t = Tensor(x).max(axis=2)
    acts, rk = _kernel(t)
    assert acts[0].startswith("INTERCHANGE"), acts
    want = "PARALLEL r0 r1 (15 iterations: 3x5)" if nthreads == 2 else "PARALLEL r0 (3 iterations)"
    assert [a for a in acts if a.startswith("PARALLEL")] == [f"{want} on {nthreads} threads"]
    _same_bits(t.numpy(), semantics.reduce(Ops.MAX, x, (2,), -np.inf).squeeze(2))


def test_a_vector_loop_is_never_flattened(monkeypatch):
    # 2x + 1 over 3x1009 rows of a 3x1013 array (a slice: the rows are not one contiguous run,
    # so MERGE keeps them apart): the rows alone take the threads; the vector loop stays one
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = np.random.default_rng(5).standard_normal((3, 1013)).astype(np.float32)
    t = Tensor(x)[:, :1009] * 2 + 1
    acts, rk = _kernel(t)
    assert [a for a in acts if a.startswith("PARALLEL")] == [
        "PARALLEL r0 (3 iterations) on 2 threads"]
    _same_bits(t.numpy(), x[:, :1009] * np.float32(2) + np.float32(1))


# ---------------------------------------------------------------- products of a few rows


def _ints(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Small whole numbers as float32: every product and partial sum is exact, so any order of
    the sums gives numpy's bits."""
    return rng.integers(-8, 9, shape).astype(np.float32)


def _pack(t: Tensor):
    """The one kernel's packing action (a `Pack`) and its rendered C."""
    from rulegrad.rules.pack_helpers import Pack

    (item,) = t.schedule()
    opt = optimize_kernel(lower_only(item.ast))
    (pack,) = [st.arg for st in opt.src if isinstance(st.arg, Pack)]
    return pack, render_kernel(opt, "k")


@pytest.mark.parametrize("nthreads, rows, want", [
    (2, 17, "panels"),  # 3 tiles of 6 rows: 2:1 on 2 threads; 512 columns are many panels
    (3, 17, "tiles"),   # 3 tiles on 3 threads: even
    (4, 17, "panels"),
    (2, 7, "tiles"),    # 2 tiles on 2 threads
    (3, 7, "panels"),
    (2, 96, "tiles"),   # 16 tiles: 8 each
])
def test_a_product_of_few_rows_splits_its_columns_across_threads(monkeypatch, nthreads, rows,
                                                                  want):
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    # an L2 too small for x: the split by the tiles' shares alone (with x in L2, the panels
    # run outside the tiles whenever they share as evenly: the tests below)
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1K")
    rng = np.random.default_rng(rows)
    # (a k of its own per thread count: the runtime keeps a program compiled for one graph,
    # whatever RULEGRAD_THREADS said when it was compiled; and work enough that every thread's
    # share pays for the region, pack_helpers' `region_threads`)
    k = max(500, -(-nthreads * target.parallel_min_work() // (rows * 512))) + nthreads
    a, b, c = _ints(rng, rows, k), _ints(rng, k, 512), _ints(rng, 512)
    t = (Tensor(a) @ Tensor(b) + Tensor(c)).relu()  # an epilogue in the store's loop too
    pack, rk = _pack(t)
    assert pack.parallel == want
    npanels = -(-512 // pack.panel)
    ntiles = -(-rows // pack.tile)
    # the launch makes a claim per panel (or per tile): every thread a near-even share
    assert rk.launch == (npanels if want == "panels" else max(ntiles, npanels))
    _same_bits(t.numpy(), np.maximum(a @ b + c, np.float32(0)))


@pytest.mark.parametrize("nthreads, rows, k, n, want", [
    # too little work for threads: panel by panel on one core (a last panel of 1 column: y not
    # read in place, pack_helpers' `read_in_place`; 200 columns, 8 of 16, are)
    (1, 8, 300, 193, ""),
    (1, 8, 1024, 1025, ""),  # one thread: no region (two shares pay for one: region_threads)
    (2, 8, 1024, 1024, "panels"),  # 2 tiles or 32 panels on 2 threads: as even either way
    (2, 96, 500, 1024, "panels"),  # 16 tiles or 32 panels
    (2, 96, 500, 1025, "tiles"),   # 33 panels 17:16, 16 tiles 8:8: the tiles
    (3, 18, 500, 1024, "tiles"),   # 3 tiles on 3 threads, 32 panels 11:11:10
])
def test_a_product_whose_rows_fit_in_l2_runs_its_panels_outside_the_row_tiles(
        monkeypatch, nthreads, rows, k, n, want):
    # x (rows x k) fits in half of L2: each panel of b is packed into one panel's buffer and
    # read by every tile before the next, b read once; all panels packed first is a copy of b
    # as large as b (8x1024x4096: 16 MB copied, then read back by every tile)
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1M")
    rng = np.random.default_rng(rows * nthreads)
    a, b = _ints(rng, rows, k), _ints(rng, k, n)
    t = Tensor(a) @ Tensor(b)
    pack, rk = _pack(t)
    assert pack.rows == (0,) and pack.parallel == want and pack.outer == (want != "tiles")
    assert -(-n // pack.panel) > 1
    # a panel's place in a buffer of every panel: `pn * (k x panel) + ...`
    assert (f" * {k * pack.panel} + " in rk.source) == (want == "tiles")
    _same_bits(t.numpy(), a @ b)


def test_a_product_whose_rows_outgrow_l2_packs_every_panel_first(monkeypatch):
    # 512 rows x 600 of x (1.2 MB) past half of a 1 MB L2: a tile's rows stay in L1 across
    # all panels, packed first
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1M")
    rng = np.random.default_rng(11)
    a, b = _ints(rng, 512, 600), _ints(rng, 600, 100)
    t = Tensor(a) @ Tensor(b)
    pack, rk = _pack(t)
    assert not pack.outer and pack.parallel in ("tiles", "")
    _same_bits(t.numpy(), a @ b)


def test_few_rows_of_a_computed_left_operand_keep_the_row_tiles(monkeypatch):
    # exp(a) packed once per tile: split by panels, each panel would compute it again
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((17, 300)).astype(np.float32), _ints(rng, 300, 512)
    t = Tensor(a).exp() @ Tensor(b)
    pack, _ = _pack(t)
    assert pack.pack_a and pack.parallel == "tiles"
    want = np.exp(a.astype(np.float64)) @ b.astype(np.float64)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("nthreads", [2, 4])
def test_panels_split_inside_a_batch_loop_too_few_to_share(monkeypatch, nthreads):
    # 2 batches (fewer than 2 per thread): each batch's panels split in a region of its own, when
    # a batch's product is worth a team's wake (5x1024x300 > parallel_min_work; at 5x512x300
    # the batch loop itself is threaded: test_cliff_58), and its row of y at least a page per
    # thread (300 columns are one run on one core: pack_helpers' stream_width)
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    rng = np.random.default_rng(nthreads)
    a, b = _ints(rng, 2, 5, 1024), _ints(rng, 2, 1024, 1024 * nthreads + 300)
    t = Tensor(a) @ Tensor(b)
    pack, rk = _pack(t)
    assert pack.parallel == "panels" and "omp for schedule(dynamic)" in rk.source
    _same_bits(t.numpy(), a @ b)


# ---------------------------------------------------------------- a product's columns


@pytest.mark.parametrize("m, k, n", [(63, 200, 65), (79, 64, 81), (111, 131, 113)])
def test_a_product_with_an_epilogue_keeps_its_columns_where_the_output_is_contiguous(m, k, n):
    # the rows as columns would waste fewer lanes (63 rows are 4 panels of 16, 65 columns 5),
    # but would store every output a row apart and compute its epilogue one output at a time
    rng = np.random.default_rng(m)
    a, b, c = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, n)
    t = (Tensor(a) @ Tensor(b) + Tensor(c)).relu()
    pack, _ = _pack(t)
    (item,) = t.schedule()
    last = lower_only(item.ast).src[0].src[-1]  # the store's last range: the output's columns
    assert range_size(last) == n and pack.cols == last.arg[0] and not pack.pack_a
    _same_bits(t.numpy(), np.maximum(a @ b + c, np.float32(0)))


# ---------------------------------------------------------------- columns of a prime width


@pytest.mark.parametrize("op, dt", [("sum", np.float32), ("max", np.float32), ("sum", np.int32)])
@pytest.mark.parametrize("rows, cols", [(36, 1031), (37, 4099)])
def test_a_column_reduce_of_a_prime_width_shares_its_columns_in_blocks_the_last_narrower(
        monkeypatch, op, dt, rows, cols):
    # no equal split of 1031 columns: blocks whole vectors wide, the last narrower, each
    # column's reduce still row after row
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    if dt is np.int32:
        x = np.random.default_rng(cols).integers(-1000, 1000, (rows, cols)).astype(dt)
    elif op == "max":
        x = _data((rows, cols), dt, seed=cols)
    else:
        x = np.random.default_rng(cols).standard_normal((rows, cols)).astype(dt)
    t = getattr(Tensor(x), op)(axis=0)
    acts, rk = _kernel(t)
    found = re.search(r"in (\d+) blocks of (\d+)", acts[0])
    assert found and any(a.startswith("PARALLEL") for a in acts), acts
    count, block = map(int, found.groups())
    # the last block ends at the row's end, overlapping the one before it (whose columns it
    # does not store again)
    assert block % 8 == 0 and (count - 1) * block < cols < count * block
    assert count >= 2 and rk.launch == count  # a thread per block at most: a share each
    assert count * block <= cols * 1.125  # the blocks within 1/8 of an even split
    got = t.numpy()
    if op == "max":
        _same_bits(got, semantics.reduce(Ops.MAX, x, (0,), -np.inf).squeeze(0))
    elif dt is np.int32:
        _same_bits(got, x.sum(axis=0).astype(got.dtype))
    else:  # each column's sum in row order: a running sum, row after row, is its bits
        running = np.zeros(cols, dt)
        for row in x:
            running = running + row
        _same_bits(got, running)


@pytest.mark.parametrize("nthreads, cols, want", [
    (2, 4096, "2 blocks of 2048"),   # a share each, two pages wide (4 of 1024 before)
    (4, 4096, "4 blocks of 1024"),   # a share each is a page
    (2, 8192, "2 blocks of 4096"),   # as wide as the accumulators kept
    (2, 12000, "12 blocks of 1000"),  # a share (6000) is wider than the accumulators: pages
])
def test_a_product_of_one_row_streams_each_threads_share_of_the_columns_as_one_block(
        monkeypatch, nthreads, cols, want):
    # x (1 x k) @ w (k x cols): no output loop around the columns, so the threads share blocks
    # of them; each block streams its columns of every row of w, the wider the longer the run
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    rng = np.random.default_rng(cols)
    k = 64
    x = rng.standard_normal((1, k)).astype(np.float32)
    w = rng.standard_normal((k, cols)).astype(np.float32)
    t = Tensor(x) @ Tensor(w)
    acts, rk = _kernel(t)
    assert acts[0] == ("INTERCHANGE r0 inside the reduce loops, in " + want
                       + ", 4 rows per pass"), acts
    count = int(want.split()[0])
    assert rk.launch == count
    # each column's sum over k in order, a product then an add (no FMA in a plain reduce):
    # numpy's running sum, one row of w at a time, is its bits
    running = np.zeros(cols, np.float32)
    for i in range(k):
        running = running + x[0, i] * w[i]
    _same_bits(t.numpy()[0], running)
