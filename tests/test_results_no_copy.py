"""Results without copies (issue 15): `.numpy()` hands out the realized buffer as a read-only
view; a later write (assign) never changes an array already handed out; output buffers come
from a pool, and storage still visible through a handed-out array is never reused."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from rulegrad import Tensor


@pytest.fixture(params=["c", "interp", "oracle"])
def backend(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)
    return request.param


def test_numpy_is_a_read_only_view_of_the_result(backend):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = (Tensor(a) * 2).realize()
    first, second = t.numpy(), t.numpy()
    np.testing.assert_array_equal(first, a * 2)
    assert np.shares_memory(first, second)  # the buffer itself, not a copy each time
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0, 0] = 7


def test_assign_never_changes_an_array_handed_out(backend):
    a = np.arange(6, dtype=np.float32)
    t = Tensor(a).realize()
    before = t.numpy()
    t.assign(t * 3 + 1)
    np.testing.assert_array_equal(before, a)  # the old values, still
    np.testing.assert_array_equal(t.numpy(), a * 3 + 1)
    mid = t.numpy()
    t.assign(t - 4)
    np.testing.assert_array_equal(mid, a * 3 + 1)
    np.testing.assert_array_equal(t.numpy(), a * 3 - 3)


def test_assign_without_readers_writes_in_place():
    from rulegrad.runtime import buffer

    t = Tensor(np.ones(8, np.float32)).realize()
    copies = buffer.pool_stats["copied_on_write"]
    for _ in range(3):
        t.assign(t + 1)
    assert buffer.pool_stats["copied_on_write"] == copies  # nobody held an array: no copy
    np.testing.assert_array_equal(t.numpy(), np.full(8, 4, np.float32))


def test_outputs_reuse_pooled_storage_but_never_a_live_array(monkeypatch):
    from rulegrad.runtime import buffer

    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    x = Tensor(np.arange(1000, dtype=np.float32)).realize()
    (x + 1.0).realize()
    gc.collect()
    allocated = buffer.pool_stats["allocated"]
    for _ in range(5):  # dropped at once: its storage goes back to the pool, or its plan
        (x + 2.0).realize()  # (runtime/plans.py) writes it again
    assert buffer.pool_stats["allocated"] == allocated  # no fresh storage
    held = [(x * float(k + 3)).numpy() for k in range(6)]  # each kept by the caller
    for _ in range(6):
        (x - 5.0).realize()
    for k, arr in enumerate(held):
        np.testing.assert_array_equal(arr, np.arange(1000, dtype=np.float32) * np.float32(k + 3))
