"""What each test costs, in CPU seconds and compiler runs, never in wall-clock seconds.

`RULEGRAD_TEST_COSTS=FILE pytest ...` appends one line per test to FILE (every xdist worker to
the same file, a line at a time): the CPU seconds of its setup, call and teardown (this process
and the children it waited for: compilers, `rulegrad` subprocesses) and the compiler runs and
libraries this process started for it (backends/c/build.py's `stats`; a child process's builds
are in its CPU seconds only), tab-separated before the test's id.

On this shared machine `--durations` measures the load (test_check_adversarial's casts test
took 31 s beside 25 other processes, for 7 CPU seconds); CPU seconds and compiler runs are
about the same under any load, so costs measured on different days compare.
`python tests/suite_costs.py FILE... [--by file|family] [--top N]` sums them per file or per
test family (a test function's parametrized cases together: a sweep's cost), largest first,
with the totals (`summary`).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys

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


def _group(nodeid: str, by: str) -> str:
    """A test's file (`tests/test_x.py`) or family (`tests/test_x.py::test_y`, its cases'
    parameters dropped)."""
    return nodeid.split("::")[0] if by == "file" else nodeid.split("[")[0]


def summary(lines: list[str], by: str = "file") -> list[tuple[str, float, int, int, int]]:
    """(group, CPU seconds, compiler runs, libraries, tests) per group of the costs file's
    lines, the costliest first; a line that is not four tab-separated fields is skipped (a
    file an interrupted run left half-written)."""
    sums: dict[str, list[float]] = {}
    for line in lines:
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 4:
            continue
        try:
            cpu, runs, libs = float(fields[0]), int(fields[1]), int(fields[2])
        except ValueError:
            continue
        row = sums.setdefault(_group(fields[3], by), [0.0, 0, 0, 0])
        row[0] += cpu
        row[1] += runs
        row[2] += libs
        row[3] += 1
    rows = [(g, c, int(r), int(b), int(n)) for g, (c, r, b, n) in sums.items()]
    return sorted(rows, key=lambda row: (-row[1], row[0]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/suite_costs.py",
                                     description="Sum a RULEGRAD_TEST_COSTS file per file or "
                                                 "per test family, costliest first.")
    parser.add_argument("files", nargs="+", help="costs files (RULEGRAD_TEST_COSTS)")
    parser.add_argument("--by", choices=("file", "family"), default="file")
    parser.add_argument("--top", type=int, default=30, help="rows to print (0: all)")
    args = parser.parse_args(argv)
    lines: list[str] = []
    for name in args.files:
        try:
            with open(name) as f:
                lines += f.readlines()
        except OSError as e:
            parser.error(f"cannot read the costs file {name!r}: {e.strerror}")
    rows = summary(lines, args.by)
    print("CPU-s\tcc runs\tlibs\ttests\t" + args.by)
    for group, cpu, runs, libs, tests in rows[:args.top or None]:
        print(f"{cpu:.1f}\t{runs}\t{libs}\t{tests}\t{group}")
    total = [sum(row[i] for row in rows) for i in (1, 2, 3, 4)]
    print(f"{total[0]:.1f}\t{total[1]}\t{total[2]}\t{total[3]}\t(all {len(rows)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
