"""Cliff hunt: programs of the issue's families at shapes drawn from a seed, off every table's.

    python bench/cliffs.py [--seed N] [--count N] [--rounds N] [--family NAME,...] [--list]

Draws `--count` points (default 40) round-robin over the families of issue 32 (layernorm ->
linear -> relu -> linear -> softmax, row max, linear + bias + gelu, conv2d with odd strides and
filters, attention, reductions over every axis, elementwise with broadcasts, pooling, cumsum,
gather), each at one of five kinds of shape, also in turn: tiny, prime, batch 1, tall, skinny;
the sizes within a kind come from the seed (`--seed`, default 0), so a new seed is a new set of
shapes none of the work was tuned on. Each point runs as bench/sweep.py's do (rulegrad through
`rulegrad.jit`, torch eager on the same threads, medians of interleaved rounds, outputs checked
against torch) and prints rulegrad's time, torch's and torch / rulegrad (< 1: slower); a point
over 1.5x torch's time (speed < 0.67) and over 0.1 ms is flagged CLIFF. `--list` prints the
points without running them. torch is bench-only (`pip install -e ".[bench]"`).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

import numpy as np
from harness import geomean, torch_module
from sweep import SMALL, run_point
from workloads import point

KINDS = ("tiny", "prime", "batch1", "tall", "skinny")
PRIMES = (97, 101, 127, 131, 251, 257, 509, 521, 1021, 1031, 2039, 4093)
# elements of the largest input a drawn point may have: a few ms a call on one core
MAX_ELEMENTS = 1 << 21


class Sizes:
    """The sizes of one kind of shape, drawn from `rng`: `lead()` the batch-like first size,
    `mid()` the others."""

    def __init__(self, kind: str, rng: np.random.Generator) -> None:
        self.kind, self.rng = kind, rng

    def _pick(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def lead(self) -> int:
        k = self.kind
        return (self._pick(1, 7) if k == "tiny" else int(self.rng.choice(PRIMES[:6]))
                if k == "prime" else 1 if k == "batch1" else self._pick(2000, 9000)
                if k == "tall" else self._pick(2, 6))

    def mid(self) -> int:
        k = self.kind
        return (self._pick(1, 9) if k == "tiny" else int(self.rng.choice(PRIMES))
                if k == "prime" else self._pick(64, 1500) if k == "batch1"
                else self._pick(3, 40) if k == "tall" else self._pick(1000, 6000))


def _fit(shape: list[int], keep: int = 0) -> list[int]:
    """Halve the largest sizes (past the first `keep`) until their product fits MAX_ELEMENTS."""
    shape = list(shape)
    while math.prod(shape) > MAX_ELEMENTS:
        i = max(range(keep, len(shape)), key=lambda j: shape[j])
        shape[i] = max(1, shape[i] // 2)
    return shape


def _mlp(s: Sizes) -> tuple:
    b, d, h = _fit([s.lead(), s.mid(), s.mid()])
    d, h = _fit([d, h])
    return (b, d, h, max(2, s.mid() % 1000))


def _row_max(s: Sizes) -> tuple:
    return (1, *_fit([s.lead(), s.mid()]))


def _linear_gelu(s: Sizes) -> tuple:
    m, k, n = s.lead(), s.mid(), s.mid()
    return (*_fit([m, k])[:1], *_fit([k, n]))


def _conv(s: Sizes) -> tuple:
    rng = s.rng
    ksize, stride = int(rng.choice((1, 3, 5, 7))), int(rng.choice((1, 2, 3)))
    n = 1 if s.kind in ("batch1", "skinny") else min(s.lead(), 8)
    c = min(s.mid(), 64) if s.kind != "tiny" else s.mid()
    hw = max(ksize + 1, min(s.mid(), 97) if s.kind != "tall" else s._pick(60, 130))
    o = min(s.mid(), 64)
    n, c, hw, _ = _fit([n, c, hw, hw], keep=2)
    hw = max(hw, ksize + 1)
    return (n, c, hw, o, ksize, stride, 1, ksize // 2 if rng.integers(2) else 0, 1)


def _attention(s: Sizes) -> tuple:
    heads = s._pick(1, 7)
    seq = min(s.mid(), 1100)
    d = int(s.rng.choice((8, 24, 40, 64, 72)))
    return (min(s.lead(), 4), heads, seq, d, int(s.rng.integers(2)))


def _sum_axes(s: Sizes) -> tuple:
    shape = _fit([s.lead(), s.mid(), s.mid()])
    return (int(s.rng.choice((1, 2, 4, 3, 6))), *shape)


def _bcast(s: Sizes) -> tuple:
    return tuple(_fit([s.lead(), s.mid(), s._pick(1, 9), s.mid()]))


def _pool(s: Sizes) -> tuple:
    k = s._pick(2, 5)
    n = 1 if s.kind == "batch1" else min(s.lead(), 8)
    c, hw = _fit([min(s.mid(), 128), max(k + 1, min(s.mid(), 200))])
    return (n, c, max(hw, k + 1), k, s._pick(1, k))


def _cumsum(s: Sizes) -> tuple:
    return (int(s.rng.integers(2)), *_fit([s.lead(), s.mid()]))


def _gather(s: Sizes) -> tuple:
    n, d = _fit([s.lead(), s.mid()])
    return (n, d, max(1, min(s.mid(), 4 * d)))


# family (bench/workloads.py's) -> its shape from the sizes of one kind
DRAWS: dict[str, tuple[str, Callable[[Sizes], tuple]]] = {
    "mlp": ("mlp", _mlp), "row_max": ("max", _row_max),
    "linear_gelu": ("linear_gelu", _linear_gelu),
    "conv2d": ("conv2d_full", _conv), "attention": ("attention4", _attention),
    "sum_axes": ("sum_axes", _sum_axes), "bcast": ("bcast4", _bcast),
    "pool_max": ("pool_max", _pool), "pool_avg": ("pool_avg", _pool),
    "cumsum": ("cumsum", _cumsum), "gather": ("gather", _gather),
}


def draw(seed: int, count: int, families: list[str]) -> list[tuple[str, str, tuple]]:
    """`count` points (kind, workloads family, shape), round-robin over `families` and the
    kinds (the kind advancing each time the families come round), sizes from `seed`."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        family, kind = families[i % len(families)], KINDS[(i // len(families) + i) % len(KINDS)]
        name, how = DRAWS[family]
        out.append((kind, name, how(Sizes(kind, rng))))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--family", default="", help=f"comma-separated, of: {', '.join(DRAWS)}")
    ap.add_argument("--list", action="store_true", help="print the points, run none")
    args = ap.parse_args(argv)
    families = args.family.split(",") if args.family else list(DRAWS)
    unknown = sorted(set(families) - set(DRAWS))
    if unknown:
        ap.error(f"unknown family {', '.join(unknown)}")
    points = draw(args.seed, args.count, families)
    if args.list:
        for kind, name, shape in points:
            print(f"{kind:<7} {name}:{'x'.join(map(str, shape))}")
        return 0
    torch = torch_module()
    if torch is None:
        print("bench/cliffs.py needs torch: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    print(f"{'kind':<7} {'point':<40} {'rulegrad ms':>11} {'torch ms':>9} {'speed':>7}")
    speeds, bad, cliffs = [], 0, 0
    for kind, name, shape in points:
        r = run_point(torch, point(name, *shape), args.rounds, True)
        speed = r["torch"] / r["ours"]
        cliff = speed < 1 / 1.5 and r["ours"] >= SMALL
        speeds.append(speed)
        bad += not r["ok"]
        cliffs += cliff
        flag = ("" if r["ok"] else "  WRONG") + ("  CLIFF" if cliff else "")
        print(f"{kind:<7} {r['name']:<40} {r['ours'] * 1e3:>11.3f} {r['torch'] * 1e3:>9.3f} "
              f"{speed:>6.2f}x{flag}", flush=True)
    print(f"\ngeomean speed over torch eager {geomean(speeds):.2f}x over {len(speeds)} points; "
          f"worst {min(speeds):.2f}x; {cliffs} cliffs (> 1.5x torch's time, >= 0.1 ms); "
          f"{bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
