"""`rulegrad check`'s gradient method (generator/gradcheck.py): gradient rules against torch's
autograd at the points where derivatives go wrong. Every rule of rules/gradient.rules passes;
each wrong variant in tests/soundness/gradient_mutations.rules is refuted with the instance that
shows it; a rule matching an op the checker cannot draw is unchecked, not passed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rulegrad.generator import gradcheck
from rulegrad.generator.soundness import check_paths, run_check
from rulegrad.rules import RULES_DIR, matcher

pytest.importorskip("torch", reason="torch is not installed: the gradient checker's reference")

MUTANTS = Path(__file__).resolve().parent / "soundness" / "gradient_mutations.rules"
# each: (mutant, what must show in the counterexample: the draw or the check that caught it)
WRONG = {
    "mul_swapped": "op: <MUL", "sin_sign": "op: <SIN", "sqrt_no_half": "op: <SQRT",
    "max_both": "op: <MAX", "reduce_bcast": "op: <REDUCE_AXIS", "fdiv_sign": "op: <FDIV",
    "where_cond": "op: <WHERE", "lt_claims": "no gradient flows", "detach_leaks": "DETACH",
    "exp2_ln2_short": "op: <EXP2",
    "max_tie_to_x": "draw: ties",            # right away from ties and at NaN
    "amax_tie_full": "draw: ties",           # right without ties
    "permute_same": "PERMUTE",               # right for self-inverse permutations
    "mod_flat": "op: <MOD",
    "mod_floor": "op: <MOD",
    "expand_unsummed": "the source float64[3, 1]",   # shape
    "cast_same_dtype": "is float32",                  # dtype
    "add_ints_too": "no gradient flows into source 0 (int32",
    "pow_textbook": "draw: zero",
    "prod_divides": "draw: zeros",
    "add_sub_same": "op: <SUB",              # each op of a multi-op rule on its own
    "copy_stays": "is on CPU:1, the source on CPU",   # device
    "exp_f64_only": "op: <EXP float32",               # float32 drawn too
    # a bare CONST source (grad46): drawn at shape (), its value at the rule's literals too
    "const_off_by_one": "op: <MUL", "const_sign": "op: <MUL",
    "const_own_grad": "gradient of source 1",
    "const_guarded": "op: <MUL", "const_eq_guard": "op: <MUL", "const_literal": "op: <MUL",
    "const_pow_text": "op: <POW", "const_shared_tie": "op: <MAX",
    "const_where_flip": "op: <WHERE",
}
RIGHT = ["mul_right", "expand_right", "exp_right", "detach_right", "exp2_right", "permute_right",
         "mod_right", "reduce_right", "const_mul_right", "const_both_right", "const_guard_right",
         "const_lit_right", "const_pow_right", "const_where_right", "const_two_right",
         "const_shared_right"]


@pytest.fixture(scope="module")
def mutants():
    return {r.rule.name: r for r in check_paths([str(MUTANTS)], examples=10, seed=0).rules}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_gradient_rule_is_refuted(mutants, name):
    r = mutants[name]
    assert (r.method, r.verdict) == ("gradient", "refuted"), r.line()
    assert WRONG[name] in r.counterexample, r.counterexample


@pytest.mark.parametrize("name", RIGHT)
def test_right_gradient_rule_passes(mutants, name):
    assert (mutants[name].method, mutants[name].verdict) == ("gradient", "passed"), \
        mutants[name].line()


def test_a_rule_over_an_op_no_case_draws_is_unchecked(mutants):
    r = mutants["realize_too"]
    assert r.verdict == "unchecked" and "REALIZE" in r.detail


@pytest.mark.parametrize("name", ["const_root", "const_lit_root"])
def test_a_rule_rooted_on_a_constant_is_refused_in_words(mutants, name):
    r = mutants[name]
    assert (r.method, r.verdict) == ("gradient", "refuted"), r.line()
    assert "CONST, which has no sources" in r.detail and "can never run" in r.detail


def test_every_gradient_rule_passes_and_names_its_torch_op():
    report = check_paths([str(RULES_DIR / "gradient.rules")], examples=5, seed=1)
    by_verdict = {r.rule.name: r.verdict for r in report.rules}
    assert all(r.method == "gradient" for r in report.rules)
    assert all(v == "passed" for v in by_verdict.values()), by_verdict
    details = {r.rule.name: r.detail for r in report.rules}
    assert "MAX vs torch.maximum" in details["grad_max"]
    assert "torch.amax" in details["grad_reduce"] and "torch.prod" in details["grad_reduce"]
    assert "MOD vs torch.fmod" in details["grad_mod"]
    assert not report.failed


def test_the_checker_draws_the_delicate_points():
    """The draws the issue lists are there: ties for MAX/MIN and reduce max, zeros for prod and
    pow, negative bases, every permutation of 3 and 4 axes, int and bool sources."""
    cases = gradcheck._cases()
    draws = {(c.op, d.name) for c in cases for d in c.draws}
    for want in [("MAX", "ties"), ("MIN", "ties"), ("REDUCE_AXIS", "ties"), ("POW", "zero base"),
                 ("POW", "negative base"), ("POW", "zero exponent"), ("REDUCE_AXIS", "zeros"),
                 ("MOD", "multiples"), ("TRUNC", "integers"), ("MAX", "nan")]:
        assert want in draws, want
    perms = {c.label for c in cases if c.op == "PERMUTE"}
    assert len(perms) >= 2 + 6 + 24
    assert any("int32" in c.label and c.torch_fn is None for c in cases)
    assert any(c.label == "CAST(bool -> float32)" for c in cases)


def test_every_drawn_op_has_a_rule_in_the_set():
    """The full set handles every (op, dtype) the checker draws: autograd never meets a float
    op without a rule, nor an int one that claims a gradient."""
    rules = matcher("gradient", "pm_gradient")
    rng = np.random.default_rng(0)
    for case in gradcheck._cases():
        node = case.build([gradcheck._leaf(x) for x in case.draws[0].fn(rng)])
        out = rules.rewrite(node, gradcheck._leaf(np.ones(node.shape)).cast(node.dtype))
        if case.below:  # (the gradient of the leaves' markers, past the views)
            assert isinstance(out, dict) and len(out) == len(case.draws[0].fn(rng)), case.label
            continue
        assert isinstance(out, tuple) and len(out) == len(node.src), case.label
        if case.torch_fn is None:
            assert all(v is None for v in out), case.label


def test_without_torch_central_differences_still_refute_a_constant_off_by_1e4(monkeypatch):
    """The fallback: smooth draws against central differences with a step per point, tight
    enough for ln 2 written as 0.6932; ties are skipped, and the verdict says so."""
    monkeypatch.setattr(gradcheck, "_torch", lambda: None)
    report = {r.rule.name: r for r in check_paths([str(MUTANTS)], examples=4, seed=2).rules}
    assert report["exp2_ln2_short"].verdict == "refuted"
    assert "central differences" in report["exp2_ln2_short"].counterexample
    assert report["exp2_right"].verdict == "passed"
    assert report["mod_flat"].verdict == "refuted"
    assert report["permute_same"].verdict == "refuted"
    assert "skipped" in report["reduce_right"].detail
    real = check_paths([str(RULES_DIR / "gradient.rules")], examples=2, seed=3).rules
    assert {r.rule.name: r.verdict for r in real if r.verdict != "passed"} == {}


def test_check_command_exits_1_on_a_wrong_gradient(capsys):
    assert run_check([str(MUTANTS)], examples=5, rule="fdiv_sign") == 1
    out = capsys.readouterr().out
    assert "fdiv_sign" in out and "refuted" in out and "torch.div" in out

