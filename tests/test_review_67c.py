"""rev67c's review of narrow67: a product whose k the scheduler split into partials summed in
the same kernel is summed as one flat run (rules/pack_helpers.py's `_unnested_runs`), packed or
in plain loops. narrow67's tests read plain, contiguous operands; these read k strided, offset,
padded (a gated load), through a computed operand (a mask multiplied in), over a symbolic k
(stored at its maximum, the rows past it masked), in int32 and over a batch: each the nest
checked present (the path under test, the scheduler's choice) and numpy's values (a float64
reference), NaN and inf where numpy has them. Never timed.
The tests' machine is conftest's with a 512 KB L2, as tests/test_narrow67.py's."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

M, K, N = 7, 50000, 16


@pytest.fixture(autouse=True)
def half_mb_l2(monkeypatch):
    """A 512 KB L2, under which the scheduler splits these long k into partials in the reader's
    kernel (tests/test_narrow67.py's fixture); programs built afresh."""
    from rulegrad.backends.c import run
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "512K")
    run._programs.clear()
    yield
    run._programs.clear()


def _nested(t: Tensor) -> bool:
    return any(n.op is Ops.REDUCE and any(s.op is Ops.REDUCE for s in toposort(n.src[0]))
               for item in t.schedule() for n in toposort(item.ast))


def _rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def _agrees(t: Tensor, x: np.ndarray, w: np.ndarray) -> None:
    """t is x @ w (float64 reference) within a float32 sum's rounding over k terms; NaN and
    infinities exactly where numpy's are."""
    assert _nested(t)
    got = t.numpy().astype(np.float64)
    want = x.astype(np.float64) @ w.astype(np.float64)
    assert got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want))
    big = np.isinf(want)
    assert np.array_equal(got[big], want[big])
    fine = np.isfinite(want)
    got[~fine] = want[~fine] = 0  # (compared above)
    scale = np.abs(np.nan_to_num(x, posinf=0, neginf=0)).astype(np.float64) @ np.abs(w)
    assert np.all(np.abs(got - want)[fine] <= (4e-7 * x.shape[-1] * scale + 1e-9)[fine])


def _strided():
    x, w = _rand(M, 2 * K), _rand(K, N)
    return Tensor(x)[:, ::2] @ Tensor(w), x[:, ::2], w


def _offset():
    x, w = _rand(M, K + 3), _rand(K + 5, N)
    return Tensor(x)[:, 3:] @ Tensor(w)[5:], x[:, 3:], w[5:]


def _padded():
    x, w = _rand(M, K - 8), _rand(K, N)
    return Tensor(x).pad(((0, 0), (4, 4))) @ Tensor(w), np.pad(x, ((0, 0), (4, 4))), w


def _masked():
    x, w = _rand(M, K), _rand(K, N)
    keep = np.random.default_rng(3).random((M, K)) > 0.5
    return (Tensor(x) * Tensor(keep)) @ Tensor(w), x * keep, w


def _symbolic():
    x, w = _rand(M, K), _rand(K, N)
    n = Variable("n", 1, K).bind(K - 7)
    return (Tensor(x).shrink((None, (0, n))) @ Tensor(w).shrink(((0, n), None)),
            x[:, :K - 7], w[:K - 7])


def _batched():
    x, w = _rand(2, M, K), _rand(K, N)
    return Tensor(x) @ Tensor(w), x, w


def _infinite():
    x, w = _rand(M, K), _rand(K, N)
    x[0, 123], x[1, 40000], x[2, 7], x[2, 8] = np.nan, np.inf, np.inf, -np.inf
    return Tensor(x) @ Tensor(w), x, w


def _negative_zero():
    x, w = -np.zeros((M, K), np.float32), np.ones((K, N), np.float32)
    return Tensor(x) @ Tensor(w), x, w


CASES = {"strided": _strided, "offset": _offset, "padded": _padded, "masked": _masked,
         "symbolic": _symbolic, "batched": _batched, "nan_inf": _infinite,
         "negative_zero": _negative_zero}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_split_k_read_otherwise_is_numpys_product(case: str) -> None:
    """x @ w over a split k, x read strided, offset, padded, masked, over a symbolic k, batched,
    or holding NaN, inf and -0.0: numpy's values (the zeros' signs too)."""
    t, x, w = CASES[case]()
    _agrees(t, x, w)
    if case == "negative_zero":
        assert not np.signbit(t.numpy()).any()  # (-0.0 * 1 summed from +0.0: +0.0, numpy's)


def test_an_int32_split_k_is_numpys_product() -> None:
    """int32 x @ w over a split k: numpy's values exactly (an integer sum's order is free)."""
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, (M, K)).astype(np.int32)
    w = rng.integers(-3, 4, (K, N)).astype(np.int32)
    t = Tensor(x) @ Tensor(w)
    assert _nested(t)
    assert np.array_equal(t.numpy(), x @ w)
