"""Issue 32's sweep cliffs, cliff59: a transpose whose output rows are a page and a little apart
(1031 floats) left untiled."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import schedule_actions as _actions

from rulegrad import Tensor


# (a, b, c, dtype, the tile's block of rows or None): out[a, c, b] = 2 x[a, b, c] + s[b, c],
# its rows b floats apart. Rows a page and a little apart step through L1's sets a few rows a set
# (4124, 6000, 6124 bytes: tiled, 2.4-2.7x faster than untiled, bench/ab.py --cpu); rows a page
# apart (1024), or 4 bytes over one (1025), put the block's rows in one set; rows of 2053 floats
# leave a block of 4 rows, a quarter of a line read per far line (measured 0.79x tiled): untiled.
# float64 rows of 1031 take 4 rows, half a line (1.9x faster tiled, one core's CPU time)
@pytest.mark.parametrize("a, b, c, dt, rows", [
    (3, 1031, 503, "float32", 8), (2, 1031, 1031, "float32", 8), (3, 1500, 257, "float32", 8),
    (2, 1531, 127, "float32", 8), (2, 1031, 517, "float64", 4), (3, 1024, 512, "float32", None),
    (2, 1025, 300, "float32", None), (2, 2053, 127, "float32", None),
    (1, 4097, 63, "float32", None)])
def test_a_transpose_with_rows_past_a_page_is_tiled_where_its_rows_spread_over_l1(
        monkeypatch, a, b, c, dt, rows):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x = np.random.default_rng(5).integers(-9, 9, (a, b, c)).astype(dt)
    t = Tensor(x).transpose(1, 2) * 2 + Tensor(x).sum(0).transpose(0, 1)
    tiles = [s for s in _actions(t) if s.startswith("TILE")]
    assert [int(s.split("in blocks of ")[1].split(",")[0]) for s in tiles] == \
        ([rows] if rows else []), tiles
    np.testing.assert_array_equal(t.numpy(), x.transpose(0, 2, 1) * 2 + x.sum(0).T)
