"""Invalid Tensor arguments raise ValueError or IndexError at the call, naming the shapes."""

import numpy as np
import pytest

from rulegrad import Tensor


def t(*shape: int, dtype: str = "float32") -> Tensor:
    return Tensor(np.zeros(shape, dtype=dtype))


def raises(exc, *fragments):
    """pytest.raises that also checks the message mentions each fragment (e.g. a shape)."""
    class _Check:
        def __enter__(self):
            self.ctx = pytest.raises(exc)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *args):
            suppressed = self.ctx.__exit__(*args)
            message = str(self.info.value)
            for fragment in fragments:
                assert str(fragment) in message, f"{fragment!r} not in {message!r}"
            return suppressed
    return _Check()


def test_reshape_to_wrong_size():
    with raises(ValueError, (2, 3), (4, 2)):
        t(2, 3).reshape(4, 2)


def test_reshape_with_two_minus_ones():
    with raises(ValueError, (2, 3), (-1, -1)):
        t(2, 3).reshape(-1, -1)


def test_reshape_minus_one_that_does_not_divide():
    with raises(ValueError, (2, 3), (4, -1)):
        t(2, 3).reshape(4, -1)


def test_permute_not_a_permutation():
    with raises(ValueError, (0, 0, 1), (2, 3, 4)):
        t(2, 3, 4).permute(0, 0, 1)


def test_permute_wrong_length():
    with raises(ValueError, (1, 0), (2, 3, 4)):
        t(2, 3, 4).permute(1, 0)


def test_negative_pad_cutting_more_than_the_axis():
    # a negative pad cuts (tinygrad's and torch's meaning); cutting past the axis is an error
    with raises(ValueError, (2, 3), "cuts more than"):
        t(2, 3).pad(((0, 0), (-2, -2)))


def test_pad_wrong_number_of_axes():
    with raises(ValueError, (2, 3)):
        t(2, 3).pad(((1, 1),))


def test_shrink_out_of_range():
    with raises(ValueError, (2, 3), "(0, 4)"):
        t(2, 3).shrink(((0, 2), (0, 4)))


def test_shrink_start_after_end():
    with raises(ValueError, (2, 3), "(2, 1)"):
        t(2, 3).shrink(((2, 1), None))


def test_expand_of_a_non_one_dim():
    with raises(ValueError, (2, 3), (2, 4)):
        t(2, 3).expand(2, 4)


def test_expand_to_fewer_dims():
    with raises(ValueError, (2, 3), (3,)):
        t(2, 3).expand(3)


def test_matmul_mismatched_dims():
    with raises(ValueError, (2, 3), (4, 5)):
        t(2, 3) @ t(4, 5)


def test_matmul_mismatched_batch():
    with raises(ValueError, (2, 1, 3), (3, 3, 5)):
        t(2, 1, 3).matmul(t(3, 3, 5))


def test_matmul_of_a_scalar():
    with raises(ValueError, "()", (3,)):
        t() @ t(3)


def test_broadcasting_incompatible_shapes():
    with raises(ValueError, (2, 3), (4,)):
        t(2, 3) + t(4)


def test_where_incompatible_shapes():
    with raises(ValueError, (2,), (3,)):
        t(2, dtype="bool").where(t(3), 0.0)


@pytest.mark.parametrize("call", [
    lambda x: x.sum(axis=2), lambda x: x.max(axis=-3), lambda x: x.mean(axis=(0, 5)),
    lambda x: x.softmax(axis=2), lambda x: x.flip(2), lambda x: x.transpose(0, 2),
])
def test_axis_out_of_range(call):
    with raises(IndexError, (2, 3)):
        call(t(2, 3))


def test_repeated_axis():
    with raises(ValueError, (2, 3)):
        t(2, 3).sum(axis=(1, -1))


@pytest.mark.parametrize("index", [2, -3, (0, 3), (slice(None), -4)])
def test_index_out_of_range(index):
    with raises(IndexError, (2, 3)):
        t(2, 3)[index]


def test_too_many_indices():
    with raises(IndexError, (2, 3)):
        t(2, 3)[0, 0, 0]


def test_two_ellipses():
    with raises(IndexError, "ellipsis"):
        t(2, 3)[..., 0, ...]


def test_unknown_dtype_name():
    with raises(ValueError, "float128"):
        t(2).cast("float128")
    with raises(ValueError, "bfloat"):
        Tensor([1.0], dtype="bfloat")


def test_cat_mismatched_shapes():
    with raises(ValueError, (2, 3), (2, 4)):
        Tensor.cat(t(2, 3), t(2, 4), dim=0)


def test_cat_mismatched_ndim():
    with raises(ValueError, (2, 3), (3,)):
        t(2, 3).cat(t(3))


def test_stack_mismatched_shapes():
    with raises(ValueError, (2, 3), (3, 2)):
        Tensor.stack(t(2, 3), t(3, 2))


def test_item_of_many_elements():
    with raises(ValueError, (2, 3)):
        t(2, 3).item()


def test_item_of_no_elements():
    with raises(ValueError, (0,)):
        t(0).item()


def test_assign_to_a_lazy_tensor():
    # accepted (tinygrad's assign takes it; torch's copy_ into a result too): the lazy value
    # is realized into a buffer of its own first, as __setitem__'s target is
    src = t(2, 3)
    lazy = src + 1
    assert lazy.assign(src * 2) is lazy
    np.testing.assert_array_equal(lazy.numpy(), src.numpy() * 2)


def test_assign_wrong_shape_or_dtype():
    target = t(2, 3).realize()
    with raises(ValueError, (2, 3), (3, 2)):
        target.assign(t(3, 2))
    with raises(ValueError, "float32", "int32"):
        target.assign(t(2, 3, dtype="int32"))


def test_negative_shape_in_creation():
    with raises(ValueError, (2, -1)):
        Tensor.zeros(2, -1)


def test_unknown_backend(monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "gpu")
    with raises(ValueError, "gpu", "oracle"):
        (t(2) + 1).numpy()


def test_roll_needs_one_shift_per_dim():
    # torch raises RuntimeError here; a single shift is not spread over several dims
    with raises(RuntimeError, "one shift per dim", (1,), (0, 1)):
        t(3, 3).roll(shifts=1, dims=(0, 1))
    with raises(RuntimeError, "one shift per dim", (1, 2), (0,)):
        t(10).roll(shifts=(1, 2), dims=0)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(Tensor(a).roll((1, -1), (0, 1)).numpy(),
                                  np.roll(a, (1, -1), (0, 1)))
