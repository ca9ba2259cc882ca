"""rev64d: review of hunt64 (Python numbers stored as torch converts them) and suite64 (the
checker's per-rule caches). Oracles are torch 2.x and numpy, never rulegrad itself."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor, dtypes  # noqa: E402


@pytest.mark.parametrize(("dt", "tdt", "v"), [
    (dtypes.float16, torch.float16, 65520), (dtypes.float16, torch.float16, -1e5),
    (dtypes.float16, torch.float16, 2**63), (dtypes.float32, torch.float32, 1e300),
    (dtypes.float32, torch.float32, -1e300)])
def test_assign_of_a_number_past_a_float_dtype_is_refused_as_torchs_fill(dt, tdt, v):
    """`t.assign(65520)` of a float16 t stored inf (hunt64 converted assign's number unchecked,
    "as torch's fill_ writes it"), where torch's fill_ refuses every number past the dtype's
    largest finite value, as `full` here does; inf and NaN themselves are written."""
    with pytest.raises(RuntimeError):
        torch.zeros(3, dtype=tdt).fill_(v)
    t = Tensor.zeros(3, dtype=dt).realize()
    with pytest.raises(OverflowError, match="without overflow"):
        t.assign(v)
    np.testing.assert_array_equal(t.numpy(), np.zeros(3, dt.np))  # nothing written
    for ok in (float("inf"), float("-inf"), 65504.0):
        t.assign(ok)
        np.testing.assert_array_equal(t.numpy(), torch.zeros(3, dtype=tdt).fill_(ok).numpy())


_TORCH_DT = {"uint8": torch.uint8, "int8": torch.int8, "uint16": torch.uint16,
             "int32": torch.int32, "bool": torch.bool, "float16": torch.float16}


@pytest.mark.parametrize("dt", list(_TORCH_DT))
@pytest.mark.parametrize("data", [-1, -255, -256, 300, 2.7, -1.5, float("nan"), float("inf"), 1e5,
                                  True, [-1, 2], [-1, 300], [-1.0, 2.0], [255, 0],
                                  np.int64(300), np.int64(-1), np.float64(np.nan), np.float32(2.5),
                                  np.uint8(200), np.bool_(True)])
def test_tensor_of_python_numbers_with_a_dtype_is_torchs(dt, data):
    """`Tensor(-1, dtype=uint8)` raised numpy's OverflowError ("Python integer -1 out of bounds")
    where torch.tensor gives 255, as this project's own `full((), -1, uint8)` does since hunt64;
    `Tensor(nan, int32)` raised numpy's bare ValueError; a numpy number was cast unchecked
    (`Tensor(np.int64(300), uint8)` 44, `Tensor(np.float64(nan), uint8)` 0). torch's checked
    conversion decides: a value torch refuses raises OverflowError naming the dtype, any other
    is torch's."""
    try:
        # (torch's binding takes a numpy int as its number, and refuses a numpy float or bool
        # for an int dtype with a TypeError: the number's own conversion is the oracle)
        number = data.item() if isinstance(data, np.generic) else data
        want = torch.tensor(number, dtype=_TORCH_DT[dt]).numpy()
    except RuntimeError:
        # (a list's out-of-range float or int: numpy's OverflowError, naming the dtype too)
        with pytest.raises(OverflowError, match=dt if isinstance(data, list) else
                           f"{dt} without overflow"):
            Tensor(data, dtype=dt).numpy()
        return
    got = Tensor(data, dtype=dt).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# (rulegrad's, numpy's) program of a bool tensor t and a Python int v
_BOOL_PROGRAMS = {
    "add": (lambda t, v: t + v, np.add), "radd": (lambda t, v: v + t, lambda t, v: v + t),
    "mul": (lambda t, v: t * v, np.multiply),
    "maximum": (lambda t, v: t.maximum(v), np.maximum),
    "minimum": (lambda t, v: t.minimum(v), np.minimum),
    "clamp_max": (lambda t, v: t.clamp(None, v), lambda t, v: np.clip(t, None, v)),
    "clamp_min": (lambda t, v: t.clamp(v, None), lambda t, v: np.clip(t, v, None)),
}


