"""Gradients of whole programs against torch's autograd (an independent implementation): an MLP
with layernorm and a cross-entropy loss, and an attention block. torch is a test-only extra,
never a dependency of rulegrad: without it these tests are skipped, saying so."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch", reason="torch is not installed: gradient comparison "
                            "with torch skipped (pip install torch to run it)")

rng = np.random.default_rng(0)


def weights(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape) / np.sqrt(shape[0])


def mlp(lib, x, y, w1, b1, w2, b2):
    """The same program for both libraries: layernorm -> linear -> relu -> linear ->
    cross-entropy against one-hot labels."""
    mean = x.mean(-1, keepdim=True)
    d = x - mean
    h = d / ((d * d).mean(-1, keepdim=True) + 1e-5).sqrt()
    h = (h @ w1 + b1).relu() @ w2 + b2
    logp = h.log_softmax(-1) if lib == "rg" else torch.log_softmax(h, -1)
    return -(logp * y).sum(-1).mean()


def attention(lib, s, wq, wk, wv, wo):
    q, k, v = s @ wq, s @ wk, s @ wv
    scores = q @ k.transpose(0, 1) / 8.0 if lib == "torch" else q @ k.transpose() / 8.0
    att = scores.softmax(-1) if lib == "rg" else torch.softmax(scores, -1)
    return ((att @ v @ wo + s) ** 2).mean()


def compare(fn, arrays: list[np.ndarray], trainable: list[int], dtype: str, rtol: float) -> None:
    ours = [Tensor(a.astype(dtype), requires_grad=i in trainable) for i, a in enumerate(arrays)]
    loss = fn("rg", *ours)
    loss.backward()
    theirs = [torch.tensor(a.astype(dtype), requires_grad=i in trainable)
              for i, a in enumerate(arrays)]
    tloss = fn("torch", *theirs)
    tloss.backward()
    np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=rtol)
    for i in trainable:
        np.testing.assert_allclose(ours[i].grad.numpy(), theirs[i].grad.numpy(), rtol=rtol,
                                   atol=rtol * np.abs(theirs[i].grad.numpy()).max(),
                                   err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 1e-4)])
def test_mlp_gradients_match_torch(dtype, rtol):
    x = rng.standard_normal((16, 12))
    y = np.eye(5)[rng.integers(0, 5, 16)]
    arrays = [x, y, weights(12, 24), rng.standard_normal(24) * 0.1, weights(24, 5),
              rng.standard_normal(5) * 0.1]
    compare(mlp, arrays, [0, 2, 3, 4, 5], dtype, rtol)


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 1e-4)])
def test_attention_gradients_match_torch(dtype, rtol):
    arrays = [rng.standard_normal((10, 16))] + [weights(16, 16) for _ in range(4)]
    compare(attention, arrays, [0, 1, 2, 3, 4], dtype, rtol)


ACTIVATIONS = {
    "sigmoid": (lambda x: x.sigmoid(), lambda x: torch.sigmoid(x)),
    "tanh": (lambda x: x.tanh(), lambda x: torch.tanh(x)),
    "gelu_tanh": (lambda x: x.gelu(approximate="tanh"),
                  lambda x: torch.nn.functional.gelu(x, approximate="tanh")),
    "quick_gelu": (lambda x: x.quick_gelu(), lambda x: x * torch.sigmoid(1.702 * x)),
    "abs": (lambda x: x.abs(), lambda x: torch.abs(x)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradients_at_extremes_and_zero_match_torch(name):
    """Values of a few hundred overflow exp in float32: the gradient must stay finite (the
    textbook sigmoid's is exp(300) * 0 = NaN there), and at 0 it must be torch's (abs: 0)."""
    ours_fn, torch_fn = ACTIVATIONS[name]
    v = np.concatenate([rng.uniform(300, 400, 20), rng.uniform(-400, -300, 20),
                        rng.uniform(-3, 3, 20), [0.0, -0.0, 1.0, -1.0, 80.0, -80.0]])
    v = v.astype(np.float32)
    x = Tensor(v)
    out = ours_fn(x)
    (g,) = out.sum().gradient(x)
    t = torch.tensor(v, requires_grad=True)
    tout = torch_fn(t)
    (tg,) = torch.autograd.grad(tout.sum(), t)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-4, atol=1e-6)


FLOAT16_ACTIVATIONS = {**ACTIVATIONS,
                       "gelu_erf": (lambda x: x.gelu(approximate="none"),
                                    lambda x: torch.nn.functional.gelu(x, approximate="none"))}


@pytest.mark.parametrize("name", sorted(FLOAT16_ACTIVATIONS))
def test_float16_activation_gradients_stay_finite_across_its_range(name):
    """float16 ends at 65504: a cube of x overflowed past 40, x * x past 256, and gelu's
    gradient met 0 * inf (NaN) there. torch (in float32, from the same float16 inputs) gives
    0 and 1."""
    ours_fn, torch_fn = FLOAT16_ACTIVATIONS[name]
    mags = [0.1, 1.0, 5.0, 30.0, 41.0, 300.0, 1e3, 1e4, 6e4]
    v = np.array([s * m for m in mags for s in (1, -1)] + [0.0, 24.9, 25.0, 25.1, -25.1],
                 np.float16)
    x = Tensor(v)
    (g,) = ours_fn(x).sum().gradient(x)
    t = torch.tensor(v.astype(np.float32), requires_grad=True)
    (tg,) = torch.autograd.grad(torch_fn(t).sum(), t)
    assert not np.isnan(g.numpy()).any(), g.numpy()
    np.testing.assert_allclose(g.numpy().astype(np.float32), tg.numpy(), rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("xv,yv", [(0.0, 0.0), (0.0, 0.3), (0.0, -0.3), (0.0, 2.0), (2.0, 0.0),
                                   (1.5, -1.2)])
def test_pow_gradients_at_zero_match_torch(xv, yv):
    """x ** y at x == 0 or y == 0: the limits torch and tinygrad take, not 0 * inf = NaN."""
    x, y = Tensor(np.array([xv], np.float32)), Tensor(np.array([yv], np.float32))
    gx, gy = (x ** y).sum().gradient(x, y)
    tx, ty = (torch.tensor([v], requires_grad=True) for v in (xv, yv))
    tgx, tgy = torch.autograd.grad((tx ** ty).sum(), (tx, ty))
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gy.numpy(), tgy.numpy(), rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 1, 3])
def test_prod_gradient_with_zeros_matches_torch(axis):
    """d prod / d x_j is the product of the others: prod / x_j only where x_j != 0."""
    a = rng.uniform(-2, 2, (3, 4, 5, 6)).astype(np.float32)
    a[0, 1, 2, :2] = 0  # two zeros in a row: both gradients 0
    a[1, 2, 3, 3] = 0  # a lone zero: its gradient is the product of the rest
    x = Tensor(a)
    (g,) = x.prod(axis=axis).sum().gradient(x)
    t = torch.tensor(a, requires_grad=True)
    tp = t.prod() if axis is None else t.prod(dim=axis)
    (tg,) = torch.autograd.grad(tp.sum(), t)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("vals", [[0.0, 100.0], [100.0, 0.0, -50.0, 300.0], [1.0, 2.0, 3.0]])
def test_logcumsumexp_gradient_with_large_later_elements(vals):
    # exp of a later, larger element (masked out of an earlier prefix) overflows: its
    # gradient must be 0 there, not 0 * inf = NaN (tinygrad's test_logcumsumexp_numerical)
    x = Tensor(np.array(vals, np.float32), requires_grad=True)
    x.logcumsumexp().sum().backward()
    t = torch.tensor(vals, requires_grad=True)
    torch.logcumsumexp(t, 0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------- the delicate points
# Each is a class of the audit (docs/gradients.md): ties, zeros, kinks, poles, integer
# points, NaN; through the whole Tensor API and the C backend, in float64 against torch.
KINKS = np.array([-7.0, -6.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, 6.0, 7.0, 2.7])
F = None if torch is None else torch.nn.functional
UNARY = {
    # x % 1.0 was flat (0); torch's remainder is 1, at the integers too
    "mod_1": (lambda x: x % 1.0, lambda t: torch.remainder(t, 1.0)),
    "mod_neg": (lambda x: x % -0.5, lambda t: torch.remainder(t, -0.5)),
    "fmod": (lambda x: x.fmod(1.5), lambda t: torch.fmod(t, 1.5)),
    "relu": (lambda x: x.relu(), lambda t: torch.relu(t)),
    "abs": (lambda x: x.abs(), lambda t: torch.abs(t)),
    "clamp": (lambda x: x.clamp(-1.0, 1.0), lambda t: torch.clamp(t, -1.0, 1.0)),
    "where": (lambda x: (x < 1).where(x * 2, -x), lambda t: torch.where(t < 1, t * 2, -t)),
    "leaky_relu": (lambda x: x.leaky_relu(0.01), lambda t: F.leaky_relu(t, 0.01)),
    "hardtanh": (lambda x: x.hardtanh(), lambda t: F.hardtanh(t)),
    "relu6": (lambda x: x.relu6(), lambda t: F.relu6(t)),
    "hardswish": (lambda x: x.hardswish(), lambda t: F.hardswish(t)),
    "elu": (lambda x: x.elu(), lambda t: F.elu(t)),
    "selu": (lambda x: x.selu(), lambda t: F.selu(t)),
    "celu": (lambda x: x.celu(), lambda t: F.celu(t)),
    "sign": (lambda x: x.sign(), lambda t: torch.sign(t)),
    "floor": (lambda x: x.floor() + x.ceil() + x.round() + x.trunc(),
              lambda t: torch.floor(t) + torch.ceil(t) + torch.round(t) + torch.trunc(t)),
    # erf at +-0 alone (elsewhere its A&S approximation is 1e-7 off): 2 / sqrt(pi)
    "erf_at_0": (lambda x: x.eq(0).where(x, 0.0).erf(),
                 lambda t: torch.where(t == 0, t, 0.0).erf()),
    # poles at +-0 (inf), NaN values below 0
    "sqrt": (lambda x: x.sqrt(), lambda t: torch.sqrt(t)),
    "log": (lambda x: x.log() + x.log2(), lambda t: torch.log(t) + torch.log2(t)),
    "reciprocal": (lambda x: x.reciprocal(), lambda t: torch.reciprocal(t)),
    "cumsum": (lambda x: x.cumsum(0), lambda t: torch.cumsum(t, 0)),
    "cumprod": (lambda x: x.cumprod(0), lambda t: torch.cumprod(t, 0)),
}


def _upstream(n: int) -> np.ndarray:
    return np.linspace(0.1, 1.3, n)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_gradients_at_kinks_zeros_and_integers_match_torch(name):
    ours_fn, torch_fn = UNARY[name]
    x = Tensor(KINKS)
    out = ours_fn(x)
    (g,) = out.gradient(x, gradient=Tensor(_upstream(len(KINKS))))
    t = torch.tensor(KINKS, requires_grad=True)
    (tg,) = torch.autograd.grad(torch_fn(t), t, torch.tensor(_upstream(len(KINKS))))
    np.testing.assert_allclose(out.numpy(), torch_fn(t).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


def test_std_of_a_constant_has_gradient_zero_as_torch():
    """sqrt's gradient at a zero variance is inf * 0 = NaN; torch's std gives 0 there."""
    a = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])
    x = Tensor(a)
    (g,) = x.std(axis=1).sum().gradient(x)
    t = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad(t.std(dim=1).sum(), t)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-9, atol=1e-12)


TIES = np.array([[1.0, 3.0, 3.0, -0.0], [2.0, 2.0, 2.0, 2.0], [0.0, -0.0, -1.0, 0.0]])
OTHER = np.array([[1.0, 4.0, 3.0, 0.0], [2.0, 1.0, np.nan, 2.0], [-0.0, 0.0, -1.0, 5.0]])


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_elementwise_max_min_split_ties_and_pass_nan_as_torch(op):
    """A tie (-0.0 against 0.0 too) splits the gradient in half, NaN gives it to both:
    torch.maximum's rule, not torch.fmax's (a tie all to the first)."""
    x, y = Tensor(TIES), Tensor(OTHER)
    gx, gy = getattr(x, op)(y).gradient(x, y, gradient=Tensor(_upstream(12).reshape(3, 4)))
    t, u = (torch.tensor(a, requires_grad=True) for a in (TIES, OTHER))
    tgx, tgy = torch.autograd.grad(getattr(torch, op)(t, u), (t, u),
                                   torch.tensor(_upstream(12).reshape(3, 4)))
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), tgy.numpy(), rtol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("op", ["max", "min"])
def test_reduce_max_min_split_ties_evenly_as_torch_amax(op, axis):
    """Tensor.max(axis) is torch.amax's gradient (ties share it evenly), not torch.max(dim)'s
    (a tie all to one index); the full reduction is torch.max()'s, which also splits."""
    x = Tensor(TIES)
    (g,) = (getattr(x, op)(axis) * Tensor(np.arange(1.0, 5.0)[: 4 if axis == 0 else 3]
                                          if axis is not None else 1.0)).sum().gradient(x)
    t = torch.tensor(TIES, requires_grad=True)
    ref = getattr(t, op)() if axis is None else getattr(torch, "a" + op)(t, dim=axis)
    weight = (torch.arange(1.0, 5.0, dtype=torch.float64)[: 4 if axis == 0 else 3]
              if axis is not None else 1.0)
    (tg,) = torch.autograd.grad((ref * weight).sum(), t)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)


