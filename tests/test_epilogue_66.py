"""A product's elementwise epilogue at fewer operations, the same values (issue 33, epi66).

Two general means, each against an independent oracle (torch in float64, numpy's bits):
- a select's known condition (rules/opt.rules' `select_actions`): inside where(c, a, b) an op
  of b reading where(c, p, q) reads q (and in a, p). gelu's forward carried
  where(isinf(y), g, g * where(isinf(y), inf, 1)), a select kept for its gradient at +-inf,
  into every product's store; it is g there.
- MAX/MIN against a constant neither NaN nor zero (a clamp's bound) is one compare-select in
  the C (backends/c/render.py's `_plain_bound`): NaN kept as numpy keeps it, -0.0 as itself.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort

torch = pytest.importorskip("torch")
F = torch.nn.functional

# (rows, k, columns): tiny, prime, batch 1, tall, skinny, and one past the threading threshold
SHAPES = [(1, 1, 1), (3, 5, 7), (1, 67, 45), (37, 53, 45), (301, 9, 3), (2, 300, 130),
          (131, 64, 97)]
GELUS = {"tanh": ("tanh", "tanh"), "erf": ("none", "none")}


def _nodes(t: Tensor) -> list:
    """The nodes of each of t's kernels after the optimizer's actions."""
    return [n for item in t.schedule() for n in toposort(optimize_kernel(lower_only(item.ast)))]


def _ops(t: Tensor) -> list[Ops]:
    return [n.op for n in _nodes(t)]


def _inf_tests(t: Tensor) -> int:
    """How many compares against +-inf t's kernels make."""
    return sum(n.op is Ops.CMPEQ and any(s.op is Ops.CONST and s.arg in (np.inf, -np.inf)
                                         for s in n.src) for n in _nodes(t))


def _linear(m: int, k: int, n: int, dtype=np.float32) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    x = rng.standard_normal((m, k)).astype(dtype)
    w = (rng.standard_normal((k, n)) * 4 / np.sqrt(k)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    # pre-activations of +-inf and NaN in the columns the bias makes so
    specials = [np.inf, -np.inf, np.nan]
    b[: min(n, 3)] = specials[: min(n, 3)]
    return x, w, b


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("gelu", GELUS)
def test_gelu_epilogue_values_and_no_inf_selects(gelu: str, shape: tuple[int, int, int],
                                                 dtype: type) -> None:
    """(x @ w + b).gelu() as torch's in float64 (+-inf and NaN pre-activations included: inf,
    NaN, NaN), and its kernel tests no value against +-inf: the gradient's select is gone from
    the forward (on the old optimizer each kernel kept its two compares and their selects)."""
    ours, theirs = GELUS[gelu]
    x, w, b = _linear(*shape, dtype=dtype)
    t = (Tensor(x) @ Tensor(w) + Tensor(b)).gelu(approximate=ours)
    assert _inf_tests(t) == 0
    got = t.numpy().astype(np.float64)
    tx, tw, tb = (torch.from_numpy(a.astype(np.float64)) for a in (x, w, b))
    want = F.gelu(tx @ tw + tb, approximate=theirs).numpy()
    if dtype is np.float16:  # (torch's of the float16 product, rounded as ours is)
        pre = (x.astype(np.float32) @ w.astype(np.float32)).astype(np.float16)
        want = F.gelu(torch.from_numpy((pre + b).astype(np.float64)), approximate=theirs).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    ok = np.isfinite(want)
    eps = np.finfo(dtype).eps
    bound = 8 * shape[1] * eps * (np.abs(want[ok]).max(initial=0) + 1) if dtype is np.float32 \
        else 4 * eps * (np.abs(want[ok]) + 1) * 4
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=np.max(bound, initial=0))


def test_gelu_gradient_at_inf_stays_nan_as_torchs() -> None:
    """The rule is the optimizer's, on kernels: the tensor graph keeps its select, so gelu's
    gradient at +-inf is NaN as torch's, and the finite ones are torch's."""
    x, w, b = _linear(5, 7, 6)
    tb = Tensor(b, requires_grad=True)
    (Tensor(x) @ Tensor(w) + tb).gelu().sum().backward()
    rb = torch.from_numpy(b.astype(np.float64)).requires_grad_()
    ry = torch.from_numpy(x.astype(np.float64)) @ torch.from_numpy(w.astype(np.float64)) + rb
    F.gelu(ry, approximate="tanh").sum().backward()
    got, want = tb.grad.numpy(), rb.grad.numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[3:], want[3:], rtol=1e-4, atol=1e-5)


