"""Rules marked `# check: structural` have no soundness test of their own (they act on
scheduler-internal nodes or only fill the pass context); `rulegrad check` gives them the
pass-differential verdict of generator/passdiff.py. This test makes the claim checkable: on the
fuzzer's programs plus the few features it does not generate (assign, float16), every
structural rule FIRES (returns a node other than its input; a rule that returns no node must
change its pass's context), and every step it fired in agrees with an independent evaluator.
These are the very verdicts `rulegrad check` prints.

Rules that no program could reach were removed rather than listed here (see the commits that
removed `realize_copy_src`, `unread_child`, `invalid_value` and `assign_no_buffer`)."""

from __future__ import annotations

import pytest

from rulegrad.dsl import load
from rulegrad.generator.passdiff import EXTRA_PROGRAMS, PassDiff, passdiff
from rulegrad.generator.soundness import Checker, _location, package_rules_files, rules_to_check

# (rangeify's index_other, which raises on an INDEX no rule handles, is marked
# `# check: unreachable` instead: tests/test_passdiff.py checks that no program fires it)


@pytest.fixture(scope="module")
def programs() -> PassDiff:
    pd = passdiff()  # the programs `rulegrad check` runs: fuzzer seeds and the extra programs
    assert {p.seed: p.failures for p in pd.programs if p.failures} == {}
    assert {p.seed for p in pd.programs} >= set(EXTRA_PROGRAMS)
    return pd


def structural_items() -> list:
    out = []
    for path in package_rules_files():
        out += [it for it in rules_to_check(load(str(path)), None) if it.structural]
    return out


def test_every_structural_rule_fires_and_agrees(programs):
    pd = programs
    items = structural_items()
    assert len(items) >= 20  # the scheduler's ctx and kernel-level rules are marked
    checker = Checker()
    verdicts = {it.rule.name: pd.verdict(_location(it.rule),
                                         lambda it=it: checker.one_rule_matcher(it))
                for it in items}
    missing = {n: d for n, (v, d) in verdicts.items() if v != "structural"}
    assert not missing, f"structural rules no program fired (or that disagreed): {missing}"
