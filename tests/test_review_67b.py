"""rev67b: review of hunt67 (issue 31: known out-of-range indices refused, requires_grad on
floats only, numpy scalars' dtypes in lists, mask writes of several values), each against numpy
or torch."""

import numpy as np
import pytest
import torch

import rulegrad
from rulegrad import Tensor

X = np.arange(5, dtype=np.float32)


def test_a_jitted_step_indexing_with_its_argument_still_replays():
    """The bounds check read the index argument back to Python inside the step (a host read),
    which refused every jitted step that indexes, gathers or one_hots with an argument (an
    embedding lookup, a loss by labels): they ran unreplayed. Values against numpy."""
    x = Tensor(X).realize()

    @rulegrad.jit
    def step(x, idx):
        return x[idx] * 2 + x.gather(0, idx) + idx.one_hot(5).sum(1)

    for i in range(6):
        ix = np.array([i % 5, 4, 0])
        got = step(x, Tensor(ix).realize()).numpy()
        want = X[ix] * 3 + 1
        np.testing.assert_array_equal(got, want)
    assert step.refused == [] and step.replays == 3


def test_an_empty_constant_index_is_no_out_of_range_index():
    """A constant of no element (`full((0,), 7)`) indexes nothing, as torch's: its one stored
    value was read and refused."""
    for shape in [(0,), (2, 0)]:
        got = Tensor(X)[Tensor.full(shape, 7, dtype="int32")].numpy()
        want = torch.tensor(X)[torch.full(shape, 7)].numpy()
        assert got.shape == want.shape
        got = Tensor(X[None].repeat(2, 0)).gather(1, Tensor.full(shape[:1] + (0,), 7,
                                                                 dtype="int32")).numpy()
        assert got.shape == torch.zeros(2, 5).gather(
            1, torch.full(shape[:1] + (0,), 7)).shape


def test_nll_loss_ignores_its_ignore_index_and_refuses_other_labels_out_of_range():
    """torch's `nll_loss(ignore_index=-100)` with -100 among the labels: the gathers' new
    bounds check refused -100 as an index (IndexError), where torch ignores it; a label out of
    range other than ignore_index is still refused, as torch refuses it."""
    import torch.nn.functional as F

    lp = np.log(np.random.default_rng(1).dirichlet(np.ones(4), 5)).astype(np.float32)
    w = np.array([1.0, 2.0, 0.5, 3.0], np.float32)
    y = np.array([1, -100, 3, 0, -100])
    for weight in (None, w):
        got = Tensor(lp).nll_loss(Tensor(y), None if weight is None else Tensor(weight),
                                  ignore_index=-100).numpy()
        want = F.nll_loss(torch.tensor(lp), torch.tensor(y), None if weight is None else
                          torch.tensor(weight), ignore_index=-100).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
    bad = np.array([1, -100, 4, 0, 0])
    with pytest.raises((IndexError, RuntimeError)):
        F.nll_loss(torch.tensor(lp), torch.tensor(bad), ignore_index=-100)
    with pytest.raises(IndexError, match="out of bounds"):
        Tensor(lp).nll_loss(Tensor(bad), ignore_index=-100).numpy()


def test_a_numpy_scalar_deep_in_a_nested_list_sets_its_dtype():
    """The list walker reads each nesting level at once (it looped in Python per row, which
    made a 100000-row list twice as slow to read): a numpy scalar in the last row of the
    deepest level, or among tuples, still sets the dtype, as torch.tensor infers it."""
    for data in ([[[1.0, 2.0]], [[3.0, np.float64(4)]]],
                 [[1.0, 2.0], (3.0, np.float16(4))],
                 [[[np.int8(1)], [2]], [[3], [4]]],
                 [[[True]], [[np.bool_(False)]]]):
        want = torch.tensor(data)
        got = Tensor(data)
        want_dt = torch.empty(0, dtype=want.dtype).numpy().dtype
        assert got.dtype.np == (np.dtype(np.int32) if want_dt == np.int64 else want_dt), data
        np.testing.assert_array_equal(got.numpy(), want.numpy())
