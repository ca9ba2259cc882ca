"""The example path honours z3's assumptions: no counterexample z3 has assumed away.

z3 proves index rules assuming index arithmetic never leaves int64 (C computes index math in
int64, and the scheduler's stays far inside it). An example whose index values overflow is
outside that assumption: it used to refute sound rules that z3 could not finish proving (the
examples ran after z3's `unknown`) or had proved (the bounds examples). The oracle for the
exact value of an index node is Python's unbounded integers.
"""

from __future__ import annotations

from pathlib import Path

from rulegrad.generator.examples import index_overflows
from rulegrad.generator.instances import Instance
from rulegrad.generator.soundness import check_paths
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.uop import UOp

RULES = """rules r = {
  # x*x * y*y is never negative, unless it overflows int64 (which z3 assumes it does not)
  square:     CMPLT(MUL(MUL(x:index, x), MUL(y, y)), 0) -> False
  # the same shape, but wrong at x == 0 or y == 0: still refuted
  square_bad: CMPLT(MUL(MUL(x:index, x), MUL(y, y)), 1) -> False
}
"""


def test_exact_index_values_decide_overflow():
    big, small = UOp.const(dtypes.index, 1 << 40), UOp.const(dtypes.index, 1 << 20)
    v = UOp.variable("v", -(1 << 62), 1 << 62)
    assert index_overflows(Instance(big * big), big * big)
    assert not index_overflows(Instance(small * small), small * small)
    # a product that overflows, then comes back into range by division: still outside z3's
    # assumption (it holds for every node, not only the root)
    back = (big * big) // big
    assert index_overflows(Instance(back), back)
    # variables at their drawn values; C's division truncates toward zero
    e = (v * 4) // 3
    assert index_overflows(Instance(e, var_vals={"v": 1 << 62}), e)
    assert not index_overflows(Instance(e, var_vals={"v": -(1 << 60)}), e)
    # sized ints wrap by definition: that is no overflow z3 assumes away
    w = UOp.const(dtypes.int32, 1 << 30) * 4
    assert not index_overflows(Instance(w), w)


def test_a_sound_index_rule_is_not_refuted_by_an_overflowing_example(tmp_path: Path):
    f = tmp_path / "overflow.rules"
    f.write_text(RULES)
    # a small z3 budget: z3 gives up on the products, and the examples decide
    reports = {r.rule.name: r for r in check_paths([str(f)], examples=60, rlimit=2000).rules}
    sound, bad = reports["square"], reports["square_bad"]
    assert sound.verdict == "unknown" and "examples passed" in sound.detail, sound.line()
    assert bad.verdict == "refuted", bad.line()
