"""Launched kernels: a kernel whose body is one threaded loop runs on launch.py's threads.

Checked: the launcher gives every iteration to exactly one thread, whatever the team size;
kernels printed so compute what numpy computes (loops by 1, by blocks, by overlapping vectors,
counts the threads do not divide, full reductions combined after the threads); and their
libraries are built without OpenMP (no region for gcc to outline, no libgomp to link), which
is what launching buys.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator

import numpy as np
import pytest
from test_c_gemm import _conv_np

from rulegrad import Tensor
from rulegrad.backends.c import build, launch, run
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime import target
from rulegrad.runtime.dtype import dtypes

_COUNT = r"""
void rg_count(void *const *a_, int64_t lo_, int64_t hi_)
{
  int32_t *hits = (int32_t *)a_[0];
  for (int64_t i = lo_; i < hi_; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
}
"""


@contextlib.contextmanager
def _team(threads: int) -> Iterator[None]:
    """OpenMP teams of `threads` threads inside, and no program compiled before or inside
    kept (each is built again, for its own test)."""
    try:
        gomp = ctypes.CDLL("libgomp.so.1")
    except OSError:
        pytest.skip("no libgomp to set the team size with")
    before = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(threads)
    run._programs.clear()
    try:
        yield
    finally:
        gomp.omp_set_num_threads(before)
        run._programs.clear()


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_launcher_runs_every_iteration_once(threads):
    """A kernel counting the iterations it is given, on teams of 1 to 5 threads, for loops of
    1 to 12 iterations: each iteration is run by exactly one thread."""
    lib = build.build_library([build.RenderedKernel("rg_count", _COUNT, 1, (dtypes.int32,))])
    with _team(threads):
        for n in range(1, 13):
            hits = np.zeros(n + 1, np.int32)
            lib.function("rg_count", 1, launch=n)(hits.ctypes.data)
            np.testing.assert_array_equal(hits, [1] * n + [0])


def _launched_kernel(t: Tensor):
    (item,) = t.schedule()
    low = run.lower_only(item.ast)
    return render_kernel(run.optimize_kernel(low), "k0_test")


@pytest.mark.parametrize("shape", [(1 << 22,), (3 << 20,), (1 << 20) + 8, (2048, 2048)])
def test_threaded_elementwise_kernels_are_launched_and_exact(shape):
    """relu(a*b+c) over sizes threaded by blocks of 4,096 (a power of two divides the size)
    or as one loop, and over rows: the kernel is launched, and each element is numpy's."""
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    a.flat[7], b.flat[-1] = np.nan, np.inf
    t = (Tensor(a) * Tensor(b) + Tensor(c)).relu()
    rk = _launched_kernel(t)
    assert rk.launch > 0 and not rk.openmp, rk.source
    x = a * b + c
    np.testing.assert_array_equal(t.numpy(), np.where(x < 0, 0, x))  # torch's: NaN, -0.0 kept


_REDUCTIONS = {
    # a row max: vectors over the rows, a NaN-propagating max; rows threaded
    "row max 3": (lambda x: x.max(axis=1), (3, 1030)),
    "row max 7": (lambda x: x.max(axis=1), (7, 1030)),
    "row max 4096": (lambda x: x.max(axis=1), (4096, 130)),
    # a column sum: columns threaded in 7 blocks of 143, or 2 blocks of 500
    "column sum 1001": (lambda x: x.sum(axis=0), (1030, 1001)),
    "column sum 1000": (lambda x: x.sum(axis=0), (1030, 1000)),
}


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("case", sorted(_REDUCTIONS))
def test_launched_reductions_split_unevenly_are_exact(threads, case, monkeypatch):
    """Reductions launched on teams their loops' counts do not divide: each output is
    computed once, as numpy's (a NaN included)."""

    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 64)
    with _team(threads):
        op, shape = _REDUCTIONS[case]
        x = np.random.default_rng(len(case)).standard_normal(shape).astype(np.float32)
        x[shape[0] // 2, 3] = np.nan
        t = op(Tensor(x))
        assert _launched_kernel(t).launch > 0
        np.testing.assert_allclose(t.numpy(), op(x), rtol=2e-5, atol=1e-4)


def test_a_kernel_with_values_before_its_loop_is_launched_and_exact():
    """A layer norm whose epsilon is read from a buffer: that read is computed before the
    threaded loop over rows, by each thread for itself; each row is numpy's (in float64)."""
    x = np.random.default_rng(8).standard_normal((1024, 1024)).astype(np.float32)
    eps = np.array([1e-5], np.float32)
    t, e = Tensor(x), Tensor(eps)
    d = t - t.mean(axis=1, keepdim=True)
    out = d / ((d * d).mean(axis=1, keepdim=True) + e).sqrt()
    rk = _launched_kernel(out)
    body = rk.source[rk.source.index("\nvoid "):]  # (the vector prelude has loops of its own)
    before = body[:body.index("for (")]
    assert rk.launch == 1024 and "= p2[" in before, rk.source
    x64 = x.astype(np.float64)
    d64 = x64 - x64.mean(axis=1, keepdims=True)
    want = d64 / np.sqrt((d64 * d64).mean(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 3])
def test_attention_threaded_over_its_heads_is_launched_and_exact(threads):
    """Flash tiles threaded over the heads (`omp parallel for schedule(dynamic)`) are launched
    like any one threaded loop: each head is computed once, on teams that do not divide the
    heads, with numpy's values."""
    rng = np.random.default_rng(threads)
    q, k, v = (rng.standard_normal((5, 128, 32), np.float32) for _ in range(3))
    t = (Tensor(q) @ Tensor(k).transpose(1, 2) / 8).softmax(-1) @ Tensor(v)
    rk = _launched_kernel(t)
    assert rk.launch == 5 and "omp parallel" not in rk.source, rk.choices
    with _team(threads):
        got = t.numpy()
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / 8
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True) @ v, rtol=1e-5, atol=1e-5)


