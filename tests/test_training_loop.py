"""A training loop builds once (issue 11): a new Python float each step is a kernel argument.

`w.assign(w - lr * g)` with a different `lr` every step must not compile a new program per step,
on default settings; the values must still be numpy's, step by step. The float stays a CONST
through the rule passes and is lifted into a kernel argument after the kernels are built
(runtime/float_params.py); the schedule cache schedules the form twice (the second value shows
the schedule does not depend on it) and replays it from then on.
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
    # scheduled for the first two values (the second confirms the form), replayed after
    assert schedule_cache.stats["misses"] - misses == 2


def test_sgd_optimizer_with_a_changing_learning_rate_builds_once(fresh):
    from rulegrad.backends.c import build
    from rulegrad.nn.optim import SGD

    rng = np.random.default_rng(12)
    w_np = rng.standard_normal((8, 3)).astype(np.float32)
    x_np = rng.standard_normal((8, 3)).astype(np.float32)
    w, x = Tensor(w_np.copy()), Tensor(x_np)
    opt = SGD([w], lr=0.1, momentum=0.9)
    b_np = np.zeros_like(w_np)
    compiles = build.stats["compiles"]
    for step in range(200):
        opt.lr = 0.3 / (1 + 0.37 * step)  # a schedule of learning rates: a new float each step
        opt.zero_grad()
        loss = (w * x).sum()  # d loss / d w = x, exactly
        loss.backward()
        opt.step(loss)
        b_np = np.float32(0.9) * b_np + x_np
        w_np = w_np - np.float32(opt.lr) * b_np
        np.testing.assert_array_equal(w.numpy(), w_np)
    assert build.stats["compiles"] - compiles == 1


_VALUE_DEPENDENT = """
rules small = {
  # x * c -> -(x * -c) for a small positive c: exact, and the graph it makes depends on c
  neg_small: MUL[x:floats, c:CONST] if 0 < c.arg < 0.25 -> NEG(MUL(x, c.const_like(-c.arg)))
}
"""


def test_a_schedule_that_depends_on_the_value_is_not_replayed_for_another(fresh, tmp_path):
    """A rule that fires for some values of a constant only: the two schedules of the form
    disagree, so it is never replayed with a value it was not made for."""
    import rulegrad

    rules = tmp_path / "small.rules"
    rules.write_text(_VALUE_DEPENDENT)
    x_np = np.array([0.25, -3.5, 7.0], np.float32)
    x = Tensor(x_np)
    with rulegrad.add_rules(rules, after="pm_rangeify"):
        for c in (0.1, 0.3, 0.2, 0.7, 0.15):
            np.testing.assert_array_equal((x * c).numpy(), x_np * np.float32(c))


def test_lifting_can_be_switched_off(fresh, monkeypatch):
    from rulegrad.backends.c import build

    monkeypatch.setenv("RULEGRAD_FLOAT_PARAMS", "0")
    x = Tensor(np.arange(4, dtype=np.float32))
    compiles = build.stats["compiles"]
    for c in (0.1, 0.2, 0.3):
        np.testing.assert_array_equal((x * c).numpy(), np.arange(4, dtype=np.float32) * c)
    assert build.stats["compiles"] - compiles == 3  # each constant printed into its own C


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
