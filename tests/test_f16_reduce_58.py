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
    assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} off: got {got64[bad][:3]}, "
                           f"want {want[bad][:3]}, bound {bound[bad][:3]}")


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
    """Every float16 bit pattern read from memory and widened to float32: in a loop of scalars
    (a transpose's tiles: C's own conversion, render.py's `_scalar_halves`) and in an `omp simd`
    loop (ctext.HALF_WIDEN: read through a padding's gate, down the columns of a max whose other
    rows are -inf, the gated load of an interchanged reduce, and stored by ctext.HALF_BITS),
    numpy's float32 for each, bit for bit (subnormals, -0.0, infinities), a NaN for each
    NaN."""
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    t = Tensor(x.reshape(256, 256)).T.cast("float32")
    src = _kernel_source(t)
    assert "rg_f16_f32(" not in src and "(float)(p1[" in src
    assert_same_bits(t.numpy(), x.reshape(256, 256).T.astype(np.float32))
    rows = np.full((40, x.size), -np.inf, np.float16)
    rows[17] = x
    t = Tensor(rows).pad(((1, 1), (0, 0)), value=-np.inf).max(0)
    src = _kernel_source(t)
    assert re.search(r"\? rg_f16_f32\(\*", src) and "rg_f16_bits(" in src
    assert_same_bits(t.numpy(), x)


def _kernel_source(t: Tensor) -> str:
    return compile_program(t.schedule()).source


@pytest.mark.parametrize("op", ["max", "argmax", "sum", "min"])
@pytest.mark.parametrize("axis", [0, 1])
def test_no_scalar_half_load_in_a_reduce(monkeypatch, op, axis):
    """The C of a float16 reduce of 1024 x 1024 reads its halves as bits widened to float
    (`rg_f16_f32(*(const rg_h16 *)&p1[...])`), which gcc vectorizes, and never as a scalar
    `_Float16` temporary (`const _Float16 tN = p1[...]`), which it does not: down axis 0 that
    was a max's whole inner loop (INTERCHANGE), along axis 1 an argmax's compare loop."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = Tensor(np.random.default_rng(5).standard_normal((1024, 1024)).astype(np.float16))
    src = _kernel_source(getattr(x, op)(axis))
    assert not re.search(r"_Float16 t\d+ = p\d+\[", src), "a scalar _Float16 load"
    if "rg_vload_f16" not in src:  # (the explicit-vector path reads 8 halves at a time)
        assert re.search(r"rg_f16_f32\(\*\(const rg_h16 \*\)&p\d+\[", src), src[-3000:]


def _rounding_edges() -> np.ndarray:
    """float32s where rounding to float16 goes wrong: every finite half, each midpoint between
    two neighbours (a tie: to even) and the floats on either side of it, the subnormal halves'
    range, the overflow edge (65504, 65520: a tie to inf), float32 subnormals, infinities, NaN,
    and random floats of every exponent."""
    halves = np.arange(0x7c00, dtype=np.uint32).astype(np.uint16).view(np.float16)
    h = halves.astype(np.float32)
    mid = ((h[:-1].astype(np.float64) + h[1:]) / 2).astype(np.float32)  # exact in float32
    above = np.nextafter(mid, np.float32(np.inf))
    below = np.nextafter(mid, np.float32(0))
    top = np.float32([65504, 65519.996, 65520, 65520.004, 65536, 1e5, 3e38, np.inf, np.nan,
                      1e-45, 1e-40, 2.0 ** -25, 2.0 ** -25 * 3, 2.0 ** -26, 2.0 ** -14])
    rnd = np.random.default_rng(58).integers(0, 0x7f800000, 1 << 16, dtype=np.uint32)
    pos = np.concatenate([h, mid, above, below, top, rnd.view(np.float32)])
    return np.concatenate([pos, -pos])


def test_every_rounding_edge_to_half_is_numpys():
    """A float32 CAST to float16 and straight back, in a loop of scalars (a transpose's tiles:
    C's `(_Float16)`, render.py's `_scalar_halves`) and in an `omp simd` loop (ctext.HALF_ROUND,
    kept as a float): numpy's float16 of each, bit for bit."""
    x = _rounding_edges()
    x = np.concatenate([x, np.zeros(-x.size % 512, np.float32)]).reshape(512, -1)
    t = Tensor(x).T.cast("float16").cast("float32")
    src = _kernel_source(t)
    assert "rg_round_f16(" not in src and "(float)(_Float16)(" in src
    assert_same_bits(t.numpy(), x.T.astype(np.float16).astype(np.float32))
    # an exp the pick never takes but for +inf (its own exp) makes it a "simd" loop of gcc's
    c = Tensor(x.reshape(-1)).cast("float16").cast("float32")
    t = (c > 1e38).where(c.exp(), c)
    src = _kernel_source(t)
    assert "rg_round_f16(" in src and not _bit_functions_outside_vector_loops(src)
    assert_same_bits(t.numpy(), x.reshape(-1).astype(np.float16).astype(np.float32))


