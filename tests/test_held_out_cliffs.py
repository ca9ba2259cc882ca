"""Cliffs bench/sweep.py's third held-out set (`--held-out-3`) found, each checked against numpy
at the shapes it was found at and by the work its kernels do (the loops a reduction runs
inside, the actions applied, the threads taken), never by time."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from optimizer_actions import schedule_actions as _actions

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime.ops import Ops


def _groupnorm_np(x: np.ndarray, g: int, eps: float = 1e-5) -> np.ndarray:
    n = x.shape[0]
    y = x.reshape(n, g, -1).astype(np.float64)
    y = (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + eps)
    return y.reshape(x.shape)


@pytest.mark.parametrize("n, c, hw, g", [(1, 6, 9, 2), (8, 12, 7, 3), (2, 32, 16, 8),
                                         (1, 6, 97, 2)])
def test_groupnorm_computes_each_group_statistic_per_channel_not_per_pixel(n, c, hw, g):
    # a group's mean and variance read the group index (channel * hw * hw + pixel) // group
    # size; unsimplified, it reads the pixel loops too, and each output pixel recomputed its
    # group's sums (127 ms at 1x6x97x97, 1300x torch's)
    x = np.random.default_rng(0).standard_normal((n, c, hw, hw)).astype(np.float32)
    t = Tensor(x).reshape(n, g, -1).layernorm().reshape(n, c, hw, hw)
    (item,) = t.schedule()
    reduces = [u for u in item.ast.toposort() if u.op is Ops.REDUCE]
    assert reduces
    for red in reduces:
        loops = [r for r in red.toposort() if r.op is Ops.RANGE and r.arg[1] == "loop"]
        assert math.prod(r.src[0].arg for r in loops) <= n * c, loops
    np.testing.assert_allclose(t.numpy(), _groupnorm_np(x, g), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("a, b, c, tiled", [(3, 1021, 509, True), (2, 1021, 97, True),
                                             (4, 512, 256, True), (7, 97, 1009, False),
                                             (1, 4097, 63, False), (2, 1033, 7, False)])
def test_a_transpose_reads_a_cache_line_per_step(monkeypatch, a, b, c, tiled):
    # out[a, c, b] = 2 x[a, b, c] + s[b, c]: the store runs along b, the reads step c apart;
    # the c loop in blocks of a vector's width, innermost, reads a line of x per step of b.
    # b of 97: a pass over b reads 194 lines, which stay in L1 for the next c; b of 4097: the
    # block's output rows 16 KB apart share L1's sets; c of 7 is short of two blocks (of 8 or
    # 16 lanes): all three left as they were. With a 48 KB L1 of 12 ways: with 8 ways the 97
    # lines crowd its sets (tests/test_broadcast_cliffs.py)
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")
    x = np.random.default_rng(1).standard_normal((a, b, c)).astype(np.float32)
    t = Tensor(x).transpose(1, 2) * 2 + Tensor(x).sum(0).transpose(0, 1)
    acts = _actions(t)
    assert any(s.startswith("TILE") for s in acts) is tiled, acts
    want = x.transpose(0, 2, 1) * 2 + x.astype(np.float64).sum(0).T
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-3)


def _gated_stores(t: Tensor) -> tuple[int, bool]:
    """The stores printed under an `if` in t's kernels, and whether a transpose tile was taken."""
    gated, tiled = 0, False
    for i, item in enumerate(t.schedule()):
        low = lower_only(item.ast)
        opt = optimize_kernel(low)
        tiled |= any(a.startswith("TILE") for a in actions(opt))
        gated += len(re.findall(r"if \([^;]*\) p\d+\[", render_kernel(opt, f"k{i}").source))
    return gated, tiled


@pytest.mark.parametrize("a, b, c, dt", [(3, 1021, 509, "float32"), (1, 1023, 67, "float32"),
                                         (2, 509, 1021, "float64"), (2, 509, 1021, "int16")])
