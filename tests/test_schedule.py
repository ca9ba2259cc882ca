"""The scheduler's contracts beyond numerics: assign ordering, realizing several tensors
together, reuse of realized results, kernel identity, DEBUG output, the graph verifier, and
that scheduling work (rewrite attempts) grows linearly with the graph. Values are always
checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Ops, Tensor, UOp, dtypes
from rulegrad.runtime import rewrite
from rulegrad.runtime.realize import realize
from rulegrad.runtime.schedule import create_schedule
from rulegrad.runtime.spec import SpecError, verify


@pytest.fixture(autouse=True)
def _schedule_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", "interp")


def test_reads_of_the_old_value_run_before_the_assign() -> None:
    """One schedule that reads a buffer (flipped: other elements than the write) and assigns
    to it: the read sees the old value. (Tensor.assign writes at once, so the graph is built
    here with the ASSIGN node the scheduler receives.)"""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = Tensor(a)
    before = (t.flip(1) + 1).uop
    assign = UOp(Ops.ASSIGN, t.dtype, (t.uop, (t * 2).uop))
    out_before, out_assign = realize([before, assign])
    assert out_assign is t.uop.base.arg  # written in place
    np.testing.assert_allclose(out_before.data.reshape(2, 3), np.flip(a, 1) + 1)
    np.testing.assert_allclose(out_assign.data.reshape(2, 3), a * 2)
    for roots in ([before, assign], [assign, before]):  # whatever order the roots come in
        kernels = create_schedule(roots)
        assert [k.bufs[0] is t.uop.base.arg for k in kernels] == [False, True]


def test_assign_is_in_place_and_later_reads_see_it() -> None:
    a = np.ones((4,), dtype=np.float32)
    t = Tensor(a).realize()
    buf = t.uop.base.arg
    t.assign(t + 3).realize()
    after = (t * 2).numpy()
    assert t.uop.base.arg is buf
    np.testing.assert_allclose(after, (a + 3) * 2)


def test_realize_together_shares_nothing_it_should_not() -> None:
    x = np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32)
    t = Tensor(x)
    s, m, e = t.exp().sum(0), t.exp().max(1), (t * 2).contiguous()
    Tensor.realize(s, m, e)
    np.testing.assert_allclose(s.numpy(), np.exp(x).sum(0), rtol=1e-5)
    np.testing.assert_allclose(m.numpy(), np.exp(x).max(1), rtol=1e-6)
    np.testing.assert_allclose(e.numpy(), x * 2)


def test_a_realized_intermediate_is_read_not_recomputed() -> None:
    x = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    s = Tensor(x).sum(1).realize()
    later = s + 1
    kernels = later.schedule()
    assert len(kernels) == 1 and kernels[0].name.startswith("E_")  # no reduction again
    np.testing.assert_allclose(later.numpy(), x.sum(1) + 1, rtol=1e-5)


def test_equal_kernels_are_equal_uops() -> None:
    a, b, c, d = (Tensor(np.zeros((3, 4), np.float32)) for _ in range(4))
    k1, k2 = create_schedule([(a + b).uop])[0], create_schedule([(c + d).uop])[0]
    assert k1.ast is k2.ast and k1.name == k2.name == "E_3_4"


def test_debug_prints_each_kernel(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("DEBUG", "3")
    Tensor(np.zeros((4, 4), np.float32)).sum(1).schedule()
    out = capsys.readouterr().out
    assert "r_4_4" in out and "shape=(4,)" in out and "REDUCE" in out


def test_verifier_names_the_pass_and_the_node() -> None:
    bad = UOp.sink(UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 4),), (0, "loop")))
    with pytest.raises(SpecError, match="after pass 'add_realize'.*RANGE"):
        verify(bad, "tensor", "add_realize")


def test_spec_checks_pass_on_real_programs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEGRAD_SPEC", "1")
    x = np.random.default_rng(2).standard_normal((6, 7)).astype(np.float32)
    got = Tensor(x).pad(((1, 0), (2, 1))).softmax(-1).numpy()
    p = np.pad(x, ((1, 0), (2, 1)))
    np.testing.assert_allclose(got, np.exp(p) / np.exp(p).sum(-1, keepdims=True), rtol=1e-5)


def _chain(n: int) -> Tensor:
    t = Tensor(np.ones((8,), np.float32))
    for i in range(n):
        t = t * 1.0001 if i % 2 else t + 0.5
    return t


def test_scheduling_work_per_op_is_flat(monkeypatch: pytest.MonkeyPatch) -> None:
    # work, not seconds: every rewrite attempt of every pass is counted, so the check is the
    # same on a loaded machine (bench/schedule.py times it)
    attempts = 0
    step, init = rewrite._Rewriter.step, rewrite._Rewriter.__init__

    def counting_step(self: rewrite._Rewriter, node: UOp) -> UOp | None:
        nonlocal attempts
        attempts += 1
        return step(self, node)

    def every_attempt_through_step(self: rewrite._Rewriter, *args: object, **kw: object) -> None:
        init(self, *args, **kw)
        self.table = None  # the engine's top-down walk would match without calling step

    monkeypatch.setattr(rewrite._Rewriter, "step", counting_step)
    monkeypatch.setattr(rewrite._Rewriter, "__init__", every_attempt_through_step)
    per_op = {}
    for n in (1_000, 10_000):
        attempts = 0
        assert len(create_schedule([_chain(n).uop])) == 1
        per_op[n] = attempts / n
    assert per_op[1_000] > 1, per_op  # the counter sees the passes at all
    assert per_op[10_000] <= 1.1 * per_op[1_000], per_op


def test_a_long_chain_schedules_and_runs() -> None:
    n = 20_000  # bench/schedule.py runs 100,000
    want = np.ones((8,), np.float32)
    for i in range(n):
        want = want * np.float32(1.0001) if i % 2 else want + np.float32(0.5)
    np.testing.assert_allclose(_chain(n).numpy(), want, rtol=1e-4)
