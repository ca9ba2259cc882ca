"""Elementwise ops, and so matmuls, of tensors sharded along different axes: `x @ x` with x
sharded by rows reads x along the contraction axis too, and was refused ("MUL of tensors
sharded along different axes [0, 2]", the multi rules' words). Now the sources sharded along
another axis than the first sharded source's are gathered whole on each device and cut there.
Oracle: numpy, on both schedulers, over 2 and 4 devices."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import using

rng = np.random.default_rng(0)
A = rng.standard_normal((8, 8)).astype(np.float32)
B = rng.standard_normal((8, 8)).astype(np.float32)
DEVS = {2: ("CPU", "CPU:1"), 4: ("CPU", "CPU:1", "CPU:2", "CPU:3")}

# name -> (ours over x (A sharded along `axis`) and y (B sharded along the other), numpy's)
PROGRAMS = {
    "x @ x": (lambda x, y: x @ x, lambda a, b: a @ a),
    "x @ x.T": (lambda x, y: x @ x.T, lambda a, b: a @ a.T),
    "x @ y": (lambda x, y: x @ y, lambda a, b: a @ b),
    "x * y.T + x": (lambda x, y: x * y.T + x, lambda a, b: a * b.T + a),
    "where of three layouts": (lambda x, y: (y > 0).where(x, x.T),
                               lambda a, b: np.where(b > 0, a, a.T)),
    "sum of a mixed product": (lambda x, y: (x * y).sum(axis=0), lambda a, b: (a * b).sum(0)),
}


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_ops_of_tensors_sharded_along_different_axes(name, axis, n, scheduler):
    ours, ref = PROGRAMS[name]
    with using(scheduler):
        x = Tensor(A).shard(DEVS[n], axis=axis)
        y = Tensor(B).shard(DEVS[n], axis=1 - axis)
        out = ours(x, y)
        assert out.device == DEVS[n]  # still on the shards' devices, never one device
        np.testing.assert_allclose(out.numpy(), ref(A, B), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_gradient_of_x_at_x_with_x_sharded_by_rows(scheduler):
    with using(scheduler):
        x = Tensor(A).shard(DEVS[2], axis=0)
        (g,) = (x @ x).sum().gradient(x)
        ones = np.ones_like(A)
        np.testing.assert_allclose(g.numpy(), ones @ A.T + A.T @ ones, rtol=1e-5, atol=1e-5)


def test_different_devices_are_still_refused():
    from rulegrad.runtime.device import DeviceMismatch

    x = Tensor(A).shard(DEVS[2], axis=0)
    y = Tensor(B).shard(("CPU:2", "CPU:3"), axis=1)
    with pytest.raises(DeviceMismatch, match="different devices"):
        x @ y
