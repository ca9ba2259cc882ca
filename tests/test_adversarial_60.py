"""adv60: held-out programs for issue 31's classes, against numpy and torch.

Found wrong, each fixed where it was made:
1. `RULEGRAD_CFLAGS=-mno-sse2` (or `-mno-sse`, or either in RULEGRAD_CC) passed the allow-list
   as a mere choice of instructions, but without SSE2 gcc computes x86-64's doubles on the x87
   unit in extended precision: a float64 sum rounded twice, `1 + (2^-53 + 2^-80)` gave 1.0
   where numpy gives 1 + 2^-52 (backends/c/flags.py's `_REFUSED`).
"""

from __future__ import annotations

import platform

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c import build, run
from rulegrad.backends.c.flags import CFlagsError


def _fresh_c(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RULEGRAD_SCHEDULE_CACHE", "0")
    monkeypatch.setenv("RULEGRAD_PLANS", "0")
    build.clear_memory_cache()
    run._programs.clear()


# ---------------------------------------------------------------------- 1. x87 through a flag
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64's SSE flags")
@pytest.mark.parametrize("var", ["RULEGRAD_CFLAGS", "RULEGRAD_CC"])
@pytest.mark.parametrize("flag", ["-mno-sse", "-mno-sse2"])
def test_a_flag_that_moves_doubles_to_x87_is_refused_or_rounds_as_numpy(monkeypatch, tmp_path,
                                                                        var, flag):
    """A float64 sum whose exact value lies just past a tie: rounded once (SSE2, numpy) it is
    1 + 2^-52; rounded to x87's 64 bits first it lands on the tie and then on 1.0."""
    _fresh_c(monkeypatch, tmp_path)
    value = f"{build.compiler()[0]} {flag}" if var == "RULEGRAD_CC" else f"-O2 {flag}"
    monkeypatch.setenv(var, value)
    a = np.ones(5, np.float64)
    b = np.full(5, 2.0 ** -53 + 2.0 ** -80, np.float64)
    try:
        got = (Tensor(a) + Tensor(b)).numpy()
    except CFlagsError as e:
        assert f"{var}: {flag} " in str(e) and "x87" in str(e)
        return
    np.testing.assert_array_equal(got, a + b)


@pytest.mark.parametrize("flag", ["-mno-sse3", "-mno-sse4.2", "-mno-avx2", "-mavx2"])
def test_other_instruction_set_switches_still_build(monkeypatch, tmp_path, flag):
    """(the refusal is of the two switches that take floats off SSE, not of the ISA list)"""
    if platform.machine() not in ("x86_64", "AMD64") and flag == "-mavx2":
        pytest.skip("x86 flag")
    _fresh_c(monkeypatch, tmp_path)
    monkeypatch.setenv("RULEGRAD_CFLAGS", f"-O2 {flag}")
    a = np.linspace(-3, 3, 11)
    np.testing.assert_array_equal((Tensor(a) * 3 + 1).numpy(), a * 3 + 1)
