"""A long elementwise chain through the Tensor API, scheduled, compiled to C and run (issue 11).

    python bench/chain.py [DEPTH]          # default 1,250,000: x = x + 1.0, x = x * 0.5, ...

Prints the time of each phase (building the graph, scheduling, rendering and compiling, the
run) and checks the result against numpy bit for bit; exit 1 on a mismatch. The suite realizes
shorter chains (tests/test_c_backend.py, RULEGRAD_CHAIN_DEPTH; tests/test_limits.py).
"""

from __future__ import annotations

import resource
import sys
import time

import numpy as np

from rulegrad import Tensor


def main(depth: int) -> int:
    a = np.random.default_rng(1).random(64).astype(np.float32)
    t0 = time.perf_counter()
    x, ref = Tensor(a), a.copy()
    for i in range(depth):
        if i % 2 == 0:
            x, ref = x + 1.0, ref + np.float32(1.0)
        else:
            x, ref = x * 0.5, ref * np.float32(0.5)
    t1 = time.perf_counter()
    print(f"depth {depth}: graph built in {t1 - t0:.1f} s", flush=True)
    items = x.schedule()
    t2 = time.perf_counter()
    print(f"scheduled in {t2 - t1:.1f} s: {len(items)} kernel(s)", flush=True)
    out = x.numpy()  # the schedule is replayed from the cache: this is render + build + run
    t3 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rendered, compiled and run in {t3 - t2:.1f} s; peak RSS {rss:.0f} MB", flush=True)
    ok = np.array_equal(out, ref)
    print("matches numpy" if ok else "MISMATCH against numpy")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_250_000))
