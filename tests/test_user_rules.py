"""A user's own rule set, from a `.rules` file outside the package, in the scheduler's pipeline.

The programs are checked against numpy; the rules that fire are read from the trace."""

from __future__ import annotations

import numpy as np
import pytest

import rulegrad
from rulegrad import Tensor
from rulegrad.generator import user
from rulegrad.generator.user import (
    UnprovenRulesError,
    UnsoundRulesError,
    UserRulesError,
    module_path,
)
from rulegrad.runtime.rewrite import tracing

# x * 2 -> x + x is exact in floating point; from pm_rangeify on, tensor constants are plain
# CONSTs (each broadcast view of a constant has become the constant itself)
STRENGTH = """rules strength = {
  # x * 2 -> x + x: exact in floating point
  mul_two: MUL[x, c:CONST] if c.arg == 2.0 -> ADD(x, x)
}
"""
# before pm_rangeify a tensor constant is a broadcast view of a CONST, and that is what a
# pattern says; this rule is wrong on purpose (x * 3 -> x), so that its effect shows in values
WRONG = """rules wrong = {
  drop_three: MUL[x, EXPAND(RESHAPE(c:CONST))] if c.arg == 3.0 -> x
}
"""


def _program(a: np.ndarray, k: float) -> np.ndarray:
    return ((Tensor(a) * k).sum(axis=1) + 1).numpy()


@pytest.fixture
def rules_dir(tmp_path):
    d = tmp_path / "my project"  # outside the package, with a space for good measure
    d.mkdir()
    (d / "strength.rules").write_text(STRENGTH)
    (d / "wrong.rules").write_text(WRONG)
    return d


def test_users_rule_fires_in_a_tensor_program(rules_dir):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with rulegrad.add_rules(rules_dir / "strength.rules", after="pm_rangeify"):
        with tracing() as t:
            got = _program(a, 2.0)
    np.testing.assert_array_equal(got, (a * 2).sum(axis=1) + 1)
    fired = [f for f in t.firings if f.pass_name == "strength"]
    assert fired and all(f.rule.name == "mul_two" for f in fired)
    assert fired[0].rule.path.endswith("strength.rules") and fired[0].rule.line == 3
    assert module_path(rules_dir / "strength.rules").is_file()  # generated when missing
    with tracing() as t:  # out of the block, the pass is gone
        _program(a, 2.0)
    assert not [f for f in t.firings if f.pass_name == "strength"]


def test_users_pass_changes_the_schedule_and_leaves_with_its_block(rules_dir):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = (a * 3).sum(axis=1) + 1
    np.testing.assert_array_equal(_program(a, 3.0), want)  # scheduled (and cached) without it
    with pytest.warns(RuntimeWarning, match="drop_three"):  # (refuted: run only when asked)
        up = rulegrad.add_rules(rules_dir / "wrong.rules", "wrong", before="earliest",
                                allow_refuted=True)
    try:  # as a default for every program: the cached schedule is not replayed
        np.testing.assert_array_equal(_program(a, 3.0), a.sum(axis=1) + 1)
        np.testing.assert_array_equal(_program(a, 2.0), (a * 2).sum(axis=1) + 1)
    finally:
        rulegrad.remove_rules(up)
    np.testing.assert_array_equal(_program(a, 3.0), want)


def test_stale_module_is_refused_naming_its_file(rules_dir):
    rules = rules_dir / "strength.rules"
    with pytest.raises(UserRulesError, match="strength.py is missing.*rulegrad gen"):
        rulegrad.add_rules(rules, after="pm_rangeify", regenerate=False)
    rulegrad.remove_rules(rulegrad.add_rules(rules, after="pm_rangeify"))  # generates it
    target = module_path(rules)
    rules.write_text(STRENGTH.replace("c.arg == 2.0 -> ADD(x, x)",  # edited after generation
                                      "c.arg == 4.0 -> ADD(ADD(x, x), ADD(x, x))"))
    with pytest.raises(UserRulesError) as e:
        rulegrad.add_rules(rules, after="pm_rangeify", regenerate=False)
    assert f"{target} is stale" in str(e.value) and "rulegrad gen" in str(e.value)
    a = np.arange(4, dtype=np.float32)
    with rulegrad.add_rules(rules, after="pm_rangeify"):  # regenerated: the new rule runs
        with tracing() as t:
            np.testing.assert_array_equal((Tensor(a) * 4).numpy(), a * 4)
    assert any(f.rule is not None and f.rule.name == "mul_two" for f in t.firings)


