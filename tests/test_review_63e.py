"""Review of hunt63 (reviewer rev63e): each test seen failing on the merged code before its fix.

A Python int past an int tensor's dtype wraps to the dtype's bits (hunt63, as torch computes
it); as a divisor it can wrap to 0, `uint8 // 256`, and the division by zero then gave 0 (the
IR's division by zero) for every element: `x % 256` on uint8 was 0 where torch raises
ZeroDivisionError (and numpy 2 OverflowError)."""

from __future__ import annotations

import numpy as np
import pytest

_DIVS = {"floordiv": lambda a, s: a // s, "mod": lambda a, s: a % s,
         "fmod": lambda a, s: a.fmod(s),
         "trunc": lambda a, s: a.div(s, rounding_mode="trunc"),
         "floor": lambda a, s: a.div(s, rounding_mode="floor")}
_INTS = ["int8", "int16", "int32", "uint8", "uint16", "uint32"]


@pytest.mark.parametrize("dt", _INTS)
@pytest.mark.parametrize("op", sorted(_DIVS))
def test_a_divisor_that_wraps_to_zero_is_refused(dt, op):
    from rulegrad import Tensor

    bits = np.dtype(dt).itemsize * 8
    a = Tensor(np.array([5, 100, 7], dt))
    for s in (2**bits, -(2**bits), 3 * 2**bits):
        with pytest.raises(ZeroDivisionError, match=f"wraps to 0 in {dt}"):
            _DIVS[op](a, s)
    for dt in ("int64", "uint64"):  # no int they take wraps to 0; 2**64 is refused as too big
        with pytest.raises(OverflowError):
            _DIVS[op](Tensor(np.array([5, 7], dt)), 2**64)


@pytest.mark.parametrize("op", sorted(_DIVS))
def test_a_divisor_that_wraps_to_nonzero_is_torchs(op):
    """The refusal is for a zero only: int8 // 384 is int8 // -128, as torch computes it, and a
    dividend that wraps (300 // uint8) is no divisor."""
    torch = pytest.importorskip("torch")
    from rulegrad import Tensor

    for dt, s in (("int8", 384), ("int8", -129), ("uint8", 257), ("int16", 70000)):
        a = np.array([5, -100, 7, 127] if dt.startswith("int") else [5, 100, 7, 255], dt)
        want = _DIVS[op](torch.from_numpy(a.copy()), s).numpy()
        got = _DIVS[op](Tensor(a), s).numpy()
        assert got.dtype == want.dtype and np.array_equal(got, want), (dt, s, got, want)
    b = np.array([5, 100, 7], np.uint8)
    assert np.array_equal((300 // Tensor(b)).numpy(), (300 // torch.from_numpy(b)).numpy())
    assert np.array_equal((Tensor(b) // 0).numpy(), [0, 0, 0])  # a 0 written stays numpy's 0