@pytest.mark.parametrize("axis", [0, 1])
def test_no_scalar_half_in_a_softmax(monkeypatch, axis):
    """A float16 softmax rounds x - max and the exp to float16 (numpy's half loops do) and
    widens them again: in C, floats rounded by rg_round_f16, never a `_Float16` temporary,
    which left the exp loop scalar (a `_Float16` is printed only where an accumulator is
    stored)."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = Tensor(np.random.default_rng(6).standard_normal((1024, 1024)).astype(np.float16))
    src = _kernel_source(x.softmax(axis))
    assert not re.findall(r"_Float16 t\d+ = (?!\(_Float16\)\(acc)[^;]*;", src)


def test_every_half_and_rounding_edge_stored_as_half():
    """Halves stored in a loop of scalars (a transpose's tiles: C's `(_Float16)`, not the bits
    of ctext.HALF_BITS, which `omp simd` loops print: test_every_half_widens_to_its_value):
    every float16 bit pattern copied through a transpose, and every rounding edge cast to
    float16 and stored, each numpy's float16, bit for bit (a NaN for a NaN)."""
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)
    t = Tensor(x).T.contiguous()
    src = _kernel_source(t)
    assert "rg_f16_bits(" not in src and re.search(r"p0\[t\d+\] = \(_Float16\)\(t", src)
    assert_same_bits(t.numpy(), x.T.copy())
    e = _rounding_edges()
    e = np.concatenate([e, np.zeros(-e.size % 512, np.float32)]).reshape(512, -1)
    t = Tensor(e).T.cast("float16")
    assert "rg_f16_bits(" not in _kernel_source(t)
    assert_same_bits(t.numpy(), e.T.astype(np.float16))


_BIT_FUNCTIONS = re.compile(r"rg_f16_f32\(|rg_round_f16\(|rg_f16_bits\(")


def _bit_functions_outside_vector_loops(src: str) -> list[str]:
    """The lines of the kernel in `src` that call a float16 bit function (ctext.HALF_WIDEN,
    HALF_ROUND, HALF_BITS) where the innermost `for` around them is neither `omp simd` (a
    pragma on the line before it) nor a loop of explicit vectors (`rN_v += lanes`), or where
    no loop is; the prelude's functions themselves are skipped."""
    body = src[src.index("\nvoid ") if not src.startswith("void ") else 0:]
    stack: list[bool] = []  # each open brace: whether it opens a vectorized loop
    bad, before = [], ""
    for line in body.splitlines():
        text = line.strip()
        if text.startswith("for (") and text.endswith("{"):
            stack.append("simd" in before or bool(re.search(r"r\d+_v \+= \d+\)", text)))
        elif text.endswith("{"):  # (a guard, a block: the loop around it decides)
            stack.append(stack[-1] if stack else False)
        elif text.startswith("}"):
            stack.pop() if stack else None
        if _BIT_FUNCTIONS.search(text) and not any(stack[-1:]):
            bad.append(text)
        before = text
    return bad


@pytest.mark.parametrize("shape, axis", [((1031, 13), 1), ((2, 3, 40, 64), 3), ((7, 1), 1),
                                         ((2, 3, 40, 64), 2), ((1031, 13), 0),
                                         ((520, 1024), 0)])
def test_bit_functions_only_in_vectorized_loops(monkeypatch, shape, axis):
    """A float16 sum, max and argmax, along a short last axis (a row of 13 or 64 summed in a
    row loop gcc leaves scalar: 0.2x torch with the bit functions' ~10 operations a value, 3x
    with F16C's one conversion) and down columns (an `omp simd` loop, where the bit functions
    vectorize): numpy's values, and C whose float16 bit functions are all in `omp simd` or
    explicit-vector loops, C's `(float)` and `(_Float16)` conversions elsewhere."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    x = _data(shape, 58 + shape[0], special=False)
    for op in ("sum", "max", "argmax"):
        t = getattr(Tensor(x), op)(axis)
        src = _kernel_source(t)
        assert not _bit_functions_outside_vector_loops(src), (op, src[-3000:])
        got = t.numpy()
        if op == "sum":
            w = x.astype(np.float64)
            want = w.sum(axis=axis)
            _within(got, want, ((x.shape[axis] - 1) * _F32_EPS * np.abs(w).sum(axis=axis)
                                + _HALF_EPS * np.abs(want) + _HALF_TINY), "sum")
        else:
            np.testing.assert_array_equal(got.astype(np.float64),
                                          getattr(x, op)(axis=axis).astype(np.float64))
    if shape == (1031, 13):  # (axis 1: the row loop's reads, C's conversion of each half)
        src = _kernel_source(Tensor(x).sum(axis))
        assert ("(float)(p1[" in src) == (axis == 1), src[-3000:]
