"""rev68a's review of suite68 and step68: a changed constant between steps of the no-jit step
(tests/test_step68's changed-step test catches a key without constants in only some runs: the
cyclic collector, run when the compiler's threads let it, drops the plans it would have run), here
with the plan surely made first and the collector off while the steps run."""

from __future__ import annotations

import gc

import numpy as np
from test_step68 import _batch, _check, _np_step, _setup, _step

from rulegrad import Tensor


def test_a_changed_constant_after_the_plan_of_the_old_one_is_made():
    """Five steps at a scale of 0.5 (the plan of the step is made and run), then five at -1.0:
    each step against numpy's float64 step (a plan keyed without the constant's value would run
    0.5's kernels at -1.0)."""
    p, opt, ref = _setup(11)
    rng = np.random.default_rng(12)
    kept = []
    was = gc.isenabled()
    gc.disable()  # (a collection between the steps may drop the plan: then nothing is tested)
    try:
        for scale in (0.5, -1.0):
            for _ in range(5):
                x, y = _batch(rng, 9)
                kept.append((Tensor(x), Tensor(y)))
                loss = _step(p, opt, *kept[-1], scale)
                kept.append(loss)
                _check(p, ref, loss.item(), _np_step(ref, x, y, scale))
    finally:
        if was:
            gc.enable()


def test_a_split_build_whose_parts_hold_several_kernels_computes(tmp_path, monkeypatch):
    """suite68 set RULEGRAD_BUILD_JOBS=1 for the suite; before, every test's larger libraries
    were split builds. The split builds' value tests left (test_cold_build, test_cache) split
    into parts of one kernel each, so a part that lost a kernel of several went unseen by any
    value test. Here one realize of eight products (prime, batch 1, skinny), built in parts of
    several kernels each (the partition recorded), against numpy."""
    from rulegrad.backends.c import build

    seen = []
    partition = build.partition

    def recorded(kernels, jobs):
        parts = partition(kernels, jobs)
        seen.append([len(p) for p in parts])
        return parts

    monkeypatch.setattr(build, "partition", recorded)
    monkeypatch.setenv("RULEGRAD_BUILD_JOBS", "2")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    build.clear_memory_cache()
    rng = np.random.default_rng(13)
    xs = [rng.standard_normal((n, 40)).astype(np.float32) for n in (5, 7, 11, 13, 17, 19, 1, 23)]
    ws = [rng.standard_normal((40, n)).astype(np.float32) for n in (17, 9, 16, 24, 31, 8, 33, 3)]
    outs = [Tensor(x) @ Tensor(w) for x, w in zip(xs, ws)]
    Tensor.realize(*outs)
    for x, w, o in zip(xs, ws, outs):
        np.testing.assert_allclose(o.numpy(), x.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
    assert any(len(s) > 1 and min(s) > 1 for s in seen), seen  # (split, several kernels a part)


def test_build_jobs_unset_is_the_cpus_this_process_may_run_on(monkeypatch):
    """The user's default, which the suite no longer runs (tests/conftest.py sets
    RULEGRAD_BUILD_JOBS=1 for every test, suite68): unset, a build may use every CPU the
    process may run on."""
    import os

    from rulegrad.backends.c import build

    monkeypatch.delenv("RULEGRAD_BUILD_JOBS", raising=False)
    assert build.build_jobs() == len(os.sched_getaffinity(0))
