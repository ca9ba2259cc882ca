"""float32 exp: the library's `rg_expf` and its vector forms (backends/c/vexp.py).

Every float32 and float16 EXP a kernel computes (softmax, logsumexp, sigmoid, tanh, erf, gelu)
calls it (the kernels' `expf`, bound to it by their prelude); its vectorized loops call its SIMD
clones, the scalar tail the function itself. Checked against numpy: every 61st float32 of
[-103.9, 88.7] within 1 ulp of the exact value (numpy's float64 exp; libmvec's expf, called
before, was 2.56 ulps off at -5.89), every float16 within 1 ulp of float16's exact value,
special values (NaN, +-inf, +-0.0, subnormals, the overflow and underflow edges) as numpy gives
them, a vector loop and its scalar tail bit for bit (libm's scalar expf and libmvec's vector one
were not), and each family's built library calling a clone.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from special_values import assert_same_bits
from ulps import fused, ulps

from rulegrad import Tensor
from rulegrad.backends.c import build, run, vexp
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import target

F32 = np.float32


# vexp.py's bounds: 0.9 ulp with fused multiply-adds (measured 0.894 over every float32 of the
# range), 1.2 without (1.176, the suite under RULEGRAD_CFLAGS=-O2)
ULPS = 0.9 if fused() else 1.2


def _dense() -> np.ndarray:
    """Every 61st float32 bit pattern from -103.9 to 88.7, both signs (about 37M values)."""
    top = np.array([88.7], F32).view(np.uint32)[0]
    bottom = np.array([103.9], F32).view(np.uint32)[0]
    pos = np.arange(0, top, 61, dtype=np.uint32)
    neg = np.arange(0, bottom, 61, dtype=np.uint32) | np.uint32(0x80000000)
    return np.concatenate([pos, neg]).view(F32)


def test_float32_exp_is_within_an_ulp_of_the_exact_value_over_its_range():
    x = _dense()
    got = Tensor(x).exp().numpy()
    exact = np.exp(x.astype(np.float64))
    err = ulps(got, exact, F32)
    worst = int(np.argmax(err))
    assert err[worst] <= ULPS, (float(x[worst]), float(got[worst]), float(exact[worst]))


def test_the_cores_exp_of_r_takes_six_fused_steps():
    """exp(r) = 1 + r + r^2 P(r) with P a degree-4 minimax fit (bench/exp_poly.py): six fused
    multiply-adds per lane, where Cephes' degree-5 P took seven, within the same 0.9 ulp (the
    test above checks the bound, bench/exp_poly.py --step 1 every float32 of the range)."""
    steps = vexp.CORE.split("#define RG_EXP_POLY(FMA, B, p, r)")[1].split("\n#")[0]
    assert steps.count("FMA(p, r,") == 6, steps


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1e-30,
                    88.72283, np.nextafter(F32(88.72283), F32(np.inf)), 88.8, 89.0, 100.0,
                    3e38, -3e38, -87.33654, -87.34, -100.0, -103.0, -103.97207, -103.97208,
                    -103.98, -104.0, -1000.0, 1.0, -1.0, 0.5, -0.5, 0.34657359, -0.34657359],
                   F32)


def test_special_values_are_numpys():
    """NaN stays NaN, exp(+-0) = 1 exactly, +inf and overflow give inf, -inf and underflow +0,
    the subnormal results near the underflow edge are rounded once (numpy's values)."""
    got = Tensor(SPECIAL).exp().numpy()
    with np.errstate(over="ignore"):
        exact = np.exp(SPECIAL.astype(np.float64))
        want = exact.astype(F32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    fin = ok & np.isfinite(want)
    exact_cases = ok & (np.isinf(want) | (want == 0) | (want == 1) | (want < 2 ** -140))
    np.testing.assert_array_equal(got[exact_cases], want[exact_cases])
    assert not np.signbit(got[ok]).any()
    assert (ulps(got[fin], exact[fin], F32) <= ULPS).all()


def test_every_float16_exp_is_within_an_ulp():
    """float16 computes its exp in float32 (render.py's _fcast) and rounds once more."""
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    got = Tensor(x).exp().numpy()
    assert got.dtype == np.float16
    with np.errstate(over="ignore"):
        exact = np.exp(x.astype(np.float64))
        exact16 = exact.astype(np.float16)
    nan = np.isnan(x)
    assert np.isnan(got[nan]).all() and not np.isnan(got[~nan]).any()
    fin = ~nan & np.isfinite(exact16)
    assert (ulps(got[fin], exact[fin], np.float16) <= ULPS).all()
    big = ~nan & ~fin
    np.testing.assert_array_equal(got[big], exact16[big])


@pytest.mark.parametrize("n", [1, 7, 16, 17, 101, 4099])
def test_a_vector_loop_and_its_scalar_tail_give_the_same_bits(n: int):
    """The same values at every position: the vector clones and the scalar function run one
    core (libm's scalar expf beside libmvec's vector one could differ by an ulp)."""
    vals = np.concatenate([SPECIAL, np.random.default_rng(n).uniform(-104, 89, 37).astype(F32)])
    x = np.resize(vals, n)
    got = Tensor(x).exp().numpy()
    bits = x.view(np.uint32)
    for v in np.unique(bits):
        same = got[bits == v]
        if np.isnan(same[0]):
            assert np.isnan(same).all()
        else:
            assert (same.view(np.uint32) == same[0].view(np.uint32)).all(), float(same[0])


FAMILIES = {
    "exp": lambda x: x.exp(),
    "softmax": lambda x: x.softmax(-1),
    "logsumexp": lambda x: x.logsumexp(-1),
    "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(),
    "gelu": lambda x: x.gelu(),
    "erf": lambda x: x.erf(),
}


# (a logsumexp's sum of exps and a softmax's row of them: the core inline, explicit vectors;
# `lane_fill` for a row of 8 or more, as this test's)
@pytest.mark.parametrize("name", sorted(set(FAMILIES) - {"logsumexp", "softmax"}))
def test_every_float32_exp_calls_the_vector_form(name: str, tmp_path, monkeypatch):
    """Each family's kernels call expf, which their prelude binds to the library's rg_expf
    (vexp.DECLARATION), and a built library calls one of rg_expf's SIMD clones: its exp loop
    vectorized (erf's exp, on a branch gcc had sunk the call into, stayed scalar when the
    function was declared under a name of its own)."""
    if not build.is_gcc(build.compiler()):
        pytest.skip("the SIMD clones are called by gcc's vectorizer")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    monkeypatch.delenv("RULEGRAD_CFLAGS", raising=False)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")  # (at 512 bits: inline, 512_bit tests)
    build.clear_memory_cache()
    run._programs.clear()
    x = np.random.default_rng(1).standard_normal((64, 250)).astype(F32) * 4
    t = FAMILIES[name](Tensor(x))
    kernels = [render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}")
               for i, item in enumerate(t.schedule())]
    assert re.search(r"\bexpf\(", "\n".join(k.source for k in kernels))
    assert vexp.DECLARATION in build.full_source(kernels)
    try:
        t.numpy()
    finally:
        run._programs.clear()
    programs = [p.read_bytes() for p in tmp_path.rglob("*.so") if b"k0_" in p.read_bytes()]
    assert programs and any(re.search(rb"_ZGV[bcde]N\d+v_rg_expf", p) for p in programs)


@pytest.mark.parametrize("width", ["32", "64"])
def test_a_reduce_of_exps_computes_them_inline_with_the_librarys_bits(width: str, monkeypatch):
    """A row's reduce of exps keeps vectors of partial results whose exp is vexp's core inline
    (render.py's `rg_vexp_f32`, vexp.VECTOR), not a call, at either vector width: a row's max
    of exps (exact in any order) is, bit for bit, the max of the exps gcc's loop computes by
    calling the library's clones and scalar function; a logsumexp is numpy's."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x = np.concatenate([SPECIAL, _dense()[::997]])
    x = np.resize(x, (x.size // 250, 250))  # rows of 250: a row's last values are scalar steps
    for t in (Tensor(x).exp().max(-1), Tensor(x).logsumexp(-1)):
        kernels = [render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}")
                   for i, item in enumerate(t.schedule())]
        source = "\n".join(k.source for k in kernels)
        assert "rg_vexp_f32(" in source  # (a row of 250: its 29th to 31st vectors one by one)
        assert vexp.VECTOR in build.full_source(kernels)
        assert ("rg_zexp_f32(" in source) == (width == "64")  # the pairs before them: 16 lanes
    with np.errstate(all="ignore"):
        exps = Tensor(x).exp().numpy()  # a store's loop: the library's
        assert "rg_vexp_f32(" not in build.full_source(
            [render_kernel(optimize_kernel(lower_only(item.ast)), "k0")
             for item in Tensor(x).exp().schedule()])
        assert_same_bits(Tensor(x).exp().max(-1).numpy(), exps.max(-1))
        m = x.astype(np.float64).max(1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        want = np.log(np.exp(x - m).sum(1)) + m[:, 0]
        np.testing.assert_allclose(Tensor(x).logsumexp(-1).numpy(), want, rtol=2e-6,
                                   equal_nan=True)


def test_float64_exp_stays_libms():
    """float64 is not rg_expf's: its kernels call libm's exp (or libmvec's) and are exact to
    numpy's within an ulp."""
    x = np.random.default_rng(2).uniform(-700, 700, 1001)
    t = Tensor(x).exp()
    (item,) = t.schedule()
    rk = render_kernel(optimize_kernel(lower_only(item.ast)), "k0")
    assert "rg_expf" not in build.full_source([rk]) and re.search(r"\bexp\(", rk.source)
    np.testing.assert_allclose(t.numpy(), np.exp(x), rtol=1e-15)  # LIBM_ULPS (4) of float64


def test_a_flags_change_within_a_process_binds_each_kernel_to_its_own_core(tmp_path,
                                                                          monkeypatch):
    """A kernel built for baseline x86-64 (RULEGRAD_CFLAGS=-O2: no AVX-512, no FMA) and one
    built for this CPU each call the exp of the core their flags take (vexp.TAG): the library
    built first for the one had no 16-lane clone, and the other's load failed on it."""
    if not build.is_gcc(build.compiler()):
        pytest.skip("the SIMD clones are called by gcc's vectorizer")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")  # (at 512 bits: inline, 512_bit tests)
    x = np.random.default_rng(5).uniform(-100, 88, 4099).astype(F32)
    exact = np.exp(x.astype(np.float64))
    symbols = []
    for flags in ("-O2", None):
        if flags:
            monkeypatch.setenv("RULEGRAD_CFLAGS", flags)
        else:
            monkeypatch.delenv("RULEGRAD_CFLAGS", raising=False)
        build.clear_memory_cache()
        run._programs.clear()
        before = set(tmp_path.rglob("*.so"))
        try:
            got = Tensor(x).exp().numpy()
        finally:
            run._programs.clear()
        assert (ulps(got, exact, F32) <= 1.2).all()
        (lib,) = [p for p in set(tmp_path.rglob("*.so")) - before if b"k0_" in p.read_bytes()]
        symbols.append(set(re.findall(rb"rg_expf_[a-z]\b", lib.read_bytes())))
    if "avx512f" in target.cpu().flags:
        assert symbols[0] and symbols[1] and symbols[0] != symbols[1], symbols


def _rows_with_specials(rows: int, cols: int) -> np.ndarray:
    """Normal rows with a NaN, +inf and -inf in the middle of rows 0-2 (as many as there are
    but the last) and, past 3 rows, a row of -inf only."""
    x = np.random.default_rng(cols).standard_normal((rows, cols)).astype(F32) * 8
    for r, v in enumerate([np.nan, np.inf, -np.inf][:rows - 1]):
        x[r, cols // 2] = v
    if rows > 3:
        x[3] = -np.inf
    return x


def _lse_kernels(x: np.ndarray) -> str:
    t = Tensor(x).logsumexp(-1)
    return "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source
                     for i, item in enumerate(t.schedule()))


@pytest.mark.parametrize("cols", [1, 7, 33, 100, 1000, 1024, 4097])
@pytest.mark.parametrize("rows", [1, 3, 4096])
def test_a_512_bit_target_exps_a_reduces_vectors_in_pairs_of_16_lanes(rows: int, cols: int,
                                                                        monkeypatch):
    """On a 512-bit target (runtime/target.py) a row's sum of exps computes two of its 8-lane
    vectors at once (wide_exps' `paired`: rg_zexp_f32, vexp.WIDE), one 16-lane exp per block
    of 16 values where a 256-bit target has two 8-lane ones; the partial sums take the same
    values in the same order and the exps the same bits, so the logsumexp is the 256-bit
    target's bit for bit, and numpy's. Rows with NaN, +-inf and only -inf among them."""
    x = _rows_with_specials(rows, cols)
    got = {}
    for width in ("32", "64"):
        monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
        source = _lse_kernels(x)
        pairs = 0 if cols < 32 else (cols - cols % 32) // 16  # the whole blocks of 4 vectors
        assert len(re.findall(r"rg_zexp_f32\(", source)) == (width == "64" and pairs > 0)
        with np.errstate(all="ignore"):
            got[width] = Tensor(x).logsumexp(-1).numpy()
    assert_same_bits(got["64"], got["32"])
    m = x.astype(np.float64).max(1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        want = np.log(np.exp(x - m).sum(1)) + m[:, 0]
    np.testing.assert_allclose(got["64"], want, rtol=2e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("cols", [1, 7, 33, 100, 1000, 1024, 4097])
@pytest.mark.parametrize("rows", [1, 3, 4096])
def test_a_512_bit_target_fills_a_softmax_rows_exps_16_lanes_at_a_time(rows: int, cols: int,
                                                                         monkeypatch):
    """On a 512-bit target a softmax's kernel-local row of exps (wide_exps' `wide_fill`) is
    filled by explicit 16-lane vectors with vexp's core inline (rg_zexp_f32), where a 256-bit
    target's are 8-lane ones (`lane_fill`: rg_vexp_f32): the same core, so the same bits; and
    numpy's softmax within float32 rounding. Rows with NaN, +-inf and only -inf among them."""
    x = _rows_with_specials(rows, cols)
    got = {}
    for width in ("32", "64"):
        monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
        t = Tensor(x).softmax(-1)
        source = "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source
                           for i, item in enumerate(t.schedule()))
        # (a row of 1 is a store along the rows: `stores_a_loops` below)
        assert len(re.findall(r"rg_zstore_f32\(&loc", source)) == (width == "64" and cols >= 16)
        assert bool(re.search(r"rg_zexpn?_f32\(", source)) <= (width == "64")
        assert bool(re.search(r"rg_vstore_f32\(&loc", source)) == (width == "32" and cols >= 8)
        with np.errstate(all="ignore"):
            got[width] = Tensor(x).softmax(-1).numpy()
    assert_same_bits(got["64"], got["32"])
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
        want = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(got["64"], want, rtol=4e-6, atol=1e-30, equal_nan=True)


@pytest.mark.parametrize("shape", [(1,), (7,), (16,), (17,), (3, 33), (100,), (4096, 1000),
                                   (1, 1024), (3, 4097), (999983,)])
def test_a_512_bit_target_stores_a_loops_exps_16_lanes_at_a_time(shape: tuple, monkeypatch):
    """On a 512-bit target an elementwise float32 exp (with arithmetic around it: exp(x) * 2 - 1)
    is stored by explicit 16-lane vectors with vexp's core inline (wide_exps' `wide_fill`:
    rg_zexp_f32, rg_zstore_f32), where gcc's loop called the library's clone per vector; the
    same bits as the 256-bit target's, and within an ulp of numpy's float64 exp rounded."""
    vals = np.concatenate([SPECIAL, np.random.default_rng(len(shape)).uniform(-104, 89, 4099)
                           .astype(F32)])
    x = np.resize(vals, shape)
    got = {}
    for width in ("32", "64"):
        monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
        for f in (lambda t: t.exp(), lambda t: t.exp() * 2 - 1):
            t = f(Tensor(x))
            source = "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), "k0").source
                               for item in t.schedule())
            wide = width == "64" and shape[-1] >= 16
            assert ("rg_zexp_f32(" in source and "rg_zstore_f32(" in source) == wide
        with np.errstate(all="ignore"):
            got[width] = Tensor(x).exp().numpy()
    assert_same_bits(got["64"], got["32"])
    with np.errstate(all="ignore"):
        exact = np.exp(x.astype(np.float64))
        rounded = exact.astype(F32)
    fin = np.isfinite(rounded)
    assert (ulps(got["64"][fin], exact[fin], F32) <= ULPS).all()
    np.testing.assert_array_equal(got["64"][~fin], rounded[~fin])


@pytest.mark.parametrize("shape", [(7,), (17,), (3, 33), (4096, 1000), (3, 4097)])
def test_a_512_bit_target_selects_a_sigmoids_exps_in_16_mask_lanes(shape: tuple, monkeypatch):
    """A sigmoid's stable form (exp(-|x|), then a select by x >= 0) is stored 16 lanes at a time
    on a 512-bit target, its compares and select on 16 mask lanes (vexp.WIDE's rg_zsel_f32):
    the 256-bit target's bits (NaN, +-0, +-inf, the overflow edges among the values), and
    numpy's sigmoid within a few float32 ulps."""
    vals = np.concatenate([SPECIAL, np.random.default_rng(3).uniform(-104, 89, 4099).astype(F32)])
    x = np.resize(vals, shape)
    got = {}
    for width in ("32", "64"):
        monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
        t = Tensor(x).sigmoid()
        source = "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), "k0").source
                           for item in t.schedule())
        assert ("rg_zsel_f32(" in source) == (width == "64" and shape[-1] >= 16)
        with np.errstate(all="ignore"):
            got[width] = t.numpy()
    assert_same_bits(got["64"], got["32"])
    with np.errstate(all="ignore"):
        want = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(F32)
    np.testing.assert_allclose(got["64"], want, rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("shape", [(3, 33), (64, 1000)])
def test_a_16_lane_store_keeps_its_lanes_across_a_local_row_it_reads(shape: tuple, monkeypatch):
    """exp(softmax(x)): the store's loop of exps is 16 lanes a step, and the softmax's local row
    it reads is filled inside that store's kernel first (render.py's `_open_local`); the store's
    lanes stay 16 across it (a local row that set them back to 8 left half of each vector's
    outputs unwritten). Bits equal to the 256-bit target's, and numpy's values."""
    x = np.random.default_rng(shape[1]).standard_normal(shape).astype(F32)
    got = {}
    for width in ("32", "64"):
        monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
        t = Tensor(x).softmax(-1).exp()
        source = "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), "k0").source
                           for item in t.schedule())
        assert ("rg_zstore_f32(&p" in source) == (width == "64")
        got[width] = t.numpy()
    assert_same_bits(got["64"], got["32"])
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(got["64"], np.exp(e / e.sum(1, keepdims=True)), rtol=1e-6)
