"""adv52's hunt (issue 31): wrong answers and crashes at the edges of ops, found in programs
the project had not seen. numpy is the oracle for values and dtypes, torch for gradients.

acosh below 1 is NaN; its formula log(x + sqrt(x^2 - 1)) gave inf for a float32 x whose
square overflows (x = -3e38) and -inf where x + sqrt(x^2 - 1) rounds to 0 (float64 -1e20).
Comparisons of an integer tensor with a Python int outside its type (`uint64 == -1`,
`int8 < 2**70`) raised a bare OverflowError; numpy 2 compares them by value.
float16 layernorm and normalize summed their squares in float16 (overflow past 256, subnormals
below 2.4e-4), where torch sums half in float32.
Closed forms that cancel or pass through a subnormal: asinh near 0, and the Kahan forms of
log1p and expm1 in float16 (elu, selu, celu, softplus, logsigmoid).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

from rulegrad import Tensor


def _same(got: np.ndarray, want: np.ndarray, rtol: float) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)  # NaN where NaN, inf where inf


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_acosh_below_one_is_nan_at_every_magnitude(dt):
    x = np.array([-3e38, -1e20, -1e300, -1e10, -7, -1, 0, -0.0, 0.5, 0.999, 1, 1.0000001, 2,
                  1e5, 1e20, 3e38, np.inf, -np.inf, np.nan], np.float64)
    with np.errstate(all="ignore"):
        x = x.astype(dt)
        want = np.arccosh(x)
    _same(Tensor(x).acosh().numpy(), want, rtol=4 * float(np.finfo(dt).eps))


CMPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.int64, np.uint64],
                         ids=lambda d: np.dtype(d).name)
def test_integer_compared_with_a_python_int_outside_its_type_is_numpys(dt):
    info = np.iinfo(dt)
    x = np.array([info.min, info.min + 1, 0, 1, 7, info.max - 1, info.max], dt)
    for other in (info.max + 1, info.min - 1, -1, 2**70, -(2**70), 2**64, info.max, info.min):
        for cmp in CMPS:
            for got, want in ((cmp(Tensor(x), other), cmp(x, other)),
                              (cmp(other, Tensor(x)), cmp(other, x))):
                got = got.numpy()
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want, err_msg=f"{cmp.__name__} {other}")
    # a 2-d tensor keeps its shape, and a where over the all-true mask reads the tensor
    y = x.reshape(7, 1).repeat(3, 1)
    np.testing.assert_array_equal((Tensor(y) < 2**70).where(Tensor(y), 0).numpy(), y)


HALF_ROWS = np.array([[300, -300, 0, 0, 10, -10], [1e-4, 2e-4, -1e-4, 0, 0, 3e-5],
                      [60000, -60000, 1, 2, 3, 4], [0.5, -1.5, 2.5, 3.0, -0.25, 1.0]])


@pytest.mark.parametrize("dim", [0, 1])
def test_float16_normalizations_square_in_float32_as_torch(dim):
    """layernorm and normalize squared float16 deviations in float16: past 256 the squares
    overflowed (layernorm gave 0 for [300, -300, ...], torch 1.73), below 2.4e-4 they fell
    to float16's subnormals (normalize was 1% off). torch accumulates half in float32."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = HALF_ROWS.astype(np.float16)
    x = x if dim == 1 else np.ascontiguousarray(x.T)
    t = torch.tensor(x)
    n = x.shape[dim]
    for got, want in ((Tensor(x).layernorm(dim), F.layer_norm(t.movedim(dim, -1), (n,))
                       .movedim(-1, dim)),
                      (Tensor(x).normalize(dim=dim), F.normalize(t, dim=dim)),
                      (Tensor(x).normalize(p=3.0, dim=dim), F.normalize(t, p=3.0, dim=dim))):
        got, want = got.numpy(), want.numpy()
        assert got.dtype == want.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=2e-3, atol=1e-4)


def _sweep(dt) -> np.ndarray:
    fi = np.finfo(dt)
    x = np.geomspace(float(fi.smallest_normal), float(fi.max), 400).astype(dt)
    return np.concatenate([x, -x, [0.0, -0.0]]).astype(dt)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_asinh_is_numpys_near_zero(dt):
    """log(|x| + sqrt(x^2 + 1)) cancels just above the small-x branch: asinh(0.0313) was
    0.0308 in float16 (1.6%), 2e-5 relative in float32, 1e-9 in float64."""
    x = _sweep(dt)
    np.testing.assert_allclose(Tensor(x).asinh().numpy(), np.arcsinh(x),
                               rtol=4 * float(np.finfo(dt).eps), atol=0)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_elu_family_keeps_its_digits_in_every_float(dt):
    """expm1's Kahan form multiplied (e - 1) by v first: in float16 the product of two
    numbers near 1e-4 is subnormal (selu(-3e-4) was 20% off), and log(e) of a subnormal e
    is coarse (elu(-15.6) was -1.003). torch in float64 is the oracle."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = _sweep(dt)
    x = x[np.abs(x) < 1e4]
    t = torch.tensor(x.astype(np.float64))
    for got, want in ((Tensor(x).elu(), F.elu(t)), (Tensor(x).selu(), F.selu(t)),
                      (Tensor(x).celu(0.7), F.celu(t, 0.7)), (Tensor(x).softplus(), F.softplus(t)),
                      (Tensor(x).logsigmoid(), F.logsigmoid(t))):
        got, want = got.numpy(), want.numpy().astype(dt)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=4 * float(np.finfo(dt).eps), atol=0)


def test_acosh_gradient_near_one_is_exact():
    """1 / sqrt(x^2 - 1) through the closed form: x^2 - 1 cancelled near 1 (2e-11 relative at
    1 + 1e-7, as torch's own float64 gradient does); at 1 it is torch's inf. The oracle is
    1 / sqrt(x^2 - 1) in 40-digit decimals."""
    from decimal import Decimal, localcontext
    x = np.array([1 + 1e-12, 1 + 1e-7, 1.001, 1.5, 3.0, 1e5, 1e10])
    with localcontext() as ctx:
        ctx.prec = 40
        want = np.array([float(1 / (Decimal(v) * Decimal(v) - 1).sqrt()) for v in x])
    y = Tensor(np.append(x, 1.0), requires_grad=True)
    (got,) = y.acosh().sum().gradient(y)
    np.testing.assert_allclose(got.numpy()[:-1], want, rtol=1e-13, atol=0)
    assert got.numpy()[-1] == np.inf
