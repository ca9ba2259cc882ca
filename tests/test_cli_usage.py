"""Every way to call `rulegrad` wrongly exits 2 with the usage on stderr, as argparse does:
no command at all (it printed the help and exited 0), an unknown one, and each subcommand
with a missing, unknown or extra argument. The oracle is argparse's own convention, run as
the installed command."""

import subprocess
import sys

import pytest

WRONG = [
    [],
    ["bogus"],
    ["--bogus"],
    ["cache"],
    ["cache", "zap"],
    ["cache", "info", "extra"],
    ["viz"],
    ["demo", "extra"],
    ["lsp", "extra"],
    ["gen", "--bogus"],
    ["fmt", "--bogus"],
    ["check", "--examples", "-3"],
    ["fuzz", "--bogus"],
]


@pytest.mark.parametrize("argv", WRONG, ids=[" ".join(a) or "nothing" for a in WRONG])
def test_a_wrong_command_line_is_a_usage_error(argv):
    run = subprocess.run([sys.executable, "-m", "rulegrad", *argv], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 2, (run.returncode, run.stdout[-300:], run.stderr[-300:])
    assert run.stdout == ""
    assert "rulegrad" in run.stderr and "Traceback" not in run.stderr


def test_help_and_version_still_exit_0():
    for argv in (["--help"], ["--version"], ["cache", "--help"]):
        run = subprocess.run([sys.executable, "-m", "rulegrad", *argv], capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0 and run.stdout, argv
