"""What `-fvect-cost-model=very-cheap` (backends/c/flags.py, a gcc 12.2 workaround) costs: each
case of bench/kernels.py built with and without it, its kernels timed side by side in one
process (best of 25 calls in 5 interleaved rounds; run with OMP_NUM_THREADS=1 on a busy
machine).

    python bench/cost_model.py [CASE_PREFIX,...]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

os.environ["RULEGRAD_CACHE"] = tempfile.mkdtemp(prefix="rulegrad-cost-model-")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(argv: list[str]) -> int:
    import kernels

    from rulegrad import Tensor
    from rulegrad.backends.c import compile_program, flags
    from rulegrad.backends.c import run as crun

    cheap = flags.SEMANTIC
    dynamic = tuple(f for f in cheap if not f.startswith("-fvect-cost-model"))
    only = argv[0].split(",") if argv else None
    for case in kernels.CASES:
        if only and not any(case.name.startswith(o) for o in only):
            continue
        rng = np.random.default_rng(0)
        ts = {k: Tensor(rng.standard_normal(s).astype(np.float32)).realize()
              for k, s in case.inputs.items()}
        sched = case.rg(**ts).schedule()
        bufs = [[b.ensure() for b in item.bufs] for item in sched]
        progs = {}
        for name, semantic in (("very-cheap", cheap), ("dynamic", dynamic)):
            flags.SEMANTIC = semantic  # read by cflags() at each build
            crun._programs.clear()
            progs[name] = compile_program(sched)
        flags.SEMANTIC = cheap
        best = {name: float("inf") for name in progs}
        for _ in range(5):
            for name, prog in progs.items():
                prog.run(bufs)
                for _ in range(5):
                    t0 = time.perf_counter()
                    prog.run(bufs)
                    best[name] = min(best[name], time.perf_counter() - t0)
        c, d = best["very-cheap"], best["dynamic"]
        print(f"{case.name:32s} very-cheap {c * 1e3:8.2f} ms  dynamic {d * 1e3:8.2f} ms  "
              f"cheap/dynamic {c / d:5.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