def test_a_transpose_tile_stores_its_overlapping_last_block_ungated(monkeypatch, a, b, c, dt):
    # the last block of c overlaps the one before it (no block divides 509); a store that reads
    # nothing of its own buffer writes the overlapped rows again, with the same values: gated,
    # each element of the block loop was a branch, and gcc kept the loop rolled. (An in-place
    # a += b.T reads a back and keeps the gate: tests/test_review_49b.py, b added twice)
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "32K")
    x = np.random.default_rng(4).integers(-9, 9, (a, b, c)).astype(dt)
    t = Tensor(x).transpose(1, 2) * 2 + Tensor(x).sum(0).transpose(0, 1)
    assert _gated_stores(t) == (0, True)
    want = x.transpose(0, 2, 1) * 2 + x.sum(0, dtype=x.dtype).T
    np.testing.assert_array_equal(t.numpy(), want)


# (a, b, c, dtype, the block's rows): 16 float32 rows (a 512-bit vector) of b elements each span
# 16 * 4 * b bytes of the output, more than a 32 KB L1 from b = 513 on (then 8 rows)
@pytest.mark.parametrize("a, b, c, dt, rows", [
    (3, 1021, 509, "float32", 8), (1, 1023, 67, "float32", 8), (4, 777, 1031, "float32", 8),
    (2, 509, 1021, "float32", 16), (64, 128, 128, "float32", 16), (2, 509, 1021, "float64", 8)])
def test_a_transpose_tiles_block_of_output_rows_spans_at_most_l1(monkeypatch, a, b, c, dt, rows):
    # each row of the tile's block keeps a line of the output in flight per step of b: 16 rows
    # of 777 to 1021 floats ran 2x to 10x slower than 8 (the kernel alone, one core), rows of
    # 128 as fast or faster (rules/transpose_helpers.py's `_block`). A 32 KB L1, 512-bit vectors
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "32K")
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x = np.random.default_rng(3).integers(-9, 9, (a, b, c)).astype(dt)
    t = Tensor(x).transpose(1, 2) * 2 + Tensor(x).sum(0).transpose(0, 1)
    tiles = [s for s in _actions(t) if s.startswith("TILE")]
    assert [int(s.split("in blocks of ")[1].split(",")[0]) for s in tiles] == [rows], tiles
    want = x.transpose(0, 2, 1) * 2 + x.sum(0, dtype=x.dtype).T
    np.testing.assert_array_equal(t.numpy(), want)


def _conv_np(x: np.ndarray, w: np.ndarray, stride: int, dil: int, pad: int) -> np.ndarray:
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[-1]
    span = dil * (k - 1) + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (span, span), axis=(2, 3))
    win = win[:, :, ::stride, ::stride, ::dil, ::dil]  # (n, c, oh, ow, k, k)
    return np.einsum("ncyxij,ocij->noyx", win, w.astype(np.float64))


@pytest.mark.parametrize("n, c, hw, o, k, stride, dil, pad", [
    (1, 16, 40, 16, 3, 1, 2, 2), (2, 3, 65, 16, 5, 2, 1, 2), (1, 8, 13, 32, 3, 1, 1, 1),
    (1, 3, 31, 8, 7, 2, 1, 3)])
def test_a_padded_convolution_reads_its_windows_from_a_padded_copy(n, c, hw, o, k, stride,
                                                                    dil, pad):
    # read through the PAD, every read of the window is gated and the packed loops copied the
    # window gate by gate per row tile ("A packed": 2.4x slower on a depthwise 5x5); from a
    # padded copy (a kernel of its own) the window is read in place
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((o, c, k, k)).astype(np.float32)
    t = Tensor(x).conv2d(Tensor(w), stride=stride, dilation=dil, padding=pad)
    assert len(t.schedule()) == 2  # the padded copy, then the product
    packs = [a for a in _actions(t) if a.startswith("PACK")]
    assert packs and not any("A packed" in a for a in packs), packs
    want = _conv_np(x, w, stride, dil, pad)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
