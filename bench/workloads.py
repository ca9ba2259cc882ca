"""The workload families the side-by-side benchmarks run, each at any shape.

In: a family name and a shape tuple. Out: a `Point`: numpy inputs, the same function written for
rulegrad, torch and jax (each at its best: torch's native ops where they exist, the same
mathematics everywhere: gelu with tanh in all three), and the work it does (FLOPs of its
products, or the bytes it must move) so a time can be read as a share of the machine's roof.

Families: attention, mlp (layernorm -> linear -> relu -> linear -> softmax), linear_gelu (a
product with bias and gelu), matmul, conv2d, reduce (sum or max along any axis), layernorm,
batchnorm (+ relu), softmax, logsumexp, elementwise (a fused chain), maxpool, add (tiny); and
the non-product held-out families: sum/max/mean/var/argmax over one axis, sum/max/mean/var over
several (`*_axes`, a bit mask of axes), cumsum, pool_max/pool_avg (any window and stride),
bcast (broadcasts over non-contiguous axes), permute_sum, gather (along axis 1, gather0 along 0),
embedding (rows of a table at indices), where, pad, cat (along a middle axis), cat_last; and the
third held-out set's: linear_act (relu/silu/gelu epilogues, a residual add), attention4
((b, h, s, d), causal or not), conv2d_full (stride, dilation, padding, groups), groupnorm,
transpose_sum; sum_int (int8 or int16 summed in int64, over a bit mask of axes); and the
fourth's: mlp_block (layernorm, gelu and a residual), matmul_i8 (int8 cast to float), conv1d,
norm2 (over the last two axes), softmax0 (over axis 0), bcast4 (1-sized middle axes),
elementwise_dt (float16 or float64), and linear_act's tanh (act 3); and softmax3 (over the last
axis of (a, b, d): batched rows, ab.py's points only).
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


def matmul_t(m: int, k: int, n: int, rng: np.random.Generator) -> Point:
    """x @ w.T, w stored (n, k) as a linear layer's weight: plain dots or packed by cost
    (rules/pack_helpers.py's `_dot_cost`)."""
    a, b = _rand(rng, m, k), _rand(rng, n, k, scale=k ** -0.5)
    return Point("matmul_t", (m, k, n), dict(a=a, b=b), lambda a, b: a @ b.T,
                 lambda a, b: a @ b.T, lambda a, b: a @ b.T, flops=2.0 * m * k * n)


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


def softmax3(a: int, b: int, d: int, rng: np.random.Generator) -> Point:
    """softmax over the last axis of (a, b, d): a batch of a x b rows (attention scores' heads
    and queries), blocked by ROWS across the batch's edge (rows64)."""
    x = _rand(rng, a, b, d)

    def tf(x):
        import torch
        return torch.softmax(x, -1)

    return Point("softmax3", (a, b, d), dict(x=x), lambda x: x.softmax(-1), tf, _softmax_jax,
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


_UNARY = ("exp", "sigmoid", "gelu", "tanh")


def unary(n: int, fn: int, rng: np.random.Generator) -> Point:
    """One libm-like function of n values: fn 0 exp, 1 sigmoid, 2 gelu (tanh), 3 tanh (one load
    an element, so the region-cost band of a libm call's loop is read apart from its loads)."""
    x, name = _rand(rng, n), _UNARY[fn]

    def tf(x):
        import torch
        import torch.nn.functional as F
        return (F.gelu(x, approximate="tanh") if name == "gelu" else getattr(torch, name)(x))

    def jf(x):
        import jax
        return (jax.nn.gelu(x) if name == "gelu" else jax.nn.sigmoid(x) if name == "sigmoid"
                else getattr(jax.numpy, name)(x))

    return Point(f"unary_{name}", (n,), dict(x=x), lambda x: getattr(x, name)(), tf, jf,
                 nbytes=_bytes(x, x))


def unary_sum(n: int, fn: int, rng: np.random.Generator) -> Point:
    """The full sum of `unary`'s function of n values (a threaded reduce's work: its loads and
    libm calls, not its iterations alone)."""
    p = unary(n, fn, rng)
    return Point(f"{p.family}_sum", (n,), p.inputs, lambda x: p.rg(x).sum(),
                 lambda x: p.torch(x).sum(), lambda x: p.jax(x).sum(),
                 nbytes=_bytes(p.inputs["x"]))


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


# ---------------------------------------------------------------- non-product held-out families
def _axes(mask: int, ndim: int) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if mask >> i & 1)


def reduce_axes(op: str, mask: int, *shape: int, rng: np.random.Generator) -> Point:
    """sum/max/mean/var over the axes in the bit mask `mask` (one axis or several)."""
    x = _rand(rng, *shape)
    axes = _axes(mask, len(shape))
    out = tuple(1 if i in axes else s for i, s in enumerate(shape))

    def rg(x):
        return x.var(axis=axes, correction=0) if op == "var" else getattr(x, op)(axis=axes)

    def tf(x):
        import torch
        if op == "max":
            return torch.amax(x, axes)
        if op == "var":
            return torch.var(x, axes, correction=0)
        return getattr(x, op)(axes)

    def jf(x):
        return getattr(x, op)(axis=axes)

    return Point(f"{op}_axes{mask}", shape, dict(x=x), rg, tf, jf,
                 nbytes=_bytes(x, out))


def sum_int(bits: int, mask: int, *shape: int, rng: np.random.Generator) -> Point:
    """A sum of int8 (bits 8) or int16 (16) values over the axes in the bit mask `mask`,
    accumulated in int64 as numpy's and torch's are."""
    dt = np.int8 if bits == 8 else np.int16
    x = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, shape).astype(dt)
    axes = _axes(mask, len(shape))
    out = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return Point(f"sum_i{bits}_axes{mask}", shape, dict(x=x), lambda x: x.sum(axis=axes),
                 lambda x: x.sum(axes), lambda x: x.sum(axis=axes), nbytes=_bytes(x, out),
                 tol={"rtol": 0, "atol": 0})


