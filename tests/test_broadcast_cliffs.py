"""Broadcasts, transposes beside a sum and multi-axis normalizations (issues 32 and 33), checked
against numpy at the swept shapes (tiny, prime, batch 1, tall, skinny, large) in float32,
float16 and float64, and by the actions their kernels take, never by time."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import schedule_actions as _actions

from rulegrad import Tensor

DTYPES = [np.float32, np.float16, np.float64]


def _tol(dt) -> dict:
    return {np.float16: dict(rtol=2e-2, atol=2e-2), np.float32: dict(rtol=1e-4, atol=1e-4),
            np.float64: dict(rtol=1e-10, atol=1e-10)}[dt]


# x (a, b, c) * y (a, 1, c) + z (1, b, 1), relu: bench/workloads.py's bcast
BCAST = [(97, 1009, 3), (3, 1009, 97), (1, 1, 4096), (4096, 1, 1), (1, 65521, 7),
         (2, 3, 5), (1021, 7, 2), (255, 4099, 4), (1, 1, 1)]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("a, b, c", BCAST)
def test_a_broadcast_equals_numpy(a, b, c, dt):
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal(s).astype(dt) for s in ((a, b, c), (a, 1, c), (1, b, 1)))
    got = (Tensor(x) * Tensor(y) + Tensor(z)).relu().numpy()
    want = np.maximum(x.astype(np.float64) * y + z, 0)
    assert got.dtype == dt
    np.testing.assert_allclose(got, want, **_tol(dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape, other", [((2, 3, 5, 7, 11), (1, 3, 1, 7, 1)),
                                          ((1000, 1000), (1000, 1)), ((1, 1, 4096), (4096,)),
                                          ((4096, 1), (1, 4096)), ((7, 97, 3), (7, 1, 3))])
def test_a_broadcast_of_any_rank_equals_numpy(shape, other, dt):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(shape).astype(dt), rng.standard_normal(other).astype(dt)
    np.testing.assert_allclose((Tensor(x) * 2 - Tensor(y)).numpy(),
                               x.astype(np.float64) * 2 - y, **_tol(dt))


@pytest.mark.parametrize("a, b, c, inside", [(97, 1009, 3, True), (999, 4099, 2, True),
                                              (40999, 4, 1, True), (1, 1 << 20, 3, True),
                                              (97, 1009, 5, False),
                                              (3, 1009, 97, False)])
def test_a_short_last_axis_is_unrolled_inside_a_vector_loop(a, b, c, inside):
    # the output's last axis of 2, 3 or 4 is too short for a vector: it is unrolled inside the
    # loop before it, which gcc then vectorizes with the short axis's reads and writes
    # interleaved (scalar, 97x1009x3 ran 14x slower; 1M x 3 is threaded in blocks of the vector
    # loop). 5 is no group gcc interleaves (it would gather and scatter), and 97 is a vector
    # loop of its own
    rng = np.random.default_rng(2)
    x, y, z = (rng.standard_normal(s).astype(np.float32) for s in ((a, b, c), (a, 1, c), (1, b, 1)))
    t = (Tensor(x) * Tensor(y) + Tensor(z)).relu()
    acts = _actions(t)
    assert any("unrolled inside" in s for s in acts) is inside, acts
    np.testing.assert_allclose(t.numpy(), np.maximum(x.astype(np.float64) * y + z, 0),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(7, 97, 1009), (64, 64, 32, 32), (2, 3, 5)])
def test_a_transpose_beside_a_sum_over_each_axis_equals_numpy(shape, dt):
    x = np.random.default_rng(3).standard_normal(shape).astype(dt)
    for axis in range(len(shape)):
        t = Tensor(x).transpose(-1, -2) * 2 + Tensor(x).sum(axis, keepdim=True).transpose(-1, -2)
        want = (np.swapaxes(x.astype(np.float64), -1, -2) * 2
                + np.swapaxes(x.astype(np.float64).sum(axis, keepdims=True), -1, -2))
        # a float16 sum of up to 64 values keeps about 3 digits of their magnitude
        tol = dict(rtol=5e-2, atol=0.5) if dt is np.float16 else _tol(dt)
        np.testing.assert_allclose(t.numpy().astype(np.float64), want, **tol)


def _batchnorm_np(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    mu = x.mean((0, 2, 3), keepdims=True)
    var = ((x - mu) ** 2).mean((0, 2, 3), keepdims=True)
    c = x.shape[1]
    return np.maximum((x - mu) / np.sqrt(var + 1e-5) * g.reshape(1, c, 1, 1)
                      + b.reshape(1, c, 1, 1), 0)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(64, 64, 32, 32), (1, 3, 224, 224), (32, 17, 13, 13),
                                   (1, 1, 1, 1), (2, 5, 1, 7)])
def test_batchnorm_over_three_axes_equals_numpy(shape, dt):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(dt)
    g, b = (rng.standard_normal(shape[1]).astype(dt) for _ in range(2))
    c = shape[1]
    xt = Tensor(x)
    mu = xt.mean(axis=(0, 2, 3), keepdim=True)
    var = ((xt - mu) * (xt - mu)).mean(axis=(0, 2, 3), keepdim=True)
    got = ((xt - mu) / (var + 1e-5).sqrt() * Tensor(g).reshape(1, c, 1, 1)
           + Tensor(b).reshape(1, c, 1, 1)).relu().numpy()
    want = _batchnorm_np(x, g, b)
    if dt is np.float16:  # the statistics of up to 65536 values, rounded to float16
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=5e-2, atol=5e-2)
    else:
        np.testing.assert_allclose(got, want, **_tol(dt))


def _transpose_sum(x: np.ndarray) -> Tensor:
    return Tensor(x).transpose(1, 2) * 2 + Tensor(x).sum(0).transpose(0, 1)


@pytest.mark.parametrize("l1, a, b, c, tiled", [
    ("32K", 8, 64, 4096, True), ("48K", 8, 64, 4096, True), ("48K", 16, 33, 2048, True),
    ("32K", 2, 16, 65536, True), ("32K", 7, 97, 1009, True), ("48K", 7, 97, 1009, False),
    ("32K", 100, 8, 1000, False), ("32K", 7, 40, 1009, False)])
def test_a_transpose_whose_rows_share_l1_sets_is_tiled(monkeypatch, l1, a, b, c, tiled):
    # out[a, c, b] = 2 x[a, b, c] + s[b, c]: a pass along b reads b lines of x, c elements apart.
    # Rows a multiple of a page apart (c of 4096, 2048, 65536) all fall into one of L1's sets
    # (a VIPT L1 indexes its sets within a page), however short b: read from L2 at every step
    # untiled (8x64x4096: 14 ms, 2.4 tiled). Rows 4036 bytes apart spread over the sets: 97 of
    # them put 3 lines of each read in one set, more than half of 8 ways (32 KB) hold, not of 12
    # (48 KB); 40 of them, or 8 rows 4000 bytes apart, stay
    monkeypatch.setenv("RULEGRAD_L1_BYTES", l1)
    x = np.random.default_rng(5).standard_normal((a, b, c)).astype(np.float32)
    t = _transpose_sum(x)
    acts = _actions(t)
    assert any(s.startswith("TILE") for s in acts) is tiled, acts
    want = x.transpose(0, 2, 1) * 2 + x.astype(np.float64).sum(0).T
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-3)
