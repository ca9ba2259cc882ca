"""The cost of `rulegrad check` over all of `rules/`, against the 60 s budget.

    python bench/check.py [--runs N] [--examples E]

Runs the whole check N times (default 3) in this process, each from a fresh checker (the
pass-differential programs are recorded once per process, as the command does), and prints the
CPU and wall seconds of each run, their medians, the verdict counts, and issue 32's shares: the
rules checked only structurally (method `structural`: a `# check: structural` or
`# check: unreachable` rule, run on the recorded programs' passes; target <= 25% of all rules)
and, of those, the optimizer's (rules/opt*.rules; target 0: they run as kernels). CPU is this
process's plus that of the child processes it waited for (the C compiler that builds the
optimizer check's kernels runs as a child: `time.process_time` alone never saw it). The verdicts
of every run must be identical: the check draws with a seeded generator and bounds z3 by
resource units, not by time, so the load on the machine cannot change them (run it once quiet
and once with both cores busy, e.g. beside two `yes > /dev/null`, to see that).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

BUDGET = 60.0  # seconds: the figure the issue sets for a check of rules/
MAX_STRUCTURAL = 0.25  # issue 32: of all rules, at most this share structural or unreachable


def cpu_seconds() -> tuple[float, float]:
    """(this process's CPU seconds, its finished children's): user + system time each."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--examples", type=int, default=100)
    args = ap.parse_args()
    from rulegrad.generator.soundness import check_paths

    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    cpus, kids, walls, verdicts = [], [], [], []
    for i in range(args.runs):
        t0, (c0, k0) = time.perf_counter(), cpu_seconds()
        report = check_paths(None, examples=args.examples, seed=0)
        walls.append(time.perf_counter() - t0)
        c1, k1 = cpu_seconds()
        cpus.append(c1 - c0 + k1 - k0)
        kids.append(k1 - k0)
        verdicts.append([(r.rule.name, r.verdict) for r in report.rules])
        print(f"run {i + 1}: {cpus[-1]:6.1f} s CPU ({kids[-1]:.1f} s of it in children) "
              f"{walls[-1]:6.1f} s wall   {report.summary()}")
    same = all(v == verdicts[0] for v in verdicts)
    print(f"median: {statistics.median(cpus):.1f} s CPU, {statistics.median(walls):.1f} s wall "
          f"(budget {BUDGET:.0f} s; the first run also records the fuzzer programs; load "
          f"average now {os.getloadavg()[0]:.1f})")
    print(f"verdicts identical across runs: {'yes' if same else 'NO'}")
    structural = [r for r in report.rules if r.method == "structural"]
    opt = [r for r in structural if r.location.startswith("rules/opt")]
    share = len(structural) / max(1, len(report.rules))
    print(f"structural or unreachable: {len(structural)} of {len(report.rules)} rules "
          f"({share:.1%}; target <= {MAX_STRUCTURAL:.0%}), of them optimizer rules: {len(opt)} "
          "(target 0)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