def argmax(axis: int, *shape: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, *shape)
    out = tuple(1 if i == axis else s for i, s in enumerate(shape))
    return Point(f"argmax_axis{axis}", shape, dict(x=x),
                 lambda x: x.argmax(axis).cast("int64"), lambda x: x.argmax(axis),
                 lambda x: x.argmax(axis), nbytes=_bytes(x, out), tol={"rtol": 0, "atol": 0})


def cumsum(axis: int, *shape: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, *shape)
    return Point(f"cumsum_axis{axis}", shape, dict(x=x), lambda x: x.cumsum(axis),
                 lambda x: x.cumsum(axis), lambda x: x.cumsum(axis), nbytes=_bytes(x, x),
                 tol={"rtol": 2e-3, "atol": 2e-3})


def _cummax_jax(x, axis):
    import jax
    return jax.lax.cummax(x, axis=axis)


def cummax(axis: int, *shape: int, rng: np.random.Generator) -> Point:
    """The running max's values (torch's cummax, whose index it returns too, is one kernel)."""
    x = _rand(rng, *shape)
    return Point(f"cummax_axis{axis}", shape, dict(x=x), lambda x: x.cummax(axis)[0],
                 lambda x: x.cummax(axis).values, lambda x: _cummax_jax(x, axis),
                 nbytes=_bytes(x, x),
                 tol={"rtol": 0, "atol": 0})


def pool(kind: str, n: int, c: int, hw: int, k: int, stride: int, *,
         rng: np.random.Generator) -> Point:
    x = _rand(rng, n, c, hw, hw)
    out = (hw - k) // stride + 1
    name = "max_pool2d" if kind == "max" else "avg_pool2d"

    def tf(x):
        import torch.nn.functional as F
        return getattr(F, name)(x, k, stride)

    def jf(x):
        import jax
        red = (-np.inf, jax.lax.max) if kind == "max" else (0.0, jax.lax.add)
        y = jax.lax.reduce_window(x, *red, (1, 1, k, k), (1, 1, stride, stride), "VALID")
        return y if kind == "max" else y / (k * k)

    return Point(f"pool_{kind}", (n, c, hw, k, stride), dict(x=x),
                 lambda x: getattr(x, name)(k, stride), tf, jf,
                 nbytes=_bytes(x, (n, c, out, out)))


