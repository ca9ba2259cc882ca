"""Reductions over several non-contiguous axes (issue 33): (0, 2) of (A, B, C) and (0, 2, 3) of
(N, C, H, W), each output a channel read as runs along the contiguous axis, one run per step of
the leading axis. Values against numpy (float64 or numpy's own ordering rules, never our output),
over tiny, prime, batch-1, one-channel, 1x1-image, tall and skinny shapes; and a batch norm's
statistics on data with a large mean, where a one-pass E[x^2] - E[x]^2 would cancel away."""

from __future__ import annotations

import re

import numpy as np
import pytest
from special_values import sprinkled

from rulegrad import Tensor
from rulegrad.backends.c import run
from rulegrad.backends.c.render import render_kernel

# (shape, the reduced axes): 3-D over (0, 2) and NCHW over (0, 2, 3)
SHAPES = [
    ((2, 3, 4), (0, 2)),            # tiny
    ((97, 13, 1009), (0, 2)),       # primes (the held-out sweep's sum_axes5)
    ((3, 5, 7, 11), (0, 2, 3)),     # primes, NCHW
    ((1, 16, 32, 32), (0, 2, 3)),   # batch 1
    ((64, 1, 16, 16), (0, 2, 3)),   # one channel
    ((4096, 16, 1, 1), (0, 2, 3)),  # 1x1 images: a column sum
    ((8, 512, 3, 3), (0, 2, 3)),    # many channels, tiny images
    ((5, 2, 1, 4099), (0, 2, 3)),   # few channels, long rows
    ((16, 8, 32, 32), (0, 2, 3)),   # runs a page apart
]


def _ids(case) -> str:
    return "x".join(map(str, case[0]))


def _assert_sum_within_contract(got: np.ndarray, x: np.ndarray, axes: tuple[int, ...],
                                scale: float = 1.0) -> None:
    """got is scale * (x's sum over axes), within the reduction contract (runtime/semantics.py):
    the exact sum within (n - 1) * eps * sum |x| per output (n values each, eps the unit
    roundoff of x's dtype), plus one rounding of the scale. NaN and infinities where the exact
    sum has them."""
    exact = x.astype(np.longdouble).sum(axis=axes) * scale
    n = x.size // max(exact.size, 1)
    eps = np.finfo(x.dtype).eps / 2
    with np.errstate(invalid="ignore"):
        mag = np.abs(x.astype(np.longdouble)).sum(axis=axes) * scale
        bound = (n + 1) * eps * mag + np.finfo(x.dtype).tiny
        assert np.array_equal(np.isnan(got), np.isnan(exact))
        finite = np.isfinite(exact)
        assert np.array_equal(got[~finite & ~np.isnan(exact)], exact[~finite & ~np.isnan(exact)])
        err = np.abs(got.astype(np.longdouble) - exact)
        assert np.all(err[finite] <= bound[finite]), (err[finite] / bound[finite]).max()


def _extreme(x: np.ndarray, axes: tuple[int, ...], op: str) -> np.ndarray:
    """numpy's max (min) over axes, NaN if any, with -0.0 ordered below +0.0 (torch's and ours):
    a channel whose extreme is a zero gets +0.0 for max if it holds a +0.0, -0.0 for min if it
    holds a -0.0."""
    zero_pos = np.any((x == 0) & ~np.signbit(x), axis=axes)
    zero_neg = np.any((x == 0) & np.signbit(x), axis=axes)
    if op == "max":
        m = np.max(x, axis=axes)
        return np.where(m == 0, np.where(zero_pos, x.dtype.type(0.0), x.dtype.type(-0.0)), m)
    m = np.min(x, axis=axes)
    return np.where(m == 0, np.where(zero_neg, x.dtype.type(-0.0), x.dtype.type(0.0)), m)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", SHAPES, ids=_ids)
def test_a_sum_and_mean_over_non_contiguous_axes_are_within_the_contract(case, dt):
    shape, axes = case
    x = np.random.default_rng(3).standard_normal(shape).astype(dt) + dt(0.25)
    got = Tensor(x).sum(axis=axes).numpy()
    assert got.dtype == dt and got.shape == np.sum(x, axis=axes).shape
    _assert_sum_within_contract(got, x, axes)
    n = x.size // got.size
    mean = Tensor(x).mean(axis=axes, keepdim=True).numpy()
    assert mean.shape == np.mean(x, axis=axes, keepdims=True).shape
    _assert_sum_within_contract(mean.reshape(got.shape), x, axes, scale=1.0 / n)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", SHAPES, ids=_ids)
def test_a_sum_of_small_integers_over_non_contiguous_axes_is_exact(case, dt):
    """Whole numbers in -8..8: every partial sum is exact in any order (below 2**24), so each
    channel's sum is numpy's exactly, every value read once (the contract's bound above is too
    wide to see one value dropped from a long channel), and its mean that sum divided by n,
    rounded once."""
    shape, axes = case
    x = np.random.default_rng(4).integers(-8, 9, shape).astype(dt)
    got = Tensor(x).sum(axis=axes).numpy()
    want = x.astype(np.float64).sum(axis=axes)
    assert got.dtype == dt and np.array_equal(got, want.astype(dt))
    n = x.size // got.size
    mean = Tensor(x).mean(axis=axes).numpy()
    assert np.array_equal(mean, (want / n).astype(dt))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", SHAPES, ids=_ids)
