"""Products with epilogues (issue 33): a bias, an activation (gelu with tanh or erf, relu, silu)
or a residual add after a matrix product is applied in the packed product's store, in the one
kernel, under both schedulers, at odd sizes, one core or threaded; values against torch in
float64 (the FMA contract of runtime/semantics.py: each output's sum over k in order, each step
one rounding)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import actions, optimize_kernel
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

torch = pytest.importorskip("torch")
F = torch.nn.functional

# name -> (rulegrad's epilogue of y = x @ w + b, torch's, given r, a residual of y's shape)
EPILOGUES: dict[str, tuple[Callable, Callable]] = {
    "bias": (lambda y, r: y, lambda y, r: y),
    "gelu_tanh": (lambda y, r: y.gelu(), lambda y, r: F.gelu(y, approximate="tanh")),
    "gelu_erf": (lambda y, r: y.gelu(approximate="none"), lambda y, r: F.gelu(y)),
    "relu": (lambda y, r: y.relu(), lambda y, r: F.relu(y)),
    "silu": (lambda y, r: y.silu(), lambda y, r: F.silu(y)),
    "residual": (lambda y, r: y + r, lambda y, r: y + r),
    "residual_gelu": (lambda y, r: (y + r).gelu(), lambda y, r: F.gelu(y + r, approximate="tanh")),
}
# (rows, k, columns): prime and odd (rows and columns left over), tall and skinny, one with a
# single panel, and ones past the threading threshold (1M multiply-adds)
SHAPES = [(37, 53, 45), (97, 61, 19), (131, 17, 67), (1000, 64, 40), (203, 64, 81),
          (19, 256, 130)]


@pytest.fixture(params=["rangeify", "kernelize"])
def scheduler(request, monkeypatch) -> str:
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)
    return request.param


def _inputs(m: int, k: int, n: int, scale: float) -> list[np.ndarray]:
    rng = np.random.default_rng(m * 10007 + k * 101 + n)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = (rng.standard_normal((k, n)) * scale / np.sqrt(k)).astype(np.float32)
    return [x, w, rng.standard_normal(n).astype(np.float32),
            rng.standard_normal((m, n)).astype(np.float32)]


def _program(name: str, x: np.ndarray, w: np.ndarray, b: np.ndarray, r: np.ndarray) -> Tensor:
    return EPILOGUES[name][0](Tensor(x) @ Tensor(w) + Tensor(b), Tensor(r))


def _oracle(name: str, x: np.ndarray, w: np.ndarray, b: np.ndarray, r: np.ndarray
            ) -> np.ndarray:
    t = [torch.from_numpy(a.astype(np.float64)) for a in (x, w, b, r)]
    return EPILOGUES[name][1](t[0] @ t[1] + t[2], t[3]).numpy()


def _check(name: str, shape: tuple[int, int, int]) -> None:
    # scale 4: pre-activations up to about +-20, where gelu's and silu's exp runs far down
    x, w, b, r = _inputs(*shape, scale=4.0)
    t = _program(name, x, w, b, r)
    (item,) = t.schedule()  # one kernel: the epilogue is not a pass over memory afterwards
    low = lower_only(item.ast)
    assert any(a.startswith("PACK") for a in actions(optimize_kernel(low)))
    want = _oracle(name, x, w, b, r)
    got = t.numpy()
    # a float32 sum of k products (each rounded once) and a few float32 ops after it
    bound = 4 * shape[1] * np.finfo(np.float32).eps * np.abs(want).max() + 1e-6
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", EPILOGUES)
def test_epilogue_in_the_products_store_matches_torch(scheduler: str, name: str,
                                                       shape: tuple[int, int, int]) -> None:
    _check(name, shape)


@pytest.mark.parametrize("shape", [(131, 17, 67), (203, 64, 81)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", EPILOGUES)
def test_epilogue_in_512_bit_tiles(monkeypatch: pytest.MonkeyPatch, name: str,
                                   shape: tuple[int, int, int]) -> None:
    """The same with AVX-512's tiles (6x32 float32; the suite pins 256-bit ones, conftest.py),
    whose epilogue loops call libmvec's 16-lane functions on a machine that has them."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    _check(name, shape)


def test_gelu_cube_is_multiplies_not_pow() -> None:
    """gelu's x ** 3 is x * x * x (torch's kernel computes it so): POW is the C library's powf,
    whose vector form takes a scalar path for a negative base, one call per element of a
    product's epilogue (a 4096x64x64 linear + gelu ran 4x slower than with the multiplies)."""
    x, w, b, r = _inputs(37, 53, 45, scale=1.0)
    (item,) = _program("gelu_tanh", x, w, b, r).schedule()
    assert not any(n.op is Ops.POW for n in toposort(item.ast))


# the float64 argument below which libmvec's vector exp returns a subnormal (or 0) and takes
# a scalar call for its whole vector (float32's exp is our own, backends/c/vexp.py: no such path;
# its floor keeps gradients at +-inf finite, tests/test_review_50b.py)
EXP_FAST_MIN = -708.39

ACTIVATIONS: dict[str, tuple[Callable, Callable]] = {
    "tanh": (lambda t: t.tanh(), torch.tanh),
    "gelu_tanh": (lambda t: t.gelu(), lambda t: F.gelu(t, approximate="tanh")),
    "gelu_erf": (lambda t: t.gelu(approximate="none"), F.gelu),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_exp_stays_on_the_vector_path_with_the_same_values(name: str,
                                                                     dtype: type) -> None:
    """tanh (and gelu through it) and erf saturate long before their exp underflows: a float64
    exp's argument is kept at or above -708, where libmvec's vector exp has no scalar path
    (gelu of pre-activations past +-10 in a product's epilogue ran 7x slower), and the values
    and gradients are torch's, exactly +-1 (and 0) where saturated, NaN kept."""
    xs = np.array([-np.inf, -1e30, -1000, -100, -44.5, -20, -9.5, -3, -0.0, 0.0, 1e-3, 2.5,
                   9.5, 20, 44.5, 100, 1000, 1e30, np.inf, np.nan], dtype)
    ours, theirs = ACTIVATIONS[name]
    x = Tensor(xs, requires_grad=True)
    y = ours(x)
    if dtype is np.float64:  # (float32's floor: tests/test_review_50b.py)
        for n in toposort(y.uop):
            if n.op is Ops.EXP:
                arg = Tensor(n.src[0]).numpy()
                assert np.nanmin(arg) >= EXP_FAST_MIN, (name, arg)
    y.sum().backward()
    tx = torch.tensor(xs.astype(np.float64), requires_grad=True)
    ty = theirs(tx)
    ty.sum().backward()
    want, got = ty.detach().numpy(), y.numpy()
    finite = np.isfinite(xs)
    tol = (2e-6, 2e-7) if dtype is np.float32 else (1e-13, 1e-15)
    np.testing.assert_allclose(got[finite], want[finite], rtol=tol[0], atol=tol[1])
    if dtype is np.float32:  # saturated: the exact values (torch's float64 gelu cancels there)
        big = finite & (np.abs(xs) >= 20)
        np.testing.assert_array_equal(got[big], want[big].astype(dtype))
    assert np.isnan(got[-1])
    # (gradients up to |x| = 1000: at 1e30 gelu's cube is inf in float32, and torch's float32
    # gradient there is NaN too)
    grad, want_grad = x.grad.numpy(), tx.grad.numpy()
    some = finite & (np.abs(xs) <= 1000)
    np.testing.assert_allclose(grad[some], want_grad[some], rtol=1e-5, atol=1e-6)