def bcast(a: int, b: int, c: int, rng: np.random.Generator) -> Point:
    """x (a, b, c) times y (a, 1, c) plus z (1, b, 1): broadcasts over a middle and outer axes."""
    x, y, z = _rand(rng, a, b, c), _rand(rng, a, 1, c), _rand(rng, 1, b, 1)

    def rg(x, y, z):
        return (x * y + z).relu()

    def tf(x, y, z):
        import torch
        return torch.relu(x * y + z)

    def jf(x, y, z):
        import jax.numpy as jnp
        return jnp.maximum(x * y + z, 0)

    return Point("bcast", (a, b, c), dict(x=x, y=y, z=z), rg, tf, jf,
                 nbytes=_bytes(x, y, z, x))


def permute_sum(a: int, b: int, c: int, rng: np.random.Generator) -> Point:
    """x (a, b, c) permuted to (c, a, b), summed over b: a strided reduce, a transposed output."""
    x = _rand(rng, a, b, c)
    return Point("permute_sum", (a, b, c), dict(x=x), lambda x: x.permute(2, 0, 1).sum(2),
                 lambda x: x.permute(2, 0, 1).sum(2),
                 lambda x: x.transpose(2, 0, 1).sum(2), nbytes=_bytes(x, (c, a)))


def gather(n: int, d: int, k: int, rng: np.random.Generator) -> Point:
    """out[i, j] = x[i, idx[i, j]], x (n, d), idx (n, k)."""
    return _gather_along(1, "gather", n, d, k, rng)


def gather0(n: int, d: int, k: int, rng: np.random.Generator) -> Point:
    """out[j, i] = x[idx[j, i], i], x (d, n), idx (k, n): gather along axis 0."""
    return _gather_along(0, "gather0", n, d, k, rng)


def _gather_along(axis: int, name: str, n: int, d: int, k: int,
                  rng: np.random.Generator) -> Point:
    """k picks of d values along `axis` for each of n rows (the other axis)."""
    x = _rand(rng, *((n, d) if axis else (d, n)))
    idx = rng.integers(0, d, (n, k) if axis else (k, n)).astype(np.int32)

    def tf(x, idx):
        return x.gather(axis, idx.long())

    def jf(x, idx):
        import jax.numpy as jnp
        return jnp.take_along_axis(x, idx, axis)

    return Point(name, (n, d, k), dict(x=x, idx=idx), lambda x, idx: x.gather(axis, idx),
                 tf, jf, nbytes=_bytes(idx, idx, idx))


def embedding(v: int, d: int, k: int, rng: np.random.Generator) -> Point:
    """rows of a (v, d) table at k indices (an embedding lookup): table[idx], (k, d)."""
    w = _rand(rng, v, d)
    idx = rng.integers(0, v, (k,)).astype(np.int32)

    def tf(w, idx):
        return w[idx.long()]

    def jf(w, idx):
        return w[idx]

    out = np.empty((k, d), np.float32)
    return Point("embedding", (v, d, k), dict(w=w, idx=idx), lambda w, idx: w[idx], tf, jf,
                 nbytes=_bytes(idx, out, out))


def where(a: int, b: int, rng: np.random.Generator) -> Point:
    """where(x > 0, x, y) with y (1, b) broadcast over rows."""
    x, y = _rand(rng, a, b), _rand(rng, 1, b)

    def tf(x, y):
        import torch
        return torch.where(x > 0, x, y)

    def jf(x, y):
        import jax.numpy as jnp
        return jnp.where(x > 0, x, y)

    return Point("where", (a, b), dict(x=x, y=y), lambda x, y: (x > 0).where(x, y), tf, jf,
                 nbytes=_bytes(x, x))


def pad(n: int, c: int, hw: int, p: int, rng: np.random.Generator) -> Point:
    x = _rand(rng, n, c, hw, hw)
    widths = ((0, 0), (0, 0), (p, p + 1), (p, p + 1))

    def tf(x):
        import torch.nn.functional as F
        return F.pad(x, (p, p + 1, p, p + 1))

    def jf(x):
        import jax.numpy as jnp
        return jnp.pad(x, widths)

    return Point("pad", (n, c, hw, p), dict(x=x), lambda x: x.pad(widths), tf, jf,
                 nbytes=_bytes(x, (n, c, hw + 2 * p + 1, hw + 2 * p + 1)))


