"""Review of gemv63 (few-row products' threads from the cost of a parallel region,
rules/pack_helpers.py's `region_threads`): the rule held for y read in place (a streamed PACK, a
one-row interchange) but not for the same product with y read transposed (`x @ w.T`, a weight
stored (out, in): packed panels, split across the threads whatever their shares' work). The
threads' decision is checked in the recorded actions against the machine's facts faked (the
threads, the region's cost: runtime/target.py's PARALLEL_MIN_WORK), never timed; values against
numpy in float64, ints bit for bit."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from optimizer_actions import kernel_actions

from rulegrad import Tensor
from rulegrad.runtime import target


def _close(got: np.ndarray, want: np.ndarray, k: int, scale: float) -> None:
    """Within a float32 sum's rounding over k terms of size `scale` (each output's |x| |w|)."""
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=4e-7 * k * scale + 1e-6)


# (m, k, n): one row tile (m <= 6) of 1M-2M multiply-adds, y (out, in) read transposed, packed
# here (pack_helpers' `_dot_cost` made infinite): the heuristic keeps them as plain dots since
# dot66, 1.05-1.5x faster, as it has 2x640x1000 and 3x400x1100 since pack65
@pytest.mark.parametrize("m, k, n", [(5, 256, 1000), (5, 300, 1100), (6, 250, 1000)])
def test_transposed_weight_few_rows_pay_for_the_region(fake_machine, monkeypatch, m: int, k: int,
                                                       n: int) -> None:
    """`x @ w.T` of one row tile (packed panels, not streamed: y is read across its rows) takes
    threads only where each thread's share of the multiply-adds pays for a parallel region, as
    `x @ w` of the same shape does: on two threads at a region cost of 1M (under 1M a thread)
    one core, at a quarter of the work two threads over the panels. Had split its panels at any
    work past the cost (3x400x1100 on two threads at 1M: 0.66M a thread)."""
    from rulegrad.rules import pack_helpers

    monkeypatch.setattr(pack_helpers, "_dot_cost", lambda st, reds: math.inf)
    rng = np.random.default_rng(m * k + n)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    work = m * k * n
    assert 1 << 20 <= work < 2 << 20
    want = np.maximum(x.astype(np.float64) @ w.T.astype(np.float64) + b, 0)
    for cost, threaded in ((1 << 20, False), (work // 4, True)):
        fake_machine(2, cost)
        t = (Tensor(x) @ Tensor(w).T + Tensor(b)).relu()
        (pack,) = [a for a in kernel_actions(t)[-1] if a.startswith("PACK")]
        assert "streamed" not in pack, pack
        assert ("PARALLEL" in pack) == threaded, (pack, cost)
        # y (w.T) as plain (k, n): streamed, the same decision
        (plain,) = [a for a in kernel_actions(Tensor(x) @ Tensor(np.ascontiguousarray(w.T)))[-1]
                    if a.startswith("PACK")]
        assert "PARALLEL" not in plain or threaded, (plain, cost)
        _close(t.numpy(), want, k, np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("nthreads", [3, 4])
@pytest.mark.parametrize("cost", [1 << 18, 1 << 20])
@pytest.mark.parametrize("k, n", [(1024, 3001), (512, 4096), (700, 2053), (127, 4099)])
def test_one_row_blocks_cover_the_row_once_per_paid_thread(fake_machine, nthreads: int, cost: int,
                                                           k: int, n: int) -> None:
    """A product of one row in blocks shared by the threads (uneven: 3 threads over a prime
    width) has exactly as many threads' shares as its facts give (the threads, each share half
    a page of the row or more, each a region's cost of multiply-adds or more), as many blocks
    for each, the blocks covering the row with less than one block over (the last one ending at
    the row's end), and numpy's values. From the facts, not from the program's own numbers."""
    fake_machine(nthreads, cost)
    rng = np.random.default_rng(k * n + nthreads)
    x = rng.standard_normal((1, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    t = Tensor(x) @ Tensor(w)
    acts = " ".join(kernel_actions(t)[-1])
    used = min(nthreads, n * 4 * 2 // target.page_bytes(), k * n // cost)
    found = re.search(r"in (\d+) blocks of (\d+)", acts)
    if used <= 1 and n <= 4096:
        assert "PARALLEL" not in acts, (acts, used)
    elif used <= 1:  # (wider than the accumulators: its own blocks, parallel_helpers' threads)
        assert found is not None and int(found.group(2)) <= 4096, acts
        count, block = map(int, found.groups())
        assert (count - 1) * block < n <= count * block, acts
    else:
        assert found is not None, (acts, used)
        count, block = map(int, found.groups())
        assert count % used == 0 and count <= max(used, -(-n // 4096)), (acts, used)
        assert (count - 1) * block < n <= count * block, acts
        assert f"({count} iterations)" in acts, acts
    _close(t.numpy(), x.astype(np.float64) @ w, k, np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("transposed", [False, True])
def test_batched_few_rows_pay_per_region(fake_machine, transposed: bool) -> None:
    """Three 2x640x1280 products (4.9M multiply-adds, a batch the two threads would share 2:1).
    A team over each product's panels is a region of its own per batch iteration, each
    thread's share 0.8M: under a region cost of 1M that never pays (it had streamed y in runs
    for two threads woken three times), but the batch, one region of the whole work, does: the
    threads take whole products (`PARALLEL batch`, team65's model: two shares of the work each
    pay). At a cost of 4M nothing pays: one core; at 256K each product's panels do."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 2, 640)).astype(np.float32)
    w = rng.standard_normal((3, 640, 1280)).astype(np.float32)
    want = x.astype(np.float64) @ w
    for cost, threads in ((1 << 22, None), (1 << 20, "PARALLEL batch"),
                          (1 << 18, "PARALLEL panels")):
        fake_machine(2, cost)
        wt = Tensor(np.ascontiguousarray(w.transpose(0, 2, 1))).transpose(1, 2) if transposed \
            else Tensor(w)
        t = Tensor(x) @ wt
        (pack,) = [a for a in kernel_actions(t)[-1] if a.startswith("PACK")]
        assert (threads in pack) if threads else ("PARALLEL" not in pack), (pack, cost)
        _close(t.numpy(), want, 640, np.abs(x).max() * np.abs(w).max())
