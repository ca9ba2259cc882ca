"""max_pool2d's and avg_pool2d's forward and backward against torch's, interleaved in one run.

In: nothing (a few window shapes, small to large). Out: per shape, rulegrad's median seconds
per step over torch's (a ratio: the machine is shared and noisy), and the first call's seconds
(compiling its kernels). The gradient goes to the first maximum of each window (torch's).
Windows that do not overlap are cut by a reshape (`_pool_apart`), and their max's gradient is
found by rules/gradient_helpers.py's `first_max_grad`. Overlapping windows (stride < kernel, or
dilated) are reduced one axis at a time over stacked offsets: avg_pool2d sums strided views
(`_window_sum`), max_pool2d takes the max of a stack of the window's offsets (`_window_max`,
its gradient `stacked_max_grad`). For those rows the repeat trick's path (`_pool`, the path
before: for max, its windows marked for `first_max_grad`) is timed in the same run, as
"repeat/ours", and for max the forward alone too ("fwd": ours/torch, repeat/ours).

    python bench/pool_backward.py [--only SUBSTRING] [--without-peel]

`--only` keeps the rows whose printed case holds SUBSTRING (`--only "p=1"`); `--without-peel`
switches opt.rules' peel action off (rules/peel_helpers.py), to compare the kernels before it.
Every max row times the forward alone too ("fwd": ours/torch).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from harness import interleaved_medians, torch_module

# (input shape, window, stride, padding, dilation): batch 1 with one 64x64 window, a large
# batch of 8x8, the common 2x2, a window that is not a square, and overlapping windows (stride
# < window: the repeat trick's path, whose gradient sums over every repeat of the input) of
# prime sizes, with padding and dilation, a small padded one, and a ResNet stem's 3x3 stride 2
# pool
SHAPES = [((1, 1, 64, 64), 64, None, 0, 1), ((16, 32, 64, 64), 8, None, 0, 1),
          ((4, 8, 32, 32), 2, None, 0, 1), ((2, 3, 61, 37), (5, 3), None, 0, 1),
          ((2, 4, 31, 31), 3, 1, 0, 1), ((1, 16, 37, 37), 3, 2, 0, 1), ((4, 8, 57, 57), 5, 2, 0, 1),
          ((4, 8, 57, 57), 3, 2, 1, 1), ((2, 8, 41, 43), 3, 1, 1, 2), ((1, 8, 23, 29), 3, 2, 1, 1),
          ((8, 64, 56, 56), 3, 2, 1, 1)]
POOLS = ("max", "avg")


def _pairs(v, default):
    v = default if v is None else v
    return v if isinstance(v, tuple) else (v, v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="rows whose case holds this text")
    parser.add_argument("--without-peel", action="store_true", help="no peel action")
    args = parser.parse_args()
    if args.without_peel:
        from rulegrad.rules import peel_helpers
        peel_helpers.PEEL_MAX = -1  # (no border is narrow enough: no loop is peeled)
    from rulegrad import Tensor
    from rulegrad.runtime.ops import Ops

    torch = torch_module()
    for (shape, k, s, p, d), kind in ((case, kind) for case in SHAPES for kind in POOLS):
        if kind == "avg" and d != 1:  # (torch's avg_pool2d has no dilation)
            continue
        case = f"{str(shape):18} k={k!s:7} s={s!s:5} p={p} d={d} {kind}"
        if args.only not in case:
            continue
        a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        kw = dict(stride=s, padding=p) | (dict(dilation=d) if d != 1 else {})

        def ours(a=a, k=k, kw=kw, kind=kind) -> np.ndarray:
            x = Tensor(a, requires_grad=True)
            pooled = x.max_pool2d(k, **kw) if kind == "max" else x.avg_pool2d(k, **kw)
            (pooled * 1.5).sum().backward()
            return x.grad.numpy()

        def theirs(a=a, k=k, kw=kw, kind=kind) -> np.ndarray:
            x = torch.tensor(a, requires_grad=True)
            pool = getattr(torch.nn.functional, f"{kind}_pool2d")
            (pool(x, k, **kw) * 1.5).sum().backward()
            return x.grad.numpy()

        t0 = time.perf_counter()
        got = ours()
        first = time.perf_counter() - t0
        if torch is None:
            print(f"{shape} k={k} s={s} {kind}: first call {first:.2f}s (no torch to compare)")
            continue
        np.testing.assert_allclose(got, theirs(), rtol=1e-6, atol=1e-7)
        kk, ss, dd = _pairs(k, k), _pairs(s, k), _pairs(d, 1)
        pads = ((0, 0),) * 2 + tuple((p, p) for _ in kk)
        extra = ""
        if kind == "avg" and any(a_ > b_ for a_, b_ in zip(kk, ss)):
            def repeat(a=a, kk=kk, ss=ss, pads=pads) -> np.ndarray:
                x = Tensor(a, requires_grad=True)
                (x.pad(pads)._pool(kk, ss).mean((-2, -1)) * 1.5).sum().backward()
                return x.grad.numpy()

            mine, ref, old = interleaved_medians([ours, theirs, repeat])
            extra = f"   repeat/ours {old / mine:5.1f}x"
        elif kind == "max" and (any(a_ > b_ for a_, b_ in zip(kk, ss)) or dd != (1, 1)):
            def windows(x, kk=kk, ss=ss, dd=dd, pads=pads):  # the path before: the repeat trick
                marked = x.pad(pads, value=x.dtype.min)._pool(kk, ss, dd).uop
                return Tensor(marked.f(Ops.CONTIGUOUS_BACKWARD)).max((-2, -1))

            def repeat(a=a, windows=windows) -> np.ndarray:
                x = Tensor(a, requires_grad=True)
                (windows(x) * 1.5).sum().backward()
                return x.grad.numpy()

            def fwd(a=a, k=k, kw=kw) -> np.ndarray:
                return Tensor(a).max_pool2d(k, **kw).numpy()

            def fwd_torch(a=a, k=k, kw=kw) -> np.ndarray:
                return torch.nn.functional.max_pool2d(torch.tensor(a), k, **kw).numpy()

            def fwd_repeat(a=a, windows=windows) -> np.ndarray:
                return windows(Tensor(a)).numpy()

            np.testing.assert_array_equal(repeat(), got)
            np.testing.assert_array_equal(fwd_repeat(), fwd())
            mine, ref, old, f_mine, f_ref, f_old = interleaved_medians(
                [ours, theirs, repeat, fwd, fwd_torch, fwd_repeat])
            extra = (f"   repeat/ours {old / mine:5.1f}x   fwd: ours/torch {f_mine / f_ref:5.2f}x"
                     f" repeat/ours {f_old / f_mine:4.2f}x")
        elif kind == "max":  # (windows apart: the forward alone too)
            def fwd(a=a, k=k, kw=kw) -> np.ndarray:
                return Tensor(a).max_pool2d(k, **kw).numpy()

            def fwd_torch(a=a, k=k, kw=kw) -> np.ndarray:
                return torch.nn.functional.max_pool2d(torch.tensor(a), k, **kw).numpy()

            mine, ref, f_mine, f_ref = interleaved_medians([ours, theirs, fwd, fwd_torch])
            extra = f"   fwd: ours/torch {f_mine / f_ref:5.2f}x"
        else:
            mine, ref = interleaved_medians([ours, theirs])
        print(f"{case}  ours/torch "
              f"{mine / ref:7.2f}x   first call {first:.2f}s{extra}", flush=True)


if __name__ == "__main__":
    main()
