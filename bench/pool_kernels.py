"""A padded max pool's kernels with opt.rules' peel action and without, interleaved in one run.

In: a few padded max_pool2d cases (small to a ResNet stem's, prime sizes). Out: per case, the
forward's and the backward's kernels alone (the same schedule compiled twice: peel on, and
`peel_helpers.PEEL_MAX` -1, no border narrow enough) as a ratio new/old, and each over torch's
forward and torch's whole step (forward with indices and backward). Medians of interleaved
rounds; the outputs of the two builds are checked equal bit for bit.

    python bench/pool_kernels.py
"""

from __future__ import annotations

import numpy as np
from harness import interleaved_medians, torch_module

# (input shape, window, stride, padding): a ResNet stem's pool and smaller, a tall image of 3
# channels, a small one, a 5x5 window at stride 1 over a wide image
CASES = [((8, 64, 56, 56), 3, 2, 1), ((4, 8, 57, 57), 3, 2, 1), ((2, 8, 41, 43), 3, 1, 1),
         ((1, 8, 23, 29), 3, 2, 1), ((1, 3, 223, 223), 3, 2, 1), ((4, 16, 31, 97), 5, 1, 2)]


def main() -> None:
    from rulegrad import Tensor
    from rulegrad.backends.c import compile_program
    from rulegrad.rules import peel_helpers

    torch = torch_module()
    peel = peel_helpers.PEEL_MAX
    for shape, k, s, p in CASES:
        a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        x = Tensor(a, requires_grad=True)
        y = x.max_pool2d(k, stride=s, padding=p)
        (y * 1.5).sum().backward()
        runs = []
        for t in (y, x.grad):
            sched = t.schedule()
            bufs = [[b.ensure() for b in item.bufs] for item in sched]
            outs = []
            for limit, tag in ((peel, ""), (-1, "_whole")):  # (a name of its own: its own build)
                peel_helpers.PEEL_MAX = limit
                prog = compile_program([(item.name + tag, item.ast) for item in sched])
                peel_helpers.PEEL_MAX = peel
                prog.run(bufs)
                outs.append(np.array(bufs[-1][0], copy=True))
                runs.append(lambda prog=prog, bufs=bufs: prog.run(bufs))
            np.testing.assert_array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8))
        if torch is None:
            new_f, old_f, new_b, old_b = interleaved_medians(runs)
            print(f"{shape} k={k} s={s} p={p}: fwd new/old {new_f / old_f:.2f}x, "
                  f"bwd new/old {new_b / old_b:.2f}x (no torch to compare)")
            continue
        ta = torch.tensor(a)

        def forward(ta=ta, k=k, s=s, p=p) -> None:
            torch.nn.functional.max_pool2d(ta, k, stride=s, padding=p)

        def step(a=a, k=k, s=s, p=p) -> None:
            xt = torch.tensor(a, requires_grad=True)
            (torch.nn.functional.max_pool2d(xt, k, stride=s, padding=p) * 1.5).sum().backward()

        new_f, old_f, new_b, old_b, ref_f, ref_b = interleaved_medians(runs + [forward, step])
        print(f"{str(shape):17} k={k} s={s} p={p}   fwd kernels new/old {new_f / old_f:5.2f}x "
              f"(/torch: old {old_f / ref_f:5.2f}x new {new_f / ref_f:5.2f}x)   bwd kernels "
              f"new/old {new_b / old_b:5.2f}x (/torch's step: old {old_b / ref_b:5.2f}x new "
              f"{new_b / ref_b:5.2f}x)", flush=True)


if __name__ == "__main__":
    main()
