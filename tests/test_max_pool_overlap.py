"""max_pool of overlapping windows (kernel > stride, or dilated), values and gradients against
torch's autograd. Such windows are pooled one axis at a time, the last first, each a max over
the k offsets of a window stacked as views (`Tensor._window_max`), and `grad_pool_stack` gives
each window's gradient to one element: torch's. torch's CPU kernel walks a window in
row-major order keeping `val > max || isnan(val)`, so a tied window's gradient goes whole to
its first maximum, a window holding NaN's to its last NaN, and a window of -inf (with padding)
to its first element inside the image; an element picked by several windows gets the sum of
their gradients.

The upstream gradient is drawn from small integers, so every sum of them is exact in every
float dtype: gradients are compared bit for bit, whatever the order of the sums."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rulegrad import Tensor

SPECIAL = np.array([0.0, -0.0, 1.0, 1.0, 2.0, np.nan, -np.inf, 0.5, 2.0, 2.0])

# (shape, kernel_size, stride, dilation, padding, ceil_mode): tiny, prime, batch 1, tall,
# skinny, non-square windows, dilation, padding, ceil_mode's partial last window
CASES = [
    ((1, 1, 3, 3), 2, 1, 1, 0, False),
    ((2, 3, 13, 11), 3, 2, 1, 1, False),
    ((1, 4, 17, 19), (5, 3), (2, 1), 1, (2, 1), True),
    ((1, 2, 31, 5), (3, 2), 1, (2, 3), 1, False),
    ((2, 1, 3, 29), (1, 7), (1, 3), 1, 0, True),
    ((3, 2, 11, 7), 3, 2, 2, 1, True),
    ((1, 1, 9, 9), 5, 2, 1, 2, False),
]
KINDS = ["normal", "ties and NaN", "-inf", "constant"]


def _data(kind: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return rng.standard_normal(shape)
    if kind == "ties and NaN":  # ties, zeros of both signs, NaN and -inf anywhere in a window
        return SPECIAL[rng.integers(0, len(SPECIAL), shape)]
    if kind == "-inf":  # with padding: the first element in the image, never the padding
        return np.where(rng.random(shape) < 0.8, -np.inf, rng.standard_normal(shape))
    return np.full(shape, 3.0)  # every window tied: its first element takes it all


def _both(a: np.ndarray, dtype: str, torch_pool, ours_pool, seed: int):
    """(ours, torch's) pooled values and gradients for one upstream gradient of small ints."""
    t = torch.tensor(a.astype(dtype), requires_grad=True)
    tv = torch_pool(t)
    up = np.random.default_rng(seed).integers(-4, 5, tv.shape).astype(dtype)
    (tg,) = torch.autograd.grad(tv, t, torch.from_numpy(up))
    x = Tensor(a.astype(dtype))
    v = ours_pool(x)
    (g,) = v.gradient(x, gradient=Tensor(up))
    return (v.numpy(), tv.detach().numpy()), (g.numpy(), tg.numpy())


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # (NaN where the other has NaN)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_overlapping_max_pool2d_is_torchs(case, kind):
    shape, k, s, d, p, c = case
    kw = dict(kernel_size=k, stride=s, dilation=d, padding=p, ceil_mode=c)
    values, grads = _both(_data(kind, shape, 1), "float64", lambda t: F.max_pool2d(t, **kw),
                          lambda x: x.max_pool2d(**kw), 2)
    _same(*values)
    _same(*grads)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("kind", ["normal", "ties and NaN"])
def test_each_float_dtype(dtype, kind):
    kw = dict(kernel_size=3, stride=2, padding=1)
    values, grads = _both(_data(kind, (2, 3, 10, 9), 3), dtype,
                          lambda t: F.max_pool2d(t, **kw), lambda x: x.max_pool2d(**kw), 4)
    _same(*values)
    _same(*grads)


@pytest.mark.parametrize("kind", ["normal", "ties and NaN", "-inf"])
def test_one_spatial_axis_is_max_pool1d(kind):
    kw = dict(kernel_size=4, stride=1, dilation=2, padding=2, ceil_mode=True)
    values, grads = _both(_data(kind, (2, 3, 23), 5), "float64",
                          lambda t: F.max_pool1d(t, **kw),
                          lambda x: x.max_pool2d(kernel_size=(4,), stride=1, dilation=2,
                                                 padding=2, ceil_mode=True), 6)
    _same(*values)
    _same(*grads)


@pytest.mark.parametrize("kind", ["normal", "ties and NaN", "constant"])
def test_three_spatial_axes_are_max_pool3d(kind):
    """The first maximum in (depth, row, column) order: the last axis is pooled first."""
    kw = dict(kernel_size=(2, 3, 3), stride=(1, 2, 1), padding=(0, 1, 1))
    values, grads = _both(_data(kind, (1, 2, 5, 7, 6), 7), "float64",
                          lambda t: F.max_pool3d(t, **kw), lambda x: x.max_pool2d(**kw), 8)
    _same(*values)
    _same(*grads)


def test_a_tied_window_gives_all_to_its_first_element_as_torch():
    """Documented: torch does not split a tie (amax would). Two windows of one row, [1, 2, 2]
    and [2, 2, 1]: both maxima go to the first 2, which gets both gradients."""
    x = Tensor(np.array([[[[1.0, 2.0, 2.0, 1.0]]]]))
    (g,) = x.max_pool2d((1, 3), stride=1).gradient(x, gradient=Tensor(np.array([[[[5.0, 7.0]]]])))
    np.testing.assert_array_equal(g.numpy(), [[[[0.0, 12.0, 0.0, 0.0]]]])


def test_integer_values_are_the_windows_max():
    """No gradient for ints; the values against numpy's sliding windows."""
    a = np.random.default_rng(9).integers(-50, 50, (2, 3, 11, 8)).astype(np.int32)
    got = Tensor(a).max_pool2d(3, stride=2).numpy()
    want = np.lib.stride_tricks.sliding_window_view(a, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    np.testing.assert_array_equal(got, want.max(axis=(-2, -1)))