def test_a_max_or_min_over_non_contiguous_axes_is_numpys_bit_for_bit(case, dt, op):
    """NaN anywhere in a channel makes it NaN; a channel whose extreme is a zero of both signs
    gives max +0.0 and min -0.0, of one sign that sign; infinities are values like any other."""
    shape, axes = case
    x = sprinkled(shape, dt, 9, share=50, least=3)
    sign = -1 if op == "max" else 1  # (the channels below: the zeros are the extreme)
    for ch, zero in ((shape[1] - 1, -0.0 if op == "max" else 0.0), (0, None)):
        if ch == 0 and shape[1] == 1:
            break
        part = sign * np.abs(np.random.default_rng(ch).standard_normal(x[:, ch].shape)) + 0.5 * sign
        flat = part.reshape(-1)
        flat[::3] = zero if zero is not None else -0.0
        if zero is None:
            flat[1::3] = 0.0
        x[:, ch] = part.astype(dt)
    got = getattr(Tensor(x), op)(axis=axes).numpy()
    want = _extreme(x, axes, op)
    assert got.dtype == dt
    assert np.array_equal(np.isnan(got), np.isnan(want))
    num = ~np.isnan(want)  # (a NaN's sign is not part of its meaning)
    assert np.array_equal(np.signbit(got[num]), np.signbit(want[num]))
    assert np.array_equal(np.nan_to_num(got), np.nan_to_num(want))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", SHAPES, ids=_ids)
def test_a_variance_over_non_contiguous_axes_is_numpys(case, dt):
    """Tensor.var (Bessel's correction) on data with a mean far from 0: numpy's float64
    variance of the same values, within float32's (float64's) rounding of a two-pass variance."""
    shape, axes = case
    x = (100.0 + np.random.default_rng(5).standard_normal(shape)).astype(dt)
    got = Tensor(x).var(axis=axes).numpy()
    want = x.astype(np.float64).var(axis=axes, ddof=1)
    assert got.dtype == dt and got.shape == want.shape
    tol = 2e-3 if dt == np.float32 else 1e-10
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)


BN_SHAPES = [(2, 3, 2, 2), (3, 5, 7, 11), (1, 8, 16, 16), (64, 1, 8, 8), (4096, 8, 1, 1),
             (8, 256, 3, 3), (16, 8, 32, 32), (2, 3, 97, 13)]


def _batchnorm(a, **keep):
    axes = (0, 2, 3)
    mu = a.mean(axis=axes, **keep)
    var = ((a - mu) * (a - mu)).mean(axis=axes, **keep)
    return (a - mu) / (var + 1e-5) ** 0.5


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", BN_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_a_batch_norm_of_data_with_a_large_mean_keeps_its_digits(shape, dt):
    """Train-mode batch norm + relu of 1e4 + N(0, 1) against numpy in float64 on the same
    values, within what the reduction contract allows: each channel's sum of n values off by at
    most n * eps * sum |x|, so its mean by n * eps * mean |x|, and the normalized output by that
    over the channel's deviation, plus a few roundings of the output. A one-pass
    E[x^2] - E[x]^2 cancels here (x^2 is 1e8, its ulp in float32 8, the variance 1): float32
    loses every digit (off by ~1000), float64 eight of them (off by 3e-8 .. 1e-6), beyond it."""
    x = (1e4 + np.random.default_rng(2).standard_normal(shape)).astype(dt)
    got = _batchnorm(Tensor(x), keepdim=True).relu().numpy()
    assert got.dtype == dt
    xd = x.astype(np.float64)
    want = np.maximum(_batchnorm(xd, keepdims=True), 0.0)
    axes, eps = (0, 2, 3), np.finfo(dt).eps
    n = x.size // shape[1]
    bound = n * eps * np.abs(xd).mean(axis=axes).max() / xd.std(axis=axes).min() \
        + 8 * eps * np.abs(want).max()
    assert np.abs(got.astype(np.float64) - want).max() <= bound


# the block library's row reduction called in a kernel's C text (comments taken out)
_ROW_CALL = re.compile(r"\brg_reduce_[a-z]+_f32\s*\(")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


def _row_calls(t: Tensor) -> int:
    """How many calls of the block library's row reduction t's kernels' C text holds."""
    return sum(len(_ROW_CALL.findall(_COMMENT.sub("", render_kernel(
        run.optimize_kernel(run.lower_only(item.ast)), f"k{i}").source)))
        for i, item in enumerate(t.schedule()))


@pytest.mark.parametrize("shape", [(8, 64, 3, 3), (32, 16, 7, 7), (5, 2, 1, 4099), (3, 5, 7, 11)],
                         ids=lambda s: "x".join(map(str, s)))
def test_a_sum_over_short_runs_keeps_its_vectors_across_the_images(shape):
    """A per-channel sum over N of each image's H*W run, one reduce over both loops (merged, too
    little work to split): its vectors of partial sums stay outside the loop over N and combine
    their lanes once per channel, not a block-library call per run that combined them per run
    (8x4096x3x3: N * C calls of 9 values each). A whole row (a reduce with no other loop) still
    calls it. Whole numbers: every order gives numpy's sum exactly."""
    x = np.random.default_rng(6).integers(-8, 9, shape).astype(np.float32)
    t = Tensor(x).sum(axis=(0, 2, 3))
    assert _row_calls(t) == 0
    assert np.array_equal(t.numpy(), x.astype(np.float64).sum(axis=(0, 2, 3)).astype(np.float32))
    row = Tensor(x.reshape(shape[0], -1)).sum(axis=1)
    assert _row_calls(row) == 1
    assert np.array_equal(row.numpy(), x.reshape(shape[0], -1).sum(axis=1, dtype=np.float64)
                          .astype(np.float32))
