"""Review of match65 (the generated matchers' fast path: counting lines as comments switched
on in place, an if's tests reordered, an inner ALU node unpacked without len())."""

from __future__ import annotations

import linecache

import pytest

from rulegrad import Ops, UOp, dtypes


def _rules(path, *lines: str) -> None:
    path.write_text("rules mine = {\n" + "".join(f"  {x}\n" for x in lines) + "}\n")


def test_an_earlier_users_module_counts_after_another_is_generated_at_its_path(tmp_path):
    # a rules file loaded, edited and loaded again: its first module is still a user's matcher
    # (held by a caller), and switching its counting on must count from the text it ran from,
    # not from the second module's text that linecache and the file now hold (match65 raised
    # "needs a new process"; before it, counting the first worked); the same after a tool
    # empties linecache and for a module loaded a third time from the first text
    from rulegrad.generator.user import load_rules

    rules = tmp_path / "mine.rules"
    _rules(rules, "add_zero: ADD(x:ints, 0) -> x")
    first = load_rules(rules, module_dir=tmp_path)["mine"]
    _rules(rules, "mul_one: MUL(x:ints, 1) -> x", "add_zero: ADD(x:ints, 0) -> x")
    second = load_rules(rules, module_dir=tmp_path)["mine"]
    linecache.clearcache()
    r = UOp.range(4, 0)
    node = r + UOp.const(dtypes.index, 0)
    for m, rules_of in ((first, ["add_zero"]), (second, ["mul_one", "add_zero"])):
        m.enable_stats()
        assert m.rewrite_with_rule(node)[0] is r
        st = m.stats
        assert [x.name for x in st.rules] == rules_of
        assert st.attempts[-1] == 1 and st.matches[-1] == 1


def _malformed() -> dict[str, object]:
    r, s = UOp.range(4, 0), UOp.range(5, 1)
    return {
        "UOp(NEG, 2 sources)": lambda: UOp(Ops.NEG, dtypes.index, (r, s)),
        "UOp(IDIV, 3 sources)": lambda: UOp(Ops.IDIV, dtypes.index, (r, s, r)),
        "UOp(WHERE, 2 sources)": lambda: UOp(Ops.WHERE, dtypes.index, (r.alu(Ops.CMPLT, s), r)),
        "x.alu(ADD) (no other)": lambda: r.alu(Ops.ADD),
        "x.alu(NEG, y)": lambda: r.alu(Ops.NEG, s),
        "ADD.replace(op=NEG)": lambda: (r + s).replace(op=Ops.NEG),
        "MUL.replace(src=3)": lambda: (r * s).replace(src=(r, s, s)),
    }


@pytest.mark.parametrize("name", list(_malformed()))
def test_an_alu_node_of_a_count_its_op_does_not_take_is_refused_where_it_is_built(name):
    # generated matchers unpack an inner ALU node's sources by its op's ARITY with no len():
    # a node of another count met there raised ValueError from the matcher (ADD(IDIV(r, 2, s)
    # * 2, r % 2) under sym: "too many values to unpack") or matched wrongly (NEG(NEG(r, s))
    # under sym's neg_neg gave r), where the old count test matched nothing. Such a node is
    # malformed (the IR spec, the printer and the oracle read an op's sources by its arity):
    # it is refused when it is made, with the op and the counts
    with pytest.raises(ValueError, match=r"takes \d sources?.*not \d"):
        _malformed()[name]()


def test_a_user_rule_that_makes_an_alu_node_of_another_count_is_refused_when_it_fires(tmp_path):
    # the rules checker cannot see this one's count (x is any node): the node is refused when
    # the rule makes it, not handed on to the next matcher as NEG(r, s)
    from rulegrad.generator.user import load_rules
    from rulegrad.rules import matcher

    rules = tmp_path / "mine.rules"
    _rules(rules, "neg_it: MUL(x, 1) -> x.replace(op=Ops.NEG)")
    mine = load_rules(rules, module_dir=tmp_path)["mine"]
    r, s = UOp.range(4, 0), UOp.range(5, 1)
    assert mine.rewrite(r.alu(Ops.SQRT) * UOp.const(dtypes.index, 1)) is -r  # (x unary: fine)
    with pytest.raises(ValueError, match="NEG takes 1 source"):
        mine.rewrite((r + s) * UOp.const(dtypes.index, 1))
    sym = matcher("symbolic", "sym")
    assert sym.rewrite(UOp(Ops.NEG, dtypes.index, (UOp(Ops.NEG, dtypes.index, (r,)),))) is r