def test_remainder_gradients_of_both_sources_at_exact_multiples_match_torch():
    a = np.array([2.5, -1.0, 3.0, 0.0, -0.0, -3.0, 2.0, 0.0, 7.25, -7.25])
    b = np.array([0.7, 0.7, -1.5, 1.0, 1.0, 1.5, -1.0, -2.0, 0.5, 2.0])
    x, y = Tensor(a), Tensor(b)
    gx, gy = (x % y).sum().gradient(x, y)
    t, u = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    tgx, tgy = torch.autograd.grad(torch.remainder(t, u).sum(), (t, u))
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), tgy.numpy(), rtol=1e-12)
    # the value keeps numpy's signed zeros (the zero branch is written from the remainder)
    assert np.array_equal(np.signbit((x % y).numpy()), np.signbit(a % b))


@pytest.mark.parametrize("xv,yv", [(-0.0, -1.0), (-0.0, -3.0), (-2.0, 2.0), (-2.0, 3.0),
                                   (-2.0, 0.5), (0.0, float("nan"))])
def test_pow_gradients_at_negative_and_signed_zero_bases_match_torch(xv, yv):
    x, y = Tensor(np.array([xv])), Tensor(np.array([yv]))
    gx, gy = (x ** y).sum().gradient(x, y)
    tx, ty = (torch.tensor([v], dtype=torch.float64, requires_grad=True) for v in (xv, yv))
    tgx, tgy = torch.autograd.grad((tx ** ty).sum(), (tx, ty))
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), tgy.numpy(), rtol=1e-12)


