"""The packing action's staged panels (rules/pack_helpers.py's `stage_panels`): a product whose
panels all run inside each row tile on one core (or per batch iteration) reads y from a
kernel-local array of them, pb[panel][k][jj] = y(k, panel * TJ + jj) and 0 past the last column,
filled by the renderer's local-array loops (on the heap past the stack budget). Against numpy in
float64, at prime, skinny, batched and float64/float16 shapes; the optimized AST in the kernel
interpreter too. The flash action stages its panels of K and V so as well."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels, schedule_actions

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.kernel_interp import run_kernel
from rulegrad.runtime.ops import Ops


def _staged(t: Tensor) -> bool:
    return any("STAGED" in a for a in schedule_actions(t))


def _close(got: np.ndarray, want: np.ndarray, rtol: float = 2e-5) -> None:
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, np.abs(want).max()))


# (x's shape, y's shape): x computed (relu), so packed per tile, and every panel run inside each
# tile on one core; columns a whole number of panels (float64's 8) or not, prime sizes (as the
# test session's machine, conftest.py, lays them out). y past an L2 of 8 KB: the few row tiles
# of a skinny x read a y that fits in place (pack_helpers' `read_in_place`), no panels staged
L2_PAST_Y = "8K"
SHAPES = [((97, 61), (61, 89)), ((20, 100), (100, 50)), ((11, 67), (67, 45)),
          ((64, 61), (61, 89))]


@pytest.mark.parametrize("xs,ys", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_computed_row_operand_with_staged_panels_matches_numpy(monkeypatch, xs, ys, dtype):
    monkeypatch.setenv("RULEGRAD_L2_BYTES", L2_PAST_Y)
    rng = np.random.default_rng(sum(xs) * 7 + sum(ys))
    a, b = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ys).astype(dtype)
    t = Tensor(a).relu() @ Tensor(b)
    assert _staged(t)
    _close(t.numpy(), np.maximum(a, 0).astype(np.float64) @ b, 2e-5 if dtype is np.float32
           else 1e-12)


def test_a_computed_y_is_staged_as_its_values():
    # y = w * 2 + 1: its panels hold the computed values (and 0, not 1, past the last column)
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((20, 100)).astype(np.float32), rng.standard_normal((100, 50))
    w = w.astype(np.float32)
    t = Tensor(a).relu() @ (Tensor(w) * 2 + 1)
    assert _staged(t)
    _close(t.numpy(), np.maximum(a, 0).astype(np.float64) @ (w.astype(np.float64) * 2 + 1))


def test_mixed_float16_rows_and_float32_weights(monkeypatch):
    monkeypatch.setenv("RULEGRAD_L2_BYTES", L2_PAST_Y)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((11, 67)).astype(np.float16)
    w = rng.standard_normal((67, 45)).astype(np.float32)
    t = Tensor(a).float() @ Tensor(w)
    assert _staged(t)
    _close(t.numpy(), a.astype(np.float64) @ w)


@pytest.mark.parametrize("n", [129, 128])
def test_a_batch_of_products_stages_its_panels_per_batch_iteration(n):
    # x past half of L2: its panels inside each row tile, y's on the heap (512 x 144 floats)
    rng = np.random.default_rng(n)
    a = rng.standard_normal((4, 512, 512)).astype(np.float32)
    b = rng.standard_normal((4, 512, n)).astype(np.float32)
    t = Tensor(a) @ Tensor(b)
    ((opt, acts),) = optimized_kernels(t)
    assert any("STAGED" in a for a in acts)
    assert any(n.op is Ops.DEFINE_LOCAL and n.arg == "heap" for n in opt.toposort())
    _close(t.numpy(), a.astype(np.float64) @ b, 1e-4)


def test_the_interpreter_runs_the_staged_kernel(monkeypatch):
    monkeypatch.setenv("RULEGRAD_L2_BYTES", L2_PAST_Y)
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((11, 67)).astype(np.float32), rng.standard_normal((67, 45))
    b = b.astype(np.float32)
    t = Tensor(a).relu() @ Tensor(b)
    (item,) = t.schedule()
    opt = optimize_kernel(lower_only(item.ast))
    assert any(n.op is Ops.DEFINE_LOCAL for n in opt.toposort())
    bufs = [np.zeros(b_.size, b_.dtype.np) for b_ in item.bufs]
    for i, b_ in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b_.ensure().reshape(-1)
    run_kernel(opt, bufs)
    _close(bufs[0].reshape(11, 45), np.maximum(a, 0).astype(np.float64) @ b)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# (batch, rows, head size): keys a whole number of panels or not, prime sizes
@pytest.mark.parametrize("b,n,d", [(1, 7, 4), (2, 97, 31), (4, 33, 16), (3, 64, 8)])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_reads_its_staged_panels_of_k_and_v(b, n, d, causal):
    rng = np.random.default_rng(b * 100 + n + d)
    q, k, v = (rng.standard_normal((b, n, d)).astype(np.float32) for _ in range(3))
    s = Tensor(q) @ Tensor(k).transpose(-1, -2) / float(np.sqrt(d))
    want_s = q.astype(np.float64) @ k.transpose(0, 2, 1) / np.sqrt(d)
    if causal:
        keep = np.tril(np.ones((n, n), bool))
        s = Tensor(keep).where(s, float("-inf"))
        want_s = np.where(keep, want_s, -np.inf)
    t = s.softmax(-1) @ Tensor(v)
    kernels = optimized_kernels(t)
    flash = [opt for opt, acts in kernels if any(a.startswith("FLASH") for a in acts)]
    assert flash and all(any(x.op is Ops.DEFINE_LOCAL and x.arg == "aligned"
                             for x in opt.toposort()) for opt in flash)
    _close(t.numpy(), _softmax(want_s) @ v)


def test_the_interpreter_runs_a_staged_flash_kernel():
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 29, 12)).astype(np.float32) for _ in range(3))
    t = (Tensor(q) @ Tensor(k).transpose(-1, -2)).softmax(-1) @ Tensor(v)
    (item,) = t.schedule()
    opt = optimize_kernel(lower_only(item.ast))
    assert any(n.op is Ops.DEFINE_LOCAL and n.arg == "aligned" for n in opt.toposort())
    bufs = [np.zeros(b_.size, b_.dtype.np) for b_ in item.bufs]
    for i, b_ in enumerate(item.bufs[1:], 1):
        bufs[i][:] = b_.ensure().reshape(-1)
    run_kernel(opt, bufs)
    want = _softmax(q.astype(np.float64) @ k.transpose(0, 2, 1)) @ v
    _close(bufs[0].reshape(want.shape), want)
