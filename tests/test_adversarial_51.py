"""adv51's hunt (issue 31): wrong answers found in programs the project had not seen.

Gradients that were NaN where torch's are defined: a composite op whose masked or clamped
branch still computed an inner derivative of inf there, which the mask's 0 then turned into
0 * inf = NaN (atanh at +-1, normalize at a zero vector or element, binary cross entropy of a
probability of exactly 0 or 1, which a float32 sigmoid reaches from |x| > 17 on). And
attention whose mask keeps a query from every key gave NaN where torch gives 0. torch is the
oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _grads(ours, theirs, *arrays):
    """The gradients of ours and theirs at arrays, each seeded with the same cotangent."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = theirs(*ts)
    seed = torch.linspace(-1.5, 2.0, out.numel(), dtype=out.dtype).reshape(out.shape)
    want = torch.autograd.grad(out, ts, seed)
    xs = [Tensor(a, requires_grad=True) for a in arrays]
    got = ours(*xs).gradient(*xs, gradient=Tensor(seed.numpy()))
    return [g.numpy() for g in got], [w.numpy() for w in want]


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_atanh_gradient_at_the_ends_is_infinite(dt):
    x = np.array([-1.0, 1.0, 0.0, 0.3, -0.5, 0.5, 0.75, -0.999], dt)
    (got,), (want,) = _grads(lambda t: t.atanh(), torch.atanh, x)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_array_equal(Tensor(x).atanh().numpy()[:2], [-np.inf, np.inf])


ZERO_ROWS = [np.zeros((2, 3)), np.array([[0.0, 3.0, -4.0], [0.0, 0.0, 0.0]]),
             np.array([[1.0, -2.0, 0.5], [0.0, 1e-30, 0.0]])]


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, -2.0, float("inf")])
@pytest.mark.parametrize("rows", range(len(ZERO_ROWS)))
def test_normalize_gradient_at_zeros_is_torchs(p, rows):
    x = ZERO_ROWS[rows].astype(np.float32)
    for dim in (0, 1):
        (got,), (want,) = _grads(lambda t, d=dim: t.normalize(p=p, dim=d),
                                 lambda t, d=dim: F.normalize(t, p=p, dim=d), x)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # 0s: 6e-8 of rounding
        np.testing.assert_allclose(Tensor(x).normalize(p=p, dim=dim).numpy(),
                                   F.normalize(torch.tensor(x), p=p, dim=dim).numpy(), rtol=1e-6)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_binary_cross_entropy_of_a_saturated_sigmoid_has_a_finite_gradient(dt):
    """The oracle is torch in float64 (where sigmoid(20) is not yet 1: torch's float32
    sigmoid gradient s (1 - s) is 0 there, ours e^-x / (1 + e^-x)^2 the true 2e-9)."""
    logits = np.array([-120.0, -20.0, 20.0, 120.0, 0.3, -5.0], dt)
    labels = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 0.0], dt)
    (got,), (want,) = _grads(lambda t: t.sigmoid().binary_crossentropy(Tensor(labels)),
                             lambda t: F.binary_cross_entropy(t.double().sigmoid(),
                                                              torch.tensor(labels).double()),
                             logits)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-30)


def test_binary_cross_entropy_gradient_at_exact_probabilities_is_finite():
    """At p = 0 (1) with label 0 (1) the loss is -log(1 - p) (-log p) near p: its derivative
    is torch's at a p just inside; the floored term adds nothing."""
    p = np.array([0.0, 1.0], np.float64)
    y = np.array([0.0, 1.0], np.float64)
    (got, _), _ = _grads(lambda a, b: a.binary_crossentropy(b, reduction="sum"),
                         lambda a, b: F.binary_cross_entropy(a, b, reduction="sum"), p, y)
    inside = torch.tensor([1e-9, 1 - 1e-9], dtype=torch.float64, requires_grad=True)
    loss = F.binary_cross_entropy(inside, torch.tensor(y), reduction="sum")
    seed = torch.linspace(-1.5, 2.0, 1, dtype=torch.float64)[0]
    (want,) = torch.autograd.grad(loss, [inside], seed)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)
    # a NaN probability is still NaN, not the floor's 100
    nan = Tensor(np.array([np.nan], np.float32))
    assert np.isnan(nan.binary_crossentropy(Tensor(np.zeros(1, np.float32))).numpy())


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 2, 2), (5, 7, 3), (13, 2, 8), (3, 129, 5)])
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_attention_masked_off_a_whole_row_gives_torchs_zeros(shape, dt, kind):
    L, S, D = shape
    rng = np.random.default_rng(L * 100 + S)
    q, k, v = (rng.standard_normal((2, n, D)).astype(dt) for n in (L, S, S))
    keep = rng.random((L, S)) > 0.5
    keep[0] = False  # query 0 sees no key
    mask = keep if kind == "bool" else np.where(keep, rng.standard_normal((L, S)),
                                                -np.inf).astype(dt)
    got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor(mask))
    want = F.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)),
                                          attn_mask=torch.tensor(mask))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    grads, wants = _grads(
        lambda a, b, c: a.scaled_dot_product_attention(b, c, attn_mask=Tensor(mask)),
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=torch.tensor(mask)),
        q, k, v)
    for g, w in zip(grads, wants):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


