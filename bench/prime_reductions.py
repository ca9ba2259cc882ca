"""Full reductions of any length against torch eager, interleaved in one run.

In: sums, maxes and dot products (`(a * b).sum()`) over every element of vectors whose length is
prime, a power of two, or one past it, and of a 2-D array with prime sides. Out: per case, the
kernels alone (the schedule compiled once, run on its buffers) and the whole call (a fresh
Tensor expression, realized and read) over torch eager's call; the threads the kernels use
(`DEBUG=2`'s THREAD actions). Medians of interleaved rounds; outputs checked against torch.

    python bench/prime_reductions.py
"""

from __future__ import annotations

import numpy as np
from harness import THREADS, close, geomean, interleaved_medians, torch_module

SHAPES = [(1000003,), (999983,), (1 << 20,), ((1 << 20) + 1,), (7919,), (65537,), (1009, 997)]
OPS = ("sum", "max", "dot")


def main() -> None:
    from rulegrad import Tensor
    from rulegrad.backends.c import compile_program
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel

    torch = torch_module()
    rng = np.random.default_rng(0)
    kern, call = [], []
    for shape in SHAPES:
        a = rng.standard_normal(shape).astype(np.float32)
        b = rng.standard_normal(shape).astype(np.float32)
        for op in OPS:
            def ours(a=a, b=b, op=op):
                x = Tensor(a)
                return (x * Tensor(b)).sum() if op == "dot" else getattr(x, op)()

            sched = ours().schedule()
            prog = compile_program([(item.name, item.ast) for item in sched])
            bufs = [[buf.ensure() for buf in item.bufs] for item in sched]
            lows = [lower_only(item.ast) for item in sched]
            taken = [a for low in lows for a in actions(low, optimize_kernel(low))]
            threads = ", ".join(a for a in taken if a.startswith("THREAD")) or "one core"
            fns = [lambda prog=prog, bufs=bufs: prog.run(bufs), lambda: ours().numpy()]
            if torch is not None:
                ta, tb = torch.tensor(a), torch.tensor(b)
                ref = {"sum": lambda ta=ta: ta.sum(), "max": lambda ta=ta: ta.max(),
                       "dot": lambda ta=ta, tb=tb: (ta * tb).sum()}[op]
                fns.append(ref)
                assert close(np.asarray(ours().numpy()), ref().numpy(), rtol=1e-3, atol=1e-2)
            t = interleaved_medians(fns)
            if torch is None:
                print(f"{str(shape):14} {op}: kernels {t[0] * 1e6:8.1f} us (no torch)")
                continue
            kern.append(t[0] / t[2])
            call.append(t[1] / t[2])
            print(f"{str(shape):14} {op:3}  kernels/torch {t[0] / t[2]:5.2f}x  call/torch "
                  f"{t[1] / t[2]:5.2f}x  (torch {t[2] * 1e6:7.1f} us, {THREADS} threads)  "
                  f"{len(sched)} kernels, {threads}", flush=True)
    if kern:
        print(f"geomean kernels/torch {geomean(kern):.2f}x, call/torch {geomean(call):.2f}x")


if __name__ == "__main__":
    main()
