"""adv41's hunt (issue 31): ordinary programs refused by the work limit, and command-line inputs
that ended in a bare traceback or an error per rule. Checked against numpy and torch.

- A scan (cumsum, cumprod, and the running values of cummax/cummin) was one pooled reduction
  over the whole axis: n^2 work, so `Tensor.rand(2_000_000).cumsum()` was refused by
  RULEGRAD_MAX_WORK (8e12 iterations). A long axis is now scanned in blocks; cummax's index
  and the pick that routes its gradient were n^2 too (refused at 1.05M elements).
- `rulegrad fuzz --seed -1` was numpy's bare ValueError; `rulegrad check --hang-timeout inf`
  (or 1e12) made every rule an `error` (setitimer's OverflowError).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from rulegrad import Tensor

# an axis whose pooled scan (n * (2n - 1) elements) is past this limit, and whose blocked scan
# (2 rows x 7 blocks x 257 x 511 windows, 1.8M) is not: the old code refused every program
# below, the new runs them. Seven blocks of SCAN_BLOCK take every path forty did (cummax's pick
# is blocked past 2 blocks, and its pick over the blocks' last elements is one-hot up to
# 2 * SCAN_BLOCK blocks) at a sixth of the work: the interpreter ran 10_007 for minutes
N = 1543  # prime: the last block is partial
WORK = 1 << 21


@pytest.fixture
def low_work_limit(monkeypatch):
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(WORK))
    assert N * (2 * N - 1) > WORK


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_long_scans_run_and_match_torch(monkeypatch, low_work_limit, backend, scheduler):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    rng = np.random.default_rng(41)
    a = rng.standard_normal((2, N))
    a[0, ::97] = np.nan  # NaN carried across blocks
    ta = torch.from_numpy(a)
    np.testing.assert_allclose(Tensor(a).cumsum(1).numpy(), ta.cumsum(1).numpy(), rtol=1e-9,
                               atol=1e-9)
    p = 1 + a.T * 1e-3  # along axis 0, tall
    np.testing.assert_allclose(Tensor(p).cumprod(0).numpy(),
                               torch.from_numpy(p).cumprod(0).numpy(), rtol=1e-9)
    i = rng.integers(-(2**31), 2**31 - 1, N).astype(np.int32)  # int64 sums, exact
    np.testing.assert_array_equal(Tensor(i).cumsum().numpy(), np.cumsum(i, dtype=np.int64))
    u = rng.integers(0, 255, N).astype(np.uint8)
    np.testing.assert_array_equal(Tensor(u).cumsum().numpy(), np.cumsum(u))


@pytest.mark.parametrize("backend", ["c", "interp"])
def test_long_running_max_and_min_with_indices_match_torch(monkeypatch, low_work_limit,
                                                           backend):
    """cummax's index was matched against every earlier element (n^2), and its gradient picked
    the element at that index from a one-hot row (n^2): now a running max of the positions
    where a new maximum is reached, and a pick within blocks."""
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    rng = np.random.default_rng(5)
    a = np.round(rng.standard_normal((2, N)) * 3)  # many ties: the index is the last one
    a[:, ::89] = -0.0
    a[1, 300:] = np.nan  # a NaN running max: the index is the last NaN so far
    ta = torch.from_numpy(a)
    for name in ("cummax", "cummin"):
        values, idx = getattr(Tensor(a), name)(1)
        tv, ti = getattr(torch, name)(ta, 1)
        np.testing.assert_array_equal(values.numpy(), tv.numpy(), err_msg=name)
        np.testing.assert_array_equal(idx.numpy(), ti.numpy(), err_msg=name)
    ints = rng.integers(-4, 4, N).astype(np.int8)
    for name in ("cummax", "cummin"):
        _, idx = getattr(Tensor(ints), name)(0)
        np.testing.assert_array_equal(idx.numpy(), getattr(torch, name)(
            torch.from_numpy(ints), 0)[1].numpy(), err_msg=name)
    # the gradient goes to the element at the index returned (NaN-free: torch routes a NaN's,
    # ours is NaN, docs/gradients.md)
    b, w = a[0], rng.standard_normal(N)
    for name in ("cummax", "cummin"):
        x = Tensor(b, requires_grad=True)
        (g,) = (getattr(x, name)(0)[0] * Tensor(w)).sum().gradient(x)
        tx = torch.from_numpy(b).requires_grad_()
        (getattr(torch, name)(tx, 0)[0] * torch.from_numpy(w)).sum().backward()
        np.testing.assert_allclose(g.numpy(), tx.grad.numpy(), rtol=1e-12, err_msg=name)


def test_long_scan_gradient_matches_torch(low_work_limit):
    rng = np.random.default_rng(7)
    a, w = rng.standard_normal(N), rng.standard_normal(N)
    x = Tensor(a, requires_grad=True)
    (g,) = (x.cumsum() * Tensor(w)).sum().gradient(x)
    tx = torch.from_numpy(a).requires_grad_()
    (tx.cumsum(0) * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(g.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_a_cumsum_of_two_million_runs_under_the_default_limit():
    a = np.random.default_rng(2).standard_normal(2_000_000).astype(np.float32)
    got = Tensor(a).cumsum().numpy()
    want = np.cumsum(a.astype(np.float64))
    assert np.abs(got - want).max() < 1e-2  # numpy's float32 cumsum is 2.4e-2 off here


def _rulegrad(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rulegrad", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_fuzz_refuses_a_negative_seed_in_words(tmp_path):
    r = _rulegrad("fuzz", "--seed", "-1", "--n", "1", cwd=tmp_path)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert "--seed: expected 0 or more, got -1" in r.stderr


@pytest.mark.parametrize("limit", ["inf", "1e12"])
def test_check_with_a_hang_limit_past_any_timer_checks_the_rules(tmp_path, limit):
    rules = tmp_path / "one.rules"
    rules.write_text("rules one = {\n  MUL(x, 1) -> x\n}\n")
    r = _rulegrad("check", "--hang-timeout", limit, str(rules), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OverflowError" not in r.stdout
    assert "proved 1" in r.stdout or "passed 1" in r.stdout
