"""hunt66 (issue 31's left-open items, and a fresh hunt over the Tensor API), against torch.

- Every creation function honours `device=`, `dtype=` and `requires_grad=` and refuses any other
  keyword with a TypeError naming it (a `**_` swallowed `devcie=`, `foo=` silently); the
  `*_like` functions are of their tensor's dtype and on its device (sharded as it is), as
  torch's: `zeros_like` of a CPU:1 tensor was on CPU.
- A Python int outside [-2**63, 2**64 - 1] (what torch's scalar argument holds) as a fill, a
  select's or masked fill's value, an operand or a float tensor's comparison is refused, as
  torch refuses it, where it was stored as its nearest float or True; an item write already
  from 2**63 (torch's reads an int64). `Tensor(n, dtype=float32)` takes any int, as torch.tensor.
  Tensor data of ints past int32 with no dtype is int64 (it was numpy's "out of bounds for
  int32"), past int64 refused, as torch's (a list of them was float32).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor, dtypes  # noqa: E402

_SHAPED = {  # name -> a call given keywords (each a creation function of the Tensor API)
    "zeros": lambda **k: Tensor.zeros(2, 3, **k),
    "ones": lambda **k: Tensor.ones(2, 3, **k),
    "full": lambda **k: Tensor.full((2, 3), 1.5, **k),
    "empty": lambda **k: Tensor.empty(2, 3, **k),
    "arange": lambda **k: Tensor.arange(6, **k),
    "eye": lambda **k: Tensor.eye(3, **k),
    "linspace": lambda **k: Tensor.linspace(0, 1, 5, **k),
    "rand": lambda **k: Tensor.rand(2, 3, **k),
    "randn": lambda **k: Tensor.randn(2, 3, **k),
    "uniform": lambda **k: Tensor.uniform(2, 3, **k),
    "normal": lambda **k: Tensor.normal(2, 3, **k),
    "scaled_uniform": lambda **k: Tensor.scaled_uniform(2, 3, **k),
    "glorot_uniform": lambda **k: Tensor.glorot_uniform(2, 3, **k),
    "kaiming_uniform": lambda **k: Tensor.kaiming_uniform(2, 3, **k),
    "kaiming_normal": lambda **k: Tensor.kaiming_normal(2, 3, **k),
}
_LIKE = {
    "full_like": lambda x, **k: x.full_like(2.5, **k),
    "zeros_like": lambda x, **k: x.zeros_like(**k),
    "ones_like": lambda x, **k: x.ones_like(**k),
    "rand_like": lambda x, **k: x.rand_like(**k),
    "randn_like": lambda x, **k: x.randn_like(**k),
}


@pytest.mark.parametrize("name", [*_SHAPED, *_LIKE, "randint"])
def test_a_creation_function_refuses_an_unknown_keyword_naming_it(name):
    """`Tensor.empty(2, devcie="CPU:1")` was a CPU tensor, silently (as any typo): Python and
    torch refuse a keyword a function does not take, naming it."""
    x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    make = (_LIKE[name] and (lambda **k: _LIKE[name](x, **k))) if name in _LIKE else \
        (lambda **k: Tensor.randint(2, 3, **k)) if name == "randint" else _SHAPED[name]
    for bad in ("devcie", "require_grad", "dtpye"):
        with pytest.raises(TypeError, match=bad):
            make(**{bad: 1})
    with pytest.raises(TypeError, match="bad"):  # (torch's own refusal, the oracle)
        torch.zeros(2, bad=1)


@pytest.mark.parametrize("name", list(_SHAPED))
def test_a_creation_function_honours_device_dtype_and_requires_grad(name):
    out = _SHAPED[name](device="CPU:1", dtype=dtypes.float64, requires_grad=True)
    assert out.device == "CPU:1" and out.dtype is dtypes.float64 and out.requires_grad
    assert np.isfinite(out.numpy()).all()


@pytest.mark.parametrize("name", list(_LIKE))
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_like_keeps_the_tensors_device_and_dtype_as_torch(name, dtype):
    """torch's `*_like` is of its tensor's dtype and on its device; ours made full_like,
    zeros_like and ones_like on the default device, so `x + x.zeros_like()` of a CPU:1 x mixed
    devices. Given `device=`/`dtype=`, they are what is asked."""
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    x = Tensor(a, device="CPU:1")
    out = _LIKE[name](x)
    want = {"full_like": lambda t: torch.full_like(t, 2.5), "zeros_like": torch.zeros_like,
            "ones_like": torch.ones_like, "rand_like": torch.rand_like,
            "randn_like": torch.randn_like}[name](torch.from_numpy(a))
    assert out.device == "CPU:1" and out.dtype.name == str(want.dtype).removeprefix("torch.")
    assert out.shape == tuple(want.shape)
    if name in ("full_like", "zeros_like", "ones_like"):
        np.testing.assert_array_equal((x + out).numpy(), (torch.from_numpy(a) + want).numpy())
    other = _LIKE[name](x, device="CPU", dtype=dtypes.float64, requires_grad=True)
    assert other.device == "CPU" and other.dtype is dtypes.float64 and other.requires_grad


@pytest.mark.parametrize("name", ["full_like", "zeros_like", "ones_like"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_like_of_a_sharded_tensor_is_sharded_as_it(name, axis):
    a = np.arange(12, dtype=np.float32).reshape(4, 3) if axis != 1 else \
        np.arange(8, dtype=np.float32).reshape(2, 4)
    x = Tensor(a).shard(("CPU", "CPU:1"), axis=axis)
    out = _LIKE[name](x)
    assert out.device == x.device
    want = {"full_like": np.full_like(a, 2.5), "zeros_like": np.zeros_like(a),
            "ones_like": np.ones_like(a)}[name]
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal((x * out).numpy(), a * want)


# ---------------------------------------------------------------- ints past int64 and uint64
_M = [True, False]


def _setitem(t, v):
    t[0] = v
    return t


def _mask_set(t, v):
    t[torch.tensor(_M) if isinstance(t, torch.Tensor) else Tensor(_M)] = v
    return t


# entry point -> (ours, torch's), each of a 2-element tensor of `dt` and a Python int
_ENTRIES = {
    "full": (lambda t, v: Tensor.full((2,), v, dtype=t.dtype),
             lambda t, v: torch.full((2,), v, dtype=t.dtype)),
    "full_like": (lambda t, v: t.full_like(v), lambda t, v: torch.full_like(t, v)),
    "masked_fill": (lambda t, v: t.masked_fill(Tensor(_M), v),
                    lambda t, v: t.masked_fill(torch.tensor(_M), v)),
    "where_y": (lambda t, v: Tensor(_M).where(t, v), lambda t, v: torch.where(
        torch.tensor(_M), t, v)),
    "where_x": (lambda t, v: Tensor(_M).where(v, t), lambda t, v: torch.where(
        torch.tensor(_M), v, t)),
    "add": (lambda t, v: t + v, lambda t, v: t + v),
    "rsub": (lambda t, v: v - t, lambda t, v: v - t),
    "mul": (lambda t, v: t * v, lambda t, v: t * v),
    "clamp": (lambda t, v: t.clamp(max_=v), lambda t, v: t.clamp(max=v)),
    "setitem": (_setitem, _setitem),
    "mask_set": (_mask_set, _mask_set),
}
_TORCH_DT = {"float32": torch.float32, "float16": torch.float16, "float64": torch.float64,
             "bool": torch.bool}


def _pair(dt):
    z = np.zeros(2, dt)
    return Tensor(z), torch.from_numpy(z)


def _int_cases():
    """Every entry point, dtype and int, less two questions that are not about ints past int64:
    bool arithmetic with an int past bool (an int64 result, not stored in bool) and a float16
    operand past 65504 within int64 (numpy's inf, where torch computes in float32 or refuses a
    clamp bound)."""
    arithmetic = ("add", "rsub", "mul", "clamp")
    for entry in _ENTRIES:
        for dt in ("float32", "float16", "float64", "bool"):
            for v in (2**70, -(2**63) - 1, 2**64, 2**63, 2**64 - 1, -(2**63)):
                past_half = dt == "float16" and -2**63 <= v < 2**64
                if entry in arithmetic and (dt == "bool" or past_half):
                    continue
                yield entry, dt, v


@pytest.mark.parametrize("entry,dt,v", list(_int_cases()))
def test_an_int_past_int64_into_a_float_or_bool_tensor_is_torchs(entry, dt, v):
    """`full((2,), 2**70, dtype=float32)`, `masked_fill`, `where`, `t + 2**70` and `t[0] = 2**70`
    stored the int's nearest float (or True) where torch refuses an int outside what its scalar
    argument holds; within it (2**63, 2**64 - 1) both store its nearest float (torch's item
    write takes an int64 only). Oracle: torch, refusal for refusal and value for value."""
    ours, theirs = _ENTRIES[entry]
    t, tt = _pair(dt)
    try:
        want = theirs(tt, v)
    except (OverflowError, ValueError, RuntimeError):
        with pytest.raises(OverflowError, match="torch refuses"):
            ours(t, v).numpy()
        return
    with np.errstate(over="ignore"):
        got = ours(t, v).numpy()
    np.testing.assert_array_equal(got, want.numpy())
    assert got.dtype == want.numpy().dtype


@pytest.mark.parametrize("v", [2**70, -(2**63) - 1, 2**64])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_a_float_tensor_compared_with_an_int_past_uint64_is_refused_as_torch(v, dt):
    """numpy compares a float with the int rounded (`float64 == 2**70 + 1` is true): torch
    refuses. An int or bool tensor keeps numpy 2's exact comparison (test_adversarial_52)."""
    t, tt = _pair(dt)
    for op in (lambda a, b: a < b, lambda a, b: a == b, lambda a, b: b >= a):
        with pytest.raises(OverflowError):
            op(tt, v)
        with pytest.raises(OverflowError, match="comparison"):
            op(t, v).numpy()
        with pytest.raises(OverflowError):  # (a lazy tensor's record path too)
            op(Tensor(np.ones(2, dt)), v * 2).numpy()


