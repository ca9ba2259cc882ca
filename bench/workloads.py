"""The workload families the side-by-side benchmarks run, each at any shape.

In: a family name and a shape tuple. Out: a `Point`: numpy inputs, the same function written for
rulegrad, torch and jax (each at its best: torch's native ops where they exist, the same
mathematics everywhere: gelu with tanh in all three), and the work it does (FLOPs of its
products, or the bytes it must move) so a time can be read as a share of the machine's roof.

Families: attention, mlp (layernorm -> linear -> relu -> linear -> softmax), linear_gelu (a
product with bias and gelu), matmul, conv2d, reduce (sum or max along any axis), layernorm,
batchnorm (+ relu), softmax, logsumexp, elementwise (a fused chain), maxpool, add (tiny).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

F32 = 4


@dataclass
class Point:
    family: str
    shape: tuple
    inputs: dict[str, np.ndarray]
    rg: Callable[..., Any]        # rulegrad Tensors -> lazy Tensor
    torch: Callable[..., Any]     # torch tensors -> tensor
    jax: Callable[..., Any]       # jax arrays -> array (jit-able)
    flops: float = 0.0            # FLOPs of products (0: memory-bound)
    nbytes: float = 0.0           # bytes a memory-bound case must read and write
    tol: dict = field(default_factory=lambda: {"rtol": 2e-3, "atol": 2e-4})

    @property
    def name(self) -> str:
        return f"{self.family} {'x'.join(map(str, self.shape))}"


def _rand(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _bytes(*arrays: np.ndarray | tuple) -> float:
    return float(sum((a.nbytes if isinstance(a, np.ndarray) else math.prod(a) * F32)
                     for a in arrays))


# ---------------------------------------------------------------- the functions, three times
def _gelu_jax(x):
    import jax.numpy as jnp
    return 0.5 * x * (1 + jnp.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def _softmax_jax(x, axis=-1):
    import jax
    return jax.nn.softmax(x, axis=axis)


def _layernorm_jax(x, eps=1e-5):
    import jax.numpy as jnp
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + eps)


def attention(b: int, s: int, d: int, rng: np.random.Generator) -> Point:
    q, k, v = (_rand(rng, b, s, d) for _ in range(3))
    scale = 1 / math.sqrt(d)

    def tf(q, k, v):
        import torch.nn.functional as F
        return F.scaled_dot_product_attention(q, k, v)

    def jf(q, k, v):
        return _softmax_jax(q @ k.transpose(0, 2, 1) * scale) @ v

    return Point("attention", (b, s, d), {"q": q, "k": k, "v": v},
                 lambda q, k, v: ((q @ k.transpose(-1, -2)) * scale).softmax(-1) @ v, tf, jf,
                 flops=4.0 * b * s * s * d)


def mlp(b: int, d: int, h: int, o: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, b, d)
    w1, b1 = _rand(rng, d, h, scale=d ** -0.5), _rand(rng, h, scale=0.1)
    w2, b2 = _rand(rng, h, o, scale=h ** -0.5), _rand(rng, o, scale=0.1)

    def rg(x, w1, b1, w2, b2):
        return ((x.layernorm() @ w1 + b1).relu() @ w2 + b2).softmax(-1)

    def tf(x, w1, b1, w2, b2):
        import torch
        import torch.nn.functional as F
        y = F.layer_norm(x, (x.shape[-1],))
        return torch.softmax(torch.relu(torch.addmm(b1, y, w1)).matmul(w2) + b2, -1)

    def jf(x, w1, b1, w2, b2):
        import jax.numpy as jnp
        return _softmax_jax(jnp.maximum(_layernorm_jax(x) @ w1 + b1, 0) @ w2 + b2)

    return Point("mlp", (b, d, h, o), dict(x=x, w1=w1, b1=b1, w2=w2, b2=b2), rg, tf, jf,
                 flops=2.0 * b * (d * h + h * o))


def linear_gelu(m: int, k: int, n: int, rng: np.random.Generator) -> Point:
    x, w, bias = _rand(rng, m, k), _rand(rng, k, n, scale=k ** -0.5), _rand(rng, n)

    def tf(x, w, bias):
        import torch
        import torch.nn.functional as F
        return F.gelu(torch.addmm(bias, x, w), approximate="tanh")

    return Point("linear_gelu", (m, k, n), dict(x=x, w=w, bias=bias),
                 lambda x, w, bias: (x @ w + bias).gelu(), tf,
                 lambda x, w, bias: _gelu_jax(x @ w + bias), flops=2.0 * m * k * n)


def matmul(m: int, k: int, n: int, rng: np.random.Generator) -> Point:
    a, b = _rand(rng, m, k), _rand(rng, k, n, scale=k ** -0.5)
    return Point("matmul", (m, k, n), dict(a=a, b=b), lambda a, b: a @ b,
                 lambda a, b: a @ b, lambda a, b: a @ b, flops=2.0 * m * k * n)


def conv2d(n: int, c: int, hw: int, o: int, ksize: int, stride: int, groups: int = 1, *,
           rng: np.random.Generator) -> Point:
    """(n, c, hw, hw) * (o, c / groups, ksize, ksize), unpadded; a 7th shape entry is groups."""
    cg = c // groups
    x = _rand(rng, n, c, hw, hw)
    w = _rand(rng, o, cg, ksize, ksize, scale=(cg * ksize ** 2) ** -0.5)
    out = (hw - ksize) // stride + 1

    def tf(x, w):
        import torch.nn.functional as F
        return F.conv2d(x, w, stride=stride, groups=groups)

    def jf(x, w):
        import jax
        return jax.lax.conv_general_dilated(x, w, (stride, stride), "VALID",
                                            feature_group_count=groups)

    shape = (n, c, hw, o, ksize, stride) + ((groups,) if groups != 1 else ())
    return Point("conv2d", shape, dict(x=x, w=w),
                 lambda x, w: x.conv2d(w, groups=groups, stride=stride), tf, jf,
                 flops=2.0 * n * o * out * out * cg * ksize * ksize)


def reduce(op: str, axis: int, *shape: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, *shape)
    out = list(shape)
    out[axis] = 1

    def tf(x):
        import torch
        return x.sum(axis) if op == "sum" else torch.amax(x, axis)

    return Point(f"{op}_axis{axis}", shape, dict(x=x),
                 lambda x: getattr(x, op)(axis=axis), tf,
                 lambda x: getattr(x, op)(axis=axis), nbytes=_bytes(x, tuple(out)))


def layernorm(n: int, d: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, n, d)

    def tf(x):
        import torch.nn.functional as F
        return F.layer_norm(x, (d,))

    return Point("layernorm", (n, d), dict(x=x), lambda x: x.layernorm(), tf, _layernorm_jax,
                 nbytes=_bytes(x, x))


def batchnorm(n: int, c: int, hw: int, rng: np.random.Generator) -> Point:
    x, g, b = _rand(rng, n, c, hw, hw), _rand(rng, c), _rand(rng, c)

    def rg(x, g, b):
        mu = x.mean(axis=(0, 2, 3), keepdim=True)
        var = ((x - mu) * (x - mu)).mean(axis=(0, 2, 3), keepdim=True)
        return ((x - mu) / (var + 1e-5).sqrt() * g.reshape(1, c, 1, 1)
                + b.reshape(1, c, 1, 1)).relu()

    def tf(x, g, b):
        import torch
        import torch.nn.functional as F
        return torch.relu(F.batch_norm(x, None, None, g, b, training=True))

    def jf(x, g, b):
        import jax.numpy as jnp
        mu = x.mean((0, 2, 3), keepdims=True)
        var = ((x - mu) ** 2).mean((0, 2, 3), keepdims=True)
        y = (x - mu) / jnp.sqrt(var + 1e-5) * g.reshape(1, c, 1, 1) + b.reshape(1, c, 1, 1)
        return jnp.maximum(y, 0)

    return Point("batchnorm_relu", (n, c, hw), dict(x=x, g=g, b=b), rg, tf, jf,
                 nbytes=_bytes(x, x))


def softmax(n: int, d: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, n, d)

    def tf(x):
        import torch
        return torch.softmax(x, -1)

    return Point("softmax", (n, d), dict(x=x), lambda x: x.softmax(-1), tf, _softmax_jax,
                 nbytes=_bytes(x, x))


def logsumexp(n: int, d: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, n, d)

    def tf(x):
        import torch
        return torch.logsumexp(x, -1)

    def jf(x):
        import jax
        return jax.nn.logsumexp(x, -1)

    return Point("logsumexp", (n, d), dict(x=x), lambda x: x.logsumexp(-1), tf, jf,
                 nbytes=_bytes(x, (n,)))


def elementwise(n: int, rng: np.random.Generator) -> Point:
    x, y = _rand(rng, n), _rand(rng, n)

    def tf(x, y):
        import torch
        return torch.sigmoid(x * y + 1.5) * x

    def jf(x, y):
        import jax
        return jax.nn.sigmoid(x * y + 1.5) * x

    return Point("elementwise", (n,), dict(x=x, y=y), lambda x, y: (x * y + 1.5).sigmoid() * x,
                 tf, jf, nbytes=_bytes(x, y, x))


def maxpool(n: int, c: int, hw: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, n, c, hw, hw)

    def tf(x):
        import torch.nn.functional as F
        return F.max_pool2d(x, 2)

    def jf(x):
        import jax
        return jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                     "VALID")

    return Point("maxpool2x2", (n, c, hw), dict(x=x), lambda x: x.max_pool2d(2), tf, jf,
                 nbytes=_bytes(x, (n, c, hw // 2, hw // 2)))


def add(n: int, rng: np.random.Generator) -> Point:
    x, y = _rand(rng, n), _rand(rng, n)
    return Point("add", (n,), dict(x=x, y=y), lambda x, y: x + y, lambda x, y: x + y,
                 lambda x, y: x + y, nbytes=_bytes(x, y, x))


FAMILIES: dict[str, Callable[..., Point]] = {
    "attention": attention, "mlp": mlp, "linear_gelu": linear_gelu, "matmul": matmul,
    "conv2d": conv2d, "layernorm": layernorm, "batchnorm": batchnorm, "softmax": softmax,
    "logsumexp": logsumexp, "elementwise": elementwise, "maxpool": maxpool, "add": add,
    "sum": lambda axis, *s, rng: reduce("sum", axis, *s, rng=rng),
    "max": lambda axis, *s, rng: reduce("max", axis, *s, rng=rng),
}


def point(family: str, *shape: int, seed: int = 0) -> Point:
    return FAMILIES[family](*shape, rng=np.random.default_rng(seed))
