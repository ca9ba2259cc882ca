"""Review of f16ew62 (float16 elementwise stores 16 halves a vector on a 512-bit target): the
cases its tests did not try, each against numpy's float16 bits and the 8-lane C (the same
conversions and ops, so the same bits; NaN payloads aside, which no float16 path promises).

A 256-bit target built with RULEGRAD_VECTOR_BYTES=64 (the 16-lane C's generic forms and
ctext.WIDE_MINMAX on AVX2 registers), float32 values rounded to halves at their ties and near
65520 (where a half overflows to inf), an in-place update and a read of a shifted view of the
stored buffer, threads splitting a loop whose length is no multiple of 16, and reads at an
offset of one element (a sliced input)."""

from __future__ import annotations

import numpy as np
import pytest
from special_values import assert_same_bits
from test_f16_62 import _big

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import target

_AVX512 = "avx512f" in target.cpu().flags
_H = np.float16


def _sixteen(f, *arrays: np.ndarray) -> bool:
    """Whether f's one kernel stores 16 halves a vector (wide_exps' `_wide_halves`)."""
    (item,) = f(*(Tensor(a) for a in arrays)).schedule()
    return "rg_zstore_f16(" in render_kernel(optimize_kernel(lower_only(item.ast)), "k").source


def _both_widths(monkeypatch, f, *arrays: np.ndarray) -> np.ndarray:
    """f's values at 16 lanes (asserted printed so) and at 8: the same bits; the 16 lanes'."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
    eight = f(*(Tensor(a) for a in arrays)).numpy()
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    assert _sixteen(f, *arrays)
    sixteen = f(*(Tensor(a) for a in arrays)).numpy()
    assert_same_bits(sixteen, eight)
    return sixteen


@pytest.mark.skipif(not {"avx2", "f16c", "fma"} <= target.cpu().flags, reason="no AVX2")
def test_sixteen_lanes_on_a_256_bit_target_are_numpys_bits(monkeypatch):
    """-march=haswell (AVX2, F16C, no AVX-512) with 16-lane C forced: the generic 16-lane
    conversions and WIDE_MINMAX compile there and give numpy's bits (MAX and MIN with the
    project's tie of zeros: x * 0 against y * 0 has every sign pairing)."""
    monkeypatch.setenv("RULEGRAD_CFLAGS", "-O2 -march=haswell -fopenmp")
    x, y = _big((37,), 3), _big((37,), 4)
    with np.errstate(all="ignore"):
        got = _both_widths(monkeypatch, lambda a, b: (a * b + a).maximum(b).minimum(a * 2), x, y)
        high = np.maximum(x * y + x, y)
        both = np.minimum(high, x * _H(2))
        assert_same_bits(got[both != 0], both[both != 0])  # (zeros: the next case's)
        zeros = _both_widths(monkeypatch, lambda a, b: (a * 0).maximum(b * 0), x, y)
        a0, b0 = x * _H(0), y * _H(0)
        want = np.where(np.isnan(a0) | np.isnan(b0), np.nan,
                        np.where(np.signbit(a0) & np.signbit(b0), _H(-0.0), _H(0.0))).astype(_H)
        assert_same_bits(zeros, want)
        want = (x.astype(np.float32) * y.astype(np.float32) * np.float32(1.0001)).astype(_H)
        assert_same_bits(_both_widths(
            monkeypatch, lambda a, b: (a.float() * b.float() * 1.0001).half(), x, y), want)


@pytest.mark.skipif(not _AVX512, reason="no AVX-512")
def test_rounding_ties_and_overflow_at_65520(monkeypatch):
    """float32 values rounded to halves: ties to even (normal and subnormal), 65519.996 down
    to 65504, 65520 up to inf, underflow to signed zero: numpy's bits in 16 lanes."""
    vals = [65504, 65519.996, 65520, -65520, 65536, 1e6, 2049, 2051, -2049, 2.0 ** -25,
            3 * 2.0 ** -25, 1.5 * 2.0 ** -24, -2.0 ** -25, 2.0 ** -25 * 1.0000001,
            2.0 ** -14 - 2.0 ** -25, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 0.0, -0.0, np.inf,
            -np.inf, 1e-8, -1e-8, 65505, 0.75 * 2.0 ** -24]
    b = np.resize(np.array(vals, np.float32), 53)
    with np.errstate(all="ignore"):
        want = b.astype(_H)
    assert_same_bits(_both_widths(monkeypatch, lambda t: (t * 1.0).half(), b), want)
    ones = np.ones(53, _H)
    assert_same_bits(_both_widths(monkeypatch, lambda t, o: t.half() * o, b, ones), want)


@pytest.mark.skipif(not _AVX512, reason="no AVX-512")
@pytest.mark.parametrize("n", [17, 31, 33])
def test_in_place_and_shifted_views_of_the_stored_buffer(n, monkeypatch):
    """x += y * 2 and x[:-1] = x[1:] * 2 (the last vector overlaps the one before it: a read
    of the stored buffer must keep the loop from running an iteration twice): numpy's bits."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x, y = _big((n,), n), _big((n,), n + 1)
    with np.errstate(all="ignore"):
        a = Tensor(x.copy())
        a += Tensor(y) * 2
        assert_same_bits(a.numpy(), x + y * _H(2))
        a = Tensor(x.copy())
        a[:-1] = a[1:] * 2
        want = x.copy()
        want[:-1] = x[1:] * _H(2)
        assert_same_bits(a.numpy(), want)
        a = Tensor(x.copy())
        a[1:] = a[:-1].maximum(Tensor(y)[1:])
        want = x.copy()
        want[1:] = np.where(np.isnan(x[:-1]) | np.isnan(y[1:]), _H(np.nan),
                            np.maximum(x[:-1], y[1:]))
        assert_same_bits(a.numpy(), want)


@pytest.mark.skipif(not _AVX512, reason="no AVX-512")
@pytest.mark.parametrize("threads", ["2", "3"])
def test_threads_split_a_loop_no_multiple_of_16(threads, monkeypatch):
    """1000003 halves on 2 and 3 threads (chunks no multiple of 16): numpy's bits."""
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    x, y = _big((1000003,), 5), _big((1000003,), 6)
    with np.errstate(all="ignore"):
        got = _both_widths(monkeypatch, lambda a, b: a * b + a, x, y)
        assert_same_bits(got, x * y + x)


@pytest.mark.skipif(not _AVX512, reason="no AVX-512")
def test_reads_one_element_apart_from_a_vector_boundary(monkeypatch):
    """x[3:] * 2 + x[:-3] (loads at an odd element offset) and a row's neighbours' MAX."""
    x, m = _big((43,), 7), _big((7, 37), 8)
    with np.errstate(all="ignore"):
        got = _both_widths(monkeypatch, lambda t: t[3:] * 2 + t[:-3], x)
        assert_same_bits(got, x[3:] * _H(2) + x[:-3])
        got = _both_widths(monkeypatch, lambda t: t[:, 1:] - t[:, :-1] * 0.5, m)
        assert_same_bits(got, m[:, 1:] - m[:, :-1] * _H(0.5))
