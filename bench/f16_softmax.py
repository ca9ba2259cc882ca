"""float16 softmax, log_softmax and logsumexp along rows against torch eager (f16_60, issue
32/33), CPU time.

In: float16 rows of 5..65 x 1000, 8192 x 1000 and 1024 x 1024 (or ROWSxCOLS arguments). Out:
per case the kernels alone (compiled once, run on their buffers) and torch eager's call, each a
median over interleaved rounds of the process's CPU time per call (the machine is shared: wall
time counts other sessions' work), and torch's time over ours (>1: faster than torch). torch's
output is the check (within float16's rounding).

    python bench/f16_softmax.py [ROWSxCOLS ...]
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from harness import THREADS, geomean, torch_module

SHAPES = [(5, 1000), (17, 1000), (65, 1000), (8192, 1000), (1024, 1024)]


def cpu_medians(fns, rounds: int = 9, min_seconds: float = 0.03) -> list[float]:
    """The median CPU seconds per call of each function over interleaved rounds (A, B, A, B...),
    each round a batch sized by a first call to last about `min_seconds`."""
    batch = []
    for fn in fns:
        fn()
        t0 = time.process_time()
        fn()
        batch.append(max(1, min(2000, int(min_seconds / max(time.process_time() - t0, 1e-6)))))
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, n, ts in zip(fns, batch, times):
            t0 = time.process_time()
            for _ in range(n):
                fn()
            ts.append((time.process_time() - t0) / n)
    return [statistics.median(ts) for ts in times]


def main() -> None:
    from rulegrad import Tensor
    from rulegrad.backends.c import compile_program

    shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1:]] or SHAPES
    torch = torch_module()
    assert torch is not None, "the ratios are to torch: pip install torch"
    rng = np.random.default_rng(0)
    ratios = []
    for shape in shapes:
        a = rng.standard_normal(shape).astype(np.float16)
        ta = torch.tensor(a)
        for op in ("softmax", "log_softmax", "logsumexp"):
            sched = getattr(Tensor(a), op)(1).schedule()
            prog = compile_program([(item.name, item.ast) for item in sched])
            bufs = [[buf.ensure() for buf in item.bufs] for item in sched]

            def ref(ta=ta, op=op):
                return getattr(torch, op)(ta, 1)

            got = getattr(Tensor(a), op)(1).numpy().astype(np.float32)
            np.testing.assert_allclose(got, ref().numpy().astype(np.float32), rtol=4e-3,
                                       atol=2e-3)
            t = cpu_medians([lambda prog=prog, bufs=bufs: prog.run(bufs), ref])
            ratios.append(t[1] / t[0])
            print(f"{'x'.join(map(str, shape)):>10} {op:11} kernels {t[0] * 1e6:9.1f} us  "
                  f"torch {t[1] * 1e6:9.1f} us  {t[1] / t[0]:5.2f}x torch (CPU time)", flush=True)
    print(f"geomean {geomean(ratios):.2f}x torch ({THREADS} threads; >1: faster than torch)")


if __name__ == "__main__":
    main()
