"""hunt67 (issue 31): silent wrong answers in the Tensor API, each checked against torch.

- an out-of-range index whose values are known (a list, an array, host data, a realized
  tensor, a constant) is refused, by indexing, gather, scatter and one_hot, as torch
  refuses it; it read 0;
- requires_grad on an int or bool tensor is refused, as torch refuses it;
- a list of numpy scalars keeps their dtype, as torch.tensor infers it.
"""

import numpy as np
import pytest
import torch

from rulegrad import Tensor
from rulegrad.runtime.errors import DtypeError

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _raises_both(ours, theirs) -> None:
    """torch refuses the program, and so do we, with an IndexError."""
    with pytest.raises((IndexError, RuntimeError)):
        theirs()
    with pytest.raises(IndexError, match="out of bounds"):
        ours()


# (index, as ours takes it, and as torch takes it)
OUT_OF_RANGE = [
    (lambda: Tensor([5]), lambda: torch.tensor([5])),
    (lambda: [0, 3], lambda: [0, 3]),
    (lambda: np.array([-4]), lambda: torch.tensor([-4])),
    (lambda: Tensor(5), lambda: torch.tensor(5)),
    (lambda: (slice(None), Tensor([1, 4])), lambda: (slice(None), torch.tensor([1, 4]))),
    (lambda: (Tensor([0]), [9]), lambda: (torch.tensor([0]), [9])),
    (lambda: Tensor(np.array([[0], [7]])), lambda: torch.tensor([[0], [7]])),
]


@pytest.mark.parametrize("case", range(7))
def test_getitem_out_of_range_is_refused(case):
    ours, theirs = OUT_OF_RANGE[case]
    _raises_both(lambda: Tensor(X)[ours()].numpy(), lambda: torch.tensor(X)[theirs()])


def test_getitem_in_range_still_agrees():
    for ours, theirs in [([-3, 2], [-3, 2]), (Tensor([[0], [-1]]), torch.tensor([[0], [-1]])),
                         ((slice(None), np.array([3, -4])), (slice(None), torch.tensor([3, -4]))),
                         (Tensor(np.array([2, 0], np.uint8)), torch.tensor([2, 0]))]:
        np.testing.assert_array_equal(Tensor(X)[ours].numpy(), torch.tensor(X)[theirs].numpy())


def test_a_view_of_a_realized_index_is_checked():
    idx = Tensor([[0, 1], [2, 5]]).realize()
    _raises_both(lambda: Tensor(X[0])[idx.T].numpy(),
                 lambda: torch.tensor(X[0])[torch.tensor([[0, 1], [2, 5]]).T])


@pytest.mark.parametrize("index", [[[0, 4]], [[0, -1]], [[2, 1], [0, 5]]])
def test_gather_out_of_range_is_refused(index):
    x = X[:2, :4]
    ix = np.array(index + [[0, 0]] * (2 - len(index)))
    _raises_both(lambda: Tensor(x).gather(1, Tensor(ix)).numpy(),
                 lambda: torch.tensor(x).gather(1, torch.tensor(ix)))


def test_scatter_and_one_hot_out_of_range_are_refused():
    z, src = np.zeros((2, 3), np.float32), np.ones((1, 2), np.float32)
    for ix in ([[0, 3]], [[-1, 0]]):
        _raises_both(lambda ix=ix: Tensor(z).scatter(1, Tensor(ix), Tensor(src)).numpy(),
                     lambda ix=ix: torch.tensor(z).scatter(1, torch.tensor(ix), torch.tensor(src)))
    for labels in ([0, 3], [-1, 1]):
        _raises_both(lambda v=labels: Tensor(v).one_hot(3).numpy(),
                     lambda v=labels: torch.nn.functional.one_hot(torch.tensor(v), 3))


def test_gather_and_one_hot_in_range_still_agree():
    ix = np.array([[3, 0, 1], [2, 2, 0]])
    np.testing.assert_array_equal(Tensor(X[:2]).gather(1, Tensor(ix)).numpy(),
                                  torch.tensor(X[:2]).gather(1, torch.tensor(ix)).numpy())
    np.testing.assert_array_equal(Tensor([2, 0]).one_hot(3).numpy(),
                                  torch.nn.functional.one_hot(torch.tensor([2, 0]), 3).numpy())


def test_a_computed_index_is_not_read_back():
    """The stated exception (docs/tensor.md): an index computed in the graph is not realized
    to be checked; it reads 0 where it is out of range."""
    idx = Tensor([1, 3]) + 1
    assert Tensor([1.0, 2.0, 3.0])[idx].numpy().tolist() == [3.0, 0.0]


@pytest.mark.parametrize("data", [[1, 2], [True, False], [[1], [2]]])
def test_requires_grad_of_int_or_bool_is_refused(data):
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor(data, requires_grad=True)
    with pytest.raises(DtypeError, match="floating point"):
        Tensor(data, requires_grad=True)
    with pytest.raises(DtypeError, match="floating point"):
        Tensor(data).requires_grad_()
    with pytest.raises(DtypeError, match="floating point"):
        Tensor.arange(3, requires_grad=True)
    Tensor(data).requires_grad_(False)  # (False is no gradient: allowed, as torch's)


