"""half68: a float16 product's panels of y copied and widened by the block library
(blocks.py's `_half_pack`, `rg_pack_*_h16`): F16C's 8-lane conversion where the kernels are
built for it, else the software widen (ctext.HALF_WIDEN) lane by lane; a y read transposed
(`x @ w.T`) 8 steps of k of 8 columns at a time, transposed in registers. The panels staged in
a kernel-local array (one core) are filled by the same copy (gemm.py's `_staged_copy`).

Checked against numpy: the copy's panels bit for bit against numpy's widening (both builds,
with and without F16C, compiled here from the library's text), and float16 products against
numpy's float32 sum of the widened operands (runtime/semantics.py) rounded to float16, with
odd sizes, NaN, inf, -0.0, subnormal halves and 65504. Never timed."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import blocks, compile_program
from rulegrad.backends.c.render import prelude

# halves at the edges: the largest, subnormals (the least, one of 0x03ff), -0.0, inf, a quiet NaN
SPECIAL = np.array([0x7bff, 0xfbff, 0x0001, 0x83ff, 0x8000, 0x7c00, 0xfc00, 0x7e00],
                   np.uint16).view(np.float16)


def _pack_library(tmp_path, f16c: bool) -> ctypes.CDLL:
    """The widening copy compiled from its library's text, for a target with F16C or without."""
    kernel = blocks.half_pack_kernel(8)[0]
    src = tmp_path / f"pack_{f16c}.c"
    src.write_text(prelude(kernel.uses) + "\n" + kernel.source)
    lib = tmp_path / f"pack_{f16c}.so"
    flags = ["-mavx2", "-mfma", "-mf16c" if f16c else "-mno-f16c"]
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", *flags, str(src), "-o", str(lib)],
                   check=True, capture_output=True)
    return ctypes.CDLL(str(lib))


# (sk, sj): y row-major (contiguous along the columns) or transposed (contiguous along k); k
# steps n, columns, panels: whole 8x8 blocks, a part-full last panel, fewer than 8 columns
CASES = [(1, 21, 13, 2), (1, 48, 16, 3), (1, 37, 5, 1), (1, 40, 33, 3),
         (0, 21, 13, 2), (0, 37, 16, 1), (0, 9, 40, 3), (0, 3, 7, 1)]


@pytest.mark.parametrize("f16c", [True, False])
@pytest.mark.parametrize("transposed,n,cols,panels", CASES)
def test_the_widening_copy_gives_numpys_float32_values(tmp_path, f16c, transposed, n, cols,
                                                       panels):
    """dst[p][k][c] = float32(y[k][p * 16 + c]) for the columns, 0 past them: numpy's widening,
    bit for bit (a NaN quiet, as both give it); y's rows a stride longer than its columns."""
    fn = getattr(_pack_library(tmp_path, f16c), blocks.half_pack_name(8))
    fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                   ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
    tj = 16
    rng = np.random.default_rng(n * cols)
    y = (rng.standard_normal((n, cols)) * 3).astype(np.float16)
    y.flat[rng.permutation(y.size)[:len(SPECIAL)]] = SPECIAL[:min(len(SPECIAL), y.size)]
    if transposed:  # stored (cols, n), rows n + 3 apart
        mem = np.zeros((cols, n + 3), np.float16)
        mem[:, :n] = y.T
        sk, sj = 1, n + 3
    else:  # stored (n, cols), rows cols + 5 apart
        mem = np.zeros((n, cols + 5), np.float16)
        mem[:, :cols] = y
        sk, sj = cols + 5, 1
    dst = np.full(panels * n * tj, 7.0, np.float32)
    fn(n, cols, mem.ctypes.data, sk, sj, dst.ctypes.data, tj, panels)
    want = np.zeros((n, panels * tj), np.float32)
    want[:, :cols] = y.astype(np.float32)
    got = dst.reshape(panels, n, tj).transpose(1, 0, 2).reshape(n, panels * tj)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's float16 product: a float32 sum of the operands widened, rounded to float16."""
    with np.errstate(all="ignore"):
        return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)


def _check(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == np.float16
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
    assert np.array_equal(got[np.isinf(got)], want[np.isinf(want)])
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin].astype(np.float32), want[fin].astype(np.float32),
                               rtol=4e-3, atol=4e-3)


# (rows, k, columns, transposed): the 2-3 row cases rev67c left, odd and prime sizes, a column
# count under a vector, rows past a tile
PRODUCTS = [(2, 2048, 512, True), (3, 4096, 256, True), (2, 2000, 500, True),
            (5, 257, 13, True), (7, 13, 1000, False), (17, 257, 1000, False),
            (1, 2048, 300, True), (3, 4099, 37, True), (64, 257, 256, False),
            (2, 13, 1001, True)]


