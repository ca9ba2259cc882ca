"""bench/opt_lines.py counts what issue 32's budget names: a fixture tree, counted by hand."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _counter():
    spec = importlib.util.spec_from_file_location("opt_lines", ROOT / "bench" / "opt_lines.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_counts_backends_opt_rules_and_the_modules_they_use(tmp_path):
    counter = _counter()
    (tmp_path / "backends" / "c").mkdir(parents=True)
    (tmp_path / "rules").mkdir()
    (tmp_path / "backends" / "c" / "a.py").write_text("x = 1\n\n   \ny = 2\n")  # 2
    (tmp_path / "backends" / "c" / "k.h").write_text("int f(void);\n")  # 1
    (tmp_path / "backends" / "c" / "notes.md").write_text("not code\n")  # not counted
    (tmp_path / "rules" / "opt.rules").write_text(
        "use .opt_helpers: a, b\nuse .gone: c\n\nrules r = {\n}\n")  # 4
    (tmp_path / "rules" / "opt_helpers.py").write_text("def a(): ...\ndef b(): ...\n")  # 2
    (tmp_path / "rules" / "symbolic_helpers.py").write_text("z = 3\n")  # not used: no
    files = counter.counted_files(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in files) == [
        "backends/c/a.py", "backends/c/k.h", "rules/opt.rules", "rules/opt_helpers.py"]
    assert sum(counter.nonblank(p) for p in files) == 9


def test_check_fails_over_the_budget(monkeypatch, capsys):
    counter = _counter()
    monkeypatch.setattr(counter, "BUDGET", 10)
    assert counter.main(["--check"]) == 1
    assert "over" in capsys.readouterr().out
    monkeypatch.setattr(counter, "BUDGET", 10**9)
    assert counter.main(["--check"]) == 0
