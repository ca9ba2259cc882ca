"""float16 reductions in loops gcc vectorizes (f16_59, issue 32), against numpy's float16 and the
reference interpreter (`RULEGRAD_BACKEND=interp`).

A float16 is read from memory as its bits widened to float (ctext.HALF_WIDEN), rounded to a half
kept as a float (HALF_ROUND) and stored by its bits (HALF_BITS), so that gcc 12 vectorizes the
loops around them (a scalar `_Float16` keeps a loop scalar on a target without AVX512-FP16).
Those bit accesses share arrays with `_Float16` ones (a local row stored by its bits and read back
by `(float)`): through a plain `uint16_t *` C's aliasing rules let gcc read the row before it was
written (a masked float16 softmax gave NaN everywhere), which ctext.HALF_LVALUE's `may_alias`
type forbids.

Oracles: max, min and argmax equal numpy's on the same halves (NaN wins, the first index of the
largest) and the interpreter's bit for bit (-0.0 below +0.0); sums and means of halves on a
grid whose every partial sum a float32 holds exactly are the exact sum rounded once to float16
(semantics.py: float32 accumulation, one rounding), numpy's float16 of the float64 sum and the
interpreter's, bit for bit; a softmax is within a few float16 roundings of numpy's float64 one,
NaN where it is. Inputs: NaN, +-inf, -0.0 and subnormal halves; tiny, batch-1, prime, tall and
skinny shapes, each axis."""

from __future__ import annotations

import numpy as np
import pytest
from special_values import assert_same_bits

from rulegrad import Tensor

# (shape, axes): tiny, one row (batch 1), prime sides, tall, skinny, a 3-d middle axis, and a
# matrix big enough for the interchanged and vector reduce paths
_POINTS = [((1, 1), (0, 1)), ((3, 5), (0, 1)), ((1, 257), (0, 1)), ((61, 67), (0, 1)),
           ((1031, 7), (0, 1)), ((7, 1031), (0, 1)), ((2, 37, 64), (1, 2)),
           ((263, 520), (0, 1))]
_CASES = [(shape, axis) for shape, axes in _POINTS for axis in axes]
_HALF_EPS = 2.0 ** -11
_HALF_TINY = 2.0 ** -25


