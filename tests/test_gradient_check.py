"""`rulegrad check`'s gradient method (generator/gradcheck.py): gradient rules vs finite
differences. Every rule of rules/gradient.rules passes; each wrong variant in
tests/soundness/gradient_mutations.rules is refuted with the instance that shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegrad.generator.soundness import check_paths, run_check
from rulegrad.rules import RULES_DIR

MUTANTS = Path(__file__).resolve().parent / "soundness" / "gradient_mutations.rules"
WRONG = ["mul_swapped", "sin_sign", "sqrt_no_half", "max_both", "reduce_bcast", "fdiv_sign",
         "where_cond", "lt_claims", "detach_leaks"]
RIGHT = ["mul_right", "expand_right", "exp_right", "detach_right"]


@pytest.fixture(scope="module")
def mutants():
    return {r.rule.name: r for r in check_paths([str(MUTANTS)], examples=10, seed=0).rules}


@pytest.mark.parametrize("name", WRONG)
def test_wrong_gradient_rule_is_refuted(mutants, name):
    r = mutants[name]
    assert (r.method, r.verdict) == ("gradient", "refuted"), r.line()
    assert "op: <" in r.counterexample  # the instance, not only a verdict


@pytest.mark.parametrize("name", RIGHT)
def test_right_gradient_rule_passes(mutants, name):
    assert (mutants[name].method, mutants[name].verdict) == ("gradient", "passed")


def test_every_gradient_rule_passes():
    report = check_paths([str(RULES_DIR / "gradient.rules")], examples=5, seed=1)
    by_verdict = {r.rule.name: r.verdict for r in report.rules}
    assert all(r.method == "gradient" for r in report.rules)
    # DETACH and ASSIGN stop gradients by definition: checked to give none
    assert all(v == "passed" for v in by_verdict.values()), by_verdict
    assert "stops the gradient" in next(r.detail for r in report.rules
                                        if r.rule.name == "grad_detach")
    assert not report.failed


def test_check_command_exits_1_on_a_wrong_gradient(capsys):
    assert run_check([str(MUTANTS)], examples=5, rule="fdiv_sign") == 1
    out = capsys.readouterr().out
    assert "fdiv_sign" in out and "refuted" in out and "finite difference" in out