def test_bad_calls_say_what_is_wrong(rules_dir):
    with pytest.raises(ValueError, match="before=STAGE or after=STAGE"):
        rulegrad.add_rules(rules_dir / "strength.rules")
    with pytest.raises(ValueError, match="no pass 'rangify'.*pm_rangeify"):
        rulegrad.add_rules(rules_dir / "strength.rules", after="rangify")
    with pytest.raises(UserRulesError, match="no rule set 'nope'.*strength"):
        rulegrad.add_rules(rules_dir / "strength.rules", "nope", after="earliest")
    (rules_dir / "broken.rules").write_text("rules b = {\n  ADDD[x, 0] -> x\n}\n")
    with pytest.raises(UserRulesError, match="broken.rules:2:.*ADDD"):
        rulegrad.add_rules(rules_dir / "broken.rules", after="earliest")


# ====================================================================== rules nothing checked
# x * 2 -> x + x, sound, but it reads the pass context: the check cannot run it (`unchecked`)
UNCHECKED = """rules twice = {
  mul_two_ctx: MUL[x, c:CONST] if ctx is None and c.arg == 2.0 -> ADD(x, x)
}
"""


def test_a_rule_the_check_has_no_evidence_for_is_refused_unless_allowed(rules_dir):
    """`unchecked` (nothing ran it): refused by default naming the rule and why; with
    allow_unknown=True it runs, with a warning that names it (grad44, issue 31 item 12's
    policy for refuted rules, extended; docs/language.md)."""
    path = rules_dir / "twice.rules"
    path.write_text(UNCHECKED)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(UnprovenRulesError) as e:
        rulegrad.add_rules(path, after="pm_rangeify")
    text = str(e.value)
    assert "twice.rules:2" in text and "mul_two_ctx" in text and "unchecked" in text
    assert "allow_unknown=True" in text
    with pytest.warns(RuntimeWarning, match="mul_two_ctx"):
        up = rulegrad.add_rules(path, after="pm_rangeify", allow_unknown=True)
    try:
        with tracing() as t:
            np.testing.assert_array_equal(_program(a, 2.0), (a * 2).sum(axis=1) + 1)
        assert any(f.rule is not None and f.rule.name == "mul_two_ctx" for f in t.firings)
    finally:
        rulegrad.remove_rules(up)


# ====================================================================== refuted rules are refused
def test_a_refuted_rule_is_refused_with_its_counterexample(rules_dir):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(UnsoundRulesError) as e:
        rulegrad.add_rules(rules_dir / "wrong.rules", before="earliest")
    text = str(e.value)
    assert "wrong.rules:2" in text and "drop_three" in text and "counterexample" in text
    assert "left side" in text and "allow_refuted=True" in text
    # nothing was added: the program is still right
    np.testing.assert_array_equal(_program(a, 3.0), (a * 3).sum(axis=1) + 1)


HELPED = """use .two_helpers: is_two

rules helped = {
  mul_helped: MUL[x, c:CONST] if is_two(c.arg) -> ADD(x, x)
}
"""


@pytest.fixture
def check_runs(monkeypatch) -> list:
    """The paths of each run of the soundness check (add_rules' verdict), counted."""
    from rulegrad.generator import soundness

    runs: list = []
    check = soundness.check_paths

    def counting(paths, *a, **k):
        runs.append(paths)
        return check(paths, *a, **k)

    monkeypatch.setattr(soundness, "check_paths", counting)
    return runs


def test_the_verdict_is_kept_by_content_of_the_file_and_its_helpers(rules_dir, monkeypatch,
                                                                     check_runs):
    rules = rules_dir / "helped.rules"
    rules.write_text(HELPED)
    helpers = rules_dir / "two_helpers.py"
    helpers.write_text("def is_two(v: object) -> bool:\n    return v == 2.0\n")
    runs = check_runs
    rulegrad.remove_rules(rulegrad.add_rules(rules, after="pm_rangeify"))
    assert len(runs) == 1
    rulegrad.remove_rules(rulegrad.add_rules(rules, after="pm_rangeify"))  # kept in memory
    monkeypatch.setattr(user, "_verdicts", {})  # a new process: kept beside the module
    rulegrad.remove_rules(rulegrad.add_rules(rules, after="pm_rangeify"))
    assert len(runs) == 1
    assert module_path(rules).with_suffix(".check").is_file()
    # the helper now says 3.0 is two: the rule is wrong, checked again, and refused
    helpers.write_text("def is_two(v: object) -> bool:\n    return v in (2.0, 3.0)\n")
    with pytest.raises(UnsoundRulesError, match="mul_helped"):
        rulegrad.add_rules(rules, after="pm_rangeify")
    assert len(runs) == 2


