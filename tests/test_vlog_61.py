"""float32 log: the library's `rg_logf` and its vector forms (backends/c/vlog.py, issue 32).

Every float32 and float16 LOG a kernel computes calls it: its scalar loops and gcc's vectorized
ones the library's function and SIMD clones (the kernels' `logf`, bound by their prelude), a
kernel's explicit vectors (a logsumexp across lanes) the core inline. Checked against numpy's
float64 log: every 61st positive float32 bit pattern (the subnormals included) within vlog.py's
bound, every float16 within it in float16's ulps, the special values (0 and -0 to -inf, +inf to
inf, negatives, -inf and NaN to NaN, 1 to exactly 0) as numpy gives them, a vector loop and its
scalar tail bit for bit, the explicit 8- and 16-lane forms bit for bit against the library's
scalar loop, and the library's clones called by a vectorized loop.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from special_values import assert_same_bits
from ulps import fused, ulps

import rulegrad.rules.generated.opt as generated_opt
from rulegrad import Tensor
from rulegrad.backends.c import build, run, vlog
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.rules.across_helpers import across

F32 = np.float32


# vlog.py's bounds: 0.9 ulp with fused multiply-adds, 1.2 without (bench/log_poly.py --step 1)
ULPS = 0.9 if fused() else 1.2


def test_float32_log_is_within_its_bound_over_every_exponent():
    """Every 61st positive float32 bit pattern from the least subnormal to the largest finite
    value (about 35M values: every exponent, 2^31 / 61 of the mantissas)."""
    top = np.array([np.finfo(F32).max], F32).view(np.uint32)[0]
    x = np.arange(1, top, 61, dtype=np.uint32).view(F32)
    got = Tensor(x).log().numpy()
    err = ulps(got, np.log(x.astype(np.float64)), F32)
    worst = int(np.argmax(err))
    assert err[worst] <= ULPS, (float(x[worst]), float(got[worst]))


SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, -1e-45, -3e38, 1e-45,
                    2e-45, 1e-40, 1.1754942e-38, 1.1754944e-38, 3.4028235e38, 2.0, 0.5,
                    np.sqrt(2), np.sqrt(0.5), np.nextafter(F32(np.sqrt(2)), F32(0)),
                    np.nextafter(F32(np.sqrt(0.5)), F32(1)), np.nextafter(F32(1), F32(0)),
                    np.nextafter(F32(1), F32(2)), np.e, 10.0, 1e30], F32)


def test_special_values_are_numpys():
    """log(+-0) = -inf, log(+inf) = inf, log of a negative, -inf or NaN is NaN, log(1) = +0
    exactly; the finite results within the bound."""
    with np.errstate(all="ignore"):
        got = Tensor(SPECIAL).log().numpy()
        exact = np.log(SPECIAL.astype(np.float64))
    assert np.array_equal(np.isnan(got), np.isnan(exact))
    inf = np.isinf(exact)
    np.testing.assert_array_equal(got[inf], exact[inf].astype(F32))
    assert_same_bits(got[SPECIAL == 1], np.zeros(1, F32))
    fin = np.isfinite(exact)
    assert (ulps(got[fin], exact[fin], F32) <= ULPS).all()


def test_every_float16_log_is_within_its_bound():
    """float16 computes its log in float32 (render.py's _fcast) and rounds once more."""
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        got = Tensor(x).log().numpy()
        exact = np.log(x.astype(np.float64))
    assert got.dtype == np.float16
    assert np.array_equal(np.isnan(got), np.isnan(exact))
    inf = np.isinf(exact)
    np.testing.assert_array_equal(got[inf], exact[inf].astype(np.float16))
    fin = np.isfinite(exact)
    assert (ulps(got[fin], exact[fin], np.float16) <= ULPS).all()


def _values(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    return np.resize(np.concatenate([SPECIAL, np.exp(rng.uniform(-100, 88, 37)).astype(F32)]), n)


@pytest.mark.parametrize("n", [1, 7, 16, 17, 101, 4099])
def test_a_vector_loop_and_its_scalar_tail_give_the_same_bits(n: int):
    """The same value gives the same bits at every position, rolled so that each value meets
    every lane and the loop's tail (a clone's masked call or the scalar function): the clones
    and the scalar function run one core (glibc's scalar logf and libmvec's could differ)."""
    x = _values(n)
    with np.errstate(all="ignore"):
        got = np.concatenate([Tensor(np.roll(x, s)).log().numpy() for s in range(16)])
    bits = np.concatenate([np.roll(x, s) for s in range(16)]).view(np.uint32)
    for v in np.unique(bits):
        assert_same_bits(got[bits == v], np.resize(got[bits == v][:1], (bits == v).sum()))


def test_a_vectorized_loop_calls_the_librarys_clone(tmp_path, monkeypatch):
    """An elementwise log's kernel binds logf to rg_logf (vlog.DECLARATION) and its built
    library calls one of the clones: the loop vectorized (libmvec's _ZGV..._logf before)."""
    if not build.is_gcc(build.compiler()):
        pytest.skip("the SIMD clones are called by gcc's vectorizer")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    monkeypatch.delenv("RULEGRAD_CFLAGS", raising=False)
    build.clear_memory_cache()
    run._programs.clear()
    x = np.exp(np.random.default_rng(1).standard_normal((64, 250))).astype(F32)
    t = Tensor(x).log()
    kernels = [render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}")
               for i, item in enumerate(t.schedule())]
    assert vlog.DECLARATION in build.full_source(kernels)
    try:
        got = t.numpy()
    finally:
        run._programs.clear()
    programs = [p.read_bytes() for p in tmp_path.rglob("*.so") if b"k0_" in p.read_bytes()]
    assert programs and any(re.search(rb"_ZGV[bcde]N\d+v_rg_logf", p) for p in programs)
    assert (ulps(got, np.log(x.astype(np.float64)), F32) <= ULPS).all()


def _form(monkeypatch, take, program_run):
    """program_run() with the rows_across rule replaced by `take` (a fresh compile)."""
    run._programs.clear()
    try:
        with monkeypatch.context() as m:
            m.setattr(generated_opt, "across", take)
            return program_run()
    finally:
        run._programs.clear()


def _source(t: Tensor) -> str:
    return "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source
                     for i, item in enumerate(t.schedule()))


