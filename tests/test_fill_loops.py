"""Loops that fill an array vectorize whatever their count.

Every build takes gcc's "very cheap" vectorizer cost model (backends/c/flags.py's SEMANTIC),
which vectorizes a loop only at a width that divides its count. render.py marks the loops that
fill an array, each iteration its own element (`Scope.fills`: a local array's values, a flash
tile's probabilities and its stores), `omp simd`, which gcc vectorizes at any count. Checked: a
softmax and an attention over rows of 250 (no vector width divides it) call the vector exp
(or fill the row in explicit vectors, the exp's core inline), and give numpy's values.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_c_gemm import _softmax

from rulegrad import Tensor
from rulegrad.backends.c import build, run
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel

_CASES = {
    "softmax": (lambda x: x.softmax(-1), [(64, 250)], _softmax),
    "attention": (lambda q, k, v: (q @ k.transpose(1, 2) * 0.125).softmax(-1) @ v,
                  [(2, 250, 32)] * 3,
                  lambda q, k, v: _softmax(q @ k.transpose(0, 2, 1) * 0.125) @ v),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_a_row_of_250_exps_calls_the_vector_exp_and_matches_numpy(case, tmp_path, monkeypatch):
    if not build.is_gcc(build.compiler()):
        pytest.skip("the vector exp is called by gcc's vectorizer")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    build.clear_memory_cache()
    run._programs.clear()
    op, shapes, ref = _CASES[case]
    rng = np.random.default_rng(len(case))
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    try:
        got = op(*(Tensor(a) for a in arrays)).numpy()
    finally:
        run._programs.clear()
    want = ref(*(a.astype(np.float64) for a in arrays))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    programs = [p.read_bytes() for p in tmp_path.glob("*.so") if b"k0_" in p.read_bytes()]
    sources = [render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source for i, item
               in enumerate(op(*(Tensor(a) for a in arrays)).schedule())]
    sources = [c for c in sources if re.search(r"\bexpf\(|rg_[vz]expn?_f32\(", c)]
    # the block library's vector exp (backends/c/vexp.py), or its core inline in explicit
    # vectors (a row of exps: wide_exps' `lane_fill` and `wide_fill`)
    assert programs and all(re.search(rb"_ZGV\w+v_rg_expf", p) for p in programs) or (
        sources and all(re.search(r"rg_[vz]expn?_f32\(", c) for c in sources))