@pytest.mark.parametrize("data,dtype", [
    (2**70, None), ([2**70], None), ([True, 2**70], None), ([2**63, 1], None),
    ([-(2**63) - 1], None), (2**63, None), (2**40, None), ([2**40, -3], None),
    ([[2**31, 1], [0, -(2**31) - 1]], None), (2**70, "float32"), ([2**70, 3], "float32"),
    (2**70, "bool"), ([0, 2**70], "bool"), ([2**70, 1.5], None), (-(2**63), None)])
def test_tensor_data_of_big_ints_is_torchs(data, dtype):
    """Tensor data (a number or a list): ints past int32 with no dtype are int64 (numpy's
    "out of bounds for int32" was the error), past int64 refused as torch.tensor refuses them
    (a list was float32, and `[True, 2**70]` `[1.0, 1.18e21]`); a float or bool dtype takes any
    int as torch's, its nearest float or True."""
    try:
        want = torch.tensor(data, dtype=None if dtype is None else _TORCH_DT[dtype])
    except (OverflowError, ValueError, RuntimeError):
        with pytest.raises(OverflowError, match="int64"):
            Tensor(data, dtype=dtype)
        return
    got = Tensor(data, dtype=dtype).numpy()
    want = want.numpy()
    np.testing.assert_array_equal(got, want)
    # the int64 torch gives is ours where int32 cannot hold the ints (int32 otherwise, tinygrad's)
    assert got.dtype == want.dtype or (want.dtype == np.int64 and got.dtype == np.int32 and
                                       np.abs(want).max(initial=0) < 2**31)


