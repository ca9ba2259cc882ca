"""Memory-bound kernels: the work each does per element, counted from its AST, its C text and
the compiler's assembly (never timed), and its values against numpy at the shapes that take
each path (prime, ragged, one row, NaN, -0.0).
"""

from __future__ import annotations

import ctypes
import re
import subprocess

import numpy as np
import pytest
from optimizer_actions import schedule_actions as _actions
from special_values import assert_same_bits, sprinkled

from rulegrad import Tensor
from rulegrad.backends.c import build
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel


def _kernels(t: Tensor) -> list:
    """t's kernels as the C backend builds them: (optimized AST, rendered kernel) each."""
    out = []
    for i, item in enumerate(t.schedule()):
        opt = optimize_kernel(lower_only(item.ast))
        out.append((opt, render_kernel(opt, f"k{i}")))
    return out


def _assembly(rk) -> str:
    """The assembly gcc makes of one rendered kernel at its kind's flags, as a build would."""
    cc = build.compiler()
    if not build.is_gcc(cc):
        pytest.skip("the assembly counted here is gcc's")
    try:
        ctypes.CDLL("libmvec.so.1")
    except OSError:
        pytest.skip("no vector math library (libmvec) to call")
    flags = [f for f in build.cflags(rk.kind) if f != "-fopenmp"] + ["-fopenmp-simd"]
    src = build.full_source([rk])
    # (-DRG_MVEC: the prelude's switch for libmvec's declarations, as build.py sets it)
    run = subprocess.run([*cc, *flags, "-DRG_MVEC", "-fPIC", "-S", "-x", "c", "-",
                          "-o", "-"], input=src, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_a_sigmoid_calls_exp_once_per_element():
    """A sigmoid is `e = exp(c ? -x : x)` and then `c ? 1/(1+e) : e/(1+e)`: two selects on one
    condition with the exp between them. gcc's jump threading copied the exp into both paths
    and the vectorizer computed both: two vector exps per element (flags.py)."""
    x = np.random.default_rng(0).standard_normal(4099).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(4099).astype(np.float32)
    x[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 100.0]
    t = (Tensor(x) * Tensor(y) + 1.5).sigmoid() * Tensor(x)
    ((_, rk),) = _kernels(t)
    asm = _assembly(rk)
    # each vectorized loop calls the vector exp once (the scalar tails are not counted): the
    # whole vectors' loop and the last vector's, overlapping them (render.py's _overlap_tails)
    loops = rk.source.count("#pragma omp simd")
    assert loops and len(re.findall(r"\bcall\s+\S*_ZGV\w*expf", asm)) == loops
    with np.errstate(all="ignore"):
        z = x.astype(np.float64) * y + 1.5
        want = (1 / (1 + np.exp(-z)) * x).astype(np.float32)
    np.testing.assert_allclose(t.numpy(), want, rtol=2e-6, atol=1e-30, equal_nan=True)


def _special(shape: tuple[int, ...], dt=np.float32, seed: int = 0) -> np.ndarray:
    return sprinkled(shape, dt, seed, (-0.0, 0.0, 3.5, -7.0), share=50, least=1)


@pytest.mark.parametrize("shape", [(3, 5, 7, 11), (2, 4, 32, 32), (1, 3, 13, 1), (5, 2, 1, 97)])
def test_a_sum_over_several_axes_runs_along_the_contiguous_run(shape):
    """A batch norm's sum over (N, H, W) for each C: H and W are one contiguous run of each
    image, summed as one loop with vector accumulators (merge_reduce, then vector_reduce),
    within the reduction contract of numpy's sum."""
    x = _special(shape)
    t = Tensor(x).sum(axis=(0, 2, 3))
    acts = _actions(t)
    hw = shape[2] * shape[3]
    if shape[2] > 1 and shape[3] > 1:
        assert any(a.startswith("MERGE ADD") for a in acts), acts
    if hw >= 64:
        assert any(a.startswith("VECTOR ADD over r") and f"({hw} values" in a for a in acts), acts
    want = x.astype(np.float64).sum(axis=(0, 2, 3))
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5 * np.sqrt(x.size))


