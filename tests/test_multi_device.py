"""Several devices: virtual CPU devices, copies between them, and sharded tensors.

Every value is checked against numpy on the host data; the kernels are checked to keep to one
device each (only a copy reads another device's buffer), on C and on the kernel interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.runtime.device import DeviceMismatch
from rulegrad.runtime.errors import InvalidArgument
from rulegrad.runtime.multi import layouts
from rulegrad.runtime.realize import buffer_of

BACKENDS = ["c", "interp"]
DEVS = {n: ("CPU",) + tuple(f"CPU:{i}" for i in range(1, n)) for n in (2, 4)}


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)
    return request.param


@pytest.fixture(params=[*BACKENDS, "oracle"])
def any_backend(request, monkeypatch):
    """The schedule's backends and the numpy oracle, which writes shards its own way."""
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)
    return request.param


def data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_one_device_per_kernel(t: Tensor) -> list:
    """Each kernel writes and reads buffers of one device, except a copy, which reads one
    buffer of another device; returns the kernels."""
    kernels = t.schedule()
    for k in kernels:
        out, ins = k.bufs[0].device, {b.device for b in k.bufs[1:]}
        if k.name.startswith("copy_"):
            assert len(k.bufs) == 2 and ins != {out}, (k.name, [b.device for b in k.bufs])
        else:
            assert ins <= {out}, (k.name, [b.device for b in k.bufs])
    return kernels


# ---------------------------------------------------------------------- .to()
def test_to_round_trip(backend):
    a = data(3, 5)
    t = Tensor(a)
    on1 = t.to("CPU:1")
    assert on1.device == "CPU:1" and t.device == "CPU" and t.to("cpu:0") is t
    back = (on1.to("CPU:2") * 2).to("CPU")
    np.testing.assert_array_equal(back.numpy(), a * 2)
    # the buffers are where the tensors say
    assert buffer_of(on1.realize().uop).device == "CPU:1"
    assert buffer_of(back.uop).device == "CPU"


def test_copy_source_is_computed_on_its_own_device(backend):
    a = data(4, 6)
    t = (Tensor(a).exp() + 1).to("CPU:1")
    kernels = assert_one_device_per_kernel(t)
    assert [k.name.split("_")[0] for k in kernels] == ["E", "copy"]
    np.testing.assert_allclose(t.numpy(), np.exp(a) + 1, rtol=1e-6)


def test_tensor_created_on_a_device(backend):
    a = data(2, 3)
    t = Tensor(a, device="CPU:3")
    assert t.device == "CPU:3" and buffer_of(t.uop).device == "CPU:3"
    np.testing.assert_array_equal((t + t).numpy(), a + a)


def test_devices_in_a_schedule_cache_key():
    # the same program over buffers of another device is another schedule (its outputs go
    # there), not a replay onto the first device
    a = data(3, 3)
    for dev in ("CPU:1", "CPU:2"):
        out = (Tensor(a, device=dev) * 3).realize()
        assert buffer_of(out.uop).device == dev
        np.testing.assert_allclose(out.numpy(), a * 3)


# ---------------------------------------------------------------------- sharding
@pytest.mark.parametrize("n", [2, 4])
def test_sharded_matmul(backend, n):
    a, w = data(8, 12), data(12, 4, seed=1)
    rows = Tensor(a).shard(DEVS[n], axis=0) @ Tensor(w).shard(DEVS[n])  # rows x replicas
    np.testing.assert_allclose(rows.numpy(), a @ w, rtol=1e-5, atol=1e-5)
    # sharded along the contracted axis: each device's partial product, then an all-reduce
    inner = Tensor(a).shard(DEVS[n], axis=1) @ Tensor(w).shard(DEVS[n], axis=0)
    assert_one_device_per_kernel(inner)
    np.testing.assert_allclose(inner.numpy(), a @ w, rtol=1e-5, atol=1e-5)
    # replicas x columns: each device computes its columns of the product
    cols = Tensor(a).shard(DEVS[n]) @ Tensor(w).shard(DEVS[n], axis=1)
    assert layouts([cols.uop]) == [(1, DEVS[n])]  # the product's columns stay sharded
    np.testing.assert_allclose(cols.numpy(), a @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [2, 4])
