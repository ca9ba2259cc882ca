"""What each test costs, in CPU seconds and compiler runs, never in wall-clock seconds.

`RULEGRAD_TEST_COSTS=FILE pytest ...` appends one line per test to FILE (every xdist worker to
the same file, a line at a time): the CPU seconds of its setup, call and teardown (this process
and the children it waited for: compilers, `rulegrad` subprocesses) and the compiler runs and
libraries this process started for it (backends/c/build.py's `stats`; a child process's builds
are in its CPU seconds only), tab-separated before the test's id.

On this shared machine `--durations` measures the load (test_check_adversarial's casts test
took 31 s beside 25 other processes, for 7 CPU seconds); CPU seconds and compiler runs are
about the same under any load, so costs measured on different days compare. Sum them per file with
`awk -F'\\t' '{split($4, a, "::"); s[a[1]] += $1} END {for (f in s) print s[f], f}' FILE`.
"""

from __future__ import annotations

import os
import resource

_FILE = os.environ.get("RULEGRAD_TEST_COSTS")
_counting = False  # set at the session's start: off in an xdist controller
_started: dict[str, tuple[float, int, int]] = {}


def _cpu() -> float:
    own, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _builds() -> tuple[int, int]:
    from rulegrad.backends.c import build

    return build.stats["compiler_runs"], build.stats["compiles"]


def pytest_sessionstart(session) -> None:
    """An xdist controller is told of every test its workers start and finish, and would write
    a second line per test (its own CPU seconds, ~0): only the process that runs a test counts
    it."""
    global _counting
    _counting = bool(_FILE) and not session.config.pluginmanager.hasplugin("dsession")


def pytest_runtest_logstart(nodeid: str, location: object) -> None:
    if _counting:
        _started[nodeid] = (_cpu(), *_builds())


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    if not _counting or nodeid not in _started:
        return
    cpu, runs, libs = _started.pop(nodeid)
    now_runs, now_libs = _builds()
    with open(_FILE, "a") as f:  # (one short write per line: the workers' lines do not mix)
        f.write(f"{_cpu() - cpu:.3f}\t{now_runs - runs}\t{now_libs - libs}\t{nodeid}\n")