_SHARED = {  # (the product on tensors, on numpy's float64 arrays, the shapes, the dtype)
    # 100 rows: the last of 17 tiles computes 2 rows past the end; 150 columns: 10 panels
    "matmul float32": (lambda a, b: a @ b, lambda a, b: a @ b, [(100, 300), (300, 150)],
                       np.float32),
    # x packed per tile (the bias and relu computed into it), float64
    "bias and relu into x, float64": (lambda x, w, b: (x + b).relu() @ w,
                                      lambda x, w, b: np.maximum(x + b, 0) @ w,
                                      [(130, 400), (400, 70), (400,)], np.float64),
    # images and pixels (4*17*23) as the rows, in 261 tiles claimed 8 at a time, the last one
    # among them; 32 output channels: 2 panels
    "convolution": (lambda x, w: x.conv2d(w), _conv_np, [(4, 8, 19, 25), (32, 8, 3, 3)],
                    np.float32),
    # 16 output channels: one panel, which each thread packs for itself (2.2M multiply-adds:
    # two threads' shares each pay for the region, pack_helpers' `region_threads`)
    "convolution, one panel": (lambda x, w: x.conv2d(w), _conv_np,
                               [(4, 8, 23, 25), (16, 8, 3, 3)], np.float32),
}


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("case", sorted(_SHARED))
def test_products_of_shared_panels_are_launched_and_match_numpy(case, threads):
    """A kernel that is one threaded product is launched: its panels, claim counters and
    ready marks are in the launcher's scratch (one panel: each thread packs its own), its
    threads claim panels then row tiles (one or 8 at a time), and every output is numpy's
    (float64, within the fused multiply-add's contract), on teams of 1 to 3 threads."""
    op, ref, shapes, dt = _SHARED[case]
    rng = np.random.default_rng(len(case) + threads)
    arrays = [rng.standard_normal(s).astype(dt) for s in shapes]
    t = op(*(Tensor(a) for a in arrays))
    want = ref(*(a.astype(np.float64) for a in arrays))
    rk = _launched_kernel(t)
    assert rk.launch > 0 and rk.shared[0] > 0 and not rk.openmp, rk.choices
    with _team(threads):
        got = t.numpy()
    tol = 1e-12 if dt is np.float64 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_launched_kernels_build_without_openmp(tmp_path, monkeypatch):
    """The library of a launched kernel is compiled with -fopenmp-simd, not -fopenmp, and
    holds no OpenMP region of its own."""
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    build.clear_memory_cache()
    run._programs.clear()
    # built once per process, maybe here: not the program's build
    launch.launcher(build.build_library)
    commands: list[list[str]] = []
    real = build.compile_command
    monkeypatch.setattr(build, "compile_command",
                        lambda cc, fl, src, out: commands.append(fl) or real(cc, fl, src, out))
    x = np.random.default_rng(1).standard_normal(1 << 21).astype(np.float32)
    np.testing.assert_array_equal((Tensor(x) * 2 + 1).numpy(), x * 2 + 1)
    assert commands and "-fopenmp-simd" in commands[-1] and "-fopenmp" not in commands[-1]
    (program,) = run._programs.values()
    assert "omp parallel" not in program.source and "lo_" in program.source