def test_movement_gradients_every_permutation_expand_pad_shrink_flip_match_torch():
    """Not only self-inverse permutations: all 24 of 4 axes, each with a different upstream
    gradient, and the other movements (torch.expand, F.pad, slicing, torch.flip)."""
    import itertools

    a = rng.standard_normal((2, 3, 4, 5))
    up = rng.standard_normal((2, 3, 4, 5))
    for p in itertools.permutations(range(4)):
        x = Tensor(a)
        (g,) = (x.permute(p) * Tensor(up.transpose(p))).sum().gradient(x)
        t = torch.tensor(a, requires_grad=True)
        (tg,) = torch.autograd.grad((t.permute(p) * torch.tensor(up.transpose(p))).sum(), t)
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12, err_msg=str(p))
    b = rng.standard_normal((2, 1, 4, 1))
    w = rng.standard_normal((2, 3, 4, 5))
    x = Tensor(b)
    (g,) = (x.expand(2, 3, 4, 5) * Tensor(w)).sum().gradient(x)
    t = torch.tensor(b, requires_grad=True)
    (tg,) = torch.autograd.grad((t.expand(2, 3, 4, 5) * torch.tensor(w)).sum(), t)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)
    x = Tensor(a)
    ours = x.pad(((0, 0), (1, 2), (0, 0), (3, 0)))[:, 1:3, ::-1, 2:].flip(3)
    (g,) = (ours * Tensor(np.arange(ours.numel()).reshape(ours.shape))).sum().gradient(x)
    t = torch.tensor(a, requires_grad=True)
    theirs = F.pad(t, (3, 0, 0, 0, 1, 2))[:, 1:3, :, 2:].flip(2).flip(3)
    (tg,) = torch.autograd.grad(
        (theirs * torch.arange(theirs.numel(), dtype=torch.float64).reshape(theirs.shape)).sum(),
        t)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)