def _halves(shape: tuple[int, ...], seed: int, nans: bool = True) -> np.ndarray:
    """Normal halves times 3 with subnormal halves (a tenth, either sign), signed zeros, +-inf
    and (with `nans`) a NaN in about one line in eight."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(np.float16)
    flat = x.reshape(-1)
    u = rng.random(flat.size)
    sub = rng.integers(1, 0x400, flat.size, dtype=np.uint16) | np.where(
        rng.random(flat.size) < 0.5, np.uint16(0x8000), np.uint16(0))
    flat[u < 0.1] = sub.view(np.float16)[u < 0.1]
    flat[(u >= 0.1) & (u < 0.14)] = -0.0
    flat[(u >= 0.14) & (u < 0.16)] = 0.0
    flat[(u >= 0.16) & (u < 0.17)] = np.inf
    flat[(u >= 0.17) & (u < 0.18)] = -np.inf
    if nans:
        flat[rng.choice(flat.size, max(1, flat.size // (8 * max(shape))), replace=False)] = np.nan
    return x


def _realized(outs: list[Tensor], backend: str, monkeypatch) -> list[np.ndarray]:
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    Tensor.realize(*outs)
    return [t.numpy() for t in outs]


@pytest.mark.parametrize("shape, axis", _CASES)
def test_max_min_argmax_are_numpys_and_the_interpreters(monkeypatch, shape, axis):
    x = _halves(shape, 59 + sum(shape) + axis)
    # and a copy whose extremes are zeros of either sign (subnormals and -1 below them)
    signs = np.random.default_rng(sum(shape)).choice(
        np.float16([-0.0, 0.0, -1, -2.0 ** -24, -0.0]), shape)
    got, ref = [], []
    for backend, into in (("c", got), ("interp", ref)):
        outs = [getattr(Tensor(a), op)(axis) for a in (x, signs)
                for op in ("max", "min", "argmax", "argmin")]
        into += _realized(outs, backend, monkeypatch)
    for i, (a, op) in enumerate((a, op) for a in (x, signs)
                                for op in ("max", "min", "argmax", "argmin")):
        want = getattr(a, op)(axis=axis)
        if op in ("max", "min"):
            assert got[i].dtype == np.float16
            np.testing.assert_array_equal(got[i], want, err_msg=op)  # (NaN; -0.0 == 0.0)
            assert_same_bits(got[i], ref[i])  # (-0.0 below +0.0: the interpreter's)
        else:
            np.testing.assert_array_equal(got[i].astype(np.int64), want, err_msg=op)


def _grid(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Random halves below 2^-11 in magnitude, a fifth of them subnormal: every one a multiple
    of 2^-24, and so is every partial sum of up to 2^11 of them, below 1, which a float32
    holds exactly, in any order (the only rounding left is the sum's to float16)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 4 << 10, shape, dtype=np.uint16)  # exponent fields 0..3
    return (bits | np.where(rng.random(shape) < 0.5, np.uint16(0x8000), np.uint16(0))).view(
        np.float16)


@pytest.mark.parametrize("shape, axis", _CASES)
def test_sums_round_once_as_numpy_and_the_interpreter(monkeypatch, shape, axis):
    x = _grid(shape, 590 + sum(shape) + axis)
    got, ref = [], []
    for backend, into in (("c", got), ("interp", ref)):
        into += _realized([Tensor(x).sum(axis), Tensor(x).mean(axis)], backend, monkeypatch)
    exact = x.astype(np.float64).sum(axis=axis)
    assert_same_bits(got[0], exact.astype(np.float16))  # the exact sum, rounded once
    assert_same_bits(got[0], ref[0])
    assert_same_bits(got[1], ref[1])  # (the mean's division: the graph's roundings)
    want = exact / x.shape[axis]
    assert np.all(np.abs(got[1] - want) <= 2 * _HALF_EPS * np.abs(want) + _HALF_TINY)


@pytest.mark.parametrize("shape, axis", _CASES)
def test_sums_of_special_values_are_numpys(shape, axis):
    """NaN, +-inf (inf - inf: NaN), -0.0 (a column of -0.0 sums to -0.0) and subnormals in a
    float16 sum: numpy's float64 sum of the same halves, within the float32 accumulation's
    rounding and float16's."""
    x = _halves(shape, 5900 + sum(shape) + axis)
    if x.shape[axis] > 1:  # a line of -0.0 only: its sum is -0.0
        np.moveaxis(x, axis, 0)[:, 0] = -0.0
    got = Tensor(x).sum(axis).numpy()
    w = x.astype(np.float64)
    want = w.sum(axis=axis)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    bound = (x.shape[axis] * 2.0 ** -24 * np.abs(np.where(np.isfinite(w), w, 0)).sum(axis=axis)
             + _HALF_EPS * np.abs(want) + _HALF_TINY)
    assert np.all(np.abs(got[fin].astype(np.float64) - want[fin]) <= bound[fin])
    assert_same_bits(got[fin & (want == 0) & np.signbit(want)],
                     np.float16(-0.0) * np.ones(int((fin & (want == 0) & np.signbit(want)).sum()),
                                                np.float16))


@pytest.mark.parametrize("shape, axis", _CASES)
def test_softmax_is_numpys(shape, axis):
    x = _halves(shape, 59000 + sum(shape) + axis, nans=False)
    x[np.isposinf(x)] = 0  # (+inf: a NaN row)
    w = x.astype(np.float64)
    e = np.exp(w - w.max(axis=axis, keepdims=True))
    want = e / e.sum(axis=axis, keepdims=True)
    got = Tensor(x).softmax(axis).numpy()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    # the exp's input rounded to float16 (|x - max| up to ~30: 30 * 2^-11 relative to the exp),
    # the exp, the sum and the quotient each rounded once more
    assert np.all(np.abs(got[ok] - want[ok]) <= 0.02 * want[ok] + 4 * _HALF_TINY)


@pytest.mark.parametrize("shape", [(71, 7), (5, 3), (1, 13), (97, 11)])
def test_a_masked_softmax_on_a_short_row_reads_its_local_row_after_storing_it(shape):
    """The fuzzer's float16 program (opt seed 5: a masked softmax along rows of 7, unrolled): its
    exps are stored by their bits into a local `_Float16` row and summed through `(float)`; with
    the bits written through a plain `uint16_t *`, gcc read the row first (NaN everywhere)."""
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(np.float16)
    m = rng.random(shape) < 0.6
    m[:, rng.integers(0, shape[1])] = True
    s = np.where(m, x.astype(np.float64), -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True)
    for t in (Tensor(~m).where(-np.inf, Tensor(x)), Tensor(m).where(Tensor(x), -np.inf)):
        got = t.softmax(-1).numpy()
        assert not np.isnan(got).any()
        assert np.all(np.abs(got - want) <= 0.02 * want + 4 * _HALF_TINY)
