"""float16 elementwise kernels in 16 lanes on a 512-bit target (f16ew62, issues 32/33), against
numpy's float16 bit for bit and the reference interpreter (`RULEGRAD_BACKEND=interp`).

A float16 elementwise kernel is UPCAST's explicit vectors (F16C's conversions, every float16 op a
float32 op and a rounding). At 8 lanes it ran a float16 sigmoid(x * y + 1.5) * x - tanh(y) at
2.7x float32's CPU time; on a 512-bit target wide_exps' `_wide_halves` now prints its store loop
16 halves a vector (vexp.WIDE_HALF's widen, round and store; ctext.WIDE_MINMAX's MAX and MIN).

Oracles: numpy's float16 ufuncs (each op in float32, rounded to the nearest half, ties to even;
NaN, +-inf, -0.0, subnormals, overflow to inf) for +, -, *, /, casts and mixed float16/float32;
MAX and MIN as numpy's maximum and minimum with rulegrad's documented tie of zeros (-0.0 below
+0.0); the interpreter for exp, sigmoid and tanh (its float32 exp is numpy's, ours vexp's core:
within one half's ulp where a float32 ulp crosses a half's rounding point). Both vector widths
(RULEGRAD_VECTOR_BYTES=32: 8 lanes; 64: 16, where the CPU has AVX-512), both schedulers; sizes
1, 7, 16, 17, 4099 and 2-D with broadcasts (batch 1, tall, skinny, prime)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from special_values import assert_same_bits
from test_f16_59 import _halves

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import target

_WIDTHS = ["32"] + (["64"] if "avx512f" in target.cpu().flags else [])
_SCHEDULERS = ["rangeify", "kernelize"]
# (x's shape, y's shape): 1-D, and 2-D with a row or a column broadcast
_SHAPES = [((1,), (1,)), ((7,), (7,)), ((16,), (16,)), ((17,), (17,)), ((4099,), (4099,)),
           ((1, 33), (1, 33)), ((61, 67), (1, 67)), ((1031, 7), (1031, 1)), ((7, 1031), (7, 1031)),
           ((3, 4099), (3, 1))]


def _big(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """test_f16_59's halves, a quarter of them scaled to near float16's largest (products and
    sums overflow to inf on the rounding)."""
    x = _halves(shape, seed)
    rng = np.random.default_rng(seed + 1)
    big = rng.random(shape) < 0.25
    with np.errstate(over="ignore"):
        x[big] = (x[big].astype(np.float32) * np.float32(9000)).astype(np.float16)
    return x


def _max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's maximum (NaN either side), +0.0 for a tie of zeros unless both are -0.0."""
    out = np.maximum(a, b)
    neg = np.signbit(a) & np.signbit(b)
    return np.where((a == 0) & (b == 0), np.where(neg, -0.0, 0.0), out).astype(a.dtype)


def _min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's minimum (NaN either side), -0.0 for a tie of zeros."""
    out = np.minimum(a, b)
    neg = np.signbit(a) | np.signbit(b)
    return np.where((a == 0) & (b == 0), np.where(neg, -0.0, 0.0), out).astype(a.dtype)


def _realize(f, *arrays: np.ndarray) -> np.ndarray:
    return f(*(Tensor(a) for a in arrays)).numpy()


@pytest.mark.parametrize("scheduler", _SCHEDULERS)
@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("xs, ys", _SHAPES)
def test_float16_arithmetic_is_numpys_bits(xs, ys, width, scheduler, monkeypatch):
    """x * y + x, (x - y) / y, max and min (x * y or x / 2, y): numpy's float16 bits."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x, y = _big(xs, sum(xs) + 62), _big(ys, sum(ys) + 620)
    yx, half = np.broadcast_to(y, x.shape), np.float16(0.5)
    with np.errstate(all="ignore"):
        cases = [(lambda a, b: a * b + a, x * y + x),
                 (lambda a, b: (a - b) / b, (x - y) / y),
                 (lambda a, b: (a * b).maximum(b), _max(x * y, yx)),
                 (lambda a, b: (a * 0.5).maximum(b), _max(x * half, yx)),  # (a NaN one side)
                 (lambda a, b: (a + b).minimum(a), _min(x + y, x)),
                 (lambda a, b: (a * 0.5).minimum(b), _min(x * half, yx))]
    for f, want in cases:
        assert_same_bits(_realize(f, x, y), want)


@pytest.mark.parametrize("scheduler", _SCHEDULERS)
@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("xs, ys", _SHAPES)
def test_picks_of_halves_are_numpys_bits(xs, ys, width, scheduler, monkeypatch):
    """Exact ops on halves (compares, WHERE, MAX, MIN): where(x > y, x, y * 2), abs, clip,
    x != y picks, numpy's bits; relu the interpreter's (its -0.0)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x, y = _big(xs, sum(xs) + 162), _big(ys, sum(ys) + 1620)
    yx = np.broadcast_to(y, x.shape)
    with np.errstate(all="ignore"):
        cases = [(lambda a, b: (a > b).where(a, b * 2), np.where(x > y, x, y * np.float16(2))),
                 (lambda a, b: a.abs() + b * 0, np.abs(x) + y * np.float16(0)),
                 (lambda a, b: (a != b).where(a.clip(-1, 1), b),
                  np.where(x != y, np.clip(x, np.float16(-1), np.float16(1)), yx))]
    for f, want in cases:
        assert_same_bits(_realize(f, x, y), want)
    got = _realize(lambda a: a.relu(), x)
    monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
    assert_same_bits(got, _realize(lambda a: a.relu(), x))


