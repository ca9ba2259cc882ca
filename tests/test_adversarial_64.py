"""hunt64 (issue 31): the last wrong answers of the issue's classes, against torch and numpy.

A Python number stored into a tensor (a select's scalar, a masked fill, a full, an item write,
a pad value) is converted as torch converts it: `uint8.where(c, 300)` and
`masked_fill(m, 300)` wrapped 300 to 44 where torch raises; uint8 takes -1 as 255 (a full and an
item write raised where torch stores 255); `masked_fill` keeps the tensor's dtype (an int
tensor filled with 2.7 holds 2, as torch's). Arithmetic operands wrap (test_adversarial_63);
comparisons and clamp bounds compare exactly, as numpy 2 (test_adversarial_compare,
test_adversarial_53): those never give a value that was not written.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor  # noqa: E402

_ARRAYS = {"uint8": [1, 2, 200, 7], "int8": [1, -2, 100, -7], "int32": [1, -2, 3, 9],
           "bool": [True, False, False, True], "float16": [1.0, -2.0, 3.5, 0.0],
           "float32": [1.0, -2.0, 3.5, 0.0]}
_VALUES = [-256, -255, -129, -128, -1, 0, 127, 128, 255, 256, 300, 2**31, -(2**31) - 1,
           -1.0, 2.7, -2.7, 127.5, 255.0, 300.0, 1e5, float("nan"), float("inf"), True, False]
_MASK = [True, False, True, False]


def _write(t, value):
    t[1] = value
    return t


def _mask_write(t, m, value):
    t[m] = value
    return t


# (name, rulegrad's program, torch's program): tensor, mask, value
_STORES = {
    "where_other": (lambda t, m, v: m.where(t, v), lambda t, m, v: torch.where(m, t, v)),
    "where_self": (lambda t, m, v: m.where(v, t), lambda t, m, v: torch.where(m, v, t)),
    "masked_fill": (lambda t, m, v: t.masked_fill(m, v), lambda t, m, v: t.masked_fill(m, v)),
    "full_like": (lambda t, m, v: t.full_like(v), lambda t, m, v: torch.full_like(t, v)),
    "setitem": (lambda t, m, v: _write(t, v), lambda t, m, v: _write(t.clone(), v)),
    "setitem_mask": (lambda t, m, v: _mask_write(t, m, v),
                     lambda t, m, v: _mask_write(t.clone(), m, v)),
    "pad": (lambda t, m, v: t.pad(((1, 2),), value=v),
            lambda t, m, v: torch.nn.functional.pad(t, (1, 2), value=v)),
}


def _torch_or_error(f, a, m, v):
    try:
        return f(torch.from_numpy(a.copy()), torch.from_numpy(m), v).numpy()
    except (RuntimeError, OverflowError):
        return None


@pytest.mark.parametrize("store", list(_STORES))
def test_a_stored_python_number_is_converted_as_torch_converts_it(each_path, store):
    """Every value, every dtype: where torch raises, an OverflowError (no wrapped value);
    where torch stores a value, that value. Values are compared as float64 with NaN equal;
    dtypes too, except where a float scalar meets an int tensor in `where`, whose result
    type is numpy's (float64, torch's float32: the numbers agree to float32 rounding)."""
    ours, theirs = _STORES[store]
    m = np.array(_MASK)
    for dt, data in _ARRAYS.items():
        a = np.array(data, dt)
        for v in _VALUES:
            want = _torch_or_error(theirs, a, m, v)
            where = f"{store} {dt} {v!r}"
            if want is None:
                with pytest.raises(OverflowError, match="without overflow"):
                    ours(Tensor(a.copy()), Tensor(m), v).numpy()
                continue
            got = ours(Tensor(a.copy()), Tensor(m), v).numpy()
            if store.startswith("where") and isinstance(v, float) and not a.dtype.kind == "f":
                np.testing.assert_allclose(got, want, rtol=1e-7, err_msg=where)
                continue
            assert got.dtype == want.dtype or store.startswith("where"), (where, got.dtype)
            np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64),
                                          err_msg=where)


def test_full_with_a_dtype_checks_its_value_as_torch():
    """`Tensor.full(shape, -1, uint8)` is torch's 255 (numpy 2 raised); 300 and -256 raise;
    a float16 fill past its largest finite value raises, as torch's full."""
    from rulegrad import dtypes

    for v in (-1, -255, 255, 2.7):
        want = torch.full((3,), v, dtype=torch.uint8).numpy()
        np.testing.assert_array_equal(Tensor.full((3,), v, dtype=dtypes.uint8).numpy(), want)
    for v in (300, -256, float("nan"), -1.0):
        with pytest.raises(OverflowError, match="uint8 without overflow"):
            Tensor.full((3,), v, dtype=dtypes.uint8)
    with pytest.raises(OverflowError, match="float16 without overflow"):
        Tensor.full((3,), 1e5, dtype=dtypes.float16)
    assert np.isinf(Tensor.full((2,), float("-inf"), dtype=dtypes.float16).numpy()).all()


