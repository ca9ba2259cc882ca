"""Smoke test of the public API: a small program end to end, checked against numpy, in ~1 s."""

import numpy as np

import rulegrad
from rulegrad import Tensor, dtypes


def test_readme_example():
    a = Tensor([[1.0, 2.0], [3.0, 4.0]])
    ref = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    np.testing.assert_allclose((a @ a).relu().sum(axis=1).numpy(), np.maximum(ref @ ref, 0).sum(1))


def test_small_mlp_against_numpy():
    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8, 16), (16, 3)))
    out = (Tensor(x) @ Tensor(w1)).relu().matmul(Tensor(w2)).log_softmax()
    h = np.maximum(x @ w1, 0) @ w2
    ref = h - h.max(-1, keepdims=True)
    ref = ref - np.log(np.exp(ref).sum(-1, keepdims=True))
    assert out.shape == (4, 3) and out.dtype is dtypes.float32
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_public_surface():
    assert rulegrad.Tensor is Tensor
    t = Tensor.arange(6).reshape(2, 3)
    assert t.shape == (2, 3) and t.ndim == 2 and t.numel() == 6 and t.dtype is dtypes.int32
    assert t.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert t[1, -1].item() == 5 and t.sum().dtype is dtypes.int64
    assert (t[:, ::-2] * 2).tolist() == [[4, 0], [10, 6]]
    assert Tensor.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert Tensor.stack(t, t).cat(t[None], dim=0).shape == (3, 2, 3)
    assert ((t > 2) == (t >= 3)).numpy().all()
    assert t.cast("float16").mean().item() == 2.5 and t.var().dtype is dtypes.float64


def test_realize_and_assign():
    w = Tensor.zeros(3).contiguous().realize()
    for step in range(3):
        w.assign(w + step).realize()
    assert w.tolist() == [3.0, 3.0, 3.0]