def test_sharded_sum_over_the_sharded_axis(backend, n):
    a = data(8, 6)
    x = Tensor(a).shard(DEVS[n], axis=0)
    total = x.sum(axis=0)
    kernels = assert_one_device_per_kernel(total)
    assert sum(k.name.startswith("copy_") for k in kernels) >= n * (n - 1)  # partials moved
    np.testing.assert_allclose(total.numpy(), a.sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.sum().numpy(), a.sum(), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(x.max(axis=0).numpy(), a.max(axis=0))
    # the result is a replica on every device, each the whole sum
    parts = [p.numpy() for p in (total.realize().to(d) for d in DEVS[n])]
    for p in parts[1:]:
        np.testing.assert_array_equal(p, parts[0])


def test_sharded_elementwise_reduce_and_softmax(backend):
    a, b = data(4, 8), data(4, 8, seed=2)
    x, y = Tensor(a).shard(DEVS[2], axis=1), Tensor(b).shard(DEVS[2], axis=1)
    np.testing.assert_allclose((x * y + 2).relu().numpy(), np.maximum(a * b + 2, 0), rtol=1e-6)
    np.testing.assert_allclose(x.sum(axis=0).numpy(), a.sum(axis=0), rtol=1e-5, atol=1e-6)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(x.softmax(1).numpy(), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.permute(1, 0).reshape(2, 16).numpy(),
                               a.T.reshape(2, 16))
    # a replica, and a value of constants (eye), read by shards: each device takes its slice
    np.testing.assert_allclose((x + Tensor(b).shard(DEVS[2])).numpy(), a + b, rtol=1e-6)
    sq = Tensor(a[:, :4]).shard(DEVS[2], axis=0)
    np.testing.assert_allclose((sq + Tensor.eye(4)).numpy(), a[:, :4] + np.eye(4), rtol=1e-6)


def test_realized_shards_stay_on_their_devices(backend):
    a = data(4, 3)
    x = (Tensor(a).shard(DEVS[2], axis=0) * 2).realize()
    parts = x.uop.src[0].src
    assert [buffer_of(p).device for p in parts] == list(DEVS[2])
    np.testing.assert_array_equal(buffer_of(parts[1]).data.reshape(2, 3), a[2:] * 2)
    np.testing.assert_array_equal((x + 1).numpy(), a * 2 + 1)  # read again from the shards


def test_sharded_constants():
    x = Tensor.ones(4, 2).shard(DEVS[2], axis=0).realize()
    assert [buffer_of(p).device for p in x.uop.src[0].src] == list(DEVS[2])
    np.testing.assert_array_equal((x * 3).numpy(), np.full((4, 2), 3, np.float32))


def test_symbolic_size_on_a_device(backend):
    a = data(10, 4)
    n = Variable("n", 1, 10)
    t = Tensor(a, device="CPU:1")
    for length in (3, 7):
        got = t.shrink(((0, n.bind(length)), None)).sum(axis=1).numpy()
        np.testing.assert_allclose(got, a[:length].sum(axis=1), rtol=1e-5)


# ---------------------------------------------------------------------- errors
def test_ops_across_devices_need_a_copy():
    a = Tensor(data(2, 2))
    with pytest.raises(DeviceMismatch, match=r"ADD of tensors on different devices CPU and "
                                             r"CPU:1: copy one with \.to\(device\)"):
        a + a.to("CPU:1")
    with pytest.raises(DeviceMismatch, match="different devices"):
        a @ a.to("CPU:1")


def test_sharded_and_unsharded_do_not_mix():
    a = Tensor(data(4, 4))
    with pytest.raises(DeviceMismatch, match="different devices"):
        (a.shard(DEVS[2], axis=0) + a).numpy()
    # sharded along different axes: no longer refused (tests/test_sharded_axes_mix.py), the
    # second is gathered on each device and cut along the first's axis
    got = (a.shard(DEVS[2], axis=0) + a.shard(DEVS[2], axis=1)).numpy()
    np.testing.assert_array_equal(got, data(4, 4) * 2)


def test_shapes_that_do_not_divide():
    with pytest.raises(InvalidArgument, match=r"cannot shard shape \(5, 4\) along axis 0 over "
                                              r"2 devices: 5 is not a multiple of 2"):
        Tensor(data(5, 4)).shard(DEVS[2], axis=0)
    x = Tensor(data(4, 6)).shard(DEVS[2], axis=1)
    with pytest.raises(InvalidArgument, match="splits the sharded axis"):
        x.reshape(24).numpy()
    with pytest.raises(InvalidArgument, match="move data between the shards"):
        x[:, 1:].numpy()


# ---------------------------------------------------------------------- assign into shards
def _parts(t: Tensor) -> list[np.ndarray]:
    return [buffer_of(p).data.copy() for p in t.uop.src[0].src]


@pytest.mark.parametrize("n", [2, 4])
def test_assign_into_a_sharded_tensor(any_backend, n):
    a, b = data(4, 8), data(4, 8, seed=1)
    x = Tensor(a).shard(DEVS[n], axis=0).realize()
    bufs = [buffer_of(p) for p in x.uop.src[0].src]
    x.assign(x * 2 + 1)  # reads its own shards
    want = a * 2 + 1
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-6)
    # in place: the same buffers, on their devices, each holding its own rows
    assert [buffer_of(p) for p in x.uop.src[0].src] == bufs
    assert [bf.device for bf in bufs] == list(DEVS[n])
    for i, part in enumerate(_parts(x)):
        np.testing.assert_allclose(part.reshape(4 // n, 8), np.split(want, n)[i], rtol=1e-6)
    x.assign(Tensor(b).shard(DEVS[n], axis=0))  # a value sharded alike
    np.testing.assert_array_equal(x.numpy(), b)
    x.assign(Tensor(a))  # unsharded: scattered
    np.testing.assert_array_equal(x.numpy(), a)
    x.assign(Tensor(b).shard(DEVS[n]))  # replicas: each device keeps its rows
    np.testing.assert_array_equal(x.numpy(), b)
    x.assign(Tensor(a).shard(DEVS[n], axis=1))  # sharded along another axis: resharded
    np.testing.assert_array_equal(x.numpy(), a)
    # reads rows of other devices: gathered, flipped and scattered before any is written
    x.assign(x.to("CPU:1").flip((0, 1)))
    np.testing.assert_array_equal(x.numpy(), a[::-1, ::-1])
    x.assign(x - x.sum(axis=0, keepdim=True))  # an all-reduce of the target
    want = a[::-1, ::-1] - a[::-1, ::-1].sum(axis=0, keepdims=True)
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-5, atol=1e-5)
    x.assign(3.0)
    np.testing.assert_array_equal(x.numpy(), np.full((4, 8), 3, np.float32))


def test_assign_into_replicas(any_backend):
    a = data(4, 6)
    r = Tensor(a).shard(DEVS[2]).realize()
    r.assign(Tensor(a * 3).shard(DEVS[2], axis=0))  # each replica gets the whole value
    for part in _parts(r):
        np.testing.assert_allclose(part.reshape(4, 6), a * 3, rtol=1e-6)


def test_assign_into_a_view_of_shards(any_backend):
    a, b = data(4, 8), data(4, 8, seed=1)
    y = Tensor(a).shard(DEVS[4], axis=1).realize()
    rows = y[1:3]
    rows.assign(Tensor(b[1:3]))  # rows: every device writes its columns of them
    want = a.copy()
    want[1:3] = b[1:3]
    np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(rows.numpy(), b[1:3])  # the view reads the shards again
    y.permute(1, 0).flip(1).assign(Tensor(b.T[:, ::-1]).shard(DEVS[4], axis=0))
    np.testing.assert_array_equal(y.numpy(), b)
    y.reshape(2, 2, 8)[1].assign(y.reshape(2, 2, 8)[0] * 2)  # reads other rows of itself
    want = b.copy()
    want[2:] = b[:2] * 2
    np.testing.assert_array_equal(y.numpy(), want)


def test_assign_into_a_slice_across_shards(any_backend):
    # a slice that cuts the sharded axis: the whole tensor assigned, the value inside the slice
    a, b = data(8, 6), data(8, 6, seed=1)
    x = Tensor(a).shard(DEVS[4], axis=0).realize()
    bufs = [buffer_of(p) for p in x.uop.src[0].src]
    want = a.copy()
    x[1:6].assign(Tensor(b[1:6]))  # rows of 3 devices, two of them in part
    want[1:6] = b[1:6]
    np.testing.assert_array_equal(x.numpy(), want)
    x[3].assign(Tensor(a[0]))  # one row (a reshaped slice)
    want[3] = a[0]
    np.testing.assert_array_equal(x.numpy(), want)
    x[2:7, 1:3].assign(Tensor(b[:5, :2]))
    want[2:7, 1:3] = b[:5, :2]
    np.testing.assert_array_equal(x.numpy(), want)
    x[4:8].assign(x.to("CPU:2")[0:4] * 2)  # reads other rows of itself
    want[4:8] = want[0:4] * 2
    np.testing.assert_array_equal(x.numpy(), want)
    x[0:4].assign(Tensor(b[4:]).shard(DEVS[4], axis=0))  # a sharded value
    want[0:4] = b[4:]
    np.testing.assert_array_equal(x.numpy(), want)
    x[5:7].assign(1.5)
    want[5:7] = 1.5
    np.testing.assert_array_equal(x.numpy(), want)
    assert [buffer_of(p) for p in x.uop.src[0].src] == bufs  # in place


def test_assign_into_shards_errors():
    a = data(4, 8)
    y = Tensor(a).shard(DEVS[4], axis=1).realize()
    with pytest.raises(InvalidArgument, match=r"assign into this view of a tensor sharded over "
                                              r"\(CPU, CPU:1, CPU:2, CPU:3\): each shard must "
                                              r"write its own part, but FLIP"):
        y.flip(1).assign(Tensor(a))
    with pytest.raises(InvalidArgument, match="splits the sharded axis"):
        y.reshape(32).assign(Tensor(a.reshape(32)))
    with pytest.raises(InvalidArgument, match="assign into a EXPAND view"):
        y.reshape(1, 4, 8).expand(2, 4, 8).assign(Tensor(a).expand(2, 4, 8))
    lazy = y + 1  # a lazy sharded value is realized into shards of its own first
    lazy.assign(y)
    np.testing.assert_array_equal(lazy.numpy(), a)
    with pytest.raises(DeviceMismatch, match=r"different devices \(CPU, CPU:1, CPU:2, CPU:3\) "
                                             r"and \(CPU, CPU:1\)"):
        y.assign(Tensor(a).shard(DEVS[2], axis=1))
    with pytest.raises(InvalidArgument, match="shapes and dtypes must match"):
        y.assign(Tensor(a[:2]))
    with pytest.raises(DeviceMismatch, match="different devices"):  # sharded into one device
        Tensor(a).realize().assign(y)
    np.testing.assert_array_equal(y.numpy(), a)  # nothing was written


def test_bad_device_names():
    with pytest.raises(InvalidArgument, match="unknown device 'GPU'"):
        Tensor(data(2)).to("GPU")
    with pytest.raises(InvalidArgument, match="repeat a device"):
        Tensor(data(2)).shard(("CPU", "CPU:0"))
    with pytest.raises(InvalidArgument, match="already sharded"):
        Tensor(data(2)).shard(DEVS[2]).shard(DEVS[2])
