"""gather and indexing by tensors read one element per output (rules/kernel.rules' pick_load):
the one-hot sum over the gathered axis is folded into a load at the index.

Values against numpy (take_along_axis, fancy indexing) at tiny, prime, batch-1, tall and skinny
shapes, along each axis, x of float (NaN, -0.0, inf), float16, int and bool dtypes, indices of
several int dtypes, broadcast indices, on the C backend and the kernel interpreter; indices
out of range give the sum's start (0, -0.0 for floats: defined, and never a read out of
bounds); the kernels have no reduce over the gathered axis; gradients (a scatter-add, repeated
indices included) against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor
from rulegrad.runtime.ops import Ops

POOL = [-0.0, 0.0, np.nan, np.inf, -np.inf, 1.5, -2.0, 3.25]
SHAPES = [(1, 1), (7, 13), (1, 50), (257, 3), (3, 257)]


@pytest.fixture(params=["c", "interp"])
def backend(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)
    return request.param


def _data(shape: tuple[int, ...], dt: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dt).kind in "iu":
        return rng.integers(-100 if np.dtype(dt).kind == "i" else 0, 100, shape).astype(dt)
    return np.array(POOL, dtype=dt)[rng.integers(0, len(POOL), shape)]


def _same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values and dtypes, NaN where NaN is, the sign of every zero."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f":
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


def _reduces(*ts: Tensor) -> list[int]:
    """The sizes of the reduce ranges of the kernels computing ts."""
    sizes = []
    for item in ts[0].schedule(*ts[1:]):
        for n in item.ast.toposort():
            if n.op is Ops.REDUCE:
                sizes += [int(r.src[0].arg) for r in n.src[1:] if r.op is Ops.RANGE]
    return sizes


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("axis", [0, 1])
def test_gather_values(backend, shape, axis):
    x = _data(shape, "float32")
    k = 5
    ishape = tuple(k if d == axis else s for d, s in enumerate(shape))
    i = np.random.default_rng(1).integers(0, shape[axis], ishape).astype(np.int32)
    _same(Tensor(x).gather(axis, Tensor(i)).numpy(), np.take_along_axis(x, i, axis))


@pytest.mark.parametrize("dt", ["float16", "float64", "int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("idt", ["int8", "int16", "int64", "uint8", "uint32"])
def test_gather_dtypes(dt, idt):
    x = _data((6, 11), dt, seed=2)
    i = np.random.default_rng(3).integers(0, 11, (6, 4)).astype(idt)
    _same(Tensor(x).gather(1, Tensor(i)).numpy(), np.take_along_axis(x, i, 1))


def test_gather_three_dims_and_smaller_index(backend):
    # torch's gather takes an index smaller than x off the gathered axis (a corner of x)
    x = _data((4, 9, 5), "float32", seed=4)
    i = np.random.default_rng(5).integers(0, 9, (3, 7, 2)).astype(np.int64)
    want = np.take_along_axis(x[:3, :, :2], i, 1)
    _same(Tensor(x).gather(1, Tensor(i)).numpy(), want)


def test_out_of_range_index_reads_zero(backend):
    # an index known before the kernel is refused, as torch refuses it (hunt67); one computed
    # in the graph (`Tensor(i) * 1`) gives 0 as docs/tensor.md says (+0.0 for floats: the
    # pick's sum starts from -0.0, which gathers masks; tests/test_issue31_leftovers.py), and
    # the kernel reads no memory outside x
    x = _data((3, 5), "float32", seed=6)
    i = np.array([[0, 5, -1, 4], [2**31 - 1, -2**31, 3, 1], [4, 4, 6, 0]], np.int32)
    with pytest.raises(IndexError, match="out of bounds"):
        Tensor(x).gather(1, Tensor(i))
    inside = (i >= 0) & (i < 5)
    want = np.where(inside, np.take_along_axis(x, np.where(inside, i, 0), 1), np.float32(0.0))
    _same(Tensor(x).gather(1, Tensor(i) * 1).numpy(), want)
    xi = _data((3, 5), "int32", seed=6)
    wanti = np.where(inside, np.take_along_axis(xi, np.where(inside, i, 0), 1), 0)
    _same(Tensor(xi).gather(1, Tensor(i) * 1).numpy(), wanti.astype(np.int32))


@pytest.mark.parametrize("shape", [(1, 1), (13, 7), (50000, 8)])
def test_tensor_index_rows(backend, shape):
    # an embedding lookup: rows of a table at a (batch, seq) of indices, negatives from the end
    w = _data(shape, "float32", seed=7)
    i = np.random.default_rng(8).integers(-shape[0], shape[0], (3, 5)).astype(np.int32)
    _same(Tensor(w)[Tensor(i)].numpy(), w[i])


def test_two_tensor_indices_broadcast(backend):
    x = _data((6, 7, 3), "float32", seed=9)
    rng = np.random.default_rng(10)
    a, b = rng.integers(-6, 6, (4, 1)), rng.integers(0, 7, (1, 5))
    a, b = a.astype(np.int32), b.astype(np.int64)
    _same(Tensor(x)[Tensor(a), Tensor(b)].numpy(), x[a, b])
    _same(Tensor(x)[:, Tensor(b[0])].numpy(), x[:, b[0]])


def test_no_reduce_over_the_gathered_axis():
    # counted work: a gather along an axis of 997 and a lookup of 4096 rows of a 5000-row table
    # read one element per output, so no kernel reduces over 997 or 5000 elements
    x = Tensor(_data((3, 997), "float32"))
    i = Tensor(np.random.default_rng(11).integers(0, 997, (3, 64)).astype(np.int32))
    w = Tensor(_data((5000, 16), "float32"))
    j = Tensor(np.random.default_rng(12).integers(0, 5000, (4096,)).astype(np.int32))
    # (the sum of the gathered 3 x 64 is the one reduce left, over its own two axes)
    assert sorted(_reduces(x.gather(1, i), w[j], x.gather(1, i).sum())) == [3, 64]


def test_user_table_is_memory():
    # the folded schedule is not replayed over a user's table that only looks like positions
    # (the schedule cache keys on which buffers are Positions)
    x = _data((4, 6), "float32", seed=13)
    i = np.array([[1], [0], [5], [2]], np.int32)
    _same(Tensor(x).gather(1, Tensor(i)).numpy(), np.take_along_axis(x, i, 1))
    table = np.array([5, 4, 3, 2, 1, 0], np.int32)
    hot = Tensor(i) == Tensor(table).reshape(1, 6)
    got = hot.where(Tensor(x), 0.0).sum(1, keepdim=True).numpy()
    want = np.where(i == table.reshape(1, 6), x, 0).sum(1, keepdims=True)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_gradient_repeated_indices(axis):
    rng = np.random.default_rng(14)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    ishape = (9, 7) if axis == 0 else (5, 9)
    i = rng.integers(0, x.shape[axis], ishape).astype(np.int64)
    i.flat[:3] = i.flat[0]  # repeats: their gradients add
    g = rng.standard_normal(ishape).astype(np.float32)
    t = Tensor(x, requires_grad=True)
    (t.gather(axis, Tensor(i)) * Tensor(g)).sum().backward()
    tt = torch.tensor(x, requires_grad=True)
    (tt.gather(axis, torch.tensor(i)) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_index_gradient_repeated_rows():
    rng = np.random.default_rng(15)
    w = rng.standard_normal((11, 4)).astype(np.float32)
    i = np.array([[3, 3, 0], [10, 3, -1]], np.int64)
    g = rng.standard_normal((2, 3, 4)).astype(np.float32)
    t = Tensor(w, requires_grad=True)
    (t[Tensor(i)] * Tensor(g)).sum().backward()
    tt = torch.tensor(w, requires_grad=True)
    (tt[torch.tensor(i)] * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_gather_along_a_symbolic_axis():
    # the position table of a symbolic axis is its maximum's, shrunk to the bound size (no
    # signed zeros: the symbolic axis's own mask sums a picked -0.0 with +0.0, before and after)
    from rulegrad import Variable

    full = np.random.default_rng(16).standard_normal((3, 10)).astype(np.float32)
    for v in (1, 4, 10):
        t = Tensor(full).shrink((None, (0, Variable("n", 1, 10).bind(v))))
        i = np.random.default_rng(v).integers(0, v, (3, 5)).astype(np.int32)
        _same(t.gather(1, Tensor(i)).numpy(), np.take_along_axis(full[:, :v], i, 1))
