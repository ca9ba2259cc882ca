"""Products of few rows (GEMV at batch 1, 2, 3, 7) take threads only where each thread's share of
the multiply-adds pays for a parallel region (rules/pack_helpers.py's `region_threads`: the
region's cost is runtime/target.py's PARALLEL_MIN_WORK). Faked machine facts (the threads, the
region's cost) move the decision: checked in the recorded actions (DEBUG=2's lines), never
timed; values against numpy in float64 within a float32 sum's rounding, ints bit for bit."""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import kernel_actions

from rulegrad import Tensor
from rulegrad.runtime import target

# (m, k, n): batch 1, 2, 3, 7; k and n tiny, prime, tall, skinny, wide
SHAPES = [(1, 3, 5), (1, 127, 4099), (1, 4096, 7), (1, 640, 2560), (1, 1024, 2560),
          (1, 2048, 1031), (2, 100003, 5), (2, 640, 2560), (3, 640, 2560), (7, 2048, 512),
          (3, 50021, 2), (2, 1021, 1500)]


def _threads(acts: list[str]) -> int:
    """The threads the product's action shares it among: the blocks a threaded one-row product
    runs (each thread as many), or 2+ for a packed product's threaded panels; 1 without."""
    if not any(a.startswith("PARALLEL") or ", PARALLEL" in a for a in acts):
        return 1
    found = re.search(r"PARALLEL r\d+ \((\d+) iterations\)", " ".join(acts))
    return int(found.group(1)) if found else 2


def _close(got: np.ndarray, want: np.ndarray, k: int, scale: float) -> None:
    """Within a float32 sum's rounding over k terms of size `scale` (each output's |x| |w|)."""
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=4e-7 * k * scale + 1e-6)


@pytest.mark.parametrize("nthreads", [2, 4])
@pytest.mark.parametrize("cost", [1 << 18, 1 << 20, 1 << 22])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_threads_pay_for_the_region(fake_machine, nthreads: int, cost: int, m: int, k: int,
                                    n: int) -> None:
    """A product of one row tile (a row's columns in blocks; a streamed PACK's panels) takes no
    more threads than its multiply-adds give each a region's cost: one core where two threads'
    shares are under it. The cost moves the decision: 1x640x2560 (1.6M multiply-adds) is
    threaded at a cost of 256K and not at 1M. (Products threaded over their rows or tiles, and
    a row wider than the accumulators in blocks of its own, take the plain loops' threads:
    parallel_helpers', from PARALLEL_MIN_WORK in all.)"""
    fake_machine(nthreads, cost)
    rng = np.random.default_rng(m * k + n)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    t = Tensor(x) @ Tensor(w)
    acts = kernel_actions(t)[-1]
    if (m == 1 and n <= 4096) or any("streamed" in a for a in acts):
        assert _threads(acts) <= max(1, m * k * n // cost), (acts, cost)
    _close(t.numpy(), x.astype(np.float64) @ w, k, np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_one_row_product_threads_move_with_the_cost(fake_machine, monkeypatch,
                                                    scheduler: str) -> None:
    """1x640x2560 with a bias and relu, both schedulers: on two threads at a region cost of 1M
    multiply-adds (0.8M a thread) it runs on one core, at 256K in two blocks of 1280."""
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 640)).astype(np.float32)
    w = rng.standard_normal((640, 2560)).astype(np.float32)
    b = rng.standard_normal(2560).astype(np.float32)
    want = np.maximum(x.astype(np.float64) @ w + b, 0)
    for cost, threaded in ((1 << 20, False), (1 << 18, True)):
        fake_machine(2, cost)
        t = (Tensor(x) @ Tensor(w) + Tensor(b)).relu()
        acts = kernel_actions(t)[-1]
        assert any(a.startswith("PARALLEL") for a in acts) == threaded, (acts, cost)
        assert ("in 2 blocks of 1280" in " ".join(acts)) == threaded, (acts, cost)
        _close(t.numpy(), want, 640, np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("m, k, n", [(2, 640, 2560), (3, 640, 2560), (2, 1021, 1500)])
def test_streamed_product_threads_move_with_the_cost(fake_machine, m: int, k: int, n: int) -> None:
    """A streamed few-row product (PACK, y read in place) shares its panels at a region cost
    its work per thread pays, and runs on one core at a cost above it; float16 and int8 with
    wrap keep their values either way (numpy's, bit for bit for ints)."""
    rng = np.random.default_rng(m + k + n)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    work = m * k * n
    for cost in (work // 4, work):
        fake_machine(2, cost)
        t = Tensor(x) @ Tensor(w)
        (pack,) = [a for a in kernel_actions(t)[-1] if a.startswith("PACK")]
        assert ("PARALLEL" in pack) == (work // cost >= 2 and n * 4 * 2 >= target.page_bytes()), \
            (pack, cost)
        _close(t.numpy(), x.astype(np.float64) @ w, k, np.abs(x).max() * np.abs(w).max())
        xi = rng.integers(-128, 128, (m, k)).astype(np.int8)
        wi = rng.integers(-128, 128, (n, k)).astype(np.int8)
        got = (Tensor(xi) @ Tensor(wi).T).numpy()
        assert np.array_equal(got, (xi.astype(np.int64) @ wi.T.astype(np.int64)).astype(np.int8))
        xh, wh = x.astype(np.float16), w.astype(np.float16)
        got16 = (Tensor(xh) @ Tensor(wh)).numpy().astype(np.float64)
        want16 = xh.astype(np.float64) @ wh.astype(np.float64)
        # float16 output: its own rounding (half an ulp) on top of the float32-accumulated sum's
        np.testing.assert_allclose(got16, want16, rtol=2e-3,
                                   atol=4e-7 * k * np.abs(want16).max() + 1e-2)
