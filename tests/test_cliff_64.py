"""Threads by the work each thread gets (issue 32): a loop nest or a full reduce takes threads
only when two threads' shares of its work each pay for the parallel region (rules/
pack_helpers.py's `region_threads`, the model the products' threads come from: each share at
least runtime/target.py's PARALLEL_MIN_WORK), and a load the compiler hoists out of the inner
loops counts once per loop it reads. A launched region wakes no more threads than it has
iterations (backends/c/launch.py). Decisions read from the recorded actions on a faked machine
(the conftest's `fake_machine`: the threads, the region's cost), never timed; values against
numpy."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions

from rulegrad import Tensor
from rulegrad.backends.c.build import build_library
from rulegrad.backends.c.render import RenderedKernel
from rulegrad.runtime.dtype import dtypes

COST = 1 << 14  # the faked region's cost, in loads: small arrays cross it


def _parallel(t: Tensor) -> bool:
    return any(a.startswith(("PARALLEL", "THREAD")) for k in kernel_actions(t) for a in k)


# elements of a one-load loop: under two shares of the cost (1.5x), just over (2x + a prime),
# well over (3x); tiny and prime sizes too
@pytest.mark.parametrize("nthreads", [2, 4])
@pytest.mark.parametrize("n, threaded", [(7, False), (3 * COST // 2 + 1, False),
                                         (2 * COST + 3, True), (3 * COST + 5, True),
                                         (100003, True)])
def test_a_loop_takes_threads_when_each_share_pays(fake_machine, nthreads: int, n: int,
                                                   threaded: bool) -> None:
    """x * 2 + 1 (one load an element) and a full sum of x: threaded from 2x the region's
    cost, not from 1x (1.5x the cost took two threads, each 0.75x of a region's cost)."""
    fake_machine(nthreads, COST)
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    ew, total = Tensor(x) * 2 + 1, Tensor(x).sum()
    assert _parallel(ew) == threaded, kernel_actions(ew)
    assert _parallel(total) == threaded, kernel_actions(total)
    np.testing.assert_array_equal(ew.numpy(), x * 2 + 1)
    np.testing.assert_allclose(total.numpy(), x.astype(np.float64).sum(), rtol=1e-5,
                               atol=1e-5 * np.abs(x).sum())


@pytest.mark.parametrize("m, k, threaded", [(1, 3 * COST // 2, False), (3, COST // 2 + 1, False),
                                            (7, COST // 4 + 3, False), (5, COST // 2 + 3, True),
                                            (2, 2 * COST + 1, True)])
def test_a_hoisted_load_counts_once_per_row(fake_machine, m: int, k: int, threaded: bool) -> None:
    """x (m, k) times s (m, 1): s[i] is read once per row (hoisted out of the row's loop), so
    the work is m*k + m loads, not 2*m*k (3 x 8193 counted 49K and took two threads for 24K
    values)."""
    fake_machine(2, COST)
    rng = np.random.default_rng(m * k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    s = rng.standard_normal((m, 1)).astype(np.float32)
    t = Tensor(x) * Tensor(s)
    assert _parallel(t) == threaded, kernel_actions(t)
    np.testing.assert_array_equal(t.numpy(), x * s)


@pytest.mark.parametrize("cost, threaded", [(1 << 20, False), (1 << 18, True)])
@pytest.mark.parametrize("k, n", [(200, 8192), (640, 2560), (211, 7919)])
def test_one_row_products_of_equal_work_decide_alike(fake_machine, cost: int, threaded: bool,
                                                     k: int, n: int) -> None:
    """1x200x8192 (a product interchanged in blocks of columns, x[k] read once per k) and
    1x640x2560 (a streamed row), both 1.6M multiply-adds: one core at a region cost of 1M
    (0.8M a thread on two), two threads at 256K. 1x200x8192 counted x[k] per column (3.3M
    loads) and took two threads at 1M."""
    fake_machine(2, cost)
    rng = np.random.default_rng(k + n)
    x = rng.standard_normal((1, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    t = Tensor(x) @ Tensor(w)
    assert _parallel(t) == threaded, kernel_actions(t)
    np.testing.assert_allclose(t.numpy(), x.astype(np.float64) @ w, rtol=1e-4,
                               atol=1e-5 * k * np.abs(x).max() * np.abs(w).max())


# a launched kernel that records the team that ran it (OpenMP's count, the same for every share)
# and the iterations it ran
TEAM = r"""
int omp_get_num_threads(void);
void rg_record_team(void *const *args, int64_t lo, int64_t hi)
{
  __atomic_store_n((int64_t *)args[0], (int64_t)omp_get_num_threads(), __ATOMIC_SEQ_CST);
  __atomic_add_fetch((int64_t *)args[0] + 1, hi - lo, __ATOMIC_SEQ_CST);
}
"""


@pytest.mark.parametrize("nthreads", [3, 4])
@pytest.mark.parametrize("iterations", [1, 2, 3, 1000])
def test_a_launch_wakes_no_idle_thread(monkeypatch, nthreads: int, iterations: int) -> None:
    """A launch of fewer iterations than threads runs a team of as many threads as iterations
    (2 blocks on a team of 4 woke 2 threads with nothing to do); every iteration runs once."""
    from rulegrad.backends.c import threads

    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    x = np.arange(1 << 22, dtype=np.float32)  # a threaded program: the setting applied
    np.testing.assert_array_equal((Tensor(x) * 2).numpy(), x * 2)
    assert threads.max_threads() == nthreads
    lib = build_library([RenderedKernel("rg_record_team", TEAM, 1, (dtypes.int64,))])
    fn = lib.function("rg_record_team", 1, launch=iterations)
    seen = np.zeros(2, dtype=np.int64)
    fn(seen.ctypes.data)
    assert seen[1] == iterations
    assert seen[0] == min(iterations, nthreads)
