"""rev66f: review of hunt66 (creation keywords, *_like devices, ints past int64, squeeze/index/to).

Each expected value or refusal is torch's (2.x) or numpy's, computed in the test."""
import numpy as np
import pytest

from rulegrad import Tensor, dtypes

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("x, y", [(2 ** 40, 0), (0, -2 ** 31 - 1), (2 ** 31, True),
                                  (2 ** 63 - 1, -2 ** 63)])
def test_where_of_two_python_ints_past_int32_is_int64(x, y):
    """hunt66 made a Python int past int32 an int64 tensor (Tensor(data), full), as torch and
    numpy choose; `cond.where(2**40, 0)` still chose int32 for two Python scalars and raised
    "cannot be converted to int32 ... torch refuses it too", where torch and numpy give int64."""
    c = [True, False]
    want = torch.where(torch.tensor(c), x, y)
    assert np.where(c, x, y).dtype == np.int64 and want.dtype == torch.int64
    got = Tensor(c).where(x, y)
    assert got.dtype is dtypes.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_where_of_python_ints_past_int64_names_where():
    with pytest.raises((OverflowError, RuntimeError)):
        torch.where(torch.tensor([True]), 2 ** 63, 0)
    with pytest.raises(OverflowError, match="where"):
        Tensor([True]).where(2 ** 63, 0)


def test_full_of_an_int_past_int64_names_full():
    """The refusal named `Tensor` for `full`'s fill value (the helper's caller was assumed)."""
    with pytest.raises((OverflowError, RuntimeError)):
        torch.full((2,), 2 ** 63)
    with pytest.raises(OverflowError, match="^full"):
        Tensor.full((2,), 2 ** 63)


@pytest.mark.parametrize("dims", [(0, -1), (0, 0), (-1, -1)])
def test_squeeze_of_0d_tensor_refuses_a_dim_named_twice(dims):
    """squeeze's tuple refuses an axis named twice (torch's "appears multiple times"), but a
    0-d tensor's shortcut returned it before the check."""
    with pytest.raises(RuntimeError, match="multiple times"):
        torch.tensor(3.0).squeeze(dims)
    with pytest.raises(ValueError, match="twice"):
        Tensor(3.0).squeeze(dims)
    assert Tensor(3.0).squeeze((0,)).shape == tuple(torch.tensor(3.0).squeeze((0,)).shape)


@pytest.mark.parametrize("start, end", [(0, 2 ** 64), (-2 ** 63 - 1, 0)])
def test_linspace_endpoint_past_int64_and_uint64_refused(start, end):
    """linspace's endpoints are torch scalars: an int past them is "int too big to convert"
    there, as hunt66's scalar_int refuses it elsewhere; it was rounded to a float silently."""
    with pytest.raises(OverflowError):
        torch.linspace(start, end, 3)
    with pytest.raises(OverflowError, match="linspace"):
        Tensor.linspace(start, end, 3)


@pytest.mark.parametrize("data", [[np.float64(1e20), 1], [np.float32(1e20), 1],
                                  [np.float64(2.0 ** 63)], [np.float64(-1e19), True],
                                  [[np.float64(1e30)], [2]]])
def test_tensor_of_a_list_with_numpy_floats_past_int64_is_a_float_tensor(data):
    """hunt66 reads a list whose floats reach 2**63 as objects to find ints past int64, and
    asked `type(v) is float` whether it held a float: a numpy float is none, so
    `Tensor([np.float64(1e20), 1])` was "the int 100000000000000000000 fits no int64", where
    torch (and this library before) made a float tensor of it."""
    want = torch.tensor(data)
    assert want.dtype.is_floating_point
    got = Tensor(data)
    assert got.dtype.is_float
    np.testing.assert_array_equal(got.numpy(), want.numpy().astype(got.dtype.np))