@pytest.mark.parametrize("name", list(_BOOL_PROGRAMS))
@pytest.mark.parametrize("v", [2**63, 2**64 - 1])
def test_a_bool_tensor_with_an_int_past_int64_is_refused_not_wrapped(name, v):
    """A bool tensor's op with a Python int takes numpy's default int, int64; an int past it
    was wrapped to int64's bits as if it were the tensor's own dtype (the wrap documented for an
    int tensor, `int8 + 300`): `Tensor([True, False]) + 2**63` gave [-2**63 + 1, -2**63],
    `.minimum(2**64 - 1)` and `.clamp(max=2**64 - 1)` [-1, -1], `.maximum(2**63)` [1, 0].
    numpy refuses each (OverflowError) and torch too (RuntimeError, no uint64 promotion)."""
    ours, theirs = _BOOL_PROGRAMS[name]
    with pytest.raises(OverflowError):
        theirs(np.array([True, False]), v)
    with pytest.raises(OverflowError):
        ours(Tensor([True, False]), v).numpy()


@pytest.mark.parametrize("v", [2, 300, -1, 2**63, 2**64 - 1, -(2**63) - 1])
def test_a_bool_tensor_compared_with_an_int_compares_exactly(v):
    """`Tensor([True, False]) < 2**63` was [False, False] (the int wrapped to -2**63); comparisons
    of a Python int compare exactly (docs/tensor.md, numpy 2 for an int tensor), so every
    element, 0 or 1, lies on one side of it. Oracle: Python's own comparison of 0 and 1."""
    b = [True, False]
    for name, op in (("lt", lambda a, c: a < c), ("gt", lambda a, c: a > c),
                     ("le", lambda a, c: a <= c), ("ge", lambda a, c: a >= c),
                     ("eq", lambda a, c: a == c), ("ne", lambda a, c: a != c)):
        want = [op(int(e), v) for e in b]
        assert op(Tensor(b), v).numpy().tolist() == want, (name, v)
        assert op(v, Tensor(b)).numpy().tolist() == [op(v, int(e)) for e in b], (name, v)


_GUARDED = """rules g = {
  r: MUL[x, c:CONST] if c.arg > 1 and k < 9 -> ADD(x, x) where k = c.arg * 2
}
"""


def test_a_rules_cached_guard_steps_follow_replace_copy_and_pickle():
    """suite64 keeps `Rule.guard_steps` on the (frozen) rule after the first call. A rule made
    from it by `dataclasses.replace` (another guard) must not inherit the old steps, and a
    copied or pickled rule must give the steps of its own guard. The oracle is a rule parsed
    afresh from the changed text, whose cache was never filled."""
    from dataclasses import replace

    from rulegrad.dsl.parser import parse

    def rule(text):
        return parse(text, "g.rules").rulesets[0].terms[0].rules[0]

    r = rule(_GUARDED)
    steps = r.guard_steps()
    assert [len(conds) for _, _, conds in steps] == [1, 1] and steps[-1][:2] == (0, 1)
    plain = rule(_GUARDED.replace("c.arg > 1 and k < 9", "c.arg > 1"))
    r2 = replace(r, guard=plain.guard)
    assert r2.guard_steps() == plain.guard_steps() != steps
    assert r2.guard_lets == plain.guard_lets == 0
    for other in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert other == r and other.guard_steps() == steps and other.guard_lets == 1
    steps.clear()  # the caller's list, not the cache
    assert len(r.guard_steps()) == 2


def test_a_dtypes_cached_range_survives_pickle_and_copy():
    """`DType.min`/`max` are cached on the singleton since suite64: a pickled or copied dtype is
    the same object, its range numpy's."""
    for dt in (dtypes.int8, dtypes.uint64, dtypes.index, dtypes.bool, dtypes.float16):
        _ = dt.min, dt.max
        for other in (pickle.loads(pickle.dumps(dt)), copy.copy(dt), copy.deepcopy(dt)):
            assert other is dt
        if dt.is_int:
            info = np.iinfo(dt.np)
            assert (dt.min, dt.max) == (int(info.min), int(info.max))


@pytest.mark.parametrize("dt", ["int8", "uint8", "bool", "float16", "int64"])
@pytest.mark.parametrize("v", [2.5, -1, 7, 0.0])
def test_masked_fill_with_a_0d_tensor_keeps_the_tensors_dtype(dt, v):
    """hunt64 made `masked_fill` keep self's dtype for a Python number only: a 0-d tensor value
    still promoted, `int8.masked_fill(m, Tensor(2.5))` float32 [2.5, 0, 2.5] where torch's is
    int8 [2, 0, 2] (torch converts the value to self's dtype whatever its type)."""
    a, m = np.array([1, 0, 3], dt), np.array([True, False, True])
    want = torch.from_numpy(a).masked_fill(torch.from_numpy(m), torch.tensor(v)).numpy()
    got = Tensor(a).masked_fill(Tensor(m), Tensor(v)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
