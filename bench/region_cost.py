"""The parallel region's cost, in loads: the machine fact behind runtime/target.py's
PARALLEL_MIN_WORK, which every threaded loop's threads are decided from (rules/pack_helpers.py's
`region_threads`: each thread's share of the work at least one region's cost).

    python bench/region_cost.py [--rounds N]

Times, interleaved (bench/harness.py's medians): a launched kernel with an empty body over as
many iterations as threads (backends/c/launch.py's region: the team woken and joined, nothing
else), the same empty kernel called plainly (the call's own cost, taken off), and a C loop
of y = x * 2 + 1 over 4M float32 on one core (a load, a multiply-add and a store per element).
Prints the region's cost in microseconds, the time per element, their ratio (the region's cost
in loads) and PARALLEL_MIN_WORK beside it. Wall time: on a loaded machine a region's join
waits for a descheduled thread, the cost the model pays for (a median hides the slow tail: the
figure is a floor).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from harness import THREADS, interleaved_medians

EMPTY = r"""
void rg_region_empty(void *const *args, int64_t lo, int64_t hi)
{
  __asm__ volatile("" : : "r"(args), "r"(lo), "r"(hi) : "memory");
}
void rg_plain_empty(void *v0)
{
  __asm__ volatile("" : : "r"(v0) : "memory");
}
void rg_stream(void *v0, void *v1)
{
  const float *restrict x = (const float *)v0;
  float *restrict y = (float *)v1;
  for (int64_t i = 0; i < N; i++) y[i] = x[i] * 2.0f + 1.0f;
}
"""
N = 1 << 22


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)
    from rulegrad.backends.c.build import build_library
    from rulegrad.backends.c.render import RenderedKernel
    from rulegrad.backends.c.threads import apply_threads
    from rulegrad.runtime import target
    from rulegrad.runtime.dtype import dtypes

    source = f"#define N {N}\n" + EMPTY
    lib = build_library([RenderedKernel("rg_region_empty", source, 1, (dtypes.uint8,))])
    region = lib.function("rg_region_empty", 1, launch=THREADS)
    plain = lib.function("rg_plain_empty", 1)
    stream = lib.function("rg_stream", 2)  # one core: a load's time
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    y = np.empty_like(x)
    os.environ["RULEGRAD_THREADS"] = str(THREADS)
    apply_threads()
    print(f"threads {THREADS}; PARALLEL_MIN_WORK {target.PARALLEL_MIN_WORK} loads")
    for _ in range(2):
        t_region, t_plain = interleaved_medians([lambda: region(0), lambda: plain(0)],
                                                args.rounds)
        (t_loop,) = interleaved_medians([lambda: stream(x.ctypes.data, y.ctypes.data)],
                                        args.rounds)
        cost, per = max(t_region - t_plain, 0.0), t_loop / N
        print(f"region {cost * 1e6:8.2f} us, {per * 1e9:6.3f} ns an element on one "
              f"core: a region costs {cost / per:10.0f} loads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
