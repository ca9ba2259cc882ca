"""adv42's hunt (issue 31): classes of wrong answer the earlier hunts did not reach.

Rules that are wrong only where a conversion to a narrower float rounds: `rulegrad check`'s
example draws were small integers, the dtype's ends and uniform values (random bits for
floats), and none of them lands on a rounding tie (a uniform int64 does about once in 2^29), nor
are two of them one apart. So a rule z3 cannot decide, or one written with a helper (examples
only), was `passed` and `add_rules` ran it. The oracle for each refutation is numpy's own
conversion.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

import rulegrad
from rulegrad import Tensor
from rulegrad.generator.soundness import check_paths
from rulegrad.generator.user import UnsoundRulesError

# int64 -> float64 -> float32 rounds twice: 2^62 + 2^38 + 1 is just past a float32 tie, rounds
# up once, but to float64 it is the tie itself, which then rounds to the even float below
ROUNDS_TWICE = """
use .paths: via_float64
rules casts = {
  twice:    CAST(x:int64):float32 as c  -> via_float64(x, c)
}
"""
# int32 is exact in float64: the same conversion rounds once
ROUNDS_ONCE = """
use .paths: via_float64
rules casts = {
  once:     CAST(x:int32):float32 as c  -> via_float64(x, c)
}
"""
# x < y of int64s as float64s is not x < y: 2^60 and 2^60 + 1 are one float64
COMPARED = """
use .paths: uncast
rules compare = {
  uncast:   CMPLT(CAST(x:int64):float64, CAST(y:int64):float64) as c -> uncast(c, x, y)
}
"""
# float64 -> float32 -> float16 rounds twice too (1 + 2^-11 + 2^-52 is past a float16 tie, and
# to float32 it is the tie); float32 -> float64 -> float16 rounds once (float64 holds float32)
FLOAT_TWICE = """
use .paths: via_float32, via_float64
rules floats = {
  twice:    CAST(x:float64):float16 as c  -> via_float32(x, c)
  once:     CAST(x:float32):float16 as c  -> via_float64(x, c)
}
"""
PATHS = """
from rulegrad.runtime.dtype import dtypes


def via_float64(x, c):
    return x.cast(dtypes.float64).cast(c.dtype)


def via_float32(x, c):
    return x.cast(dtypes.float32).cast(c.dtype)


def uncast(c, x, y):
    return c.replace(src=(x, y))
"""


def _check(tmp_path: Path, body: str, name: str) -> dict:
    (tmp_path / "paths.py").write_text(PATHS)
    f = tmp_path / name
    f.write_text(textwrap.dedent(body).lstrip("\n"))
    return {r.rule.name: r for r in check_paths([str(f)]).rules}


def test_the_oracle_sees_both_roundings():
    """numpy, the oracle: the two paths part at the integers the draws now include."""
    x = np.array([2**62 + 2**38 + 1, 2**62 + 3 * 2**38 - 1, -(2**62 + 2**38 + 1)], np.int64)
    assert (x.astype(np.float32) != x.astype(np.float64).astype(np.float32)).all()
    y = np.arange(2**31, 2**31 + 1000, dtype=np.int64).astype(np.int32)
    assert (y.astype(np.float32) == y.astype(np.float64).astype(np.float32)).all()
    f = np.array([1 + 2**-11 + 2**-52, -(1 + 3 * 2**-11 - 2**-52)])
    assert (f.astype(np.float16) != f.astype(np.float32).astype(np.float16)).all()
    big = np.array([2**60, 2**60 + 1], np.int64)
    assert big[0] < big[1] and not big.astype(np.float64)[0] < big.astype(np.float64)[1]


def test_a_conversion_that_rounds_twice_is_refuted(tmp_path):
    rep = _check(tmp_path, ROUNDS_TWICE, "twice.rules")
    assert rep["twice"].verdict == "refuted", rep["twice"].line()
    assert "the values differ" in rep["twice"].counterexample
    rep = _check(tmp_path, ROUNDS_ONCE, "once.rules")
    assert rep["once"].verdict == "passed", rep["once"].line()


def test_a_float_conversion_that_rounds_twice_is_refuted(tmp_path):
    rep = _check(tmp_path, FLOAT_TWICE, "floats.rules")
    assert rep["twice"].verdict == "refuted", rep["twice"].line()
    assert rep["once"].verdict == "passed", rep["once"].line()


def test_a_comparison_through_a_rounding_cast_is_refuted(tmp_path):
    rep = _check(tmp_path, COMPARED, "compare.rules")
    assert rep["uncast"].verdict == "refuted", rep["uncast"].line()


def test_add_rules_refuses_the_conversion_and_the_program_stays_right(tmp_path):
    (tmp_path / "paths.py").write_text(PATHS)
    f = tmp_path / "twice.rules"
    f.write_text(ROUNDS_TWICE.lstrip("\n"))
    with pytest.raises(UnsoundRulesError, match="twice"):
        rulegrad.add_rules(f, before="earliest")
    x = np.array([2**62 + 2**38 + 1, 5, -(2**62 + 3 * 2**38 - 1)], np.int64)
    np.testing.assert_array_equal(Tensor(x).cast("float32").numpy(), x.astype(np.float32))


# ---------------------------------------------------------------------- optimizer rules
class _DropsATerm:
    """A one-rule matcher that does what `inner` does, then runs the reduce's last loop one
    iteration short: an off-by-one that leaves out part of a million-term sum, far inside the
    contract's bound for random inputs (2 n u sum |x|: 4e5 against a sum of about 1e3)."""

    def __init__(self, inner):
        self.inner, self.rules, self.name = inner, inner.rules, "broken"

    def rewrite(self, n, ctx=None):
        from rulegrad.runtime.ops import Ops
        from rulegrad.runtime.uop import toposort

        new = self.inner.rewrite(n, ctx)
        if new is None or new is n:
            return new
        reds = [r for r in toposort(new) if r.op is Ops.REDUCE and r.dtype.is_float]
        rng = reds[-1].src[-1] if reds else None
        if rng is None or rng.src[0].op is not Ops.CONST or rng.src[0].arg < 2:
            return new
        return new.substitute({rng: rng.replace(src=(rng.src[0].const_like(rng.src[0].arg - 1),))})