@pytest.mark.parametrize("v", [2**40, -(2**40), 2**63 - 1, 2**63, 2**70])
def test_full_of_a_big_int_with_no_dtype_is_torchs(v):
    try:
        want = torch.full((2,), v).numpy()
    except (OverflowError, RuntimeError):
        with pytest.raises(OverflowError):
            Tensor.full((2,), v)
        return
    got = Tensor.full((2,), v).numpy()
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


# ---------------------------------------------------------------- the fresh hunt
_A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


@pytest.mark.parametrize("index", [
    np.array([0, -1]), (np.array([0, 2]), np.array([1, 3])), np.array(1), np.array(-2),
    (np.array([0, 2]), slice(None), np.array([1, 3])), (np.array([[0], [1]]), np.array([[1, 2]])),
    (np.array([], dtype=np.int64),), (slice(None, None, -1), np.array([3, 0], np.uint8)),
    (1, np.array(2, np.int32), None), (Ellipsis, np.array([4, 0, 4], np.int16))],
    ids=lambda i: repr(i).replace("\n", "").replace(" ", ""))
def test_a_numpy_int_array_indexes_as_numpys(index):
    """`t[np.array([0, 2])]` was an "unsupported index" (a bool array indexed as a mask, an int
    one did not). numpy reads a 0-d one as its int and any other as advanced indexing."""
    np.testing.assert_array_equal(Tensor(_A)[index].numpy(), _A[index])


