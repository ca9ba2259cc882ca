"""Match statistics (`RULEGRAD_MATCH_STATS=1`) count every attempt and every firing exactly.

An attempt is a rule whose structural test passed (its guard then ran); a match is an attempt
whose rule fired. The expected counts are derived by hand from rules/symbolic.rules (rule order,
first match wins) and the bounds of a RANGE of 4 (0..3), one rewrite per node; the generated
code counts in place, so a counter left out of a leaf, or counted twice, changes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROGRAM = r"""
import json, sys
from rulegrad import Ops, UOp, dtypes
from rulegrad.rules import matcher

m = matcher("symbolic", "sym")
r, s = UOp.range(4, 0), UOp.range(5, 1)
def c(v): return UOp.const(dtypes.index, v)
cases = {
    "add_zero": r + c(0),
    "mul_one": r * c(1),
    "idiv_tried": r // c(2),
    "mod_folds": r % c(8),
    "cmp_decided": UOp(Ops.CMPLT, dtypes.bool, (r, c(10))),
    "cmp_open": UOp(Ops.CMPLT, dtypes.bool, (r, c(2))),
    "no_rule": r + s,
    "recombine": (r // c(2)) * c(2) + r % c(2),
}
out = {}
if m.table is not None:  # (statistics off at import): does the code read the counters?
    idiv = m.table[Ops.IDIV]
    off = "_sym_st" in idiv.__code__.co_names
    m.enable_stats()
    out["reads counters"] = [off, "_sym_st" in idiv.__code__.co_names]
for name, node in cases.items():
    m.enable_stats()
    before = m.stats
    a0, m0 = before.attempts, before.matches
    (m.rewrite if sys.argv[1] == "import" else m.rewrite_with_rule)(node)
    st = m.stats
    out[name] = {rule.name: [a - x, b - y]
                 for rule, a, x, b, y in zip(st.rules, st.attempts, a0, st.matches, m0)
                 if a - x or b - y}
print(json.dumps(out))
"""

# per case: rule -> [attempts, matches]
EXPECTED = {
    "add_zero": {"add_zero": [1, 1]},  # ADD[x:ints, 0], x a RANGE: fires
    "mul_one": {"mul_one": [1, 1]},
    # r // 2: divmod_fold is tried (r's part below 2 reaches 3: no fold), then idiv_in_range
    # (3 < 2 is false): two attempts, no firing
    "idiv_tried": {"divmod_fold": [1, 0], "idiv_in_range": [1, 0]},
    # r % 8 with r <= 3: divmod_fold folds it to r, before mod_in_range is reached
    "mod_folds": {"divmod_fold": [1, 1]},
    "cmp_decided": {"cmp_bounds": [1, 1]},  # r < 10 always: vmin == vmax
    "cmp_open": {"cmp_bounds": [1, 0]},  # r < 2 either way
    "no_rule": {},  # ADD of two RANGEs: no rule's structure
    "recombine": {"divmod_recombine": [1, 1]},
}


@pytest.mark.parametrize("from_import", [True, False])
def test_match_stats_count_every_attempt_and_firing(from_import):
    # from_import: counted from the import on (the environment), else switched on at run time
    # by `enable_stats` (a trace's way, which counts matches in `rewrite_with_rule`): the
    # generated counting lines are comments until then, and both ways must put them in force
    # in every function of the set
    env = {k: v for k, v in os.environ.items() if k != "RULEGRAD_MATCH_STATS"}
    if from_import:
        env["RULEGRAD_MATCH_STATS"] = "1"
    p = subprocess.run([sys.executable, "-c", PROGRAM, "import" if from_import else "run"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    if not from_import:  # no work for the counters until they are on, then in place
        assert got.pop("reads counters") == [False, True]
    assert got == EXPECTED


def test_a_users_module_written_again_at_its_path_counts_from_its_new_text(tmp_path):
    # an edited rules file's module is generated again at the same path and run from its new
    # text; switching its counting on takes the counting code from that text, not from the
    # first module's (whose functions were switched before): its attempts are its own rules'
    from rulegrad import UOp, dtypes
    from rulegrad.generator.user import load_rules

    rules = tmp_path / "mine.rules"
    rules.write_text("rules mine = {\n  add_zero: ADD(x:ints, 0) -> x\n}\n")
    first = load_rules(rules, module_dir=tmp_path)["mine"]
    first.enable_stats()
    rules.write_text("rules mine = {\n  mul_one: MUL(x:ints, 1) -> x\n"
                     "  add_zero: ADD(x:ints, 0) -> x\n}\n")
    second = load_rules(rules, module_dir=tmp_path)["mine"]
    assert second is not first
    second.enable_stats()
    r = UOp.range(4, 0)
    for node in (r + UOp.const(dtypes.index, 0), r * UOp.const(dtypes.index, 1), r + r):
        second.rewrite_with_rule(node)
    st = second.stats
    assert [r.name for r in st.rules] == ["mul_one", "add_zero"]
    assert st.attempts == [1, 1] and st.matches == [1, 1]
