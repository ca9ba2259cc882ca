"""Products and convolutions at the held-out sweep's kinds of shape (bench/sweep.py's HELD_OUT,
scaled down to test sizes) against numpy: a batch of 1 (a matrix-vector product), k prime, 3 or
10 outputs, tall and thin, k of 4; convolutions of one input channel, 1x1, grouped and
depthwise, stride 2 at odd sizes. Each is whatever path the optimizer chooses for it; the
values must be numpy's."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _close(got: np.ndarray, want: np.ndarray) -> None:
    # rounding grows with the length of the sums: tolerance relative to the result's scale
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("m,k,n", [(1, 1021, 1024), (1, 4096, 64), (2, 1024, 509),
                                   (1021, 131, 10), (256, 512, 3), (20000, 16, 16),
                                   (1024, 4, 256), (33, 257, 129), (7, 2048, 509), (3, 3, 3000),
                                   (2048, 2048, 1)])
def test_linear_gelu_matches_numpy(m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    x, w, b = _rand(rng, m, k), _rand(rng, k, n) / np.float32(np.sqrt(k)), _rand(rng, n)
    got = (Tensor(x) @ Tensor(w) + Tensor(b)).gelu().numpy()
    _close(got, _gelu(x.astype(np.float64) @ w + b))


def _conv_np(x: np.ndarray, w: np.ndarray, stride: int, groups: int) -> np.ndarray:
    """An unpadded grouped convolution, by its definition, in float64."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg].astype(np.float64)
        for ky in range(kh):
            for kx in range(kw):
                win = xs[:, :, ky:ky + stride * (oh - 1) + 1:stride,
                         kx:kx + stride * (ow - 1) + 1:stride]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win,
                                                         w[g * og:(g + 1) * og, :, ky, kx])
    return out


# (n, c, hw, o, kernel, stride, groups)
@pytest.mark.parametrize("shape", [(1, 1, 28, 8, 5, 1, 1), (1, 1, 37, 16, 3, 2, 1),
                                   (8, 64, 7, 128, 1, 1, 1), (1, 13, 11, 10, 1, 1, 1),
                                   (2, 32, 17, 32, 3, 2, 1), (1, 32, 23, 32, 3, 1, 32),
                                   (4, 16, 13, 32, 3, 1, 4), (2, 12, 9, 36, 3, 1, 3),
                                   (1, 3, 45, 32, 3, 2, 1), (3, 5, 15, 24, 5, 1, 1)])
def test_convolution_matches_numpy(shape: tuple) -> None:
    n, c, hw, o, ks, stride, groups = shape
    rng = np.random.default_rng(sum(shape))
    x, w = _rand(rng, n, c, hw, hw), _rand(rng, o, c // groups, ks, ks)
    got = Tensor(x).conv2d(Tensor(w), groups=groups, stride=stride).numpy()
    _close(got, _conv_np(x, w, stride, groups))


# (n, c, hw, o, kernel, stride, padding)
@pytest.mark.parametrize("shape", [(2, 8, 9, 16, 3, 1, 1), (1, 3, 17, 8, 3, 2, 1),
                                   (3, 5, 13, 24, 5, 1, 2), (2, 4, 7, 10, 3, 1, 1)])
def test_padded_convolution_with_a_residual_matches_numpy(shape: tuple) -> None:
    """A padded convolution whose epilogue adds a residual read at each output pixel: the
    packed tile's rows are several ranges (image, pixel row, pixel column) and both the padded
    window's gates and the residual read them, so the tile's row loops bind each range from
    the flat row number (gemm.py's `_bind_rows`, `row_values`), the last tile's rows clamped
    or guarded."""
    n, c, hw, o, ks, stride, pad = shape
    rng = np.random.default_rng(sum(shape) + 1)
    x, w = _rand(rng, n, c, hw, hw), _rand(rng, o, c, ks, ks)
    oh = (hw + 2 * pad - ks) // stride + 1
    res = _rand(rng, n, o, oh, oh)
    got = (Tensor(x).conv2d(Tensor(w), stride=stride, padding=pad) + Tensor(res)).relu().numpy()
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    _close(got, np.maximum(_conv_np(xp, w, stride, 1) + res, 0))


@pytest.mark.parametrize("shape", [(1, 32, 23, 32, 3, 1, 32), (2, 16, 17, 16, 3, 2, 16),
                                   (1, 8, 12, 16, 3, 1, 8)])
def test_depthwise_window_is_unrolled_and_vectorized(shape: tuple) -> None:
    """A depthwise convolution (each group one input channel) has no rows and columns to pack:
    its channel is read by the image and the weights alike. Its window of 9 products is then
    unrolled like a pool's and the output row vectorized (opt_helpers' small_reduce with
    pack_helpers' has_layout); it ran as scalar loops, a sum of 9 per output."""
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    n, c, hw, o, ks, stride, groups = shape
    rng = np.random.default_rng(sum(shape))
    x, w = _rand(rng, n, c, hw, hw), _rand(rng, o, c // groups, ks, ks)
    t = Tensor(x).conv2d(Tensor(w), groups=groups, stride=stride)
    low = lower_only(t.schedule()[-1].ast)
    done = actions(optimize_kernel(low))
    assert any(a.startswith("UNROLL ADD") for a in done), done
    assert any(a.startswith("UPCAST") for a in done), done
    _close(t.numpy(), _conv_np(x, w, stride, groups))