def cat(a: int, b: int, c: int, rng: np.random.Generator) -> Point:
    """Three (a, b*, c) tensors of lengths b, b + 1, 2b along axis 1, joined."""
    x, y, z = _rand(rng, a, b, c), _rand(rng, a, b + 1, c), _rand(rng, a, 2 * b, c)

    def tf(x, y, z):
        import torch
        return torch.cat([x, y, z], 1)

    def jf(x, y, z):
        import jax.numpy as jnp
        return jnp.concatenate([x, y, z], 1)

    return Point("cat", (a, b, c), dict(x=x, y=y, z=z), lambda x, y, z: x.cat(y, z, dim=1),
                 tf, jf, nbytes=2 * _bytes(x, y, z))


def cat_last(a: int, b: int, rng: np.random.Generator) -> Point:
    """Three (a, b*) matrices of widths b, b + 1, 2b joined along the last axis."""
    x, y, z = _rand(rng, a, b), _rand(rng, a, b + 1), _rand(rng, a, 2 * b)

    def tf(x, y, z):
        import torch
        return torch.cat([x, y, z], -1)

    def jf(x, y, z):
        import jax.numpy as jnp
        return jnp.concatenate([x, y, z], -1)

    return Point("cat_last", (a, b), dict(x=x, y=y, z=z),
                 lambda x, y, z: x.cat(y, z, dim=-1), tf, jf, nbytes=2 * _bytes(x, y, z))


# ---------------------------------------------------------------- third held-out families
_ACTS = ("relu", "silu", "gelu", "tanh")


def linear_act(m: int, k: int, n: int, act: int, residual: int = 0, *,
               rng: np.random.Generator) -> Point:
    """act(x @ w + bias) (+ r when `residual`): act 0 relu, 1 silu, 2 gelu (tanh), 3 tanh."""
    x, w, bias = _rand(rng, m, k), _rand(rng, k, n, scale=k ** -0.5), _rand(rng, n)
    r = _rand(rng, m, n)
    name = _ACTS[act]

    def rg(x, w, bias, r):
        y = getattr(x @ w + bias, name)()
        return y + r if residual else y

    def tf(x, w, bias, r):
        import torch
        import torch.nn.functional as F
        y = torch.addmm(bias, x, w)
        y = (F.gelu(y, approximate="tanh") if name == "gelu" else torch.tanh(y)
             if name == "tanh" else getattr(F, name)(y))
        return y + r if residual else y

    def jf(x, w, bias, r):
        import jax
        y = x @ w + bias
        y = (_gelu_jax(y) if name == "gelu" else jax.numpy.tanh(y) if name == "tanh"
             else getattr(jax.nn, name)(y))
        return y + r if residual else y

    return Point("linear_act", (m, k, n, act, residual), dict(x=x, w=w, bias=bias, r=r), rg, tf,
                 jf, flops=2.0 * m * k * n)


def attention4(b: int, h: int, s: int, d: int, causal: int = 0, *,
               rng: np.random.Generator) -> Point:
    """scaled_dot_product_attention over (b, h, s, d), causal when `causal`."""
    q, k, v = (_rand(rng, b, h, s, d) for _ in range(3))

    def tf(q, k, v):
        import torch.nn.functional as F
        return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))

    def jf(q, k, v):
        import jax
        return jax.nn.dot_product_attention(q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3),
                                            v.transpose(0, 2, 1, 3),
                                            is_causal=bool(causal)).transpose(0, 2, 1, 3)

    return Point("attention4", (b, h, s, d, causal), {"q": q, "k": k, "v": v},
                 lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=bool(causal)),
                 tf, jf, flops=4.0 * b * h * s * s * d)


