"""Review of round 49's kernel changes (rev49b): each test failed on the merge it reviews (m49).

numpy is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


@pytest.mark.parametrize("shape", [(37, 1021), (41, 997), (19, 509)])
@pytest.mark.parametrize("dt", ["float32", "float64", "int16"])
def test_in_place_add_of_a_transpose(shape, dt, monkeypatch):
    """`a += b.T` with rows far apart along b's loop: transpose_store runs a's rows in blocks of
    a vector's width, the last block overlapping the one before it when the block does not
    divide the rows (37 = 4 * 8 + 5). Stored again, those rows read a back already updated
    and added b twice. (A 32 KB L1: the action's threshold, the same on every machine.)"""
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "32K")
    rng = np.random.default_rng(0)
    n, m = shape
    a0 = rng.integers(-100, 100, (n, m)).astype(dt)
    b = rng.integers(-100, 100, (m, n)).astype(dt)
    a = Tensor(a0.copy()).realize()
    a += Tensor(b).T
    np.testing.assert_array_equal(a.realize().numpy(), a0 + b.T)


@pytest.mark.parametrize("idt", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("n", [200, 300, 40000])
def test_narrow_int_index_into_a_long_axis(idt, n):
    """x[i] with i of a dtype too narrow for the axis (uint8 token ids into 300 rows, an int8
    -1 into 200): negatives counted from the end as t + n in t's dtype raised OverflowError
    (n does not fit int8); unsigned indices are never negative."""
    info = np.iinfo(idt)
    i = np.array([v for v in (0, 1, -1, -2, info.min, info.max, n - 1, -n) if
                  info.min <= v <= info.max and -n <= v < n], idt)
    x = np.random.default_rng(0).standard_normal((n, 3)).astype(np.float32)
    np.testing.assert_array_equal(Tensor(x)[Tensor(i)].numpy(), x[i])
    got = Tensor(x)[:, None][Tensor(i), 0, 1:].numpy()
    np.testing.assert_array_equal(got, x[:, None][i, 0, 1:])
