"""Reductions down long axes to few columns in every dtype (rangeify.rules' narrow_reduce and
interchange_helpers' register accumulators: 8 float32 or int32 lanes, 4 float64), checked
against numpy over a sweep of shapes, dtypes, ops, keepdim and threads, with NaN and -0.0; and
by the work their kernels do (where the accumulators live: the actions' words), never time."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

_SHAPES = [((1, 1), (0,)), ((2, 3, 5), (0, 1)), ((100003, 13), (0,)), ((4096, 3), (0,)),
           ((3, 4096), (1,)), ((7, 13, 17, 19), (1, 2)), ((16, 127, 127, 3), (1, 2)),
           ((1, 63, 257, 65), (1, 2))]
_DTYPES = ["float32", "float64", "int32", "int8", "float16", "bool"]


def _data(shape: tuple[int, ...], dt: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in ("int32", "int8"):
        return rng.integers(-100, 100, size=shape).astype(dt)
    x = rng.standard_normal(shape).astype(dt)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, max(1, flat.size // 7000))] = np.nan
    flat[rng.integers(0, flat.size, max(1, flat.size // 50))] = -0.0
    return x


def _want(x: np.ndarray, op: str, axes: tuple[int, ...], keep: bool) -> np.ndarray:
    if x.dtype == np.bool_ and op in ("max", "min"):
        return getattr(np, "any" if op == "max" else "all")(x, axis=axes, keepdims=keep)
    return getattr(x, op)(axis=axes, keepdims=keep)


@pytest.mark.parametrize("shape, axes", _SHAPES)
@pytest.mark.parametrize("dt", _DTYPES)
def test_sum_max_min_mean_equal_numpy(monkeypatch, shape, axes, dt):
    monkeypatch.setenv("RULEGRAD_THREADS", "1" if shape[0] % 2 else "2")
    x = _data(shape, dt, sum(shape))
    ops = ["sum", "max", "min"] + (["mean"] if dt != "bool" else [])
    rows = int(np.prod([shape[a] for a in axes]))
    for op in ops:
        keep = op == "min"
        got = getattr(Tensor(x), op)(axis=axes, keepdim=keep).numpy()
        want = _want(x, op, axes, keep)
        assert got.shape == want.shape, (op, got.shape, want.shape)
        if op in ("sum", "mean") and dt == "float16":
            # numpy adds halves in half precision; ours in float32, rounded once (lower.rules'
            # half_sum): the float64 sum rounded is the oracle
            want = _want(x.astype(np.float64), op, axes, keep).astype(np.float16)
        if op in ("sum", "mean") and want.dtype.kind == "f":
            tol = 2e-3 if dt == "float16" else 1e-5 * np.sqrt(rows)
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=tol, atol=tol, err_msg=op)
        else:  # MAX, MIN and ints: exact in any order; NaN wins, as numpy's
            np.testing.assert_array_equal(got, want, err_msg=op)
            if want.dtype.kind == "f":  # (-0.0 kept; a NaN's sign is no part of its meaning)
                real = ~np.isnan(want)
                np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]),
                                              err_msg=op)


def _actions(t: Tensor) -> list[list[str]]:
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    return [actions(optimize_kernel(low)) for low in
            (lower_only(item.ast) for item in t.schedule())]


@pytest.mark.parametrize("dt, lanes", [("float64", 4), ("float32", 8)])
@pytest.mark.parametrize("op", ["max", "min"])
def test_a_max_down_few_columns_keeps_its_dtype_lanes_in_registers(monkeypatch, dt, lanes, op):
    # one core: the partials' max or min keeps its accumulators in registers, vectors of the
    # dtype's lanes, each row read once; float64's were a block of 52 in memory (each step
    # loading, blending and storing every one: 13 vectors of 4 do not fit). (An int32 max
    # alone keeps gcc's loop: one max instruction a step at the target's width)
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    x = _data((100003, 13), dt, 7)
    t = getattr(Tensor(x), op)(axis=0)
    first = _actions(t)[0]
    assert first and f"vectors of {lanes} accumulators in registers" in first[0], first
    np.testing.assert_array_equal(t.numpy(), getattr(x, op)(axis=0))


def test_an_argmax_first_hit_keeps_int32_lanes_in_registers(monkeypatch):
    # the first hit per column (an int32 MIN of positions where x equals the max) runs on
    # vectors: float32 compares, int32 selects and mins, 13 columns in 2 vectors
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    x = _data((100003, 13), "float32", 8)
    t = Tensor(x).argmax(0)
    last = _actions(t)[-1]
    assert any("2 vectors of 8 accumulators in registers" in a for a in last), last
    np.testing.assert_array_equal(t.numpy(), x.argmax(0))
