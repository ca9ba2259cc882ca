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
