"""A float32 vector sum's last values (fewer than a vector) whose value calls an exp (a
logsumexp's exp(x - max) over rows of 13, 20 or 1031) are one vector of the value ending at the
row's end, its last lanes added to the scalar accumulator one at a time (render.py's
`_vector_tail`): no scalar exp call a value, and the same sum, bit for bit, as the order the
vector reduce defines (rebuilt here in numpy from the elementwise exps, whose core is the
reduce's: vexp.py). Counted in the C, never timed."""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.c.render import render_kernel
from rulegrad.rules.opt_helpers import reduce_vectors
from rulegrad.runtime.ops import Ops

LANES = 8  # a vector reduce's partial results are 8 float32 lanes on every target


def _rows(rows: int, cols: int, scale: float = 4.0) -> np.ndarray:
    return (np.random.default_rng(rows * 7919 + cols).standard_normal((rows, cols))
            * scale).astype(np.float32)


def _kernel_c(t: Tensor) -> str:
    (kernel,) = optimized_kernels(t)
    return render_kernel(kernel[0], "k").source


@pytest.mark.parametrize("cols", [9, 13, 20, 31, 33, 1031])
def test_a_logsumexps_last_values_take_one_vector_exp(cols: int):
    """The tail of cols % 8 values is one vector ending at the row's end (its lanes from
    8 - cols % 8 on added one at a time), and the kernel calls no scalar exp; a row that is
    whole vectors has no tail at all."""
    source = _kernel_c(Tensor(_rows(5, cols)).logsumexp(-1))
    body = source[source.index("void k("):]
    assert re.search(r"\bexpf\(", body) is None, body
    tail = re.findall(r"for \(int u_ = (\d+); u_ < 8; u_\+\+\) (acc\d+) = \(\2 \+ t\d+\[u_\]\);",
                      body)
    assert [int(first) for first, _ in tail] == [LANES - cols % LANES], body


def test_a_sum_of_plain_values_keeps_its_scalar_tail():
    """A sum whose value calls no exp, log or sin (a layernorm's squares over rows of 1031)
    adds its last 7 values one at a time as before: a vector there would save no call."""
    source = _kernel_c(Tensor(_rows(5, 1031)).layernorm())
    assert re.search(r"u_ < 8; u_\+\+\) (acc\d+) = \(\1 \+ t\d+\[u_\]\)", source) is None
    assert re.search(r"for \(int64_t r\d+_u = 0; r\d+_u < 7; r\d+_u\+\+\)", source), source


def _in_order(e: np.ndarray) -> np.float32:
    """The vector reduce's sum of row e (float32), step for step: blocks of `nvec` vectors of 8
    partial results, the whole vectors left (the u-th into partial u), the last values into
    the scalar accumulator in order, then the partials added into partial 0 and its lanes into
    the accumulator (render.py's `_vector_reduce`)."""
    n = len(e)
    nvec = reduce_vectors(Ops.ADD, n, LANES)
    parts = np.zeros((nvec, LANES), np.float32)
    block = nvec * LANES
    main, whole = n - n % block, n - n % LANES
    for b in range(0, main, block):
        for u in range(nvec):
            parts[u] = parts[u] + e[b + u * LANES:b + (u + 1) * LANES]
    for u, k in enumerate(range(main, whole, LANES)):
        parts[u] = parts[u] + e[k:k + LANES]
    acc = np.float32(0)
    for k in range(whole, n):
        acc = np.float32(acc + e[k])
    for u in range(1, nvec):
        parts[0] = parts[0] + parts[u]
    for lane in range(LANES):
        acc = np.float32(acc + parts[0][lane])
    return acc


