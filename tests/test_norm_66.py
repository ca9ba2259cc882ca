"""Memory-bound rows (issue 33), scans: a scan's work as the parallel action weighs it (its
steps once each, each a wait on the one before), so a small scan runs on one core and long
chains still take the threads; rows scanned a block at a time, side by side; a blocked scan's
blocks one by one. Values against numpy (bit for bit where numpy's order is the scan's) and
torch."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions, optimized_kernels

from rulegrad import Tensor
from rulegrad.runtime import target


def _threaded(t: Tensor) -> bool:
    return any(a.startswith("PARALLEL") for k in kernel_actions(t) for a in k)


@pytest.mark.parametrize("shape, axis", [
    ((2, 3707), 1), ((3707, 2), 0), ((1, 8191), 1), ((127, 127), 1), ((127, 127), 0),
    ((7, 1), 1), ((1, 1), 0), ((61, 257), 1), ((131, 131), 1), ((64, 1000), 1),
])
def test_a_small_scan_takes_no_threads(monkeypatch, shape, axis):
    # n * m elements are n * m steps, not n * m * m: the scan's REDUCE runs along its STORE's
    # own loop, counted once (parallel_helpers' `_work`), each step weighed as the values a
    # vector reduce takes in its wait (`_chain_loads`): all of these under PARALLEL_MIN_WORK
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = np.random.default_rng(shape[0] * 7 + axis).standard_normal(shape).astype(np.float32)
    t = Tensor(x).cumsum(axis)
    assert not _threaded(t)
    np.testing.assert_array_equal(t.numpy(), np.cumsum(x, axis))


@pytest.mark.parametrize("shape, axis", [((8, 131071), 1), ((1024, 1024), 1), ((2, 600000), 1)])
def test_a_scan_of_long_chains_takes_the_threads(monkeypatch, shape, axis):
    # fewer elements than PARALLEL_MIN_WORK's shares, but each a step of a chain that waits on
    # the one before it (8 rows of 131071: two blocks of 4 rows, one a thread)
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = np.random.default_rng(shape[1]).standard_normal(shape).astype(np.float32)
    t = Tensor(x).cumsum(axis)
    assert _threaded(t)
    # (a long row is scanned in blocks: the reduction contract's order, not numpy's)
    want = np.cumsum(x.astype(np.float64), axis)
    bound = np.cumsum(np.abs(x.astype(np.float64)), axis) * shape[axis] * 2.0 ** -24
    assert (np.abs(t.numpy() - want) <= bound + 1e-6).all()


@pytest.mark.parametrize("shape", [(2, 3707), (131, 131), (1, 5), (6, 8)])
def test_small_float16_scans_as_torch(monkeypatch, shape):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float16)
    for axis in (0, 1):
        want = torch.from_numpy(x).cumsum(axis).numpy()
        got = Tensor(x).cumsum(axis).numpy()
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=2e-2, atol=2e-2 * np.sqrt(shape[axis]))


def _store_kinds(t: Tensor) -> list[list[tuple[str, int]]]:
    from rulegrad.runtime.loops import range_size
    from rulegrad.runtime.ops import Ops
    out = []
    for opt, _ in optimized_kernels(t):
        for st in opt.src:
            if st.op is Ops.STORE:
                out.append([(r.arg[1], range_size(r)) for r in st.src[2:]])
    return out


@pytest.mark.parametrize("shape", [(131, 131), (127, 257), (4, 40), (7635, 40), (3, 8, 41)])
def test_row_scans_run_a_block_of_rows_side_by_side(shape):
    # rows each a chain of adds that waits on its last: REDUCE_VECTORS rows a step, each its
    # own accumulator (scan_helpers' `_interleaved`); numpy's sequential sums bit for bit
    x = np.random.default_rng(shape[0]).standard_normal(shape).astype(np.float32)
    t = Tensor(x).cumsum(-1)
    (kinds,) = _store_kinds(t)
    assert kinds[-2:] == [("scan", shape[-1]), ("loop", target.REDUCE_VECTORS)], kinds
    np.testing.assert_array_equal(t.numpy(), np.cumsum(x, -1))


@pytest.mark.parametrize("shape", [(3, 50), (2, 3707), (1, 77)])
def test_fewer_rows_than_a_block_are_one_block(shape):
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    t = Tensor(x).cumsum(1)
    (kinds,) = _store_kinds(t)
    want = [("scan", shape[1]), ("loop", shape[0])] if shape[0] > 1 else [("scan", shape[1])]
    assert kinds[-len(want):] == want, kinds
    np.testing.assert_array_equal(t.numpy(), np.cumsum(x, 1))


@pytest.mark.parametrize("shape", [(131, 131), (9, 35)])
def test_interleaved_reverse_max_and_float16_scans_as_torch(shape):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    xt = torch.from_numpy(x)
    np.testing.assert_array_equal(Tensor(x).cummax(1)[0].numpy(), xt.cummax(1).values.numpy())
    got = Tensor(x).flip(1).cumsum(1).flip(1).numpy()
    np.testing.assert_allclose(got, xt.flip(1).cumsum(1).flip(1).numpy(), rtol=1e-5, atol=1e-5)
    h = x.astype(np.float16)
    np.testing.assert_allclose(Tensor(h).cumsum(1).numpy().astype(np.float32),
                               torch.from_numpy(h).cumsum(1).numpy().astype(np.float32),
                               rtol=1e-2, atol=2e-2 * np.sqrt(shape[1]))


@pytest.mark.parametrize("n", [2000000, 300007])
def test_a_blocked_scan_keeps_its_blocks_one_by_one(n):
    # a blocked scan's step reads its block's carry, a value read once per block: with the
    # blocks side by side it would be read (and gated) at every step, 0.17x the blocks alone
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    t = Tensor(x).cumsum(0)
    scans = [k for k in _store_kinds(t) if any(kind == "scan" for kind, _ in k)]
    assert scans and all(k[-1][0] == "scan" for k in scans), scans
    want = np.cumsum(x.astype(np.float64))
    assert (np.abs(t.numpy() - want) <= np.cumsum(np.abs(x)) * n * 2.0 ** -24 + 1e-6).all()
