"""A realized result lives on its inputs' device, on both schedulers: kernelize made every
kernel's output buffer on the default device, so a sum on CPU:1 said "CPU" and the next op with
a CPU:1 tensor was refused (DeviceMismatch). Oracle: numpy for the values; the device is the
one the docs promise (docs/devices.md: a kernel reads and writes the buffers of one
device)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import using

A = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
M = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], bool)

PROGRAMS = {
    "sum": (lambda a, m: a.sum(1), lambda a, m: a.sum(1)),
    "elementwise": (lambda a, m: a * 2 + 1, lambda a, m: a * 2 + 1),
    "matmul": (lambda a, m: a @ a.T, lambda a, m: a @ a.T),
    "masked_select": (lambda a, m: a.masked_select(m), lambda a, m: a[m]),
    "max": (lambda a, m: a.max(0), lambda a, m: a.max(0)),
}


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_result_stays_on_its_device_and_combines_there(scheduler, name):
    ours, ref = PROGRAMS[name]
    with using(scheduler):
        a, m = Tensor(A).to("CPU:1"), Tensor(M).to("CPU:1")
        out = ours(a, m).realize()
        assert out.device == "CPU:1"
        want = ref(A, M)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
        # the result is usable with another tensor on that device (it was refused)
        again = (out + Tensor(np.ones(want.shape, np.float32)).to("CPU:1")).realize()
        assert again.device == "CPU:1"
        np.testing.assert_allclose(again.numpy(), want + 1, rtol=1e-6)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_a_sharded_result_keeps_its_devices(scheduler):
    with using(scheduler):
        x = Tensor(A[:2]).shard(("CPU", "CPU:1"), axis=0)
        out = (x * 2).sum(1).realize()
        assert out.device == ("CPU", "CPU:1")
        np.testing.assert_allclose(out.numpy(), (A[:2] * 2).sum(1))


# an assign never moves its target (docs/devices.md): a realized constant has no device and
# keeps none after a value from CPU:1 is written into it. Once a sharded tensor had been
# realized (so the multi-device lowering ran), the assign's root took the value's device and its
# buffer was copied to a new one on CPU:1: `device` changed, and a view taken before the assign
# kept reading the old buffer (stale values after the next assign).
CONSTANTS = {
    "full": lambda: Tensor.full((2, 4), 1.0).realize(),
    "zeros": lambda: Tensor.zeros(2, 4).realize(),
}


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("make", sorted(CONSTANTS))
def test_an_assign_from_another_device_keeps_its_target(scheduler, make):
    with using(scheduler):
        Tensor(A[:2]).shard(("CPU", "CPU:1"), axis=0).realize()  # other devices in use
        c = CONSTANTS[make]()
        before = c.device
        view = c.reshape(8)
        c.assign(Tensor(A[:2], device="CPU:1"))
        c.assign(Tensor(A[:2], device="CPU:1") * 10)
        assert c.device == before == "CPU"
        np.testing.assert_array_equal(c.numpy(), A[:2] * 10)
        np.testing.assert_array_equal(view.numpy(), (A[:2] * 10).reshape(8))
        # still readable beside a tensor on any device, as before the assign
        again = (c + Tensor(A[:2], device="CPU:3")).realize()
        assert again.device == "CPU:3"
        np.testing.assert_array_equal(again.numpy(), A[:2] * 11)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("make", sorted(CONSTANTS))
def test_a_sharded_value_into_an_unsharded_target_is_refused_in_words(scheduler, make):
    # it crashed inside the schedulers (no rule pushes an INDEX through MULTI; no C rule for
    # BUFFER); a target on CPU gave DeviceMismatch already: now both do
    from rulegrad.runtime.device import DeviceMismatch
    with using(scheduler):
        for c in (CONSTANTS[make](), Tensor(np.ones((2, 4), np.float32)).realize()):
            want = c.numpy().copy()
            with pytest.raises(DeviceMismatch, match="gather the value first"):
                c.assign(Tensor(A[:2]).shard(("CPU:1", "CPU:2"), axis=0))
            np.testing.assert_array_equal(c.numpy(), want)
            c.assign(Tensor(A[:2]).shard(("CPU:1", "CPU:2"), axis=0).to("CPU"))
            np.testing.assert_array_equal(c.numpy(), A[:2])