def test_the_verdict_serves_a_copy_of_the_file_in_another_folder(rules_dir, tmp_path,
                                                                    monkeypatch, check_runs):
    # the fuzzer writes each program's rules file to a fresh folder: a verdict keyed by the
    # folder too was never reused, and every program paid for a z3 proof
    runs = check_runs
    monkeypatch.setattr(user, "_verdicts", {})
    rulegrad.remove_rules(rulegrad.add_rules(rules_dir / "strength.rules", after="pm_rangeify"))
    with pytest.raises(UnsoundRulesError, match="wrong.rules:2"):
        rulegrad.add_rules(rules_dir / "wrong.rules", before="earliest")
    assert len(runs) == 2
    for k in range(2):
        other = tmp_path / f"elsewhere {k}"
        other.mkdir()
        (other / "strength.rules").write_text(STRENGTH)
        (other / "renamed.rules").write_text(WRONG)
        rulegrad.remove_rules(rulegrad.add_rules(other / "strength.rules", after="pm_rangeify"))
        with pytest.raises(UnsoundRulesError) as e:  # the copy's own name, not the first's
            rulegrad.add_rules(other / "renamed.rules", before="earliest")
        assert "renamed.rules:2" in str(e.value) and f"elsewhere {k}" in str(e.value)
        assert "drop_three" in str(e.value) and "wrong.rules" not in str(e.value)
    assert len(runs) == 2  # kept by content: no check of the copies
    # one character more is other content: checked again
    (rules_dir / "strength.rules").write_text(STRENGTH + "\n")
    rulegrad.remove_rules(rulegrad.add_rules(rules_dir / "strength.rules", after="pm_rangeify"))
    assert len(runs) == 3


def test_a_refuted_rule_imported_from_another_file_is_refused(rules_dir):
    # check only looked at the rules written in the file added: a set made of another file's
    # rules ran them unchecked, and x * 3 became x
    (rules_dir / "main.rules").write_text('from "wrong.rules" import wrong\n\n'
                                          "rules mine = wrong + {\n  same: MAX(x, x) -> x\n}\n")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(UnsoundRulesError) as e:
        rulegrad.add_rules(rules_dir / "main.rules", "mine", before="earliest")
    assert "wrong.rules:2" in str(e.value) and "drop_three" in str(e.value)
    np.testing.assert_array_equal(_program(a, 3.0), (a * 3).sum(axis=1) + 1)
    # and `rulegrad check` of the importing file reports it
    from rulegrad.generator.soundness import check_paths

    report = check_paths([str(rules_dir / "main.rules")])
    assert {(r.rule.name, r.verdict) for r in report.rules} == {("same", "proved"),
                                                                ("drop_three", "refuted")}


# ====================================================================== value guards and replay
GUARDED = """rules maxmul = {
  # max(x*c, y*c) = max(x, y)*c for a finite c > 0: rounding is monotone (c < 0 swaps them)
  max_mul: MAX(MUL(x:float32, c:CONST), MUL(y, c)) if c.arg > 1e-30 and c.arg < 1e30 \\
             -> MUL(MAX(x, y), c)
}
"""


def test_a_guard_on_a_constants_value_is_asked_again_for_a_value_on_its_other_side(rules_dir):
    # the schedules for 0.3 and 0.7 agree once their constant is lifted, so the cache used to
    # replay them for -0.3 too: the guard never ran, and max became min
    from rulegrad.runtime import schedule_cache

    schedule_cache.clear()
    (rules_dir / "maxmul.rules").write_text(GUARDED)
    a = np.arange(1, 7, dtype=np.float32)
    b = a[::-1].copy()
    with rulegrad.add_rules(rules_dir / "maxmul.rules", after="pm_rangeify"):
        for c in (0.3, 0.7, -0.3, -0.7, 0.9, -0.9, 0.3):
            got = (Tensor(a) * c).maximum(Tensor(b) * c).numpy()
            np.testing.assert_array_equal(got, np.maximum(a * np.float32(c), b * np.float32(c)))
        # a constant no guard reads still replays: d is above the MAX, out of the rule's reach
        hits = []
        for d in (0.1, 0.2, 0.15, 0.35):
            before = schedule_cache.stats["hits"]
            got = ((Tensor(a) * 0.3).maximum(Tensor(b) * 0.3) + d).numpy()
            hits.append(schedule_cache.stats["hits"] - before)
            want = np.maximum(a * np.float32(0.3), b * np.float32(0.3)) + np.float32(d)
            np.testing.assert_array_equal(got, want)
        assert hits == [0, 0, 1, 1]