def test_int_and_bool_sources_and_detach_get_no_gradient():
    """An int or bool tensor in the graph gets zeros of its own dtype (torch refuses to make
    one require grad); a detached use adds nothing (torch's detach)."""
    a = rng.standard_normal((3, 4))
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    m = i % 3 == 0
    x, xi, xm = Tensor(a), Tensor(i), Tensor(m)
    out = (x * xi.cast("float64") + xm.where(x, 0.0) + x.detach() * x + (x > 0).cast("float64")
           + (x * 3).cast("int32").cast("float64"))
    gx, gi, gm = out.sum().gradient(x, xi, xm)
    t = torch.tensor(a, requires_grad=True)
    tout = (t * torch.tensor(i).double() + torch.where(torch.tensor(m), t, 0.0)
            + t.detach() * t + (t > 0).double() + (t * 3).int().double())
    (tg,) = torch.autograd.grad(tout.sum(), t)
    np.testing.assert_allclose(gx.numpy(), tg.numpy(), rtol=1e-12)
    assert gi.dtype.name == "int32" and not gi.numpy().any()
    assert gm.dtype.name == "bool" and not gm.numpy().any()


def test_cast_gradient_comes_back_in_the_source_dtype():
    a = rng.standard_normal(6).astype(np.float32)
    x = Tensor(a)
    (g,) = (x.cast("float64") * 3.0).cast("float16").cast("float32").sum().gradient(x)
    t = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad((t.double() * 3.0).half().float().sum(), t)
    assert g.dtype.name == "float32"
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=0)
    (g,) = (x.cast("float64") * 3.0).sum().gradient(x)
    assert g.dtype.name == "float32" and g.numpy().dtype == np.float32


