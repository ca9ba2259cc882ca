"""The Tensor API a day-one user reaches for: item assignment, boolean-mask indexing,
float()/int()/bool(), and a repr that shows values. Every result is checked against numpy
doing the same thing to a copy."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime import schedule
from rulegrad.runtime.errors import InvalidArgument

A = np.arange(4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5) - 50

# (index, value) pairs; the value is broadcast to what the index reads
SETITEMS = [
    ((1,), 7.0),
    ((slice(1, 3),), -2.5),
    ((-1, slice(None, None, 2)), np.arange(5, dtype=np.float32)),
    ((slice(None, None, -2), 1, slice(4, 0, -3)), np.array([[1.0, 2.0]], np.float32)),
    ((Ellipsis, 0), np.arange(6, dtype=np.float32)),
    ((slice(None), None, slice(2, 5)), np.ones((4, 1, 3, 1), np.float32)),
    ((0, slice(10, 20)), 3.0),  # reads nothing: writes nothing
    ((slice(1, None, 3), slice(0, 6, 4), -2), np.array([[9.0, 8.0]], np.float32)),
    ((2, 3, 4), 1e6),
    ((slice(None),), 0.5),
]


@pytest.mark.parametrize("index,value", SETITEMS, ids=[repr(i) for i, _ in SETITEMS])
def test_setitem_matches_numpy(index, value):
    want = A.copy()
    want[index] = value
    t = Tensor(A.copy())
    t[index] = Tensor(value) if isinstance(value, np.ndarray) else value
    np.testing.assert_array_equal(t.numpy(), want)


def test_setitem_casts_the_value_like_numpy():
    a = np.arange(10, dtype=np.int32)
    t = Tensor(a.copy())
    t[2:5] = 7.9  # numpy truncates a float into an int array
    t[-1] = True
    want = a.copy()
    want[2:5] = 7.9
    want[-1] = True
    np.testing.assert_array_equal(t.numpy(), want)
    assert t.dtype.name == "int32"


def test_setitem_from_a_view_of_itself_reads_before_writing():
    """numpy reads the right side whole before writing: overlapping shifts stay right."""
    for index, source in [((slice(1, None),), (slice(None, -1),)),
                          ((slice(None, -1),), (slice(1, None),)),
                          ((slice(None, None, -1),), (slice(None),))]:
        want = A.copy()
        want[index] = want[source].copy()
        t = Tensor(A.copy())
        t[index] = t[source] * 1
        np.testing.assert_array_equal(t.numpy(), want)
        t = Tensor(A.copy())
        t[index] = t[source]
        np.testing.assert_array_equal(t.numpy(), want)


def test_setitem_on_a_lazy_tensor_realizes_it_first():
    t = Tensor(A) * 2
    t[1, 2] = -1.0
    want = A * 2
    want[1, 2] = -1.0
    np.testing.assert_array_equal(t.numpy(), want)


def test_setitem_readers_follow_assign_semantics():
    """The write is an assign: a graph built before it, over the realized t or over t's lazy
    value, keeps the values it had when it was built (torch's; tinygrad's
    test_assign_corealize_order_independent); t itself shows the write."""
    lazy = Tensor(A) + 0
    before_lazy = lazy * 2  # built from the lazy graph
    t = Tensor(A.copy())
    reader = t * 2  # built from the realized buffer
    kept = (t * 2).realize()
    t[0] = 0.0
    lazy[0] = 0.0
    want = A.copy()
    want[0] = 0.0
    np.testing.assert_array_equal(reader.numpy(), A * 2)
    np.testing.assert_array_equal(kept.numpy(), A * 2)
    np.testing.assert_array_equal(before_lazy.numpy(), A * 2)
    np.testing.assert_array_equal(lazy.numpy(), want)


def test_setitem_with_a_boolean_mask():
    for mask_of in (lambda a: a > 10, lambda a: (a > 0).all(axis=2), lambda a: a[:, 0, 0] < 0):
        want = A.copy()
        m = mask_of(want)
        want[m] = -7
        t = Tensor(A.copy())
        t[mask_of(t) if callable(mask_of) else m] = -7
        np.testing.assert_array_equal(t.numpy(), want)
    t = Tensor(A.copy())
    t[Tensor(A > 0)] = Tensor([0.25])  # a one-element tensor value
    want = A.copy()
    want[A > 0] = 0.25
    np.testing.assert_array_equal(t.numpy(), want)


def test_setitem_errors_are_clear():
    t = Tensor(A.copy())
    with pytest.raises(InvalidArgument, match="could not broadcast a value of shape"):
        t[0] = Tensor(np.ones((2, 2), np.float32))
    with pytest.raises(IndexError, match="int tensor indices are not supported"):
        t[Tensor([0, 1])] = 1.0
    with pytest.raises(IndexError, match="out of bounds"):
        t[9] = 1.0
    with pytest.raises(IndexError, match="does not match the tensor of shape"):
        t[Tensor(np.ones(3, bool))] = 1.0
    # (one value per selected place is a write, as numpy's: a count that is neither is not)
    with pytest.raises(InvalidArgument, match="cannot be written"):
        t[t > 0] = Tensor([1.0, 2.0])
    np.testing.assert_array_equal(t.numpy(), A)  # nothing was written


@pytest.mark.parametrize("dt", [np.float32, np.int64, np.bool_, np.float16])
def test_boolean_mask_indexing_matches_numpy(dt):
    a = (A % 7).astype(dt)
    rng = np.random.default_rng(3)
    for shape in [a.shape, a.shape[:2], a.shape[:1], ()]:
        m = rng.random(shape) < 0.4
        got = Tensor(a)[Tensor(m)].numpy()
        np.testing.assert_array_equal(got, a[m])
        assert got.dtype == a.dtype
    np.testing.assert_array_equal(Tensor(a)[a > 3].numpy(), a[a > 3])  # a numpy mask
    np.testing.assert_array_equal(Tensor(a)[[True, False, False, True]].numpy(),
                                  a[[True, False, False, True]])  # a list of bools
    t = Tensor(a)
    np.testing.assert_array_equal(t[t > 3].numpy(), a[a > 3])
    np.testing.assert_array_equal(t[t > 100].numpy(), a[a > 100])  # selects nothing


def test_boolean_mask_keeps_negative_zero():
    a = np.array([-0.0, 1.0, 0.0, -0.0, -2.0], np.float32)
    got = Tensor(a)[Tensor(a <= 0)].numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(a[a <= 0]))


def test_boolean_mask_errors_are_clear_and_a_mask_among_indices_is_numpys():
    t = Tensor(A)
    with pytest.raises(IndexError, match="must have the shape of its leading axes"):
        t[Tensor(np.ones((6,), bool))]
    mask = np.array([True, False, True, True])  # (beside another index: numpy's coordinates)
    np.testing.assert_array_equal(t[Tensor(mask), 0].numpy(), A[mask, 0])


@pytest.mark.parametrize("value", [np.array([2.5], np.float32), np.array([[-3]], np.int32),
                                   np.array(0.0, np.float64), np.array([True]),
                                   np.array([[7]], np.uint8)])
def test_float_int_bool_of_one_element(value):
    one = value.reshape(())  # numpy converts 0-d arrays only
    for t in (Tensor(value), Tensor(value) * 1):  # realized and lazy
        assert float(t) == float(one) and type(float(t)) is float
        assert int(t) == int(one) and type(int(t)) is int
        assert bool(t) == bool(one) and type(bool(t)) is bool


def test_float_int_bool_of_many_elements_are_clear_errors():
    t = Tensor([1.0, 2.0])
    for conv in (float, int, bool):
        with pytest.raises(InvalidArgument, match=rf"{conv.__name__}\(\) of a tensor of shape "
                                                  r"\(2,\): only a one-element tensor"):
            conv(t)
    with pytest.raises(InvalidArgument, match="one-element"):
        bool(Tensor(np.zeros((0,), np.float32)))


def test_repr_shows_values_of_a_realized_tensor():
    for a in (A[:2, :3, 0], np.array([1, -2, 3], np.int16), np.array(True), np.zeros((2, 0))):
        assert repr(Tensor(a)) == (f"Tensor({np.array2string(a, separator=', ', prefix='Tensor(')}"
                                   f", dtype={Tensor(a).dtype.name})")
    t = (Tensor(A) + 1).realize()
    assert repr(t).startswith("Tensor([[[-49., -48.,")


def test_repr_of_a_lazy_tensor_compiles_nothing(monkeypatch):
    def refuse(*_):
        raise AssertionError("repr scheduled a kernel")

    monkeypatch.setattr(schedule, "schedule_rangeify", refuse)
    monkeypatch.setattr("rulegrad.runtime.tensor.realize_tensors", refuse)
    t = (Tensor(A) * 2).sum(0)
    assert repr(t) == "<Tensor lazy shape=(6, 5) dtype=float32 device='CPU'>"
    assert "lazy" in repr(Tensor(A)[1:3]) and "lazy" in repr(Tensor.ones(3))


def test_setitem_on_other_devices_and_shards():
    a = A[:, :, 0].copy()
    want = a.copy()
    want[1:3, ::2] = -1.0
    x = Tensor(a.copy()).shard(("CPU", "CPU:1"), axis=0).realize()
    assert repr(x) == "<Tensor realized, sharded shape=(4, 6) dtype=float32 " \
                      "device=('CPU', 'CPU:1')>"
    x[1:3, ::2] = -1.0
    np.testing.assert_array_equal(x.numpy(), want)
    assert x.device == ("CPU", "CPU:1")
    y = Tensor(a.copy(), device="CPU:1")
    y[1:3, ::2] = -1.0
    np.testing.assert_array_equal(y.numpy(), want)
    assert y.device == "CPU:1" and repr(y).endswith("dtype=float32, device='CPU:1')")
