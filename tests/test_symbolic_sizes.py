"""Symbolic sizes: a bound Variable as a size, one schedule and one build for every value.

Every value is checked against numpy on the concrete slice; the counts are of real work (the
scheduler's runs, the C compiler's runs), never of time."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.backends.c import build, run
from rulegrad.runtime import schedule, schedule_cache

# rows grow with their index, so a reduction that read past the bound value would be wrong
XN = (np.arange(64 * 5, dtype=np.float32).reshape(64, 5) / 7.0
      + np.random.default_rng(1).standard_normal((64, 5)).astype(np.float32))


def _program(x: Tensor, v: int) -> tuple[Tensor, Tensor, Tensor]:
    n = Variable("n", 1, 64).bind(v)
    t = x.shrink(((0, n), None))
    return (t * 2 + 1).sum(0), t.max(0), (t - t.mean(0)).exp()


def _expected(v: int) -> tuple[np.ndarray, ...]:
    t = XN[:v]
    return (t * 2 + 1).sum(0), t.max(0), np.exp(t - t.mean(0))


def _count_schedules(monkeypatch) -> list[int]:
    calls = [0]
    real = schedule.schedule_rangeify

    def counted(uops):
        calls[0] += 1
        return real(uops)

    monkeypatch.setattr(schedule, "schedule_rangeify", counted)
    return calls


def test_hundred_values_one_build(tmp_path, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    # The block libraries its kernels call are built once per process (blocks.load_for): load
    # them first, through another cache, so that only the program's own library is counted,
    # whichever test ran before this one in the worker.
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "warm"))
    Tensor.realize(*_program(Tensor(XN), 5))
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "cache"))
    build.clear_memory_cache()
    run._programs.clear()
    schedule_cache.clear()
    scheduled = _count_schedules(monkeypatch)
    x = Tensor(XN)
    compiles = build.stats["compiles"]
    for v in range(1, 101):
        v = (v * 37) % 64 + 1  # 100 values, in no order, each in [1, 64]
        outs = _program(x, v)
        Tensor.realize(*outs)
        for got, want in zip(outs, _expected(v)):
            assert got.shape[1:] == want.shape[1:]
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
    assert build.stats["compiles"] == compiles + 1  # one library for every value
    assert scheduled[0] == 1                         # and one schedule


@pytest.mark.parametrize("backend", ["interp", "oracle"])
def test_other_backends(backend, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    x = Tensor(XN)
    for v in (1, 17, 64):
        outs = _program(x, v)
        Tensor.realize(*outs)
        for got, want in zip(outs, _expected(v)):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_symbolic_shape_flows_and_realized_result_is_reused():
    n = Variable("n", 1, 64).bind(9)
    t = Tensor(XN).shrink(((0, n), None))
    assert t.shape == (n, 5) and t.T.shape == (5, n)
    y = (t * 3).realize()  # a symbolic-size buffer: vmax rows, 9 of them the value
    assert y.numpy().shape == (9, 5)
    np.testing.assert_allclose((y + t).sum(0).numpy(), (XN[:9] * 4).sum(0), rtol=1e-5)
    np.testing.assert_allclose(t.T.max(1).numpy(), XN[:9].max(0), rtol=1e-6)


def test_bind_out_of_range_is_a_clear_error():
    n = Variable("n", 2, 8)
    with pytest.raises(ValueError, match=r"bound to 9, outside its range \[2, 8\]"):
        n.bind(9)
    with pytest.raises(ValueError, match="outside its range"):
        n.bind(1)
    with pytest.raises(TypeError, match="int"):
        n.bind(2.5)
    with pytest.raises(ValueError, match="min <= max"):
        Variable("m", 5, 3)


def test_shrink_needs_a_bound_variable_that_fits():
    x = Tensor(XN)
    with pytest.raises(ValueError, match="bind it first"):
        x.shrink(((0, Variable("n", 1, 8)), None))
    with pytest.raises(ValueError, match="whose max fits"):
        x.shrink(((0, Variable("n", 1, 65).bind(3)), None))


def test_ops_a_symbolic_axis_cannot_take_are_clear_errors():
    n = Variable("n", 1, 64).bind(5)
    t = Tensor(XN).shrink(((0, n), None))
    with pytest.raises(ValueError, match="cannot be flipped"):
        t.flip(0)
    with pytest.raises(ValueError, match="cannot be padded"):
        t.pad(((1, 0), None))
    with pytest.raises(ValueError, match="only add or drop axes of size 1"):
        t.reshape(-1)
    u = t.reshape(n, 1, 5).expand(n, 3, 5)  # adding a 1 and expanding it is fine
    np.testing.assert_allclose(u.sum(1).numpy(), XN[:5] * 3, rtol=1e-5)
    np.testing.assert_allclose(t.pad((None, (1, 1))).numpy(), np.pad(XN[:5], ((0, 0), (1, 1))))


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
def test_schedule_of_a_bound_variable_program_runs_to_numpys_answer(scheduler):
    """Tensor.schedule() takes bound Variables out as realize does (it raised a TypeError: a
    symbolic size compared with an int); run with the Variable's value, its kernels give
    numpy's sum of the shrunk rows."""
    from rulegrad.backends.kernel_interp import run_schedule

    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    n = Variable("n", 1, 6).bind(3)
    items = Tensor(a).shrink(((0, n), None)).sum(0).schedule(scheduler=scheduler)
    run_schedule(items, var_vals={"n": 3})
    np.testing.assert_allclose(items[-1].bufs[0].ensure(), a[:3].sum(0))