@pytest.mark.parametrize("shape,dim", [
    ((1, 2, 1), (0, 2)), ((1, 2, 1), (0, 1)), ((1, 2, 1), [-1]), ((2, 3), (0, 1)), ((1, 1), (1, 0)),
    ((), (0,)), ((4, 1), ())])
def test_squeeze_of_a_tuple_of_dims_is_torchs(shape, dim):
    """torch 2's `squeeze((0, 2))` drops each listed axis of size 1; ours said "axis (0, 2) is
    out of range" of a shape that has both."""
    a = np.zeros(shape, np.float32)
    want = torch.from_numpy(a).squeeze(dim)
    got = Tensor(a).squeeze(dim)
    assert got.shape == tuple(want.shape)
    with pytest.raises(RuntimeError):  # an axis twice: refused as torch's
        torch.zeros(1, 2, 1).squeeze((0, 0))
    with pytest.raises(Exception, match="twice"):
        Tensor.zeros(1, 2, 1).squeeze((0, -3))


_ALL = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
        "float16", "float32", "float64"]
_SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -1.5, 2.5, 100.7, -100.7, 65504.0, 1e-8]


@pytest.mark.parametrize("src", ["float16", "float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("dst", _ALL)
def test_to_a_dtype_casts_as_torch(src, dst):
    """torch's `.to(torch.float16)` written `.to(dtypes.float16)` or `.to("float16")` was
    "unknown device dtypes.float16". Values are torch's where its cast is defined: NaN, the
    infinities and -0.0 into floats and bool, and in-range values into ints."""
    x = np.array(_SPECIALS).astype(src) if src != "int32" else np.array([-7, 0, 3, 100, 1])
    want = torch.from_numpy(x).to(getattr(torch, dst)).numpy()
    for got in (Tensor(x).to(getattr(dtypes, dst)), Tensor(x).to(dst),
                Tensor(x).to("CPU:1", getattr(dtypes, dst)), Tensor(x).to(dtype=dst)):
        assert got.dtype is getattr(dtypes, dst)
        got = got.numpy()
        if dst.startswith("float") or dst == "bool" or src in ("int32", "bool"):
            np.testing.assert_array_equal(got, want)
            assert (np.signbit(got) == np.signbit(want)).all()
        else:  # (a float past an int's range is undefined in C: torch's and ours may differ)
            info = np.iinfo(dst)
            m = np.isfinite(x) & (x > info.min - 1) & (x < info.max + 1)
            np.testing.assert_array_equal(got[m], want[m])
    assert Tensor(x).to("CPU:1", dst).device == "CPU:1"
    with pytest.raises(Exception, match="unknown device"):
        Tensor(x).to("flaot16")