@pytest.mark.parametrize("op", ["max", "min"])
def test_a_max_over_several_axes_merged_keeps_every_bit(op):
    """MAX and MIN are exact in any order: merged and vectorized, NaN, -0.0 and +0.0 come out
    as numpy's (with -0.0 ordered below +0.0, runtime/semantics.py)."""
    from rulegrad.runtime import semantics
    from rulegrad.runtime.ops import Ops
    x = _special((3, 4, 9, 23))
    x[1, 2, 4, 7] = np.nan
    x[2, 3] = -0.0
    x[2, 3, 0, 0] = 0.0
    t = getattr(Tensor(x), op)(axis=(0, 2, 3))
    assert any(a.startswith("MERGE") for a in _actions(t))
    o = Ops.MAX if op == "max" else Ops.MIN
    want = np.squeeze(semantics.reduce(o, x, (0, 2, 3), -np.inf if op == "max" else np.inf),
                      axis=(0, 2, 3))
    got = t.numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.nan_to_num(got).view(np.uint32), np.nan_to_num(want).view(np.uint32))


@pytest.mark.parametrize("case", ["strided", "padded", "flipped", "int32", "float64"])
def test_loops_that_are_not_one_run_stay_apart_and_compute_what_numpy_does(case):
    """Two loops merge only where every read is one contiguous run of both: a slice (rows
    further apart than they are long), a padding's gate, a flip (a * W - b) stay two loops;
    other dtypes merge too (the same order, the same bits)."""
    x = _special((4, 6, 10, 12))
    if case == "strided":
        t, ref = Tensor(x)[:, :, :, :11], x[:, :, :, :11]
    elif case == "padded":
        t = Tensor(x).pad(((0, 0), (0, 0), (1, 0), (0, 2)))
        ref = np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 2)))
    elif case == "flipped":
        t, ref = Tensor(x).flip(3), x[:, :, :, ::-1]
    elif case == "int32":
        ref = (x * 100).astype(np.int32)
        t = Tensor(ref)
    else:
        ref = x.astype(np.float64)
        t = Tensor(ref)
    s = t.sum(axis=(0, 2, 3))
    merged = any(a.startswith("MERGE") for a in _actions(s))
    assert merged == (case in ("int32", "float64"))
    want = ref.astype(np.float64).sum(axis=(0, 2, 3))
    if case == "int32":
        assert np.array_equal(s.numpy(), ref.sum(axis=(0, 2, 3), dtype=np.int32))
    else:
        np.testing.assert_allclose(s.numpy(), want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape", [(2, 3, 32, 32), (3, 5, 7, 11), (1, 1, 1, 13), (4, 2, 13, 1)])
def test_a_per_channel_scale_runs_along_each_image_plane(shape):
    """A batch norm's output, (N, C, H, W) with a per-channel mean and scale: H and W are one
    contiguous run, one vectorized loop (merge_store), with the same bits as numpy's float32
    ops in the same order (relu as torch's: NaN and -0.0 kept, only values below 0 made 0)."""
    x = _special(shape, seed=3)
    x.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    g = np.random.default_rng(4).standard_normal(shape[1]).astype(np.float32)
    t = (Tensor(x) * Tensor(g).reshape(1, -1, 1, 1) + 0.5).relu()
    acts = _actions(t)
    if shape[2] > 1 and shape[3] > 1:
        assert any(a.startswith("MERGE loops") for a in acts), acts
        hw = shape[2] * shape[3]
        assert any(a.startswith("UPCAST") and f"({hw} iterations" in a for a in acts), acts
    v = x * g.reshape(1, -1, 1, 1) + np.float32(0.5)
    want = np.where(v < 0, np.float32(0), v)
    got = t.numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.nan_to_num(got).view(np.uint32), np.nan_to_num(want).view(np.uint32))


