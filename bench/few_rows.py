"""Few long rows against torch eager, interleaved in one run (issue 33's off-bench shapes).

In: a sum, a max, a logsumexp and a softmax along the rows of 3 x 1000003, 5 x 999983, 3 x
1000000 and 7 x 199999 (fewer rows than the threads share evenly; prime lengths and one a
divisor splits). Out: per case rulegrad's call over torch eager's (> 1: rulegrad is faster), its
share of the copy bandwidth, the CPU time per call of its busiest thread and that thread's share
of all its threads' (Linux's per-thread counters: the critical path on free cores, which a
loaded machine's wall clock hides; 0.5 is an even split on 2 threads), and the threaded loops
of its kernels (`DEBUG=2`'s PARALLEL actions: rows x parts, rangeify.rules' partials_apart and
split_tail). Medians of interleaved rounds; outputs checked against torch.

    python bench/few_rows.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import re
import time

import numpy as np
from harness import close, copy_bandwidth, interleaved_medians, torch_module

SHAPES = [(3, 1000003), (5, 999983), (3, 1000000), (7, 199999)]
OPS = ("sum", "max", "logsumexp", "softmax")


def _thread_ticks() -> dict[str, int]:
    """CPU clock ticks (user + system) of each thread of this process."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[tid] = int(fields[11]) + int(fields[12])
    return out


def busiest(fn, seconds: float = 1.0) -> tuple[float, float]:
    """The busiest thread's CPU seconds per call of fn, and its share of all threads' CPU."""
    before, t0, calls = _thread_ticks(), time.process_time(), 0
    while time.process_time() - t0 < seconds:
        fn()
        calls += 1
    after = _thread_ticks()
    used = [after[t] - before.get(t, 0) for t in after]
    return max(used) / os.sysconf("SC_CLK_TCK") / calls, max(used) / max(sum(used), 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    import rulegrad
    from rulegrad import Tensor
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    torch = torch_module()
    rng = np.random.default_rng(0)
    print(f"{'case':26s} {'rulegrad ms':>11s} {'torch ms':>9s} {'vs torch':>8s} {'roof':>5s}"
          "  busiest thread ms (share)  threads")
    for shape in SHAPES:
        x = rng.standard_normal(shape).astype(np.float32)
        xt, xr = torch.from_numpy(x), Tensor(x).realize()
        for op in OPS:
            fn = rulegrad.jit(lambda v, op=op: getattr(v, op)(-1))
            ours = lambda fn=fn, xr=xr: fn(xr).numpy()  # noqa: E731
            tf = getattr(torch, "amax" if op == "max" else op)
            theirs = lambda tf=tf, xt=xt: tf(xt, -1).numpy()  # noqa: E731
            assert close(ours(), theirs()), (shape, op)
            t_ours, t_torch = interleaved_medians([ours, theirs], args.rounds)
            nbytes = x.nbytes * (2 if op == "softmax" else 1)
            roof = nbytes / copy_bandwidth(1 << max(20, nbytes.bit_length())) / t_ours
            lows = [lower_only(item.ast) for item in getattr(Tensor(x), op)(-1).schedule()]
            par = [m.group(0) for low in lows for a in actions(optimize_kernel(low))
                   for m in [re.search(r"PARALLEL .*", a)] if m]
            name = f"{op} {'x'.join(map(str, shape))}"
            cpu, share = busiest(ours)
            print(f"{name:26s} {t_ours * 1e3:11.3f} {t_torch * 1e3:9.3f} "
                  f"{t_torch / t_ours:7.2f}x {roof:5.0%}  {cpu * 1e3:10.3f} ({share:.2f})"
                  f"        {'; '.join(par)}", flush=True)


if __name__ == "__main__":
    main()
