"""`rulegrad check` against rules written to slip past it (issue 31, "checker blind spots").

Each test is a class of rule the checker once got wrong, with a sound twin it must not refute.
The oracle for every "refuted" is independent of z3: numpy (the semantics table through the
oracle), or torch's autograd for gradient rules; a "proved" twin is also run on the oracle.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from rulegrad.generator.soundness import check_paths


def _check(tmp_path: Path, body: str, name: str = "adv.rules", **kw) -> dict:
    f = tmp_path / name
    f.write_text(textwrap.dedent(body).lstrip("\n"))
    return {r.rule.name: r for r in check_paths([str(f)], examples=60, **kw).rules}


def test_shift_and_division_by_a_constant_are_decided(tmp_path):
    """z3 ran out of its limit on `x // 2 -> x >> 1` over uint32 (a bit-vector shift against
    an integer division whose divisor sat under an `If`), so a sound rule was `unknown`."""
    rep = _check(tmp_path, """
        rules r = {
          halve_u:  IDIV(x:uint32, 2) -> SHR(x, x.const_like(1))
          halve_s:  IDIV(x:int32, 2)  -> SHR(x, x.const_like(1))
          eighth:   IDIV(x:uint64, 8) -> SHR(x, x.const_like(3))
          shl_mul:  SHL(x:int16, 3)   -> MUL(x, x.const_like(8))
          shl_out:  SHL(x:int32, 32)  -> x.const_like(0)
          shr_sign: SHR(x:int16, 16)  -> SHR(x, x.const_like(15))
        }
        """)
    for name in ("halve_u", "eighth", "shl_mul", "shl_out", "shr_sign"):
        assert rep[name].verdict == "proved", rep[name].line()
    # C's division truncates, an arithmetic shift floors: -1 // 2 is 0, -1 >> 1 is -1
    assert rep["halve_s"].verdict == "refuted", rep["halve_s"].line()
    assert "confirmed by the oracle" in rep["halve_s"].counterexample
    x = np.array([-1, -3, 5], np.int32)
    assert not np.array_equal(np.fix(x / 2).astype(np.int32), x >> 1)  # the oracle's own view
    u = np.arange(0, 2**32, 2**20 + 7, dtype=np.uint64).astype(np.uint32)
    assert np.array_equal(u // 2, u >> 1) and np.array_equal((u.astype(np.uint64) // 8),
                                                              u.astype(np.uint64) >> 3)


def test_a_right_side_constant_outside_its_dtype_is_refuted(tmp_path):
    """`a.arg + b.arg` in Python does not wrap: CONST int8 128 is a node the oracle and the C
    renderer refuse. z3 wrapped every constant into its dtype, so it proved such a fold."""
    helpers = tmp_path / "wraps.py"
    helpers.write_text("def wrap8(v):\n    return (v + 128) % 256 - 128\n")
    rep = _check(tmp_path, """
        use .wraps: wrap8
        rules r = {
          fold_add:  ADD(a:CONST:int8, b:CONST) -> a.arg + b.arg
          fold_neg:  NEG(a:CONST:uint8) -> -a.arg
          big:       MUL(x:uint8, 0) -> x.const_like(256)
          in_range:  ADD(x:int8, -128) -> SUB(x, x.const_like(-128))
        }
        rules wrapped = {
          fold_wrap: ADD(a:CONST:int8, b:CONST) -> wrap8(a.arg + b.arg)
        }
        """)
    for name in ("fold_add", "fold_neg", "big"):
        assert rep[name].verdict == "refuted", rep[name].line()
    assert "out of bounds" in rep["fold_add"].counterexample  # the oracle refuses the constant
    assert rep["fold_wrap"].verdict in ("proved", "passed"), rep["fold_wrap"].line()
    assert rep["in_range"].verdict == "proved", rep["in_range"].line()
    with pytest.raises(OverflowError):
        np.array(128, np.int8)  # what the oracle does with the unwrapped constant


def test_a_gradient_constant_rounded_to_float32_is_refuted(tmp_path):
    """ln 2 to float32 precision (0.69314718, 8e-10 relative) passed the float64 comparison
    with torch at rtol 1e-9; float64 gradients agree with torch to a few ulp (1e-15)."""
    torch = pytest.importorskip("torch")
    rep = _check(tmp_path, """
        rules g = {  # check: gradient
          short: EXP2(x):floats as r -> (ctx * r * 0.69314718,)
          right: EXP2(x):floats as r -> (ctx * r * 0.6931471805599453,)
        }
        """)
    assert rep["short"].verdict == "refuted", rep["short"].line()
    assert rep["right"].verdict == "passed", rep["right"].line()
    x = torch.tensor([0.5, 3.0], dtype=torch.float64, requires_grad=True)
    torch.exp2(x).sum().backward()
    ours = np.exp2(x.detach().numpy()) * 0.69314718
    assert not np.allclose(ours, x.grad.numpy(), rtol=1e-12, atol=0)


def test_an_ulp_tolerance_keeps_the_sign_of_zero(tmp_path):
    """`# check: ulp N` let -0.0 stand for +0.0 (both are place 0 on the line of floats), so
    a rule wrong only at -0.0 was proved by asking for a tolerance. Rounding never flips the
    sign of a zero; both methods now keep it exact, as they keep infinities and NaN."""
    rep = _check(tmp_path, """
        rules r = {
          add_zero: ADD[x:float32, 0] -> x  # check: ulp 2
          mul_one:  MUL[x:float32, 1] -> x  # check: ulp 2
        }
        # check: ulp 8
        rules s = {
          sub_zero: SUB(x:float16, 0) -> x
        }
        """)
    assert rep["add_zero"].verdict == "refuted", rep["add_zero"].line()
    assert rep["sub_zero"].verdict == "refuted", rep["sub_zero"].line()
    assert rep["mul_one"].verdict == "proved", rep["mul_one"].line()
    # numpy's view: -0.0 + 0.0 is +0.0, and -0.0 - -0.0 is +0.0 (the pattern 0 matches -0.0)
    assert not np.signbit(np.float32(-0.0) + np.float32(0.0))
    assert not np.signbit(np.float16(-0.0) - np.float16(-0.0))


def test_prose_about_the_gradient_mark_makes_no_gradient_set(tmp_path):
    """A gradient set's rules are checked against torch, not for preserving the value; words
    on a set's line that speak of `check: gradient` made a value rule a gradient rule, and
    no instance of it could be drawn: `unchecked` where it is plainly refuted."""
    rep = _check(tmp_path, """
        rules r = {  # no rule here needs check: gradient
          bump: ADD(x:float32, 1.0) -> x
        }
        """)
    assert rep["bump"].verdict == "refuted", rep["bump"].line()
    assert 1.0 + np.float32(1.0) != np.float32(1.0)


def test_a_rewrite_that_drops_an_assigns_write_is_refuted(tmp_path):
    """ASSIGN(t, v)'s value is v's, so comparing the two sides' values passed `-> v`, which
    leaves t's buffer unwritten for every later reader. The buffers each side leaves behind
    (from the same drawn contents) are now compared too."""
    rep = _check(tmp_path, """
        rules r = {
          drop:  ASSIGN(t, v) -> v
        }
        rules s = {
          swap:  ASSIGN(t, ADD(v:int32, w)) -> ASSIGN(t, ADD(w, v))
        }
        """)
    assert rep["drop"].verdict == "refuted", rep["drop"].line()
    assert "an ASSIGN's write differs" in rep["drop"].counterexample
    assert rep["swap"].verdict == "passed", rep["swap"].line()
    t, v = np.zeros(3, np.float32), np.arange(3, dtype=np.float32) + 1
    t[...] = v  # what the left side does to the buffer, and the right side does not
    assert not np.array_equal(t, np.zeros(3, np.float32))


def test_a_comparison_of_casts_is_proved_or_refuted_by_z3(tmp_path):
    """`CMPLT(CAST(x:int32 -> float32), CAST(y -> float32)) -> CMPLT(x, y)`: with y of any
    dtype, one case's right side compared an int32 with a float, z3 failed on the sorts and the
    whole rule went to the examples, whose small ints never reach 2**24. A comparison's
    operands share a dtype as every ALU op's do; the int32 case is refuted at the edge."""
    rep = _check(tmp_path, """
        rules r = {
          any_y:  CMPLT(CAST(x:int32):float32, CAST(y):float32)       -> CMPLT(x, y)
        }
        rules s = {
          int_y:  CMPLT(CAST(x:int32):float32, CAST(y:int32):float32) -> CMPLT(x, y)
        }
        rules t = {
          small:  CMPLT(CAST(x:int8):float32, CAST(y:int8):float32)   -> CMPLT(x, y)
        }
        """)
    assert rep["any_y"].verdict == "refuted" and rep["any_y"].method == "z3", rep["any_y"].line()
    assert rep["int_y"].verdict == "refuted", rep["int_y"].line()
    assert "confirmed by the oracle" in rep["int_y"].counterexample
    assert rep["small"].verdict in ("proved", "passed"), rep["small"].line()
    a, b = np.int32(2**24), np.int32(2**24 + 1)
    assert a < b and not np.float32(a) < np.float32(b)
