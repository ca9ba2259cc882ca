"""opt.rules' scan_store: a scan's window reduce run as one running accumulator
(rules/scan_helpers.py), against numpy's and torch's scans.

np.cumsum and np.cumprod are strictly sequential (ufunc.accumulate), as the accumulator is: a
float32 scan must match them bit for bit, whatever its length or axis."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from optimizer_actions import kernel_actions as _actions

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.kernel_interp import exact_order, run_kernel
from rulegrad.rules.scan_helpers import scanned
from rulegrad.runtime.limits import SizeLimitError
from rulegrad.runtime.ops import Ops

# tiny, prime, batch 1, long, tall, skinny: (shape, axis)
SHAPES = [((1,), 0), ((2,), 0), ((17,), 0), ((97,), 0), ((100003,), 0), ((1, 41), 1),
          ((37, 53), 0), ((37, 53), 1), ((5, 41, 23), 0), ((5, 41, 23), 1), ((5, 41, 23), 2),
          ((1000, 3), 0), ((3, 1000), 1), ((2, 300, 7), 1), ((64, 1000, 64), 1)]


def _bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    same |= np.isnan(got) & np.isnan(want)
    assert same.all(), (np.flatnonzero(~same)[:5], got[~same][:5], want[~same][:5])


@pytest.mark.parametrize("shape,axis", SHAPES)
def test_cumsum_is_numpys_sequential_float32_sum_bit_for_bit(shape, axis):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    _bits(Tensor(x).cumsum(axis).numpy(), np.cumsum(x, axis))


@pytest.mark.parametrize("shape,axis", [((29,), 0), ((31, 19), 0), ((4, 23, 5), 1),
                                        ((3, 40), 1)])
def test_cumprod_and_cummax_along_each_axis(shape, axis):
    rng = np.random.default_rng(2)
    x = (1 + 0.05 * rng.standard_normal(shape)).astype(np.float32)
    _bits(Tensor(x).cumprod(axis).numpy(), np.cumprod(x, axis))
    a = rng.integers(-3, 3, shape).astype(np.float32)  # ties: torch's index is the last one
    a.flat[::7] = np.nan
    v, i = Tensor(a).cummax(axis)
    tv, ti = torch.cummax(torch.from_numpy(a), axis)
    _bits(v.numpy(), tv.numpy())
    assert (i.numpy() == ti.numpy()).all()


def test_signed_zeros_and_nan_as_the_window_without_the_optimizer(monkeypatch):
    # the action keeps the window's bits: -0.0 and NaN (whole numbers: a sum exact in any
    # order, so the optimizer-off kernel's `omp simd` order gives the same bits)
    a = np.random.default_rng(8).integers(-3, 3, (23, 37)).astype(np.float32)
    a.flat[::5] = -0.0
    a.flat[3::41] = np.nan
    progs = [lambda t: t.cumsum(0), lambda t: t.cumsum(1), lambda t: t.cummax(1)[0],
             lambda t: t.cummin(0)[0], lambda t: t.cummax(0)[1], lambda t: -t.cumprod(1)]
    on = [p(Tensor(a)).numpy() for p in progs]
    monkeypatch.setenv("RULEGRAD_OPT", "0")
    for p, got in zip(progs, on):
        want = p(Tensor(a)).numpy()
        if got.dtype.kind == "f":
            _bits(got, want)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float16, np.int8])
def test_other_dtypes_scan_as_torch(dtype):
    x = np.random.default_rng(3).integers(-3, 4, (6, 57)).astype(dtype)
    for axis in (0, 1):
        got = Tensor(x).cumsum(axis).numpy()
        want = torch.cumsum(torch.from_numpy(x), axis).numpy()
        if dtype is np.float16:  # accumulated in float32 and rounded once per output
            want = np.cumsum(x.astype(np.float32), axis).astype(np.float16)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_a_scan_is_one_kernel_of_n_steps_with_the_action():
    x = np.random.default_rng(4).standard_normal((17, 301)).astype(np.float32)
    for axis in (0, 1):
        done = _actions(Tensor(x).cumsum(axis))
        assert len(done) == 1, done
        assert any(a.startswith("SCAN ADD") for a in done[0]), done


def test_the_interpreter_runs_the_scan_as_its_c_does():
    # the optimized AST in the kernel interpreter: the same bits as the C kernel (its order is
    # pinned: exact_order), NaN and -0.0 included
    x = np.random.default_rng(5).standard_normal((19, 211)).astype(np.float32)
    x.flat[::13] = -0.0
    x.flat[5::97] = np.nan
    for t in (Tensor(x).cumsum(1), Tensor(x).cumsum(0), Tensor(x).cumprod(1),
              Tensor(x)._cum(0, Ops.MAX)):  # (cummax's values alone, no index)
        (item,) = t.schedule()
        opt = optimize_kernel(lower_only(item.ast))
        assert any(n.op is Ops.REDUCE and n.src[1].arg[1] == "scan" for n in opt.toposort())
        assert exact_order(opt)
        bufs = [np.zeros(x.size, np.float32), x.reshape(-1).copy()]
        run_kernel(opt, bufs)
        _bits(bufs[0].reshape(x.shape), t.numpy())


def test_a_sliding_window_is_no_prefix():
    # windows of 5 over 40 outputs: each combines x[i-4..i], not the prefix x[0..i]
    x = Tensor(np.arange(40, dtype=np.float32))
    t = x.pad(((4, 0),))._pool((5,)).sum(-1)
    (item,) = t.schedule()
    low = lower_only(item.ast)
    assert scanned(low.src[0]) is None
    assert not any("SCAN" in a for a in actions(optimize_kernel(low)))
    np.testing.assert_array_equal(t.numpy(), np.convolve(np.arange(40), np.ones(5))[:40])


def test_a_window_past_the_work_limit_is_blocked_not_pooled(monkeypatch):
    monkeypatch.setenv("RULEGRAD_MAX_WORK", str(1 << 20))
    x = np.random.default_rng(6).standard_normal(1100).astype(np.float32)
    with pytest.raises(SizeLimitError):  # the whole window: 1100^2 iterations, refused
        Tensor(x)._scan_pooled(Ops.ADD, 0.0)
    t = Tensor(x).cumsum()
    assert len(t.schedule()) == 3  # the blocks' totals, their scan, the blocks' scans
    np.testing.assert_allclose(t.numpy(), np.cumsum(x.astype(np.float64)), rtol=1e-5,
                               atol=1e-4)


def test_two_million_elements_scan_in_linear_work():
    x = np.random.default_rng(7).standard_normal(2_000_000).astype(np.float32)
    t = Tensor(x).cumsum()
    done = _actions(t)
    # (the first kernel sums the blocks: no window; tests/test_blocked_scan.py)
    assert all(any(a.startswith("SCAN") for a in d) for d in done[1:]), done
    np.testing.assert_allclose(t.numpy(), np.cumsum(x.astype(np.float64)), rtol=1e-4,
                               atol=0.05)


@pytest.mark.parametrize("n", [100_000, 131_072, 500_000])
def test_a_scan_with_a_divisible_length_is_not_split_by_the_scheduler(n):
    # split_reduceop split a window of n (a divisor in 8..2^22/n, n past a row kept local) into
    # partials: no prefix window left for the action, n^2 work (1e10 for 100,000: seconds)
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    t = Tensor(x).cumsum()
    done = _actions(t)
    assert len(done) == 1 and any(a.startswith("SCAN ADD") for a in done[0]), done
    _bits(t.numpy(), np.cumsum(x))


@pytest.mark.parametrize("shape", [(800_000,), (2, 600_001)])
def test_a_scan_whose_pooled_windows_are_twice_its_window_is_blocked(shape):
    # the pool builds about 2n values per element (the axis padded to 2n - 1, repeated): an
    # n^2 of 6.4e11 is under the default work limit (2^40), its windows' 1.28e12 are not; sized
    # by n^2 the scan built them and was refused. Whole numbers: any blocking is exact
    x = np.random.default_rng(9).integers(-9, 9, shape).astype(np.int64)
    np.testing.assert_array_equal(Tensor(x).cumsum(-1).numpy(), np.cumsum(x, -1))


def test_a_scan_of_a_softmax_row_and_two_scans_in_one_kernel():
    # the row's max and sum, reduces inside the window's value that are the same for all of
    # its values, are computed once per row; two scans of one output, one along each axis
    x = np.random.default_rng(9).standard_normal((37, 41)).astype(np.float32)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    progs = [(Tensor(x).softmax(1).cumsum(1), np.cumsum(e / e.sum(1, keepdims=True), 1), 1),
             (Tensor(x).cumsum(1) + Tensor(x).cumsum(0), np.cumsum(x, 1) + np.cumsum(x, 0), 2)]
    for t, want, scans in progs:
        (done,) = _actions(t)
        assert sum(a.startswith("SCAN ADD") for a in done) == scans, done
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5)
