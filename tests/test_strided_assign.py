"""Assigns into strided slices (x[a:b:step]) against numpy. A slice is made of movement ops;
its span was padded to a whole number of steps, and a PAD is no view of storage, so
`x[::2].assign(...)` was refused with "a lazy RESHAPE (realize it first)" even where the axis
holds the whole steps. Now the span takes the whole steps when the axis holds them (the
assign runs), and where it does not its PAD, which its SHRINK drops, is a view too (adv60)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

SLICES = [slice(None, None, 2), slice(1, None, 2), slice(None, None, 3), slice(None, None, -2),
          slice(5, 0, -2), slice(None, None, -3), slice(2, 6, 3), slice(None, None, 6)]


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("rows", [sl for sl in SLICES])
@pytest.mark.parametrize("cols", [slice(None), slice(None, None, 2), slice(None, None, -3)])
def test_strided_slices_read_write_and_assign(monkeypatch, backend, rows, cols):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    a = np.arange(36, dtype=np.float32).reshape(6, 6)
    np.testing.assert_array_equal(Tensor(a)[rows, cols].numpy(), a[rows, cols])
    x, want = Tensor(a.copy()).realize(), a.copy()
    view = x[rows, cols]
    view.assign(view * 2 + view.flip(0))  # reads the buffer it writes
    want[rows, cols] = want[rows, cols] * 2 + want[rows, cols][::-1]
    np.testing.assert_array_equal(x.numpy(), want)


def test_a_slice_that_needs_padding_is_a_view_that_assigns():
    """(refused until adv60: its PAD, which its SHRINK drops, was taken for a copy)"""
    a = np.arange(42, dtype=np.float32).reshape(7, 6)  # rows 1 and 5: 2 steps of 4 fit nowhere
    x, want = Tensor(a.copy()).realize(), a.copy()
    x[1:6:4].assign(x[0:2])  # reads row 1, which it writes
    want[1:6:4] = want[0:2].copy()
    np.testing.assert_array_equal(x.numpy(), want)
    x[1:6:4] = Tensor(np.ones((2, 6), np.float32))
    want[1:6:4] = 1
    np.testing.assert_array_equal(x.numpy(), want)