LISTS = [
    [np.int8(1), np.int8(-2)],
    [[np.uint8(1)], [np.uint8(200)]],
    [np.float16(1.5), np.float16(2)],
    [np.float16(1.5), 2],
    [np.float16(1.5), 2.5],
    [np.bool_(True), np.bool_(False)],
    [np.int8(3), True],
    [np.int16(300), np.int8(2)],
    [np.float64(0.1), 2],
    [[np.float64(0.1)], [np.float64(0.2)]],
    [np.int8(1), 2.5],
    [np.uint32(4000000000), np.uint32(1)],
    [np.int32(-7), np.int32(2)],
    [[np.float32(1)], [np.float16(2)]],
]


@pytest.mark.parametrize("case", range(len(LISTS)))
def test_a_list_of_numpy_scalars_keeps_their_dtype(case):
    data = LISTS[case]
    want = torch.tensor(data)
    got = Tensor(data)
    assert got.dtype.np == torch.empty(0, dtype=want.dtype).numpy().dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_list_of_uint64_keeps_it():
    """torch.tensor cannot read np.uint64 scalars from a list; numpy's array is the oracle."""
    data = [np.uint64(1), np.uint64(2**64 - 1)]
    got, want = Tensor(data).numpy(), np.array(data)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_python_numbers_keep_the_defaults():
    assert Tensor([1, 2]).dtype.name == "int32"
    assert Tensor([1.0, 2]).dtype.name == "float32"
    assert Tensor([True, 2]).dtype.name == "int32"


@pytest.mark.parametrize("fn, dim", [("cat", -1), ("cat", 1), ("stack", -1), ("stack", 0)])
def test_cat_and_stack_take_torchs_positional_dim(fn, dim):
    """`torch.cat([a, b], -1)`: the dim after the sequence (it was refused: "pass the tensors
    either as one sequence or as arguments"), mixed dtypes promoted as torch's."""
    a, b = np.arange(6, dtype=np.int8).reshape(2, 3), np.ones((2, 3), np.float16)
    got = getattr(Tensor, fn)([Tensor(a), Tensor(b)], dim).numpy()
    want = getattr(torch, fn)([torch.tensor(a), torch.tensor(b)], dim).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_int_clamp_by_a_tensor_bound_stays_int():
    """`where(.., value, 0.0)` for NaN made an int clamp by a tensor bound float64; numpy's
    clip and torch's clamp keep the int dtype. torch's keywords `min=`/`max=` work too."""
    x = np.array([[-7, 3, 9], [0, -2, 5]], np.int32)
    lo = np.array([[-1, 4, 0], [1, -5, 2]], np.int32)
    got = Tensor(x).clamp(Tensor(lo), 5).numpy()
    want = torch.tensor(x).clamp(torch.tensor(lo), torch.tensor(5)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(Tensor(x).clamp(min=-1).numpy(),
                                  torch.tensor(x).clamp(min=-1).numpy())
    np.testing.assert_array_equal(Tensor(x).clip(max=2).numpy(),
                                  torch.tensor(x).clip(max=2).numpy())


def test_torchs_as_methods():
    a, b = np.arange(3, dtype=np.float32).reshape(3, 1), np.zeros((2, 3, 4), np.int8)
    for name in ("expand_as", "type_as"):
        got = getattr(Tensor(a), name)(Tensor(b)).numpy()
        want = getattr(torch.tensor(a), name)(torch.tensor(b)).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(Tensor(a).view_as(Tensor(a.T)).numpy(),
                                  torch.tensor(a).view_as(torch.tensor(a.T)).numpy())


def _write(t, T, how):
    if how == "iadd":
        t[t > 0] += 1
    elif how == "rows":
        m = T(A3[:, :, 0] > 0)
        t[m] = t[m] * 2
    elif how == "broadcast":
        t[T(A3[:, 0, 0] > 0)] = T(np.arange(5, dtype=np.float32))
    elif how == "none":
        t[T(np.zeros((3, 4), bool))] = T(np.zeros((0, 5), np.float32))


A3 = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(np.float32)


@pytest.mark.parametrize("how", ["iadd", "rows", "broadcast", "none"])
def test_mask_write_of_one_value_per_place(how):
    """`t[mask] = values` (and so `t[mask] += 1`): the k-th True place takes values[k], as
    numpy and torch write it; it was refused, taking one value only."""
    ours, theirs = Tensor(A3.copy()), torch.tensor(A3.copy())
    _write(ours, Tensor, how)
    _write(theirs, torch.tensor, how)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_mask_write_of_the_wrong_count_is_refused():
    t = Tensor(A3.copy())
    with pytest.raises(ValueError, match="cannot be written"):
        t[t > 0] = Tensor(np.ones(3, np.float32))
