"""Cliffs bench/sweep.py's fifth held-out set (`--held-out-5`) found against torch eager, each
checked against numpy at shapes around the one it was found at and by the work its kernel does
(the threads' teams a call wakes, the actions taken), never by time."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from optimizer_actions import schedule_actions

from rulegrad import Tensor
from rulegrad.backends.c import compile_program
from rulegrad.runtime.target import parallel_min_work, threads

_FOR = re.compile(r"\s*for \(int64_t \w+ = (-?\d+); \w+ < (-?\d+);")


def team_wakes(kernel: str) -> int:
    """How many times one call of a kernel's C wakes a thread team: each `omp parallel` region
    once per iteration of the loops around it, and a kernel whose outer loop the launcher
    splits (its `lo_`/`hi_` share) once."""
    wakes = 1 if "int64_t lo_, int64_t hi_" in kernel.split("\n", 1)[0] else 0
    trips: list[int] = []  # per open brace: its loop's iterations (1 for any other block)
    for line in kernel.splitlines():
        if "#pragma omp parallel" in line:
            wakes += math.prod(trips)
        head = _FOR.match(line)
        for ch in line:
            if ch == "{":
                trips.append(int(head[2]) - int(head[1]) if head else 1)
                head = None
            elif ch == "}":
                trips.pop()
    return wakes


def conv_ref(x: np.ndarray, w: np.ndarray, dilation: int, padding: int, groups: int,
             stride: int = 1) -> np.ndarray:
    """A grouped, dilated, padded, strided convolution in float64, window by window."""
    n, c, hw, _ = x.shape
    o, cg, k, _ = w.shape
    out = (hw + 2 * padding - dilation * (k - 1) - 1) // stride + 1
    xp = np.pad(np.float64(x), ((0, 0), (0, 0), (padding,) * 2, (padding,) * 2))
    got = np.zeros((n, o, out, out))
    og = o // groups
    for g in range(groups):
        xs, ws = xp[:, g * cg:(g + 1) * cg], np.float64(w[g * og:(g + 1) * og])
        for i in range(k):
            for j in range(k):
                win = xs[:, :, i * dilation::stride, j * dilation::stride][:, :, :out, :out]
                got[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win, ws[:, :, i, j])
    return got


def _conv(shape: tuple[int, ...]) -> tuple[Tensor, np.ndarray, int]:
    """The convolution of (n, c, hw, o, k, dilation, padding, groups) (stride 1) on random
    inputs, numpy's answer and its multiply-adds."""
    n, c, hw, o, k, dilation, padding, groups = shape
    rng = np.random.default_rng(5)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((o, c // groups, k, k)).astype(np.float32)
    t = Tensor(x).conv2d(Tensor(w), dilation=dilation, padding=padding, groups=groups)
    out = t.shape[2]
    return t, conv_ref(x, w, dilation, padding, groups), n * o * out * out * (c // groups) * k * k


def _check(t: Tensor, want: np.ndarray) -> None:
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


# grouped (4, 2 or 8 channels a group) padded convolutions of 1.5-2.6M multiply-adds whose
# packed product has one row tile (a group's output channels) and the batch, the groups and the
# output rows as batch loops: the threads used to take its 2 panels per batch iteration,
# 3x4x37 teams of 5k multiply-adds each at 3x16x37x16, groups 4 (30x slower than torch)
PACKED = [(3, 16, 37, 16, 3, 1, 1, 4), (2, 8, 61, 8, 3, 1, 1, 2), (1, 16, 67, 16, 3, 1, 1, 4),
          (2, 32, 31, 32, 3, 1, 1, 8), (5, 12, 29, 12, 3, 1, 0, 3)]


@pytest.mark.parametrize("shape", PACKED, ids=str)
def test_a_grouped_conv_wakes_few_teams_each_with_enough_work(shape: tuple[int, ...]) -> None:
    t, want, macs = _conv(shape)
    source = compile_program(t.schedule()).source
    wakes = team_wakes(source[source.rindex("void k"):])  # the product's kernel
    # threaded where two threads' shares each pay for the region (pack_helpers'
    # `region_threads`), each team woken for at least that much
    assert (wakes >= 1) == (macs // parallel_min_work() >= 2 and threads() >= 2), (macs, wakes)
    assert not wakes or macs // wakes >= parallel_min_work(), (macs, wakes)
    _check(t, want)


# the same, dilated: each window's taps a few elements apart, so the plain loops run the output
# row inside the taps as vectors read in place (the interchange action), where packing copied
# every panel of taps for a group's few output channels once per output row (3x16x37x16,
# dilation 3, groups 4: 3.3x slower packed, 0.6x torch's speed)
DILATED = [(3, 16, 37, 16, 3, 3, 3, 4), (2, 8, 61, 8, 3, 2, 2, 2), (2, 32, 31, 32, 3, 2, 2, 8),
           (1, 16, 67, 16, 3, 3, 3, 4)]


@pytest.mark.parametrize("shape", DILATED, ids=str)
def test_a_dilated_grouped_conv_runs_its_plain_loops_as_vectors(shape: tuple[int, ...]) -> None:
    t, want, _ = _conv(shape)
    acts = schedule_actions(t)
    assert not any(a.startswith("PACK") for a in acts), acts
    assert any(a.startswith("INTERCHANGE") for a in acts), acts
    _check(t, want)


def test_team_wakes_counts_regions_inside_loops() -> None:
    kernel = ("void k(void *v0)\n{\n  for (int64_t r0 = 0; r0 < 3; r0++) {\n"
              "    for (int64_t r1 = 2; r1 < 6; r1++) {\n      #pragma omp parallel\n"
              "      {\n        float a = (float){0};\n      }\n    }\n  }\n"
              "  #pragma omp parallel\n  {\n  }\n}\n")
    assert team_wakes(kernel) == 3 * 4 + 1
    assert team_wakes("void k(void *const *a_, int64_t lo_, int64_t hi_)\n{\n}\n") == 1


def attention_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """softmax(q k^T / sqrt(d)) v in float64, keys after the query masked when `causal`."""
    s = np.float64(q) @ np.float64(k).swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tri(s.shape[-2], s.shape[-1], dtype=bool), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True) @ np.float64(v)


# attention over (b, h, s, d) whose heads (b x h, 3x7 at 67x72) hold a few hundred thousand
# multiply-adds each: a team over each head's row tiles was woken 21 times per call (3 images
# on 2 threads share unevenly, so the tiles were threaded); the first batch loop takes the
# threads instead (1.4x faster at 3x7x67x72, causal)
HEADS = [(3, 7, 67, 72, 1), (3, 7, 67, 72, 0), (3, 5, 53, 80, 0), (2, 9, 61, 64, 1)]


@pytest.mark.parametrize("shape", HEADS, ids=str)
def test_attention_of_many_small_heads_wakes_one_team(shape: tuple[int, ...]) -> None:
    b, h, s, d, causal = shape
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32) for _ in range(3))
    t = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=bool(causal))
    source = compile_program(t.schedule()).source
    macs = b * h * s * s * d  # the output's product alone
    wakes = team_wakes(source[source.rindex("void k"):])
    assert macs >= parallel_min_work() and wakes >= 1, (macs, wakes)
    assert macs // wakes >= parallel_min_work(), (macs, wakes)
    want = attention_ref(q, k, v, bool(causal))
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-5)