def test_a_threaded_sum_that_drops_a_block_is_refuted():
    """rulegrad check runs an optimizer rule's kernel before and after it in C and compares
    within the rounding bound; the whole-number draw (every partial sum exact, so a bound of 0)
    sees the missing block. numpy's sum is the oracle that the two kernels differ."""
    from rulegrad.dsl import ast as A
    from rulegrad.dsl import load
    from rulegrad.generator import optdiff
    from rulegrad.generator.interp import interpret_ruleset
    from rulegrad.generator.soundness import Checker
    from rulegrad.rules import RULES_DIR

    opt = load(str(Path(RULES_DIR) / "opt.rules"))
    rule = next(r for s in opt.rulesets for r in s.rules if r.name == "thread_reduce")
    alone = interpret_ruleset(A.CheckedRuleSet("thread_reduce", (rule,), rule.span.path),
                              Checker().helpers(opt))
    # (2^21 values: two threads' shares of the region's cost, so the sum takes threads)
    x = np.random.default_rng(0).integers(-4, 5, 1 << 21).astype(np.float32)
    assert x.sum() != x.reshape(256, 8192)[:, :8191].sum()  # a sum short of a term per block
    corpus = optdiff.corpus_of(Tensor(x).sum().schedule(), "a sum of 2^21")
    assert optdiff.check_rule("thread_reduce", alone, corpus).verdict(
        "thread_reduce", len(corpus))[1] == "passed"
    res = optdiff.check_rule("thread_reduce", _DropsATerm(alone), corpus)
    assert res.verdict("thread_reduce", len(corpus))[1] == "refuted", res
    assert any("whole-number" in f for f in res.failures), res.failures


# ---------------------------------------------------------------------- guards on a constant
# adv44: tensor rules (checked on drawn examples, not by z3) guarded on a constant's value.
# The example draws' constants were random, so `c.arg == 3.0` held about never and the rule
# was `unknown` ("no instance drawn"), and `c.arg > -1` held only for c >= 0, where the rule is
# right: it `passed`. A pattern's literal 0.0 matches -0.0 too (the matcher compares with ==),
# and only +0.0 was drawn. Constants are now drawn at the numbers the rule is written with and
# beside them (instances.guard_values), both zeros for a literal 0.
CONST = "EXPAND(RESHAPE(c:CONST))"
GUARDED = f"""
rules s1 = {{
  sum3:  REDUCE_AXIS(MUL(x:floats, {CONST})) as r if r.arg[0] is Ops.ADD and len(r.arg) == 2 \\
           and c.arg == 3.0 -> MUL(REDUCE_AXIS(x, arg=r.arg), r.const_like(3.0))
}}
rules s2 = {{
  sum2:  REDUCE_AXIS(MUL(x:floats, {CONST})) as r if r.arg[0] is Ops.ADD and len(r.arg) == 2 \\
           and c.arg == 2.0 -> ADD(REDUCE_AXIS(x, arg=r.arg), REDUCE_AXIS(x, arg=r.arg))
}}
rules s3 = {{
  maxc:  REDUCE_AXIS(MUL(x:floats, {CONST})) as r if r.arg[0] is Ops.MAX and len(r.arg) == 2 \\
           and c.arg > -1 -> MUL(REDUCE_AXIS(x, arg=r.arg), r.const_like(c.arg))
}}
rules s4 = {{
  tenth: MUL(x:floats, {CONST} as e) if c.arg == 0.1 -> FDIV(x, e.const_like(10.0))
}}
rules s5 = {{
  sub0:  SUB(x:floats, {CONST}) if c.arg == 0.0 -> x
}}
rules s6 = {{
  quart: FDIV(x:floats, {CONST} as e) if c.arg == 4.0 -> MUL(x, e.const_like(0.25))
}}
"""


