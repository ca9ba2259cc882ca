"""rev55b's review of this session's reduce, training-step and verdict-folder changes: each test
failed on the code before its fix (the commit says which)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegrad.generator.soundness import check_paths

REFUTED = "rules t = {\n  r: MUL[x:ints, 2] -> x\n}\n"


@pytest.mark.parametrize("entry", ["{}", '{"report": {}, "loops": []}',
                                   '{"report": {"bogus": 1}, "loops": []}',
                                   '{"report": {"location": "t", "method": "z3", '
                                   '"verdict": "proved"}, "loops": "x"}',
                                   '{"report": {', "", "[]"])
def test_a_verdict_entry_of_another_shape_is_checked_again(tmp_path: Path, entry: str):
    """An entry of the verdict folder that is no verdict of ours (truncated, edited, written by
    another version) is checked again and replaced, never a crash (a KeyError or TypeError
    before) nor read as a verdict. The oracle: the rule checked with no folder."""
    rules, folder = tmp_path / "t.rules", tmp_path / "verdicts"
    rules.write_text(REFUTED)
    alone = check_paths([str(rules)], examples=5).rules[0]
    assert check_paths([str(rules)], examples=5, verdicts=folder).rules[0].verdict == "refuted"
    (kept,) = folder.glob("*.json")
    kept.write_text(entry)
    again = check_paths([str(rules)], examples=5, verdicts=folder).rules[0]
    assert (again.verdict, again.method) == (alone.verdict, alone.method) == ("refuted", "z3")
    assert '"report"' in kept.read_text()  # replaced by the verdict checked again


def test_a_folder_this_process_may_not_write_checks_the_rule(tmp_path: Path, monkeypatch):
    """A verdict folder the process may not write (read-only, another user's): its entries are
    read, the rest checked and not kept; before, the lock file's open raised PermissionError
    out of `check_paths`. Simulated (the suite may run as root, whom a mode does not stop):
    every open for writing and every temporary file in the folder refused."""
    from rulegrad.generator import verdicts

    rules, folder = tmp_path / "t.rules", tmp_path / "verdicts"
    rules.write_text(REFUTED)
    folder.mkdir()

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(args[0] if args else ""))

    monkeypatch.setattr(verdicts, "open", refused, raising=False)
    monkeypatch.setattr(verdicts.tempfile, "mkstemp", refused)
    report = check_paths([str(rules)], examples=5, verdicts=folder).rules[0]
    assert (report.verdict, report.method) == ("refuted", "z3")
    assert not list(folder.iterdir())
