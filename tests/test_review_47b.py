"""Review of round 46's kernel changes (rev47b): each test failed on the merge it reviews.

numpy in float64 is the oracle."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# a float64 softmax whose rows are kept whole and local (a prime row, two rows: one per
# thread), run with a large L2; prints its largest error against numpy's float64
_BIG_ROW_SOFTMAX = """
import numpy as np
from rulegrad import Tensor
n = 1048573
x = np.random.default_rng(0).standard_normal((2, n))
e = np.exp(x - x.max(-1, keepdims=True))
print(float(np.abs(Tensor(x).softmax(-1).numpy() - e / e.sum(-1, keepdims=True)).max()))
"""


@pytest.mark.long
def test_a_local_row_fits_a_threads_stack_whatever_the_l2():
    """A row's kernel-local array (softmax's exp) is declared on its thread's stack. Bounded by L2
    alone (a quarter of it as float32), a 16 MB L2 (Apple M2's clusters report it) let a float64
    softmax over rows of 1048573 put 8 MB on the stack: the process died (SIGSEGV). In a child
    process, so that a crash fails this test rather than ending the suite."""
    env = dict(os.environ, RULEGRAD_L2_BYTES="16M", RULEGRAD_THREADS="2")
    run = subprocess.run([sys.executable, "-c", _BIG_ROW_SOFTMAX], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert float(run.stdout.split()[-1]) < 1e-15
