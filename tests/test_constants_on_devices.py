"""A value of constants only (no buffer under it) has no device: it can be computed anywhere
(docs/devices.md). When a scheduler realizes one, because it is a root, or is read through an
expanding or padding view, or is a reduction of its own, its buffer is shared by every reader,
and readers on other devices must be able to read it. kernelize put that buffer on the default
device, so a kernel on CPU:1 (or a shard's) that read the same constant node was refused with
DeviceMismatch ("CMPLT of tensors on different devices CPU:1 and CPU"): the fuzzer's seeds
705015 and 705476, where an empty sum (the constant 0) was realized beside a sharded relu
(`(x < 0).where(0.0, x)` reads the same 0). Oracle: numpy, on both schedulers."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import using

A = np.arange(8, dtype=np.float32).reshape(2, 4) - 3.5
BIG = np.arange(4000, dtype=np.float32).reshape(1000, 4) / 7
E3 = np.exp(np.float32(3))


def _relu_beside_empty_sum(x: Tensor) -> tuple[list[Tensor], Tensor, np.ndarray]:
    # the fuzzer's program, shrunk: the empty sum is the constant 0 the relu's select reads
    empty = Tensor(A)[2:2].sum()
    return [empty], (x < 0).where(0.0, x), np.where(A < 0, 0, A)


# name -> (a program over x, A on CPU:1: (other roots realized with it, the result, numpy's))
PROGRAMS = {
    "relu_beside_empty_sum": _relu_beside_empty_sum,
    "relu_beside_zero_root": lambda x: ([Tensor.full((), 0.0)], x.relu(), np.maximum(A, 0)),
    "full_root_beside_its_product": lambda x: ([Tensor.full((2, 4), 3.0)], x * 3.0, A * 3),
    "computed_root": lambda x: ([Tensor.full((4,), 3.0).exp()],
                                x + Tensor.full((4,), 3.0).exp(), A + E3),
    # realized because the view expands it 1000 times
    "expanded": lambda x: ([], Tensor(BIG).to("CPU:1")
                           + Tensor.full((4,), 3.0).exp().reshape(1, 4).expand(1000, 4), BIG + E3),
    # realized because a pad under log is not safe to compute in place
    "padded": lambda x: ([], x + Tensor.full((2,), 3.0).exp().pad(((1, 1),)).add(1.0).log(),
                         A + np.log(np.pad(np.full(2, E3, np.float32), (1, 1)) + 1)),
    # a reduction of constants, a kernel of its own
    "reduced": lambda x: ([], x + Tensor.full((4, 300), 0.5).exp().sum(1).reshape(4, 1)
                          .expand(4, 4).sum(0), A + np.exp(np.float32(0.5)) * 1200),
}


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_realized_constant_is_read_on_any_device(scheduler, name):
    with using(scheduler):
        x = Tensor(A).to("CPU:1")
        roots, out, want = PROGRAMS[name](x)
        Tensor.realize(*roots, out)
        assert out.device == "CPU:1"
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_a_sharded_relu_beside_an_empty_sum(scheduler):
    # seed 705476's shape: a relu of shards of axis 1, copied back, and an empty sum
    with using(scheduler):
        x = Tensor(A).shard(("CPU", "CPU:1"), axis=1)
        r = x.relu()
        empty = r.to("CPU")[2:2].sum()
        gone = (x < 0).where(0.0, 5.0)
        Tensor.realize(empty, r, gone)
        assert r.device == ("CPU", "CPU:1")
        np.testing.assert_array_equal(r.numpy(), np.maximum(A, 0))
        np.testing.assert_array_equal(gone.numpy(), np.where(A < 0, 0, 5).astype(np.float32))
        assert empty.numpy() == 0


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_a_realized_constant_root_still_combines_on_each_device(scheduler):
    # the constant root's buffer is usable with tensors on the default device and on CPU:1
    with using(scheduler):
        c = Tensor.full((2, 4), 3.0).exp().realize()
        for dev in ("CPU", "CPU:1"):
            got = (c + Tensor(A).to(dev)).realize()
            assert got.device == dev
            np.testing.assert_allclose(got.numpy(), A + E3, rtol=1e-6)
