"""Programs written as for tinygrad that were refused with bare errors: `@rulegrad.jit` on a
method (`@TinyJit def __call__(self, x)`: "missing 1 required positional argument", the jit was
no descriptor), and an assign into a lazy tensor that is no view (`b = a.clone(); b.assign(2)`:
"assign needs a realized, buffer-backed target"). Checked against numpy and torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rulegrad
from rulegrad import Tensor


def test_jit_on_a_method_binds_the_instance_and_replays():
    class Scaler:
        def __init__(self, k: float):
            self.w = Tensor(np.full(3, k, np.float32)).realize()

        @rulegrad.jit
        def __call__(self, x: Tensor) -> Tensor:
            return (x * self.w).relu()

    a, b = Scaler(2.0), Scaler(-1.0)
    for i in range(6):
        x = np.array([1.0, -2.0, 3.0], np.float32) * (i + 1)
        np.testing.assert_array_equal(a(Tensor(x)).numpy(), np.maximum(x * 2, 0))
        np.testing.assert_array_equal(b(Tensor(x)).numpy(), np.maximum(-x, 0))
    assert Scaler.__call__.replays > 0  # each instance its own calls, replayed as a function's


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_assign_into_a_lazy_tensor(monkeypatch, scheduler):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = Tensor(src.copy()).contiguous()
    b = a.clone()
    b.assign(Tensor(np.full((2, 3), 2.0, np.float32)))
    ta = torch.from_numpy(src.copy())
    tb = ta.clone()
    tb.copy_(torch.full((2, 3), 2.0))
    np.testing.assert_array_equal(a.numpy(), ta.numpy())
    np.testing.assert_array_equal(b.numpy(), tb.numpy())
    c = a + 1  # a computed value, then added to in place
    c += c.sum(0)
    np.testing.assert_array_equal(c.numpy(), (src + 1) + (src + 1).sum(0))


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_inplace_operators_write_in_place(monkeypatch, scheduler):
    """`x += y` rebound the name to a new tensor: a function's argument, another name for the
    tensor and a view's base kept the old values (torch and tinygrad write in place)."""
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    src = np.arange(12, dtype=np.float32).reshape(3, 4)

    def bump(t):
        t += 1

    a, ta = Tensor(src.copy()).realize(), torch.from_numpy(src.copy())
    same, tsame = a, ta
    bump(a)
    bump(ta)
    v, tv = a[:, ::2], ta[:, ::2]
    v *= 2
    tv *= 2
    a.T[0] -= 5
    ta.T[0] -= 5
    a[1:] /= 4
    ta[1:] /= 4
    np.testing.assert_array_equal(same.numpy(), tsame.numpy())
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    i = Tensor(np.array([1, 2, 3], np.int32)).realize()
    i <<= 2
    i //= Tensor(np.array([2, 3, 5], np.int64))  # int64 result, same kind: cast back
    np.testing.assert_array_equal(i.numpy(), (np.array([1, 2, 3], np.int32) << 2) // [2, 3, 5])
    assert i.dtype.name == "int32"
    with pytest.raises(Exception, match="cannot be cast"):
        i += 0.5  # numpy: UFuncTypeError; torch: RuntimeError
