"""Review of f16_59 (float16 read and stored through ctext's bit functions, HALF_WIDEN and
HALF_BITS, in loops gcc vectorizes): every one of the 65536 halves through them.

tests/test_f16_59.py checks reductions of random halves; this one puts each half alone in a
reduced line of 37 (the others -inf for a max, -0.0 for a sum: x itself is the answer), on the
3-d middle-axis reduce that reads its halves through rg_f16_f32 and stores through rg_f16_bits
(a subnormal path broken in HALF_WIDEN fails it; an elementwise cast does not use them)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

_ALL = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


@pytest.mark.parametrize("op, fill", [("max", -np.inf), ("sum", -0.0)])
def test_every_half_alone_in_a_line_is_its_reduce(op, fill):
    a = np.full((1024, 37, 64), fill, np.float16)
    a[:, 5, :] = _ALL.reshape(1024, 64)
    got = getattr(Tensor(a), op)(1).numpy().reshape(-1)
    assert got.dtype == np.float16
    nan = np.isnan(_ALL)
    np.testing.assert_array_equal(np.isnan(got), nan)
    zero = _ALL == 0  # (a line of -0.0 sums to +0.0: numpy's and the interpreter's too)
    same = got.view(np.uint16) == _ALL.view(np.uint16)
    bad = np.flatnonzero(~nan & ~zero & ~same)
    assert bad.size == 0, (_ALL[bad[:5]], got[bad[:5]])
    assert np.all(got[zero] == 0)
