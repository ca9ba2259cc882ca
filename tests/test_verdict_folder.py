"""A folder of rule verdicts shared by processes (generator/verdicts.py).

The suite's two checks of every rule (`test_rule_is_sound` per rule, `test_all_rules_check_clean`
whole) share one: a rule checked once is read everywhere else. The oracle for a kept verdict is
the same rule checked with no folder; for the lock, the order in which answers are computed.
"""

from __future__ import annotations

import re
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from rulegrad.dsl import load
from rulegrad.generator.soundness import Checker, RuleReport, check_paths, rules_to_check
from rulegrad.generator.verdicts import VerdictFolder, verdict_key

MUTATIONS = Path(__file__).resolve().parent / "soundness" / "mutations.rules"


def _no_ids(text: str | None) -> str | None:
    """A counterexample without its buffers' numbers (they count the process's buffers)."""
    return None if text is None else re.sub(r"Buffer\(#\d+", "Buffer(#", text)


def _counting(monkeypatch) -> list[str]:
    """The names of the rules the checker really checks from now on."""
    checked: list[str] = []
    real = Checker._check

    def counted(self, item):
        checked.append(item.rule.name)
        return real(self, item)

    monkeypatch.setattr(Checker, "_check", counted)
    return checked


def test_a_rule_checked_once_is_read_by_every_other_checker(tmp_path, monkeypatch):
    items = [it for it in rules_to_check(load(str(MUTATIONS)), None)
             if it.rule.name in ("mul_one", "mul_two", "max_empty")]
    fresh = [Checker(5, 0).check(it) for it in items]  # the oracle: no folder
    checked = _counting(monkeypatch)
    first = [Checker(5, 0, verdicts=tmp_path).check(it) for it in items]
    assert checked == ["mul_one", "mul_two", "max_empty"]
    again = Checker(5, 0, verdicts=tmp_path).check_all(items)
    assert checked == ["mul_one", "mul_two", "max_empty"]  # read, not checked again
    for a, b, c in zip(fresh, first, again, strict=True):
        assert a.line() == b.line() == c.line()
        assert b.counterexample == c.counterexample
        assert _no_ids(a.counterexample) == _no_ids(b.counterexample)
        assert c.rule is a.rule
    assert [r.verdict for r in again] == ["proved", "refuted", "refuted"]
    # other settings are another question: 6 examples are checked anew
    Checker(6, 0, verdicts=tmp_path).check(items[1])
    assert checked[-1] == "mul_two" and len(checked) == 4


def test_an_edited_rules_file_is_checked_again(tmp_path):
    rules = tmp_path / "t.rules"
    rules.write_text("rules t = {\n  r: MUL[x:ints, 2] -> x\n}\n")
    folder = tmp_path / "verdicts"
    assert check_paths([str(rules)], examples=10, verdicts=folder).rules[0].verdict == "refuted"
    rules.write_text("rules t = {\n  r: MUL[x:ints, 1] -> x\n}\n")  # same name, same line
    assert check_paths([str(rules)], examples=10, verdicts=folder).rules[0].verdict == "proved"


def test_a_kept_verdict_carries_the_loops_its_examples_ran_into(tmp_path, monkeypatch):
    item = next(it for it in rules_to_check(load(str(MUTATIONS)), "mul_one"))

    def looping(self, it):  # examples that ran into the rewrite budget
        self.loops_seen[("sound", it.rule.name)] = "rewrite budget exhausted"
        return RuleReport(it.rule, "mutations.rules:8", "examples", "passed", examples=3)

    monkeypatch.setattr(Checker, "_check", looping)
    Checker(5, 0, verdicts=tmp_path).check(item)
    monkeypatch.undo()
    reader = Checker(5, 0, verdicts=tmp_path)
    checked = _counting(monkeypatch)
    report = reader.check(item)
    assert not checked and report.examples == 3 and report.method == "examples"
    assert reader.loops_seen == {("sound", "mul_one"): "rewrite budget exhausted"}


