"""Review of slab64 (narrow products' columns unrolled into registers, interchange_helpers'
`_narrow`): where the unrolled form is slower than the `upcast` column loop it replaced.

Measured (the kernels' C from main and from slab64 compiled with the backend's flags, gcc 12,
one thread, best of 40 interleaved calls): a float sum over 3, 4, 6 or 7 columns ran
0.46-0.85x main's speed unrolled (gcc kept the `omp simd` loop's accumulators in vector
registers and packed the unrolled scalars lane by lane, or left them scalar), a linear with a
bias and relu + residual or gelu 0.56-0.75x; with 4 rows per pass (a product of one row) even 5
columns 0.81x; float64's 3 columns 0.84x. Only a float32 row of 5 (gcc's `omp simd` over it kept
its accumulators in memory) and integer sums (any width: 1.0-15x) ran faster. Checked here: the
action's record (DEBUG=2's line), and the values against numpy in float64; never timed."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions

from rulegrad import Tensor


def _acts(t: Tensor) -> str:
    return " | ".join(a for kernel in kernel_actions(t) for a in kernel)


def _mm(m: int, k: int, n: int, dtype, epilogue: str = "") -> tuple[Tensor, np.ndarray]:
    rng = np.random.default_rng(m * 31 + k + n)
    if np.dtype(dtype).kind == "f":
        x, w = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    else:
        x, w = rng.integers(-3, 4, (m, k)).astype(dtype), rng.integers(-3, 4, (k, n)).astype(dtype)
    b, r = rng.standard_normal(n).astype(np.float32), rng.standard_normal((m, n)).astype(np.float32)
    want = x.astype(np.float64) @ w.astype(np.float64)
    t = Tensor(x) @ Tensor(w)
    if epilogue == "relu_res":
        t, want = (t + Tensor(b)).relu() + Tensor(r), np.maximum(want + b, 0) + r
    return t, want


@pytest.fixture()
def machine(fake_machine):
    return lambda nthreads: fake_machine(nthreads, 1 << 20)


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("m, k, n, dtype, epilogue", [
    (2, 50000, 4, np.float32, ""),  # 0.68x unrolled
    (2, 50000, 3, np.float32, ""),  # 0.85x
    (2, 30000, 7, np.float32, "relu_res"),  # 0.58x
    (2, 30000, 6, np.float32, "relu_res"),  # 0.57x
    (2, 30000, 3, np.float64, ""),  # 0.84x
    (1, 4096, 5, np.float32, ""),  # 4 rows per pass: 0.81x
    (1, 4096, 7, np.float32, ""),  # 0.46x
])
def test_float_columns_gcc_keeps_in_vectors_stay_upcast(machine, nthreads: int, m: int, k: int,
                                                        n: int, dtype, epilogue: str) -> None:
    machine(nthreads)
    t, want = _mm(m, k, n, dtype, epilogue)
    acts = _acts(t)
    assert "INTERCHANGE" in acts and "unrolled into registers" not in acts, acts
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-3 * np.sqrt(k))


@pytest.mark.parametrize("m, k, n, dtype, epilogue", [
    (2, 100003, 5, np.float32, ""),  # 3.4x: gcc's omp simd over 5 kept them in memory
    (3, 30000, 5, np.float32, "relu_res"),  # 2.3x
    (2, 30000, 3, np.int32, ""),  # an integer sum: 9.6x
    (2, 30000, 4, np.int32, ""),  # 5.0x
    (5, 4099, 7, np.int32, ""),  # 2.1x
    (1, 4096, 3, np.int32, ""),  # with rows per pass: 1.6x
])
def test_narrow_where_it_is_faster(machine, m: int, k: int, n: int, dtype, epilogue: str) -> None:
    machine(2)
    t, want = _mm(m, k, n, dtype, epilogue)
    acts = _acts(t)
    assert f"its {n} columns unrolled into registers" in acts, acts
    got = t.numpy()
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(got, want.astype(dtype))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(k))


@pytest.mark.parametrize("n, dtype", [(5, np.float32), (3, np.int32), (7, np.int32)])
def test_a_narrow_rows_computed_operand_is_still_staged(machine, n: int, dtype) -> None:
    """stage_helpers' `_plain` takes a STORE whose one "unroll" range is a narrow row's columns
    (a register tile unrolls two): its computed row operand (x * 3 + 1) is filled once per row
    into a kernel-local array, as under "upcast" (slab64's stated design, pinned so a change to
    it is seen). Seen failing with `_plain` refusing any "unroll" column (main's). Not a speed
    claim: the interchanged nest computes x once per step of k outside the column loop either
    way, and staged the int32 8x4000x3 and 8x4000x5 kernels ran 0.79x and 0.95x unstaged."""
    from optimizer_actions import optimized_kernels

    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import toposort
    machine(1)
    rng = np.random.default_rng(n)
    if dtype == np.int32:
        x, w = rng.integers(-9, 10, (2, 1009)).astype(dtype), rng.integers(-9, 10, (1009, n))
        w = w.astype(dtype)
    else:  # (a float x @ w this small is not packed: fewer than 32K multiply-adds)
        x, w = rng.standard_normal((2, 1009)).astype(dtype), rng.standard_normal((1009, n))
        w = w.astype(dtype)
    make = lambda: (Tensor(x) * 3 + 1) @ Tensor(w)  # noqa: E731
    [(opt, acts)] = optimized_kernels(make())
    assert f"its {n} columns unrolled into registers" in " ".join(acts), acts
    assert any(u.op is Ops.DEFINE_LOCAL for u in toposort(opt)), acts
    want = (x.astype(np.float64) * 3 + 1) @ w.astype(np.float64)
    np.testing.assert_allclose(make().numpy(), want, rtol=1e-5, atol=1e-3)
