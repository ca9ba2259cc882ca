"""Packed products whose y fits in one core's L2 read y's panels in place (rules/pack_helpers.py's
`read_in_place`, `Pack.inplace`): the register block takes the step between w's rows (the
packed panel's, or y's own), and the last part-full panel is streamed. Checked in the recorded
actions (DEBUG=2's lines) at faked L2 sizes, and values against numpy at the shapes that take
it: few and many row tiles, whole and part-full last panels, each epilogue, float32 and
float64, both schedulers, one and two threads."""

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


def _gelu_tanh(y: np.ndarray) -> np.ndarray:
    return 0.5 * y * (1 + np.tanh(0.7978845608028654 * (y + 0.044715 * y ** 3)))


def _gelu_erf(y: np.ndarray) -> np.ndarray:
    return 0.5 * y * (1 + np.vectorize(math.erf)(y / math.sqrt(2)))


ACTS = {
    "none": (lambda t: t, lambda y: y),
    "relu": (lambda t: t.relu(), lambda y: np.maximum(y, 0)),
    "gelu": (lambda t: t.gelu(), _gelu_tanh),
    "gelu_erf": (lambda t: t.gelu(approximate="none"), _gelu_erf),
    "silu": (lambda t: t.silu(), lambda y: y / (1 + np.exp(-y))),
}


@pytest.mark.parametrize("l2, inplace", [("1M", True), ("2M", True), ("256K", False)])
def test_in_place_follows_the_l2(monkeypatch, l2: str, inplace: bool) -> None:
    """33x1536x96 (y 576 KB): read in place where y fits in the L2, packed where it does not."""
    monkeypatch.setenv("RULEGRAD_L2_BYTES", l2)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((33, 1536), np.float32), rng.standard_normal((1536, 96), np.float32)
    t = (Tensor(x) @ Tensor(w)).relu()
    assert ("IN PLACE" in _pack_line(t)) == inplace, _pack_line(t)
    want = np.maximum(x.astype(np.float64) @ w, 0)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=2e-4 * math.sqrt(1536))


def test_one_tile_streams_and_large_y_packs() -> None:
    """A product of one row tile still streams y (`Pack.stream`); a y larger than the L2, one
    of many row tiles, one whose rows are a page apart, or one of no whole panel is packed
    into panels."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 512), np.float32)
    w = rng.standard_normal((512, 96), np.float32)
    line = _pack_line(Tensor(x) @ Tensor(w))
    assert "streamed" in line and "IN PLACE" not in line, line
    x = rng.standard_normal((64, 1024), np.float32)
    w = rng.standard_normal((1024, 1024), np.float32)  # 4 MB
    line = _pack_line(Tensor(x) @ Tensor(w))
    assert "IN PLACE" not in line, line
    for m, k, n in [(256, 1536, 96), (7, 96, 1000), (33, 1000, 17)]:
        x, w = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
        line = _pack_line(Tensor(x) @ Tensor(w))
        assert "IN PLACE" not in line, (m, k, n, line)


@pytest.mark.parametrize("vector_bytes", ["32", "64"])
@pytest.mark.parametrize("m, inplace", [(7, True), (24, True), (33, True), (48, True),
                                        (54, False)])
def test_part_full_panel_in_place_up_to_the_tiles(monkeypatch, vector_bytes: str, m: int,
                                                  inplace: bool) -> None:
    """x(m, 1000) @ w(1000, 127): whole panels and a part-full last one (31 of 32 columns, or
    15 of 16), a register block's (blocks.py's `last`; streamed before pack65, at half a
    block's speed, in place up to 4 tiles only); in place up to PARALLEL_SHARES row tiles (2,
    4, 6, 8), packed at 9."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    rng = np.random.default_rng(m)
    x, w = rng.standard_normal((m, 1000), np.float32), rng.standard_normal((1000, 127), np.float32)
    t = Tensor(x) @ Tensor(w)
    line = _pack_line(t)
    assert f"x{int(vector_bytes) // 2})" in line and ("IN PLACE" in line) == inplace, line
    np.testing.assert_allclose(t.numpy(), x.astype(np.float64) @ w, rtol=1e-4, atol=2e-2)


SHAPES = [(12, 1536, 96), (33, 1536, 96), (7, 127, 127), (24, 96, 127), (47, 17, 512),
          (48, 96, 96), (33, 1000, 64), (17, 64, 48)]


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("threads, vector_bytes", [("1", "32"), ("2", "32"), ("2", "64")])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_values_in_place(monkeypatch, scheduler: str, threads: str, vector_bytes: str, m: int,
                         k: int, n: int) -> None:
    """x @ w + bias, an epilogue and a residual add: numpy's values, y read in place (recorded),
    its last panel whole or part-full, in panels of 256- and 512-bit registers."""
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", vector_bytes)
    rng = np.random.default_rng(m * k + n)
    x, w = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    b, r = rng.standard_normal(n, np.float32), rng.standard_normal((m, n), np.float32)
    ref = x.astype(np.float64) @ w + b
    for name, (ours, theirs) in ACTS.items():
        t = ours(Tensor(x) @ Tensor(w) + Tensor(b)) + Tensor(r)
        assert "IN PLACE" in _pack_line(t), (name, _pack_line(t))
        np.testing.assert_allclose(t.numpy(), theirs(ref) + r, rtol=1e-4,
                                   atol=2e-5 * k + 1e-5, err_msg=name)


@pytest.mark.parametrize("m, k, n", [(33, 96, 40), (40, 127, 24), (20, 300, 100)])
def test_values_in_place_float64(m: int, k: int, n: int) -> None:
    """float64 (panels of half the columns): numpy's values, y read in place."""
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    t = (Tensor(x) @ Tensor(w)).relu()
    assert "IN PLACE" in _pack_line(t), _pack_line(t)
    np.testing.assert_allclose(t.numpy(), np.maximum(x @ w, 0), rtol=1e-12, atol=1e-12 * k)


def test_values_in_place_transposed_x_batched() -> None:
    """A batch of products (the batch loop threaded) and x read as a transposed view: numpy's
    values with y read in place."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 64, 33), np.float32)
    w = rng.standard_normal((4, 64, 127), np.float32)
    t = Tensor(x).transpose(1, 2) @ Tensor(w)
    want = np.einsum("bkm,bkn->bmn", x.astype(np.float64), w)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4 * 64)
