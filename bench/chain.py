"""A long elementwise chain through the Tensor API, scheduled, compiled to C and run (issue 11).

    python bench/chain.py [DEPTH]          # default 1,250,000: x = x + 1.0, x = x * 0.5, ...

Prints each phase (building the graph, scheduling, rendering + compiling + running) with its
wall time and its CPU time (this process, and the C compiler's beside it: on a loaded machine
the CPU time is the figure to compare), the peak RSS and the load average, and checks the
result against numpy bit for bit; exit 1 on a mismatch. The suite realizes a 125,000-op
chain (tests/test_reliability.py: the same thresholds crossed) and shorter ones
(tests/test_c_backend.py).
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np

from rulegrad import Tensor


def _clock() -> tuple[float, float, float]:
    me, cc = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), me.ru_utime + me.ru_stime, cc.ru_utime + cc.ru_stime


def _report(name: str, before: tuple[float, float, float]) -> tuple[float, float, float]:
    now = _clock()
    wall, cpu, cc = (b - a for a, b in zip(before, now))
    extra = f", compiler {cc:.1f} s" if cc >= 0.05 else ""
    print(f"{name:<34s} {wall:6.1f} s wall, {cpu:6.1f} s CPU{extra}", flush=True)
    return now


def main(depth: int) -> int:
    print(f"depth {depth:,}, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    a = np.random.default_rng(1).random(64).astype(np.float32)
    t = _clock()
    x, ref = Tensor(a), a.copy()
    for i in range(depth):
        if i % 2 == 0:
            x, ref = x + 1.0, ref + np.float32(1.0)
        else:
            x, ref = x * 0.5, ref * np.float32(0.5)
    t = _report("graph built", t)
    items = x.schedule()
    t = _report(f"scheduled ({len(items)} kernel(s))", t)
    out = x.numpy()  # the schedule is replayed from the cache: this is render + build + run
    t = _report("rendered, compiled and run", t)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ok = np.array_equal(out, ref)
    print(f"peak RSS {rss:.0f} MB; " + ("matches numpy" if ok else "MISMATCH against numpy"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_250_000))
