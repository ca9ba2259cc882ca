"""What jump threading costs the kernels with a gated read (backends/c/flags.py: gcc 12.2
miscompiled some of them under -fno-thread-jumps, so they are built with -fthread-jumps).

Each program is realized with its kernels built both ways ("new": as rulegrad builds them;
"old": every kernel as if it had no gated read, the flags of before), interleaved in one
process, the order alternating per round; prints the median ratio new / old per program and
which of its kernels have a gated read (a program with none is a control: the same library
both ways). `python bench/gated_flags.py [ROUNDS]`; run it with RULEGRAD_THREADS=1.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from rulegrad import Tensor
from rulegrad.backends.c import build
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel


def programs() -> dict[str, Callable[[], Tensor]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 32, 64, 64)).astype(np.float32)
    rows = rng.standard_normal((256, 1031)).astype(np.float32)
    ints = rng.integers(-9, 9, (64, 5, 7)).astype(np.int32)
    small = rng.standard_normal((4, 16, 31, 31)).astype(np.float32)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    return {
        "max_pool2d pad 1": lambda: Tensor(x).max_pool2d(3, stride=1, padding=1),
        "avg_pool2d pad 1": lambda: Tensor(x).avg_pool2d(3, stride=1, padding=1),
        "padded row sums": lambda: Tensor(rows).pad(((0, 0), (3, 6))).reshape(256, 13, 80)
        .sum(2),
        "cumsum 64x5x7 axis 1": lambda: Tensor(ints).cumsum(1),
        "window of 3 shifts": lambda: (Tensor(rows).pad(((0, 0), (2, 2)))[:, :1031]
                                       + Tensor(rows).pad(((0, 0), (2, 2)))[:, 4:]),
        "conv2d pad 1 (control)": lambda: Tensor(small).conv2d(Tensor(w), padding=1),
    }


def main(rounds: int = 12) -> None:
    progs = programs()
    new = build.cflags
    # "old": the flags of a kernel without a gated read, whatever it has
    modes = {"new": new, "old": lambda kind=None, openmp=True, gated=False: new(kind, openmp)}
    for name, make in progs.items():
        gated = [render_kernel(optimize_kernel(lower_only(it.ast)), "k").gated
                 for it in make().schedule()]
        print(f"{name:24s} kernels with a gated read: {gated}")
    times: dict[str, dict[str, list[float]]] = {p: {m: [] for m in modes} for p in progs}
    try:
        for r in range(rounds):
            for name, make in progs.items():
                order = list(modes.items())
                for mode, flags in order if r % 2 else order[::-1]:
                    build.cflags = flags  # type: ignore[assignment]
                    make().realize()  # (built and cached: the timed call runs it)
                    t0 = time.perf_counter()
                    make().realize()
                    times[name][mode].append(time.perf_counter() - t0)
    finally:
        build.cflags = new  # type: ignore[assignment]
    for name in progs:
        a, b = np.median(times[name]["new"]), np.median(times[name]["old"])
        print(f"{name:24s} new / old = {a / b:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12)
