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
