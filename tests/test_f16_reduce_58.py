"""float16 reductions (f16_58, issue 32): sum, mean, max, min, argmax, argmin, var and softmax of
float16 tensors down the first axis, a middle axis and the last, against numpy, and the C they
run as: a float16 read from memory is widened from its bits (ctext.HALF_WIDEN), never a scalar
`_Float16` load, which kept gcc from vectorizing the loop around it (a max down the columns of
4096 x 4096 ran at 0.25x torch's speed, an argmax at 0.6x). Checked by values and by the text
of the C, never by time.

The oracle is numpy on the same float16 inputs: max/min/argmax/argmin exactly (a NaN wins, the
first index of the largest); a sum, mean or var within runtime/semantics.py's contract for a
float reduce (float32 accumulation: (n - 1) * 2^-24 * sum |x|) plus the rounding of the result
to float16; a softmax within a few float16 roundings of the float64 one."""

from __future__ import annotations

import re

import numpy as np
import pytest
from special_values import assert_same_bits, sprinkled

from rulegrad import Tensor
from rulegrad.backends.c import compile_program

# (shape, axes): the brief's kinds at sizes a test affords: tiny, one element, a column, prime,
# tall, skinny, batch-like 4-d with a middle axis, and a matrix big enough to be interchanged
_POINTS = [((1,), (0,)), ((7, 1), (0, 1)), ((67, 129), (0, 1)), ((13, 1031), (0, 1)),
           ((1031, 13), (0, 1)), ((2, 3, 40, 64), (0, 2, 3)), ((520, 1024), (0, 1))]
_CASES = [(shape, axis) for shape, axes in _POINTS for axis in axes]
_HALF_EPS = 2.0 ** -11  # float16's unit roundoff: the result's one rounding
_F32_EPS = 2.0 ** -24  # the float32 accumulator's (semantics.py's reduce contract)
_HALF_TINY = 2.0 ** -25  # half of the smallest subnormal half: a rounding near zero


def _data(shape: tuple[int, ...], seed: int, special: bool) -> np.ndarray:
    """Normal halves times 3, a few ties (repeated values: argmax's first index), and with
    `special` NaN, signed zeros and infinities sprinkled in."""
    x = (sprinkled(shape, np.float32, seed, share=40) if special
         else np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
    x = (x * 3).astype(np.float16)
    flat = x.reshape(-1)
    flat[::7] = np.float16(2.5)  # ties
    return x


@pytest.mark.parametrize("shape, axis", _CASES)
def test_exact_reduces_equal_numpy(shape, axis):
    x = _data(shape, len(shape) * 1000 + shape[0], special=True)
    for op in ("max", "min"):
        got = getattr(Tensor(x), op)(axis).numpy()
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, getattr(x, op)(axis=axis), err_msg=op)  # (NaN, 0s)
    for op in ("argmax", "argmin"):
        got = getattr(Tensor(x), op)(axis).numpy()
        np.testing.assert_array_equal(got.astype(np.int64), getattr(x, op)(axis=axis),
                                      err_msg=op)


def _within(got: np.ndarray, want: np.ndarray, bound: np.ndarray, what: str) -> None:
    got64 = got.astype(np.float64)
    err = np.abs(got64 - want)
    bad = ~(err <= bound)
    assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} off; worst at "
                           f"{np.unravel_index(np.argmax(np.where(bad, err - bound, -1)), bad.shape)}"
                           f": got {got64[bad][:3]} want {want[bad][:3]}")


@pytest.mark.parametrize("shape, axis", _CASES)
def test_sums_within_the_reduce_contract(shape, axis):
    x = _data(shape, len(shape) * 2000 + shape[0], special=False)
    w = x.astype(np.float64)
    n = x.shape[axis]
    total = np.abs(w).sum(axis=axis)
    want = w.sum(axis=axis)
    got = Tensor(x).sum(axis).numpy()
    assert got.dtype == np.float16
    _within(got, want, (n - 1) * _F32_EPS * total + _HALF_EPS * np.abs(want) + _HALF_TINY, "sum")
    got = Tensor(x).mean(axis).numpy()
    want = want / n  # the mean: the sum's error over n, a division's rounding, float16's
    _within(got, want, ((n - 1) * _F32_EPS * total / n + 2 * _HALF_EPS * np.abs(want)
                        + _HALF_TINY), "mean")
    got = Tensor(x).var(axis, correction=0).numpy()
    want = w.var(axis=axis)
    # the squared deviations from a float16-rounded mean: each deviation off by the mean's
    # error, the sum of squares by the reduce contract, the result by float16's rounding
    mean_err = 2 * _HALF_EPS * np.abs(w.mean(axis=axis, keepdims=True)) + _HALF_TINY
    dev = np.abs(w - w.mean(axis=axis, keepdims=True))
    bound = (((2 * dev * mean_err + mean_err ** 2).sum(axis=axis)
              + 4 * (n + 1) * _F32_EPS * (dev ** 2).sum(axis=axis)) / n
             + 2 * _HALF_EPS * want + _HALF_TINY)
    _within(got, want, bound, "var")


@pytest.mark.parametrize("shape, axis", _CASES)
def test_softmax_within_float16_roundings(shape, axis):
    x = _data(shape, len(shape) * 3000 + shape[0], special=False)
    w = x.astype(np.float64)
    e = np.exp(w - w.max(axis=axis, keepdims=True))
    want = e / e.sum(axis=axis, keepdims=True)
    got = Tensor(x).softmax(axis).numpy()
    assert got.dtype == np.float16
    # the exp's input rounded to float16 (|x - max| up to ~30: 30 * 2^-11 relative to the exp),
    # then the exp, the sum and the quotient each rounded once more
    _within(got, want, 0.02 * want + 4 * _HALF_TINY, "softmax")


def test_every_half_widens_to_its_value():
    """Every float16 bit pattern read from memory and widened (the kernel's LOAD, then CAST to
    float32): numpy's float32 for each, bit for bit (subnormals, -0.0, infinities), and a NaN
    for each NaN, also in a gated read (a padded row's)."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    x = bits.view(np.float16)
    want = x.astype(np.float32)
    assert_same_bits(Tensor(x).cast("float32").numpy(), want)
    padded = Tensor(x.reshape(256, 256)).pad(((0, 0), (1, 2))).cast("float32").numpy()
    assert_same_bits(padded[:, 1:-2].reshape(-1), want)
    assert not padded[:, 0].any() and not padded[:, -2:].any()


def _kernel_source(t: Tensor) -> str:
    return compile_program(t.schedule()).source


@pytest.mark.parametrize("op", ["max", "argmax", "sum", "min"])
@pytest.mark.parametrize("axis", [0, 1])
def test_no_scalar_half_load_in_a_reduce(monkeypatch, op, axis):
    """The C of a float16 reduce of 1024 x 1024 reads its halves as bits widened to float
    (`rg_f16_f32(*(const uint16_t *)&p1[...])`), which gcc vectorizes, and never as a scalar
    `_Float16` temporary (`const _Float16 tN = p1[...]`), which it does not: down axis 0 that
    was a max's whole inner loop (INTERCHANGE), along axis 1 an argmax's compare loop."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = Tensor(np.random.default_rng(5).standard_normal((1024, 1024)).astype(np.float16))
    src = _kernel_source(getattr(x, op)(axis))
    assert not re.search(r"_Float16 t\d+ = p\d+\[", src), "a scalar _Float16 load"
    if "rg_vload_f16" not in src:  # (the explicit-vector path reads 8 halves at a time)
        assert re.search(r"rg_f16_f32\(\*\(const uint16_t \*\)&p\d+\[", src), src[-3000:]
