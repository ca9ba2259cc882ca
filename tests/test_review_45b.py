"""rev45b's review of round 44's kernel and checker changes: each test fails on the merge
(`trial`) before its fix."""

from __future__ import annotations

import numpy as np

from rulegrad import Tensor
from rulegrad.dsl import ast as A
from rulegrad.dsl import load
from rulegrad.generator import optdiff
from rulegrad.generator.interp import interpret_ruleset
from rulegrad.generator.soundness import Checker
from rulegrad.rules import RULES_DIR
from rulegrad.runtime import target
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp

OPT = load(str(RULES_DIR / "opt.rules"))


def _alone(name: str):
    """The matcher of one optimizer rule alone (as `rulegrad check` builds it)."""
    rules = {r.name: r for rs in OPT.rulesets for r in rs.rules if r.span.path == OPT.file.path}
    path = OPT.rulesets[0].path
    return interpret_ruleset(A.CheckedRuleSet(name, (rules[name],), path), Checker().helpers(OPT))


class _PlusZero:
    """split_reduce made unsound in the sign of zero only: a MAX reduce's new value m as
    0 - (0 - m) (a -0.0 maximum becomes +0.0; every other value, NaN and infinities included,
    is unchanged). runtime/semantics.py orders -0.0 below +0.0, so the rule is wrong."""

    def __init__(self, inner):
        self.inner, self.rules, self.name = inner, inner.rules, "broken"

    def rewrite(self, n: UOp, ctx=None) -> UOp | None:
        new = self.inner.rewrite(n, ctx)
        if new is None or new is n or n.op is not Ops.REDUCE or n.arg is not Ops.MAX:
            return new
        zero = new.const_like(0.0)
        return zero - (zero - new)


def test_a_rule_that_loses_a_zeros_sign_is_refuted(monkeypatch):
    # split_reduce is in REORDERS_SUMS, so even a MAX kernel was judged by the rounding bound,
    # which is 0 there, and `within` took +0.0 for -0.0 as "0 apart": the broken rule passed.
    # -|x| over the whole-number draw (a 0 among the values) has the maximum -0.0.
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 2048)  # (7919 values: two shares past it)
    rng = np.random.default_rng(0)
    t = -Tensor(rng.standard_normal(7919).astype(np.float32)).abs()
    corpus = optdiff.corpus_of(t.max().schedule(), "program")
    good = optdiff.check_rule("split_reduce", _alone("split_reduce"), corpus)
    assert good.verdict("split_reduce", len(corpus))[1] == "passed", good.failures
    bad = optdiff.check_rule("split_reduce", _PlusZero(_alone("split_reduce")), corpus)
    assert bad.verdict("split_reduce", len(corpus))[1] == "refuted", bad.failures


def test_within_a_zero_bound_the_sign_of_zero_counts():
    want = np.array([-0.0, 0.0, 1.0, -0.0], np.float32)
    got = np.array([0.0, -0.0, 1.0, 0.0], np.float32)
    ok = optdiff.within(got, want, np.array([0.0, 0.0, 0.0, 1e-30]))
    assert list(ok) == [False, False, True, True]


class _DropTail:
    """split_reduce made unsound: its blocks alone, the peeled tail (the last N - T*B values)
    dropped."""

    def __init__(self, inner):
        self.inner, self.rules, self.name = inner, inner.rules, "broken"

    def rewrite(self, n: UOp, ctx=None) -> UOp | None:
        new = self.inner.rewrite(n, ctx)
        if new is None or new is n or n.op is not Ops.REDUCE or new.op is Ops.REDUCE:
            return new
        return new.src[0]  # (op(blocks, tail) -> blocks)


def test_a_split_that_drops_its_tail_is_refuted_for_max_and_min(monkeypatch):
    # the check's draws put a reduce's max or min in its last 15 of 7919 values about never
    # (random layouts; NaN in the special draw; +-4 everywhere in the whole-number draw), so a
    # MAX or MIN split without its tail passed; a sum without it was refuted
    monkeypatch.setattr(target, "PARALLEL_MIN_WORK", 2048)  # (7919 values: two shares past it)
    x = Tensor(np.random.default_rng(1).standard_normal(7919).astype(np.float32))
    for t in (x.max(), x.min()):
        corpus = optdiff.corpus_of(t.schedule(), "program")
        assert optdiff.check_rule("split_reduce", _alone("split_reduce"), corpus) \
            .verdict("split_reduce", len(corpus))[1] == "passed"
        bad = optdiff.check_rule("split_reduce", _DropTail(_alone("split_reduce")), corpus)
        assert bad.verdict("split_reduce", len(corpus))[1] == "refuted", bad.failures
