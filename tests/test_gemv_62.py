"""Products of few rows (GEMV at batch 1, 2, 3, 7) on machines other than this one: the runs a
streamed product reads y in and the threads that claim them follow the machine's facts (L1 size
RULEGRAD_L1_BYTES, threads RULEGRAD_THREADS, the page size), every thread claiming as many runs of
as many register panels (rules/pack_helpers.py's `stream_width`, `stream_threads`); a product of
one row shares its columns only in blocks of half a page or more (rules/interchange_helpers.py's
`block_j`, `_shared_block`). Checked in the recorded actions (DEBUG=2's lines), values against
numpy at each."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.runtime.target import page_bytes, parallel_min_work


def _rand(rng: np.random.Generator, *shape: int, dtype=np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _close(got: np.ndarray, want: np.ndarray, k: int, scale: float) -> None:
    """Within a float32 sum's rounding over k terms of size `scale` (each output's |x| |w|)."""
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=4e-7 * k * scale + 1e-6)


def _actions(t: Tensor) -> list[str]:
    return actions(optimize_kernel(lower_only(t.schedule()[-1].ast)))


def _machine(monkeypatch, l1: str, nthreads: int) -> None:
    monkeypatch.setenv("RULEGRAD_L1_BYTES", l1)
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))


@pytest.mark.parametrize("nthreads", [1, 2, 3, 4])
@pytest.mark.parametrize("l1", ["32K", "48K", "64K"])
@pytest.mark.parametrize("m, k, n", [(6, 512, 1500), (3, 640, 2560), (2, 1024, 4096),
                                     (2, 700, 1500), (5, 300, 3001)])
def test_stream_runs_follow_machine_facts(monkeypatch, l1: str, nthreads: int, m: int, k: int,
                                          n: int) -> None:
    """The runs' sums fit half the L1; with threads, each thread's share of the row is half a
    page at least, and the runs split evenly among the threads that share them (a run count
    that is a multiple of them, the threads' columns within a panel per run of each other); no
    threads where a share would be under half a page or there is one thread."""
    _machine(monkeypatch, l1, nthreads)
    rng = np.random.default_rng(n + m)
    x, w, b = _rand(rng, m, k), _rand(rng, k, n), _rand(rng, n)
    t = (Tensor(x) @ Tensor(w) + Tensor(b)).relu()
    (pack,) = [s for s in _actions(t) if s.startswith("PACK")]
    found = re.search(r"tile (\d+)x(\d+)\).* streamed (\d+) columns", pack)
    assert found is not None, pack
    rows, panel, run = map(int, found.groups())
    assert rows == m and run % panel == 0, pack
    l1_bytes = int(l1[:-1]) << 10
    assert run == panel or rows * run * 4 <= l1_bytes // 2, pack  # (the sums fit)
    runs = -(-n // run)
    page = page_bytes() // 4
    # the threads whose shares are half a page or more (pack_helpers' STREAM_SHARE) and whose
    # shares of the multiply-adds pay for the parallel region (pack_helpers' `region_threads`)
    used = max(1, min(nthreads, n * 2 // page, m * k * n // parallel_min_work()))
    assert ("PARALLEL" in pack) == (used > 1), pack
    if used > 1:
        assert runs % used == 0, pack
        widths = [min(run, n - i * run) for i in range(runs)]
        shares = [sum(widths[i::used]) for i in range(used)]  # (any claims: equal counts)
        assert max(shares) - min(shares) < runs * panel, (pack, shares)
        assert min(shares) >= page // 2, (pack, shares)
    _close(t.numpy(), np.maximum(x.astype(np.float64) @ w + b, 0), k,
           np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("nthreads", [1, 2, 3, 4])
@pytest.mark.parametrize("k, n", [(640, 2560), (512, 4096), (700, 3001), (300, 7000)])
def test_one_row_blocks_follow_threads(monkeypatch, nthreads: int, k: int, n: int) -> None:
    """A product of one row shares its columns among the threads in blocks half a page wide at
    least (pack_helpers' STREAM_SHARE, as a streamed product's shares), no more blocks than
    threads (3 threads take 4096 columns as 3 blocks, not 4 of 1024), and no more threads than
    the multiply-adds pay a parallel region for (pack_helpers' `region_threads`); one thread, or
    a row whose shares would be under half a page, keeps whole rows."""
    _machine(monkeypatch, "48K", nthreads)
    rng = np.random.default_rng(k * n)
    x, w = _rand(rng, 1, k), _rand(rng, k, n)
    t = Tensor(x) @ Tensor(w)
    (inter,) = [s for s in _actions(t) if s.startswith("INTERCHANGE")]
    found = re.search(r"in (\d+) blocks of (\d+)", inter)
    page = page_bytes() // 4
    used = min(nthreads, n * 2 // page, k * n // parallel_min_work())
    if used <= 1:  # (two shares of under half a page, or of too little work)
        assert found is None or int(found.group(2)) * int(found.group(1)) >= n > 4096, inter
        # (a row wider than the accumulators is in blocks of its own, parallel_helpers' to thread)
        assert n > 4096 or not any(s.startswith("PARALLEL") for s in _actions(t)), inter
    else:
        assert found is not None, inter
        count, block = map(int, found.groups())
        assert block >= page // 2 and count % used == 0, inter
        assert count <= max(used, -(-n // 4096)), inter
    _close(t.numpy(), x.astype(np.float64) @ w, k, np.abs(x).max() * np.abs(w).max())


SWEEP = [(1, 3, 5), (1, 127, 4099), (1, 4096, 7), (2, 1021, 77), (3, 640, 2560),
         (7, 2048, 512), (2, 5, 1031), (7, 1, 64)]


@pytest.mark.parametrize("nthreads, l1", [(1, "32K"), (3, "64K"), (4, "32K")])
@pytest.mark.parametrize("m, k, n", SWEEP)
def test_sweep_values_on_other_machines(monkeypatch, nthreads: int, l1: str, m: int, k: int,
                                        n: int) -> None:
    """float32 with bias and gelu, x @ w.T, float16 and int8 wrapping, at faked machine facts:
    numpy's values whatever the runs and threads."""
    _machine(monkeypatch, l1, nthreads)
    rng = np.random.default_rng(m * k + n)
    x, w, b = _rand(rng, m, k), _rand(rng, k, n), _rand(rng, n)
    got = (Tensor(x) @ Tensor(w) + Tensor(b)).gelu().numpy()
    y = x.astype(np.float64) @ w + b
    want = 0.5 * y * (1 + np.tanh(0.7978845608028654 * (y + 0.044715 * y ** 3)))
    _close(got, want, k, np.abs(x).max() * np.abs(w).max())
    wt = np.ascontiguousarray(w.T)
    got = (Tensor(x) @ Tensor(wt).transpose(1, 0)).numpy()
    _close(got, x.astype(np.float64) @ w, k, np.abs(x).max() * np.abs(w).max())
    h, g = x.astype(np.float16), w.astype(np.float16)
    got = (Tensor(h) @ Tensor(g)).numpy()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), h.astype(np.float64) @ g.astype(np.float64),
                               rtol=2e-3, atol=2e-3 * np.sqrt(k) + 4e-4 * k * 2 ** -10 * 16)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    q = rng.integers(-128, 128, (k, n)).astype(np.int8)
    got = (Tensor(a) @ Tensor(q)).numpy()
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, a @ q)


