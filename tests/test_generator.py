"""`rulegrad gen` and the generated modules: deterministic, stamped, traceable, checkable.

Expected values come from the inputs (the rules file's bytes and lines), never from output the
generator printed before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rulegrad import Ops, UOp, dtypes, graph_rewrite
from rulegrad.generator import compile_file
from rulegrad.generator.cli import package_rules_files, run_gen
from rulegrad.generator.paths import GENERATED_DIR, PACKAGE_RULES_DIR
from rulegrad.rules import MatcherLoadError, matcher
from rulegrad.runtime.rewrite import tracing

SYMBOLIC = PACKAGE_RULES_DIR / "symbolic.rules"


def _import_path(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_output_is_deterministic():
    a = compile_file(SYMBOLIC, GENERATED_DIR)
    b = compile_file(str(SYMBOLIC.relative_to(Path.cwd())) if SYMBOLIC.is_relative_to(Path.cwd())
                     else SYMBOLIC, GENERATED_DIR)
    assert a == b


def test_committed_modules_are_current():
    for path in package_rules_files():
        committed = (GENERATED_DIR / f"{path.stem}.py").read_text()
        assert committed == compile_file(path, GENERATED_DIR), f"run `rulegrad gen` ({path.name})"


def test_header_stamp_and_rule_comments():
    text = compile_file(SYMBOLIC, GENERATED_DIR)
    lines = [line.strip() for line in text.splitlines()]
    assert lines[0] == "# generated from rules/symbolic.rules by `rulegrad gen`; do not edit"
    assert lines[1] == f"# source sha256: {hashlib.sha256(SYMBOLIC.read_bytes()).hexdigest()}"
    assert "/work/" not in text and str(Path.home()) not in text  # no absolute paths
    source = SYMBOLIC.read_text().splitlines()
    # every named rule of the file: its comment with the line it is on, then its source text
    for lineno, line in enumerate(source, 1):
        m = re.match(r"\s*([a-z_][a-z0-9_]*):\s", line)
        if not m or line.lstrip().startswith("#"):
            continue
        header = f"# rule {m.group(1)} at rules/symbolic.rules:{lineno}"
        assert header in lines, header
        at = lines.index(header)
        assert lines[at + 1] == "#   " + " ".join(line.split("#")[0].split()), lines[at + 1]


def test_check_names_stale_and_missing_modules(tmp_path, capsys):
    rules = tmp_path / "mini.rules"
    rules.write_text("rules mini = {\n  add_zero: ADD[x:ints, 0] -> x\n}\n")
    out = tmp_path / "out"
    assert run_gen([str(rules)], out=str(out), check=True) == 1  # missing
    assert "mini.py is missing" in capsys.readouterr().err
    assert run_gen([str(rules)], out=str(out), check=False) == 0
    assert "wrote" in capsys.readouterr().out
    assert run_gen([str(rules)], out=str(out), check=True) == 0
    rules.write_text("rules mini = {\n  mul_one: MUL[x, 1] -> x\n}\n")
    before = (out / "mini.py").read_bytes()
    assert run_gen([str(rules)], out=str(out), check=True) == 1
    err = capsys.readouterr().err
    assert "mini.py is stale" in err and "rulegrad gen" in err
    assert (out / "mini.py").read_bytes() == before  # --check writes nothing


def test_out_dir_with_helpers_beside_the_rules(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "helpers.py").write_text("def triple(x):\n    return x * 3\n")
    (src / "tri.rules").write_text(
        "use .helpers: triple\n"
        "rules tri = {\n"
        "  # x + x + x -> x * 3\n"
        "  add3: ADD[ADD[x, x], x] -> triple(x)\n"
        "  dbl:  ADD(x, x) if x.op is Ops.DEFINE_VAR -> MUL(x, x.const_like(2))\n"
        "}\n")
    out = tmp_path / "gen"
    assert run_gen([str(src / "tri.rules")], out=str(out), check=False) == 0
    text = (out / "tri.py").read_text()
    assert str(tmp_path) not in text and "'../src/helpers.py'" in text
    first = "# generated from ../src/tri.rules by `rulegrad gen`; do not edit"
    assert text.splitlines()[0] == first
    mod = _import_path(out / "tri.py", "tri_generated")
    r = UOp.range(5, 0)
    assert graph_rewrite((r + r) + r, mod.tri) is r * 3
    v = UOp.variable("v", 0, 9)
    assert graph_rewrite(v + v, mod.tri) is UOp(Ops.MUL, dtypes.index, (v, v.const_like(2)))
    assert graph_rewrite(r + r, mod.tri) is r + r
    with tracing() as t:
        graph_rewrite(r + (r + r), mod.tri)
    assert [(f.rule.name, f.rule.line) for f in t.firings] == [("add3", 4)]


def test_broken_rules_file_prints_diagnostics_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.rules"
    bad.write_text("rules bad = {\n  oops: ADDD[x, 0] -> x\n  ok: MUL[x, 1] -> y\n}\n")
    assert run_gen([str(bad)], out=str(tmp_path), check=False) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and "ADDD" in err and "Traceback" not in err
    assert not (tmp_path / "bad.py").exists()


def test_cli_entry_point(tmp_path):
    bad = tmp_path / "bad.rules"
    bad.write_text("rules bad = {\n  ADD[x, 0 -> x\n}\n")
    p = subprocess.run([sys.executable, "-m", "rulegrad", "gen", str(bad), "--out",
                        str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 2 and "error" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "rulegrad", "gen", "--check"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_loader_errors(tmp_path, monkeypatch):
    import rulegrad.rules as rules

    with pytest.raises(MatcherLoadError, match="rulegrad gen"):
        matcher("no_such_file", "x")
    with pytest.raises(MatcherLoadError, match="no rule set"):
        matcher("symbolic", "no_such_set")
    # a rules file edited after generation: the committed module is stale
    fake = tmp_path / "rules"
    fake.mkdir()
    (fake / "symbolic.rules").write_text(SYMBOLIC.read_text() + "\n# edited\n")
    monkeypatch.setattr(rules, "RULES_DIR", fake)
    monkeypatch.setattr(rules, "_cache", {})
    with pytest.raises(MatcherLoadError, match="stale.*rulegrad gen"):
        matcher("symbolic", "sym")


def test_interp_mode_and_composition(monkeypatch):
    import rulegrad.rules as rules

    r = UOp.range(4, 0)
    expr = r * 1 + 0
    gen = matcher("symbolic", "symbolic_simple")
    monkeypatch.setenv("RULEGRAD_MATCHER", "interp")
    monkeypatch.setattr(rules, "_cache", {})
    interp = matcher("symbolic", "symbolic_simple")
    assert type(interp._table[Ops.ADD]).__name__ == "function" and interp is not gen
    assert graph_rewrite(expr, interp) is graph_rewrite(expr, gen) is r
    both = matcher("movement", "double_reshape") + gen
    assert both.rules[0].name == "reshape_reshape" and len(both.rules) == 1 + len(gen.rules)
    hit, info = both.rewrite_with_rule(r * 1)
    assert hit is r and info.name == "mul_one"


def test_match_stats_table_at_exit():
    code = ("from rulegrad import UOp, graph_rewrite\n"
            "from rulegrad.rules import matcher\n"
            "r = UOp.range(4, 0)\n"
            "graph_rewrite((r * 1 + 0) % 4, matcher('symbolic', 'sym'))\n")
    env = {**os.environ, "RULEGRAD_MATCH_STATS": "1", "COLUMNS": "200"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    for word in ("match stats: sym", "mul_one", "add_zero", "mod_in_range", "attempts"):
        assert word in p.stderr, p.stderr
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**env, "RULEGRAD_MATCH_STATS": "0"})
    assert p.returncode == 0 and "match stats" not in p.stderr


# a file or folder name may hold any text: quotes that close a docstring, line breaks; the
# brief's own example, with a relative marker (`touch pwned` in the test's folder)
HOSTILE = 'y""" ; __import__("os").system("touch pwned") ; """.rules'
HOSTILE_DIR = "d\n__import__('os').system('touch pwned')\n#\u2028\r"


def test_hostile_file_names_reach_no_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = tmp_path / HOSTILE_DIR
    src.mkdir()
    # a helper module's name is an identifier (the grammar says so), but its file is found by
    # a path relative to the generated module, printed into the code
    (src / "h.py").write_text("def twice(x):\n    return x * 2\n")
    rules = src / HOSTILE
    rules.write_text("use .h: twice\n"
                     "rules hostile = {\n"
                     "  dbl: ADD(x, x) if x.op is Ops.DEFINE_VAR -> twice(x)  # \"\"\" '''\n"
                     "}\n")
    out = tmp_path / "gen"
    assert run_gen([str(rules)], out=str(out), check=False) == 0
    (module,) = out.glob("*.py")
    text = module.read_text()
    compile(text, str(module), "exec")  # valid Python as written
    mod = _import_path(module, "hostile_generated")
    assert not (tmp_path / "pwned").exists()  # importing ran nothing of the names
    assert mod.SOURCE == os.path.relpath(rules, out)  # the name survives, as a string
    v = UOp.variable("v", 0, 9)
    assert graph_rewrite(v + v, mod.hostile) is v * 2
    for line in text.splitlines():  # no raw line break of any kind inside a line
        assert "\r" not in line and "\u2028" not in line


def test_helper_calls_are_checked_against_signatures_at_gen(tmp_path, capsys):
    (tmp_path / "h.py").write_text("def twice(x, *, scale=2):\n    return x * scale\n")
    bad = tmp_path / "calls.rules"
    lines = ["use .h: twice",
             "rules calls = {",
             "  ok:    ADD(x, x) if x.op is Ops.DEFINE_VAR -> twice(x, scale=2)",
             "  arity: MUL(x, x) -> twice(x, x)",
             "  kw:    SUB(x, x) -> twice(x, factor=3)",
             "}"]
    bad.write_text("\n".join(lines) + "\n")
    assert run_gen([str(bad)], out=str(tmp_path / "gen"), check=False) == 2
    err = capsys.readouterr().err
    col4, col5 = lines[3].index("twice") + 1, lines[4].index("twice") + 1
    assert f"{bad}:4:{col4}: error: helper twice" in err and "positional" in err
    assert f"{bad}:5:{col5}: error: helper twice" in err and "factor" in err
    assert ":3:" not in err and "2 errors" in err and "Traceback" not in err
    assert not (tmp_path / "gen" / "calls.py").exists()
