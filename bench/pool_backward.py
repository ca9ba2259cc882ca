"""max_pool2d's and avg_pool2d's forward and backward against torch's, interleaved in one run.

In: nothing (a few window shapes, small to large). Out: per shape, rulegrad's median seconds
per step over torch's (a ratio: the machine is shared and noisy), and the first call's seconds
(compiling its kernels). The gradient goes to the first maximum of each window (torch's), found
by rules/gradient_helpers.py's `first_max_grad`; windows that do not overlap are cut by a
reshape (`_pool_apart`). avg_pool2d of overlapping windows sums strided views one axis at a time
(`_window_sum`); for those rows the repeat trick's step (`_pool(...).mean`, its path before) is
timed in the same run, as "repeat/ours".

    python bench/pool_backward.py
"""

from __future__ import annotations

import time

import numpy as np
from harness import interleaved_medians, torch_module

# (input shape, window, stride): batch 1 with one 64x64 window, a large batch of 8x8, the
# common 2x2, a window that is not a square, and overlapping windows (stride < window: the
# repeat trick's path, whose gradient sums over every repeat of the input) of prime sizes
SHAPES = [((1, 1, 64, 64), 64, None), ((16, 32, 64, 64), 8, None), ((4, 8, 32, 32), 2, None),
          ((2, 3, 61, 37), (5, 3), None), ((2, 4, 31, 31), 3, 1), ((1, 16, 37, 37), 3, 2),
          ((4, 8, 57, 57), 5, 2)]
POOLS = ("max", "avg")


def main() -> None:
    from rulegrad import Tensor

    torch = torch_module()
    for (shape, k, s), kind in ((case, kind) for case in SHAPES for kind in POOLS):
        a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

        def ours(a=a, k=k, s=s, kind=kind) -> np.ndarray:
            x = Tensor(a, requires_grad=True)
            pooled = x.max_pool2d(k, stride=s) if kind == "max" else x.avg_pool2d(k, stride=s)
            (pooled * 1.5).sum().backward()
            return x.grad.numpy()

        def theirs(a=a, k=k, s=s, kind=kind) -> np.ndarray:
            x = torch.tensor(a, requires_grad=True)
            pool = getattr(torch.nn.functional, f"{kind}_pool2d")
            (pool(x, k, stride=s) * 1.5).sum().backward()
            return x.grad.numpy()

        t0 = time.perf_counter()
        got = ours()
        first = time.perf_counter() - t0
        if torch is None:
            print(f"{shape} k={k} s={s} {kind}: first call {first:.2f}s (no torch to compare)")
            continue
        np.testing.assert_allclose(got, theirs(), rtol=1e-6, atol=1e-7)
        kk = k if isinstance(k, tuple) else (k, k)
        ss = kk if s is None else (s if isinstance(s, tuple) else (s, s))
        if kind == "avg" and any(a_ > b_ for a_, b_ in zip(kk, ss)):
            def repeat(a=a, kk=kk, ss=ss) -> np.ndarray:
                x = Tensor(a, requires_grad=True)
                (x._pool(kk, ss).mean((-2, -1)) * 1.5).sum().backward()
                return x.grad.numpy()

            mine, ref, old = interleaved_medians([ours, theirs, repeat])
            extra = f"   repeat/ours {old / mine:5.1f}x"
        else:
            (mine, ref), extra = interleaved_medians([ours, theirs]), ""
        print(f"{str(shape):18} k={k!s:7} s={s!s:5} {kind}  ours/torch {mine / ref:7.1f}x   "
              f"first call {first:.2f}s{extra}")


if __name__ == "__main__":
    main()
