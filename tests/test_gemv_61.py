"""Products of few rows (a GEMV at batch 1, 2, 3, 7) against numpy: float32 with bias and
activation epilogues and a residual, float16, int8 wrapping, int8 widened to float32, and
transposed weights, at tiny, prime, tall, skinny and wide shapes; and the threads they take: a
row of y shorter than two pages is read whole by one core, not in runs shorter than a page by
two (rules/pack_helpers.py's `stream_width`, rules/interchange_helpers.py's `_shared_block`)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.runtime.target import page_bytes

SHAPES = [  # (m, k, n): batch 1, 2, 3, 7; k and n tiny, prime, tall, skinny, wide
    (1, 3, 5), (1, 127, 4099), (1, 4096, 7), (1, 2048, 512), (1, 640, 2560),
    (2, 2048, 512), (2, 1021, 77), (3, 640, 2560), (3, 5, 1031), (7, 509, 263), (7, 1, 64),
]
_ACTS = {
    "relu": (lambda y: y.relu(), lambda y: np.maximum(y, 0)),
    "silu": (lambda y: y.silu(), lambda y: y / (1 + np.exp(-y))),
    "gelu": (lambda y: y.gelu(),
             lambda y: 0.5 * y * (1 + np.tanh(0.7978845608028654 * (y + 0.044715 * y ** 3)))),
}


def _rand(rng: np.random.Generator, *shape: int, dtype=np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _close(got: np.ndarray, want: np.ndarray, k: int, scale: float) -> None:
    """Within a float32 sum's rounding over k terms of size `scale` (each output's |x| |w|)."""
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=4e-7 * k * scale + 1e-6)


@pytest.mark.parametrize("act", sorted(_ACTS))
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_linear_act_residual(m: int, k: int, n: int, act: str) -> None:
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    x, w, b, r = _rand(rng, m, k), _rand(rng, k, n), _rand(rng, n), _rand(rng, m, n)
    ours, theirs = _ACTS[act]
    got = (ours(Tensor(x) @ Tensor(w) + Tensor(b)) + Tensor(r)).numpy()
    want = theirs(x.astype(np.float64) @ w + b) + r
    _close(got, want, k, np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("m, k, n", SHAPES)
def test_transposed_weights(m: int, k: int, n: int) -> None:
    """x @ w.T, w stored (n, k): each output a dot product along a contiguous row of w."""
    rng = np.random.default_rng(m + k + n)
    x, w, b = _rand(rng, m, k), _rand(rng, n, k), _rand(rng, n)
    got = (Tensor(x) @ Tensor(w).transpose(1, 0) + Tensor(b)).relu().numpy()
    want = np.maximum(x.astype(np.float64) @ w.T.astype(np.float64) + b, 0)
    _close(got, want, k, np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("m, k, n", [(1, 3, 5), (1, 2048, 512), (2, 1021, 77), (7, 509, 263)])
def test_float16(m: int, k: int, n: int) -> None:
    """float16 operands: a float16 result within its rounding of the exact product."""
    rng = np.random.default_rng(k)
    x, w = _rand(rng, m, k, dtype=np.float16), _rand(rng, k, n, dtype=np.float16)
    got = (Tensor(x) @ Tensor(w)).numpy()
    assert got.dtype == np.float16
    want = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3,
                               atol=2e-3 * np.sqrt(k) + 4e-4 * k * 2 ** -10 * 16)


@pytest.mark.parametrize("m, k, n", [(1, 3, 5), (1, 2048, 512), (2, 1021, 77), (3, 640, 2560),
                                     (7, 127, 4099)])
def test_int8_wraps_and_widens(m: int, k: int, n: int) -> None:
    """int8 @ int8 is int8, wrapped as numpy's (exact in any order: modular); int8 activations
    cast to float32 times a float32 weight (a dequantized product, bench's matmul_i8)."""
    rng = np.random.default_rng(n)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    q = rng.integers(-128, 128, (k, n)).astype(np.int8)
    got = (Tensor(a) @ Tensor(q)).numpy()
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, a @ q)
    w = _rand(rng, k, n)
    got = (Tensor(a).cast("float32") @ Tensor(w)).numpy()
    _close(got, a.astype(np.float64) @ w, k, 128 * np.abs(w).max())


def _actions(t: Tensor) -> list[str]:
    return actions(optimize_kernel(lower_only(t.schedule()[-1].ast)))


@pytest.mark.parametrize("m, k, n", [(2, 2048, 512), (3, 700, 1000), (2, 700, 1500),
                                     (2, 1024, 4096), (3, 640, 2560)])
def test_few_rows_stream_runs_of_at_least_a_page(monkeypatch, m: int, k: int, n: int) -> None:
    """A product of one row tile streams y in runs the threads claim: each run at least a page
    of a row (or the whole row, or each thread's share), so a row whose share per thread is
    under half a page (pack_helpers' STREAM_SHARE) is one run, on one core; a wider one runs on
    the threads, in runs of a page or more or of each one's share. Counted in the action, not
    timed."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    rng = np.random.default_rng(n)
    x, w, b = _rand(rng, m, k), _rand(rng, k, n), _rand(rng, n)
    t = (Tensor(x) @ Tensor(w) + Tensor(b)).relu()
    (pack,) = [s for s in _actions(t) if s.startswith("PACK")]
    assert "streamed" in pack, pack
    run = int(pack.split("streamed ")[1].split(" columns")[0])
    page = page_bytes() // 4
    share = n // 2  # (each of two threads' columns)
    assert run >= min(page, n, share // 32 * 32), pack
    assert ("PARALLEL" in pack) == (share >= page // 2), pack
    _close(t.numpy(), np.maximum(x.astype(np.float64) @ w + b, 0), k,
           np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("k, n, blocks", [(2048, 512, None), (1500, 1000, None),
                                          (640, 2560, None), (1024, 2560, "2 blocks of 1280"),
                                          (512, 4096, "2 blocks of 2048")])
def test_one_row_product_blocks_of_at_least_a_page(monkeypatch, k: int, n: int,
                                                   blocks: str | None) -> None:
    """A product of one row (interchanged: one accumulator per column, rows streamed) shares its
    columns between the threads only in blocks of at least half a page of a row (pack_helpers'
    STREAM_SHARE); a narrower row is read whole, one stream, by one core (an int8 row widened
    to float32, bench's matmul_i8), and so is a row of 640x2560, whose 1.6M multiply-adds give
    each thread less than a parallel region costs (pack_helpers' `region_threads`)."""
    monkeypatch.setenv("RULEGRAD_THREADS", "2")
    rng = np.random.default_rng(k + n)
    a, w = rng.integers(-128, 128, (1, k)).astype(np.int8), _rand(rng, k, n)
    t = Tensor(a).cast("float32") @ Tensor(w)
    (inter,) = [s for s in _actions(t) if s.startswith("INTERCHANGE")]
    if blocks is None or n * 4 < page_bytes():  # (the blocks named are 4 KB pages')
        assert "blocks" not in inter, inter
    else:
        assert blocks in inter, inter
    _close(t.numpy(), a.astype(np.float64) @ w, k, 128 * np.abs(w).max())

