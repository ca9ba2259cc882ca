"""Building an op again (runtime/tensor.py's `_binaries`): a binary op or comparison of a tensor
and a Python scalar (or two tensors) built before returns its node without asking numpy for the
dtype again, and never the node of another operand that compares equal (0.0 and -0.0, 1 and
1.0 and True). Values and dtypes against numpy; work counted, never timed."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime import tensor as tensor_mod


@pytest.fixture(autouse=True)
def _c_backend(monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")


def _probes(monkeypatch) -> list:
    calls = []
    inner = tensor_mod._probe

    def counted(*args):
        calls.append(args[0])
        return inner(*args)

    monkeypatch.setattr(tensor_mod, "_probe", counted)
    return calls


def test_the_same_op_again_is_its_node_without_a_dtype_probe(monkeypatch):
    a = Tensor(np.arange(4, dtype=np.float32)).realize()
    b = Tensor(np.ones(4, np.float32)).realize()
    first = [a * 3, a + b, 2.5 - a, a < 2, a >= b]
    calls = _probes(monkeypatch)
    again = [a * 3, a + b, 2.5 - a, a < 2, a >= b]
    assert calls == []
    assert all(x.uop is y.uop for x, y in zip(first, again))
    x = np.arange(4, dtype=np.float32)
    for t, ref in zip(again, [x * 3, x + 1, 2.5 - x, x < 2, x >= 1]):
        np.testing.assert_array_equal(t.numpy(), ref)


def test_operands_that_compare_equal_are_other_ops():
    neg0 = np.array([-0.0, -0.0], np.float32)
    z = Tensor(neg0).realize()
    for _ in range(2):  # the second round is served from the kept nodes
        assert np.array_equal(np.signbit((z + 0.0).numpy()), np.signbit(neg0 + 0.0))
        assert np.array_equal(np.signbit((z + -0.0).numpy()), np.signbit(neg0 + -0.0))
    i = Tensor(np.array([5, 7], np.int32)).realize()
    xi = np.array([5, 7], np.int32)
    for _ in range(2):
        for operand in (1, 1.0, True, 200, -3):
            ours, ref = (i * operand).numpy(), xi * operand
            assert ours.dtype == ref.dtype, operand
            np.testing.assert_array_equal(ours, ref)
        # an int the dtype cannot hold wraps to its bits, as torch computes it (numpy 2
        # refuses it): 2**40 is 0 as an int32, every time
        np.testing.assert_array_equal((i * 2**40).numpy(), xi * 0)
    c = Tensor(np.array([1, 2, 3], np.float32)).realize()
    xc = np.array([1, 2, 3], np.float32)
    for _ in range(2):  # `<` and `<=` of the same operands are two ops
        np.testing.assert_array_equal((c < 2).numpy(), xc < 2)
        np.testing.assert_array_equal((c <= 2).numpy(), xc <= 2)
    nan = (Tensor(np.ones(2, np.float32)) + float("nan")).numpy()
    assert np.isnan(nan).all()


def test_a_kept_node_dies_with_its_tensors():
    import gc
    import weakref

    a = Tensor(np.arange(3, dtype=np.float32)).realize()
    t = a * 7
    ref = weakref.ref(t.uop)
    gc.collect()  # earlier tests' garbage goes first: only t's node may leave the table below
    n = len(tensor_mod._binaries)
    del t
    gc.collect()
    assert ref() is None and len(tensor_mod._binaries) == n - 1
    np.testing.assert_array_equal((a * 7).numpy(), np.arange(3, dtype=np.float32) * 7)


def test_a_select_built_again_is_its_node_and_keeps_numpys_values(monkeypatch):
    """`cond.where(x, y)` (and relu, built of selects) built again over the same operands is
    the node built before, with no dtype probe; selects of operands that compare equal (0.0
    and -0.0, 1 and 1.0 and True, another tensor) are never taken for each other: each has
    numpy's dtype, values and signs."""
    x = np.array([-2.0, -0.0, 0.0, 1.5, np.nan], np.float32)
    xi = np.array([-3, 0, 4, 7, 1], np.int32)
    xb = xi > 0
    a, ai, ab = Tensor(x).realize(), Tensor(xi).realize(), Tensor(xb).realize()
    cond = a < 1
    selects = [lambda: cond.where(a, 0.0), lambda: cond.where(a, -0.0),
               lambda: cond.where(1, ai), lambda: cond.where(1.0, ai),
               lambda: cond.where(True, ai), lambda: cond.where(ai, a), lambda: a.relu(),
               lambda: ai.where(a, 2.5), lambda: cond.where(1, ab), lambda: cond.where(True, ab)]
    c = x < 1
    refs = [np.where(c, x, np.float32(0.0)), np.where(c, x, np.float32(-0.0)),
            np.where(c, 1, xi), np.where(c, 1.0, xi), np.where(c, True, xi), np.where(c, xi, x),
            np.where(x < 0, np.float32(0), x),  # (relu: -0.0 and NaN stay, as torch's)
            np.where(xi != 0, x, np.float32(2.5)), np.where(c, 1, xb), np.where(c, True, xb)]
    first = [f() for f in selects]
    calls = _probes(monkeypatch)
    again = [f() for f in selects]
    assert calls == []  # (each found its node: no dtype asked of numpy)
    assert all(s.uop is t.uop for s, t in zip(first, again))
    for t, ref in zip(again, refs):
        got = t.numpy()
        assert got.dtype == ref.dtype
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))


