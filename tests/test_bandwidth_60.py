"""Long rows, few of them (issue 33): a reduction of 3 rows of a million values on 2 threads
shares them evenly (rangeify.rules' `partials_apart`, `split_tail`): its split's partials, rows x
parts, in a kernel of their own, a prime length as parts and a tail. Before, the rows were the
one threaded loop: 2 rows on one thread, 1 on the other.

The threads are read from the optimizer's actions (DEBUG=2's list: which loops are threaded and
over how many iterations, never a time); values against numpy: max and min bit for bit (NaN,
-0.0 below +0.0, infinities), a float sum within the reduction contract, logsumexp and softmax
against float64 numpy, with NaN, +inf and all -inf rows. Shapes: prime lengths (1000003,
999983, 7 x 199999), a length the scheduler splits by a divisor (1000000), a row count
the threads divide (4: not split), and too little work to thread (3 x 40009).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import kernel_actions
from special_values import assert_same_bits, sprinkled

from rulegrad import Tensor
from rulegrad.runtime import semantics
from rulegrad.runtime.ops import Ops

# (rows, length): few long rows the threads (2, conftest) would share unevenly
UNEVEN = [(3, 1000003), (5, 999983), (3, 1000000), (7, 299993)]  # (each past two region costs)


def _threaded(actions: list[str]) -> list[int]:
    """The iterations of each PARALLEL action in a kernel's actions."""
    return [int(m.group(1)) for a in actions for m in [re.search(r"^PARALLEL .*?\((\d+) it", a)]
            if m]


def _even(n: int, threads: int = 2) -> bool:
    """Whether n iterations split across the threads with at most 1/8 idle: evenly, or at
    least 8 each (pack_helpers' `balanced`, PARALLEL_SHARES)."""
    return n % threads == 0 or n >= 8 * threads


@pytest.mark.parametrize("shape", UNEVEN, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", ["sum", "max", "logsumexp"])
def test_few_long_rows_share_the_threads_evenly(shape, op):
    x = Tensor(np.zeros(shape, np.float32))
    t = getattr(x, op)(-1)
    kernels = kernel_actions(t)
    # the kernel that reads the rows whole (one per pass over them: max, then the sum of exps)
    # is threaded over iterations that the 2 threads share evenly
    reading = [k for k in kernels if _threaded(k)]
    assert reading, kernels
    for k in reading:
        assert all(_even(n) for n in _threaded(k)), k
    # and the threaded kernels cover the rows' values: no pass left on one thread
    passes = 2 if op == "logsumexp" else 1
    assert len(reading) >= passes, kernels


def test_rows_the_threads_divide_keep_their_one_loop():
    # 4 rows on 2 threads share them evenly as they are: no split, one kernel
    kernels = kernel_actions(Tensor(np.zeros((4, 1000003), np.float32)).sum(-1))
    assert len(kernels) == 1 and _threaded(kernels[0]) == [4], kernels
    # too little work to thread at all: one kernel, no threads
    kernels = kernel_actions(Tensor(np.zeros((3, 40009), np.float32)).sum(-1))
    assert len(kernels) == 1 and not _threaded(kernels[0]), kernels


def _sum_bound(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the exact sum (float64) and the reduction contract's bound, (n + 1) eps sum|x|."""
    exact = x.astype(np.float64).sum(-1)
    eps = np.finfo(x.dtype).eps / 2
    return exact, (x.shape[-1] + 1) * eps * np.abs(x.astype(np.float64)).sum(-1)


@pytest.mark.parametrize("shape", UNEVEN, ids=lambda s: "x".join(map(str, s)))
def test_a_sum_of_few_long_rows_is_within_the_contract(shape):
    x = np.random.default_rng(shape[1]).standard_normal(shape).astype(np.float32)
    x[:, -1] = 1e6  # the tail's last value: a sum without its tail is off by far more
    got = Tensor(x).sum(-1).numpy()
    exact, bound = _sum_bound(x)
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound), np.abs(got - exact) / bound


@pytest.mark.parametrize("shape", UNEVEN, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", ["max", "min"])
def test_a_max_of_few_long_rows_keeps_every_bit(shape, op):
    x = sprinkled(shape, np.float32, shape[0] + shape[1],
                  (np.nan, -0.0, 0.0, np.inf, -np.inf), share=1 << 16, least=4)
    x[0] = np.where(np.isfinite(x[0]), x[0], 0.0)  # a row without NaN or infinities
    x[0, -1] = 50.0 if op == "max" else -50.0  # its extreme in the tail (the last n % 256)
    x[1] = -0.0  # a row of zeros: -0.0 with one +0.0 in the tail
    x[1, -2] = 0.0
    got = getattr(Tensor(x), op)(-1).numpy()
    o = Ops.MAX if op == "max" else Ops.MIN
    want = np.asarray(semantics.reduce(o, x, (1,), -np.inf if op == "max" else np.inf),
                      np.float32)
    assert_same_bits(got, want.reshape(got.shape))


def _lse64(x: np.ndarray) -> np.ndarray:
    """logsumexp in float64 (numpy), -inf for a row of -inf, inf for a row with +inf."""
    x = x.astype(np.float64)
    m = x.max(-1, keepdims=True)
    m = np.where(np.isinf(m), 0.0, m)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return (np.log(np.exp(x - m).sum(-1, keepdims=True)) + m)[..., 0]


@pytest.mark.parametrize("shape", UNEVEN, ids=lambda s: "x".join(map(str, s)))
def test_logsumexp_and_softmax_of_few_long_rows_are_numpys(shape):
    rng = np.random.default_rng(shape[0])
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    x[0, -1] = 30.0  # the row's max in its tail
    x[1] = -np.inf  # a row of -inf: logsumexp -inf, softmax NaN (0 / 0, as torch's)
    x[2, 7] = np.inf  # a row with +inf: logsumexp +inf
    if shape[0] > 3:
        x[3, 11] = np.nan
    got = Tensor(x).logsumexp(-1).numpy()
    want = _lse64(x)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-6, atol=0)
    ok = x[[0] + list(range(4, shape[0]))]  # the rows of finite values
    s = Tensor(ok).softmax(-1).numpy()
    e = np.exp(ok.astype(np.float64) - ok.max(-1, keepdims=True))
    # a float32 sum of a million exps rounds by some 5e-5 of it (the same before the split):
    # within the reduction contract's (n + 1) eps; a lost tail (row 0's max, whose exp is most
    # of its sum) is off by far more
    np.testing.assert_allclose(s, e / e.sum(-1, keepdims=True), rtol=1e-3, atol=1e-12)
