"""Issue 31 (cfix58): sort, argsort, topk, cumsum, cummax and argmax over either axis, then an
index, a slice or a column, compile and equal numpy on both schedulers.

`x.sort(0)[0][-1]` on 20 x 8 did not compile: the interchange's hoist (`_hoisted`, rules/
interchange_helpers.py) took the kernel-local array of the sort's ranks as a value repeated per
column and stored the whole array as one element of another (`loc2[r2] = loc3`, then `t27[t28]`
on a scalar). `x.cumsum(0)[0]` on 20 x 8 did not compile either: the interchange's passes of
4 rows folded the gated-off rows to `acc + 0.0`, which the renderer printed outside the column
loop its accumulator cell names (backends/c/render.py, `_open_columns`). Oracle: numpy
(stable sorts; a float cumsum to rounding, its order of adds ours)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

SHAPES = [(1, 1), (7, 3), (13, 31), (20, 8), (61, 67), (1, 100), (100, 1)]
INT_SHAPES = [(7, 3), (20, 8), (61, 67)]
INDEX = {"last": lambda v: v[-1], "first": lambda v: v[0], "tail": lambda v: v[1:],
         "step": lambda v: v[::2], "column": lambda v: v[:, min(3, v.shape[1] - 1)]}


def _ops(axis: int, k: int) -> dict:
    return {
        "sort": (lambda t: t.sort(axis)[0], lambda a: np.sort(a, axis, kind="stable")),
        "argsort": (lambda t: t.argsort(axis), lambda a: np.argsort(a, axis, kind="stable")),
        "topk": (lambda t: t.topk(k, axis)[0],
                 lambda a: np.take(-np.sort(-a, axis), np.arange(k), axis)),
        "cumsum": (lambda t: t.cumsum(axis), lambda a: np.cumsum(a, axis, dtype=a.dtype)),
        "cummax": (lambda t: t.cummax(axis)[0], lambda a: np.maximum.accumulate(a, axis)),
        "argmax": (lambda t: t.argmax(axis), lambda a: np.argmax(a, axis)),
    }


def _draw(shape: tuple[int, int], dt: str) -> np.ndarray:
    rng = np.random.default_rng(sum(shape))
    if dt == "float32":
        return rng.standard_normal(shape).astype(dt)
    return rng.integers(-5, 6, shape).astype(dt)  # (ties: the stable order decides)


def _check(name: str, axis: int, x: np.ndarray, index: str) -> None:
    got_fn, want_fn = _ops(axis, min(3, x.shape[axis]))[name]
    full = want_fn(x)
    if full.ndim < 2 and index == "column":
        return
    want = INDEX[index](full)
    got = INDEX[index](got_fn(Tensor(x))).numpy()
    assert got.shape == want.shape, (name, axis, x.shape, index)
    if name == "cumsum" and x.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(x.shape))
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {axis} {x.shape} {index}")


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("name", ["sort", "argsort", "topk", "cumsum", "cummax", "argmax"])
def test_float32_then_index(monkeypatch, scheduler, axis, name):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    for shape in SHAPES:
        for index in INDEX:
            _check(name, axis, _draw(shape, "float32"), index)


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("name", ["sort", "argsort", "topk", "cumsum", "cummax", "argmax"])
def test_int32_then_index(monkeypatch, scheduler, name):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    for axis in (0, 1):
        for shape in INT_SHAPES:
            for index in INDEX:
                _check(name, axis, _draw(shape, "int32"), index)


@pytest.mark.parametrize("shape", [(20, 8), (61, 67), (13, 31), (40, 16)])
def test_issue_program(shape):
    """The issue's program: the last row of a sort down axis 0."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(Tensor(x).sort(0)[0][-1].numpy(), np.sort(x, 0)[-1])