@pytest.mark.parametrize("page", [4096, 16384])
@pytest.mark.parametrize("m, k, n", [(3, 640, 2560), (2, 1024, 8192), (6, 300, 9001)])
def test_stream_threads_follow_the_page_size(monkeypatch, page: int, m: int, k: int,
                                             n: int) -> None:
    """A machine of 16 KB pages (Apple's) shares a row among threads only where each share is
    half such a page or more (2560 columns: one core; 8192: two threads, each a page), its runs
    a page wide or more where the L1 has room."""
    from rulegrad.rules import interchange_helpers, pack_helpers
    for module in (pack_helpers, interchange_helpers):
        monkeypatch.setattr(module, "page_bytes", lambda: page)
    _machine(monkeypatch, "64K", 2)
    rng = np.random.default_rng(n)
    x, w = _rand(rng, m, k), _rand(rng, k, n)
    t = Tensor(x) @ Tensor(w)
    (pack,) = [s for s in _actions(t) if s.startswith("PACK")]
    run = int(pack.split("streamed ")[1].split(" columns")[0])
    assert ("PARALLEL" in pack) == (n * 4 * 2 // page >= 2), pack
    if "PARALLEL" in pack:
        panel = int(pack.split("x")[2].split(")")[0])  # (tile MxP)
        room = 65536 // (2 * m * 4) // panel * panel  # (the columns of sums half the L1 holds)
        fewest = -(-n // min(page // 4, room))  # runs of a page, or as many as the L1 needs
        assert -(-n // run) % 2 == 0 and -(-n // run) <= fewest + fewest % 2, pack
    _close(t.numpy(), x.astype(np.float64) @ w, k, np.abs(x).max() * np.abs(w).max())
