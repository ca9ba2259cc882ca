"""Cliffs bench/sweep.py's fifth held-out set (`--held-out-5`) found against torch eager, each
checked against numpy at shapes around the one it was found at and by the work its kernel does
(the threads' teams a call wakes, the actions taken), never by time."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import compile_program
from rulegrad.runtime.target import parallel_min_work

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


def conv_ref(x: np.ndarray, w: np.ndarray, dilation: int, padding: int, groups: int
             ) -> np.ndarray:
    """A stride-1 grouped, dilated, padded convolution in float64, window by window."""
    n, c, hw, _ = x.shape
    o, cg, k, _ = w.shape
    out = hw + 2 * padding - dilation * (k - 1)
    xp = np.pad(np.float64(x), ((0, 0), (0, 0), (padding,) * 2, (padding,) * 2))
    got = np.zeros((n, o, out, out))
    og = o // groups
    for g in range(groups):
        xs, ws = xp[:, g * cg:(g + 1) * cg], np.float64(w[g * og:(g + 1) * og])
        for i in range(k):
            for j in range(k):
                win = xs[:, :, i * dilation:i * dilation + out, j * dilation:j * dilation + out]
                got[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win, ws[:, :, i, j])
    return got


# grouped (4 or 2 or 8 channels a group), dilated and padded convolutions of 2-3M multiply-adds
# whose packed product has one row tile: the threads used to take its 2 panels per iteration
# of every batch loop (batch x groups x output rows: 3x4x37 teams of 5k multiply-adds each,
# 0.03x torch's speed at 3x16x37x16, dilation 3, padding 3, groups 4)
CONVS = [(3, 16, 37, 16, 3, 3, 3, 4), (2, 8, 61, 8, 3, 2, 2, 2), (1, 16, 67, 16, 3, 3, 3, 4),
         (2, 32, 31, 32, 3, 2, 2, 8)]


@pytest.mark.parametrize("shape", CONVS, ids=str)
def test_a_grouped_dilated_conv_wakes_few_teams_each_with_enough_work(
        shape: tuple[int, ...]) -> None:
    n, c, hw, o, k, dilation, padding, groups = shape
    rng = np.random.default_rng(5)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((o, c // groups, k, k)).astype(np.float32)
    t = Tensor(x).conv2d(Tensor(w), dilation=dilation, padding=padding, groups=groups)
    source = compile_program(t.schedule()).source
    product = source[source.rindex("\nvoid k") + 1:]
    out = t.shape[2]
    macs = n * o * out * out * (c // groups) * k * k
    wakes = team_wakes(product)
    # threaded (more than one team's worth of work), each team woken for at least that much
    assert macs >= parallel_min_work() and wakes >= 1, (macs, wakes)
    assert macs // wakes >= parallel_min_work(), (macs, wakes)
    want = conv_ref(x, w, dilation, padding, groups)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_team_wakes_counts_regions_inside_loops() -> None:
    kernel = ("void k(void *v0)\n{\n  for (int64_t r0 = 0; r0 < 3; r0++) {\n"
              "    for (int64_t r1 = 2; r1 < 6; r1++) {\n      #pragma omp parallel\n"
              "      {\n        float a = (float){0};\n      }\n    }\n  }\n"
              "  #pragma omp parallel\n  {\n  }\n}\n")
    assert team_wakes(kernel) == 3 * 4 + 1
    assert team_wakes("void k(void *const *a_, int64_t lo_, int64_t hi_)\n{\n}\n") == 1
