"""The pass-differential check (generator/passdiff.py): the fuzzer's programs with every pass
recorded, each step compared with an independent evaluator, and a verdict per rule.

A rule is broken here by wrapping the real matcher of its pass so that its result is wrong
(doubled), exactly as an unsound rule's would be; the check must name that rule, in the step
where it fired, and not the rules that merely ran beside it."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from rulegrad import Ops, UOp, graph_rewrite
from rulegrad.backends.c import lower
from rulegrad.generator.passdiff import EXTRA_PROGRAMS, passdiff, run_programs
from rulegrad.rules.choices import DEFAULT, chosen
from rulegrad.runtime import schedule
from rulegrad.runtime.pipeline import Pipeline

SEEDS = range(0, 40)  # fires every rule broken below at least twice
# kernel.rules' kernel_store, which fires on every program (found by its label: it moves when
# the file is edited)
KERNEL_STORE = "rules/kernel.rules:" + str(next(
    i for i, line in enumerate((Path(__file__).parents[1] / "rules/kernel.rules").read_text()
                               .splitlines(), 1) if line.lstrip().startswith("kernel_store:")))


class Broken:
    """A matcher that is `inner`, except that rule `rule`'s float results are doubled."""

    def __init__(self, inner, rule: str):
        self.inner, self.rule, self.name, self.rules = inner, rule, inner.name, inner.rules

    def rewrite(self, n: UOp, ctx=None) -> UOp | None:
        return self.rewrite_with_rule(n, ctx)[0]

    def rewrite_with_rule(self, n: UOp, ctx=None):
        new, info = self.inner.rewrite_with_rule(n, ctx)
        if (info is not None and info.name == self.rule and new is not None and new is not n
                and new.dtype.kind == "f"):
            new = new.alu(Ops.MUL, new.const_like(2.0))
        return new, info


def _break(monkeypatch, module, rule: str) -> None:
    if module is schedule:  # the scheduler's passes: its declared pipeline, each pass wrapped
        real = schedule.scheduler()
        broken = Pipeline(real.name, tuple(p.replace(matcher=Broken(p.matcher, rule))
                                           for p in real.passes))
        monkeypatch.setattr(schedule, "scheduler", lambda: broken)
        return
    real = module.matcher
    monkeypatch.setattr(module, "matcher", lambda stem, name: Broken(real(stem, name), rule))


def _location(pd, name: str) -> str:
    return next(f.rule.location for p in pd.programs for f in p.firings if f.rule.name == name)


def test_sound_rules_agree_and_name_their_seeds():
    pd = passdiff(0, len(SEEDS))
    assert not [p.seed for p in pd.programs if p.failures]
    verdict, detail = pd.verdict(KERNEL_STORE)
    assert verdict == "structural" and "seeds 0, 1, 2" in detail, detail
    verdict, detail = pd.verdict("rules/nowhere.rules:1")
    assert verdict == "unknown", detail
    extra = len(EXTRA_PROGRAMS)
    want = f"never fired on {40 + extra} programs (seeds 0-39 and {extra} more)"
    assert detail.startswith(want), detail


@pytest.mark.parametrize("module,rule,step", [
    (schedule, "remove_buffer", "schedule"),      # pm_cleanups: checked end to end
    (schedule, "mark_children", "pm_children"),   # tensor level: oracle before and after
    (lower, "reduce_to_loop", "lower"),           # lowering: kernel interpreter both sides
])
def test_a_broken_rule_is_named(monkeypatch, module, rule, step):
    _break(monkeypatch, module, rule)
    pd = run_programs(SEEDS)
    verdict, detail = pd.verdict(_location(pd, rule))
    assert verdict == "refuted" and f"step {step} disagreed" in detail, detail
    assert pd.verdict(KERNEL_STORE)[0] != "refuted"  # ran beside it, everywhere


def test_a_recorded_pass_replays_to_its_output():
    """What the engine records (input, context copy) is enough to run a pass again."""
    runs = [r for p in passdiff(0, len(SEEDS)).programs for r in p.passes]
    assert {"earliest", "do_realize", "pm_rangeify", "to_kernel", "lower"} <= {r.name for r in runs}
    for run in runs:
        if run.name in ("split_kernels", "create_kernels"):  # fresh buffers: see test_matchers
            continue
        # (the optimizer's pass runs in a kernel's `chosen` scope, as optimize_kernel runs it:
        # its choices, and the actions taken so far, from which a peel numbers its new loops)
        with chosen(DEFAULT):
            out = graph_rewrite(run.before, run.matcher, ctx=copy.deepcopy(run.ctx_before),
                                bottom_up=run.bottom_up)
        assert out is run.after, run.name


def test_an_unreachable_rule_must_fire_on_no_program(monkeypatch):
    """`# check: unreachable` (rangeify's index_other, which raises on an op no rule indexes)
    holds when no recorded program fires the rule; a rule that does fire, declared unreachable
    (here: every structural mark of kernel.rules read as unreachable), is refuted."""
    from rulegrad.generator import soundness
    from rulegrad.generator.paths import package_rules_files

    rules = {p.name: str(p) for p in package_rules_files()}
    rep = soundness.check_paths([rules["rangeify.rules"]], rule="index_other").rules[0]
    assert (rep.verdict, rep.detail) == ("structural", "unreachable as declared: never fired "
                                         f"on {80 + len(EXTRA_PROGRAMS)} programs"), rep.detail
    monkeypatch.setattr(soundness, "UNREACHABLE_MARK", soundness.STRUCTURAL_MARK)
    # the mark is only for a rule whose right side is `error ...`: otherwise it is ignored
    rep = soundness.check_paths([rules["kernel.rules"]], rule="kernel_store").rules[0]
    assert "unreachable' ignored: the right-hand side is not an `error`" in rep.detail
    # read as one that reports a bug, the rule fires on recorded programs: refuted
    monkeypatch.setattr(soundness, "reports_a_bug", lambda rule: True)
    rep = soundness.check_paths([rules["kernel.rules"]], rule="kernel_store").rules[0]
    assert rep.verdict == "refuted" and "declared unreachable, but fired on" in rep.detail
