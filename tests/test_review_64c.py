"""Review of cliff64 (threads by the work each thread gets): a full reduce's threads
(rules/thread_helpers.py's `threadable`) came from its iterations alone, where every other
threaded loop's come from its work (rules/parallel_helpers.py's `_work`: each load, and each
libm call as LIBM_LOADS loads). With the rule at two shares of the region's cost, a sum of
exp(x) over 1.5M values (6M loads of work) ran on one core while exp(x) of 600K (2.4M) took two
threads; against main (which threaded it from 1M iterations) it ran 0.28-0.70x (ab.py, three
runs; gelu's and tanh's sums 0.46-0.78x). Counted by work, against cliff64 unfixed (ab.py, 300
calls a round, 3 runs, load 9-10; same-C points 0.94x): exp's sums of 0.6-1.9M 1.04-1.22x, gelu's
of 1M 1.44x (fastest rounds' geomeans). Decisions read from the recorded actions on a faked
machine (the conftest's `fake_machine`), values against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions

from rulegrad import Tensor

COST = 1 << 14  # the faked region's cost, in loads


def _threaded(t: Tensor) -> bool:
    return any(a.startswith(("PARALLEL", "THREAD")) for k in kernel_actions(t) for a in k)


# n values: the elementwise loop's work is 4n (a load and an exp), the sum's iterations n
@pytest.mark.parametrize("n, threaded", [(7, False), (COST // 4 + 3, False),
                                         (COST // 2 + 7, True), (COST + 3, True),
                                         (3 * COST + 5, True)])
@pytest.mark.parametrize("fn", ["exp", "tanh"])
def test_a_reduce_of_libm_calls_takes_threads_as_its_elementwise_loop(fake_machine, n, threaded,
                                                                      fn):
    """fn(x) and fn(x).sum() weigh the same work (n loads and n libm calls): both take threads
    or neither. (n under two shares of the cost in iterations, but past it in work, ran the sum
    on one core.)"""
    fake_machine(2, COST)
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    ew, total = getattr(Tensor(x), fn)(), getattr(Tensor(x), fn)().sum()
    assert _threaded(ew) == threaded, kernel_actions(ew)
    assert _threaded(total) == threaded, kernel_actions(total)
    ref = getattr(np, fn)(x.astype(np.float64))
    np.testing.assert_allclose(ew.numpy(), ref, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(total.numpy(), ref.sum(), rtol=1e-5, atol=1e-5 * np.abs(ref).sum())


@pytest.mark.parametrize("nthreads", [2, 3, 4])
@pytest.mark.parametrize("n", [2 * COST + 3, 3 * COST + 5])
def test_a_plain_sum_still_counts_one_load_an_iteration(fake_machine, nthreads, n):
    """x.sum() (one load an iteration) and (x * 2 - 1).sum() (x loaded once an iteration):
    threaded from two shares of the region's cost in iterations, not from 1.5 of them, as
    before the fix."""
    fake_machine(nthreads, COST)
    x = np.random.default_rng(nthreads * n).standard_normal(n).astype(np.float32)
    for t, ref in ((Tensor(x).sum(), x.astype(np.float64).sum()),
                   ((Tensor(x) * 2 - 1).sum(), (x.astype(np.float64) * 2 - 1).sum())):
        assert _threaded(t), kernel_actions(t)
        np.testing.assert_allclose(t.numpy(), ref, rtol=1e-5, atol=1e-4 * np.abs(x).sum())
    short = Tensor(x[:3 * COST // 2 + 1]).sum()
    assert not _threaded(short), kernel_actions(short)
