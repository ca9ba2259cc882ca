"""Every way to call `rulegrad` wrongly exits 2 with the usage on stderr, as argparse does:
no command at all (it printed the help and exited 0), an unknown one, and each subcommand
with a missing, unknown or extra argument. The oracle is argparse's own convention: each
command line is given to the CLI's `main` in this process (a child Python per line cost a third
of a CPU-second each), and one usage error and --version also run as the installed command,
`python -m rulegrad`, in a child process (its `sys.exit(main())`)."""

import subprocess
import sys

import pytest

from rulegrad.cli import main

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


def _in_process(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `rulegrad ARGV` run through `main` in this process."""
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse's usage errors, --help and --version exit
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _child(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rulegrad", *argv], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("argv", WRONG, ids=[" ".join(a) or "nothing" for a in WRONG])
def test_a_wrong_command_line_is_a_usage_error(argv, capsys):
    code, out, err = _in_process(argv, capsys)
    assert code == 2, (code, out[-300:], err[-300:])
    assert out == ""
    assert "rulegrad" in err and "Traceback" not in err


def test_the_installed_command_exits_as_main_does():
    run = _child(["cache", "zap"])
    assert run.returncode == 2 and run.stdout == "", (run.returncode, run.stderr[-300:])
    assert "rulegrad" in run.stderr and "Traceback" not in run.stderr
    run = _child(["--version"])
    assert run.returncode == 0 and run.stdout


def test_help_and_version_still_exit_0(capsys):
    for argv in (["--help"], ["--version"], ["cache", "--help"]):
        code, out, _ = _in_process(argv, capsys)
        assert code == 0 and out, argv
