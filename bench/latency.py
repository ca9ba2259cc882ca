"""Per-call latency of small programs, rulegrad beside torch eager, called every way a user calls
them.

    python bench/latency.py [--rounds N] [--size N]

Each program (a tiny add, a 3-op chain with a relu) is called through `rulegrad.jit` with
realized Tensors by keyword (as bench/peers.py calls it), eagerly over realized Tensors (a
realize plan), and eagerly from fresh numpy arrays (a Tensor made from host data each call, as
torch.from_numpy is), through the jit from such Tensors and with the arrays themselves as
arguments; each result is read with `.numpy()` and checked against numpy. Per side:
the wall-clock median of interleaved rounds (harness.py), and the least time of many short
batches, which is what a quiet machine sees (on a shared machine the median is mostly the
other processes). Ratios are rulegrad's time over torch eager's of the same call (< 1: faster).
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np
from harness import interleaved_medians, torch_module

import rulegrad
from rulegrad import Tensor


def _least(fn, batch: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=batch, repeat=repeat)) / batch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--size", type=int, default=16)
    args = ap.parse_args(argv)
    torch = torch_module()
    if torch is None:
        print("bench/latency.py needs torch: pip install -e '.[bench]'")
        return 2
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, args.size)).astype(np.float32)
    tx, ty = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
    rx, ry = Tensor(x).realize(), Tensor(y).realize()
    programs = {  # name: (rulegrad's, torch's, numpy's)
        "add": (lambda a, b: a + b, lambda a, b: a + b, x + y),
        "3-op": (lambda a, b: ((a * b).exp() + a).relu(),
                 lambda a, b: torch.relu(torch.exp(a * b) + a), np.maximum(np.exp(x * y) + x, 0)),
    }
    rows = []
    for name, (rg, tf, want) in programs.items():
        jitted = rulegrad.jit(rg)
        sides = {
            "torch": lambda tf=tf: tf(a=tx, b=ty).numpy(),
            "jit": lambda j=jitted: j(a=rx, b=ry).numpy(),
            "eager": lambda rg=rg: rg(rx, ry).numpy(),
            "torch from numpy": lambda tf=tf: tf(torch.from_numpy(x), torch.from_numpy(y)).numpy(),
            "eager from numpy": lambda rg=rg: rg(Tensor(x), Tensor(y)).numpy(),
            "jit from numpy": lambda j=jitted: j(a=Tensor(x), b=Tensor(y)).numpy(),
            # (the arrays themselves as arguments: copied into the replay's own buffers)
            "jit of numpy arrays": lambda j=jitted: j(a=x, b=y).numpy(),
        }
        with torch.no_grad():
            for side, fn in sides.items():
                for _ in range(5):  # (the jit records on its first calls)
                    fn()
                np.testing.assert_allclose(fn(), want, rtol=1e-5, err_msg=side)
            least = {side: _least(fn, 100, 100) for side, fn in sides.items()}
            medians = dict(zip(sides, interleaved_medians(list(sides.values()), args.rounds)))
        for side in sides:
            ref = "torch from numpy" if "numpy" in side else "torch"
            rows.append((f"{name} {side}", least[side], least[side] / least[ref], medians[side],
                         medians[side] / medians[ref]))
    print(f"{'program, call':<30} {'least us':>9} {'/ torch':>8} {'median us':>10} {'/ torch':>8}")
    for label, lt, lr, md, mr in rows:
        print(f"{label:<30} {lt * 1e6:>9.2f} {lr:>7.2f}x {md * 1e6:>10.2f} {mr:>7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