def test_one_process_answers_a_question_while_the_others_wait(tmp_path):
    folder, other = VerdictFolder(tmp_path), VerdictFolder(tmp_path)  # two holders, two locks
    started, release = threading.Event(), threading.Event()
    computed: list[str] = []

    def slow() -> dict:
        computed.append("a by the first")
        started.set()
        assert release.wait(30)
        return {"value": 1}

    first = threading.Thread(target=lambda: folder.answer("a", slow))
    first.start()
    assert started.wait(30)
    assert other.answer("a", lambda: {"value": 2}, wait=False) is None  # being answered

    def free(key: str) -> dict:
        computed.append(f"{key} by the second")
        if key == "b":
            release.set()  # the first finishes only once the second has a free question
        return {"value": 3}

    answers = other.answer_all(["a", "b"], free)
    first.join(30)
    # the second took the free question first, then waited for the first's answer to a
    assert computed == ["a by the first", "b by the second"]
    assert answers == {"a": {"value": 1}, "b": {"value": 3}}
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["a.json", "b.json"]


@pytest.fixture()
def on_path(tmp_path, monkeypatch) -> Iterator[Path]:
    """tmp_path on sys.path; the modules imported from it leave sys.modules after the test (a
    later test's package of the same name would be that one)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:  # (a package or a module of tmp_path's)
        if (tmp_path / name.split(".")[0]).exists() or (tmp_path / f"{name}.py").exists():
            del sys.modules[name]


def test_a_rule_is_checked_again_after_a_module_its_helper_imports_is_edited(on_path,
                                                                            monkeypatch):
    # the helper's own text is unchanged; its answer changes with the constant it imports
    tmp_path = on_path
    pkg = tmp_path / "vf_user_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("from vf_user_pkg.util import K\n\n\n"
                                    "def is_k(c):\n    return c.arg == K\n")
    (pkg / "util.py").write_text("K = 2\n")
    rules = tmp_path / "t.rules"
    rules.write_text("use vf_user_pkg.helpers: is_k\n"
                     "rules t = {\n  r: MUL(x:ints, c:CONST) if is_k(c) -> x\n}\n")
    folder = tmp_path / "verdicts"
    before = verdict_key(rules)
    assert check_paths([str(rules)], examples=10, verdicts=folder).rules[0].verdict == "refuted"
    checked = _counting(monkeypatch)
    check_paths([str(rules)], examples=10, verdicts=folder)
    assert checked == []  # nothing edited: the kept verdict is read
    (pkg / "util.py").write_text("K = 1\n")
    assert verdict_key(rules) != before
    check_paths([str(rules)], examples=10, verdicts=folder)
    assert checked == ["r"]  # checked again, not the verdict kept for K = 2


def test_keying_a_rules_file_imports_no_module(on_path):
    """The key finds the files of the modules a helper names without importing them: the
    helper's import inside its function (never run by a check that refutes nothing) named a
    package whose `__init__` ran, and a module of it, only to key the file."""
    tmp_path = on_path
    pkg = tmp_path / "vf_lazy_pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('vf_lazy_pkg imported')\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "util.py").write_text("K = 2\n")
    (tmp_path / "helpers.py").write_text("def is_k(c):\n    from vf_lazy_pkg.sub.util import K\n"
                                         "    return c.arg == K\n")
    rules = tmp_path / "t.rules"
    rules.write_text("use .helpers: is_k\n"
                     "rules t = {\n  r: MUL(x:ints, c:CONST) if is_k(c) -> x\n}\n")
    verdict_key(MUTATIONS)  # (what keying any rules file imports of rulegrad's own)
    before = set(sys.modules)
    key = verdict_key(rules)
    assert set(sys.modules) - before == set()
    (pkg / "sub" / "util.py").write_text("K = 1\n")  # the module is still part of the key
    assert verdict_key(rules) != key
    assert set(sys.modules) - before == set()


def test_a_package_whose_path_is_no_list_of_folders_is_keyed(on_path, monkeypatch):
    """An imported package's `__path__` that is no list of folders (torch's `torch._classes`)
    names no file: the helper importing from it is keyed, not a TypeError."""

    class Odd(types.ModuleType):
        __path__ = property(lambda self: 1 / 0)

    monkeypatch.setitem(sys.modules, "vf_odd", Odd("vf_odd"))
    (on_path / "helpers.py").write_text("def is_k(c):\n    from vf_odd.sub import K\n"
                                        "    return c.arg == K\n")
    rules = on_path / "t.rules"
    rules.write_text("use .helpers: is_k\n"
                     "rules t = {\n  r: MUL(x:ints, c:CONST) if is_k(c) -> x\n}\n")
    assert len(verdict_key(rules)) == 64
