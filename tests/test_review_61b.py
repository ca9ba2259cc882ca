"""rev61b's review of logf61 (backends/c/vlog.py, the across-lanes count's CPU facts) and lines61
(actions recorded where taken).

The count of rules/across_helpers.py takes its shuffle pipes and issue width from the CPU
(runtime/target.py's cpu(): AMD's two pipes and 6 a cycle, else Intel's one and 4). They were
read once, at import, so a test could not pin the CPU its choices were timed on and the suite's
form tests (tests/test_rows_60.py) failed on an Intel or unknown CPU (seen with a fake
/proc/cpuinfo: rows of 9 to 16's max kept the row form); they are read at each count now.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_rows_60 import _across

import rulegrad.rules.across_helpers as across_helpers
from rulegrad import Tensor
from rulegrad.runtime import target


def _pinned(monkeypatch, model: str) -> None:
    monkeypatch.setattr(across_helpers, "cpu", lambda: target.Cpu(model, target.cpu().flags))


@pytest.mark.parametrize("shape", [(1000, 9), (4096, 16)], ids=lambda s: "x".join(map(str, s)))
def test_the_across_count_reads_the_cpu_at_each_choice(monkeypatch, shape):
    """A row max of 9 to 16: across lanes by AMD's two shuffle pipes, the row form by Intel's
    one (and an unknown CPU's), numpy's values in both."""
    x = np.random.default_rng(61).standard_normal(shape).astype(np.float32)
    forms = {}
    for model in ("AMD EPYC 7B13 64-Core Processor", "Intel(R) Xeon(R) Platinum 8375C", ""):
        _pinned(monkeypatch, model)
        t = Tensor(x).max(1)
        forms[model] = _across(t)
        np.testing.assert_array_equal(t.numpy(), x.max(1))
    assert forms == {"AMD EPYC 7B13 64-Core Processor": True,
                     "Intel(R) Xeon(R) Platinum 8375C": False, "": False}, forms


def test_a_peeled_kernels_lines_name_no_loop_they_did_not_take():
    """lines61 records each action where it is taken; the peel action, later, made its parts'
    loops from 1 + the kernel's highest id then, so a padded pool's parts took r4 r5, the ids of
    the window its UNROLL line names (unrolled away): DEBUG=2 printed `UNROLL MAX over r4 r5`
    and `UPCAST r5` of one kernel, and no PEEL line. Now the peel is recorded and its parts'
    ids are past every id a line names."""
    import re

    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel
    from rulegrad.runtime.ops import Ops

    x = np.random.default_rng(5).standard_normal((2, 4, 32, 32)).astype(np.float32)
    t = Tensor(x).pad(((0, 0), (0, 0), (1, 1), (1, 1))).reshape(2, 4, 17, 2, 17, 2).max(
        axis=(3, 5))
    (item,) = t.schedule()
    low = lower_only(item.ast)
    opt = optimize_kernel(low)
    acts = actions(opt)
    ids = {n.arg[0] for n in opt.toposort() if n.op is Ops.RANGE}
    (unroll,) = [a for a in acts if a.startswith("UNROLL")]
    assert not {int(i) for i in re.findall(r"r(\d+)", unroll)} & ids, acts
    # (each part a new loop: past the lowered kernel's ids and the window's)
    first = 1 + max(n.arg[0] for n in low.toposort() if n.op is Ops.RANGE)
    peels = [a for a in acts if a.startswith("PEEL")]
    assert peels and all(int(i) >= first for p in peels
                         for i in re.findall(r"r(\d+)", p.split(" into ")[1])), acts
    want = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))).reshape(2, 4, 17, 2, 17, 2).max((3, 5))
    np.testing.assert_array_equal(t.numpy(), want)
