"""Creation functions given an argument of the wrong kind raise a worded error, as torch's do,
never a value: `Tensor.full(shape, None)` was NaN, `Tensor([1, None])` held a NaN, a bool was a
size. Each case is checked against torch raising the same class of error."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor  # noqa: E402

# (ours, torch's, the error both raise, words ours must say)
CASES = {
    "full_none": (lambda: Tensor.full((2, 3), None), lambda: torch.full((2, 3), None),
                  TypeError, "fill_value"),
    "full_str": (lambda: Tensor.full((2,), "a"), lambda: torch.full((2,), "a"),
                 TypeError, "fill_value"),
    "full_like_none": (lambda: Tensor.ones(2).full_like(None),
                       lambda: torch.full_like(torch.ones(2), None), TypeError, "fill_value"),
    "zeros_bool_size": (lambda: Tensor.zeros(True), lambda: torch.zeros(True),
                        (TypeError, ValueError), "shape"),
    "zeros_int_dtype": (lambda: Tensor.zeros(2, dtype=3), lambda: torch.zeros(2, dtype=3),
                        TypeError, "dtype"),
    "arange_none": (lambda: Tensor.arange(None), lambda: torch.arange(None),
                    TypeError, "arange"),
    "arange_none_step": (lambda: Tensor.arange(0, 4, None), lambda: torch.arange(0, 4, None),
                         TypeError, "step"),
    "eye_none": (lambda: Tensor.eye(None), lambda: torch.eye(None), TypeError, "eye"),
    "eye_float": (lambda: Tensor.eye(2.5), lambda: torch.eye(2.5), TypeError, "eye"),
    "eye_negative": (lambda: Tensor.eye(-1), lambda: torch.eye(-1), RuntimeError, "eye"),
    "linspace_none": (lambda: Tensor.linspace(None, 1, 3), lambda: torch.linspace(None, 1, 3),
                      TypeError, "linspace"),
    "linspace_negative": (lambda: Tensor.linspace(0, 1, -1), lambda: torch.linspace(0, 1, -1),
                          (ValueError, RuntimeError), "linspace"),
    "rand_float_size": (lambda: Tensor.rand(2.5), lambda: torch.rand(2.5),
                        (TypeError, ValueError), "shape"),
    "randint_none": (lambda: Tensor.randint(3, low=None, high=2),
                     lambda: torch.randint(None, 2, (3,)), TypeError, "randint"),
    "uniform_none": (lambda: Tensor.uniform(3, low=None),
                     lambda: torch.empty(3).uniform_(None), TypeError, "uniform"),
    "normal_none": (lambda: Tensor.normal(3, mean=None),
                    lambda: torch.empty(3).normal_(None), TypeError, "normal"),
    "list_none": (lambda: Tensor([1.0, None]), lambda: torch.tensor([1.0, None]),
                  (TypeError, RuntimeError), "element"),
    "list_none_dtype": (lambda: Tensor([[1.0], [None]], dtype="float32"),
                        lambda: torch.tensor([[1.0], [None]], dtype=torch.float32),
                        TypeError, "element"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bad_argument_is_a_worded_error(name):
    ours, theirs, error, words = CASES[name]
    with pytest.raises(error):
        theirs()  # (the oracle refuses it too)
    with pytest.raises(error, match=words):
        ours().numpy()


def test_good_arguments_still_make_tensors():
    """The checks pass what torch takes: numpy scalars, a one-element tensor, NaN, big ints."""
    np.testing.assert_array_equal(Tensor.full((2,), np.float32(2.5)).numpy(), [2.5, 2.5])
    np.testing.assert_array_equal(Tensor.full((2,), Tensor(1.5)).numpy(), [1.5, 1.5])
    assert np.isnan(Tensor.full((1,), float("nan")).numpy()).all()
    np.testing.assert_array_equal(Tensor.arange(np.int64(3)).numpy(), [0, 1, 2])
    np.testing.assert_array_equal(Tensor.eye(np.int32(2)).numpy(), np.eye(2))
    # (an int past int64 makes numpy's list an object array: walked, and let through)
    np.testing.assert_array_equal(Tensor([2 ** 70], dtype="float32").numpy(),
                                  np.array([2 ** 70], np.float32))


def test_a_variable_as_a_fill_value_is_a_worded_error():
    """A Variable is a size, not a value: `full` refuses it by name (it ended in float()'s bare
    TypeError from deep in the constant's conversion, under a comment that let it through)."""
    from rulegrad import Variable

    n = Variable("n", 1, 10).bind(3)
    with pytest.raises(TypeError, match="full: fill_value must be a real number"):
        Tensor.full((2,), n)
