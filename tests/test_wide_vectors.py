"""The packed products in 512-bit registers (runtime/target.py): every shape case of
tests/test_c_gemm.py, and attention's flash tiles, against numpy; and how the width is chosen.

The rest of the suite runs 256-bit tiles (conftest.py). On a CPU without AVX-512 the 512-bit
vectors are still valid C (the compiler splits them), so these tests run everywhere."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from test_c_gemm import CASES, _conv_np, _conv_rg, _rand, _softmax
from test_local_buffers import _attention, _data

from rulegrad import Tensor
from rulegrad.backends.c import compile_program
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime.env import EnvError
from rulegrad.runtime.target import vector_bytes


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")


@pytest.mark.parametrize("name,rg,ref,shapes", CASES, ids=[c[0] for c in CASES])
def test_packed_products_in_512_bit_tiles_match_numpy(wide: None, name: str,
                                                      rg: Callable | None, ref: Callable | None,
                                                      shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(len(name) + 1)
    arrays = [_rand(rng, *s) for s in shapes]
    rg, ref = (rg, ref) if rg is not None else (_conv_rg, _conv_np)
    out = rg(*(Tensor(a) for a in arrays))
    sched = out.schedule()
    acts = [a for item in sched
            for a in actions(optimize_kernel(lower_only(item.ast)))]
    packs = [a for a in acts if a.startswith(("PACK", "FLASH"))]
    assert packs, acts
    # a panel: two 512-bit registers of float32 columns, where there are 32 columns or more
    wide = [a for a in packs if re.search(r"x32\b|panels of 32\b", a)]
    assert ("zf32" in compile_program(sched).source) == bool(wide)  # printed, or the library's
    want = ref(*arrays)
    np.testing.assert_allclose(out.numpy(), want, rtol=2e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("columns,panel", [(35, 32), (64, 32), (20, 16)])
def test_products_with_a_whole_wide_panel_of_columns_take_512_bit_tiles(
        wide: None, columns: int, panel: int) -> None:
    """32 float32 columns or more: panels of 32 (512-bit registers); fewer: panels of 16, so a
    product of 20 columns does not compute 12 of padding."""
    rng = np.random.default_rng(columns)
    a, b = _rand(rng, 40, 47), _rand(rng, 47, columns)
    out = Tensor(a) @ Tensor(b)
    (item,) = out.schedule()
    acts = actions(optimize_kernel(lower_only(item.ast)))
    assert re.search(rf"tile 6x{panel}\b", " ".join(acts)), acts
    source = compile_program([item]).source
    assert ("zf32" in source) == (panel == 32)
    np.testing.assert_allclose(out.numpy(), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_float64_products_in_512_bit_tiles_match_numpy(wide: None) -> None:
    """Panels of two registers of 8 doubles: 35 columns are two whole panels and 3 left over."""
    rng = np.random.default_rng(5)
    a, b = _rand(rng, 33, 47, dtype=np.float64), _rand(rng, 47, 35, dtype=np.float64)
    out = Tensor(a) @ Tensor(b)
    assert "zf64" in compile_program(out.schedule()).source
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_in_512_bit_tiles_matches_numpy(wide: None, dtype: type) -> None:
    """Flash tiles of two 512-bit registers of columns: 27 query rows (tiles of 6, 3 left
    over), 40 keys and 37 output columns (neither a whole number of panels)."""
    q, k, v = _data((3, 27, 24), (3, 40, 24), (3, 40, 37), dtype=dtype)
    out = _attention(*(Tensor(a) for a in (q, k, v)), "rg")
    sched = out.schedule()
    sfx = "f32" if dtype is np.float32 else "f64"
    source = compile_program(sched).source
    assert source.count(f"rg_zfma_{sfx}") + source.count(f"rg_block_z{sfx}_") == 2
    np.testing.assert_allclose(out.numpy(), _attention(q, k, v, "np"), rtol=1e-5, atol=1e-6)


def test_the_width_is_chosen_by_the_setting_then_the_flags_then_the_cpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    assert vector_bytes() == 64
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
    assert vector_bytes() == 32
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "48")
    with pytest.raises(EnvError, match="RULEGRAD_VECTOR_BYTES='48'"):
        vector_bytes()
    monkeypatch.delenv("RULEGRAD_VECTOR_BYTES")
    # flags for another CPU than this one: 256-bit, what any x86-64 target compiles well
    monkeypatch.setenv("RULEGRAD_CFLAGS", "-O2 -march=x86-64-v3")
    assert vector_bytes() == 32
    # the default builds for this CPU: 512-bit where it has AVX-512F
    monkeypatch.delenv("RULEGRAD_CFLAGS")
    with open("/proc/cpuinfo") as f:
        flags = next(line for line in f if line.startswith("flags")).split()
    assert vector_bytes() == (64 if "avx512f" in flags else 32)


def _upcasts(t: Tensor) -> list[str]:
    return [a for item in t.schedule()
            for a in actions(optimize_kernel(lower_only(item.ast)))
            if a.startswith("UPCAST")]


@pytest.mark.parametrize("width", ["32", "64"])
def test_512_bit_targets_leave_contiguous_loops_to_gcc_and_keep_explicit_windows(
        monkeypatch: pytest.MonkeyPatch, width: str) -> None:
    """A softmax's and a layer norm's last loops read 1 apart: explicit 8-lane vectors on a
    256-bit target, gcc's `omp simd` (16 lanes) on a 512-bit one, in a kernel compiled at the
    explicit vectors' level all the same (not -O3). A 2x2 max-pool reads 2 apart: explicit
    vectors on both. Every value is numpy's (only how the loop is vectorized changed)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    rng = np.random.default_rng(int(width))
    x = rng.standard_normal((64, 200)).astype(np.float32)
    x[3, 7] = np.nan
    soft = Tensor(x).softmax(-1)
    d = Tensor(x) - Tensor(x).mean(axis=1, keepdim=True)
    norm = d / ((d * d).mean(axis=1, keepdim=True) + 1e-5).sqrt()
    p = rng.standard_normal((4, 8, 16, 32)).astype(np.float32)
    pool = Tensor(p).reshape(4, 8, 8, 2, 16, 2).max(axis=(3, 5))
    explicit = "vectors of 8"
    for t in (soft, norm):
        ups = _upcasts(t)
        assert ups and all((explicit in a) == (width == "32") for a in ups), ups
        (item,) = t.schedule()
        # (a level with explicit vectors, never -O3's "loops": "vector", or "explicit" where no
        # plain loop is left for gcc, as roof67's 8-lane row of exps leaves a softmax's)
        kind = render_kernel(optimize_kernel(lower_only(item.ast)), "k").kind
        assert kind in ("vector", "explicit"), kind
    assert any(explicit in a for a in _upcasts(pool)), _upcasts(pool)
    np.testing.assert_allclose(soft.numpy(), _softmax(x), rtol=1e-6)
    x64 = x.astype(np.float64)
    d64 = x64 - x64.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(norm.numpy(), d64 / np.sqrt((d64 * d64).mean(1, keepdims=True)
                                                           + 1e-5), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(pool.numpy(), p.reshape(4, 8, 8, 2, 16, 2).max(axis=(3, 5)))
