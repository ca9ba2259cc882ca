"""rev50b's review of round 50's kernel-side changes: what it found and fixed.

- Whether a kernel has a gated read (flags.py compiles it with jump threading) is a fact its
  printer records while it prints one (issue 32), not a regex over the C: the regex also took
  a select of a register array (`any ? exact(x) : a0[0]`, the block library's row max) for one.
"""

from __future__ import annotations

import numpy as np

from rulegrad import Tensor
from rulegrad.backends.c import blocks
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime.dtype import dtypes


def _rendered(t: Tensor) -> list:
    return [render_kernel(optimize_kernel(lower_only(it.ast)), "k") for it in t.schedule()]


def test_gated_is_what_the_printer_printed():
    a = np.arange(40, dtype=np.float32).reshape(8, 5)
    padded = _rendered(Tensor(a).pad(((1, 0), (0, 0)))[:8] + Tensor(a))
    assert [k.gated for k in padded] == [True]
    assert "?" in padded[0].source
    assert [k.gated for k in _rendered(Tensor(a) * 2 + 1)] == [False]
    # the block library: a streamed block reads its offsets under a condition; the row max
    # selects an accumulator's lane (`: a0[0]`), which reads no memory under a gate
    by_name = {k.cname: k.gated for k in blocks.kernels(dtypes.float32, 8)}
    assert by_name["rg_reduce_max_f32"] is False and by_name["rg_reduce_min_f32"] is False
    assert all(g for n, g in by_name.items() if n.endswith("_stream"))
