"""Programs large enough to cross the C renderer's size thresholds (threads from a million loop
iterations, the packed matmul loops, loop interchange), against numpy. The rest of the suite
runs small shapes, which take the single-threaded paths."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rulegrad import Tensor

RNG = np.random.default_rng(0)


def _r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _conv(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))
    return np.einsum("nchwyx,ocyx->nohw", win, w)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


CASES: list[tuple[str, list[np.ndarray], Callable, Callable]] = [
    ("column sum", [_r(2048, 600)], lambda x: x.sum(axis=0), lambda x: x.sum(axis=0)),
    ("row max", [_r(1500, 900)], lambda x: x.max(axis=1), lambda x: x.max(axis=1)),
    ("softmax over rows", [_r(1024, 1024)], lambda x: x.softmax(0), lambda x: _softmax(x, 0)),
    ("standardize columns", [_r(2000, 700)],
     lambda x: (x - x.mean(axis=0)) / (x.var(axis=0, correction=0) + 1e-5).sqrt(),
     lambda x: (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + np.float32(1e-5))),
    ("conv2d padded", [_r(4, 8, 40, 40), _r(16, 8, 3, 3)], lambda x, w: x.conv2d(w, padding=1),
     lambda x, w: _conv(x, w, 1)),
    ("broadcast batched matmul", [_r(1, 100, 64), _r(6, 64, 90)], lambda a, b: a @ b,
     lambda a, b: a @ b),
    ("transposed operands", [_r(300, 200), _r(150, 300)], lambda a, b: a.T @ b.T,
     lambda a, b: a.T @ b.T),
    ("int32 matmul", [RNG.integers(-5, 5, (300, 200)).astype(np.int32),
                      RNG.integers(-5, 5, (200, 100)).astype(np.int32)],
     lambda a, b: a @ b, lambda a, b: a @ b),
    ("mlp with log_softmax", [_r(128, 784), _r(784, 256), _r(256), _r(256, 10)],
     lambda x, w, b, w2: ((x @ w + b).relu() @ w2).log_softmax(),
     lambda x, w, b, w2: _log_softmax(np.maximum(x @ w + b, 0) @ w2)),
]


@pytest.mark.parametrize("name,arrays,rg,ref", CASES, ids=[c[0] for c in CASES])
def test_large_programs_match_numpy(name: str, arrays: list[np.ndarray], rg: Callable,
                                    ref: Callable) -> None:
    got = rg(*(Tensor(a) for a in arrays)).numpy()
    want = ref(*arrays)
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = float(np.abs(want).max()) or 1.0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale)
