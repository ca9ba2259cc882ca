"""rev50a's review of round 50's front-end changes (issue 31): what it found wrong.

- `rulegrad demo` with RULEGRAD_SCHEDULER set to no scheduler ended in a traceback: adv50 made
  every other RULEGRAD_* variable's bad value one worded line and exit 1.
- gen's constant folder formatted a `"%0300000000d" % 1` at gen time: a rule's odd literal
  made gen build a string of hundreds of megabytes (a larger width, gigabytes).
- `Tensor(t)` of a lazy t, realized together with t (`Tensor.realize(t, c)`, an optimizer's
  constructor), shared t's buffer, so an assign into the copy changed t; so did two tensors
  written alike (`a * 2` twice: one node). torch's are apart.
- gen refused a right side reading a gated LOAD's gate or value (`ld.src[1]`) or building one
  (`replace(src=(idx, gate, alt))`): the IR spec's ARITY fixed LOAD at 1 source, but lowering
  makes LOAD(INDEX(b, off), gate, alt) (rules/lower_helpers.py's gated_load).
- `rulegrad fuzz --opt` seed 14 failed on a right value: the in-place part `a.assign(a.T + 1)`
  (gen50's) took its tolerance from `a` untransposed, so a NaN planted in `a` made the
  tolerance NaN where the value (`a.T + 1`) is finite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.cli import main


def test_a_bad_scheduler_variable_is_one_worded_line(tmp_path):
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path / "cache"), "RULEGRAD_SCHEDULER": "zz"}
    run = subprocess.run([sys.executable, "-m", "rulegrad", "demo"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith(
        "rulegrad demo: scheduler 'zz' does not exist")


def test_gen_does_not_format_a_huge_string(tmp_path, capsys):
    """The rule is valid (the branch is a constant's value when it fires); gen must not build
    the 100 MB string to fold it."""
    path = tmp_path / "user.rules"
    path.write_text('rules user = {\n  r: NEG(x) -> x.const_like(len("%0100000000d" % 1))\n}\n')
    tracemalloc.start()
    try:
        code = main(["gen", str(path), "--out", str(tmp_path / "out")])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0, capsys.readouterr()
    assert peak < 50_000_000, f"gen peaked at {peak / 1e6:.0f} MB"


A = np.arange(1, 7, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("make", ["Tensor(t)", "alike", "contiguous"])
def test_tensors_over_one_lazy_node_realized_together_are_apart(make):
    a = Tensor(A.copy())
    t = a.contiguous() if make == "contiguous" else a * 2
    want = A if make == "contiguous" else A * 2
    c, d = (a * 2, a * 2) if make == "alike" else (Tensor(t), Tensor(t))
    Tensor.realize(t, c, d, c)
    c.assign(c + 1)
    d.assign(d * 0)
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(c.numpy(), want + 1)
    np.testing.assert_array_equal(d.numpy(), want * 0)


def test_gradients_through_tensors_realized_apart():
    w = Tensor(A.copy(), requires_grad=True)
    t, y = w * 2, w * 2
    Tensor.realize(t, y)
    (t * y * y).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 24 * A * A, rtol=1e-6)


GATED_LOAD_RULES = [
    "LOAD as ld if len(ld.src) == 3 -> ld.src[2]",
    "LOAD(i, g, a) as ld -> ld.replace(src=(i,))",
    "LOAD(i) as ld -> ld.replace(src=(i, i.const_like(True), ld.const_like(0)))",
]


@pytest.mark.parametrize("rule", GATED_LOAD_RULES)
def test_gen_takes_rules_over_gated_loads(tmp_path, capsys, rule):
    path = tmp_path / "user.rules"
    path.write_text(f"rules user = {{\n  r: {rule}\n}}\n")
    assert main(["gen", str(path), "--out", str(tmp_path / "out")]) == 0, capsys.readouterr()


def test_lowering_makes_loads_of_three_sources():
    """The fact the rules above rely on, from the IR itself: a padded read is a gated LOAD."""
    from rulegrad.rules.lower_helpers import gated_load
    from rulegrad.runtime.dtype import dtypes
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import UOp

    b = UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), 0)
    off = UOp.const(dtypes.int32, 3)
    idx = UOp(Ops.INDEX, dtypes.float32, (b, off, UOp.const(dtypes.bool, True)))
    assert len(gated_load(UOp(Ops.LOAD, dtypes.float32, (idx,)), idx).src) == 3


def test_the_fuzzers_square_in_place_part_is_held_to_its_own_values_tolerance(monkeypatch):
    from rulegrad.tools.fuzz import CLASS_GENERATORS, run_case

    monkeypatch.setenv("RULEGRAD_L1_BYTES", "32K")  # (as tests/test_fuzz_inplace_opt.py)
    case = CLASS_GENERATORS["opt"](14)
    assert ".assign(val_" in case.source and ".T + 1" in case.source and "np.nan" in case.source
    out = run_case(case)
    assert out.status == "ok", out.message
