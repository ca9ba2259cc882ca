"""Values and gradients of the clamping and piecewise activations at their edges, against torch:
NaN, both infinities, both zeros, the bounds themselves, values so close to 0 that exp(x) - 1
rounds away (elu's branch), and clamp with tensor bounds (NaN bounds, crossed bounds, ties).

Found wrong here (issue 31's gradient audit): clamp/clip, hardtanh, relu6 and hardsigmoid passed
the gradient to a NaN input (torch: 0), clamp ignored a NaN bound (numpy and torch: NaN),
relu6(-0.0) was +0.0, elu/celu/selu(-0.0) were +0.0 and elu(-1e-8) was 0 in float32 (exp - 1,
no expm1), celu's gradient at +inf was NaN (exp(inf) * 0), abs's gradient at NaN was NaN
(torch: 0), logsigmoid(inf) was -0.0.

torch's CPU kernels treat NaN in two ways: the vectorized loop by its comparisons (hardtanh's
`min < x < max` is false: gradient 0), the scalar loop for an array's last partial vector by the
opposite test (`x <= min || x >= max` is false: gradient 1). Every array here is 64 elements
long, a whole number of vectors, so torch answers with its vectorized kernels throughout.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch", reason="torch is not installed: gradient comparison "
                            "with torch skipped (pip install torch to run it)")
F = torch.nn.functional

NAN, INF = float("nan"), float("inf")
EDGES = [NAN, -INF, INF, -0.0, 0.0, -1.0, 1.0, -6.0, 6.0, 0.5, -0.5, 3.0, -3.0, 7.0, -7.0,
         2.0, -2.0, -1e-10, 1e-10, -3e-8, -1e-20, -800.0, 800.0, -104.0]
N = 64  # a whole number of torch's vectors (see the module docstring)


def points(dtype: str) -> np.ndarray:
    fill = np.linspace(-9.0, 9.0, N - len(EDGES))
    return np.concatenate([EDGES, fill]).astype(dtype)


def upstream(dtype: str) -> np.ndarray:
    return np.linspace(0.1, 1.3, N).astype(dtype)


# name -> (ours, torch's); each is a function of one tensor
UNARY = {
    "clamp": (lambda x: x.clamp(-1.0, 1.0), lambda t: torch.clamp(t, -1.0, 1.0)),
    "clamp_min": (lambda x: x.clamp(-1.0, None), lambda t: torch.clamp(t, min=-1.0)),
    "clamp_max": (lambda x: x.clamp(None, 1.0), lambda t: torch.clamp(t, max=1.0)),
    "clip_zero": (lambda x: x.clip(0.0, 6.0), lambda t: torch.clip(t, 0.0, 6.0)),
    "clamp_nan_bound": (lambda x: x.clamp(NAN, 1.0), lambda t: torch.clamp(t, NAN, 1.0)),
    "hardtanh": (lambda x: x.hardtanh(), lambda t: F.hardtanh(t)),
    "relu6": (lambda x: x.relu6(), lambda t: F.relu6(t)),
    "hardswish": (lambda x: x.hardswish(), lambda t: F.hardswish(t)),
    "relu": (lambda x: x.relu(), lambda t: torch.relu(t)),
    "leaky_relu": (lambda x: x.leaky_relu(0.01), lambda t: F.leaky_relu(t, 0.01)),
    "elu": (lambda x: x.elu(), lambda t: F.elu(t)),
    "elu_2": (lambda x: x.elu(2.0), lambda t: F.elu(t, 2.0)),
    "celu": (lambda x: x.celu(), lambda t: F.celu(t)),
    "celu_half": (lambda x: x.celu(0.5), lambda t: F.celu(t, 0.5)),
    "selu": (lambda x: x.selu(), lambda t: F.selu(t)),
    "abs": (lambda x: x.abs(), lambda t: torch.abs(t)),
    "logsigmoid": (lambda x: x.logsigmoid(), lambda t: F.logsigmoid(t)),
    "softplus": (lambda x: x.softplus(), lambda t: F.softplus(t)),
}
# hardsigmoid: torch multiplies by 1/6 rounded to float32 (docs/gradients.md), 1e-8 off
ROUGH = {"hardsigmoid": (lambda x: x.hardsigmoid(), lambda t: F.hardsigmoid(t))}
TOL = {"float64": 1e-12, "float32": 1e-6}


def assert_same(ours: np.ndarray, theirs: np.ndarray, rtol: float, what: str,
                signs: bool = True) -> None:
    """Equal to rtol, NaN where torch has NaN, and (values) a zero with torch's sign."""
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=0, equal_nan=True, err_msg=what)
    if not signs:
        return
    zero = theirs == 0
    np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(theirs[zero]),
                                  err_msg=f"{what}: the sign of a zero")


