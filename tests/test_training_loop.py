"""A training loop builds once (issue 11): a new Python float each step is a kernel parameter.

`w.assign(w - lr * g)` with a different `lr` every step must not compile (or schedule) a new
program per step; the values must still be numpy's, step by step.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    from rulegrad.backends.c import build, run
    from rulegrad.runtime import schedule_cache

    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_FLOAT_PARAMS", "1")
    build.clear_memory_cache()
    run._programs.clear()
    schedule_cache.clear()


def test_learning_rate_loop_builds_once(fresh):
    from rulegrad.backends.c import build
    from rulegrad.runtime import schedule_cache

    rng = np.random.default_rng(11)
    w_np = rng.standard_normal((37, 5)).astype(np.float32)
    g_np = rng.standard_normal((37, 5)).astype(np.float32)
    w, g = Tensor(w_np), Tensor(g_np)
    compiles, disk = build.stats["compiles"], build.stats["disk_hits"]
    misses = schedule_cache.stats["misses"]
    for step in range(200):
        lr = 0.1 / (1 + step) + step * 1e-4  # a new float every step
        w.assign(w - lr * g)
        w_np = w_np - np.float32(lr) * g_np  # numpy 2: the Python float is weak, float32 math
        np.testing.assert_array_equal(w.numpy(), w_np)
    assert build.stats["compiles"] - compiles == 1
    assert build.stats["disk_hits"] == disk
    assert schedule_cache.stats["misses"] - misses == 1  # replayed with each new value


def test_float_operands_match_numpy_in_every_dtype(fresh):
    x_np = np.array([0.5, -2.25, 3.0, 1e-3], np.float64)
    for dt in (np.float16, np.float32, np.float64):
        x = Tensor(x_np.astype(dt))
        for c in (0.1, -7.3, 1e5, 0.0, 1.0, -1.0, float("inf")):
            for got, want in (((x + c).numpy(), x_np.astype(dt) + c),
                              ((c - x).numpy(), c - x_np.astype(dt)),
                              ((x * c).numpy(), x_np.astype(dt) * c),
                              ((x / c).numpy(), x_np.astype(dt) / c)):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
