"""Review of dot66 (rev66b): float16 products and the dots/packing choice by cost.

A float16 `x @ w` is numpy's matmul (runtime/tensor.py's docstring): numpy and torch sum the
exact float32 products of the widened operands in float32 and round once to float16. dot66
packed such sums that way (`_half_products`) while the plain loops (a product under the packing
threshold, `x @ w.T` kept as dots, a cache size that flips the choice) rounded each product to
float16 first: a product past 65504 was inf there (inf - inf: NaN) and one under 2**-25 was 0,
so the same program gave numpy's value or NaN/0 by its size or the machine's caches. Each test
here is one program run on both sides of the choice, against numpy's float16 matmul."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from optimizer_actions import optimized_kernels

from rulegrad import Tensor


def _packed(t: Tensor) -> bool:
    return any("PACK" in a for _, acts in optimized_kernels(t) for a in acts)


def _inputs(m: int, k: int, n: int, transposed: bool, big: bool):
    """x, w whose products all leave float16's range (300 * 300 = 90000 > 65504) and cancel
    in pairs (numpy: 0), or all fall under its least subnormal (1e-4 * 1e-4 = 1e-8 < 2**-24)
    and sum to a normal number (numpy: about k * 1e-8)."""
    v = 300.0 if big else 1e-4
    x = np.full((m, k), v, np.float16)
    w = np.full((n, k) if transposed else (k, n), v, np.float16)
    if big:
        x[:, 1::2] *= -1
        x[:, k - 1 if k % 2 else k:] = 0
    return x, w


def _software_widen(monkeypatch) -> None:
    """The packing action prices y's copy as for a target without F16C (an element a step, not
    F16C's vector: pack_helpers' `_cost`); the kernels are built as ever."""
    from rulegrad.rules import pack_helpers
    monkeypatch.setattr(pack_helpers, "f16c", lambda: False)


def _check(m: int, k: int, n: int, transposed: bool, big: bool) -> bool:
    x, w = _inputs(m, k, n, transposed, big)
    t = Tensor(x) @ (Tensor(w).T if transposed else Tensor(w))
    packed = _packed(t)  # (before it runs: the schedule of t)
    got = t.numpy()
    want = x @ (w.T if transposed else w)
    tw = torch.from_numpy(w)
    assert np.array_equal(want, (torch.from_numpy(x) @ (tw.T if transposed else tw)).numpy())
    assert got.dtype == np.float16 and np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3)
    return packed


@pytest.mark.parametrize("big", [True, False], ids=["overflowing", "underflowing"])
@pytest.mark.parametrize("m, k, n", [(2, 8, 3), (1, 5, 1), (2, 20000, 9), (7, 997, 33),
                                     (64, 97, 7)])
def test_float16_x_at_w_is_numpys_matmul_packed_or_not(fake_machine, m, k, n, big) -> None:
    """x @ w of float16: packed (2x20000x9 and up) or plain loops (2x8x3, under the packing
    threshold), numpy's and torch's value: had NaN and 0 in the plain loops."""
    fake_machine(2, 1 << 20)
    _check(m, k, n, False, big)


@pytest.mark.parametrize("big", [True, False], ids=["overflowing", "underflowing"])
@pytest.mark.parametrize("m, k, n", [(2, 20000, 9)])
def test_float16_x_at_w_t_is_numpys_matmul_as_dots(fake_machine, monkeypatch, m, k, n,
                                                   big) -> None:
    """x @ w.T of float16 kept as plain dots (`_dot_cost`; of two rows: more rows pack, their
    dots widening w.T again per row, narrow67's HALF_WIDEN_FMAS): numpy's value, as packed.
    Priced as a target without F16C, whose copy is an element a step: with F16C's widening
    copy these two rows pack (half68: 2.1x main's dots)."""
    fake_machine(2, 1 << 20)
    _software_widen(monkeypatch)
    assert not _check(m, k, n, True, big)


@pytest.mark.parametrize("big", [True, False], ids=["overflowing", "underflowing"])
@pytest.mark.parametrize("m, k, n", [(7, 997, 33), (5, 30011, 13)])
def test_float16_x_at_w_t_of_more_rows_is_numpys_matmul_packed(fake_machine, m, k, n,
                                                               big) -> None:
    """x @ w.T of float16 over several rows, packed (each element widened once): numpy's
    value."""
    fake_machine(2, 1 << 20)
    assert _check(m, k, n, True, big)


@pytest.mark.parametrize("big", [True, False], ids=["overflowing", "underflowing"])
def test_float16_choice_flipped_by_the_caches_keeps_the_value(fake_machine, monkeypatch,
                                                               big) -> None:
    """2x65521x16 float16 x @ w.T: dots with a 256 KB L2 and 1 MB L3 (its float32 panels of
    4 MB past them, written and read by each row tile), packed with a 64 MB L2 and 256 MB L3;
    numpy's value both ways (dots had NaN and 0). (4x4096x1024 packs either way since its dots
    pay the float16 widening per row: narrow67's HALF_WIDEN_FMAS.)"""
    fake_machine(2, 1 << 20)
    _software_widen(monkeypatch)  # (with F16C's copy both pack: half68, 2.45x main's dots)
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "256K")
    monkeypatch.setenv("RULEGRAD_L3_BYTES", "1M")
    assert not _check(2, 65521, 16, True, big)
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "64M")
    monkeypatch.setenv("RULEGRAD_L3_BYTES", "256M")
    assert _check(2, 65521, 16, True, big)


