"""The work from which a loop nest takes threads has one home, runtime/target.py's
PARALLEL_MIN_WORK: the scheduler (rangeify.rules' narrow_reduce shares, flash_cost) and every
optimizer action (choices.least_parallel_work) read it there, so one patch moves them all.
Checked by the kernels and actions a program gets, and its values against numpy."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.runtime import target

_READERS = ("pack_helpers", "thread_helpers", "parallel_helpers", "interchange_helpers",
            "flash_helpers", "flash_cost", "generated.rangeify")


def _actions(t: Tensor) -> list[list[str]]:
    out = []
    for item in t.schedule():
        low = lower_only(item.ast)
        out.append(actions(optimize_kernel(low)))
    return out


def test_no_reader_keeps_a_copy_of_its_own():
    # a copy taken by `from ... import PARALLEL_MIN_WORK` would miss a patch of target's
    for name in _READERS:
        mod = importlib.import_module(f"rulegrad.rules.{name}")
        assert not hasattr(mod, "PARALLEL_MIN_WORK"), name


@pytest.mark.parametrize("rows", [1024, 4099])
def test_one_patch_moves_the_scheduler_and_the_optimizer(monkeypatch, rows):
    # a column sum of 64 columns, under the threshold: one kernel, one core. Lowered in
    # target alone, the scheduler shares its rows among the threads (narrow_reduce: a second
    # kernel) and the optimizer threads the shares (PARALLEL)
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = np.random.default_rng(rows).standard_normal((rows, 64)).astype(np.float32)
    assert rows * 64 < target.parallel_min_work()
    # (one row fewer: a graph of its own, not the one the patched schedule below will make)
    before = _actions(Tensor(x[1:]).sum(axis=0))
    assert len(before) == 1 and not any(a.startswith("PARALLEL") for a in before[0]), before
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 1000)
    t = Tensor(x).sum(axis=0)
    after = _actions(t)
    assert len(after) == 2, after
    assert any(a.startswith("PARALLEL") for a in after[0]), after
    np.testing.assert_allclose(t.numpy(), x.sum(0), rtol=1e-5, atol=1e-4)
