"""Ops over a symbolic size that compute with the size in Python (a roll's shift modulo it,
split points, a window count, an index's wrap, a row count, a pad by it) failed with bare
TypeErrors ('<' not supported between 'UOp' and 'int', int() of a UOp, "cannot use UOp as a
tensor operand"). Each is refused now, naming the op and the shape by its bound values; the
same op on a concrete axis of the same tensor still runs, against torch. And iterating a 0-d
tensor gave [] (Python's fallback through __getitem__): torch and numpy refuse it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor, Variable
from rulegrad.runtime.errors import InvalidArgument

A = np.arange(60, dtype=np.float32).reshape(10, 6) - 20
ROWS = 7  # the bound value of n, the symbolic size of axis 0


def _rows() -> Tensor:
    n = Variable("n", 1, 10).bind(ROWS)
    return Tensor(A).shrink(((0, n), None))


REFUSED = {
    "roll": lambda t: t.roll(2, 0),
    "roll ": lambda t: t.roll(2),
    "split": lambda t: t.split(2, 0),
    "chunk": lambda t: t.chunk(2, 0),
    "unfold": lambda t: t.unfold(0, 2, 1),
    "diagonal": lambda t: t.diagonal(),
    "interpolate": lambda t: t.reshape(1, 1, t.shape[0], 6).interpolate((4, 4)),
    "indexing by a tensor": lambda t: t[Tensor(np.array([0, 2]))],
    "indexing by a tensor ": lambda t: t[[0, 2]],
    "nonzero": lambda t: (t > 0).nonzero(),
    "masked_select": lambda t: t.masked_select(t > 0),
    "as an operand": lambda t: t.sum() / t.numel(),
    "arange": lambda t: Tensor.arange(t.shape[0]),
    "eye": lambda t: Tensor.eye(t.shape[0]),
    "linspace": lambda t: Tensor.linspace(0, 1, t.shape[0]),
    "symbolic amount": lambda t: t.scatter(1, Tensor(np.zeros((10, 1), np.int64)).shrink(
        ((0, t.shape[0]), None)), 5.0),
    "len()": lambda t: len(t),
    "iteration": lambda t: list(t),
}


@pytest.mark.parametrize("op", list(REFUSED))
def test_ops_needing_a_size_as_a_number_refuse_a_symbolic_one(op):
    with pytest.raises(InvalidArgument) as info:
        out = REFUSED[op](_rows())
        if isinstance(out, Tensor):
            out.numpy()
    text = str(info.value)
    assert op.strip() in text and ("n=7" in text or op == "symbolic amount"), text


ALONG_CONCRETE = {  # the same ops along axis 1, which is concrete: they run
    "roll": (lambda t: t.roll(2, 1), lambda x: x.roll(2, 1)),
    "split": (lambda t: t.split(4, 1)[1], lambda x: x.split(4, 1)[1]),
    "chunk": (lambda t: t.chunk(2, 1)[1], lambda x: x.chunk(2, 1)[1]),
    "index": (lambda t: t[:, Tensor(np.array([5, -1, 0]))], lambda x: x[:, [5, -1, 0]]),
    "interpolate": (lambda t: t.reshape(1, t.shape[0], 6).interpolate((4,)),
                    lambda x: torch.nn.functional.interpolate(x.reshape(1, ROWS, 6), (4,),
                                                              mode="linear")),
}


@pytest.mark.parametrize("op", list(ALONG_CONCRETE))
def test_the_same_ops_along_a_concrete_axis_run(op):
    ours, theirs = ALONG_CONCRETE[op]
    want = theirs(torch.from_numpy(A[:ROWS].copy())).numpy()
    np.testing.assert_allclose(ours(_rows()).numpy(), want, rtol=1e-6)


def test_iterating_a_0d_tensor_is_refused_as_torch_and_numpy_do():
    for oracle in (lambda: list(torch.tensor(3.0)), lambda: list(np.float32(3.0).reshape(()))):
        with pytest.raises(TypeError):
            oracle()
    with pytest.raises(TypeError, match="0-d"):
        list(Tensor(3.0))
    rows = list(Tensor(A[:3]))  # rows of a tensor of 1 or more axes, as torch's
    assert len(rows) == 3
    np.testing.assert_array_equal(np.stack([r.numpy() for r in rows]), A[:3])
