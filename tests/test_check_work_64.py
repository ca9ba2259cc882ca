"""`rulegrad check`'s work per example (suite64): what depends only on the rule is worked out
once per rule, not at every example drawn.

A guarded rule's check draws a few hundred instances and runs the rule's interpreted matcher
on each. Three facts of the rule were worked out again at each: its guard's steps (`Rule.
guard_steps`, a walk of every term for the names it reads), the values beside its numbers
(`instances.guard_values`), and the ops each node pattern can match (`match_ir.root_ops`,
asked at every node tried). Together with numpy's `iinfo` behind `DType.min`/`max` they were a
third of test_checker_59's check. Counted here (calls, never seconds) against the examples the
check ran, and the verdicts are numpy's (the sound rule passes, its wrong twin is refuted).
"""

from __future__ import annotations

import numpy as np
import pytest
from planted_verdicts import assert_passes, assert_refuted, planted_verdicts
from test_checker_59 import HELPERS59, SOUND, USE59, WRONG

from rulegrad.dsl import ast as A
from rulegrad.generator import instances, interp

# an int32 fold guarded by a relation of its three constants and a number, `a.arg + b.arg ==
# c.arg and c.arg > 100` (test_checker_59's i_half: the check's example path and its sweep)
RULES = {"sound": SOUND["i_half"], "wrong": WRONG["i_half"]}


def _counted(monkeypatch, owner, name: str) -> list[int]:
    calls = [0]
    real = getattr(owner, name)

    def counted(*args, **kw):
        calls[0] += 1
        return real(*args, **kw)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.mark.parametrize("name", ["sound", "wrong"])
def test_a_rules_facts_are_worked_out_once_not_per_example(tmp_path, monkeypatch, name):
    steps = _counted(monkeypatch, A.Rule, "_steps")
    near = _counted(monkeypatch, instances, "guard_values")
    roots = _counted(monkeypatch, interp, "root_ops")
    limits = _counted(monkeypatch, np, "iinfo")  # (DType.min and max: once per dtype)
    rep = planted_verdicts(tmp_path, HELPERS59, USE59, {name: RULES[name]}, 0)[name]
    if name == "sound":
        assert_passes(rep)  # (at least 50 examples)
    else:
        assert_refuted(rep)
    # per rule object, per dtype, per node pattern: a handful, whatever the examples
    assert steps[0] <= 8, steps[0]
    assert near[0] <= 8, near[0]
    assert roots[0] <= 16, roots[0]
    assert limits[0] <= 16, limits[0]


def test_a_rules_guard_steps_are_its_own_and_a_copy(tmp_path):
    """The cached steps are the rule's (a rule made from it by `replace`, with another guard,
    has its own), and a caller changing the list it got changes no later answer."""
    from dataclasses import replace

    from planted_verdicts import write_rules

    from rulegrad.generator.soundness import rules_files, rules_to_check, with_imports

    path = write_rules(tmp_path, HELPERS59, USE59, {"r": RULES["sound"]})
    (item,) = [it for cf in with_imports(rules_files([str(path)]))
               for it in rules_to_check(cf, None)]
    rule = item.rule
    first = rule.guard_steps()
    assert [len(conds) for _, _, conds in first] == [2]  # the two `and` terms, no lets
    first.clear()
    assert rule.guard_steps() and rule.guard_lets == 0
    one_term = replace(rule, guard=rule.guard.values[1])
    assert [conds for _, _, conds in one_term.guard_steps()] == [(rule.guard.values[1],)]
    assert replace(rule, guard=None).guard_steps() == []
