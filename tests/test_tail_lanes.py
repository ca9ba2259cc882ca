"""An `omp simd` loop of a count that is not whole vectors ends in one vector overlapping the
ones before (render.py's `_overlap_tails`), a vector of ITS values: vector_bytes // itemsize
lanes (4 doubles, 16 halves, 32 int8s in 32 bytes), not float32's 8 whatever the dtype. Checked
on the printed loop bounds and, over the same rows, on values against numpy."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime.target import vector_bytes

# short of a vector, primes, one over a power of two, a row of 77, a long odd row (a row of 5
# is printed unrolled, no loop)
COUNTS = [3, 13, 17, 33, 77, 1001]


def _simd_loops(t: Tensor) -> list[tuple[int, int]]:
    """(start, end) of every `omp simd` loop (no clause) of t's kernels, as printed."""
    out = []
    for item in t.schedule():
        src = render_kernel(optimize_kernel(lower_only(item.ast)), "k").source
        out += [(int(a), int(b)) for a, b in re.findall(
            r"#pragma omp simd\n\s*for \(int64_t \w+ = (\d+); \w+ < (\d+);", src)]
    return out


def _vector_tails(t: Tensor) -> list[tuple[int, int, int]]:
    """(end, step, last start) of every explicit-vector loop of t's kernels (`r_v += 8`, its
    index clamped so that the last vector overlaps the ones before), as printed."""
    out = []
    for item in t.schedule():
        src = render_kernel(optimize_kernel(lower_only(item.ast)), "k").source
        out += [(int(e), int(s), int(c)) for e, s, c, _ in re.findall(
            r"for \(int64_t (?:\w+) = 0; \w+ < (\d+); \w+ \+= (\d+)\) \{\n"
            r"\s*const int64_t \w+ = \w+ < (\d+) \? \w+ : (\d+);", src)]
    return out


def _width(dtype: str, n: int) -> int:
    """The tail's lanes: a vector of `dtype`, halved until it fits in n."""
    w = vector_bytes() // np.dtype(dtype).itemsize
    while w > n:
        w //= 2
    return w


# (float16 elementwise kernels run explicit float32 lanes, not `omp simd`: test_half_vectors)
@pytest.mark.parametrize("n", COUNTS)
@pytest.mark.parametrize("dtype", ["float64", "int32", "int16", "int8"])
def test_an_elementwise_row_ends_in_a_vector_of_its_own_lanes(dtype, n):
    """x * 3 + 1 over n values: whole vectors of the dtype's lanes, then the last vector
    overlapping them (none when n is whole vectors or shorter than 4 lanes)."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 20).astype(dtype)
    out = Tensor(x) * 3 + 1
    w = _width(dtype, n)
    loops = _simd_loops(out)
    if w >= 4 and n % w:
        assert loops == [(0, n - n % w), (n - w, n)], (loops, w)
    else:
        assert all(a == 0 for a, _ in loops), loops
    want = x * x.dtype.type(3) + x.dtype.type(1)  # (numpy's, in the dtype: ints wrap)
    got = out.numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", COUNTS)
@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_softmax_rows_end_in_a_vector_of_their_own_lanes(dtype, n):
    """softmax over rows of n: every `omp simd` loop (float64) runs whole vectors of the
    dtype's lanes, every explicit float32-vector loop (float16's) whole vectors of 8, the last
    one overlapping the ones before; values against numpy in float64."""
    x = (np.random.default_rng(n).standard_normal((3, n)) * 3).astype(dtype)
    out = Tensor(x).softmax(-1)
    if dtype == "float16":  # (its row of exps and its output: explicit float32 vectors, f16_60)
        tails = _vector_tails(out)
        if n >= 8 and n % 8:
            assert tails and all(t == (n, 8, n - 8) for t in tails), tails
    else:
        w = _width(dtype, n)
        loops = _simd_loops(out)
        if w >= 4 and n % w:
            assert (n - w, n) in loops, (loops, w)
            assert all((b - a) % w == 0 for a, b in loops), (loops, w)
    a = x.astype(np.float64)
    e = np.exp(a - a.max(-1, keepdims=True))
    rtol, atol = (2e-2, 2e-3) if dtype == "float16" else (1e-12, 1e-14)
    np.testing.assert_allclose(out.numpy().astype(np.float64), e / e.sum(-1, keepdims=True),
                               rtol=rtol, atol=atol)
