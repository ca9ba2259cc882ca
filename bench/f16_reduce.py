"""float16 reductions against torch eager, interleaved in one run (issue 32).

In: max, min, argmax, sum and mean of a 4096x4096 float16 array (and a few other shapes) down
axis 0 and along axis 1, and a float16 softmax along each axis. Out: per case, the kernels alone
(the schedule compiled once, run on its buffers) over torch eager's call on THREADS threads
(torch's output is the check: values within float16's rounding, argmax exactly). Medians of
interleaved rounds.

    python bench/f16_reduce.py [ROWSxCOLS ...]
"""

from __future__ import annotations

import sys

import numpy as np
from harness import THREADS, geomean, interleaved_medians, torch_module

SHAPES = [(4096, 4096)]
OPS = ("max", "min", "argmax", "sum", "mean", "softmax")
TORCH = {"max": "amax", "min": "amin"}  # (torch's max(axis) also gives the indices)


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
        for axis in (0, 1):
            for op in OPS:
                sched = getattr(Tensor(a), op)(axis).schedule()
                prog = compile_program([(item.name, item.ast) for item in sched])
                bufs = [[buf.ensure() for buf in item.bufs] for item in sched]
                name = TORCH.get(op, op)

                def ref(ta=ta, axis=axis, name=name):
                    return getattr(ta, name)(axis)

                got = getattr(Tensor(a), op)(axis).numpy()
                want = ref().numpy()
                if op == "argmax":
                    assert np.array_equal(got, want), (shape, axis, op)
                else:
                    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                               rtol=4e-3, atol=1e-3)
                t = interleaved_medians([lambda prog=prog, bufs=bufs: prog.run(bufs), ref])
                ratios.append(t[1] / t[0])
                print(f"{'x'.join(map(str, shape)):>11} axis {axis} {op:8} kernels "
                      f"{t[0] * 1e6:9.1f} us  torch {t[1] * 1e6:9.1f} us  "
                      f"{t[1] / t[0]:5.2f}x torch", flush=True)
    print(f"geomean {geomean(ratios):.2f}x torch ({THREADS} threads; >1: faster than torch)")


if __name__ == "__main__":
    main()
