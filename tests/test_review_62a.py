"""rev62a's review of gemv62 (few-row products from machine facts).

A streamed product's row is shared among threads whose shares are half a page or more
(rules/pack_helpers.py's STREAM_SHARE, measured: the busiest thread's CPU time per call 0.34-0.91x
that of one core reading whole rows where each share is between half a page and a page), and
stream_width's runs keep their promises over every shape, not the five the tests named."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.rules.pack_helpers import stream_threads, stream_width
from rulegrad.runtime.target import page_bytes


def _pack(t: Tensor) -> str:
    (pack,) = [s for s in actions(optimize_kernel(lower_only(t.schedule()[-1].ast)))
               if s.startswith("PACK")]
    return pack


@pytest.mark.parametrize("m, k, n", [(6, 512, 1500), (2, 700, 1500), (5, 1024, 2047),
                                     (3, 1024, 1031)])
def test_shares_of_half_a_page_run_on_two_threads(monkeypatch, m: int, k: int, n: int) -> None:
    """Each of two threads' shares between half a page and a page of float32 columns: two
    threads, one run each (6x512x1500 had run on one core, 0.060 ms of its CPU a call; on two
    0.043 the busier thread's)."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")
    assert page_bytes() // 8 <= n // 2 < page_bytes() // 4  # (the shapes this checks)
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    t = Tensor(x) @ Tensor(w)
    pack = _pack(t)
    assert "PARALLEL" in pack, pack
    run = int(pack.split("streamed ")[1].split(" columns")[0])
    assert -(-n // run) == 2, pack
    np.testing.assert_allclose(t.numpy(), x.astype(np.float64) @ w, rtol=1e-4,
                               atol=1e-5 * k)


def test_quarter_page_shares_stay_on_one_core(monkeypatch) -> None:
    """2x2048x512: each of two threads' shares a quarter page (runs of 32 columns had taken 0.09
    ms on two threads, 0.047 on one core)."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 2048), np.float32), rng.standard_normal((2048, 512), np.float32)
    assert "PARALLEL" not in _pack(Tensor(x) @ Tensor(w))


@pytest.mark.parametrize("l1", ["32K", "48K", "64K"])
@pytest.mark.parametrize("itemsize, panel", [(4, 16), (4, 32), (8, 16)])
def test_stream_width_over_every_shape(monkeypatch, l1: str, itemsize: int, panel: int) -> None:
    """Over rows 1-7, every width up to 6000 and 1-4 threads: whole panels; the runs' sums fit
    half the L1 (or a run is one panel); with threads, each thread's share half a page or
    more, and a run under a page only where the threads' one run each or the L1 make it so
    (2x3136 on two threads had run in 4 runs of 800 columns, ceil(98 panels / 32): 2 of 1568,
    their sums in a quarter of a 48 KB L1, took the busier thread 0.93-0.98x the CPU); a run
    never wider than the row's panels."""
    monkeypatch.setenv("RULEGRAD_L1_BYTES", l1)
    half_l1, least = (int(l1[:-1]) << 10) // 2, page_bytes() // 2
    for rows in range(1, 8):
        for columns in range(panel + 1, 6000, 3):
            for nthreads in (1, 2, 3, 4):
                run = stream_width(rows, itemsize, columns, panel, nthreads)
                used = stream_threads(columns, itemsize, nthreads)
                case = (rows, columns, nthreads, run)
                assert run % panel == 0 and run < columns + panel, case
                assert run == panel or rows * run * itemsize <= half_l1, case
                assert used == 1 or columns * itemsize // used >= least, case
                runs = -(-columns // run)
                if used > 1 and run * itemsize < page_bytes() and runs > used:
                    # (a run under a page only where fewer, wider runs' sums would not fit)
                    wider = -(-columns // panel // (runs - used)) * panel
                    assert rows * wider * itemsize > half_l1, case


@pytest.mark.parametrize("k, n, blocks", [(2048, 1500, "2 blocks of 750"),
                                          (2048, 1031, "2 blocks of 520"), (2048, 512, None)])
def test_one_row_shares_of_half_a_page(monkeypatch, k: int, n: int, blocks: str | None) -> None:
    """A product of one row on two threads shares its columns where each block is half a page
    or more, as a streamed product's (1x2048x1500 had run on one core: 0.134 ms of its CPU a
    call; in 2 blocks of 750, 0.084 the busier thread's); a quarter page (512 columns, 0.052
    on two threads against 0.037 on one) stays whole."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((1, k), np.float32), rng.standard_normal((k, n), np.float32)
    t = Tensor(x) @ Tensor(w)
    (inter,) = [s for s in actions(optimize_kernel(lower_only(t.schedule()[-1].ast)))
                if s.startswith("INTERCHANGE")]
    if blocks is None:
        assert "blocks" not in inter, inter
    else:
        assert blocks in inter, inter
    np.testing.assert_allclose(t.numpy(), x.astype(np.float64) @ w, rtol=1e-4, atol=1e-5 * k)
