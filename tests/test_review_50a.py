"""rev50a's review of round 50's front-end changes (issue 31): what it found wrong.

- `rulegrad demo` with RULEGRAD_SCHEDULER set to no scheduler ended in a traceback: adv50 made
  every other RULEGRAD_* variable's bad value one worded line and exit 1.
"""

from __future__ import annotations

import os
import subprocess
import sys


def test_a_bad_scheduler_variable_is_one_worded_line(tmp_path):
    env = {**os.environ, "RULEGRAD_CACHE": str(tmp_path / "cache"), "RULEGRAD_SCHEDULER": "zz"}
    run = subprocess.run([sys.executable, "-m", "rulegrad", "demo"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith(
        "rulegrad demo: scheduler 'zz' does not exist")

