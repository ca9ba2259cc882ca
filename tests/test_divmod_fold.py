"""symbolic.rules' divmod_fold (symbolic_helpers.fold_divmod): x // c and x % c of a flattened
index split back into its coordinates, checked against the expression it rewrites at every
point of its ranges (Python's integers, C's division: the same for non-negative x)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from index_math import index_value as _value

from rulegrad import Ops, UOp, dtypes, graph_rewrite
from rulegrad.rules import matcher


def _same_everywhere(before: UOp, after: UOp, ranges: list[UOp]) -> None:
    sizes = [int(r.src[0].arg) for r in ranges]
    for point in itertools.product(*(range(s) for s in sizes)):
        env = dict(zip(ranges, point))
        assert _value(before, env) == _value(after, env), (point, before, after)


def _ops(root: UOp) -> set[Ops]:
    return {n.op for n in root.toposort()}


def test_a_flattened_index_splits_back_into_its_coordinates():
    r0, r1, r2 = UOp.range(3, 0), UOp.range(5, 1), UOp.range(7, 2)
    flat = r0 * 35 + r1 * 7 + r2
    sym = matcher("symbolic", "sym")
    assert graph_rewrite(flat // 7 % 5, sym) is r1
    assert graph_rewrite(flat // 35, sym) is r0
    assert graph_rewrite(flat % 7, sym) is r2
    # a window's offset past the row: (w * 2 + 9) // 8 with w < 3 keeps no division
    w = UOp.range(3, 3)
    off = graph_rewrite((r1 * 16 + w * 2 + 9) // 8, sym)
    assert Ops.IDIV not in _ops(off)
    _same_everywhere((r1 * 16 + w * 2 + 9) // 8, off, [r1, w])


def test_parts_that_can_reach_the_divisor_keep_the_division():
    r0, r1 = UOp.range(4, 0), UOp.range(9, 1)  # r1 up to 8: r1 // 8 is not 0 everywhere
    e = graph_rewrite((r0 * 8 + r1) // 8, matcher("symbolic", "sym"))
    assert Ops.IDIV in _ops(e)
    _same_everywhere((r0 * 8 + r1) // 8, e, [r0, r1])


@settings(max_examples=300, deadline=None)
@given(sizes=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       coeffs=st.lists(st.integers(0, 40), min_size=3, max_size=3),
       const=st.integers(0, 50), divisors=st.lists(st.integers(1, 12), min_size=1, max_size=3),
       mods=st.lists(st.booleans(), min_size=3, max_size=3))
def test_folded_divisions_equal_the_originals_everywhere(sizes, coeffs, const, divisors, mods):
    ranges = [UOp.range(s, i) for i, s in enumerate(sizes)]
    x = UOp.const(dtypes.index, const)
    for r, k in zip(ranges, coeffs):
        x = x + r * k
    for c, mod in zip(divisors, mods):
        x = x % c if mod else x // c
    _same_everywhere(x, graph_rewrite(x, matcher("symbolic", "sym")), ranges)


def test_a_common_factor_of_the_divisor_splits_off_the_small_terms():
    # groupnorm's group over a flattened (channel, pixel) row: 3 channels of 9x9 a group,
    # (r0 * 81 + r1 * 9 + r2) // 243 is r0 // 3 (r1 * 9 + r2 < 81), and % keeps the pixel
    r0, r1, r2 = UOp.range(6, 0), UOp.range(9, 1), UOp.range(9, 2)
    flat = r0 * 81 + r1 * 9 + r2
    sym = matcher("symbolic", "sym")
    group = graph_rewrite(flat // 243, sym)
    assert group is graph_rewrite(r0 // 3, sym)
    _same_everywhere(flat // 243, group, [r0, r1, r2])
    inner = graph_rewrite(flat % 243, sym)
    assert r1 in inner.toposort() and r2 in inner.toposort()
    _same_everywhere(flat % 243, inner, [r0, r1, r2])
    # a constant past the factor goes to the quotient's side: (r0 * 81 + r2 + 170) // 243
    off = r0 * 81 + r2 + 170
    _same_everywhere(off // 243, graph_rewrite(off // 243, sym), [r0, r2])
    _same_everywhere(off % 243, graph_rewrite(off % 243, sym), [r0, r2])