@pytest.mark.parametrize("big", [True, False], ids=["overflowing", "underflowing"])
@pytest.mark.parametrize("shape", [(1, 2, 4, 4, 3), (2, 16, 12, 12, 8)])
def test_float16_conv2d_is_torchs_small_or_packed(big, shape) -> None:
    """conv2d of float16 by float16 (a 3x3 window, plain loops or packed): torch's value, the
    products exact in float32 (had inf - inf = NaN and 0 where a product left float16's
    range)."""
    n, c, h, w_, o = shape
    v = 300.0 if big else 1e-4
    x = np.full((n, c, h, w_), v, np.float16)
    w = np.full((o, c, 3, 3), v, np.float16)
    if big:
        w[:, 1::2] *= -1
        w[:, c - 1 if c % 2 else c:] = 0
    got = Tensor(x).conv2d(Tensor(w)).numpy()
    want = torch.nn.functional.conv2d(torch.from_numpy(x).float(),
                                      torch.from_numpy(w).float()).half().numpy()
    assert got.dtype == np.float16 and np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3)


@pytest.mark.parametrize("m, k, n", [(2, 8, 3), (2, 20000, 9), (7, 997, 33)])
def test_a_float16_product_written_out_keeps_muls_rounding(fake_machine, m, k, n) -> None:
    """(x[:, None] * w.T[None]).sum(-1) of float16 is numpy's: each product rounded to float16
    (inf past 65504), summed: inf - inf, NaN, at every size. dot66's `_half_products` had
    packed it from 2x20000x9 up with the products kept exact: 0, where 2x8x3 gave NaN."""
    fake_machine(2, 1 << 20)
    x, w = _inputs(m, k, n, False, True)
    got = (Tensor(x)[:, None, :] * Tensor(w).T[None, :, :]).sum(-1).numpy()
    with np.errstate(invalid="ignore", over="ignore"):
        want = (x[:, None, :] * w.T[None, :, :]).sum(-1)
    assert np.all(np.isnan(want)) and np.all(np.isnan(got)), got


@pytest.mark.parametrize("threads", [1, 4])
def test_float16_matmul_every_path_threads_and_a_symbolic_row_count(each_path, fake_machine,
                                                                     threads) -> None:
    """Both schedulers and the interpreter, one thread and four, x's rows a bound Variable
    (1, 5, 8 of 8): numpy's float16 matmul of products past 65504 that cancel (0, not NaN)."""
    from rulegrad import Variable

    fake_machine(threads, 1 << 20)
    x, w = _inputs(8, 997, 33, False, True)
    for v in (1, 5, 8):
        rows = Variable("rows", 1, 8).bind(v)
        got = (Tensor(x).shrink(((0, rows), None)) @ Tensor(w)).numpy()
        want = x[:v] @ w
        assert got.shape == want.shape and np.array_equal(got, want), (v, got)