def test_the_oracle_sees_the_guarded_rules_differ():
    """numpy: each unsound rule's two sides part at a value its guard admits."""
    x = np.array([1.1, 2.3], np.float32)
    assert (x * np.float32(3)).sum() != x.sum() * np.float32(3)
    y = np.array([1.0, 5.0], np.float32)
    assert (y * np.float32(-0.5)).max() != y.max() * np.float32(-0.5)
    z = np.arange(1, 100, dtype=np.float32)
    assert (z * np.float32(0.1) != z / np.float32(10)).any()
    assert np.signbit(np.float32(-0.0) - np.float32(-0.0)) != np.signbit(np.float32(-0.0))


def test_rules_guarded_on_a_constant_value_are_run_and_refuted(tmp_path):
    rep = _check(tmp_path, GUARDED, "guarded.rules")
    for name in ("sum3", "maxc", "tenth", "sub0"):
        assert rep[name].verdict == "refuted", rep[name].line()
    for name in ("sum2", "quart"):
        assert rep[name].verdict == "passed" and rep[name].examples >= 50, rep[name].line()


# ---------------------------------------------------------------------- nested gradient rules
# A gradient rule over more than one op (`MUL(x, EXP(y))`: the gradient of the root's sources,
# one of them an EXP node) was `unchecked`: every drawn instance had leaves for sources, which
# the pattern never matches. Such a source is now built as the op the pattern names, and the
# reference is torch's autograd of the root op at the sources' values.
NESTED = """
rules right = {  # check: gradient
  mul_exp:  MUL(x, EXP(y)):floats -> (ctx * EXP(y), ctx * x)  # torch.mul
}
rules wrong = {  # check: gradient
  mul_expw: MUL(x, EXP(y)):floats -> (ctx * EXP(y), ctx * x * EXP(y))  # torch.mul
}
"""


def test_the_oracle_sees_the_nested_gradient_differ():
    """torch: the gradient of x * e in e is x, not x * e (the rule gave the one in y)."""
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.5, -1.5], dtype=torch.float64)
    e = torch.tensor([2.0, 3.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x * e).sum(), e)
    assert torch.equal(g, x) and not torch.equal(g, x * e.detach())


def test_a_gradient_rule_over_two_ops_is_checked(tmp_path):
    pytest.importorskip("torch")
    rep = _check(tmp_path, NESTED, "nested.rules")
    assert rep["mul_exp"].verdict == "passed", rep["mul_exp"].line()
    assert rep["mul_expw"].verdict == "refuted", rep["mul_expw"].line()


# a gradient rule whose source is a constant as the Tensor API builds one (EXPAND of RESHAPE of
# CONST), guarded on its value, was `unchecked` too; the constant is drawn at the guard's numbers
# and no gradient is asked of it
CONST_SOURCE = f"""
rules right = {{  # check: gradient
  pow2:   POW(x, {CONST}):floats if c.arg == 2.0 -> (ctx * x * 2.0, None)  # torch.pow
}}
rules wrong = {{  # check: gradient
  pow3:   POW(x, {CONST}):floats if c.arg == 3.0 -> (ctx * x * x * 2.0, None)  # torch.pow
}}
"""


def test_the_oracle_sees_the_constant_power_gradient_differ():
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x**3.0).sum(), x)
    assert not torch.allclose(g, 2 * x.detach() ** 2)


def test_a_gradient_rule_over_a_constant_source_is_checked(tmp_path):
    pytest.importorskip("torch")
    rep = _check(tmp_path, CONST_SOURCE, "constant.rules")
    assert rep["pow2"].verdict == "passed", rep["pow2"].line()
    assert rep["pow3"].verdict == "refuted", rep["pow3"].line()
