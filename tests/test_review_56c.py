"""Review 56c: argmax and argmin down rows whose body holds column-only work (interchange_helpers'
`_hoisted` fills it once per column into a kernel-local array), against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor


def _column_work(w):
    """Column-only work through libm calls (exp, sin, cos), more of it than varies per row."""
    return ((w * 3).exp() + w.sin() * w.cos() - w * w) / (w * w + 1)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1001, 9), (3, 257, 16), (2, 4099, 17), (5, 31, 33)])
def test_argmax_of_a_body_with_hoisted_libm_work_is_a_row_of_the_max(shape, dt):
    """The argmax's max and the hoisted array each computed the column's exp, sin and cos: the
    array in an `omp simd` fill loop (libmvec's vector calls), the max's body in a scalar one
    (libm's), a few ulp apart, so no row equalled the max and the first hit was INT32_MAX
    (wrong answer: an index out of range; 2 to 5 of 9 columns at 1001x9)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(dt)
    w = rng.standard_normal((*shape[:-2], 1, shape[-1])).astype(dt)
    cw_np = (np.exp(w * 3) + np.sin(w) * np.cos(w) - w * w) / (w * w + 1)
    body_np = x * cw_np + cw_np * cw_np
    cw = _column_work(Tensor(w))
    body = Tensor(x) * cw + cw * cw
    rows = shape[-2]
    tol = 1e-5 if dt == "float32" else 1e-12
    for op in ("argmax", "argmin"):
        got = getattr(body, op)(-2).numpy().astype(np.int64)
        want = getattr(body_np, op)(axis=-2)
        assert got.shape == want.shape
        assert ((got >= 0) & (got < rows)).all(), (op, got[(got < 0) | (got >= rows)][:4])
        # numpy's exp and sin are not libm's: a near tie may pick another row of the same value
        at_got = np.take_along_axis(body_np, np.expand_dims(got, -2), -2)
        at_want = np.take_along_axis(body_np, np.expand_dims(want, -2), -2)
        np.testing.assert_allclose(at_got, at_want, rtol=tol, atol=tol, err_msg=op)


@pytest.mark.parametrize("opt", ["0", "1"])
@pytest.mark.parametrize("shape, axis", [((100003, 5), 0), ((37, 31), 1), ((3, 257, 16), 1)])
def test_argmax_of_libm_calls_is_an_index_of_the_max(monkeypatch, shape, axis, opt):
    """The max and the compare against it each computed exp(x) * 2 + exp2(x), in two loops that
    gcc vectorized differently (libmvec's lanes and libm's remainder): no element equalled its
    max and argmax was INT32_MAX (wrong answer, with the optimizer off too at 37x31)."""
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    if opt == "0":
        monkeypatch.setenv("RULEGRAD_OPT", "0")
    x = np.random.default_rng(5).standard_normal(shape)
    body_np = np.exp(x) * 2 + np.exp2(x)
    for op in ("argmax", "argmin"):
        got = getattr(Tensor(x).exp() * 2 + Tensor(x).exp2(), op)(axis).numpy().astype(np.int64)
        want = getattr(body_np, op)(axis=axis)
        assert ((got >= 0) & (got < shape[axis])).all(), (op, got[got >= shape[axis]][:4])
        at_got = np.take_along_axis(body_np, np.expand_dims(got, axis), axis)
        at_want = np.take_along_axis(body_np, np.expand_dims(want, axis), axis)
        np.testing.assert_allclose(at_got, at_want, rtol=1e-12, atol=0, err_msg=op)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("shape, axis", [((3, 4), 1), ((37, 31), 1), ((1001, 9), 0)])
def test_gradient_of_a_max_of_libm_calls_equals_torch(shape, axis, op):
    """The backward compared exp(x) (its own kernel's, recomputed) with the forward's max for
    equality: ulps apart, no element hit and the gradient was 0 / 0, NaN (wrong answer: NaN
    gradient; 2 of 3 rows at 3x4)."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal(shape)
    w = Tensor(x).requires_grad_()
    getattr(w.exp() * 2 + w.sin(), op)(axis).sum().backward()
    t = torch.tensor(x, requires_grad=True)
    getattr(t.exp() * 2 + t.sin(), "a" + op)(axis).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)
