"""The kernelize scheduler (runtime/kernelize.py, rules/kernelize.rules): values against numpy,
and each of its features by what it does to the schedule (kernel counts and buffers)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.kernelize import SchedulerError
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import toposort
from rulegrad.tools.fuzz import fuzz

RNG = np.random.default_rng(0)


def softmax_np(a: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(a - a.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.fixture(params=["interp", "c"])
def backend(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_BACKEND", request.param)
    return request.param


def test_values_match_numpy(backend):
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    b = RNG.standard_normal((5, 3)).astype(np.float32)
    cases = [
        (lambda x, y: (x + 1) * 2, (a + 1) * 2),
        (lambda x, y: x.sum(1), a.sum(1)),
        (lambda x, y: x @ y, a @ b),
        (lambda x, y: x.softmax(-1), softmax_np(a)),
        (lambda x, y: x.permute(1, 0).reshape(20) * 3, a.T.reshape(20) * 3),
        (lambda x, y: x.pad(((1, 0), (0, 2))) + 1, np.pad(a, ((1, 0), (0, 2))) + 1),
        (lambda x, y: x[1:3, ::-2].max(0), a[1:3, ::-2].max(0)),
    ]
    for f, want in cases:
        got = f(Tensor(a), Tensor(b)).realize(scheduler="kernelize").numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [-1, 0])
def test_fuse_makes_softmax_one_kernel(backend, axis):
    """Down the columns too: rangeify.rules' recip_column leaves 1 / s of a fused reduction in
    its reader (a realized 1 / s per column would be a second kernel)."""
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    plain = Tensor(a).softmax(axis)
    assert len(plain.schedule(scheduler="kernelize")) == 3  # max, sum, divide
    fused = Tensor(a).softmax(axis).fuse()
    assert len(fused.schedule(scheduler="kernelize")) == 1
    np.testing.assert_allclose(fused.realize(scheduler="kernelize").numpy(),
                               softmax_np(a, axis), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scheduler", ["kernelize", "rangeify"])
def test_max_kernel_buffers_splits_a_six_input_sum(backend, monkeypatch, scheduler):
    """One setting, tinygrad's MAX_KERNEL_BUFFERS, for both schedulers."""
    ins = [RNG.standard_normal(8).astype(np.float32) for _ in range(6)]

    def total() -> Tensor:
        out = Tensor(ins[0])
        for x in ins[1:]:
            out = out + Tensor(x)
        return out

    assert len(total().schedule(scheduler=scheduler)) == 1  # no limit: one kernel, 7 buffers
    monkeypatch.setenv("MAX_KERNEL_BUFFERS", "4")
    items = total().schedule(scheduler=scheduler)
    assert len(items) > 1 and all(len(k.bufs) <= 4 for k in items), \
        [(k.name, len(k.bufs)) for k in items]
    np.testing.assert_allclose(total().realize(scheduler=scheduler).numpy(), sum(ins),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scheduler", ["kernelize", "rangeify"])
def test_one_buffer_limit_for_both_schedulers(backend, monkeypatch, scheduler):
    """RULEGRAD_MAX_KERNEL_BUFFERS (default 128) bounds kernelize's kernels as rangeify's: one
    pass, rangeify.rules' limit_buffers, in both pipelines. A sum of 30 tensors, and a sum of
    their reductions (buffers the grouper made), under a limit of 8."""
    monkeypatch.setenv("RULEGRAD_MAX_KERNEL_BUFFERS", "8")
    ins = [RNG.standard_normal((3, 4)).astype(np.float32) for _ in range(30)]
    programs = [(lambda ts: sum(ts[1:], ts[0]), sum(ins)),
                (lambda ts: sum((t.sum(0) for t in ts[1:]), ts[0].sum(0)),
                 sum(a.sum(0) for a in ins))]
    for build, want in programs:
        items = build([Tensor(a) for a in ins]).schedule(scheduler=scheduler)
        assert all(len(k.bufs) <= 8 for k in items), [(k.name, len(k.bufs)) for k in items]
        got = build([Tensor(a) for a in ins]).realize(scheduler=scheduler).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _stores_of(items) -> list[set[Ops]]:
    """Per kernel, the ops of its stored value."""
    return [{n.op for n in toposort(k.ast.src[0].src[1])} for k in items]


def test_unsafe_pad_is_realized_before_its_view(backend):
    a = np.abs(RNG.standard_normal((3, 4))).astype(np.float32) + 0.5
    unsafe = Tensor(a).log().pad(((1, 1), (0, 2)))  # log(0) is not 0: compute, then pad
    items = unsafe.schedule(scheduler="kernelize")
    assert len(items) == 2
    first, second = _stores_of(items)
    assert Ops.LOG in first and Ops.LOG not in second  # the log's kernel, then the padded view
    np.testing.assert_allclose(unsafe.realize(scheduler="kernelize").numpy(),
                               np.pad(np.log(a), ((1, 1), (0, 2))), rtol=1e-6)
    safe = Tensor(a).mul(2).pad(((1, 1), (0, 2)))  # 0 * 2 is 0: the pad reads through it
    assert len(safe.schedule(scheduler="kernelize")) == 1
    np.testing.assert_array_equal(safe.realize(scheduler="kernelize").numpy(),
                                  np.pad(a * 2, ((1, 1), (0, 2))))


def test_the_grouper_joins_a_reduction_only_into_one_whole_read(backend):
    """kernelize.rules' group: a reduction joins the kernel its value flows into when that is
    one kernel, reading it whole, with no reduction yet; otherwise it is a kernel of its own.
    Kernel counts from those words, values from numpy."""
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    cases = [  # (program, kernels, numpy)
        (lambda x: x.sum(1) + 1, 1, a.sum(1) + 1),                      # joins its reader
        (lambda x: x.sum(1) + x.max(1), 2, a.sum(1) + a.max(1)),        # that kernel has one
        (lambda x: x.sum(1).flip(0) + 1, 2, a.sum(1)[::-1] + 1),        # not a contiguous read
        (lambda x: x.sum(1) + x.sum(1).flip(0), 2, a.sum(1) + a.sum(1)[::-1]),  # read twice
        (lambda x: (x.sum(1) + 1).sum(), 2, (a.sum(1) + 1).sum()),      # meets a reduction
    ]
    for f, kernels, want in cases:
        assert len(f(Tensor(a)).schedule(scheduler="kernelize")) == kernels, want
        np.testing.assert_allclose(f(Tensor(a)).realize(scheduler="kernelize").numpy(), want,
                                   rtol=1e-5, atol=1e-5)


def test_dont_group_reduces(monkeypatch):
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    assert len((Tensor(a).sum(1) + 1).schedule(scheduler="kernelize")) == 1
    monkeypatch.setenv("DONT_GROUP_REDUCES", "1")
    assert len((Tensor(a).sum(1) + 1).schedule(scheduler="kernelize")) == 2
    np.testing.assert_allclose((Tensor(a).sum(1) + 1).realize(scheduler="kernelize").numpy(),
                               a.sum(1) + 1, rtol=1e-5)


def test_dont_realize_expand(monkeypatch):
    a = RNG.standard_normal((4, 1)).astype(np.float32)

    def prog() -> Tensor:
        return (Tensor(a) + 1).expand(4, 3) * 2

    assert len(prog().schedule(scheduler="kernelize")) == 2  # realized before its expand
    monkeypatch.setenv("DONT_REALIZE_EXPAND", "1")
    assert len(prog().schedule(scheduler="kernelize")) == 1
    np.testing.assert_allclose(prog().realize(scheduler="kernelize").numpy(),
                               np.broadcast_to(a + 1, (4, 3)) * 2)


def test_scheduler_selection(monkeypatch):
    """The kernel count of a softmax says which scheduler ran: rangeify computes the row's max
    and sum locally (1 kernel), kernelize gives each reduction a kernel (3) unless fused."""
    a = RNG.standard_normal((4, 8)).astype(np.float32)

    def soft() -> Tensor:
        return Tensor(a).softmax(-1)

    assert len(soft().schedule()) == 1  # rangeify, the default
    monkeypatch.setenv("RULEGRAD_SCHEDULER", "kernelize")
    assert len(soft().schedule()) == 3
    assert len(soft().schedule(scheduler="rangeify")) == 1  # the keyword wins
    with pytest.raises(SchedulerError, match="choose one of rangeify, kernelize"):
        soft().realize(scheduler="tinygrad")


def test_symbolic_sizes_go_to_rangeify(backend, monkeypatch):
    """kernelize's views hold ints: asked for a graph with a bound variable, schedule.py sends
    it to rangeify (kernelize is never called), and the values are numpy's."""
    from rulegrad import Variable
    from rulegrad.runtime import schedule

    def refuse(*_):
        raise AssertionError("kernelize was given a graph with symbolic sizes")

    monkeypatch.setattr(schedule, "schedule_kernelize", refuse)
    a = RNG.standard_normal((6, 8)).astype(np.float32)
    for v in (2, 5):
        t = Tensor(a).shrink(((0, Variable("n", 1, 6).bind(v)), None))
        got = (t.exp().sum(0) + t.max(0)).realize(scheduler="kernelize").numpy()
        np.testing.assert_allclose(got, np.exp(a[:v]).sum(0) + a[:v].max(0), rtol=1e-5)


def test_fuzz_both_schedulers_agree():
    """A few fuzzed programs: kernelize and rangeify each against the oracle and each other
    (the long run is `rulegrad fuzz --scheduler both`)."""
    assert fuzz(25, start=1000, scheduler="both") == []
