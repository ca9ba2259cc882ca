"""Mutation test: deliberately unsound variants of real rules are each refuted and named.

tests/soundness/mutations.rules holds, beside sound originals, one variant per kind of mistake
a rule author makes: a wrong constant, a dropped guard, swapped operands of a non-commutative
op (two ways), an off-by-one in an index rule, a wrong reduce identity, a float rule only valid
for ints, a constant folder with Python's floor instead of C's truncation. `rulegrad check`
must refute every one, print its name and `file:line` with a counterexample, and exit 1; the
originals must be proved or pass. loops.rules holds sets that never settle.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rulegrad.generator.soundness import check_paths, run_check

FIXTURES = Path(__file__).resolve().parent / "soundness"
MUTATIONS = FIXTURES / "mutations.rules"
EXAMPLES = 40

UNSOUND = {  # rule -> the method expected to catch it
    "mul_two": "z3",            # wrong constant
    "mod_no_guard": "z3",       # dropped guard
    "sub_zero_comm": "z3",      # swapped operands of SUB ([x, 0] also matches 0 - x)
    "idiv_swapped": "z3",       # swapped operands of IDIV
    "idiv_off_by_one": "z3",    # off-by-one in an index rule
    "max_empty": "examples",    # wrong reduce identity (tensor level: the numpy oracle)
    "mul_zero_float": "z3",     # a float rule only valid for ints
    "fold_floor": "z3",         # floor division where C truncates
}
SOUND = ["mul_one", "mod_in_range", "sub_zero", "idiv_in_range", "sum_empty", "mul_zero",
         "fold_binary"]


def line_of(name: str, path: Path = MUTATIONS) -> int:
    """The line a rule is written on, read from the fixture itself."""
    for i, text in enumerate(path.read_text().splitlines(), 1):
        if re.match(rf"\s*{name}:\s", text):
            return i
    raise AssertionError(f"{name} not in {path}")


@pytest.fixture(scope="module")
def report():
    return check_paths([str(MUTATIONS)], examples=EXAMPLES, seed=0)


@pytest.mark.parametrize("name", sorted(UNSOUND))
def test_unsound_variant_is_refuted(report, name):
    found = {r.rule.name: r for r in report.rules}
    r = found[name]
    assert r.verdict == "refuted", r.line()
    assert r.method == UNSOUND[name]
    assert r.location.endswith(f"mutations.rules:{line_of(name)}")
    assert r.counterexample  # a graph to look at, not just a verdict
    if r.method == "z3":  # z3's model, replayed through the matcher on the numpy oracle
        assert "confirmed by the oracle" in r.counterexample, r.counterexample


@pytest.mark.parametrize("name", SOUND)
def test_sound_original_is_not(report, name):
    r = {r.rule.name: r for r in report.rules}[name]
    assert r.verdict in ("proved", "passed"), f"{r.line()}\n{r.counterexample}"


def test_output_names_each_refuted_rule_with_its_location(capsys):
    assert run_check([str(MUTATIONS)], examples=EXAMPLES) == 1
    out = capsys.readouterr().out
    for name in UNSOUND:
        loc = f"mutations.rules:{line_of(name)}"
        assert re.search(rf"^{name}\s+\S*{re.escape(loc)}\s+\w+\s+refuted", out, re.M), name
        assert f"counterexample for {name} at " in out
    assert f"refuted {len(UNSOUND)}" in out


def test_counterexamples_show_the_failure():
    rep = check_paths([str(MUTATIONS)], examples=EXAMPLES, rule="mul_zero_float")
    # NaN * 0 or inf * 0 is NaN, and -1 * 0 is -0.0: the folded +0.0 is neither
    ce = rep.rules[0].counterexample
    assert "nan" in ce or "left side = -0.0, right side = 0.0" in ce, ce
    rep = check_paths([str(MUTATIONS)], examples=EXAMPLES, rule="max_empty")
    ce = rep.rules[0].counterexample
    assert "REDUCE_AXIS" in ce and "Ops.MAX" in ce and "the values differ" in ce


def test_loops_are_reported_with_both_locations(capsys):
    loops = FIXTURES / "loops.rules"
    assert run_check([str(loops)], examples=10) == 1
    out = capsys.readouterr().out
    swap, d2a, a2d = (f"loops.rules:{line_of(n, loops)}" for n in
                      ("add_swap", "double_to_add", "add_to_double"))
    assert re.search(rf"add_swap at \S*{swap} rewrites its own output: LOOP", out)
    assert re.search(rf"double_to_add at \S*{d2a} and add_to_double at \S*{a2d} .*LOOP", out)
    assert "loops: 2 confirmed" in out
