"""argmax and argmin down long and short axes (numpy's semantics: the first index of the
largest, a NaN the largest, the first NaN), checked against numpy over a sweep of shapes and
dtypes, NaN rows, ties and keepdim; and by the work their kernels do (kernels, actions, loads
per step of the rows' loop), never by time."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels as _kernels

from rulegrad import Ops, Tensor, UOp

_SHAPES = [((1, 1), 0), ((2, 3, 5), 1), ((100003, 13), 0), ((4096, 3), 0), ((3, 4096), 1),
           ((7, 13, 17, 19), 2), ((16, 127, 127, 3), 1), ((1, 63, 257, 65), 2)]


def _data(shape: tuple[int, ...], dt: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.random(shape) < 0.3
    if dt in ("int32", "int8"):
        return rng.integers(-100, 100, size=shape).astype(dt)  # (many ties: the first wins)
    x = rng.standard_normal(shape).astype(dt)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, max(1, flat.size // 5000))] = np.nan  # NaN rows: they win
    if x.ndim == 2 and x.shape[1] > 2:
        x[:, 1] = np.nan  # a column of NaN only: its first row
        x[:, 2] = 1.5  # a column of one value: its first row
    return x


def _check(x: np.ndarray, op: str, axis: int, keepdim: bool, threads: str) -> None:
    got = getattr(Tensor(x), op)(axis, keepdim=keepdim).numpy()
    want = getattr(x, op)(axis=axis, keepdims=keepdim)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got.astype(np.int64), want, err_msg=f"{op} {threads} threads")


@pytest.mark.parametrize("shape, axis", _SHAPES)
@pytest.mark.parametrize("threads", ["1", "2"])
def test_float32_argmax_argmin_equal_numpy_with_nan_rows(monkeypatch, shape, axis, threads):
    monkeypatch.setenv("RULEGRAD_THREADS", threads)
    x = _data(shape, "float32", len(shape) + shape[0])
    for op in ("argmax", "argmin"):
        _check(x, op, axis, False, threads)
    _check(x, "argmax", axis, True, threads)


@pytest.mark.parametrize("dt", ["float64", "int32", "int8", "float16", "bool"])
@pytest.mark.parametrize("shape, axis", [((100003, 13), 0), ((2, 3, 5), 1), ((4096, 3), 0),
                                         ((7, 13, 17, 19), 1)])
def test_other_dtypes_argmax_argmin_equal_numpy(monkeypatch, dt, shape, axis):
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    x = _data(shape, dt, 3)
    for op in ("argmax", "argmin"):
        _check(x, op, axis, op == "argmin", "1")


def _body_loads(red: UOp) -> list[UOp]:
    """The global memory a reduce's body loads per step, a kernel-local array's value (filled
    once, outside the reduce's loops) aside."""
    seen, work, loads = set(), [red.src[0]], []
    while work:
        n = work.pop()
        if n in seen or n.op is Ops.DEFINE_LOCAL:
            continue
        seen.add(n)
        if n.op is Ops.LOAD and n.src[0].src[0].op is Ops.DEFINE_GLOBAL:
            loads.append(n)
        work.extend(n.src)
    return loads


def test_a_long_argmax_to_few_columns_reads_each_row_once_in_one_pass(monkeypatch):
    # 2 kernels: the max's partials (narrow_reduce), then the first hit per column, whose NaN
    # test is the max's own (a NaN max: a NaN in the column), not a pass of its own; the hits'
    # loop runs the columns inside the rows' (each row read once, contiguously) and reads one
    # value per step: the max, its partials combined, is computed once per column into an
    # array, not again for each of the 100003 rows (7 loads and 6 maxes a step)
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    x = _data((100003, 13), "float32", 1)
    t = Tensor(x).argmax(0)
    kernels = _kernels(t)
    assert len(kernels) == 2, [a for _, a in kernels]
    ast, acts = kernels[-1]
    assert any(a.startswith("INTERCHANGE") for a in acts), acts
    (red,) = [n for n in ast.toposort() if n.op is Ops.REDUCE and n.dtype.name == "int32"]
    # (x's value; beside it the row's position, an int32 table read once per row)
    assert len([n for n in _body_loads(red) if n.dtype.is_float]) == 1, _body_loads(red)
    np.testing.assert_array_equal(t.numpy(), x.argmax(0))


def test_a_short_row_of_columns_keeps_the_plain_order(monkeypatch):
    # 3 columns, each max (16 partials combined) computed once per column before its rows'
    # loop: run with the columns inside, it was computed again for each of the 4096 rows
    monkeypatch.setenv("RULEGRAD_THREADS", "1")
    x = _data((4096, 3), "float32", 2)
    t = Tensor(x).argmax(0)
    kernels = _kernels(t)
    assert not any(a.startswith("INTERCHANGE") for _, acts in kernels[1:] for a in acts), \
        [a for _, a in kernels]
    np.testing.assert_array_equal(t.numpy(), x.argmax(0))
