"""adv46's hunt (issue 31): what it found in last round's code and its bad inputs.

A slice by a bound Variable (`t[:, :v]`, tinygrad's way to take the first v rows) reached
Python's `slice.indices` and was a bare TypeError ("slice indices must be integers"). It is
shrink's symbolic size (0, v); every other slice a Variable is in is refused by name, and so is
a write through one (it would pad by a symbolic amount). The oracle: numpy's slice at the bound
value, over a source whose elements past it are NaN, so a read past the bound would show.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.runtime.errors import InvalidArgument

SRC = np.arange(40, dtype=np.float32).reshape(4, 10)


def _past_nan(v: int) -> np.ndarray:
    a = SRC.copy()
    a[:, v:] = np.nan  # read only by a kernel that reads past the bound
    return a


@pytest.mark.parametrize("v", [1, 3, 10])
@pytest.mark.parametrize("form", ["[:v]", "[0:v]", "[:v:1]"])
def test_a_slice_to_a_bound_variable_is_its_first_rows(v, form):
    a = _past_nan(v)
    n = Variable("n", 1, 10).bind(v)
    sl = {"[:v]": slice(None, n), "[0:v]": slice(0, n), "[:v:1]": slice(None, n, 1)}[form]
    t = Tensor(a)[:, sl]
    np.testing.assert_array_equal(t.sum(1).numpy(), a[:, :v].sum(1))
    np.testing.assert_array_equal((t * 2).max(1).numpy(), (a[:, :v] * 2).max(1))
    # before an int index and after None: the Variable's axis is found by position
    np.testing.assert_array_equal(Tensor(a)[None, 2, :n].sum(-1).numpy(), a[None, 2, :v].sum(-1))


@pytest.mark.parametrize("index, words", [
    (lambda n: (slice(None), slice(n.bind(2), None)), "only [:v]"),
    (lambda n: (slice(None), slice(None, n.bind(3), 2)), "only [:v]"),
    (lambda n: (slice(None), slice(None, n)), "must be bound"),
    (lambda n: (slice(None, n.bind(3)),), "max 10 is past the axis's size 4"),
    (lambda n: (n.bind(2),), "unsupported index n=2"),
])
def test_other_slices_by_a_variable_are_refused_by_name(index, words):
    n = Variable("n", 1, 10)
    with pytest.raises(IndexError, match=re.escape(words)):
        Tensor(SRC)[index(n)]


def test_a_slice_by_a_variable_over_a_symbolic_axis_is_refused_by_name():
    t = Tensor(SRC).shrink((None, (0, Variable("n", 1, 10).bind(4))))
    with pytest.raises(IndexError, match="the axis is symbolic"):
        t[:, :Variable("k", 1, 3).bind(2)]


def test_a_write_through_a_slice_by_a_variable_is_refused_by_name():
    t = Tensor(SRC.copy())
    with pytest.raises(InvalidArgument, match="symbolic span"):
        t[:, :Variable("n", 1, 10).bind(3)] = 5.0
    np.testing.assert_array_equal(t.numpy(), SRC)  # (nothing written)


# ---------------------------------------------------------------- window padding arguments
# pool_pads took `list(padding)` of anything: padding="same" was four pads of one letter each
# (int('s'): a bare ValueError), a numpy int or a float a bare TypeError, True a pad of 1.
# conv2d takes torch's "valid" and "same" (the oracle: torch); anything else is refused.
torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape, kernel, dilation, groups", [
    ((1, 4, 5, 6), (3, 3), 1, 1),
    ((2, 4, 5, 6), (4, 4), 1, 2),        # an even kernel: the odd pad goes after
    ((1, 4, 7, 9), (2, 3), (1, 2), 4),   # dilated, depthwise
    ((1, 4, 6, 6), (1, 1), 1, 1),
])
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv2d_takes_torchs_padding_words(shape, kernel, dilation, groups, padding):
    rng = np.random.default_rng(46)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((4, shape[1] // groups, *kernel)).astype(np.float32)
    got = Tensor(x).conv2d(Tensor(w), groups=groups, dilation=dilation, padding=padding)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), groups=groups,
                                      dilation=dilation, padding=padding)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


def test_conv1d_same_padding():
    rng = np.random.default_rng(47)
    x, w = rng.standard_normal((2, 3, 9)).astype(np.float32), rng.standard_normal(
        (5, 3, 4)).astype(np.float32)
    want = torch.nn.functional.conv1d(torch.tensor(x), torch.tensor(w), padding="same")
    np.testing.assert_allclose(Tensor(x).conv1d(Tensor(w), padding="same").numpy(),
                               want.numpy(), rtol=1e-4, atol=1e-4)


def test_numpy_int_paddings_are_ints():
    x = np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5)
    w = np.ones((2, 2, 3, 3), np.float32)
    for p in (np.int64(1), [np.int32(1), 1]):
        np.testing.assert_allclose(
            Tensor(x).conv2d(Tensor(w), padding=p).numpy(),
            torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy())
        np.testing.assert_array_equal(
            Tensor(x).max_pool2d(3, padding=p).numpy(),
            torch.nn.functional.max_pool2d(torch.tensor(x), 3, padding=1).numpy())


@pytest.mark.parametrize("padding", ["full", "SAME", 1.5, True, None, [1, "a"], [1, 2, 3]])
@pytest.mark.parametrize("op", ["conv2d", "max_pool2d", "avg_pool2d", "conv_transpose2d"])
def test_other_paddings_are_refused_by_name(op, padding):
    img = Tensor(np.ones((1, 2, 5, 5), np.float32))
    w = Tensor(np.ones((2, 2, 3, 3), np.float32))
    call = {"conv2d": lambda: img.conv2d(w, padding=padding),
            "max_pool2d": lambda: img.max_pool2d(3, padding=padding),
            "avg_pool2d": lambda: img.avg_pool2d(3, padding=padding),
            "conv_transpose2d": lambda: img.conv_transpose2d(w, padding=padding)}[op]
    with pytest.raises(InvalidArgument, match=f"{op} padding must be"):
        call()


def test_same_padding_with_a_stride_is_refused_as_torch_does():
    with pytest.raises(InvalidArgument, match="needs stride 1"):
        Tensor.ones(1, 2, 5, 5).conv2d(Tensor.ones(2, 2, 3, 3), padding="same", stride=2)


# ---------------------------------------------------------------- roll's shifts
@pytest.mark.parametrize("shifts", ["a", 1.5, (1, "a"), True, []])
def test_roll_refuses_shifts_that_are_not_ints(shifts):
    # ("a" met `s %= n`: "not all arguments converted during string formatting")
    with pytest.raises(InvalidArgument, match="roll shifts must be"):
        Tensor(np.arange(12).reshape(3, 4)).roll(shifts, None if shifts == "a" else 0)


@pytest.mark.parametrize("shifts, dims", [(np.int64(2), 1), (np.int64(-5), None),
                                          ([np.int32(1), -1], [0, 1])])
def test_roll_takes_numpy_ints(shifts, dims):
    a = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(Tensor(a).roll(shifts, dims).numpy(), np.roll(a, shifts, dims))


# ---------------------------------------------------------------- pool padding past half a window
# max_pool2d(2, padding=2) gave windows all padding (-inf), avg_pool2d without the padding's
# count 0/0, a negative pool padding cut silently: torch refuses each, and so do we now; at
# half the kernel (k // 2, dilated or not: torch's bound) both run and agree.
@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("kernel, dilation, padding", [
    (2, 1, 2), (3, 1, 2), (3, 2, 2), ((3, 1), 1, (1, 1)), (3, 1, -1)])
def test_pool_padding_past_half_the_window_is_refused_as_torch_does(op, kernel, dilation,
                                                                    padding):
    x = np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5)
    kw = {} if op == "avg_pool2d" else {"dilation": dilation}
    if op == "max_pool2d" or dilation == 1:
        with pytest.raises(RuntimeError):
            getattr(torch.nn.functional, op)(torch.tensor(x), kernel, padding=padding, **kw)
    with pytest.raises(InvalidArgument, match="padding .* must be from 0 to half the kernel"):
        getattr(Tensor(x), op)(kernel, padding=padding, dilation=dilation)


@pytest.mark.parametrize("kernel, dilation, padding", [(2, 1, 1), (3, 1, 1), (2, 2, 1),
                                                      (3, 2, 1), (4, 1, 2)])
def test_pool_padding_at_half_the_window_runs(kernel, dilation, padding):
    x = np.random.default_rng(48).standard_normal((1, 2, 7, 6)).astype(np.float32)
    got = Tensor(x).max_pool2d(kernel, padding=padding, dilation=dilation).numpy()
    want = torch.nn.functional.max_pool2d(torch.tensor(x), kernel, padding=padding,
                                          dilation=dilation).numpy()
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- float16 sums in the interpreter
# The kernel interpreter's float16 sum rounded to float16 at every step where the C kernel adds
# in float32 and rounds once: numpy's float16 reduce is pairwise in float only along a
# contiguous axis (a split sum's 9091-long inner axis of an 11 x 9091 grid: 1.5 off), and a sum
# evaluated in runs (two reduces of 65537 in one kernel, `x.sum() + x.max()`) added the runs'
# float16 partials (4.5 off). The oracle: the exact sum in float64, within 4 float16 spacings.
@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("n", [65537, 100003])
@pytest.mark.parametrize("program", ["sum+max", "shrunk sum", "mean"])
def test_float16_sums_round_once(monkeypatch, backend, n, program):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    a = np.random.default_rng(n).standard_normal(n).astype(np.float16)
    exact = {"sum+max": a.astype(np.float64).sum() + a.max(),
             "shrunk sum": a[1:-1].astype(np.float64).sum(),
             "mean": a.astype(np.float64).mean()}[program]
    t = Tensor(a)
    got = {"sum+max": lambda: t.sum() + t.max(), "shrunk sum": lambda: t[1:-1].sum(),
           "mean": lambda: t.mean()}[program]().numpy()
    assert got.dtype == np.float16
    assert abs(float(got) - exact) <= 4 * float(np.spacing(np.float16(abs(exact)))), (got, exact)
