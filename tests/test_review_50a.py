"""rev50a's review of round 50's front-end changes (issue 31): what it found wrong.

- `rulegrad demo` with RULEGRAD_SCHEDULER set to no scheduler ended in a traceback: adv50 made
  every other RULEGRAD_* variable's bad value one worded line and exit 1.
- gen's constant folder formatted a `"%0300000000d" % 1` at gen time: a rule's odd literal
  made gen build a string of hundreds of megabytes (a larger width, gigabytes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc

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