def test_without_openmp_a_launched_kernel_runs_every_iteration(tmp_path, monkeypatch):
    """A user's RULEGRAD_CFLAGS without -fopenmp: the launcher is built without OpenMP and
    calls the kernel once over all its iterations: every element is numpy's, a full max (a
    launched reduce, then its finishing function) is numpy's, and so is a matmul (a launched
    product, its one call claiming all the work)."""
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path))
    monkeypatch.setenv("RULEGRAD_CFLAGS", "-O2")
    monkeypatch.setattr(launch, "_loaded", None)
    build.clear_memory_cache()
    run._programs.clear()
    try:
        x = np.random.default_rng(3).standard_normal(3 << 20).astype(np.float32)
        t = Tensor(x) * 3 + 1
        assert _launched_kernel(t).launch > 0
        np.testing.assert_array_equal(t.numpy(), x * np.float32(3) + np.float32(1))
        x[-5] = 1e30  # in the last of the 256 rows
        m = Tensor(x).max()
        assert _launched_kernel(m).combine == 4
        assert m.numpy() == np.float32(1e30)
        # a product of shared panels: the one call claims every panel, then every row tile
        a, b = (np.random.default_rng(4).standard_normal(s).astype(np.float32)
                for s in ((100, 300), (300, 150)))
        p = Tensor(a) @ Tensor(b)
        assert _launched_kernel(p).shared[0] > 0
        np.testing.assert_allclose(p.numpy(), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
    finally:
        monkeypatch.setattr(launch, "_loaded", None)
        run._programs.clear()


_FULL = {
    # the scheduler splits each into 256 rows: a value per row, combined in order
    "float32 sum": (lambda x: x.sum(), np.float32),
    "float32 mean": (lambda x: x.mean(), np.float32),
    "float32 max, a NaN": (lambda x: x.max(), np.float32),
    "float64 min": (lambda x: x.min(), np.float64),
    "int32 sum": (lambda x: x.sum(), np.int32),
}


@pytest.mark.parametrize("case", sorted(_FULL))
def test_full_reductions_are_launched_and_give_the_same_bits_on_1_2_and_3_threads(case):
    """A full reduction of 4M values is launched with a finishing function (no OpenMP region
    of its own). Each of the 256 rows leaves its value in a slot, combined in order after the
    threads, so teams of 1, 2 and 3 threads give the same bits (OpenMP's reduction combined one
    partial per thread). Max, min and the int sum are numpy's exactly; the float sum and mean
    are within the reduction contract's bound of the exact value."""
    op, dt = _FULL[case]
    rng = np.random.default_rng(len(case))
    x = (rng.integers(-2**31, 2**31, 1 << 22) if dt is np.int32
         else rng.standard_normal(1 << 22)).astype(dt)
    if "NaN" in case:
        x[12345] = np.nan
    t = op(Tensor(x))
    rk = _launched_kernel(t)
    assert rk.launch == 256 and rk.combine == rk.param_dtypes[0].itemsize and not rk.openmp
    assert f"{rk.cname}_fin" in rk.source, rk.source
    got = []
    for threads in (1, 2, 3):
        with _team(threads):
            got.append(op(Tensor(x)).numpy())
    assert got[0].tobytes() == got[1].tobytes() == got[2].tobytes(), got
    if "sum" in case and dt is np.int32:
        assert got[0] == x.sum(dtype=np.int64)
    elif "sum" in case or "mean" in case:
        # a sum of n values in any order: within (n - 1) * eps / 2 * sum |x| of the exact one
        n = x.size if "mean" in case else 1
        exact = x.astype(np.float64).sum() / n
        bound = (x.size - 1) * np.finfo(dt).eps / 2 * np.abs(x.astype(np.float64)).sum()
        assert abs(float(got[0]) - exact) <= bound / n + abs(exact) * np.finfo(dt).eps
    else:
        np.testing.assert_array_equal(got[0], op(x))