# depthwise convolutions (a group per channel) with 5x5 and 7x7 windows: no rows and columns to
# pack, and more values than a pool's window the optimizer unrolls, so each output was a scalar
# sum over its window (8x32x29x32, 5x5, stride 2: 0.42x torch's speed); unrolled, the output row
# runs as vectors
DEPTHWISE = [(8, 32, 29, 5, 2, 2), (4, 48, 17, 5, 1, 2), (1, 32, 57, 7, 2, 3),
             (2, 16, 40, 5, 1, 2), (3, 7, 23, 7, 1, 0), (1, 5, 64, 6, 3, 1),
             # 9x9, 11x11 and 13x13 windows (81 to 169 values) were past an 8x8 bound and ran
             # as scalar sums (1x16x23x16 9x9: 0.37x torch's speed; 11x11: 0.38x)
             (1, 16, 23, 9, 1, 4), (2, 13, 19, 9, 2, 4), (1, 8, 31, 11, 1, 5),
             (1, 3, 29, 13, 2, 6)]


@pytest.mark.parametrize("shape", DEPTHWISE, ids=str)
def test_a_depthwise_window_is_unrolled_and_its_output_row_vectorized(
        shape: tuple[int, ...]) -> None:
    n, c, hw, k, stride, padding = shape
    rng = np.random.default_rng(11)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((c, 1, k, k)).astype(np.float32)
    t = Tensor(x).conv2d(Tensor(w), stride=stride, padding=padding, groups=c)
    acts = schedule_actions(t)
    assert any(a.startswith("UNROLL ADD") and f"({k * k} values)" in a for a in acts), acts
    assert any(a.startswith("UPCAST") for a in acts[acts.index(next(
        a for a in acts if a.startswith("UNROLL ADD"))):]), acts
    want = conv_ref(x, w, 1, padding, c, stride)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
