"""Realize plans (runtime/plans.py): the same small graph realized again runs its kernels with no
graph work, computes from the buffers' current values, hands out fresh results, and holds no
large buffer alive. Work is counted (plan hits, schedule-cache lookups), never timed."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from result_holders import HOLDERS, hold, values_held

from rulegrad import Tensor
from rulegrad.runtime import plans, schedule_cache
from rulegrad.runtime.realize import buffer_of


@pytest.fixture(autouse=True)
def _fresh_plans(monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    plans.clear()
    yield
    plans.clear()


def _lookups() -> int:
    return schedule_cache.stats["hits"] + schedule_cache.stats["misses"]


def test_the_same_graph_again_runs_its_plan():
    x = np.arange(6, dtype=np.float32)
    a = Tensor(x).realize()
    first = (a * 3 + 1).numpy()
    hits, lookups = plans.stats["hits"], _lookups()
    second = (a * 3 + 1).numpy()
    assert plans.stats["hits"] == hits + 1
    assert _lookups() == lookups  # no graph walk for the schedule cache: the plan ran
    np.testing.assert_array_equal(first, x * 3 + 1)
    np.testing.assert_array_equal(second, x * 3 + 1)


def test_a_plan_reads_current_values_and_hands_out_fresh_results():
    x = np.arange(6, dtype=np.float32)
    a = Tensor(x).realize()
    r1 = (a * 3 + 1).realize()
    held = r1.numpy()
    a.assign(Tensor(x + 10))  # same buffer, new values
    hits = plans.stats["hits"]
    r2 = (a * 3 + 1).realize()
    assert plans.stats["hits"] == hits + 1
    np.testing.assert_array_equal(r2.numpy(), (x + 10) * 3 + 1)
    np.testing.assert_array_equal(held, x * 3 + 1)  # the first result never changes
    assert buffer_of(r1.uop) is not buffer_of(r2.uop)


def test_two_roots_and_an_intermediate():
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    a = Tensor(x).realize()
    for _ in range(3):
        s = a.sum()
        y = (a - s).exp()
        s.realize(y)
        np.testing.assert_allclose(s.numpy(), x.sum(), atol=1e-6)
        np.testing.assert_allclose(y.numpy(), np.exp(x - x.sum()), rtol=1e-6)
    assert plans.stats["hits"] >= 2


def test_a_large_graph_is_not_planned_and_not_held(monkeypatch):
    monkeypatch.setattr(plans, "PLAN_MAX_BYTES", 4096)
    n = plans.PLAN_MAX_BYTES // 4 + 1  # float32: one element past the limit
    a = Tensor(np.ones(n, np.float32)).realize()
    before = plans.stats["recorded"]
    (a + 1).realize()
    assert plans.stats["recorded"] == before
    ref = weakref.ref(buffer_of(a.uop).data)  # host data: never pooled, dies with the Buffer
    del a
    gc.collect()
    assert ref() is None


def test_another_scheduler_or_debug_is_not_served_by_a_plan(monkeypatch):
    a = Tensor(np.arange(4, dtype=np.float32)).realize()
    (a + 2).realize()
    hits = plans.stats["hits"]
    np.testing.assert_array_equal((a + 2).realize(scheduler="kernelize").numpy(),
                                  np.arange(4) + 2)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", "kernelize")
    (a + 2).realize()
    monkeypatch.delenv("RULEGRAD_SCHEDULER")
    monkeypatch.setenv("DEBUG", "1")
    assert plans.key([(a + 2).uop]) is None
    monkeypatch.delenv("DEBUG")
    assert plans.stats["hits"] == hits


def test_plans_are_bounded(monkeypatch):
    monkeypatch.setattr(plans, "MAX_PLANS", 3)
    a = Tensor(np.arange(4, dtype=np.float32)).realize()
    for i in range(6):
        (a + (i + 10)).realize()
    assert len(plans._plans) == 3


def test_the_plan_dropped_for_a_new_one_is_the_least_recently_run(monkeypatch):
    """Plans run in a loop stay; a new plan drops the one run least recently (a plan is
    moved to the table's end once per recording, not on every run). Every value is numpy's."""
    monkeypatch.setattr(plans, "MAX_PLANS", 3)
    x = np.arange(4, dtype=np.int32)
    a = Tensor(x).realize()

    def run(i: int) -> bool:
        """a + i, checked against numpy; whether a plan ran it."""
        hits = plans.stats["hits"]
        np.testing.assert_array_equal((a + i).numpy(), x + i)
        return plans.stats["hits"] == hits + 1

    for i in (1, 2, 3):  # three plans: 1, 2, 3 from the least to the most recently run
        assert not run(i)
    for i in (1, 3, 1, 1):  # 2 is now the least recently run, then 3
        assert run(i)
    assert not run(4)  # drops 2
    assert run(3) and run(1) and run(4)  # (1 before 4: 3 is the least recently run now)
    assert not run(5)  # drops 3
    assert run(1) and run(4) and run(5)
    assert not run(2) and not run(3)


def test_plans_hold_a_bounded_number_of_bytes(monkeypatch):
    monkeypatch.setattr(plans, "PLANS_MAX_BYTES", 3 * 8192)
    held, inputs = [], []
    for i in range(6):  # fresh inputs of at most 4 KB each time: each graph's plan holds its
        # input, and as much for the result its runs write (a size of its own: each graph is
        # of a new form, never served by the plan of another's, tests/test_form_plans.py).
        # The inputs are kept: a plan whose input tensor went is dropped with it (plans.py's
        # `_watch`), and the bound is what is tested here
        a = Tensor(np.full(1024 - i, i, np.float32)).realize()
        inputs.append(a)
        np.testing.assert_array_equal((a + 1).numpy(), np.full(1024 - i, i + 1, np.float32))
        held.append(plans.held_bytes())
    assert max(held) <= 3 * 8192
    assert len(plans._plans) == 3


def test_plans_after_another_device_was_used():
    # using a second device turns on per-root device bookkeeping for the rest of the process;
    # roots on the default device still get plans
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal((Tensor(x).shard(("CPU", "CPU:1"), axis=0) + 1).numpy(),
                                  x + 1)
    a = Tensor(x).realize()
    (a * 5).realize()
    hits = plans.stats["hits"]
    np.testing.assert_array_equal((a * 5).numpy(), x * 5)
    assert plans.stats["hits"] == hits + 1


@pytest.mark.parametrize("value,on", [("0", False), ("off", False), ("1", True), ("yes", True),
                                      ("", True)])
def test_rulegrad_plans_turns_plans_on_and_off(monkeypatch, value, on):
    monkeypatch.setenv("RULEGRAD_PLANS", value)
    x = np.arange(6, dtype=np.float32)
    a = Tensor(x).realize()
    (a * 5 - 2).numpy()
    hits = plans.stats["hits"]
    np.testing.assert_array_equal((a * 5 - 2).numpy(), x * 5 - 2)
    assert plans.stats["hits"] == hits + (1 if on else 0)


def test_a_bad_rulegrad_plans_names_the_variable_and_its_values(monkeypatch):
    from rulegrad.runtime.env import EnvError

    a = Tensor(np.arange(3, dtype=np.float32)).realize()
    monkeypatch.setenv("RULEGRAD_PLANS", "maybe")
    with pytest.raises(EnvError, match=r"RULEGRAD_PLANS='maybe': expected 1 or 0 \(on/off"):
        (a + 1).numpy()


# ---------------------------------------------------------------- a plan's own buffers
def _buffers_made() -> int:
    from rulegrad.runtime import buffer

    return next(buffer._ids)  # (each Buffer takes the next id; this read takes one too)


def test_a_warm_loop_writes_the_same_result_again_without_any_new_buffer():
    from rulegrad.backends.c import build

    x = np.arange(5, dtype=np.float32)
    a = Tensor(x).realize()
    for _ in range(3):
        (a * 2 + 1).realize()
    hits, made = plans.stats["hits"], 0
    for i in range(5):
        a.assign(Tensor(x + i))  # new values each time, read by the next run
        before, lookups, compiles = _buffers_made(), _lookups(), build.stats["compiles"]
        out = (a * 2 + 1).numpy()
        made += _buffers_made() - before - 1
        assert _lookups() == lookups  # no graph walk, no schedule
        assert build.stats["compiles"] == compiles
        np.testing.assert_array_equal(out, (x + i) * 2 + 1)
        del out  # (a result still held is never written again: the next test)
    assert plans.stats["hits"] == hits + 5
    assert made == 0


@pytest.mark.parametrize("holder", HOLDERS)
def test_a_result_anyone_still_holds_is_never_written_again(holder):
    x = np.arange(6, dtype=np.float32)
    a = Tensor(x).realize()
    for _ in range(3):
        (a + 1).realize()
    t = (a + 1).realize()
    held = hold(t, holder)
    del t
    a.assign(Tensor(x * 10))
    np.testing.assert_array_equal((a + 1).numpy(), x * 10 + 1)
    # the result handed out before, unchanged
    np.testing.assert_array_equal(values_held(held, holder), x + 1)


def test_intermediates_of_a_plan_are_its_own_and_recomputed():
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    a = Tensor(x).realize()
    for i in range(4):
        a.assign(Tensor(x * (i + 1)))
        s = a.sum()  # a reduction kernel, then an elementwise kernel reading its result
        y = (a - s).exp()
        y.realize()
        np.testing.assert_allclose(y.numpy(), np.exp(x * (i + 1) - (x * (i + 1)).sum()),
                                   rtol=1e-5)
    assert plans.stats["hits"] >= 2


def test_an_input_moved_to_new_storage_is_read_there():
    # an assign into an input whose array was handed out moves it to a copy
    # (Buffer.prepare_write): a plan must not keep calling its kernels on the old address
    x = np.arange(4, dtype=np.float32)
    a = Tensor(x).realize()
    for _ in range(3):
        (a * 3).realize()
    old = a.numpy()
    a.assign(Tensor(x + 100))
    np.testing.assert_array_equal((a * 3).numpy(), (x + 100) * 3)
    np.testing.assert_array_equal(old, x)


def test_a_plan_another_thread_is_running_gives_this_one_its_own_buffers():
    x = np.arange(4, dtype=np.float32)
    a = Tensor(x).realize()
    for _ in range(3):
        (a - 1).realize()
    plan = next(iter(plans._plans.values()))
    kept = (a - 1).realize()
    with plan.busy:  # as if another thread were inside its run
        other = (a - 1).realize()
    assert buffer_of(other.uop) is not buffer_of(kept.uop)
    assert all(buffer_of(other.uop) is not b for b in plan.owned)
    np.testing.assert_array_equal(other.numpy(), x - 1)
    np.testing.assert_array_equal(kept.numpy(), x - 1)


def test_a_planned_run_keeps_its_program_ahead_of_one_not_run_since(monkeypatch):
    """The table of programs drops the least recently used: a program run by its plan after
    another program was added is kept when a third is added, and the one not run since is
    dropped (a planned run moves its program once per addition, not at every run)."""
    from rulegrad.backends.c import run

    monkeypatch.setenv("RULEGRAD_MAX_PROGRAMS", "2")
    ta, tb, tc = (Tensor(np.arange(n, dtype=np.float32)).realize() for n in (5, 7, 11))

    def program(t: Tensor) -> object:
        np.testing.assert_array_equal((t * 3 + 1).numpy(), np.arange(t.shape[0]) * 3 + 1)
        return next(reversed(run._programs.values()))

    a = program(ta)  # compiled and added
    b = program(tb)  # added after it
    hits = plans.stats["hits"]
    for _ in range(3):  # a's plan runs it again (moved behind b once)
        assert program(ta) is a
    assert plans.stats["hits"] == hits + 3
    program(tc)  # a third program: the bound of two drops b, not a
    kept = list(run._programs.values())
    assert a in kept and b not in kept
