"""fuzz68 (issue 31): a gradient rule whose types admit only float16 is drawn in float16.

Before, such a rule was `unchecked` (the gradient check drew float64 and float32 only). Now
it is compared, at float16's values, with torch's autograd in float64, at float16's tolerance.
The rules are the package's own float gradient rules (rules/gradient.rules) with `:floats`
made `:float16`, so every one of them is covered: each right one passes, and each one with
its right-hand side broken (the incoming gradient scaled by 1.03) is refuted in float16.
The oracle is torch's autograd (an extra of the tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rulegrad.generator.soundness import check_paths

GRADIENT_RULES = Path(__file__).resolve().parents[1] / "rules" / "gradient.rules"


def _float_rules() -> list[tuple[str, str]]:
    """(name, rule text) of each package gradient rule written for floats, as float16 only."""
    body = GRADIENT_RULES.read_text().replace("\\\n", " ")
    out = []
    for line in body.splitlines():
        m = re.match(r"\s*grad_(\w+):\s*(.*)$", line)
        if m and ":floats" in m.group(2):
            out.append((f"h16_{m.group(1)}", m.group(2).replace(":floats", ":float16")))
    return out


def _broken(text: str) -> str:
    """The rule with its right-hand side wrong by 3%: the incoming gradient scaled (TRUNC's,
    a constant 0, made the incoming gradient itself)."""
    lhs, rhs = text.split("->", 1)
    if "ctx.const_like(0),)" in rhs and rhs.count("ctx") == 1:
        return f"{lhs}-> (ctx,)"
    return lhs + "-> " + re.sub(r"\bctx\b", "(ctx * 1.03)", rhs)


def _file(tmp_path: Path, rules: list[tuple[str, str]]) -> str:
    use = re.search(r"^use \.gradient_helpers: (.*)$", GRADIENT_RULES.read_text(), re.M)
    assert use is not None
    text = [f"use rulegrad.rules.gradient_helpers: {use.group(1)}\n"]
    text += [f"rules {name} = {{  # check: gradient\n  {name}: {rule}\n}}\n"
             for name, rule in rules]
    path = tmp_path / "half.rules"
    path.write_text("\n".join(text))
    return str(path)


def _check(tmp_path: Path, broken: bool) -> tuple[list[str], dict]:
    pytest.importorskip("torch", reason="torch is the gradient checker's reference")
    rules = [(n, _broken(t) if broken else t) for n, t in _float_rules()]
    reports = check_paths([_file(tmp_path, rules)], examples=3, seed=0).rules
    return [n for n, _ in rules], {r.rule.name: r for r in reports}


def test_every_float_gradient_rule_is_copied():
    # (the rules below are the package's: a change to gradient.rules' layout must not empty them)
    names = [n for n, _ in _float_rules()]
    assert len(names) >= 30 and {"h16_exp", "h16_pow", "h16_scan_max", "h16_multi"} <= set(names)


def test_a_float16_only_gradient_rule_is_checked_and_passes(tmp_path):
    names, reports = _check(tmp_path, broken=False)
    bad = [f"{reports[n].line()}\n{reports[n].counterexample}" for n in names
           if (reports[n].method, reports[n].verdict) != ("gradient", "passed")]
    assert not bad, "\n".join(bad)


def test_a_float16_only_gradient_rule_broken_is_refuted_in_float16(tmp_path):
    names, reports = _check(tmp_path, broken=True)
    # (CAST's float16 result is drawn from float64 sources: "CAST(float64 -> float16)")
    bad = [reports[n].line() for n in names
           if (reports[n].method, reports[n].verdict) != ("gradient", "refuted")
           or "float16" not in reports[n].detail]
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------- rulegrad fuzz
from rulegrad.tools import fuzz  # noqa: E402


def test_a_run_stopped_early_has_programs_of_every_class(monkeypatch):
    """`--class all --n 10000` ran class after class: a run stopped after hours (the machine's
    time, not the count, is what ends it) had the first classes' 10,000 and none of the last's.
    The classes are now taken in turn for each seed."""
    order = []

    def fake(case, backend, scheduler, count_actions):  # (the harness, not the programs)
        order.append((case.cls, case.seed))
        return fuzz.Outcome(case.cls, case.seed, "ok")

    monkeypatch.setattr(fuzz, "run_case", fake)
    fuzz.run_classes(["sort", "pick", "assign"], 3, 10)
    assert order == [(c, s) for s in range(10, 13) for c in ("sort", "pick", "assign")]


def test_the_schedule_class_prints_its_count_as_the_others_do(monkeypatch, capsys):
    """`rulegrad fuzz` (class schedule) printed a total only; now its per-class line too."""
    monkeypatch.setattr(fuzz, "mismatch", lambda prog, backend="interp", scheduler="rangeify":
                        "wrong" if prog.seed == 2 else None)
    assert fuzz.main(["--n", "5"]) == 1
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    assert ["schedule", "5", "4", "1"] in rows
