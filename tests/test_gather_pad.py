"""A read whose value feeds another read's offset (gather, tensor indices, an embedding lookup:
kernel.rules' pick_load) under a PAD (pad, cat, flip then pad, shrink then pad) reads its index
buffer only where the pad's mask holds (issue 31: rules/analyses.py `unmask` substituted the
index load's masked offset with the plain one, so the C kernel read the index buffer past its
end in the pad's rows).

Oracles: numpy for the values, bit for bit; the kernel interpreter (RULEGRAD_BACKEND=interp),
which raises on any read out of bounds, for the reads. Both schedulers, index dtypes int32,
int64 and uint8, tiny, prime and tall shapes, and a pad of 10^6 rows (where an unguarded read
of the old C kernel could fault)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

INDEX_DTYPES = ["int32", "int64", "uint8"]
SHAPES = [(1, 1), (3, 4), (7, 13), (257, 3)]


@pytest.fixture(params=[(b, s) for b in ("c", "interp") for s in ("rangeify", "kernelize")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def env(request, monkeypatch):
    backend, scheduler = request.param
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    return request.param


def _data(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32)


def _index(n: int, shape: tuple[int, ...], dt: str, seed: int = 1) -> np.ndarray:
    """In-range indices into an axis of n, in dtype dt."""
    return np.random.default_rng(seed).integers(0, n, shape).astype(dt)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()


def _np_pad(a: np.ndarray, pads) -> np.ndarray:
    return np.pad(a, pads, constant_values=0)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dt", INDEX_DTYPES)
@pytest.mark.parametrize("axis", [0, 1])
def test_gather_then_pad(env, shape, dt, axis):
    x = _data(shape)
    i = _index(shape[axis], (shape[0], 2) if axis == 1 else (2, shape[1]), dt)
    pads = ((0, 2), (1, 3))
    got = Tensor(x).gather(axis, Tensor(i)).pad(pads).numpy()
    _same(got, _np_pad(np.take_along_axis(x, i.astype(np.int64), axis), pads))


@pytest.mark.parametrize("dt", INDEX_DTYPES)
def test_issue_example(env, dt):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([[0, 3], [1, 2], [3, 3]], dtype=dt)
    got = Tensor(x).gather(1, Tensor(i)).pad(((0, 2), (0, 0))).numpy()
    _same(got, _np_pad(np.take_along_axis(x, i.astype(np.int64), 1), ((0, 2), (0, 0))))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dt", INDEX_DTYPES)
def test_tensor_index_then_pad(env, shape, dt):
    x = _data(shape)
    i = _index(shape[0], (5,), dt)
    got = Tensor(x)[Tensor(i)].pad(((2, 3), (0, 1))).numpy()
    _same(got, _np_pad(x[i.astype(np.int64)], ((2, 3), (0, 1))))


@pytest.mark.parametrize("dt", INDEX_DTYPES)
def test_embedding_then_pad(env, dt):
    table = _data((11, 6))
    ids = _index(11, (3, 7), dt)  # a batch of 3 sequences of 7 token ids
    pads = ((0, 1), (2, 2), (0, 0))
    got = Tensor(table)[Tensor(ids)].pad(pads).numpy()
    _same(got, _np_pad(table[ids.astype(np.int64)], pads))


@pytest.mark.parametrize("dt", INDEX_DTYPES)
def test_gather_then_cat(env, dt):
    x = _data((5, 7))
    i = _index(7, (5, 3), dt)
    other = _data((4, 3), seed=2)
    g = Tensor(x).gather(1, Tensor(i))
    got = g.cat(Tensor(other), dim=0).numpy()
    want = np.concatenate([np.take_along_axis(x, i.astype(np.int64), 1), other], axis=0)
    _same(got, want)
    got = Tensor(other[:1].repeat(5, 0)).cat(g, dim=1).numpy()
    want = np.concatenate([other[:1].repeat(5, 0), np.take_along_axis(x, i.astype(np.int64), 1)], 1)
    _same(got, want)


@pytest.mark.parametrize("dt", INDEX_DTYPES)
def test_gather_flip_pad_and_shrink_pad(env, dt):
    x = _data((6, 5))
    i = _index(5, (6, 4), dt)
    want_g = np.take_along_axis(x, i.astype(np.int64), 1)
    got = Tensor(x).gather(1, Tensor(i)).flip(0).pad(((3, 1), (0, 2))).numpy()
    _same(got, _np_pad(want_g[::-1], ((3, 1), (0, 2))))
    got = Tensor(x).gather(1, Tensor(i)).shrink(((1, 4), (1, 3))).pad(((2, 2), (1, 0))).numpy()
    _same(got, _np_pad(want_g[1:4, 1:3], ((2, 2), (1, 0))))


def test_large_pad(env):
    x = _data((3, 4))
    i = np.array([[0, 3], [1, 2], [3, 3]], dtype=np.int64)
    rows = 10**6
    got = Tensor(x).gather(1, Tensor(i)).pad(((0, rows), (0, 0))).numpy()
    want = _np_pad(np.take_along_axis(x, i, 1), ((0, rows), (0, 0)))
    _same(got, want)


@pytest.mark.parametrize("dt", INDEX_DTYPES)
def test_two_tensor_indices_then_pad(env, dt):
    x = _data((6, 5))
    i, j = _index(6, (4,), dt), _index(5, (4,), dt, seed=3)
    got = Tensor(x)[Tensor(i), Tensor(j)].pad(((2, 5),)).numpy()
    _same(got, _np_pad(x[i.astype(np.int64), j.astype(np.int64)], ((2, 5),)))


@pytest.mark.parametrize("dt", INDEX_DTYPES)
def test_float16_gather_then_pad(env, dt):
    x = _data((5, 7)).astype(np.float16)
    i = _index(7, (5, 3), dt)
    got = Tensor(x).gather(1, Tensor(i)).pad(((1, 4), (0, 1))).numpy()
    _same(got, _np_pad(np.take_along_axis(x, i.astype(np.int64), 1), ((1, 4), (0, 1))))


def test_gather_by_padded_index(env):
    """The index tensor itself padded (its pad rows pick element 0), then the result padded."""
    x = _data((6, 5))
    i = _index(5, (4, 3), "int64")
    pi = _np_pad(i, ((1, 1), (0, 0)))
    got = Tensor(x).gather(1, Tensor(i).pad(((1, 1), (0, 0)))).pad(((0, 3), (2, 0))).numpy()
    _same(got, _np_pad(np.take_along_axis(x, pi, 1), ((0, 3), (2, 0))))