FMOD_X = [-0.0, 0.0, 1.0, -1.0, np.inf, 5.0, -5.0, 7.0, 1e30, -3.0, 5.5, -5.5, 1e30, np.nan,
          1.0, -1e-30, 3e-30]
FMOD_Y = [1.0, -1.0, 0.0, 0.0, 2.0, np.inf, np.inf, -np.inf, 1e-30, 3.0, 2.0, -2.0, 7.0, 1.0,
          np.nan, 7.0, 1e-30]


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_fmod_is_cs_exact_fmod(dt):
    """fmod was x - trunc(x / y) * y: 1e30 fmod 7 gave 0 (numpy: 1), 1e30 fmod 1e-30 -inf,
    5 fmod inf NaN (numpy: 5), -3 fmod 3 +0 (numpy: -0)."""
    x, y = np.array(FMOD_X, dt), np.array(FMOD_Y, dt)
    with np.errstate(all="ignore"):
        for got, want in ((Tensor(x).fmod(Tensor(y)), np.fmod(x, y)),
                          (Tensor(x).fmod(7), np.fmod(x, dt(7))),
                          (Tensor(x).fmod(-0.3), np.fmod(x, dt(-0.3)))):
            got = got.numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)  # NaN where NaN
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        finite = np.isfinite(x / y)  # torch's gradient -trunc(x / y) is defined there
    xs, ys = x[finite], y[finite]
    if dt is not np.float16:
        (gx, gy), (wx, wy) = _grads(lambda a, b: a.fmod(b), torch.fmod, xs, ys)
        np.testing.assert_allclose(gx, wx)
        np.testing.assert_allclose(gy, wy)


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.int64, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_fmod_of_ints_is_numpys(dt):
    info = np.iinfo(dt)
    x = np.array([7, -7, 0, 5, info.min, info.max, 3], np.int64).clip(info.min, info.max)
    y = np.array([3, 3, 5, 0, -1 if info.min else 1, 7, -2 if info.min else 2], np.int64)
    x, y = x.astype(dt), y.astype(dt)
    with np.errstate(all="ignore"):
        for got, want in ((Tensor(x).fmod(Tensor(y)), np.fmod(x, y)),
                          (Tensor(x).fmod(3), np.fmod(x, dt(3))),
                          (Tensor(x).fmod(2.5), np.fmod(x, 2.5))):
            got = got.numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", ["sinh", "cosh"])
def test_sinh_and_cosh_are_finite_until_they_pass_the_largest_float(dt, fn):
    """e^x / 2 overflowed where e^x does, a ln 2 wide window early: cosh(89) was inf in
    float32, cosh(710) in float64. numpy (the C library's) is the oracle: torch's float64
    cosh overflows there too."""
    top = np.log(np.finfo(dt).max)
    x = np.concatenate([np.linspace(top - 0.1, top + 0.8, 41), np.linspace(-30, 30, 61),
                        [0.0, -0.0, 1e-8, np.inf, -np.inf, np.nan]]).astype(dt)
    x = np.concatenate([x, -x])
    with np.errstate(over="ignore"):
        want = getattr(np, fn)(x)
    got = getattr(Tensor(x), fn)().numpy()
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dt).eps, atol=0)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_copysign_reads_the_sign_bit_of_a_nan(dt):
    a = np.array([1, 2, 3, np.nan, -0.0, 0.0, np.inf, -5, 7], dt)
    b = np.array([np.nan, -np.nan, -0.0, -1, -np.inf, -3, -0.0, 0.0, -np.nan], dt)
    got = Tensor(a).copysign(Tensor(b)).numpy()
    np.testing.assert_array_equal(got, np.copysign(a, b))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.copysign(a, b)))
