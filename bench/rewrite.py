"""graph_rewrite throughput (nodes/s) on large graphs; a benchmark, not a test.

Usage: python bench/rewrite.py [--runs 5]

Three graph shapes: a long chain (depth), a wide DAG with heavy sharing, and a chain where
half the nodes are rewritten (work per firing). The matcher is a plain Python object, so the
figures measure the engine, not a rule set (bench/matcher.py measures matchers).
"""

from __future__ import annotations

import argparse
import statistics
import time

from rulegrad import Ops, UOp, dtypes, graph_rewrite
from rulegrad.runtime.uop import toposort


class NoMatch:
    def rewrite(self, u: UOp, ctx: object = None) -> None:
        return None


class DoubleNeg:
    def rewrite(self, u: UOp, ctx: object = None) -> UOp | None:
        if u.op is Ops.NEG and u.src[0].op is Ops.NEG:
            return u.src[0].src[0]
        return None


def chain(n: int) -> UOp:
    node = UOp.const(dtypes.int32, 1)
    for i in range(n):
        node = UOp(Ops.ADD, dtypes.int32, (node, UOp.const(dtypes.int32, i % 7)))
    return node


def neg_chain(n: int) -> UOp:
    node = UOp.const(dtypes.int32, 1)
    for _ in range(n):
        node = UOp(Ops.NEG, dtypes.int32, (node,))
    return node


def wide_dag(width: int, depth: int) -> UOp:
    layer = [UOp.const(dtypes.int32, i) for i in range(width)]
    for d in range(depth):
        op = Ops.MUL if d % 2 else Ops.ADD
        layer = [UOp(op, dtypes.int32, (layer[i], layer[(i + 1) % width])) for i in range(width)]
    return UOp.sink(*layer)


def measure(build, matcher, runs: int) -> tuple[int, float]:
    times, nodes = [], 0
    for _ in range(runs):
        root = build()
        nodes = len(toposort(root))
        t0 = time.perf_counter()
        graph_rewrite(root, matcher)
        times.append(time.perf_counter() - t0)
    return nodes, statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    cases = [
        ("chain 200k, no match", lambda: chain(200_000), NoMatch()),
        ("wide 1000x200, no match", lambda: wide_dag(1000, 200), NoMatch()),
        ("neg chain 500k, all fire", lambda: neg_chain(500_000), DoubleNeg()),
    ]
    print(f"{'graph':28s} {'nodes':>9s} {'median s':>9s} {'nodes/s':>12s}")
    for name, build, matcher in cases:
        nodes, t = measure(build, matcher, args.runs)
        print(f"{name:28s} {nodes:9d} {t:9.3f} {nodes / t:12,.0f}")


if __name__ == "__main__":
    main()
