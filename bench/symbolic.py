"""Symbolic sizes: the time of one realize at a new length, against rebuilding per length.

    python bench/symbolic.py [--lengths N] [--max M]

One program (softmax over a growing prefix of a (M, 64) buffer, then a row sum) is realized at
N lengths two ways, in a fresh compile cache each:

- symbolic: the length is a bound `Variable("n", 1, M)`: the first length schedules and builds,
  every later one replays the schedule and the library (the figure: the median of those);
- concrete: the length is a plain int: every length is a new program, scheduled and compiled.

Prints both medians, their ratio, and the compiler runs each way (counted, not timed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np


def _run(lengths: list[int], symbolic: bool, x, Tensor, Variable) -> tuple[list[float], int]:
    from rulegrad.backends.c import build

    compiles = build.stats["compiles"]
    times = []
    n = Variable("n", 1, x.shape[0])
    for length in lengths:
        t0 = time.perf_counter()
        end = n.bind(length) if symbolic else length
        out = x.shrink(((0, end), None)).softmax(0).sum(1)
        out.numpy()
        times.append(time.perf_counter() - t0)
    return times, build.stats["compiles"] - compiles


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, default=8)
    ap.add_argument("--max", type=int, default=1024)
    args = ap.parse_args(argv)
    os.environ["RULEGRAD_CACHE"] = tempfile.mkdtemp(prefix="rg-bench-symbolic-")
    from rulegrad import Tensor, Variable

    x = Tensor(np.random.default_rng(0).standard_normal((args.max, 64)).astype(np.float32))
    rng = np.random.default_rng(1)
    lengths = [int(v) for v in rng.choice(np.arange(1, args.max + 1), args.lengths * 2,
                                          replace=False)]
    sym, sym_builds = _run(lengths[: args.lengths], True, x, Tensor, Variable)
    con, con_builds = _run(lengths[args.lengths:], False, x, Tensor, Variable)
    new_value = statistics.median(sym[1:])  # the first symbolic run builds
    rebuild = statistics.median(con)
    print(f"symbolic: first run {sym[0] * 1e3:8.2f} ms, then a new length {new_value * 1e3:8.3f} ms"
          f" (median of {len(sym) - 1}); compiler runs {sym_builds}")
    print(f"concrete: a new length {rebuild * 1e3:8.2f} ms (median of {len(con)}); "
          f"compiler runs {con_builds}")
    print(f"ratio (rebuild per length / run at a new value): {rebuild / new_value:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
