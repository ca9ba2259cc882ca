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
