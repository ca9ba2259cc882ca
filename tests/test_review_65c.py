"""Review of pack65 (rev65c): few-row `x @ w.T` kept as plain dots (rules/pack_helpers.py's
`_dot_cost`) and narrow y read in place (the `_last` register block).

A dot costs more than its k / lanes vector multiply-adds: each output's vector of partial sums is
summed across its lanes (and the chain waits on each step's latency), about a multiply-add per
lane. Costed without it, a short k over many columns ran as dots slower than main's packed
panels (CPU time per call, two threads, interleaved against main: 4x16x65536 0.53 vs 0.33 ms,
4x33x30011 0.40 vs 0.30, 3x9x100003 0.34 vs 0.29). Checked: the action's record and numpy's
values; never timed."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor


def _line(t: Tensor) -> str:
    return " | ".join(a for _, acts in optimized_kernels(t) for a in acts)


def _inputs(m: int, k: int, n: int):
    rng = np.random.default_rng(m * 131 + k * 7 + n)
    return (rng.standard_normal((m, k)).astype(np.float32),
            rng.standard_normal((n, k)).astype(np.float32))


def _close(got: np.ndarray, x: np.ndarray, w: np.ndarray) -> None:
    want = x.astype(np.float64) @ w.T.astype(np.float64)
    scale = np.abs(x).astype(np.float64) @ np.abs(w.T).astype(np.float64)
    assert np.all(np.abs(got - want) <= 4e-7 * x.shape[1] * scale + 1e-9)


@pytest.mark.parametrize("vector_bytes", ["32", "64"])
@pytest.mark.parametrize("m, k, n", [(4, 33, 30011), (4, 16, 65536), (3, 9, 100003)])
def test_short_dots_over_many_columns_are_packed(fake_machine, monkeypatch, vector_bytes: str,
                                                 m: int, k: int, n: int) -> None:
    """x @ w.T with a k of a few vectors or less and many columns: each dot's sum across the
    lanes outweighs its multiply-adds; packed as before pack65, numpy's values."""
    fake_machine(2, 1 << 20)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    x, w = _inputs(m, k, n)
    t = Tensor(x) @ Tensor(w).T
    assert "PACK" in _line(t), _line(t)
    _close(t.numpy(), x, w)


@pytest.mark.parametrize("vector_bytes", ["32", "64"])
@pytest.mark.parametrize("m, k, n", [(4, 256, 4096), (2, 2048, 512), (4, 4096, 64),
                                     (3, 1024, 1024), (2, 100003, 13)])
def test_long_dots_stay_dots(fake_machine, monkeypatch, vector_bytes: str, m: int, k: int,
                             n: int) -> None:
    """The dots pack65 measured faster (k of 256 or more: 4x256x4096 0.19 vs main's 0.32 ms,
    2x2048x2048 0.57 vs 1.25) keep their plain loops at either vector width."""
    fake_machine(2, 1 << 20)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    x, w = _inputs(m, k, n)
    t = Tensor(x) @ Tensor(w).T
    assert "PACK" not in _line(t) or "TILED DOTS" in _line(t), _line(t)  # (dots, plain or tiled)
    _close(t.numpy(), x, w)