@pytest.mark.parametrize("m,k,n,transposed", PRODUCTS)
def test_float16_products_match_numpys_float32_sum(m, k, n, transposed):
    """float16 x @ w and x @ w.T (w stored (n, k)), the panels widened by the copy: numpy's
    float32 sum of the widened operands, rounded to float16; a NaN, an inf, 65504 and
    subnormal halves in x and in w land on their own outputs."""
    rng = np.random.default_rng(m * k + n)
    a = rng.standard_normal((m, k)).astype(np.float16)
    w = (rng.standard_normal((n, k) if transposed else (k, n)) * k ** -0.5).astype(np.float16)
    a[0, 1] = np.float16(65504)  # row 0: a large finite term in every output
    a[-1, 0] = np.nan  # the last row: NaN everywhere
    a[m // 2, 2] = np.float16(-0.0)
    a[0, 3] = np.uint16(0x0001).view(np.float16)  # the least subnormal
    wv = w if transposed else w.T  # (n, k) view
    wv[n - 1, 4] = np.inf  # the last column: inf, or NaN from inf * 0
    wv[0, 5] = np.uint16(0x83ff).view(np.float16)  # the largest subnormal, negative
    got = ((Tensor(a) @ Tensor(w).T) if transposed else (Tensor(a) @ Tensor(w))).numpy()
    _check(got, _reference(a, w.T if transposed else w))


def test_the_transposed_product_calls_the_widening_copy():
    """The copy is what runs (not a printed gather): float16 x @ w.T of 2x2048x512, the 2-3
    row case rev67c left, and its staged form (one core's) at 2x2000x500."""
    rng = np.random.default_rng(0)
    for m, k, n in ((2, 2048, 512), (2, 2000, 500)):
        a = rng.standard_normal((m, k)).astype(np.float16)
        w = rng.standard_normal((n, k)).astype(np.float16)
        source = compile_program((Tensor(a) @ Tensor(w).T).schedule()).source
        assert "rg_pack_vf32_h16(" in source, (m, k, n)


def test_without_f16c_the_copy_widens_in_software(tmp_path):
    """Kernels built without -march=native (no F16C: `target.f16c()` False) run the copy's
    software widen: the same values as numpy's, in a process of their own (a loaded library's
    functions are bound process-wide)."""
    script = textwrap.dedent("""
        import numpy as np
        from rulegrad import Tensor
        from rulegrad.backends.c import compile_program
        from rulegrad.runtime import target
        assert not target.f16c()
        rng = np.random.default_rng(5)
        a = rng.standard_normal((3, 1031)).astype(np.float16)
        w = (rng.standard_normal((300, 1031)) / 32).astype(np.float16)
        a[1, 7] = np.nan; w[5, 3] = np.inf; a[2, 9] = np.uint16(0x03ff).view(np.float16)
        t = Tensor(a) @ Tensor(w).T
        assert "rg_pack_vf32_h16(" in compile_program(t.schedule()).source
        got = t.numpy()
        with np.errstate(all="ignore"):
            want = (a.astype(np.float32) @ w.T.astype(np.float32)).astype(np.float16)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        fin = np.isfinite(want)
        assert np.array_equal(np.isinf(got), np.isinf(want))
        assert np.allclose(got[fin].astype(np.float32), want[fin].astype(np.float32),
                           rtol=4e-3, atol=4e-3)
        print("ok")
    """)
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path), "RULEGRAD_CFLAGS": "-O2"}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


@pytest.mark.parametrize("big", [False, True])
def test_two_rows_over_a_narrow_float16_w_t_pack_with_f16c(fake_machine, monkeypatch, big):
    """2x20000x9 float16 x @ w.T: with F16C's widening copy priced as a vector's (`_cost`) it
    packs where the element-a-step copy's price kept it as dots (2.1x main's dots on the
    EPYC); numpy's value, products past float16's range or under its least subnormal."""
    from optimizer_actions import optimized_kernels

    from rulegrad.rules import pack_helpers
    monkeypatch.setattr(pack_helpers, "f16c", lambda: True)  # (priced as for F16C anywhere)
    fake_machine(2, 1 << 20)
    v = 300.0 if big else 1e-4
    rng = np.random.default_rng(3)
    x = (rng.choice([-1.0, 1.0], (2, 20000)) * v).astype(np.float16)
    w = np.full((9, 20000), v, np.float16)
    t = Tensor(x) @ Tensor(w).T
    assert any("PACK" in a for _, acts in optimized_kernels(t) for a in acts)
    _check(t.numpy(), _reference(x, w.T))


def test_one_row_tile_over_a_float16_w_t_runs_panel_after_panel(fake_machine):
    """2x2048x512 float16 x @ w.T, one row tile: its panels each thread's own, widened and run
    while in cache (`PARALLEL panels`), not all copied first into a buffer twice y's bytes
    (`PARALLEL tiles`); x's two rows, packed again per panel, widened by the library's copy;
    numpy's value."""
    from optimizer_actions import optimized_kernels

    fake_machine(2, 1 << 10)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 2048)).astype(np.float16)
    w = (rng.standard_normal((512, 2048)) / 45).astype(np.float16)
    x[1, 5], w[7, 9] = np.float16(65504), np.float16(-0.0)
    t = Tensor(x) @ Tensor(w).T
    (acts,) = [a for _, a in optimized_kernels(t)]
    assert "PARALLEL panels" in " ".join(acts), acts
    source = compile_program(t.schedule()).source
    assert source.count("rg_pack_vf32_h16(") == 2  # (y's panel and x's rows)
    _check(t.numpy(), _reference(x, w.T))
