"""Normalizations over several axes (issue 33): a batch norm's statistics over (N, H, W) per
channel C, computed in its output's kernel when that kernel loops channel-outer (rangeify's
`placed`: a buffer's loop order apart from its memory's), and layer and group norms over
several axes. Values against numpy in float64 (never our own output), under both schedulers,
over tiny, prime, batch-1, 1x1-image, many-channel and NHWC (a permuted view) shapes, with
-0.0, NaN and infinities in single channels."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

SCHEDULERS = ["rangeify", "kernelize"]
# (N, C, H, W): the cost rule's one-kernel cases (x within L2, runs of 64 or more values) and
# its three-kernel ones (64x64x32x32: 16 MB; 256x16x1x1 and 8x512x4x4: runs of 1 and 16)
SHAPES = [(64, 64, 32, 32), (1, 3, 7, 7), (2, 5, 11, 13), (256, 16, 1, 1), (8, 512, 4, 4),
          (4, 16, 32, 32), (3, 7, 13, 17), (1, 64, 16, 16)]


def _ids(s) -> str:
    return "x".join(map(str, s))


def _np_batchnorm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Training-mode batch norm + relu in float64: biased variance over (N, H, W)."""
    x = x.astype(np.float64)
    c = (1, -1, 1, 1)
    with np.errstate(invalid="ignore"):
        m = x.mean((0, 2, 3), keepdims=True)
        v = ((x - m) ** 2).mean((0, 2, 3), keepdims=True)
        return np.maximum((x - m) / np.sqrt(v + eps) * g.reshape(c) + b.reshape(c), 0)


def _rg_batchnorm(x: Tensor, g: Tensor, b: Tensor, eps: float = 1e-5) -> Tensor:
    """The same in rulegrad's tensor ops (bench/workloads.py's batchnorm)."""
    c = (1, x.shape[1], 1, 1)
    mu = x.mean(axis=(0, 2, 3), keepdim=True)
    var = ((x - mu) * (x - mu)).mean(axis=(0, 2, 3), keepdim=True)
    return ((x - mu) / (var + eps).sqrt() * g.reshape(c) + b.reshape(c)).relu()


def _data(shape, seed: int, special: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    x[0, 0, 0, 0] = -0.0
    if special:  # one NaN in the last channel, one inf in the first (when they differ)
        x[0, -1, 0, -1] = np.nan
        if shape[1] > 1:
            x[-1, 0, -1, 0] = np.inf
    c = shape[1]
    return x, rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * max(1.0, np.nanmax(
        np.abs(np.where(np.isinf(want), 0, want)), initial=0)), equal_nan=True)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan_inf"])
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_batchnorm_training_equals_numpy(shape, special, scheduler, monkeypatch):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x, g, b = _data(shape, 61, special)
    got = _rg_batchnorm(Tensor(x), Tensor(g), Tensor(b)).numpy()
    _close(got, _np_batchnorm(x, g, b))


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("shape", [(4, 16, 32, 32), (2, 5, 11, 13), (8, 512, 4, 4)], ids=_ids)
def test_batchnorm_nhwc_permuted_equals_numpy(shape, scheduler, monkeypatch):
    """An NHWC buffer read as NCHW through a permute: the channel's values are C apart."""
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x, g, b = _data(shape, 7, True)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    got = _rg_batchnorm(Tensor(nhwc).permute(0, 3, 1, 2), Tensor(g), Tensor(b)).numpy()
    _close(got, _np_batchnorm(x, g, b))


