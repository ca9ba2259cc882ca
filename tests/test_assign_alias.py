"""Assigns whose kernel would read and write one buffer through different views (issue 31,
item 2): the target is a view of its buffer (a flip, permute, shrink or reshape of a shard:
rules/multi.rules' `assign_multi` writes each shard through the target's view; or such a view
of one buffer in the IR), and the value reads the same buffer at other elements. One C loop
that stores through one view and loads through another reads elements it already overwrote
(`x.flip(1).assign(x)` gave [0, 1, 2, 2, 1, 0]); the scheduler's `assign_hazard`
(rules/rangeify.rules, `reads_moved` in rules/analyses.py) computes such a value into a buffer
of its own first. A value read at the very elements written (through the target's own view,
or the plain buffer for a plain target) stays one kernel that writes in place.

Run on the C backend, under both schedulers (the numpy oracle reads everything first, which
hides the bug), against numpy: a copy of the data, the view written with numpy's view."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


@pytest.fixture(params=["rangeify", "kernelize"])
def scheduler(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)
    return request.param


def assign_node(target: Tensor, value: Tensor) -> Tensor:
    """The ASSIGN of `value` into `target`, as Tensor.assign builds it, not yet realized."""
    return Tensor(UOp(Ops.ASSIGN, target.dtype, (target.uop, value.uop)))


def expected(a: np.ndarray, npview: Callable, npvalue: Callable) -> np.ndarray:
    out = a.copy()
    npview(out)[...] = npvalue(a)
    return out


# (name, shape, target view, numpy's view, value, numpy's value): views along axis 1 and 2,
# so that a tensor sharded along axis 0 may be written through them (multi.rules)
CASES = [
    ("flip <- x", (4, 6), lambda t: t.flip(1), lambda a: a[:, ::-1],
     lambda t: t, lambda a: a),
    ("flip <- x*2+1", (4, 7), lambda t: t.flip(1), lambda a: a[:, ::-1],
     lambda t: t * 2 + 1, lambda a: a * 2 + 1),
    ("permute <- x+1", (2, 5, 5), lambda t: t.permute(0, 2, 1), lambda a: a.transpose(0, 2, 1),
     lambda t: t + 1, lambda a: a + 1),
    ("permute <- flip", (2, 3, 3), lambda t: t.permute(0, 2, 1), lambda a: a.transpose(0, 2, 1),
     lambda t: t.flip(2), lambda a: a[:, :, ::-1]),
    ("shrink right <- shrink left", (4, 6), lambda t: t.shrink(((0, 4), (1, 6))),
     lambda a: a[:, 1:], lambda t: t.shrink(((0, 4), (0, 5))), lambda a: a[:, :5]),
    ("shrink left <- shrink right", (4, 6), lambda t: t.shrink(((0, 4), (0, 5))),
     lambda a: a[:, :5], lambda t: t.shrink(((0, 4), (1, 6))), lambda a: a[:, 1:]),
    ("shrink <- shrink + pad", (4, 6), lambda t: t.shrink(((0, 4), (1, 5))),
     lambda a: a[:, 1:5], lambda t: t.shrink(((0, 4), (2, 5))).pad(((0, 0), (0, 1))),
     lambda a: np.pad(a[:, 2:5], ((0, 0), (0, 1)))),
    ("flip <- reduction of the target", (4, 5), lambda t: t.flip(1), lambda a: a[:, ::-1],
     lambda t: t - t.sum(1, keepdim=True), lambda a: a - a.sum(1, keepdims=True)),
    ("flip <- product of the target", (2, 4, 4), lambda t: t.flip(2), lambda a: a[:, :, ::-1],
     lambda t: t @ t, lambda a: a @ a),
    ("reshape <- its flip", (2, 12), lambda t: t.reshape(2, 3, 4), lambda a: a.reshape(2, 3, 4),
     lambda t: t.reshape(2, 3, 4).flip(2), lambda a: a.reshape(2, 3, 4)[:, :, ::-1]),
    ("wide flip", (6, 131), lambda t: t.flip(1), lambda a: a[:, ::-1],
     lambda t: t * 3, lambda a: a * 3),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_assign_into_a_view_on_one_device(case, scheduler):
    """One buffer on one device, written through a view by a value that reads it elsewhere
    (the IR's ASSIGN into a view: what multi.rules makes per device)."""
    _, shape, view, npview, value, npvalue = case
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 7
    x = Tensor(a.copy())
    assign_node(view(x), value(x)).realize()
    np.testing.assert_allclose(x.numpy(), expected(a, npview, npvalue), rtol=1e-6)


LAYOUTS = {"2 devices": ("CPU", "CPU:1"), "1 device": ("CPU",)}


@pytest.mark.parametrize("devices", list(LAYOUTS.values()), ids=list(LAYOUTS))
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_assign_into_a_view_of_a_sharded_tensor(case, devices, scheduler):
    """The issue's programs (`x.flip(1).assign(x)`, `x.permute(0, 2, 1).assign(x + 1)`) and
    the class: each case above through Tensor.assign on a tensor sharded along axis 0."""
    _, shape, view, npview, value, npvalue = case
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 7
    x = Tensor(a.copy()).shard(devices, axis=0).realize()
    view(x).assign(value(x))
    np.testing.assert_allclose(x.numpy(), expected(a, npview, npvalue), rtol=1e-6)


@pytest.mark.parametrize("axis", [1, None])
def test_assign_into_a_flip_of_a_sharded_tensor_other_layouts(axis, scheduler):
    """Sharded along the last axis (the flip is along the first) and replicated."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = Tensor(a.copy()).shard(("CPU", "CPU:1"), axis=axis).realize()
    x.flip(0).assign(x + 1)
    np.testing.assert_allclose(x.numpy(), a[::-1] + 1)


def test_a_value_read_where_it_is_written_stays_one_kernel_in_place(scheduler):
    """`x.assign(x + 1)`, and a view written with the same view's value, are one kernel that
    writes in place (per device when sharded): no buffer for the value."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = Tensor(a.copy())
    assert len(assign_node(x, x + 1).schedule()) == 1
    assert len(assign_node(x.flip(1), x.flip(1) * 2).schedule()) == 1
    assert len(assign_node(x.reshape(6, 4), x.reshape(6, 4) + 1).schedule()) == 1
    x.assign(x + 1)
    np.testing.assert_array_equal(x.numpy(), a + 1)
    s = Tensor(a.copy()).shard(("CPU", "CPU:1"), axis=0).realize()
    assert len(assign_node(s, s + 1).schedule()) == 2
    assert len(assign_node(s.flip(1), s.flip(1) + 1).schedule()) == 2
    s.flip(1).assign(s.flip(1) + 1)
    np.testing.assert_array_equal(s.numpy(), a + 1)
    # a value read elsewhere is computed first: at least one more kernel
    assert len(assign_node(x.flip(1), x).schedule()) == 2


@pytest.mark.parametrize("devices", list(LAYOUTS.values()), ids=list(LAYOUTS))
def test_assign_through_getitem_views_of_a_sharded_tensor(devices, scheduler):
    """`x[:, ::-1]`, a shifted slice and a column, written with values read elsewhere."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = Tensor(a.copy()).shard(devices, axis=0).realize()
    x[:, ::-1].assign(x + 1)
    x[:, 1:].assign(x[:, :-1] * 2)
    x[:, 2].assign(x[:, 3] - x.sum(1))
    ref = a.copy()
    ref[:, ::-1] = a + 1
    ref[:, 1:] = ref[:, :-1].copy() * 2
    ref[:, 2] = ref[:, 3] - ref.sum(1)
    np.testing.assert_array_equal(x.numpy(), ref)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tensor_assign_into_a_view_on_one_device(case, scheduler):
    """Tensor.assign into a view of a tensor on one device (`x.flip(0).assign(x)`,
    `x[:, ::-1].assign(x + 1)`) writes through the view in place, as for a shard."""
    _, shape, view, npview, value, npvalue = case
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 7
    x = Tensor(a.copy())
    view(x).assign(value(x))
    np.testing.assert_allclose(x.numpy(), expected(a, npview, npvalue), rtol=1e-6)
