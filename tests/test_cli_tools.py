"""The command line's front door: `--version`, a missing C compiler, missing vs stale generated
modules, and `viz` passing arguments to the script.

Oracles: pyproject.toml for the version; the environment we set (a compiler that does not
exist) for the compiler message; the files we delete or edit for missing vs stale."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import rulegrad
from rulegrad.backends.c.errors import CompilerNotFound
from rulegrad.cli import main
from rulegrad.generator.user import UserRulesError, load_rules, module_path

ROOT = Path(__file__).resolve().parents[1]
RULEGRAD = [sys.executable, "-m", "rulegrad.cli"]


def test_version_answers_and_matches_the_package_metadata(capsys):
    want = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"rulegrad {want}"
    assert rulegrad.__version__ == want


def test_missing_compiler_is_one_line_naming_what_to_install(tmp_path):
    env = {**os.environ, "RULEGRAD_CC": str(tmp_path / "no-such-cc"),
           "RULEGRAD_CACHE": str(tmp_path / "cache")}
    env.pop("RULEGRAD_BACKEND", None)
    proc = subprocess.run([*RULEGRAD, "demo"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "no-such-cc" in lines[0] and "apt-get install gcc" in lines[0]
    assert "RULEGRAD_BACKEND=interp" in lines[0] and "Traceback" not in proc.stderr


def test_missing_compiler_from_tensor_numpy_is_a_clear_error(tmp_path, monkeypatch):
    from rulegrad import Tensor

    monkeypatch.setenv("RULEGRAD_CC", str(tmp_path / "absent-cc"))
    monkeypatch.delenv("RULEGRAD_BACKEND", raising=False)
    # a program no other test builds, so no compiled library of it is at hand
    a = np.arange(21, dtype=np.float32).reshape(7, 3)
    with pytest.raises(CompilerNotFound) as e:
        (Tensor(a) * 3.125 - 0.0625).exp2().numpy()
    msg = str(e.value)
    assert "\n" not in msg and "absent-cc" in msg and "RULEGRAD_BACKEND=interp" in msg
    assert "source kept" not in msg
    assert e.value.__cause__ is None and e.value.__suppress_context__


RULES = "rules twice = {\n  mul_two: MUL[x, c:CONST] if c.arg == 2.0 -> ADD(x, x)\n}\n"


def test_user_module_missing_and_stale_are_told_apart(tmp_path):
    rules = tmp_path / "twice.rules"
    rules.write_text(RULES)
    with pytest.raises(UserRulesError) as missing:
        load_rules(rules, regenerate=False)
    assert "is missing" in str(missing.value) and "changed since" not in str(missing.value)
    load_rules(rules)  # writes the module
    rules.write_text(RULES.replace("2.0", "4.0").replace("mul_two", "mul_four"))
    with pytest.raises(UserRulesError) as stale:
        load_rules(rules, regenerate=False)
    assert "is stale" in str(stale.value) and "changed since" in str(stale.value)
    assert module_path(rules).is_file()


def test_viz_passes_arguments_to_the_script(tmp_path, monkeypatch):
    seen = tmp_path / "argv.txt"
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys\nimport numpy as np\nfrom rulegrad import Tensor\n"
        f"open({str(seen)!r}, 'w').write(repr(sys.argv[1:]))\n"
        "(Tensor(np.ones(4, dtype=np.float32)) * float(sys.argv[1])).numpy()\n")
    monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
    out = tmp_path / "page.html"
    assert main(["viz", "-o", str(out), str(script), "2", "--flag", "-o", "x"]) == 0
    assert seen.read_text() == repr(["2", "--flag", "-o", "x"])
    assert out.is_file()


def test_viz_refuses_a_script_with_an_example(capsys):
    # the first word after the options is the script: with --example too, that is refused
    assert main(["viz", "--example", "mlp", "extra"]) == 2
    assert "one of them" in capsys.readouterr().err


def test_package_module_missing_stale_and_source_gone_are_told_apart(tmp_path, monkeypatch):
    import rulegrad.rules as rules
    from rulegrad.rules import MatcherLoadError, matcher

    with pytest.raises(MatcherLoadError, match="no generated matchers"):
        matcher("no_such_file", "x")
    fake = tmp_path / "rules"
    fake.mkdir()
    monkeypatch.setattr(rules, "RULES_DIR", fake)
    monkeypatch.setattr(rules, "_cache", {})
    with pytest.raises(MatcherLoadError, match="stale: it was generated from rules/symbolic"
                       r"\.rules, which is gone"):
        matcher("symbolic", "sym")
    (fake / "symbolic.rules").write_text("rules sym = {\n}\n")
    with pytest.raises(MatcherLoadError, match=r"stale \(rules/symbolic\.rules changed"):
        matcher("symbolic", "sym")
