"""`rulegrad check` never crashes and its exit status means one thing: a rule's own code that
raises, exits or hangs is that rule's `error`, not the run's; a file that cannot be read is a
usage error (2); a rule nothing could show sound is 3 (0 with --allow-unknown); the pytest
plugin fails such a rule unless told to allow it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rulegrad.cli import main
from rulegrad.generator.soundness import EXIT_UNKNOWN, check_paths, run_check

HELPERS = textwrap.dedent("""\
    def spin(x):
        while True:
            pass

    def leave(x):
        raise SystemExit(0)
    """)


def _rules(tmp_path: Path, body: str, name: str = "r.rules") -> str:
    (tmp_path / "misbehave.py").write_text(HELPERS)
    path = tmp_path / name
    path.write_text("use .misbehave: spin, leave\nrules r = {\n" + textwrap.dedent(body) + "}\n")
    return str(path)


def test_a_raising_guard_or_exiting_helper_is_that_rules_error(tmp_path):
    path = _rules(tmp_path, """\
        guard_div: ADD(x:index, y) if len(x.src) // 0 -> x
        leaving:   SUB(x:index, y) -> leave(x)
        fine:      MUL(x:index, 1) -> x
    """)
    rep = {r.rule.name: r for r in check_paths([path], examples=5).rules}
    # (a constant guard such as `1 // 0` is refused at load now: dsl/constfold.py)
    div = rep["guard_div"]
    assert div.verdict == "error" and "ZeroDivisionError" in div.detail + (div.counterexample or "")
    assert rep["leaving"].verdict == "error" and "SystemExit" in rep["leaving"].detail
    assert rep["fine"].verdict == "proved"  # the run went on past both
    assert run_check([path], examples=5) == EXIT_UNKNOWN
    assert run_check([path], examples=5, allow_unknown=True) == 0


def test_a_helper_that_never_returns_is_timed_out_and_named(tmp_path, capsys):
    path = _rules(tmp_path, """\
        spinning: MUL(x:index, y) -> spin(x)
        fine:     MUL(x:index, 1) -> x
    """)
    assert run_check([path], examples=5, hang_seconds=1.0) == EXIT_UNKNOWN
    out = capsys.readouterr().out
    assert "spinning" in out and "did not finish in 1s of CPU time" in out
    assert "fine" in out and "proved" in out


def test_a_rule_that_cannot_be_instantiated_exits_3(tmp_path, capsys):
    path = tmp_path / "p.rules"
    path.write_text("rules r = {\n  perm: PERMUTE(PERMUTE(x, arg=(1,0)), arg=(1,0)) -> x\n}\n")
    assert main(["check", str(path), "--examples", "5"]) == EXIT_UNKNOWN
    assert "unknown" in capsys.readouterr().out
    assert main(["check", str(path), "--examples", "5", "--allow-unknown"]) == 0


def test_unreadable_files_are_usage_errors(tmp_path, capsys):
    bad = tmp_path / "latin1.rules"
    bad.write_bytes("rules r = {\n  # caf\xe9\n  a: MUL(x:index, 1) -> x\n}\n".encode("latin-1"))
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "not UTF-8" in err and "Traceback" not in err
    hello = tmp_path / "hello.rules"
    hello.write_text('rules r = {\n  h: NEG(x) -> "hello"\n}\n')
    assert main(["check", str(hello)]) == 2
    err = capsys.readouterr().err
    assert "hello.rules:2:16: error: the right-hand side is a string" in err and "^" in err


def test_bad_limits_are_usage_errors():
    for argv in (["check", "--rlimit", "0"], ["check", "--hang-timeout", "-1"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2


def test_pytest_plugin_fails_unknown_unless_allowed(pytester):
    # in this process (pytester runs pytest in it, the plugin loaded from its entry point as
    # in a child), not two child processes that each import rulegrad and build the parser again
    pytester.mkdir("rules")
    (pytester.path / "rules" / "mine.rules").write_text(
        "rules mine = {\n  perm: PERMUTE(PERMUTE(x, arg=(1,0)), arg=(1,0)) -> x\n"
        "  ok: ADD[x:ints, 0] -> x\n}\n")
    ini = "[pytest]\nrulegrad_rules = rules/*.rules\nrulegrad_examples = 5\n"
    args = ("-q", "-p", "no:cacheprovider", "-p", "no:xdist", "rules")
    (pytester.path / "pytest.ini").write_text(ini)
    res = pytester.runpytest_inprocess(*args)
    res.assert_outcomes(failed=1, passed=2)  # (and nothing skipped)
    assert "rulegrad_allow_unknown" in res.stdout.str()
    (pytester.path / "pytest.ini").write_text(ini + "rulegrad_allow_unknown = true\n")
    res = pytester.runpytest_inprocess(*args)
    res.assert_outcomes(passed=3, warnings=1)


def test_a_helper_module_that_exits_on_import_is_an_error(tmp_path, capsys):
    (tmp_path / "bye.py").write_text("import sys\nsys.exit(0)\ndef f(x):\n    return x\n")
    path = tmp_path / "s.rules"
    path.write_text("use .bye: f\nrules r = {\n  a: NEG(x) -> f(x)\n}\n")
    for argv in (["gen", str(path), "--out", str(tmp_path / "out")],
                 ["gen", str(path), "--out", str(tmp_path / "out"), "--check"],
                 ["check", str(path)]):
        assert main(argv) == 2, argv
        assert "SystemExit" in capsys.readouterr().err


def test_the_hang_limit_counts_cpu_time_not_waiting():
    # a busy machine makes a rule wait, not compute: waiting 1s is no hang under a 0.2s limit
    # (only ten times the limit of wall clock stops a helper blocked without computing)
    import time

    from rulegrad.generator.soundness import _hang_limit, _Hung

    with _hang_limit(0.2):
        time.sleep(1.0)
    with pytest.raises(_Hung), _hang_limit(0.2):
        while True:
            pass
