"""opt.rules' split_reduce (rules/thread_helpers.py's `blocked`): a full reduction over one loop
of any length, a prime one included, is T blocks of B values and a peeled tail, so that its
blocks take both threads and each block vectors.

The threads are counted from the applied actions (`DEBUG=2`'s list, backends/c/opt.py's
`actions`) and the launched C (never timed); the values against numpy: max and min bit for bit
(NaN, and -0.0 ordered below +0.0: runtime/semantics.py's reduce), a float sum within the
reduction contract's bound, an int sum exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from special_values import assert_same_bits, sprinkled

from rulegrad import Tensor
from rulegrad.backends.c import run
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import semantics, target
from rulegrad.runtime.ops import Ops

NAMES = {"sum": "ADD", "max": "MAX", "min": "MIN"}


@pytest.fixture
def low_threshold(monkeypatch):
    """Two threads from 4096 iterations (a region's cost of 2048 each share pays for,
    pack_helpers' `region_threads`: what a search may choose on a machine where threads pay
    sooner than the heuristic's 1M), with programs built afresh (the table keys programs by
    their kernels, not by this constant)."""

    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 2048)
    run._programs.clear()
    yield
    run._programs.clear()


def _kernel(t: Tensor):
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    return actions(opt), render_kernel(opt, "k")


def _check(op: str, x: np.ndarray, got: np.ndarray) -> None:
    if op == "sum" and x.dtype.kind == "f":  # the reduction contract: (n - 1) eps sum |x|
        exact = x.astype(np.float64).sum()
        eps = np.finfo(x.dtype).eps / 2
        bound = (x.size - 1) * eps * np.abs(x.astype(np.float64)).sum() + abs(exact) * 2 * eps
        assert abs(float(got) - exact) <= bound
    elif op == "sum":
        assert got.dtype == x.sum().dtype and int(got) == int(x.sum())  # (numpy's int64)
    else:
        o = Ops.MAX if op == "max" else Ops.MIN
        ident = -np.inf if op == "max" else np.inf
        ref = semantics.reduce(o, x, tuple(range(x.ndim)), ident) if x.dtype.kind == "f" \
            else getattr(x, op)()
        assert_same_bits(np.atleast_1d(got), np.atleast_1d(np.asarray(ref, x.dtype)).reshape(-1))


def _blocks(n: int) -> tuple[int, int]:
    """The blocks and their length that `blocked` gives n values (256 blocks of whole steps
    of 4 vectors of 8; 32 for short loops), computed here from the documented rule."""
    block = max(32, n // 256 // 32 * 32)
    return n // block, block


def _data(n: int, dt, op: str, seed: int) -> np.ndarray:
    if np.dtype(dt).kind == "i":
        return np.random.default_rng(seed).integers(-2**31, 2**31, n).astype(dt)
    if op == "sum":
        return np.random.default_rng(seed).standard_normal(n).astype(dt)
    return sprinkled((n,), dt, seed, (np.nan, -0.0, 0.0, np.inf, -np.inf), share=4096, least=3)


@pytest.mark.parametrize("n", [1000003, 999983, 65537, 7919])
@pytest.mark.parametrize("dt, op", [(np.float32, "sum"), (np.float32, "max"),
                                    (np.float32, "min"), (np.int32, "sum"), (np.float64, "max")])
def test_prime_full_reduce_is_blocks_on_threads_and_vectors(low_threshold, n, dt, op):
    x = _data(n, dt, op, seed=n % 97)
    t = getattr(Tensor(x), op)()
    taken, rk = _kernel(t)
    count, block = _blocks(n)
    tail = f" + a tail of {n - count * block}" if n % block else ""
    assert f"SPLIT {NAMES[op]} over r0 ({n} values) into r1 x r0 ({count} blocks of " \
           f"{block}{tail})" in taken
    # both cores: the blocks are the threads' loop (one loop of n single-value slots before)
    assert [a for a in taken if a.startswith("THREAD")] == \
        [f"THREAD {NAMES[op]} over r1 ({count} iterations)"]
    if dt is np.float32:  # and each block keeps vectors of partial results
        assert any(a.startswith(f"VECTOR {NAMES[op]} over r0 ({block} values") for a in taken)
    _check(op, x, t.numpy())


def test_prime_full_reduce_over_1m_values_threads_by_default():
    # past the heuristic's threshold (two threads' shares of 1M) a prime length threaded its one
    # loop as slots of one value, with no loop left to vectorize; now 256 blocks of 8192 and a
    # tail of 17
    x = np.random.default_rng(3).standard_normal(2097169).astype(np.float32)
    t = Tensor(x).sum()
    taken, rk = _kernel(t)
    assert "THREAD ADD over r1 (256 iterations)" in taken
    assert "VECTOR ADD over r0 (8192 values: 4 vectors of 8 partial results)" in taken
    assert rk.launch == 256
    _check("sum", x, t.numpy())


@pytest.mark.parametrize("op, tail_value, rest", [("max", np.nan, 1.0), ("max", 0.0, -0.0),
                                                  ("min", -0.0, 0.0), ("min", np.nan, -1.0),
                                                  ("max", 5.0, 1.0)])
def test_the_peeled_tail_is_combined_with_the_blocks(low_threshold, op, tail_value, rest):
    # the decisive value sits only in the tail (the last n - T*B values): a NaN, a zero whose
    # sign orders it above (below) the blocks' zeros, a plain largest value
    n = 7919
    count, block = _blocks(n)
    x = np.full(n, rest, np.float32)
    x[count * block + 3] = tail_value
    t = getattr(Tensor(x), op)()
    taken, _ = _kernel(t)
    assert any(a.startswith("SPLIT") and a.endswith(f"a tail of {n - count * block})")
               for a in taken)
    _check(op, x, t.numpy())


def test_prime_dot_product_and_2d_reduce_use_both_cores(low_threshold):
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(999983).astype(np.float32) for _ in range(2))
    t = (Tensor(a) * Tensor(b)).sum()
    taken, _ = _kernel(t)
    count, _ = _blocks(999983)
    assert f"THREAD ADD over r1 ({count} iterations)" in taken
    _check("sum", a * b, t.numpy())  # (a fused product is nearer: within the same bound)
    # a 2-D array with prime sides keeps its rows as the threads' loop (no split needed)
    x = rng.standard_normal((1009, 997)).astype(np.float32)
    t = Tensor(x).max()
    taken, _ = _kernel(t)
    assert "THREAD MAX over r0 (1009 iterations)" in taken
    _check("max", x, t.numpy())


def test_a_loop_with_a_reduce_inside_or_too_little_work_is_not_split():
    # the scheduler's own split (256 x 8192) already has its blocks; 5000 values are one core's
    for t in (Tensor(np.ones(1 << 21, np.float32)).sum(), Tensor(np.ones(5003, np.float32)).sum()):
        taken, _ = _kernel(t)
        assert not any(a.startswith("SPLIT") for a in taken)