def test_where_a_rule_set_reads_values(rules_dir):
    path = rules_dir / "kinds.rules"
    path.write_text("rules shape = {\n  same_max: MAX(x, x) -> x\n}\n"
                    "rules value = {\n  same_max2: MAX(x, x) -> x\n"
                    "  deep: ADD(MUL(x, c:CONST), y) if c.arg > 0.5 -> y\n}\n"
                    "rules literal = {\n  half: MUL[x, 0.5] -> x\n}\n")
    assert user.value_reads(path, "shape") is None  # structure only: no key needs a value
    assert user.value_reads(path, "value") == user.ValueReads(frozenset({"ADD"}), 2)
    assert user.value_reads(path, "literal") == user.ValueReads(frozenset({"MUL"}), 1)


def test_a_rule_handing_a_node_to_a_helper_may_read_anywhere_below(rules_dir):
    path = rules_dir / "deep.rules"
    (rules_dir / "deep_helpers.py").write_text("def big(x: object) -> bool:\n    return True\n")
    path.write_text("use .deep_helpers: big\n\nrules deep = {\n"
                    "  via_helper: NEG(x) if big(x) -> x\n}\n"
                    "rules walk = {\n  via_src: NEG(x) if x.src and x.src[0].arg == 1.5 -> x\n}\n")
    assert user.value_reads(path, "deep") == user.ValueReads(frozenset({"NEG"}), user.UNBOUNDED)
    assert user.value_reads(path, "walk") == user.ValueReads(frozenset({"NEG"}), user.UNBOUNDED)


# ====================================================================== gradient sets (grad46)
GRAD_WRONG = """rules user_grads = {  # check: gradient
  mul_const_off: MUL(x, c:CONST):floats -> (ctx * (c + 1), None)
}
"""
GRAD_RIGHT = """rules user_grads = {  # check: gradient
  mul_const: MUL(x, c:CONST):floats -> (ctx * c, None)
}
"""


def test_a_gradient_set_is_refused_as_a_pass_a_refuted_one_with_its_counterexample(rules_dir):
    """A gradient rule over a bare constant source is checked (it was `unchecked`): the wrong
    one is refused with the checker's counterexample; the right one passes the check, and is
    refused as a scheduler pass all the same, saying why (its right side is a tuple of
    gradients: run as a pass it crashed the rewrite engine)."""
    wrong, right = rules_dir / "grad_wrong.rules", rules_dir / "grad_right.rules"
    wrong.write_text(GRAD_WRONG)
    right.write_text(GRAD_RIGHT)
    with pytest.raises(UnsoundRulesError) as e:
        rulegrad.add_rules(wrong, before="earliest")
    assert "mul_const_off" in str(e.value) and "torch.mul" in str(e.value)
    with pytest.raises(UserRulesError, match="gradient set") as e:
        rulegrad.add_rules(right, before="earliest")
    assert not isinstance(e.value, (UnsoundRulesError, UnprovenRulesError))


def test_a_constants_value_as_an_op_source_is_refused_at_load_with_its_place(rules_dir):
    """`MUL(x, c.arg)` (the value where the node `c` was meant) crashed when the rule fired;
    add_rules now refuses the file as `rulegrad gen` does, at file:line:col (grad46)."""
    path = rules_dir / "arg_source.rules"
    path.write_text("rules s = {\n  twice: MUL[x, c:CONST] if c.arg == 2.0 -> MUL(x, c.arg)\n}\n")
    with pytest.raises(UserRulesError) as e:
        rulegrad.add_rules(path, after="pm_rangeify")
    assert "arg_source.rules:2:52: error: a number (a constant's value) cannot be a source of " \
        "MUL" in str(e.value) and "c is the node" in str(e.value)
