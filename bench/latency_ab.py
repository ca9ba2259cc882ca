"""bench/latency.py's eager calls, old source trees against this one, interleaved in one run.

    python bench/latency_ab.py OLD_TREE [OLD_TREE ...] [--rounds N]

OLD_TREE is a checkout of another commit (`git archive main | tar -x -C /tmp/old`). One worker
process per tree imports rulegrad from it (through the editable install's path finder, as
bench/ab.py's workers do) and times, per case, rulegrad's call and torch eager's in the same
process (the least of short batches each); the workers take turns, case by case, round by
round, so every tree sees the same machine. Per case and tree: the median time and the median
of the per-round ratios to torch eager (< 1: faster than torch). Each worker checks its values
against numpy first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from ab import USE_TREE

TREE = Path(__file__).resolve().parent.parent

_WORKER = r'''
import json, sys, timeit
root, here = sys.argv[1:3]
''' + USE_TREE + r'''import numpy as np
import torch
import rulegrad
from rulegrad import Tensor
assert rulegrad.__file__.startswith(root), rulegrad.__file__
x, y = np.random.default_rng(0).standard_normal((2, 16)).astype(np.float32)
tx, ty = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
rx, ry = Tensor(x).realize(), Tensor(y).realize()
three = lambda a, b: ((a * b).exp() + a).relu()
t3 = lambda a, b: torch.relu(torch.exp(a * b) + a)
want3 = np.maximum(np.exp(x * y) + x, 0)
cases = {  # name: (rulegrad's call, torch's, numpy's value)
    "add eager": (lambda: (rx + ry).numpy(), lambda: (tx + ty).numpy(), x + y),
    "add eager from numpy": (lambda: (Tensor(x) + Tensor(y)).numpy(),
                             lambda: (torch.from_numpy(x) + torch.from_numpy(y)).numpy(), x + y),
    "3-op eager": (lambda: three(rx, ry).numpy(), lambda: t3(tx, ty).numpy(), want3),
    "3-op eager from numpy": (lambda: three(Tensor(x), Tensor(y)).numpy(),
                              lambda: t3(torch.from_numpy(x), torch.from_numpy(y)).numpy(), want3),
}
with torch.no_grad():
    for rg, tf, want in cases.values():
        for _ in range(20):  # (planned, warm)
            rg(), tf()
        np.testing.assert_allclose(rg(), want, rtol=1e-5)
    print(json.dumps(list(cases)), flush=True)
    for line in sys.stdin:
        rg, tf, _ = cases[line.strip()]
        least = [min(timeit.repeat(fn, number=50, repeat=40)) / 50 for fn in (rg, tf)]
        print(json.dumps(least), flush=True)
'''


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", nargs="+", help="other source trees of rulegrad")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    trees = [str(Path(t).resolve()) for t in args.old] + [str(TREE)]
    workers = []
    for i, tree in enumerate(trees):  # (each with a compile cache of its own)
        cache = f"{os.environ.get('RULEGRAD_CACHE', '/tmp/rulegrad-cache')}-ab{i}"
        env = {**os.environ, "RULEGRAD_CACHE": cache}
        workers.append(subprocess.Popen([sys.executable, "-c", _WORKER, tree, str(TREE)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env=env))
    names = [json.loads(w.stdout.readline()) for w in workers][0]
    got: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for r in range(args.rounds):
        for name in names:
            order = range(len(workers)) if r % 2 == 0 else reversed(range(len(workers)))
            for i in order:
                workers[i].stdin.write(name + "\n")
                workers[i].stdin.flush()
                least = json.loads(workers[i].stdout.readline())
                got.setdefault((i, name), []).append(tuple(least))
    for w in workers:
        w.stdin.close()
        w.wait()
    print(f"{'case':<24}" + "".join(f"{Path(t).name[-20:]:>26}" for t in trees))
    for name in names:
        cells = []
        for i in range(len(trees)):
            runs = got[(i, name)]
            us = statistics.median(a for a, _ in runs) * 1e6
            ratio = statistics.median(a / b for a, b in runs)
            cells.append(f"{us:7.2f} us {ratio:5.2f}x torch")
        print(f"{name:<24}" + "".join(f"{c:>26}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
