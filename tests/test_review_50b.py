"""rev50b's review of round 50's kernel-side changes: what it found and fixed.

- Whether a kernel has a gated read (flags.py compiles it with jump threading) is a fact its
  printer records while it prints one (issue 32), not a regex over the C: the regex also took
  a select of a register array (`any ? exact(x) : a0[0]`, the block library's row max) for one.
- soft50 left `_exp_floor` (runtime/tensor_ops.py) justified by libmvec's slow path below
  -87.33, which float32 no longer takes (its exp is backends/c/vexp.py's). The floor stays: in
  float64 for libmvec's exp, and in every dtype it keeps gelu's gradient at +-inf its limit
  (0, 1): without it exp's 0 times its argument's infinite derivative gave NaN.
- A float16 sum split in two kernels (narrow_reduce's shares of vector-lane partials,
  split_reduceop's partials) kept its partials in float16: rounded twice, up to 10.6 ulps off
  the exact sum (300000 x 16 down the rows), where every float16 reduce adds in float32 and
  rounds once (lower.rules' half_sum; docs/testing.md). The partials are float32 now.
- `rulegrad fuzz --opt` failed seeds 50539, 50545, 50555 on right answers: its in-place
  `a.assign(a.T + 1)` part's tolerance read a0 untransposed, NaN where a0 had its drawn NaN
  but the output (a0's transpose) was finite.
- mask50's explicit vectors took a float32 -> int32 CAST (`__builtin_convertvector`): INT_MIN
  for NaN, +-inf and values out of int32's range, where the IR's cast is defined (NaN 0,
  wrapped through int64, saturated past it: runtime/semantics.py). A max over rows of 16 of
  `x.cast(int32).cast(float32)` gave 7 for 2147483647. Such a cast is left to scalar code.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import blocks
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime.dtype import dtypes
from rulegrad.tools.fuzz import CLASS_GENERATORS, run_case


def _rendered(t: Tensor) -> list:
    return [render_kernel(optimize_kernel(lower_only(it.ast)), "k") for it in t.schedule()]


def test_gated_is_what_the_printer_printed():
    a = np.arange(40, dtype=np.float32).reshape(8, 5)
    padded = _rendered(Tensor(a).pad(((1, 0), (0, 0)))[:8] + Tensor(a))
    assert [k.gated for k in padded] == [True]
    assert "?" in padded[0].source
    assert [k.gated for k in _rendered(Tensor(a) * 2 + 1)] == [False]
    # the block library: a streamed block reads its offsets under a condition; the row max
    # selects an accumulator's lane (`: a0[0]`), which reads no memory under a gate
    by_name = {k.cname: k.gated for k in blocks.kernels(dtypes.float32, 8) + blocks.reductions()}
    assert by_name["rg_reduce_max_f32"] is False and by_name["rg_reduce_min_f32"] is False
    assert all(g for n, g in by_name.items() if n.endswith("_stream"))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_gelu_and_tanh_gradients_at_infinity_are_the_limits(dtype, approximate):
    # the limits of d/dx x*Phi(x) and of tanh'(x) at large x; at +-inf gelu's is NaN, torch's
    # (misc59: its derivative meets inf * 0 there; tests/test_torch_grad_59.py)
    x = Tensor(np.array([-np.inf, np.inf, -1e4, 1e4], dtype), requires_grad=True)
    x.gelu(approximate=approximate).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.array([np.nan, np.nan, 0, 1], dtype))
    x = Tensor(np.array([-np.inf, np.inf, -1e4, 1e4], dtype), requires_grad=True)
    x.tanh().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(4, dtype))


def _ulps16(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of exact rounded to float16."""
    return np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(exact.astype(np.float16)))


# narrow_reduce's columns (2..16 outputs down the rows, prime and not) and split_reduceop's
# long rows and whole sums: within one rounding of float32's sum (0.5 ulp and float32's error)
@pytest.mark.parametrize("shape,axis", [((300000, 16), 0), ((428571, 7), 0), ((100003, 2), 0),
                                        ((1048579, 3), 0), ((4194304,), 0), ((7, 428571), 1),
                                        ((2, 262147, 3), 1), ((64, 65536), None)])
def test_a_split_float16_sum_rounds_once(shape, axis):
    a = np.random.default_rng(5).standard_normal(shape).astype(np.float16)
    exact = a.astype(np.float64).sum(axis)
    got = Tensor(a).sum(axis).numpy()
    assert got.dtype == np.float16
    assert _ulps16(got, exact).max() <= 0.75
    assert _ulps16((Tensor(a).sum(axis) * 2).numpy(), 2 * exact).max() <= 0.75


def test_the_fuzzers_in_place_transpose_tolerance_follows_the_transpose():
    case = CLASS_GENERATORS["opt"](50539)  # a square a.assign(a.T + 1), a NaN drawn in a0
    assert "want_a18 = want_a18.T + 1" in case.source and "np.nan" in case.source
    out = run_case(case)
    assert out.status == "ok", out.message


def _to_int32(x: np.ndarray) -> np.ndarray:
    """The IR's float -> int32 cast, by numpy: NaN 0, truncated, wrapped through int64, and
    saturated to int32's bounds beyond int64's range."""
    t = np.trunc(np.where(np.isnan(x), 0, x).astype(np.float64))
    big = np.abs(t) >= 2.0 ** 63
    wrapped = np.where(big, 0, t).astype(np.int64).astype(np.int32)
    return np.where(big, np.where(t > 0, 2 ** 31 - 1, -2 ** 31), wrapped).astype(np.int32)


@pytest.mark.parametrize("cols", [8, 16, 17, 100])
def test_a_float_to_int_cast_in_a_vector_loop_is_the_irs(cols):
    special = np.array([np.nan, 3e9, -3e9, 1e20, -1e20, np.inf, -np.inf, 2.5, -2.5, 2147483647.0,
                        -2147483649.0, 7.9, -0.0, 1e10, 5, -7], np.float32)
    x = np.resize(special, (3, cols)).astype(np.float32)
    x[1] = np.roll(x[1], 5)
    ints = _to_int32(x)
    np.testing.assert_array_equal(Tensor(x).cast("int32").numpy(), ints)
    np.testing.assert_array_equal(Tensor(x).cast("int32").cast("float32").max(-1).numpy(),
                                  ints.astype(np.float32).max(-1))
    np.testing.assert_array_equal((Tensor(x).cast("int32") > 0).where(Tensor(x), -np.inf)
                                  .max(-1).numpy(), np.where(ints > 0, x, -np.inf).max(-1))
