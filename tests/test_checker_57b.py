"""`rulegrad check`'s examples between a guard's numbers (issue 31, chk57b).

A constant guarded by comparisons was drawn at the guard's numbers and beside them (the
neighbouring floats, the negation, half), and a float leaf at a special value a sixteenth of
the time: a rule wrong only strictly inside a guard's interval, or only there at a subnormal
x, passed 100 examples (`MUL(x:float16, c) if 2 < c < 4 -> (x * (c / 2)) * 2` is wrong at
c = 3 and x = the smallest subnormal: about 1 draw in 800). Now a third of the instances of a
rule written with numbers are edge instances: the CONST the guard reads is a boundary, beside
one or strictly inside an interval (midpoint, an integer inside), and every other float leaf
is a special float (both ends of the subnormals, the smallest normal, max finite, -0.0, NaN,
the infinities). Each wrong rule here passed (or was never run by) the old drawer; each has a
numpy witness; its sound twins stay unrefuted.
"""

# ruff: noqa: E501 (rule texts are kept on one line each, as a user writes them)
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from rulegrad.generator.soundness import check_paths

HELPERS = '''
def half(v):
    """(wrong for the sound-looking rewrite) c / 2, rounded to the dtype by const_like."""
    return v / 2


def off(v):
    """(wrong) a table off by one at the middle of its interval."""
    return v + 1 if v == 105 else v


def ftz(v):
    """(wrong) flushes constants near 2.94e-38 (the middle of its guard's interval) to 0."""
    return 0.0 if 2.9e-38 < v < 3.0e-38 else v


def twice(v):
    return 2.0 * v


def same(v):
    return v
'''

WRONG = """
use .h57b_helpers: half, off, ftz, twice

rules wrong = {
  half_inside:  MUL(x:float16, c:CONST) if c.arg > 2 and c.arg < 4 -> MUL(MUL(x, x.const_like(half(c.arg))), x.const_like(2.0))
  int_inside:   MUL(x:int32, c:CONST) if c.arg > 100 and c.arg < 110 -> MUL(x.const_like(off(c.arg)), x)
  subnormal_lo: MUL(x:float32, c:CONST) if c.arg > 1.1754942e-38 and c.arg < 4.7e-38 -> MUL(x.const_like(ftz(c.arg)), x)
  two_consts:   MUL(MUL(x:float16, c:CONST), d:CONST) if c.arg > 2 and c.arg < 4 and d.arg > 0.25 and d.arg < 1 -> MUL(MUL(x, x.const_like(half(c.arg))), x.const_like(twice(d.arg)))
}
"""

SOUND = """
use .h57b_helpers: same

rules sound = {
  half_inside:  MUL(x:float16, c:CONST) if c.arg > 2 and c.arg < 4 -> MUL(x.const_like(same(c.arg)), x)
  int_inside:   MUL(x:int32, c:CONST) if c.arg > 100 and c.arg < 110 -> MUL(x.const_like(same(c.arg)), x)
  subnormal_lo: MUL(x:float32, c:CONST) if c.arg > 1.1754942e-38 and c.arg < 4.7e-38 -> MUL(x.const_like(same(c.arg)), x)
  two_consts:   MUL(MUL(x:float16, c:CONST), d:CONST) if c.arg > 2 and c.arg < 4 and d.arg > 0.25 and d.arg < 1 -> MUL(x.const_like(same(d.arg)), MUL(x, x.const_like(same(c.arg))))
}
"""


def _check(tmp_path: Path, text: str) -> dict:
    (tmp_path / "h57b_helpers.py").write_text(textwrap.dedent(HELPERS).lstrip("\n"))
    (tmp_path / "r.rules").write_text(textwrap.dedent(text).lstrip("\n"))
    return {r.rule.name: r for r in check_paths([str(tmp_path / "r.rules")]).rules}


def _bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.tobytes() == b.tobytes()


def test_the_wrong_rules_are_wrong_by_numpy():
    """Witnesses computed with numpy alone, inside each guard."""
    f16, f32 = np.float16, np.float32
    with np.errstate(all="ignore"):
        x, c = f16(np.finfo(f16).smallest_subnormal), f16(3.0)
        assert not _bits(np.array(x * c), np.array((x * f16(1.5)) * f16(2.0)))
        xi = np.array([7], np.int32)
        assert not _bits(xi * np.int32(105), xi * np.int32(106))
        y, k = f32(1.0), f32(2.9377e-38)
        assert not _bits(np.array(y * k), np.array(f32(0.0) * y))
        d = f16(0.75)  # (x * 3) * 0.75 is 2.25 units, 2; (x * 1.5) rounds to 2 units, * 1.5 is 3
        assert not _bits(np.array((x * c) * d), np.array((x * f16(1.5)) * f16(1.5)))


@pytest.mark.parametrize("name", ["half_inside", "int_inside", "subnormal_lo", "two_consts"])
def test_a_rule_wrong_only_inside_its_guard_is_refuted_at_the_defaults(tmp_path, name):
    rep = _check(tmp_path, WRONG)[name]
    assert rep.verdict == "refuted", (name, rep.verdict, rep.detail)


def test_their_sound_twins_are_not_refuted(tmp_path):
    reps = _check(tmp_path, SOUND)
    assert len(reps) == 4
    for name, rep in reps.items():
        assert rep.verdict == "passed", (name, rep.verdict, rep.detail)