@pytest.mark.parametrize("case", ["transposed", "sliced", "padded", "broadcast_row"])
def test_output_loops_that_are_not_one_run_stay_apart(case):
    """A transposed read, a slice, a padding's gate and a row broadcast along one loop but not
    the other keep their loops; the values are numpy's either way."""
    x = _special((3, 4, 9, 10), seed=5)
    if case == "transposed":
        t, want = Tensor(x).permute(0, 1, 3, 2) * 2, x.transpose(0, 1, 3, 2) * 2
    elif case == "sliced":
        t, want = Tensor(x)[:, :, :, 1:] * 2, x[:, :, :, 1:] * 2
    elif case == "padded":
        t = Tensor(x).pad(((0, 0), (0, 0), (0, 0), (1, 1))) * 2
        want = np.pad(x, ((0, 0), (0, 0), (0, 0), (1, 1))) * 2
    else:
        row = x[0, 0, 0]
        t, want = Tensor(x) + Tensor(row), x + row
    names = [a for a in _actions(t) if a.startswith("MERGE loops")]
    # (the outer loops may join H's, which is one run with them: H and W must stay apart)
    assert all(len(a.split(" into ")[1].split()) >= 2 for a in names), names
    got = t.numpy()
    assert np.array_equal(np.nan_to_num(got).view(np.uint32), np.nan_to_num(want).view(np.uint32))


def _assert_within_contract(got: np.ndarray, x: np.ndarray, axes: tuple[int, ...]) -> None:
    """got is x's sum over `axes` within the reduction contract (runtime/semantics.py): the
    exact sum within (n - 1) * eps * sum |x| for the n values of each output (eps: the unit
    roundoff of x's dtype); NaN and infinities exactly where the exact sum has them."""
    exact = x.astype(np.longdouble).sum(axis=axes)  # (64-bit mantissa: exact enough here)
    n = x.size // max(exact.size, 1)
    eps = np.finfo(x.dtype).eps / 2
    with np.errstate(invalid="ignore"):
        bound = (n - 1) * eps * np.abs(x.astype(np.longdouble)).sum(axis=axes)
        finite = np.isfinite(exact)
        assert np.array_equal(np.isnan(got), np.isnan(exact))
        assert np.array_equal(got[~finite & ~np.isnan(exact)], exact[~finite & ~np.isnan(exact)])
        err = np.abs(got.astype(np.longdouble) - exact)
        assert np.all(err[finite] <= bound[finite] + np.finfo(x.dtype).tiny), \
            (err[finite] / np.maximum(bound[finite], 1e-300)).max()


def _interchanged(shape: tuple[int, ...], dt) -> bool:
    """Whether a per-channel reduce over (N, H, W) of `shape` should stream: split by
    split_reduceop (at least 32768 values per channel, N or H or W with a divisor in 8..256),
    each image a page or more apart, and more than one image and one channel."""
    n, c, h, w = shape
    split = n * h * w >= 32768 and any(any(s % d == 0 for d in range(8, 257)) for s in (n, h, w))
    return split and n > 1 and c > 1 and c * h * w * np.dtype(dt).itemsize >= 4096


@pytest.mark.parametrize("shape", [(64, 8, 32, 32), (17, 5, 47, 43), (8, 3, 64, 64),
                                   (1, 4, 181, 191), (9, 1, 1, 4099), (3, 5, 7, 11)])