def attention_dt(b: int, h: int, s: int, d: int, causal: int, bits: int, *,
                 rng: np.random.Generator) -> Point:
    """attention4 in float16, float32 or float64 (`bits`): float16's sums of products are float32
    sums of the operands widened, each other op rounded to float16 (runtime/semantics.py)."""
    p = attention4(b, h, s, d, causal, rng=rng)
    dt = {16: np.float16, 32: np.float32, 64: np.float64}[bits]
    tol = {"rtol": 1e-2, "atol": 1e-2} if bits == 16 else None
    return Point("attention_dt", (b, h, s, d, causal, bits),
                 {n: a.astype(dt) for n, a in p.inputs.items()}, p.rg, p.torch, p.jax,
                 flops=p.flops, **({"tol": tol} if tol else {}))


def conv2d_full(n: int, c: int, hw: int, o: int, ksize: int, stride: int, dilation: int,
                padding: int, groups: int, *, rng: np.random.Generator) -> Point:
    """conv2d with stride, dilation, padding and groups all given."""
    cg = c // groups
    x = _rand(rng, n, c, hw, hw)
    w = _rand(rng, o, cg, ksize, ksize, scale=(cg * ksize ** 2) ** -0.5)
    out = (hw + 2 * padding - dilation * (ksize - 1) - 1) // stride + 1
    kw = dict(stride=stride, dilation=dilation, padding=padding, groups=groups)

    def tf(x, w):
        import torch.nn.functional as F
        return F.conv2d(x, w, **kw)

    def jf(x, w):
        import jax
        return jax.lax.conv_general_dilated(x, w, (stride, stride), [(padding, padding)] * 2,
                                            rhs_dilation=(dilation, dilation),
                                            feature_group_count=groups)

    return Point("conv2d_full", (n, c, hw, o, ksize, stride, dilation, padding, groups),
                 dict(x=x, w=w), lambda x, w: x.conv2d(w, **kw), tf, jf,
                 flops=2.0 * n * o * out * out * cg * ksize * ksize)


def groupnorm(n: int, c: int, hw: int, g: int, rng: np.random.Generator) -> Point:
    """group_norm over (n, c, hw, hw) in g groups, with a per-channel scale and shift."""
    x, gam, bet = _rand(rng, n, c, hw, hw), _rand(rng, c), _rand(rng, c)

    def rg(x, gam, bet):
        y = x.reshape(n, g, -1).layernorm().reshape(n, c, hw, hw)
        return y * gam.reshape(1, c, 1, 1) + bet.reshape(1, c, 1, 1)

    def tf(x, gam, bet):
        import torch.nn.functional as F
        return F.group_norm(x, g, gam, bet)

    def jf(x, gam, bet):
        y = _layernorm_jax(x.reshape(n, g, -1)).reshape(n, c, hw, hw)
        return y * gam.reshape(1, c, 1, 1) + bet.reshape(1, c, 1, 1)

    return Point("groupnorm", (n, c, hw, g), dict(x=x, gam=gam, bet=bet), rg, tf, jf,
                 nbytes=_bytes(x, x))


def transpose_sum(a: int, b: int, c: int, rng: np.random.Generator) -> Point:
    """x (a, b, c) transposed to (a, c, b) and made contiguous, plus its sum over a: two
    outputs' worth of work in one expression, x.transpose(1, 2) * 2 + x.sum(0)^T."""
    x = _rand(rng, a, b, c)
    return Point("transpose_sum", (a, b, c), dict(x=x),
                 lambda x: x.transpose(1, 2) * 2 + x.sum(0).transpose(0, 1),
                 lambda x: x.transpose(1, 2) * 2 + x.sum(0).transpose(0, 1),
                 lambda x: x.transpose(0, 2, 1) * 2 + x.sum(0).T, nbytes=_bytes(x, x))


# ---------------------------------------------------------------- fourth held-out families
def mlp_block(m: int, d: int, h: int, rng: np.random.Generator) -> Point:
    """A transformer MLP block: x + (gelu(layernorm(x) @ w1 + b1) @ w2 + b2), x (m, d)."""
    x = _rand(rng, m, d)
    w1, b1 = _rand(rng, d, h, scale=d ** -0.5), _rand(rng, h, scale=0.1)
    w2, b2 = _rand(rng, h, d, scale=h ** -0.5), _rand(rng, d, scale=0.1)

    def rg(x, w1, b1, w2, b2):
        return x + ((x.layernorm() @ w1 + b1).gelu() @ w2 + b2)

    def tf(x, w1, b1, w2, b2):
        import torch
        import torch.nn.functional as F
        y = F.gelu(torch.addmm(b1, F.layer_norm(x, (d,)), w1), approximate="tanh")
        return x + torch.addmm(b2, y, w2)

    def jf(x, w1, b1, w2, b2):
        return x + (_gelu_jax(_layernorm_jax(x) @ w1 + b1) @ w2 + b2)

    return Point("mlp_block", (m, d, h), dict(x=x, w1=w1, b1=b1, w2=w2, b2=b2), rg, tf, jf,
                 flops=4.0 * m * d * h)