def compare(ours_fn, torch_fn, dtype: str, rtol: float) -> None:
    a, up = points(dtype), upstream(dtype)
    x = Tensor(a)
    out = ours_fn(x)
    (g,) = out.gradient(x, gradient=Tensor(up))
    t = torch.tensor(a, requires_grad=True)
    tout = torch_fn(t)
    (tg,) = torch.autograd.grad(tout, t, torch.tensor(up))
    assert out.dtype.name == dtype and g.dtype.name == dtype
    assert_same(out.numpy(), tout.detach().numpy(), rtol, "value")
    assert_same(g.numpy(), tg.numpy(), rtol, "gradient", signs=False)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_and_gradients_at_edges_match_torch(name, dtype):
    compare(*UNARY[name], dtype, TOL[dtype])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_hardsigmoid_at_edges_matches_torch_up_to_its_rounded_sixth(dtype):
    compare(*ROUGH["hardsigmoid"], dtype, 1e-6)


# clamp with tensor bounds: NaN in x and in either bound, crossed bounds (max wins), ties at
# each bound, infinite bounds, a -0.0 bound
X = [NAN, -2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, -0.0, 1.0, 1.0, 5.0, -5.0, 0.3, 2.0, 0.0, -4.0]
LO = [0.0, -1.0, -1.0, -1.0, 0.5, 0.5, NAN, 1.0, 0.0, 2.0, 1.0, -INF, -INF, NAN, 3.0, -0.0, 2.0]
HI = [1.0, 1.0, -1.0, NAN, 0.5, 1.0, 1.0, 2.0, 0.0, 0.0, 1.0, INF, 1.0, NAN, NAN, 0.0, 0.0]


def _padded(v: list[float]) -> np.ndarray:
    return np.concatenate([v, np.linspace(-3, 3, N - len(v))])


BOUNDS = {
    "both": (lambda x, lo, hi: x.clamp(lo, hi), lambda x, lo, hi: torch.clamp(x, lo, hi)),
    "min": (lambda x, lo, hi: x.clamp(lo, None), lambda x, lo, hi: torch.clamp(x, min=lo)),
    "max": (lambda x, lo, hi: x.clamp(None, hi), lambda x, lo, hi: torch.clamp(x, max=hi)),
    "clip_min_scalar": (lambda x, lo, hi: x.clip(0.5, hi),
                        lambda x, lo, hi: torch.clip(x, torch.full_like(x, 0.5), hi)),
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_clamp_with_tensor_bounds_matches_torch_values_and_all_three_gradients(name):
    ours_fn, torch_fn = BOUNDS[name]
    arrays = [_padded(v) for v in (X, LO, HI)]
    up = upstream("float64")
    ours = [Tensor(a) for a in arrays]
    out = ours_fn(*ours)
    grads = out.gradient(*ours, gradient=Tensor(up))
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    tout = torch_fn(*theirs)
    tgrads = torch.autograd.grad(tout, theirs, torch.tensor(up), allow_unused=True)
    # values: equal, NaN where any of x, min, max is NaN. The sign of a zero at a tie of x
    # with an equal bound is x's here (clamp keeps x in range); torch's tensor clamp returns
    # the bound there, its scalar clamp x (both are max(min(...)) with ties unspecified)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=0, equal_nan=True)
    for i, (g, tg) in enumerate(zip(grads, tgrads)):
        want = np.zeros(N) if tg is None else tg.numpy()
        np.testing.assert_array_equal(g.numpy(), want, err_msg=f"gradient of source {i}")


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_at_signed_zero_ties(op):
    """Ties of -0.0 and 0.0 split the gradient in half, as torch's. The value is the same in
    both argument orders, IEEE 754-2019's maximum/minimum (+0.0 is the larger zero): numpy gives
    the first argument there and torch the second, so neither is an oracle for the sign."""
    a = np.array([0.0, -0.0, 0.0, -0.0, 1.0, NAN, 2.0])
    b = np.array([-0.0, 0.0, 0.0, -0.0, 1.0, 1.0, NAN])
    x, y = Tensor(a), Tensor(b)
    out = getattr(x, op)(y)
    gx, gy = out.gradient(x, y, gradient=Tensor(np.arange(1.0, 8.0)))
    t, u = (torch.tensor(v, requires_grad=True) for v in (a, b))
    tout = getattr(torch, op)(t, u)
    tgx, tgy = torch.autograd.grad(tout, (t, u), torch.tensor(np.arange(1.0, 8.0)))
    np.testing.assert_array_equal(out.numpy(), tout.detach().numpy())
    np.testing.assert_array_equal(gx.numpy(), tgx.numpy())
    np.testing.assert_array_equal(gy.numpy(), tgy.numpy())
    zero_sign = np.signbit(out.numpy()[:4])
    want = [False, False, False, True] if op == "maximum" else [True, True, False, True]
    np.testing.assert_array_equal(zero_sign, want)
    swapped = getattr(y, op)(x).numpy()[:4]
    np.testing.assert_array_equal(np.signbit(swapped), want)
