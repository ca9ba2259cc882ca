"""The TextMate grammar for `.rules` (editors/vscode): valid JSON whose patterns compile, whose
keywords are the language's (read from dsl/grammar.lark), and which scopes a real rule line as
a reader would: label, op, capture, comment with its `check:` annotation."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VSCODE = ROOT / "editors" / "vscode"


def _grammar() -> dict:
    return json.loads((VSCODE / "syntaxes" / "rules.tmLanguage.json").read_text())


def _patterns(node: object) -> list[str]:
    out: list[str] = []
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            out += [v for k, v in x.items() if k in ("match", "begin", "end")]
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


def _scope(grammar: dict, name: str, line: str) -> list[str]:
    """The texts the repository entry `name` matches on a line (its first capture if any)."""
    entry = grammar["repository"][name]
    found = []
    for p in entry.get("patterns", [entry]):
        for m in re.finditer(p["match"], line):
            found.append(m.group(1) if m.groups() else m.group())
    return found


def test_grammar_is_valid_and_its_patterns_compile():
    g = _grammar()
    assert g["scopeName"] == "source.rulegrad-rules"
    pats = _patterns(g)
    assert len(pats) >= 10
    for p in pats:
        re.compile(p)  # the grammar keeps to what Oniguruma and Python's re read alike
    pkg = json.loads((VSCODE / "package.json").read_text())
    assert pkg["contributes"]["grammars"][0]["path"] == "./syntaxes/rules.tmLanguage.json"
    assert pkg["contributes"]["languages"][0]["extensions"] == [".rules"]


def test_every_keyword_of_the_language_is_highlighted():
    lark = (ROOT / "dsl" / "grammar.lark").read_text()
    keywords = set(re.findall(r'"([a-z]+)"', lark)) - {"inf", "nan"}
    words = " ".join(_patterns(_grammar()))
    missing = {k for k in keywords if not re.search(rf"\b{k}\b", words)}
    assert not missing, missing


def test_a_rule_line_is_scoped_as_a_reader_reads_it():
    g = _grammar()
    line = "  mul_zero: MUL[x:ints, 0] -> 0  # check: structural"
    assert _scope(g, "label", line) == ["mul_zero"]
    assert _scope(g, "capture", line) == ["x"]
    assert "MUL" in _scope(g, "op", line)
    assert _scope(g, "comment", line)[0] == "#"  # the check: annotation's own pattern
    assert _scope(g, "declaration", "rules sym = symbolic_simple + {") == ["rules"]
