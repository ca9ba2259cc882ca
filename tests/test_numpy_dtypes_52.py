"""dt52 (issue 31): ops on bool tensors whose dtype or value was not numpy's, found by adv52.

numpy has no bool loop for square, floor's cousins round, or the shifts: it takes the first
loop a bool casts to safely (int8: `np.square(bool)` is int8, `bool << bool` int8), or its
float16 (`np.round(bool)`). Where numpy has no loop at all (`np.sign(bool)`, `+bool`), the
Tensor refuses with words that name the op and the dtype. numpy is the oracle throughout.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.errors import InvalidArgument

A = np.array([[True, False, True], [False, False, True]])
B = np.array([[True, True, False], [False, True, False]])


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


# each unary op numpy defines on bool, by the Tensor's name and numpy's function
UNARY = [("square", np.square), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
         ("round", np.round), ("abs", np.abs), ("sqrt", np.sqrt), ("exp", np.exp),
         ("logical_not", np.logical_not), ("bitwise_not", np.invert)]


DTS = [np.bool_, np.int8, np.uint8, np.int32, np.float32]


@pytest.mark.parametrize("name,fn,dt", [
    (n, f, d) for n, f in UNARY for d in DTS if not (n == "bitwise_not" and d is np.float32)],
    ids=lambda v: v if isinstance(v, str) else getattr(v, "__name__", ""))
def test_unary_dtype_and_value_are_numpys(name, fn, dt):
    x = (A * 3 - 1).astype(dt) if dt is not np.bool_ else A
    with np.errstate(all="ignore"):
        want = fn(x)
    got = getattr(Tensor(x), name)().numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2 * np.finfo(np.float32).eps)


def test_square_of_bool_is_int8_in_a_graph():
    # the square feeds a sum: an int8 square summed is int64 (numpy's sum of a small int)
    _same((Tensor(A).square() + Tensor(B)).numpy(), np.square(A) + B)
    _same(Tensor(A).square().sum(axis=1).numpy(), np.square(A).sum(axis=1))


@pytest.mark.parametrize("op", [operator.pos, np.sign, operator.neg],
                         ids=["pos", "sign", "neg"])
def test_unary_numpy_refuses_on_bool_is_refused_in_words(op):
    with pytest.raises(TypeError):
        op(A)  # the oracle refuses it
    t = Tensor(A)
    with pytest.raises(TypeError, match="bool"):
        (t.sign() if op is np.sign else op(t)).numpy()


@pytest.mark.parametrize("dt", [np.int8, np.uint16, np.int64, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_positive_is_a_copy_of_numpys_dtype(dt):
    x = np.array([[3, -2, 0], [7, 1, -5]]).astype(dt)
    t = Tensor(x)
    p = +t
    _same(p.numpy(), +x)
    p += 1  # a copy: writing it leaves t as it was (numpy's +x is a new array)
    _same(t.numpy(), x)


SHIFTS = [operator.lshift, operator.rshift]
OPERANDS = {
    "bool": B, "int8": np.array([[1, 2, 0], [3, 1, 2]], np.int8),
    "uint8": np.array([[1, 2, 0], [3, 1, 2]], np.uint8),
    "int32": np.array([[1, 2, 0], [3, 1, 2]], np.int32), "True": True, "1": 1, "2": 2,
}


@pytest.mark.parametrize("op", SHIFTS, ids=["lshift", "rshift"])
@pytest.mark.parametrize("other", list(OPERANDS), ids=list(OPERANDS))
@pytest.mark.parametrize("reverse", [False, True], ids=["bool_first", "bool_second"])
def test_shifts_of_bool_are_numpys(op, other, reverse):
    y = OPERANDS[other]
    x = A
    want = op(y, x) if reverse else op(x, y)
    ty = Tensor(y) if isinstance(y, np.ndarray) else y
    got = op(ty, Tensor(x)) if reverse else op(Tensor(x), ty)
    _same(got.numpy(), np.asarray(want))


@pytest.mark.parametrize("op", SHIFTS, ids=["lshift", "rshift"])
def test_shifts_of_floats_are_refused_in_words(op):
    with pytest.raises(TypeError):
        op(A, 1.5)
    with pytest.raises(TypeError, match="integer"):
        op(Tensor(A), 1.5)
    with pytest.raises(TypeError, match="integer"):
        op(Tensor(A.astype(np.float32)), Tensor(B))


BINARY = [operator.add, operator.mul, operator.truediv, operator.floordiv, operator.mod,
          operator.pow, operator.and_, operator.or_, operator.xor, np.maximum, np.minimum]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", ["bool", "int8", "True", "1", "2"])
def test_binary_ops_on_bool_are_numpys(op, other):
    y = OPERANDS[other]
    with np.errstate(all="ignore"):
        want = np.asarray(op(A, y))
    ty = Tensor(y) if isinstance(y, np.ndarray) else y
    got = Tensor(A).maximum(ty) if op is np.maximum else Tensor(A).minimum(ty) \
        if op is np.minimum else op(Tensor(A), ty)
    _same(got.numpy(), want)


def test_logaddexp_of_bool_is_numpys_float16():
    want = np.logaddexp(A, B)
    got = Tensor(A).logaddexp(Tensor(B)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-3)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "cumsum", "cumprod"])
def test_reductions_of_bool_are_numpys(name):
    for axis in (None, 0, 1) if name[:3] != "cum" else (0, 1):  # (a scan takes an axis)
        want = getattr(np, name)(A, axis=axis)
        got = getattr(Tensor(A), name)(axis=axis).numpy()
        assert got.dtype == want.dtype, (name, axis)
        np.testing.assert_allclose(got, want)


X = np.arange(60, dtype=np.float32).reshape(3, 4, 5) - 30
# a boolean mask among basic indices, as numpy writes it: (index with a mask, value)
MASKED = [
    lambda: ((X[:, 0, 0] > 0, 1), -7.0),             # mask on axis 0, an int after it
    lambda: ((X[:, :, 0] > 0, slice(1, 4)), 2.5),    # a 2-d mask, a slice after it
    lambda: ((0, X[0, :, 0] > -30), 9),              # an int, then a mask on axis 1
    lambda: ((Ellipsis, X[0, 0] % 2 == 0), -1.0),    # the mask on the last axis
    lambda: ((slice(None, None, -2), X[0, :, 0] < -25, None), 4.0),  # a step, a None
    lambda: ((None, X[:, 0, 0] < 0, Ellipsis, 3), 5.0),  # None before the mask
    lambda: ((1, np.zeros(4, bool)), 3.0),           # a mask that selects nothing
    lambda: (([True, False, True], 2, slice(None, 2)), np.float32(8)),  # a list of bools
]


@pytest.mark.parametrize("case", MASKED, ids=[str(i) for i in range(len(MASKED))])
def test_setitem_with_a_mask_among_other_indices_is_numpys(case):
    index, value = case()
    want = X.copy()
    want[index] = value
    t = Tensor(X.copy())
    t[tuple(Tensor(i) if isinstance(i, np.ndarray) else i for i in index)] = value
    _same(t.numpy(), want)
    t = Tensor(X.copy())
    t[index] = Tensor(np.array([value], np.float32))  # a one-element tensor value, as numpy's
    _same(t.numpy(), want)


def test_setitem_with_a_mask_refusals_name_what_is_supported_and_given():
    t = Tensor(X.copy())
    with pytest.raises(IndexError, match="does not match the axes"):
        t[0, Tensor(np.ones(5, bool))] = 1.0  # axis 1 has 4
    with pytest.raises(IndexError, match=r"one boolean mask.*got a tensor of bool, a tensor of"):
        t[Tensor(np.ones(3, bool)), Tensor(np.ones(4, bool))] = 1.0
    with pytest.raises(IndexError, match=r"one boolean mask.*a tensor of int32"):
        t[Tensor(np.ones(3, bool)), Tensor(np.array([0, 1], np.int32))] = 1.0
    with pytest.raises(InvalidArgument, match="one value"):
        t[Tensor(np.ones(3, bool)), 0] = Tensor(np.ones(5, np.float32))


@pytest.mark.parametrize("name,dt", [
    (n, d) for n in ["abs", "floor", "ceil", "trunc", "round", "__pos__"]
    for d in [np.bool_, np.uint8, np.int16] if (n, d) != ("__pos__", np.bool_)],  # (refused)
    ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
def test_an_identity_of_an_int_is_a_copy_as_numpys(name, dt):
    # numpy's floor of an int (abs of a uint, ...) is a new array: writing it leaves x alone
    x = np.array([[1, 0, 1], [0, 1, 1]]).astype(dt)
    t = Tensor(x)
    y, want = getattr(t, name)(), getattr(np, name.strip("_").replace("pos", "positive"))(x)
    y[0, 0] = 0
    want[0, 0] = 0
    _same(y.numpy(), want)
    _same(t.numpy(), x)
