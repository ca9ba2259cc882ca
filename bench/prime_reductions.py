"""Full reductions of any length against torch eager, interleaved in one run.

In: sums, maxes and dot products (`(a * b).sum()`) over every element of vectors whose length is
prime, a power of two, or one past it, and of a 2-D array with prime sides. Out: per case, the
kernels alone (the schedule compiled once, run on its buffers) and the whole call (a fresh
Tensor expression, realized and read) over torch eager's call; the threads the kernels use
(`DEBUG=2`'s THREAD actions). Medians of interleaved rounds; outputs checked against torch.
Then, for prime lengths past the threads' threshold, the kernels with opt.rules' split_reduce
and without it (the same schedule built twice, the rule's helper off for the second: each
iteration of the one loop a slot of its own), over each other and over torch.

    python bench/prime_reductions.py
"""

from __future__ import annotations

import numpy as np
from harness import THREADS, close, geomean, interleaved_medians, torch_module

SHAPES = [(1000003,), (999983,), (1 << 20,), ((1 << 20) + 1,), (7919,), (65537,), (1009, 997),
          (1048583,)]
SPLIT_SIZES = (1048583, 2097169, 4194319)  # primes
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
            taken = [a for low in lows for a in actions(optimize_kernel(low))]
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
    if torch is not None:
        split_on_off(torch)


def split_on_off(torch) -> None:
    """The kernels of a prime-length sum and max with split_reduce and without, interleaved."""
    import rulegrad.rules.generated.opt as generated
    from rulegrad import Tensor
    from rulegrad.backends.c import compile_program

    blocked = generated.blocked
    for n in SPLIT_SIZES:
        for op in ("sum", "max"):
            a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
            sched = getattr(Tensor(a), op)().schedule()
            bufs = [[b.ensure() for b in item.bufs] for item in sched]
            runs = []
            for helper, tag in ((blocked, ""), (lambda red: None, "_unsplit")):
                generated.blocked = helper  # (a name of its own: its own build)
                prog = compile_program([(item.name + tag, item.ast) for item in sched])
                generated.blocked = blocked
                runs.append(lambda prog=prog, bufs=bufs: prog.run(bufs))
            ta = torch.tensor(a)
            runs.append(lambda ta=ta, op=op: getattr(ta, op)())
            new, old, ref = interleaved_medians(runs, rounds=9)
            print(f"({n},) {op}: kernels split/unsplit {new / old:5.2f}x  /torch: unsplit "
                  f"{old / ref:6.2f}x split {new / ref:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