def matmul_i8(m: int, k: int, n: int, rng: np.random.Generator) -> Point:
    """int8 activations cast to float32, times a float32 weight (a dequantized product)."""
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = _rand(rng, k, n, scale=k ** -0.5 / 64)

    def tf(a, b):
        import torch
        return a.to(torch.float32) @ b

    def jf(a, b):
        import jax.numpy as jnp
        return a.astype(jnp.float32) @ b

    return Point("matmul_i8", (m, k, n), dict(a=a, b=b), lambda a, b: a.cast("float32") @ b,
                 tf, jf, flops=2.0 * m * k * n)


def conv1d(n: int, c: int, length: int, o: int, ksize: int, stride: int, dilation: int,
           padding: int, groups: int, *, rng: np.random.Generator) -> Point:
    """conv1d (n, c, length) * (o, c / groups, ksize) with stride, dilation, padding, groups."""
    cg = c // groups
    x = _rand(rng, n, c, length)
    w = _rand(rng, o, cg, ksize, scale=(cg * ksize) ** -0.5)
    out = (length + 2 * padding - dilation * (ksize - 1) - 1) // stride + 1
    kw = dict(stride=stride, dilation=dilation, padding=padding, groups=groups)

    def tf(x, w):
        import torch.nn.functional as F
        return F.conv1d(x, w, **kw)

    def jf(x, w):
        import jax
        return jax.lax.conv_general_dilated(x, w, (stride,), [(padding, padding)],
                                            rhs_dilation=(dilation,),
                                            feature_group_count=groups)

    return Point("conv1d", (n, c, length, o, ksize, stride, dilation, padding, groups),
                 dict(x=x, w=w), lambda x, w: x.conv1d(w, **kw), tf, jf,
                 flops=2.0 * n * o * out * cg * ksize)


def norm2(n: int, a: int, b: int, rng: np.random.Generator) -> Point:
    """Normalization over the last two axes of (n, a, b) (layer_norm with shape (a, b))."""
    x = _rand(rng, n, a, b)

    def rg(x):
        dev = x - x.mean(axis=(1, 2), keepdim=True)
        return dev / ((dev * dev).mean(axis=(1, 2), keepdim=True) + 1e-5).sqrt()

    def tf(x):
        import torch.nn.functional as F
        return F.layer_norm(x, (a, b))

    def jf(x):
        return _layernorm_jax(x.reshape(n, a * b)).reshape(n, a, b)

    return Point("norm2", (n, a, b), dict(x=x), rg, tf, jf, nbytes=_bytes(x, x))


def softmax0(n: int, d: int, rng: np.random.Generator) -> Point:
    """softmax over axis 0 of (n, d): a column-wise reduce and a broadcast back."""
    x = _rand(rng, n, d)

    def tf(x):
        import torch
        return torch.softmax(x, 0)

    return Point("softmax0", (n, d), dict(x=x), lambda x: x.softmax(0), tf,
                 lambda x: _softmax_jax(x, 0), nbytes=_bytes(x, x))


def bcast4(a: int, b: int, c: int, d: int, rng: np.random.Generator) -> Point:
    """(x - y) * z: x (a, b, c, d), y (a, 1, 1, d), z (1, b, 1, 1): 1-sized middle axes."""
    x, y, z = _rand(rng, a, b, c, d), _rand(rng, a, 1, 1, d), _rand(rng, 1, b, 1, 1)
    f = lambda x, y, z: (x - y) * z  # noqa: E731
    return Point("bcast4", (a, b, c, d), dict(x=x, y=y, z=z), f, f, f,
                 nbytes=_bytes(x, y, z, x))


