"""`rulegrad fmt`: the formatter keeps every comment and every line, means the same, and is
idempotent, on every rules file in the repository; a hand-written layout sits beside its input.

Oracles: the parser (the tree before and after, spans aside), the comments and line count read
straight from the text, and a layout written out by hand."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from rulegrad.cli import main
from rulegrad.dsl.ast import strip_spans
from rulegrad.dsl.errors import RulesError
from rulegrad.dsl.format import format_text
from rulegrad.dsl.parser import parse, parse_collect

ROOT = Path(__file__).resolve().parents[1]
# the project's own rules files and the tests' fixtures (not a virtualenv's copies)
ALL = sorted([*(ROOT / "rules").glob("*.rules"), *(ROOT / "tests").rglob("*.rules")])
# the files that parse: the tests' fail/ fixtures include syntax errors on purpose, and only they
# are parsed to choose (every other file must parse; the package's rules files, rangeify's 56 KB
# among them, took a tenth of each xdist worker's collection to parse here)
FAIL = ROOT / "tests" / "dsl" / "fail"
PARSING = [p for p in ALL
           if not p.is_relative_to(FAIL) or parse_collect(p.read_text(), str(p))[0] is not None]
_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")


def _comments(text: str) -> list[str]:
    """Every comment, in order: what follows the first '#' outside a string on each line."""
    out = []
    for line in text.splitlines():
        code = _STRING.sub(lambda m: "x" * len(m.group()), line)
        if "#" in code:
            out.append(line[code.index("#"):].rstrip())
    return out


def test_every_repository_rules_file_is_seen():
    assert len(PARSING) >= 30 and any(p.name == "rangeify.rules" for p in PARSING)


# a file already laid out (every file of rules/) formats to itself, so the checks below would
# format and parse the same text twice (seconds for rangeify.rules): each text once is enough
@functools.cache
def _formatted(text: str, path: str) -> str:
    return format_text(text, path)


@functools.cache
def _tree(text: str, path: str) -> object:
    return strip_spans(parse(text, path))


@pytest.mark.parametrize("path", PARSING, ids=lambda p: str(p.relative_to(ROOT)))
def test_fmt_keeps_comments_lines_and_meaning_and_is_idempotent(path):
    text = path.read_text()
    out = _formatted(text, str(path))
    assert _comments(out) == _comments(text)
    assert len(out.splitlines()) == len(text.rstrip("\n").splitlines())
    assert _tree(out, str(path)) == _tree(text, str(path))
    assert _formatted(out, str(path)) == out
    assert all(line == line.rstrip() for line in out.splitlines())


def test_the_package_rules_files_are_laid_out_as_fmt_lays_them_out(capsys):
    # the project keeps its own rules files as `rulegrad fmt` writes them, as a Python project
    # keeps to its formatter: a rule added by hand out of column fails here, not in review
    assert main(["fmt", "--check", str(ROOT / "rules")]) == 0, capsys.readouterr().err


MESSY = """\
use .helpers:   fold_alu   # helpers
rules   sym = {
      # identities
   add_zero:  ADD[x:ints ,0]->x  # ints only
   mul_one: MUL[ x, 1 ]   -> x
   mul_zero:   MUL[x:ints, 0] -> 0   # check: structural
      fold:  Binary(a:CONST,b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)

 neg_neg:NEG(NEG(x)) -> x
}
context C {
  seen:   set[UOp] = set()
  order: dict[UOp, int] = dict()
}
pipeline p {
  pass first = sym   bottom_up   ctx=C
  # the second
    pass second_one=sym top_down
  pass last = sym
}
"""
TIDY = """\
use .helpers: fold_alu  # helpers
rules sym = {
  # identities
  add_zero: ADD[x:ints, 0]                -> x  # ints only
  mul_one:  MUL[x, 1]                     -> x
  mul_zero: MUL[x:ints, 0]                -> 0  # check: structural
  fold:     Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)

  neg_neg:NEG(NEG(x)) -> x
}
context C {
  seen:  set[UOp] = set()
  order: dict[UOp, int] = dict()
}
pipeline p {
  pass first      = sym bottom_up ctx=C
  # the second
  pass second_one = sym top_down
  pass last       = sym
}
"""


def test_fmt_lays_out_a_messy_file_as_written_by_hand():
    # `neg_neg:NEG(...)`, no blank after the colon, is a capture, not a label: it stays one
    assert format_text(MESSY, "m.rules") == TIDY


def test_fmt_refuses_a_file_that_does_not_parse():
    with pytest.raises(RulesError, match="expected an expression after '->'"):
        format_text("rules a = {\n  ADD(x, 0) ->\n}\n", "bad.rules")


def test_fmt_command_checks_rewrites_and_reports(tmp_path, capsys):
    messy = tmp_path / "m.rules"
    messy.write_text(MESSY)
    bad = tmp_path / "sub" / "bad.rules"
    bad.parent.mkdir()
    bad.write_text("rules a = {\n  ADD(x, 0) ->\n}\n")
    assert main(["fmt", "--check", str(messy)]) == 1
    assert "m.rules would be reformatted" in capsys.readouterr().err
    assert messy.read_text() != format_text(messy.read_text())  # --check wrote nothing
    assert main(["fmt", str(messy)]) == 0
    assert main(["fmt", "--check", str(messy)]) == 0
    before = bad.read_text()
    assert main(["fmt", str(tmp_path)]) == 2  # a folder: every .rules file in it
    assert "bad.rules:2:" in capsys.readouterr().err and bad.read_text() == before