@pytest.mark.parametrize("shape", [(4, 16, 32, 32), (2, 5, 11, 13)], ids=_ids)
def test_batchnorm_large_mean_is_two_pass(shape):
    """1e4 + randn per channel: the variance from the channel's mean, read in the same kernel
    (a one-pass E[x^2] - E[x]^2 in float32 loses every digit of a variance of 1)."""
    rng = np.random.default_rng(3)
    x = (1e4 + rng.standard_normal(shape)).astype(np.float32)
    t = Tensor(x)
    mu = t.mean(axis=(0, 2, 3), keepdim=True)
    var = ((t - mu) * (t - mu)).mean(axis=(0, 2, 3), keepdim=True)
    got = ((t - mu) / (var + 1e-5).sqrt()).numpy()
    x64 = x.astype(np.float64)
    m = x64.mean((0, 2, 3), keepdims=True)
    want = (x64 - m) / np.sqrt(((x64 - m) ** 2).mean((0, 2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-3)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("shape", [(1, 3, 7, 7), (5, 7, 3, 3)], ids=_ids)
def test_batchnorm_eval_mode_equals_numpy(shape, scheduler, monkeypatch):
    """Running statistics (no reduction): Tensor.batchnorm against numpy."""
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x, g, b = _data(shape, 5, True)
    rng = np.random.default_rng(9)
    mean = rng.standard_normal(shape[1]).astype(np.float32)
    invstd = (1 / np.sqrt(rng.random(shape[1]) + 0.5)).astype(np.float32)
    got = Tensor(x).batchnorm(Tensor(g), Tensor(b), Tensor(mean), Tensor(invstd)).numpy()
    c = (1, -1, 1, 1)
    want = ((x.astype(np.float64) - mean.reshape(c)) * g.reshape(c) * invstd.reshape(c)
            + b.reshape(c))
    _close(got, want)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("shape,axes", [((8, 16, 32, 32), (1, 2, 3)), ((3, 5, 7, 11), (2, 3)),
                                        ((2, 13, 1, 9), (1, 3))], ids=["ln123", "ln23", "ln13"])
def test_layernorm_over_several_axes_equals_numpy(shape, axes, scheduler, monkeypatch):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x, _, _ = _data(shape, 11, False)
    x[0, 0, 0, 1 % shape[3]] = np.inf
    t = Tensor(x)
    dev = t - t.mean(axis=axes, keepdim=True)
    got = (dev / ((dev * dev).mean(axis=axes, keepdim=True) + 1e-5).sqrt()).numpy()
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        d = x64 - x64.mean(axes, keepdims=True)
        want = d / np.sqrt((d * d).mean(axes, keepdims=True) + 1e-5)
    _close(got, want)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("shape,groups",
                         [((8, 16, 32, 32), 4), ((3, 6, 5, 7), 3), ((1, 4, 1, 3), 2)],
                         ids=["8x16x32x32g4", "3x6x5x7g3", "1x4x1x3g2"])
def test_groupnorm_equals_torch(shape, groups, scheduler, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    x, g, b = _data(shape, 13, False)
    n, c = shape[:2]
    t = Tensor(x).reshape(n, groups, -1)
    dev = t - t.mean(axis=2, keepdim=True)
    y = (dev / ((dev * dev).mean(axis=2, keepdim=True) + 1e-5).sqrt()).reshape(shape)
    got = (y * Tensor(g).reshape(1, c, 1, 1) + Tensor(b).reshape(1, c, 1, 1)).numpy()
    as64 = [torch.from_numpy(a).double() for a in (x, g, b)]
    want = torch.nn.functional.group_norm(as64[0], groups, as64[1], as64[2], eps=1e-5).numpy()
    _close(got, want)


def _store_loops(item) -> list[int]:
    """The sizes of a kernel's output loops, outermost first."""
    (st,) = [n for n in toposort(item.ast) if n.op is Ops.STORE]
    return [int(r.src[0].arg) for r in st.src[2:]]


@pytest.mark.parametrize("shape", [(4, 16, 32, 32), (3, 7, 13, 17)], ids=_ids)
def test_cached_batchnorm_is_one_channel_outer_kernel(shape):
    """x within L2 with runs of 64 or more values: one kernel, channels its outermost loop, its
    mean and variance computed once per channel (two REDUCEs over N*H*W each), the output's
    stores at their memory offsets (the values above)."""
    x, g, b = _data(shape, 1, False)
    (item,) = _rg_batchnorm(Tensor(x), Tensor(g), Tensor(b)).schedule()
    assert _store_loops(item)[0] == shape[1]
    reds = [n for n in toposort(item.ast) if n.op is Ops.REDUCE]
    assert len(reds) == 2
    n, _, h, w = shape
    assert all(np.prod([int(r.src[0].arg) for r in red.src[1:]]) == n * h * w for red in reds)


@pytest.mark.parametrize("shape", [(64, 64, 32, 32), (8, 512, 4, 4), (256, 16, 1, 1)], ids=_ids)
def test_streamed_batchnorm_keeps_memory_order(shape):
    """x past L2, or runs shorter than a block of register accumulators: the statistics in
    kernels of their own, the output in memory order (images outermost)."""
    x, g, b = _data(shape, 1, False)
    items = _rg_batchnorm(Tensor(x), Tensor(g), Tensor(b)).schedule()
    assert len(items) == 3
    assert _store_loops(items[-1])[0] == shape[0]


@pytest.mark.parametrize("dt,tol", [(np.float16, 1e-2), (np.float64, 1e-12)],
                         ids=["float16", "float64"])
@pytest.mark.parametrize("shape", [(4, 16, 32, 32), (3, 7, 13, 17)], ids=_ids)
def test_cached_batchnorm_in_other_dtypes_equals_numpy(shape, dt, tol):
    x = np.random.default_rng(17).standard_normal(shape).astype(dt)
    t = Tensor(x)
    mu = t.mean(axis=(0, 2, 3), keepdim=True)
    var = ((t - mu) * (t - mu)).mean(axis=(0, 2, 3), keepdim=True)
    got = ((t - mu) / (var + 1e-5).sqrt()).relu().numpy()
    assert got.dtype == dt
    ones = np.ones(shape[1], np.float64)
    np.testing.assert_allclose(got.astype(np.float64), _np_batchnorm(x, ones, 0 * ones),
                               rtol=tol, atol=tol)


def test_cached_batchnorm_gradient_equals_torch():
    """The backward pass of a batch norm + relu in the one-kernel case, against torch's in
    float64."""
    torch = pytest.importorskip("torch")
    shape = (4, 16, 32, 32)
    x = np.random.default_rng(19).standard_normal(shape).astype(np.float32)
    w = (np.arange(x.size).reshape(shape) / x.size).astype(np.float32)
    t = Tensor(x, requires_grad=True)
    mu = t.mean(axis=(0, 2, 3), keepdim=True)
    var = ((t - mu) * (t - mu)).mean(axis=(0, 2, 3), keepdim=True)
    (((t - mu) / (var + 1e-5).sqrt()).relu() * Tensor(w)).sum().backward()
    tx = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    y = torch.nn.functional.batch_norm(tx, None, None, training=True, eps=1e-5)
    (torch.relu(y) * torch.from_numpy(w.astype(np.float64))).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
