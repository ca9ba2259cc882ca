"""`# check:` annotations are not an escape hatch, and `rulegrad check` takes a folder.

A mark is the rule's own comment (`...  # check: structural` on its line, or a comment line of
its own just above it or above its set), never words in prose nor text in a string literal.
`structural` and `unreachable` are verdicts of the recorded programs, which run the package's
pipelines only: a user's file, even one named `rules/symbolic.rules`, borrows none of their
firings. `unreachable` is for a rule whose right side is `error ...`. `ulp N` is capped at
MAX_ULP unless `--max-ulp` raises it. The oracle for every "refuted" here is z3's
counterexample replayed on the numpy oracle (generator/examples.py's replay).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rulegrad.dsl import parse
from rulegrad.generator import soundness
from rulegrad.generator.paths import PACKAGE_RULES_DIR
from rulegrad.generator.soundness import (
    EXIT_REFUTED,
    EXIT_USAGE,
    MAX_ULP,
    check_paths,
    run_check,
    structural_rules,
)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def _reports(path: Path, **kw) -> dict[str, soundness.RuleReport]:
    return {r.rule.name: r for r in check_paths([str(path)], examples=20, **kw).rules}


def test_prose_and_string_literals_are_not_marks():
    text = textwrap.dedent("""
        # These rules are not `check: structural`: z3 proves them.
        rules a = {
          # unlike kernel.rules, nothing here is check: structural
          one: ADD[x:ints, 0] -> x
          two: MUL[x:ints, 1] -> x  # not check: unreachable, see above
          msg: NEG(x:ints) -> error "# check: unreachable"
          own: SUB(x:ints, 0) -> x  # check: structural
        }
        """)
    rf = parse(text, "prose.rules")
    lines = text.splitlines()
    own = next(i + 1 for i, ln in enumerate(lines) if "own:" in ln)
    assert {line for line, _ in structural_rules(rf)} == {own}
    assert soundness.marked_rules(rf, soundness.UNREACHABLE_MARK) == {}


def test_unreachable_on_a_user_rule_is_ignored_and_the_rule_checked(tmp_path):
    f = _write(tmp_path / "mine.rules", """
        rules r = {
          wrong: ADD(x:int32, 1) -> x  # check: unreachable
          boom:  SUB(x:int32, 1) -> error "never"  # check: unreachable
        }
        """)
    rep = _reports(f)
    # not an `error` right side: checked as any rule, and refuted (z3, confirmed by numpy)
    assert rep["wrong"].verdict == "refuted", rep["wrong"].line()
    assert "unreachable' ignored: the right-hand side is not an `error`" in rep["wrong"].detail
    # an `error` rule of a user's file runs in no recorded pass: never "unreachable as declared"
    assert rep["boom"].verdict != "structural", rep["boom"].line()
    assert "runs in no recorded program's pass" in rep["boom"].detail


def test_a_user_rules_symbolic_file_borrows_no_firings(tmp_path, monkeypatch):
    """A user's `rules/symbolic.rules` names its rules `rules/symbolic.rules:LINE`, as the
    package's file does; a structural mark there must not take the package rule's firings."""
    package = (PACKAGE_RULES_DIR / "symbolic.rules").read_text().splitlines()
    line = next(i + 1 for i, ln in enumerate(package) if ln.strip().startswith("add_zero:"))
    body = ["rules mine = {"] + ["  # -"] * (line - 2) + [
        "  wrong: ADD(x:int32, 1) -> x  # check: structural", "}"]
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "rules" / "symbolic.rules"
    _write(f, "\n".join(body) + "\n")
    rep = _reports(Path("rules/symbolic.rules"))["wrong"]
    assert rep.location == f"rules/symbolic.rules:{line}"  # the same label as the package's
    assert rep.verdict == "refuted", rep.line()
    assert "structural' ignored" in rep.detail


def test_ulp_tolerance_is_capped_unless_raised(tmp_path):
    # x * 0.99 is within 20 ulp of x in float16 (1% is 10 to 20 of its ulps; it keeps inf, NaN
    # and zeros): z3 refutes it within the cap and proves it within the raised 40 in a fraction
    # of a second (float32's x * 0.9999, within ~840 ulp, ran z3 to its limit: 25 s for unknown)
    f = _write(tmp_path / "ulp.rules", """
        rules r = {
          near: MUL(x:float16, 0.99) -> x  # check: ulp 40
        }
        """)
    capped = _reports(f)["near"]
    assert capped.verdict == "refuted" and capped.ulp == MAX_ULP, capped.line()
    assert f"cap of {MAX_ULP}" in capped.detail
    raised = _reports(f, max_ulp=40)["near"]
    assert raised.verdict == "proved" and raised.ulp == 40, raised.line()


def test_check_takes_a_folder(tmp_path, capsys):
    _write(tmp_path / "a.rules", "rules a = {\n  good: ADD[x:ints, 0] -> x\n}\n")
    _write(tmp_path / "b.rules", "rules b = {\n  bad: ADD(x:int32, 1) -> x\n}\n")
    _write(tmp_path / "notes.txt", "not a rules file\n")
    assert run_check([str(tmp_path)], examples=10) == EXIT_REFUTED
    out = capsys.readouterr().out
    assert "good" in out and "bad" in out and "proved" in out and "refuted" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_check([str(empty)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no .rules files" in err and "Errno" not in err


@pytest.mark.parametrize("flag", [["--max-ulp", "-1"], ["--max-ulp", "x"]])
def test_max_ulp_flag_refuses_bad_values(flag, capsys):
    from rulegrad.cli import main

    with pytest.raises(SystemExit) as info:
        main(["check", *flag])
    assert info.value.code == 2