@pytest.mark.parametrize("dt", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("op", ["sum", "max"])
def test_a_per_channel_reduce_over_images_a_page_apart_streams_through_memory(shape, dt, op):
    """A batch norm's sum over (N, H, W) large enough to split (rangeify's split_reduceop: a sum
    over N of sums along each image's H*W run): each n's runs lie a page or more after the last
    n's, so the channels run inside the loop over N (interchange_store), every step of it one
    stream through that image's channels, not one run per page. A sum within the reduction
    contract of the exact sum, a max numpy's bit for bit, NaN and infinities where numpy has
    them. Batch 1, a single channel and small images stay as they were."""
    x = sprinkled(shape, dt, 5, (np.nan, -0.0, 0.0, np.inf, -np.inf), share=20000, least=2)
    t = getattr(Tensor(x), op)(axis=(0, 2, 3))
    acts = _actions(t)
    assert any(a.startswith("INTERCHANGE") for a in acts) == _interchanged(shape, dt), acts
    got = t.numpy()
    assert got.dtype == dt
    if op == "max":
        assert_same_bits(got, np.max(x, axis=(0, 2, 3)))
    else:
        _assert_within_contract(got, x, (0, 2, 3))


@pytest.mark.parametrize("shape", [(17, 5, 47, 43), (64, 8, 32, 32), (9, 2, 1, 4099)])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_an_interchanged_sum_adds_each_images_run_in_the_order_of_n(shape, dt):
    """The interchange moves the channels between the loop over N and each image's H*W run and
    keeps each sum's order: a channel's sum is its runs' sums added one image after another
    from n = 0, as in the loops before it. Each run here holds one value and zeros (its sum
    is that value in any order), of magnitudes far apart, so the sum over N rounds differently
    in another order: numpy's float adds in that order, bit for bit."""
    n, c, h, w = shape
    rng = np.random.default_rng(11)
    runs = (rng.standard_normal((n, c)) * np.ldexp(1.0, rng.integers(-12, 12, (n, c)))).astype(dt)
    x = np.zeros(shape, dt)
    x[:, :, h // 2, w // 3] = runs
    t = Tensor(x).sum(axis=(0, 2, 3))
    assert any(a.startswith("INTERCHANGE") for a in _actions(t))
    want = np.zeros(c, dt)
    for i in range(n):
        want = want + runs[i]
    assert_same_bits(t.numpy(), want)
    # (the data sees the order: the same sums from n = N - 1 down round differently)
    backwards = np.zeros(c, dt)
    for i in reversed(range(n)):
        backwards = backwards + runs[i]
    assert not np.array_equal(want, backwards)


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("case", ["plain", "nan", "inf", "-inf", "zeros"])
@pytest.mark.parametrize("shape", [(17, 5, 47, 43), (1, 3, 61, 67), (9, 1, 1, 4099),
                                   (3, 5, 7, 11)])
def test_a_batch_norm_over_images_a_page_apart_is_numpys(dt, case, shape):
    """The whole batch norm (+ relu), whose mean and variance are such per-channel reduces:
    numpy's values per channel, a NaN or an infinity making its channel NaN, a channel of
    signed zeros giving zeros; batch 1, one channel and a small prime shape too."""
    x = np.random.default_rng(7).standard_normal(shape).astype(dt)
    at = tuple(s // 2 for s in shape)
    if case == "nan":
        x[at] = np.nan
    elif case in ("inf", "-inf"):
        x[at] = float(case)
    elif case == "zeros":
        x[:, -1] = -0.0
        x[::2, -1, ::3] = 0.0

    def bn(t, keep):
        mu = t.mean(axis=(0, 2, 3), **{keep: True})
        var = ((t - mu) * (t - mu)).mean(axis=(0, 2, 3), **{keep: True})
        return (t - mu) / (var + 1e-5) ** 0.5

    t = bn(Tensor(x), "keepdim").relu()
    streams = sum(a.startswith("INTERCHANGE") for a in _actions(t))
    assert streams == (2 if _interchanged(shape, dt) else 0)  # the mean's and the var's
    got = t.numpy()
    assert got.dtype == dt
    with np.errstate(invalid="ignore"):
        want = bn(x.astype(np.float64), "keepdims")
        want = np.where(want < 0, 0.0, want)
    tol = 2e-2 if dt == np.float16 else 1e-4
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol, equal_nan=True)