@pytest.mark.parametrize("width", ["32", "64"])
@pytest.mark.parametrize("cols", [5, 9, 13, 16])
def test_a_log_across_lanes_is_the_inline_core_with_the_librarys_bits(width: str, cols: int,
                                                                       monkeypatch):
    """A row's log across lanes (the rows-across form of `log(max(x))`, 8 rows' maxima in a
    vector, taken wherever it applies) is vlog's core inline (`rg_vlog_f32`), no longer glibc's
    logf lane by lane, and gives, bit for bit, what the row form's call of the library's
    function gives; numpy's values within the bound."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    rows = 1031  # (prime: a last group of fewer than 8 rows)
    x = np.resize(np.concatenate([SPECIAL, _values(997)]), (rows, cols))
    x[:SPECIAL.size] = x[-SPECIAL.size:] = SPECIAL[:, None]  # rows whose max is each of them
    program = lambda: Tensor(x).max(-1).log()  # noqa: E731
    always = lambda sink: across(sink, always=True)  # noqa: E731
    source = _form(monkeypatch, always, lambda: _source(program()))
    assert "rg_vlog_f32(" in source and "rg_vmap_f32(logf" not in source
    with np.errstate(all="ignore"):
        got = _form(monkeypatch, always, lambda: program().numpy())
        row = _form(monkeypatch, lambda sink: None, lambda: program().numpy())
        exact = np.log(x.astype(np.float64).max(-1))
    assert_same_bits(got, row)
    fin = np.isfinite(exact)
    assert (ulps(got[fin], exact[fin], F32) <= ULPS).all()
