"""Review of cliff63 (packed products read y's panels in place, rules/pack_helpers.py's
`read_in_place`): the decision's inputs are y's own layout, not only the product's sizes.

- y's rows a page apart: a shrunk y (`x @ w[:, :64]` of a w 1024 columns wide) has 64 columns
  but its rows are 4 KB apart, where the prefetchers stop each step; the page test read the
  columns (256 bytes) and took in place (36x1536x64 of a 1024-wide w, one core: 78-95 us in
  place against 45-54 us packed; of a 4096-wide one 84-95 against 45-50).
- y the block cannot read in place (its rows in reverse, `x @ w[::-1]`): the plan recorded
  "y read IN PLACE" while the renderer packed y (gemm.py's `_streamable` falls back), and the
  plan had dropped the staged panels it takes for such a y; a one-tile product recorded "y
  streamed" so too.
- y read in place in whole panels recorded the streamed block as called, whose library was
  then built for nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel


def _pack_line(t: Tensor) -> str:
    (line,) = [s for s in actions(optimize_kernel(lower_only(t.schedule()[-1].ast)))
               if s.startswith("PACK")]
    return line


def _close(t: Tensor, want: np.ndarray, k: int) -> None:
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=2e-5 * k + 1e-5)


@pytest.mark.parametrize("wide, inplace", [(72, True), (96, True), (512, True), (513, False),
                                           (1024, False), (4096, False)])
def test_in_place_reads_y_row_step(monkeypatch, wide: int, inplace: bool) -> None:
    """x(36, 1536) @ w[:, 8:72], w `wide` columns: in place while y's rows are at most half a
    page apart (512 float32 columns), packed when they are further apart; numpy's values
    either way (y's rows and columns start off a vector's alignment)."""
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1M")
    rng = np.random.default_rng(wide)
    x = rng.standard_normal((36, 1536), np.float32)
    w = rng.standard_normal((1536, wide), np.float32)
    t = Tensor(x) @ Tensor(w)[:, 8:72]
    assert ("IN PLACE" in _pack_line(t)) == inplace, _pack_line(t)
    _close(t, x.astype(np.float64) @ w[:, 8:72], 1536)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("m, k, n", [(7, 96, 127), (24, 127, 32), (12, 64, 64)])
def test_reversed_y_is_not_recorded_in_place(monkeypatch, scheduler: str, m: int, k: int,
                                             n: int) -> None:
    """x @ w[::-1] (y's rows in reverse: a negative step the block cannot take): the recorded
    action says what the kernel does, y packed; numpy's values."""
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    rng = np.random.default_rng(m + k + n)
    x, w = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    t = Tensor(x) @ Tensor(w)[::-1]
    line = _pack_line(t)
    assert "IN PLACE" not in line, line
    _close(t, x.astype(np.float64) @ w[::-1], k)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("vector_bytes", ["32", "64"])
@pytest.mark.parametrize("m, k, n", [(2, 300, 64), (8, 1, 4096), (7, 13, 400), (11, 17, 200),
                                     (24, 13, 127), (47, 2, 512), (48, 7, 100), (25, 5, 300)])
def test_values_tiny_k_and_odd_columns(monkeypatch, threads: str, vector_bytes: str, m: int,
                                       k: int, n: int) -> None:
    """Products of tiny and prime k, columns under, at and over a vector, rows around the tile
    limits, y read in place or not (whatever the plan takes), with a bias and relu: numpy's
    values at 1-3 threads and 256- and 512-bit panels."""
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    rng = np.random.default_rng(m * k + n)
    x, w = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    b = rng.standard_normal(n, np.float32)
    t = (Tensor(x) @ Tensor(w) + Tensor(b)).relu()
    _close(t, np.maximum(x.astype(np.float64) @ w + b, 0), k)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    got = (Tensor(x64) @ Tensor(w64)).numpy()
    np.testing.assert_allclose(got, x64 @ w64, rtol=1e-12, atol=1e-12 * math.sqrt(k))


@pytest.mark.parametrize("m, n, calls", [(37, 64, ("rg_block_vf32_6",)),
                                         (24, 63, ("rg_block_vf32_6",
                                                   "rg_block_vf32_6_last"))])
def test_in_place_calls_the_last_block_only_for_a_part_full_panel(monkeypatch, m: int,
                                                                  n: int, calls) -> None:
    """y read in place in whole panels only calls (and so builds) the register block: the
    block of a part-full last panel (blocks.py's `_last`; the streamed block before pack65) is
    a library of its own that a kernel recording it as called builds for nothing (a first
    37x256x64 product built it)."""
    from rulegrad.backends.c.render import render_kernel

    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((m, 256), np.float32), rng.standard_normal((256, n), np.float32)
    t = Tensor(x) @ Tensor(w)
    assert "IN PLACE" in _pack_line(t), _pack_line(t)
    kernel = render_kernel(optimize_kernel(lower_only(t.schedule()[-1].ast)), "k")
    assert kernel.calls == calls, kernel.calls
    _close(t, x.astype(np.float64) @ w, 256)


def test_the_interpreter_runs_the_in_place_kernel() -> None:
    """relu(a) @ b, 11x67x45 (the staged panels' skinny product, now y read in place, its last
    panel part-full): the optimized AST in the kernel interpreter gives numpy's values."""
    from rulegrad.backends.kernel_interp import run_kernel

    rng = np.random.default_rng(6)
    a = rng.standard_normal((11, 67)).astype(np.float32)
    b = rng.standard_normal((67, 45)).astype(np.float32)
    t = Tensor(a).relu() @ Tensor(b)
    assert "IN PLACE" in _pack_line(t), _pack_line(t)
    (item,) = t.schedule()
    opt = optimize_kernel(lower_only(item.ast))
    bufs = [np.zeros(b_.size, b_.dtype.np) for b_ in item.bufs]
    for i, b_ in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b_.ensure().reshape(-1)
    run_kernel(opt, bufs)
    np.testing.assert_allclose(bufs[0].reshape(11, 45), np.maximum(a, 0).astype(np.float64) @ b,
                               rtol=2e-5, atol=2e-5 * 67)


def test_reversed_y_is_not_recorded_streamed() -> None:
    """One row tile (3x512 @ w[::-1], 512x96): y's rows in reverse, which the streamed block
    cannot read, are packed, and the recorded action says so (it said "y streamed" while the
    kernel packed y); numpy's values."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((3, 512), np.float32), rng.standard_normal((512, 96), np.float32)
    t = Tensor(x) @ Tensor(w)[::-1]
    assert "streamed" not in _pack_line(t), _pack_line(t)
    _close(t, x.astype(np.float64) @ w[::-1], 512)
    line = _pack_line(Tensor(x) @ Tensor(w))
    assert "streamed" in line, line