@pytest.mark.parametrize("cols", [20, 31, 33, 47, 100, 1031])
def test_a_sum_of_exps_is_the_vector_reduces_order_bit_for_bit(cols: int):
    """x.exp().sum(-1) over rows a vector reduce takes (a short one is unrolled) against its
    own order rebuilt from the elementwise exps (the same core, vexp.py): equal bits, the
    tail's lanes included."""
    x = _rows(6, cols, 2.0)
    t = Tensor(x).exp().sum(-1)
    (kernel,) = optimized_kernels(t)
    assert any(a.startswith("VECTOR ADD") for a in kernel[1]), kernel[1]
    got = t.numpy()
    exps = Tensor(x).exp().numpy()
    want = np.array([_in_order(row) for row in exps], np.float32)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


@pytest.mark.parametrize("shape", [(100003, 13), (4096, 20), (97, 1031), (7, 9), (3, 8),
                                   (5, 4099), (13, 100003), (1, 4096)])
def test_logsumexp_is_numpys(shape: tuple):
    """Against numpy's in float64, with +inf, NaN and -inf rows."""
    x = _rows(*shape)
    if shape[0] > 2:
        x[1, shape[1] // 2] = np.inf
        x[2, 0], x[2, -1] = -np.inf, np.nan
    with np.errstate(all="ignore"):
        got = Tensor(x).logsumexp(-1).numpy()
        xd = x.astype(np.float64)
        m = xd.max(-1, keepdims=True)
        m = np.where(np.isinf(m), 0, m)
        want = np.log(np.exp(xd - m).sum(-1)) + m[:, 0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)


def _special_rows(cols: int) -> np.ndarray:
    """Rows of every width's edge values: -0.0, +-inf, exps that overflow (89) or round into
    the subnormals (-90, -103) or to zero (-104, -120), each also at the row's last places, where
    the tail's vector of exps reads them."""
    x = _rows(7, cols, 3.0)
    edges = np.array([-0.0, np.inf, -np.inf, 89.0, -90.0, -103.0, -104.0, -120.0, 0.0, 88.7],
                     np.float32)
    x[1] = np.resize(edges, cols)
    x[2] = np.resize(edges[::-1], cols)
    x[3, -1], x[4, -1], x[5, -cols // 2:] = np.inf, -np.inf, -0.0
    x[6] = -np.inf
    return x


@pytest.mark.parametrize("cols", list(range(1, 41)))
def test_a_sum_of_exps_at_every_width_is_its_order_with_edge_values(cols: int):
    """x.exp().sum(-1) at every width 1..40 over rows of -0.0, infinities, overflowing and
    subnormal exps: where a vector reduce takes the row (a short one is unrolled), the vector
    reduce's order rebuilt in numpy from the elementwise exps, bit for bit; at every width,
    numpy's float64 sums within float32 rounding."""
    x = _special_rows(cols)
    t = Tensor(x).exp().sum(-1)
    (kernel,) = optimized_kernels(t)
    got = t.numpy()
    if any(a.startswith("VECTOR ADD") for a in kernel[1]):
        exps = Tensor(x).exp().numpy()
        want = np.array([_in_order(row) for row in exps], np.float32)
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    else:
        assert cols < 20, kernel[1]  # rows of 20 and more are vector reduces (test above)
    with np.errstate(all="ignore"):
        ref = np.exp(x.astype(np.float64)).sum(-1)
    np.testing.assert_allclose(got, ref.astype(np.float32), rtol=2e-6, atol=1e-44)


@pytest.mark.parametrize("cols", [20, 29, 37, 40])
def test_a_float16_sum_of_exps_is_its_order(cols: int):
    """A float16 sum of exps accumulates in a float32 (float16 temporaries are C floats), so it
    takes the vector tail too: each exp rounded to a half, then the float32 vector reduce's
    order, rounded to a half once, bit for bit. (A sum whose value calls log, sin, exp2 or a
    float64 exp is no vector reduce at all, so it never reaches the tail.)"""
    x = _special_rows(cols)
    t = Tensor(x).cast("float16").exp().sum(-1)
    got = t.numpy()
    exps = Tensor(x).cast("float16").exp().numpy().astype(np.float32)
    want = np.array([_in_order(row) for row in exps], np.float32).astype(np.float16)
    np.testing.assert_array_equal(got.view(np.int16), want.view(np.int16))