# where(c, a, b op where(c, p, q)) and where(c, b op where(c, p, q), z), op MUL or ADD
SELECTS = {
    "else_mul": (lambda c, a, b, p, q: c.where(a, b * c.where(p, q)),
                 lambda c, a, b, p, q: np.where(c, a, b * np.where(c, p, q))),
    "then_mul": (lambda c, a, b, p, q: c.where(c.where(p, q) * b, a),
                 lambda c, a, b, p, q: np.where(c, np.where(c, p, q) * b, a)),
    "else_add": (lambda c, a, b, p, q: c.where(a, c.where(p, q) + b),
                 lambda c, a, b, p, q: np.where(c, a, np.where(c, p, q) + b)),
    "then_add": (lambda c, a, b, p, q: c.where(b + c.where(p, q), a),
                 lambda c, a, b, p, q: np.where(c, b + np.where(c, p, q), a)),
}


@pytest.mark.parametrize("n", [1, 7, 64, 1001])
@pytest.mark.parametrize("form", SELECTS)
def test_select_inside_a_select_on_the_same_condition(form: str, n: int) -> None:
    """Each lane numpy's, bit for bit (inf, NaN and -0.0 among the values), with one select
    left in the kernel where there were two."""
    rng = np.random.default_rng(n)
    vals = [rng.standard_normal(n).astype(np.float32) for _ in range(4)]
    specials = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0], np.float32)
    for i, v in enumerate(vals):
        v[: min(n, 5)] = np.roll(specials, i)[: min(n, 5)]
    xs = rng.standard_normal(n).astype(np.float32)
    ours, theirs = SELECTS[form]
    t = ours(Tensor(xs) > 0.1, *(Tensor(v) for v in vals))
    assert _ops(t).count(Ops.WHERE) == 1
    with np.errstate(invalid="ignore"):  # (inf * 0, inf - inf: NaN, as ours)
        want = theirs(xs > np.float32(0.1), *vals)
    got = t.numpy()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


CLAMPS = {
    "max": (lambda t: t.maximum(-2.5), lambda a: np.maximum(a, a.dtype.type(-2.5))),
    "min": (lambda t: t.minimum(3.0), lambda a: np.minimum(a, a.dtype.type(3.0))),
    "clip": (lambda t: t.clip(-1.5, 2.0), lambda a: np.minimum(np.maximum(a, a.dtype.type(-1.5)),
                                                               a.dtype.type(2.0))),
    "max_inf": (lambda t: t.maximum(-np.inf), lambda a: a),
    "min_big": (lambda t: t.minimum(1e30), lambda a: np.minimum(a, a.dtype.type(1e30))),
    # a bound of zero: its tie of +0.0 and -0.0 ordered (runtime/semantics.py), not one select
    "max_zero": (lambda t: t.maximum(0.0), lambda a: np.where(a == 0, a.dtype.type(0.0),
                                                              np.maximum(a, a.dtype.type(0)))),
    "min_zero": (lambda t: t.minimum(-0.0), lambda a: np.where(a == 0, a.dtype.type(-0.0),
                                                               np.minimum(a, a.dtype.type(-0.0)))),
}
SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, -2.5, 3.0, -1.5, 2.0, 1e-40, -1e38]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 12, 1000, 4099])
@pytest.mark.parametrize("clamp", CLAMPS)
def test_clamp_against_a_constant_has_numpys_bits(monkeypatch: pytest.MonkeyPatch, clamp: str,
                                                  n: int, dtype: type) -> None:
    """Elementwise MAX/MIN against a constant printed in the C (not a kernel argument): numpy's
    values bit for bit, the signs of zeros included; NaN where numpy's is (its sign and payload
    are no part of its meaning)."""
    monkeypatch.setenv("RULEGRAD_FLOAT_PARAMS", "0")
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n) * 4).astype(dtype)
    a[: min(n, len(SPECIALS))] = np.array(SPECIALS, dtype)[: min(n, len(SPECIALS))]
    ours, theirs = CLAMPS[clamp]
    got, want = ours(Tensor(a)).numpy(), theirs(a)
    u = np.uint32 if dtype is np.float32 else np.uint64
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok].view(u), want[ok].view(u))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_clip_in_a_products_store(shape: tuple[int, int, int]) -> None:
    """(x @ w + b).clip(-1.5, 2) in the product's store: torch's clamp of the float64 product
    (NaN and +-inf pre-activations from the bias kept as torch keeps them)."""
    x, w, b = _linear(*shape)
    got = (Tensor(x) @ Tensor(w) + Tensor(b)).clip(-1.5, 2.0).numpy()
    tx, tw, tb = (torch.from_numpy(a.astype(np.float64)) for a in (x, w, b))
    want = torch.clamp(tx @ tw + tb, -1.5, 2.0).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=8 * shape[1] * 2e-7 * 4)
