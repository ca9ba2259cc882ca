"""A pytest plugin: one soundness test per rule of a project's `.rules` files.

In: `.rules` files, named either way:

- in the ini file (the plugin is registered through the `pytest11` entry point, so installing
  rulegrad is enough)::

      [pytest]
      rulegrad_rules = rules/*.rules        # globs, relative to the rootdir
      rulegrad_examples = 25                # examples per rule (default 25)
      rulegrad_seed = 0
      rulegrad_allow_unknown = false        # true: an unknown rule passes (with a warning)

  and `pytest rules/` (or `testpaths` that include the folder) collects each matching file;

- or from a test module, with no configuration::

      from rulegrad.generator.pytest_plugin import soundness_tests
      test_rule = soundness_tests(["rules/*.rules"], examples=25)

Out: a test per rule, named `file:line:rule`, running `rulegrad check`'s checks on it: it fails
on a refutation with the counterexample; it fails too when the verdict is unknown, unchecked or
error (nothing showed the rule sound), unless `rulegrad_allow_unknown` (or `allow_unknown=`)
says to accept that, when it passes with a warning; it passes when the rule is proved or passed
its examples; a structural rule is skipped (program fuzzing covers it). Plus one `termination`
test per file that fails when a loop is confirmed.
"""

from __future__ import annotations

import fnmatch
import glob
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DEFAULT_EXAMPLES = 25


def _rule_items(paths: list[str]) -> list[Any]:
    """Every rule of the files the globs name, each once, in file and source order; a file
    that does not load stands as its `RulesError` (a test that fails with the diagnostics)."""
    from rulegrad.dsl import load
    from rulegrad.dsl.errors import RulesError

    from .soundness import rules_to_check

    out: list[Any] = []
    for pattern in paths:
        matched = sorted(glob.glob(pattern)) or [pattern]
        for path in matched:
            try:
                out.extend(rules_to_check(load(path), None))
            except (RulesError, OSError) as exc:
                out.append(_BrokenFile(path, str(exc)))
    return out


class _BrokenFile:
    def __init__(self, path: str, message: str):
        self.path, self.message = path, message


class UnknownRuleWarning(UserWarning):
    """A rule neither proved nor passed, accepted because unknown verdicts are allowed."""


def _run_one(item: Any, checker: Any, allow_unknown: bool = False) -> None:
    """Check one rule; fail with the counterexample or the reason nothing was shown."""
    from .soundness import INCONCLUSIVE

    if isinstance(item, _BrokenFile):
        pytest.fail(item.message, pytrace=False)
    report = checker.check(item)
    if report.verdict == "refuted":
        pytest.fail(f"{report.line()}\n{report.counterexample or ''}", pytrace=False)
    if report.verdict == "structural":
        pytest.skip("covered by program fuzzing")
    if report.verdict in INCONCLUSIVE:
        text = f"{report.line()}\n{report.counterexample or ''}".rstrip()
        if not allow_unknown:
            pytest.fail(text + "\n(set rulegrad_allow_unknown = true to accept it)",
                        pytrace=False)
        warnings.warn(UnknownRuleWarning(text), stacklevel=1)


def soundness_tests(paths: list[str], examples: int = DEFAULT_EXAMPLES, seed: int = 0,
                    rlimit: int | None = None, known_unsound: dict[str, str] | None = None,
                    allow_unknown: bool = False, verdicts: str | Path | None = None) -> Any:
    """A parametrized test function: assign it to a `test_...` name in a test module.

    Rules marked `# check: structural` get no test here: they are checked by running programs
    (rulegrad's own suite asserts that its fuzzer fires every one of them).

    `known_unsound` maps a rule name to the reason it is known to be refuted (an open bug):
    its test is an expected failure until the rule is fixed, then it passes again.

    `verdicts` names a folder of verdicts shared with other processes (generator/verdicts.py):
    a rule another xdist worker checked with the same settings, or a whole `check_paths(...,
    verdicts=)` of the same run, is read from it, not checked again."""
    from .soundness import DEFAULT_RLIMIT, Checker

    items = _rule_items(paths)
    checker = Checker(examples, seed, rlimit or DEFAULT_RLIMIT, verdicts=verdicts)
    known = known_unsound or {}
    params = []
    for it in items:
        if getattr(it, "structural", False):
            continue  # not a soundness question: checked pass by pass on programs (passdiff.py)
        if isinstance(it, _BrokenFile):
            params.append(pytest.param(it, id=f"{_short(it.path)}:loads"))
            continue
        marks = [pytest.mark.xfail(reason=known[it.rule.name])] if it.rule.name in known else []
        params.append(pytest.param(
            it, marks=marks, id=f"{_short(it.rule.span.path)}:{it.rule.span.line}:{it.rule.name}"))

    @pytest.mark.parametrize("item", params)
    def test_rule_is_sound(item: Any) -> None:
        _run_one(item, checker, allow_unknown)

    return test_rule_is_sound


def _short(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


# ---------------------------------------------------------------------- ini-driven collection
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("rulegrad_rules", "globs of .rules files to check for soundness, one test "
                  "per rule", type="linelist", default=[])
    parser.addini("rulegrad_examples", "examples per rule for rulegrad soundness tests",
                  default=str(DEFAULT_EXAMPLES))
    parser.addini("rulegrad_seed", "seed of rulegrad soundness tests", default="0")
    parser.addini("rulegrad_allow_unknown", "pass (with a warning) rules that are neither "
                  "proved nor passed, instead of failing them", type="bool", default=False)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".rules":
        return None
    globs = parent.config.getini("rulegrad_rules")
    root = Path(str(parent.config.rootpath))
    try:
        rel = file_path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        rel = file_path.as_posix()
    if any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(str(file_path), g) for g in globs):
        return RulesFileCollector.from_parent(parent, path=file_path)
    return None


class RulesFileCollector(pytest.File):
    """A `.rules` file: one item per rule, then its termination check."""

    def collect(self) -> Iterator[pytest.Item]:
        from rulegrad.dsl import load

        from .soundness import Checker, rules_to_check

        cfg = self.config
        checker = Checker(int(cfg.getini("rulegrad_examples")), int(cfg.getini("rulegrad_seed")))
        allow = bool(cfg.getini("rulegrad_allow_unknown"))
        checked = load(str(self.path))
        items = list(rules_to_check(checked, None))
        for it in items:
            yield RuleItem.from_parent(self, name=f"{it.rule.span.line}:{it.rule.name}",
                                       rule_item=it, checker=checker, allow_unknown=allow)
        yield TerminationItem.from_parent(self, name="termination", rule_items=items,
                                          checked=checked, checker=checker)


class RuleItem(pytest.Item):
    def __init__(self, *, rule_item: Any, checker: Any, allow_unknown: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.rule_item, self.checker, self.allow_unknown = rule_item, checker, allow_unknown

    def runtest(self) -> None:
        _run_one(self.rule_item, self.checker, self.allow_unknown)

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.path, self.rule_item.rule.span.line - 1, f"rule {self.rule_item.rule.name}"


class TerminationItem(pytest.Item):
    def __init__(self, *, rule_items: list[Any], checked: Any, checker: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.rule_items, self.checked, self.checker = rule_items, checked, checker

    def runtest(self) -> None:
        from .soundness import find_loops

        loops = [lp for lp in find_loops(self.checker, self.rule_items, [self.checked])
                 if lp.confirmed]
        if loops:
            pytest.fail("\n".join(lp.line() + "\n" + lp.detail for lp in loops), pytrace=False)

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.path, 0, "termination"
