"""Small max-pool forwards called as users call them (a fresh Tensor of host data, pooled, read
as numpy), the pool's graph built per call by its Tensor ops (old) and re-read from the graph
kept per shape and arguments (new, runtime/pool_graphs.py), against torch eager. Medians of
interleaved rounds in one run; outputs checked against torch.

    python bench/pool_calls.py
"""

from __future__ import annotations

import numpy as np
from harness import geomean, interleaved_medians, torch_module

# (input shape, window, stride, padding): small images, a batch of tiny ones, a ResNet stem's
# pool at batch 1, prime sizes, a 1-channel tall one
CASES = [((1, 16, 32, 32), 2, 2, 0), ((8, 3, 28, 28), 2, 2, 0), ((1, 64, 56, 56), 3, 2, 1),
         ((1, 8, 23, 29), 3, 2, 1), ((2, 5, 17, 13), 2, 2, 0), ((1, 1, 128, 16), 2, 2, 0)]


def main() -> None:
    from rulegrad import Tensor
    from rulegrad.runtime.nn import pool_pads, windows

    torch = torch_module()
    olds, news = [], []
    for shape, k, s, p in CASES:
        a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

        def old(a=a, k=k, s=s, p=p):
            k_, s_, d_ = windows("max_pool2d", k, s, 1)
            return Tensor(a)._max_pool(k_, s_, d_, pool_pads(p, 2)).numpy()

        def new(a=a, k=k, s=s, p=p):
            return Tensor(a).max_pool2d(k, stride=s, padding=p).numpy()

        fns = [old, new]
        if torch is not None:
            ta = torch.tensor(a)
            fns.append(lambda ta=ta, k=k, s=s, p=p:
                       torch.nn.functional.max_pool2d(ta, k, stride=s, padding=p).numpy())
            want = fns[2]()
            assert np.array_equal(old(), want) and np.array_equal(new(), want)
        t = interleaved_medians(fns, rounds=7)
        line = f"{str(shape):16} k={k} s={s} p={p}  new/old {t[1] / t[0]:5.2f}x"
        if torch is not None:
            olds.append(t[0] / t[2])
            news.append(t[1] / t[2])
            line += f"  /torch: old {t[0] / t[2]:5.2f}x new {t[1] / t[2]:5.2f}x " \
                    f"(torch {t[2] * 1e6:6.1f} us)"
        print(line, flush=True)
    if news:
        print(f"geomean /torch: old {geomean(olds):.2f}x new {geomean(news):.2f}x")


if __name__ == "__main__":
    main()
