"""rev42b's review of this round's kernel changes (issue 31: no silent wrong answers), against
torch and numpy. What was tried and found right is listed in docs/testing.md's rev42b section.

- A float16 cumsum/cumprod over an axis longer than 2 * SCAN_BLOCK (a blocked scan,
  runtime/tensor_ops.py `_scan_blocks`) rounded each block's scan, the blocks' totals and
  their scan to float16 before adding them: a cumsum of 2000 float16 values was 1540 ulps off
  torch's (which, like our pooled scan and every float16 reduce, accumulates in float32 and
  rounds once). The blocked scan of float16 now runs in float32 and rounds once.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor


def ulps(got: np.ndarray, exact: np.ndarray, scale: np.ndarray) -> float:
    """got's largest error from the exact values, in float16 ulps of `scale`."""
    unit = np.spacing(np.abs(scale).astype(np.float16)).astype(np.float64)
    return float((np.abs(got.astype(np.float64) - exact) / unit).max())


@pytest.mark.parametrize("n", [513, 2000, 65537])
@pytest.mark.parametrize("backend", ["c", "interp"])
def test_long_float16_scans_round_once(monkeypatch, backend, n):
    """Within 3/4 ulp of the exact scan (float64 over the same float16 values): rounded once,
    half an ulp, plus float32's own rounding (torch's scans are within the same bound); the
    old blocked scan was 0.93 - 12 ulps off. A sum's ulp is the one of the largest running
    magnitude so far (a running sum near 0 after a cancellation keeps the error of its past)."""
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    # the scans are blocked only past the work limit (two rows' windows: 2 n^2); n^2 lets
    # every n here take the blocked scan (its windows, 2 x 257 x 511 a block, fit). At the
    # default limit all three ran pooled, which rounds once anyway: the test no longer
    # reached the blocked scan, and spent 20 s of CPU on the pooled 65537
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(n * n))
    rng = np.random.default_rng(n)
    h = rng.standard_normal((2, n)).astype(np.float16)
    got = Tensor(h).cumsum(1).numpy()
    assert got.dtype == np.float16
    exact = np.cumsum(h.astype(np.float64), 1)
    scale = np.maximum.accumulate(np.abs(exact), 1)
    assert ulps(torch.from_numpy(h).cumsum(1).numpy(), exact, scale) <= 0.75  # (the bound)
    assert ulps(got, exact, scale) <= 0.75
    p = (1 + rng.standard_normal((n, 2)) * 1e-3).astype(np.float16)  # along axis 0
    exact = np.cumprod(p.astype(np.float64), 0)
    assert ulps(Tensor(p).cumprod(0).numpy(), exact, exact) <= 0.75
