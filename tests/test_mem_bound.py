"""Memory-bound kernels: the work each does per element, counted from its AST, its C text and
the compiler's assembly (never timed), and its values against numpy at the shapes that take
each path (prime, ragged, one row, NaN, -0.0).
"""

from __future__ import annotations

import ctypes
import re
import subprocess

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import build
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel


def _kernels(t: Tensor) -> list:
    """t's kernels as the C backend builds them: (optimized AST, rendered kernel) each."""
    out = []
    for i, item in enumerate(t.schedule()):
        opt = optimize_kernel(lower_only(item.ast))
        out.append((opt, render_kernel(opt, f"k{i}")))
    return out


def _assembly(rk) -> str:
    """The assembly gcc makes of one rendered kernel at its kind's flags, as a build would."""
    cc = build.compiler()
    if not build.is_gcc(cc):
        pytest.skip("the assembly counted here is gcc's")
    try:
        ctypes.CDLL("libmvec.so.1")
    except OSError:
        pytest.skip("no vector math library (libmvec) to call")
    flags = [f for f in build.cflags(rk.kind) if f != "-fopenmp"] + ["-fopenmp-simd"]
    src = build.full_source([rk])
    # (-DRG_MVEC: the prelude's switch for libmvec's declarations, as build.py sets it)
    run = subprocess.run([*cc, *flags, "-DRG_MVEC", "-fPIC", "-S", "-x", "c", "-",
                          "-o", "-"], input=src, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_a_sigmoid_calls_exp_once_per_element():
    """A sigmoid is `e = exp(c ? -x : x)` and then `c ? 1/(1+e) : e/(1+e)`: two selects on one
    condition with the exp between them. gcc's jump threading copied the exp into both paths
    and the vectorizer computed both: two vector exps per element (flags.py)."""
    x = np.random.default_rng(0).standard_normal(4099).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(4099).astype(np.float32)
    x[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 100.0]
    t = (Tensor(x) * Tensor(y) + 1.5).sigmoid() * Tensor(x)
    ((_, rk),) = _kernels(t)
    asm = _assembly(rk)
    # the vectorized loop calls libmvec's exp once (the scalar tails are not counted)
    assert len(re.findall(r"\bcall\s+\S*_ZGV\w*expf", asm)) == 1
    with np.errstate(all="ignore"):
        z = x.astype(np.float64) * y + 1.5
        want = (1 / (1 + np.exp(-z)) * x).astype(np.float32)
    np.testing.assert_allclose(t.numpy(), want, rtol=2e-6, atol=1e-30, equal_nan=True)