_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32",
           "float64"]


def test_a_new_op_of_seen_operand_kinds_asks_no_probe_and_keeps_numpys_dtypes(monkeypatch):
    """A binary op over fresh operands (new nodes: nothing kept to reuse) whose operand kinds
    were seen before takes numpy's dtype from the probe table without a call to `_probe`: two
    tensors of one shape, a tensor and a Python float or small int, either way round. A larger
    or negative int (numpy's answer depends on which types hold it) still asks. Every result
    has numpy's dtype; those with a float32 or int8 operand numpy's values, NaN and -0.0
    included."""
    ops = [(lambda p, q: p + q, np.add), (lambda p, q: p * q, np.multiply),
           (lambda p, q: p - q, np.subtract), (lambda p, q: p / q, np.true_divide)]
    scalars = [2.5, -0.0, float("nan"), 0, 3, 127]

    def values(name: str, flip: bool) -> np.ndarray:
        x = {"b": [0, 1, 1, 0], "i": [-0.0, 1, 5, 3], "u": [0, 1, 5, 3]}.get(
            np.dtype(name).kind, [-0.0, 1.0, np.nan, 3.0])
        return np.array(x[::-1] if flip else x).astype(name)

    def cases():
        for a in _DTYPES:
            xa = values(a, False)
            for b in _DTYPES:
                yield xa, values(b, True)
            for s in scalars:
                yield xa, s
                yield s, xa

    def check(count: bool) -> None:
        for xa, xb in cases():
            for ours, theirs in ops:
                ta = Tensor(xa) if isinstance(xa, np.ndarray) else xa
                tb = Tensor(xb) if isinstance(xb, np.ndarray) else xb
                calls = []
                if count:
                    calls = _probes(monkeypatch)
                with np.errstate(all="ignore"):
                    try:
                        want = theirs(xa, xb)
                    except (TypeError, OverflowError) as e:
                        with pytest.raises(type(e)):
                            ours(ta, tb).numpy()
                        continue
                got = ours(ta, tb)
                assert calls == [], (xa.dtype if isinstance(xa, np.ndarray) else xa, xb)
                monkeypatch.undo()
                assert got.dtype.name == want.dtype.name, (theirs, xa, xb)
                if not count or not {str(getattr(v, "dtype", "")) for v in (xa, xb)} & {
                        "float32", "int8"}:
                    continue  # (values: of one float and one int type, each a kernel built)
                out = got.numpy()
                assert out.dtype == want.dtype, (theirs, xa, xb)
                np.testing.assert_array_equal(out, want)
                real = ~np.isnan(want)  # (-0.0's sign; a NaN's sign numpy leaves open)
                assert np.array_equal(np.signbit(out[real]), np.signbit(want[real]))

    check(count=False)  # the probes are asked once per operand kinds
    check(count=True)
    i8 = np.array([1, 2], np.int8)
    calls = _probes(monkeypatch)
    np.testing.assert_array_equal((Tensor(i8) * -1).numpy(), i8 * -1)
    # 128 is no int8: it wraps to -128, as torch computes it (numpy 2 refuses it)
    np.testing.assert_array_equal((Tensor(i8) * 128).numpy(), i8 * np.int8(-128))
    assert len(calls) == 2
