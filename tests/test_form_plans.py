"""Form plans (runtime/plans.py): a graph built again over new buffers (a Tensor made from a
fresh numpy array each call) runs the program of the graph of the same form that ran before,
with its own inputs; it never reuses a stale value, a result still held, or another form's
program, and holds none of its inputs alive. Every value is numpy's; work is counted (plan
hits, schedule-cache lookups), never timed."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from result_holders import HOLDERS, hold, values_held
from test_plans import _fresh_plans, _lookups  # noqa: F401 - the autouse fixture, shared

from rulegrad import Tensor
from rulegrad.runtime import plans
from rulegrad.runtime.realize import buffer_of
from rulegrad.runtime.schedule_cache import graph_key


def _draw(rng: np.random.Generator, shape: tuple[int, ...] = (4, 6),
          dtype: type = np.float32) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


# name: (rulegrad's program, numpy's)
PROGRAMS = {
    "add": (lambda a, b: a + b, lambda x, y: x + y),
    "3-op": (lambda a, b: ((a * b).exp() + a).relu(),
             lambda x, y: np.maximum(np.exp(x * y) + x, 0)),
    "reduce": (lambda a, b: (a - a.sum(axis=1, keepdim=True)) * b,
               lambda x, y: (x - x.sum(axis=1, keepdims=True)) * y),
    "matmul": (lambda a, b: (a @ b.T).relu(), lambda x, y: np.maximum(x @ y.T, 0)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_fresh_arrays_of_a_seen_form_run_its_plan(name):
    f, ref = PROGRAMS[name]
    rng = np.random.default_rng(1)
    for i in range(6):
        x, y = _draw(rng), _draw(rng)
        hits, lookups = plans.stats["form_hits"], _lookups()
        got = f(Tensor(x), Tensor(y)).numpy()
        np.testing.assert_allclose(got, ref(x, y), rtol=2e-5, atol=1e-5)
        if i >= 2:  # (the second graph of the form records its plan)
            assert plans.stats["form_hits"] == hits + 1
            assert _lookups() == lookups  # not scheduled, not even looked up


@pytest.mark.parametrize("name", PROGRAMS)
def test_realized_tensors_of_a_seen_form_do_not_stay_on_the_form_plan(name, monkeypatch):
    """A graph over tensors realized once, built again in a loop (`(a + b).numpy()`), whose
    form already has a plan (fresh arrays ran first): from its second call on it runs a plan of
    its own roots, with no walk of its graph for the form key at each call (the form plan
    served every call before, a walk each). Values are numpy's, an input assigned in place
    is read anew, and a graph over fresh buffers each call still never gets one."""
    f, ref = PROGRAMS[name]
    rng = np.random.default_rng(3)
    for _ in range(3):  # the form's plan, made by fresh arrays
        x, y = _draw(rng), _draw(rng)
        np.testing.assert_allclose(f(Tensor(x), Tensor(y)).numpy(), ref(x, y), rtol=2e-5,
                                   atol=1e-5)
    walks = []
    monkeypatch.setattr(plans, "graph_key", lambda roots: walks.append(1) or graph_key(roots))
    x, y = _draw(rng), _draw(rng)
    a, b = Tensor(x).realize(), Tensor(y).realize()
    for i in range(5):
        del walks[:]
        got = f(a, b).numpy()
        np.testing.assert_allclose(got, ref(x, y), rtol=2e-5, atol=1e-5)
        if i >= 2:
            assert walks == [], f"call {i} walked its graph"
    a.assign(Tensor(x * 2))  # the same buffer, new values
    np.testing.assert_allclose(f(a, b).numpy(), ref(x * 2, y), rtol=2e-5, atol=1e-5)
    held = plans.held_bytes()
    for _ in range(4):  # fresh buffers each call, the graph built eagerly: no plan of roots
        p, q = Tensor(_draw(rng)).realize(), Tensor(_draw(rng)).realize()
        f(p, q).numpy()
    assert plans.held_bytes() == held


def test_a_large_program_over_fresh_arrays():
    """A program large enough for several threads (its kernels launched the threaded way)."""
    f, ref = PROGRAMS["3-op"]
    rng = np.random.default_rng(12)
    for i in range(4):
        x, y = _draw(rng, (256, 4096)), _draw(rng, (256, 4096))
        hits = plans.stats["form_hits"]
        got = f(Tensor(x), Tensor(y)).numpy()
        np.testing.assert_allclose(got, ref(x, y), rtol=1e-5, atol=1e-5)
        assert plans.stats["form_hits"] == hits + (i >= 2)


def test_two_roots_over_fresh_arrays():
    rng = np.random.default_rng(2)
    for i in range(5):
        x = _draw(rng, (8,))
        a = Tensor(x)
        s = a.sum()
        y = (a - s).exp()
        hits = plans.stats["form_hits"]
        s.realize(y)
        np.testing.assert_allclose(s.numpy(), x.sum(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(y.numpy(), np.exp(x - x.sum()), rtol=1e-5)
        assert plans.stats["form_hits"] == hits + (i >= 2)


def test_an_array_changed_between_calls_is_read_as_it_is_now():
    """The caller's array written in place between calls: each Tensor made from it holds its
    values when made (a copy), and each call computes from those."""
    f, ref = PROGRAMS["3-op"]
    rng = np.random.default_rng(3)
    x, y = _draw(rng), _draw(rng)
    for _ in range(5):
        x[...] = _draw(rng)
        np.testing.assert_allclose(f(Tensor(x), Tensor(y)).numpy(), ref(x, y), rtol=1e-5)
    before = x.copy()
    a = Tensor(x)
    x += 100  # after the Tensor was made: it keeps the values it was made from
    np.testing.assert_allclose(f(a, Tensor(y)).numpy(), ref(before, y), rtol=1e-5)
    assert plans.stats["form_hits"] >= 4


# Each case: the program the plan is warmed with (of two Tensors), and the changed call: its
# program, its arrays and numpy's value (None: the program's own, run by numpy). A Tensor made
# twice from one array is two buffers; `same` passes one Tensor as both operands.
def _case(name: str, rng: np.random.Generator):
    x, y = _draw(rng), _draw(rng)
    base = lambda a, b: a * 2.0 + b  # noqa: E731
    new = {
        "constant": (lambda a, b: a * 3.0 + b, (x, y), x * 3 + y),
        "negative zero": (lambda a, b: a * -0.0 + b, (x, y), x * -0.0 + y),
        "dtype": (base, (x.astype(np.float64), y.astype(np.float64)), None),
        "int dtype": (lambda a, b: a * 2 + b, (_draw(rng, dtype=np.int32),) * 2, None),
        "shape": (base, (_draw(rng, (4, 7)), _draw(rng, (4, 7))), None),
        "transposed array": (base, (_draw(rng, (6, 4)).T, y), None),
        "transposed in the graph": (lambda a, b: a.T * 2.0 + b, (_draw(rng, (6, 4)), y), None),
        "broadcast": (base, (x, _draw(rng, (6,))), None),
        "same tensor twice": ("same", (x, x), x * 2.0 + x),
    }[name]
    return base, new


CHANGES = ["constant", "negative zero", "dtype", "int dtype", "shape", "transposed array",
           "transposed in the graph", "broadcast", "same tensor twice"]


@pytest.mark.parametrize("change", CHANGES)
def test_a_changed_call_is_never_served_with_stale_values(change):
    """A warm form plan, then a call whose constant, dtype, shape, strides, broadcasting or
    aliasing differ: numpy's value. (A transposed array is copied into a contiguous buffer:
    of the same form, it may run the plan, over its own values.)"""
    rng = np.random.default_rng(CHANGES.index(change))
    f, (g, new_arrays, want) = _case(change, rng)
    for _ in range(4):
        x, y = _draw(rng), _draw(rng)
        np.testing.assert_allclose(f(Tensor(x), Tensor(y)).numpy(), x * 2.0 + y, rtol=1e-6)
    assert plans.stats["form_hits"] >= 2
    p, q = new_arrays
    if g == "same":
        t = Tensor(p)
        got = f(t, t).numpy()
    else:
        got = g(Tensor(p), Tensor(q)).numpy()
        if want is None:  # (numpy's value of the same program)
            want = g(p, q)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_aliased_operands_then_distinct_ones():
    """The plan of `f(t, t)` (one buffer read twice) never serves `f(a, b)`."""
    f = lambda a, b: a * 2.0 + b  # noqa: E731
    rng = np.random.default_rng(7)
    for _ in range(4):
        t = Tensor(x := _draw(rng))
        np.testing.assert_allclose(f(t, t).numpy(), x * 3.0, rtol=1e-6)
    assert plans.stats["form_hits"] >= 2
    x, y = _draw(rng), _draw(rng)
    np.testing.assert_allclose(f(Tensor(x), Tensor(y)).numpy(), x * 2.0 + y, rtol=1e-6)


@pytest.mark.parametrize("holder", HOLDERS)
def test_a_result_still_held_is_never_written_again(holder):
    f, ref = PROGRAMS["3-op"]
    rng = np.random.default_rng(8)
    for _ in range(3):
        f(Tensor(_draw(rng)), Tensor(_draw(rng))).numpy()
    x, y = _draw(rng), _draw(rng)
    t = f(Tensor(x), Tensor(y)).realize()
    held = hold(t, holder)
    del t
    for _ in range(2):
        p, q = _draw(rng), _draw(rng)
        np.testing.assert_allclose(f(Tensor(p), Tensor(q)).numpy(), ref(p, q), rtol=1e-5)
    # (a Buffer's storage is flat)
    np.testing.assert_allclose(values_held(held, holder).reshape(x.shape), ref(x, y), rtol=1e-5)


@pytest.mark.long
def test_a_loop_over_fresh_arrays_keeps_none_of_them_alive(monkeypatch):
    """A form plan holds no input: each call's buffers die with its tensors, and what the
    plans hold stays the same from call to call. (The limit here is below what a plan of the
    roots would hold, inputs and result, and above the result alone: only forms are planned.)"""
    f, ref = PROGRAMS["reduce"]
    monkeypatch.setattr(plans, "PLAN_MAX_BYTES", 24 << 10)  # inputs 2 x 16 KB, result 16 KB
    rng = np.random.default_rng(9)
    held = []
    for i in range(6):
        x, y = _draw(rng, (64, 64)), _draw(rng, (64, 64))
        a, b = Tensor(x), Tensor(y)
        data = weakref.ref(buffer_of(a.uop).data)  # host data: never pooled
        hits = plans.stats["form_hits"]
        np.testing.assert_allclose(f(a, b).numpy(), ref(x, y), rtol=1e-4, atol=1e-4)
        assert plans.stats["form_hits"] == hits + (i >= 2)
        del a, b
        gc.collect()
        assert data() is None
        held.append(plans.held_bytes())
    assert held[1:] == [held[1]] * 5


def test_a_form_plan_another_thread_is_running_gives_this_one_its_own_buffers():
    f, ref = PROGRAMS["add"]
    rng = np.random.default_rng(10)
    for _ in range(3):
        f(Tensor(_draw(rng)), Tensor(_draw(rng))).numpy()
    (plan,) = [p for p in plans._plans.values() if p.inputs is not None]
    x, y = _draw(rng), _draw(rng)
    kept = f(Tensor(x), Tensor(y)).realize()
    p, q = _draw(rng), _draw(rng)
    with plan.busy:  # as if another thread were inside its run
        other = f(Tensor(p), Tensor(q)).realize()
    assert all(buffer_of(other.uop) is not b for b in plan.owned)
    np.testing.assert_allclose(other.numpy(), ref(p, q), rtol=1e-6)
    np.testing.assert_allclose(kept.numpy(), ref(x, y), rtol=1e-6)


def test_form_plans_are_off_with_plans(monkeypatch):
    monkeypatch.setenv("RULEGRAD_PLANS", "0")
    f, ref = PROGRAMS["add"]
    rng = np.random.default_rng(11)
    hits = plans.stats["form_hits"]
    for _ in range(4):
        x, y = _draw(rng), _draw(rng)
        np.testing.assert_allclose(f(Tensor(x), Tensor(y)).numpy(), ref(x, y), rtol=1e-6)
    assert plans.stats["form_hits"] == hits and not plans._plans