@pytest.mark.parametrize("scheduler", _SCHEDULERS)
@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("xs, ys", _SHAPES)
def test_mixed_float16_float32_and_casts_are_numpys_bits(xs, ys, width, scheduler, monkeypatch):
    """float16 * float32 (a float32), rounded back to float16 on the store; a float32 cast to
    float16 and one widened back: numpy's bits (overflow to inf, subnormals, -0.0, NaN)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x = _big(xs, sum(xs) + 6200)
    y = (_halves(ys, sum(ys) + 62000).astype(np.float32) * np.float32(1.001)) \
        * np.float32(7.5)  # (float32 values between halves)
    with np.errstate(all="ignore"):
        want = (x.astype(np.float32) * y).astype(np.float16)
        assert_same_bits(_realize(lambda a, b: (a * b).half(), x, y), want)
        assert_same_bits(_realize(lambda a, b: a * b, x, y), x.astype(np.float32) * y)
        want = ((y + np.float32(1)).astype(np.float16).astype(np.float32) * y)
        assert_same_bits(_realize(lambda b: (b + 1).half().float() * b, y), want)


@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("xs, ys", _SHAPES)
def test_exp_sigmoid_tanh_are_the_interpreters(xs, ys, width, monkeypatch):
    """sigmoid(x * y + 1.5) * x - tanh(y) (bench/workloads' elementwise_dt) and exp(x - 1): the
    interpreter's float16s, within one ulp (its float32 exp is numpy's), NaN and inf where it
    has them."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x, y = _halves(xs, sum(xs) + 1), _halves(ys, sum(ys) + 2)
    for f in (lambda a, b: (a * b + 1.5).sigmoid() * a - b.tanh(), lambda a, b: (a - 1).exp()):
        monkeypatch.delenv("RULEGRAD_BACKEND", raising=False)
        got = _realize(f, x, y)
        monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
        want = _realize(f, x, y)
        assert got.dtype == want.dtype == np.float16
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = np.isfinite(want)
        np.testing.assert_array_equal(got[~ok], want[~ok])
        ulp = np.spacing(np.abs(want[ok])).astype(np.float32)
        err = np.abs(got[ok].astype(np.float32) - want[ok].astype(np.float32)) / ulp
        assert np.all(err <= 1), err.max()


@pytest.mark.parametrize("width", _WIDTHS)
@pytest.mark.parametrize("n", [16, 17, 4099])
def test_a_float16_elementwise_kernel_is_16_lanes_on_a_512_bit_target(n, width, monkeypatch):
    """Counted in the C: the elementwise_dt kernel (float16 loads, roundings, exps, a MAX) is one
    16-lane loop on a 512-bit target where its loop is 16 long or more (16 halves loaded,
    rounded, stored; no 8-lane value), else 8 lanes."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x = Tensor(_halves((n,), n))
    (item,) = ((x * x + 1.5).sigmoid() * x - x.tanh()).schedule()  # (shorter: scalar)
    after = optimize_kernel(lower_only(item.ast))
    source = render_kernel(after, "k").source
    body = source[source.index("void k"):]
    wide = width == "64"
    assert re.search(rf"vectors? of {16 if wide else 8}\b", " ".join(actions(after)))  # (DEBUG=2)
    assert body.count("rg_zstore_f16(") == wide and body.count("rg_vstore_f16(") == (not wide)
    assert ("rg_zmax_f32(" in body) == wide and ("rg_zround_f16(" in body) == wide
    assert not wide or not re.search(r"\brg_v\w+\(", body)


@pytest.mark.parametrize("width", ["32", "64"])
@pytest.mark.parametrize("xs, ys", [((17,), (17,)), ((61, 67), (1, 67)), ((3, 4099), (3, 1))])
def test_without_f16c_the_c_is_numpys_bits(xs, ys, width, monkeypatch):
    """Built for a target without F16C nor AVX-512 (RULEGRAD_CFLAGS without -march: the
    vector helpers' lane-by-lane _Float16 conversions), 8 lanes and 16 (RULEGRAD_VECTOR_BYTES=64
    forces the 16-lane loop's C, its generic forms): numpy's float16 bits still."""
    monkeypatch.setenv("RULEGRAD_CFLAGS", "-O2 -fopenmp")
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x, y = _big(xs, sum(xs) + 7), _big(ys, sum(ys) + 70)
    yx = np.broadcast_to(y, x.shape)
    with np.errstate(all="ignore"):
        want = _max((x * y + x) * np.float16(0.5), yx)
        y32 = y.astype(np.float32) * np.float32(1.001)
        mixed = (x.astype(np.float32) * y32).astype(np.float16)
    assert_same_bits(_realize(lambda a, b: ((a * b + a) * 0.5).maximum(b), x, y), want)
    assert_same_bits(_realize(lambda a, b: (a * b).half(), x, y32), mixed)