_FLOATS = {16: np.float16, 32: np.float32, 64: np.float64}


def elementwise_dt(n: int, bits: int, rng: np.random.Generator) -> Point:
    """sigmoid(x * y + 1.5) * x - tanh(y) on float16 or float64 (`bits`), n elements."""
    dt = _FLOATS[bits]
    x, y = _rand(rng, n).astype(dt), _rand(rng, n).astype(dt)

    def tf(x, y):
        import torch
        return torch.sigmoid(x * y + 1.5) * x - torch.tanh(y)

    def jf(x, y):
        import jax
        import jax.numpy as jnp
        return jax.nn.sigmoid(x * y + 1.5) * x - jnp.tanh(y)

    tol = {"rtol": 1e-2, "atol": 1e-2} if bits == 16 else {"rtol": 1e-9, "atol": 1e-12}
    return Point("elementwise_dt", (n, bits), dict(x=x, y=y),
                 lambda x, y: (x * y + 1.5).sigmoid() * x - y.tanh(), tf, jf,
                 nbytes=_bytes(x, y, x), tol=tol)


def matmul_half(m: int, k: int, n: int, transposed: int, rng: np.random.Generator) -> Point:
    """float16 x @ w (`transposed` 0) or x @ w.T (1, w stored (n, k)): a float32 sum of the
    operands widened (runtime/semantics.py), packed or plain dots by cost (`_dot_cost`'s
    HALF_WIDEN_FMAS)."""
    a = _rand(rng, m, k).astype(np.float16)
    b = _rand(rng, *((n, k) if transposed else (k, n)), scale=k ** -0.5).astype(np.float16)
    f = (lambda a, b: a @ b.T) if transposed else (lambda a, b: a @ b)
    return Point("matmul_half", (m, k, n, transposed), dict(a=a, b=b), f, f, f,
                 flops=2.0 * m * k * n, tol={"rtol": 1e-2, "atol": 1e-2})


FAMILIES: dict[str, Callable[..., Point]] = {
    "attention": attention, "mlp": mlp, "linear_gelu": linear_gelu, "matmul": matmul,
    "conv2d": conv2d, "layernorm": layernorm, "batchnorm": batchnorm, "softmax": softmax,
    "logsumexp": logsumexp, "elementwise": elementwise, "maxpool": maxpool, "add": add,
    "sum": lambda axis, *s, rng: reduce("sum", axis, *s, rng=rng),
    "max": lambda axis, *s, rng: reduce("max", axis, *s, rng=rng),
    **{f"{op}_axes": (lambda mask, *s, rng, op=op: reduce_axes(op, mask, *s, rng=rng))
       for op in ("sum", "max", "mean", "var")},
    "mean": lambda axis, *s, rng: reduce_axes("mean", 1 << axis, *s, rng=rng),
    "var": lambda axis, *s, rng: reduce_axes("var", 1 << axis, *s, rng=rng),
    "sum_int": sum_int, "argmax": argmax, "cumsum": cumsum, "cummax": cummax,
    "pool_max": lambda *s, rng: pool("max", *s, rng=rng),
    "pool_avg": lambda *s, rng: pool("avg", *s, rng=rng),
    "bcast": bcast, "permute_sum": permute_sum, "gather": gather, "gather0": gather0,
    "embedding": embedding, "where": where, "pad": pad,
    "cat": cat, "cat_last": cat_last,
    "linear_act": linear_act, "matmul_t": matmul_t, "matmul_half": matmul_half,
    "attention4": attention4, "attention_dt": attention_dt,
    "conv2d_full": conv2d_full,
    "groupnorm": groupnorm, "transpose_sum": transpose_sum,
    "mlp_block": mlp_block, "matmul_i8": matmul_i8, "conv1d": conv1d, "norm2": norm2,
    "softmax0": softmax0, "softmax3": softmax3, "bcast4": bcast4, "elementwise_dt": elementwise_dt,
    "unary": unary, "unary_sum": unary_sum,
}


def point(family: str, *shape: int, seed: int = 0) -> Point:
    return FAMILIES[family](*shape, rng=np.random.default_rng(seed))
