"""rev68c: review of half68 (the block library's panel copy filling a product's staged panels,
gemm.py's `_staged_copy`; the float16 widening copy, blocks.py's `_half_pack`).

Checked against numpy's float32 product of the same operands (rounded to float16 for float16
inputs). Never timed."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import blocks
from rulegrad.backends.c.render import prelude


def _masked(b, m):
    return (Tensor(m).where(Tensor(b), 0.0), np.where(m, b, 0))


def _positive(b, m):
    return ((Tensor(b) > 0).where(Tensor(b), 0.0), np.where(b > 0, b, 0))


def _padded_k(b, m):  # 3 zero rows along k (x's extra 3 columns each meet a 0)
    return (Tensor(b).pad(((0, 3), (0, 0))), np.pad(b, ((0, 3), (0, 0))))


# (rows, k, columns): a whole number of 16-column panels (no column gate of the staged array's
# own, so y's select or gate was the only one), and a part-full last panel, small and prime
SHAPES = [(40, 70, 48), (40, 70, 50), (9, 13, 32), (17, 31, 17)]


@pytest.mark.parametrize("make", [_masked, _positive, _padded_k])
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_a_staged_y_under_a_select_or_a_pad_keeps_it(monkeypatch, dt, m, k, n, make):
    """exp(x) @ y, its panels staged on one core (pack_helpers' `panel_array`), with y a
    select of b (by a mask, by b > 0) or b padded along k: numpy's value. The library's copy
    of the staged panels dropped y's select and its load's gate (any WHERE taken for the last
    panel's column gate), copying b itself: 48 columns (no column gate) were off by up to 49,
    the pad read b's next row past k."""
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    rng = np.random.default_rng(m * k + n)
    b = rng.standard_normal((k, n)).astype(dt)
    mask = rng.standard_normal((k, n)) > 0
    y, yn = make(b, mask)
    kk = yn.shape[0]
    x = (rng.standard_normal((m, kk)) * 0.3).astype(dt)
    got = (Tensor(x).exp() @ y).numpy()
    ex = np.exp(x.astype(np.float32)).astype(dt).astype(np.float32)
    want = (ex @ yn.astype(np.float32)).astype(dt)
    tol = 1e-2 if dt is np.float16 else 1e-4
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=tol,
                               atol=tol)


@pytest.mark.skipif(shutil.which("clang") is None, reason="needs clang (RULEGRAD_CC=clang)")
@pytest.mark.parametrize("f16c", [True, False])
def test_the_widening_copy_builds_with_clang(tmp_path, f16c):
    """The float16 panel copy's library (blocks.py's `_half_pack`) compiled by clang (a
    RULEGRAD_CC the project supports: ctext's shuffles choose per compiler), with F16C and
    without: a transposed y of 19 steps of k by 21 columns in 2 panels of 16 (its register
    transpose, the column and k tails) gives numpy's widening, 0 past the columns. It used
    gcc's __builtin_shuffle, an error under clang."""
    kernel = blocks.half_pack_kernel(8)[0]
    src = tmp_path / "pack.c"
    src.write_text(prelude(kernel.uses) + "\n" + kernel.source)
    lib = tmp_path / "pack.so"
    run = subprocess.run(["clang", "-O2", "-shared", "-fPIC", "-mavx2", "-mfma",
                          "-mf16c" if f16c else "-mno-f16c", str(src), "-o", str(lib)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:2000]
    fn = getattr(ctypes.CDLL(str(lib)), blocks.half_pack_name(8))
    fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                   ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
    n, cols, tj, panels = 19, 21, 16, 2
    rng = np.random.default_rng(7)
    y = (rng.standard_normal((n, cols)) * 100).astype(np.float16)
    y[3, 4], y[5, 6], y[7, 8] = -0.0, np.inf, np.uint16(0x0001).view(np.float16)
    mem = np.zeros((cols, n + 3), np.float16)  # transposed: each column's k steps one run
    mem[:, :n] = y.T
    dst = np.full(panels * n * tj, 7.0, np.float32)
    fn(n, cols, mem.ctypes.data, 1, n + 3, dst.ctypes.data, tj, panels)
    want = np.zeros((n, panels * tj), np.float32)
    want[:, :cols] = y.astype(np.float32)
    got = dst.reshape(panels, n, tj).transpose(1, 0, 2).reshape(n, panels * tj)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


# RULEGRAD_CFLAGS settings: the default's -march=native, one turning F16C off after it (or with
# AVX), none (another target), and F16C asked for by name
FLAGS = ["-march=native", "-march=native -mno-f16c", "-march=native -mno-avx", "-O2",
         "-O2 -mf16c", "-O2 -mf16c -mno-f16c"]


@pytest.mark.parametrize("flags", FLAGS)
def test_f16c_says_what_the_compiler_builds(monkeypatch, flags):
    """`target.f16c()` (which prices pack_helpers' float16 copy) is True exactly when the
    kernels' compiler, given these flags, defines __F16C__ (the block library's copy then
    takes F16C's conversion): the compiler's own answer, asked here. It had said True under
    '-march=native -mno-f16c' (a software widen priced as F16C's) and False under
    '-O2 -mf16c'."""
    from rulegrad.backends.c.build import compiler
    from rulegrad.runtime import target

    monkeypatch.setenv("RULEGRAD_CFLAGS", flags)
    if "f16c" not in target.cpu().flags:  # (a CPU without F16C: never believed)
        assert not target.f16c()
        return
    macros = subprocess.run([*compiler(), *flags.split(), "-dM", "-E", "-"], input="",
                            capture_output=True, text=True, check=True).stdout
    assert target.f16c() == ("__F16C__" in macros.split())
