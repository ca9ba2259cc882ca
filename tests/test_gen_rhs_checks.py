"""`rulegrad gen` refuses a right-hand side that would crash or build a malformed node when the
rule fires (issue 31 item 11's class): an index past the sources the pattern and the IR spec
fix, a `replace` that gives an op a count of sources it does not take, a constant expression
that raises, a tuple in a rewrite set. Each row is a bad rule file: gen exits non-zero and
names `file:line:col` and the problem; the same rule written right generates."""

from __future__ import annotations

import pytest

from rulegrad.cli import main

# (a rule of a rewrite set, the column of the error on its line, the message's start)
BAD = [
    ("NEG(x) as n -> n.src[99]", 16, "index 99 is out of range for a node of 1 source"),
    ("ADD(x, y) as a -> a.src[2]", 19, "index 2 is out of range for a node of 2 sources"),
    ("EXP2(c:CONST) -> c.src[0]", 18, "index 0 is out of range for a node of 0 sources"),
    ("MUL(x, y) as m -> m.replace(src=(x,))", 19,
     "x.replace(...) makes a node of 1 source whose op allows no such count: MUL takes 2"),
    ("SQRT(x) as s -> s.replace(op=Ops.WHERE)", 17,
     "x.replace(...) makes a node of 1 source whose op allows no such count: WHERE takes 3"),
    ("RECIPROCAL(x) -> x.const_like(1/0)", 31,
     "evaluating this constant expression raises ZeroDivisionError"),
    ("LOG2(x) -> x * (1.0 % 0)", 17, "evaluating this constant expression raises "
     "ZeroDivisionError"),
    ("SIN(x) -> x.const_like(float('nan') + int('x'))", 39,
     "evaluating this constant expression raises ValueError"),
    ("CMPLT(x, y) -> (x, y)", 16, "the right-hand side is a tuple, which cannot be a node"),
]
GOOD = ["NEG(x) as n -> n.src[0]", "ADD(x, y) as a -> a.src[-2]",
        "MUL(x, y) as m -> m.replace(src=(y, x))", "SQRT(x) as s -> s.replace(op=Ops.EXP2)",
        "RECIPROCAL(x) -> x.const_like(1/2)", "CMPLT(x, y) -> x if x is y else None"]


def _gen(tmp_path, rule: str) -> tuple[int, str]:
    path = tmp_path / "user.rules"
    path.write_text(f"rules user = {{\n  r: {rule}\n}}\n")
    return main(["gen", str(path), "--out", str(tmp_path / "out")]), str(path)


@pytest.mark.parametrize("rule,col,message", BAD, ids=[b[0] for b in BAD])
def test_gen_refuses_the_rule_at_its_place(tmp_path, capsys, rule, col, message):
    code, path = _gen(tmp_path, rule)
    out = capsys.readouterr()
    text = out.out + out.err
    assert code != 0, text
    col += len("  r: ")
    assert f"{path}:2:{col}: error: {message}" in text, text
    assert not (tmp_path / "out" / "user.py").exists()


@pytest.mark.parametrize("rule", GOOD)
def test_gen_takes_the_rule_written_right(tmp_path, capsys, rule):
    code, _ = _gen(tmp_path, rule)
    assert code == 0, capsys.readouterr()
    assert (tmp_path / "out" / "user.py").is_file()


def test_shipped_rules_still_generate_identically(capsys):
    assert main(["gen", "--check"]) == 0, capsys.readouterr()
