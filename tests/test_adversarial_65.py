"""hunt65 (issue 31): the last open items of the issue, against torch and numpy.

A one-element tensor stored as a scalar (`masked_fill(m, Tensor(v))`, `t[mask] = Tensor(v)`)
is converted as torch converts it (`stored_scalar`): a cast wrapped uint8's Tensor(300) to 44
and NaN to 0 where torch refuses. (`t[i] = Tensor(v)`, `fill_` and `assign` are tensor copies
in torch, which wrap as a cast: ours too.)
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rulegrad import Tensor  # noqa: E402

_ARRAYS = {"uint8": [1, 2, 200, 7], "int8": [1, -2, 100, -7], "int32": [1, -2, 3, 9],
           "bool": [True, False, False, True], "float16": [1.0, -2.0, 3.5, 0.0],
           "float32": [1.0, -2.0, 3.5, 0.0]}
# (value, the 0-d tensor's dtype)
_VALUES = [(300, "int64"), (-1, "int64"), (-129, "int64"), (-256, "int64"), (255, "int32"),
           (256, "int16"), (2**31, "int64"), (2.7, "float32"), (-0.5, "float32"),
           (255.9, "float32"), (300.0, "float64"), (1e10, "float32"), (float("nan"), "float32"),
           (float("inf"), "float64"), (-1.0, "float32"), (True, "bool"), (70000.0, "float32"),
           (100, "uint8"), (200, "uint8"), (-100, "int8")]
_MASK = [True, False, True, False]


def _mask_write(t, m, value):
    t[m] = value
    return t


_STORES = {
    "masked_fill": (lambda t, m, v: t.masked_fill(m, v), lambda t, m, v: t.masked_fill(m, v)),
    "setitem_mask": (lambda t, m, v: _mask_write(t, m, v),
                     lambda t, m, v: _mask_write(t.clone(), m, v)),
}


@pytest.mark.parametrize("store", list(_STORES))
def test_a_zero_d_tensor_value_is_converted_as_torch_converts_it(each_path, store):
    """Every (tensor dtype, value, value dtype): where torch refuses, an OverflowError naming
    the value (a cast wrapped 300 to 44 and NaN to 0); else torch's values and dtype."""
    ours, theirs = _STORES[store]
    m = np.array(_MASK)
    for dt, data in _ARRAYS.items():
        a = np.array(data, dt)
        for v, vdt in _VALUES:
            where = f"{store} {dt} {v!r} {vdt}"
            try:
                want = theirs(torch.from_numpy(a.copy()), torch.from_numpy(m),
                              torch.tensor(v, dtype=getattr(torch, vdt))).numpy()
            except RuntimeError:
                with pytest.raises(OverflowError, match="without overflow"):
                    ours(Tensor(a.copy()), Tensor(m), Tensor(np.array(v, vdt))).numpy()
                continue
            got = ours(Tensor(a.copy()), Tensor(m), Tensor(np.array(v, vdt))).numpy()
            assert got.dtype == want.dtype, (where, got.dtype)
            np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64),
                                          err_msg=where)


def test_a_zero_d_float_value_keeps_its_gradient_through_masked_fill():
    """The checked value stays a cast in the graph (not a read-back number): its gradient is
    torch's, the count of filled places, also where it is converted (float64 into float32)."""
    a = np.array([1.0, -2.0, 3.5, 0.0], np.float32)
    for vdt in ("float32", "float64"):
        v = Tensor(np.array(2.5, vdt), requires_grad=True)
        x = Tensor(a, requires_grad=True)
        (x.masked_fill(Tensor(_MASK), v) * Tensor(a)).sum().backward()
        tv = torch.tensor(2.5, dtype=getattr(torch, vdt), requires_grad=True)
        tx = torch.tensor(a, requires_grad=True)
        (tx.masked_fill(torch.tensor(_MASK), tv) * torch.tensor(a)).sum().backward()
        np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