def test_gradient_through_a_copy_to_another_device_comes_back_to_the_source():
    """torch's `.to(device)` passes the gradient back to the source's device; a sharded tensor
    gathered whole (`.to`) gets it back sharded as it is (it was refused before MULTI had a
    gradient rule)."""
    a = rng.standard_normal(6)
    x = Tensor(a)
    (g,) = (x.to("CPU:1") * x.to("CPU:1")).sum().gradient(x)
    t = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad((t * t).sum(), t)
    assert g.device == x.device
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)
    s = Tensor(a.reshape(3, 2)).shard(("CPU", "CPU:1"), axis=1)
    (g,) = (s.to("CPU") * s.to("CPU")).sum().gradient(s)
    assert g.device == s.device
    np.testing.assert_allclose(g.numpy(), 2 * a.reshape(3, 2), rtol=1e-12)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("axis", [0, 1])
def test_cummax_cummin_give_a_tie_to_the_returned_index_as_torch(op, axis):
    """A running max's gradient goes to the index cummax returns (torch), not shared among
    equal elements as a reduce max would (integer-valued data ties often; zeros too)."""
    a = np.random.default_rng(1).integers(-1, 3, (4, 6)).astype(np.float64)
    a[0, :3] = [0.0, -0.0, 0.0]
    up = _upstream(24).reshape(4, 6)
    x = Tensor(a)
    values, _ = getattr(x, op)(axis)
    (g,) = values.gradient(x, gradient=Tensor(up))
    t = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad(getattr(torch, op)(t, axis)[0], t, torch.tensor(up))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)