# `c.arg == 0.1` on a float32 constant (which holds 0.10000000149011612) never holds
_NEVER = """rules never = {
  tenth: MUL[x:float32, c:CONST] if c.arg == 0.1 -> x
  # x * 2 -> x + x: exact in floating point, and it fires
  two: MUL[x, c:CONST] if c.arg == 2.0 -> ADD(x, x)
}
"""


def test_add_rules_warns_of_a_rule_that_can_never_fire_once_per_load(tmp_path, monkeypatch):
    """`add_rules` loaded a rule the check showed can never fire without a word (`rulegrad
    check` warns of it): it warns at the rule's file:line:col, runs the set (a rule that
    never fires changes nothing), and a second load reads the kept verdict, with no second
    check, and warns again."""
    import warnings

    import rulegrad
    from rulegrad.generator import soundness, user

    runs: list = []
    check = soundness.check_paths
    monkeypatch.setattr(soundness, "check_paths", lambda *a, **k: runs.append(a) or check(*a, **k))
    f = tmp_path / "never.rules"
    f.write_text(_NEVER)
    for _ in range(2):
        with pytest.warns(user.NeverFiresWarning) as seen:
            up = rulegrad.add_rules(f, after="pm_rangeify")
        text = "\n".join(str(w.message) for w in seen)
        assert "never.rules:2:3: warning: tenth can never fire" in text, text
        assert "two" not in text.replace("tenth", "")  # the rule that fires is not named
        a = np.arange(6, dtype=np.float32)
        np.testing.assert_array_equal((Tensor(a) * 0.1 + Tensor(a) * 2).numpy(),
                                      a * np.float32(0.1) + a * 2)
        rulegrad.remove_rules(up)
        monkeypatch.setattr(user, "_verdicts", {})  # a new process: the verdict on disk
    assert len(runs) == 1
    with warnings.catch_warnings():  # a file whose rules all can fire: no warning
        warnings.simplefilter("error", user.NeverFiresWarning)
        g = tmp_path / "fine.rules"
        g.write_text(_NEVER.replace("c.arg == 0.1 -> x",
                                    "c.arg == c.const_like(0.1).arg -> MUL(x, c)"))
        rulegrad.remove_rules(rulegrad.add_rules(g, after="pm_rangeify"))


@pytest.mark.parametrize("dt", ["uint8", "int8", "int32", "uint32"])
def test_maximum_minimum_with_an_int_past_the_dtype_is_exact_or_refused(each_path, dt):
    """`uint8.minimum(300)` wrapped 300 to 44 (an arithmetic operand's wrap, torch's `+`) and
    gave 44 where the minimum is the tensor itself; torch has no scalar maximum (its clamp
    raises). Now such a bound is clamp's: the exact answer where it changes nothing (as
    numpy's clip), refused where every value would be one the dtype cannot hold. The oracle
    is the exact maximum over Python ints."""
    info = np.iinfo(dt)
    a = np.array([1, 2, 100, 7, int(info.max), int(info.min)], dt)
    for v in (-1, 300, -300, 2**40, -(2**40), int(info.max) + 1, int(info.min) - 1):
        for name in ("maximum", "minimum"):
            exact = [int(e) for e in getattr(np, name)(a.astype(object), v)]
            if all(info.min <= e <= info.max for e in exact):
                got = getattr(Tensor(a), name)(v).numpy()
                assert got.dtype == a.dtype and got.tolist() == exact, (name, v, got)
            else:
                with pytest.raises(OverflowError):
                    getattr(Tensor(a), name)(v).numpy()


def test_assign_of_a_python_number_writes_what_torchs_fill_writes():
    """`t.assign(-1)` of a uint8 t raised numpy's OverflowError, and `t.assign(nan)` of an
    int t a bare ValueError; torch's fill_ writes 255 and refuses 300 and NaN."""
    for v in (-1, 255, 300, -256, 2.7, float("nan"), True):
        t = Tensor(np.array([1, 2, 3], np.uint8)).realize()
        try:
            want = torch.tensor([1, 2, 3], dtype=torch.uint8).fill_(v).numpy()
        except RuntimeError:
            with pytest.raises(OverflowError, match="uint8 without overflow"):
                t.assign(v)
            continue
        t.assign(v)
        np.testing.assert_array_equal(t.numpy(), want, err_msg=repr(v))
