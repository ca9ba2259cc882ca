"""A float16 (or float32) store whose value does not vary along its vector loop (a constant fill,
a broadcast scalar) on the 16-lane path: compact62 found `Tensor.full((50,), 5, float16)` failing
to compile (the store's broadcast, vexp.WIDE's rg_zset_f32, was used but never declared: only
vector values declared it). The oracle is numpy's bits."""

import numpy as np
import pytest

from rulegrad import Tensor, dtypes

DTYPES = [(dtypes.float16, np.float16), (dtypes.float32, np.float32)]


@pytest.fixture(params=["32", "64"], autouse=True)
def width(request, monkeypatch):
    """8 and 16 lanes (64: vexp.WIDE's generic vector C, which compiles on any x86-64 target)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", request.param)
    return request.param


@pytest.mark.parametrize("n", [15, 16, 17, 50, 4099])
@pytest.mark.parametrize("dt,npd", DTYPES)
def test_a_constant_fill_gives_numpys_bits(n, dt, npd):
    for v in (5, -0.0, float("nan"), 1e-8):
        got = Tensor.full((n,), v, dtype=dt).numpy()
        assert got.dtype == npd and got.tobytes() == np.full((n,), v, dtype=npd).tobytes(), v


@pytest.mark.parametrize("dt,npd", DTYPES)
def test_a_broadcast_scalar_stored_along_a_long_loop(dt, npd):
    s = np.array([2.5], dtype=npd)
    got = (Tensor(s).expand(33) * 2).numpy()
    assert got.tobytes() == (np.broadcast_to(s, (33,)) * npd(2)).tobytes()
    x = Tensor(np.zeros(40, dtype=npd))
    x.assign(Tensor.full((40,), -3.25, dtype=dt)).realize()
    assert x.numpy().tobytes() == np.full(40, -3.25, dtype=npd).tobytes()
