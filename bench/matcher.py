"""Benchmark: generated vs interpreted matchers (and tinygrad's PatternMatcher), in nodes/s.

    python bench/matcher.py [--nodes 20000] [--runs 7] [--tinygrad PYTHON]

In: the rule set `sym` of rules/symbolic.rules and a fixed, seeded forest of index expressions
(RANGEs, CONSTs, + - * // %, NEG, MAX, comparisons, WHERE) in which some subexpressions fire
rules (x+0, x*1, (x//c)*c + x%c, the index split, bounds-decided compares) and most do not.
Both sides build that graph from the same serialized rows, node by node in the order a round
visits them (the same memory layout on both sides).
Out: throughput of
  - `match`:   one `matcher.rewrite(node)` per node of the graph (the matcher alone), and
  - `rewrite`: `graph_rewrite(sink, matcher)` (matcher + engine, to a fixed point),
for the generated and the interpreted matcher, and their ratio. Times are wall-clock medians
(`time.perf_counter`: what a user waits for; the `cpu` columns: medians of each side's own
process CPU time, `time.process_time`, which a busy shared machine disturbs less) of `--runs`
interleaved rounds: each round times every matcher's `match` back to back, then every
matcher's `rewrite`, the side that goes first turning each round, so a busy moment of a shared
machine falls on all of them alike (timing a side's match and rewrite together put a second of
other sides' work between two matches being compared). Besides the ratio of the medians,
`paired` is the median of the per-round ratios of each side's match to the generated
matcher's, timed moments apart.

When tinygrad is installed in a separate interpreter (`--tinygrad PATH`, default
$TINYGRAD_PYTHON, else /opt/tgenv/bin/python if it exists; tinygrad is never a dependency of
rulegrad), the same graph is rebuilt node for node in tinygrad (IDIV/MOD are its CDIV/CMOD) in
a subprocess that stays up, with a PatternMatcher holding the equivalent rules, and takes its
turn in each round (asked over a pipe, timed by itself); ratios are printed side by side.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
import weakref

from rulegrad import Ops, UOp, dtypes, graph_rewrite
from rulegrad.dsl import load
from rulegrad.generator.interp import interpret_file
from rulegrad.generator.paths import PACKAGE_RULES_DIR
from rulegrad.rules import matcher
from rulegrad.runtime.uop import toposort

# ---------------------------------------------------------------------- the graphs


def build_graph(n_nodes: int, seed: int = 0) -> UOp:
    """A SINK over index expressions; about n_nodes nodes; the same for the same seed."""
    rng = random.Random(seed)
    ranges = [UOp.range(rng.randint(2, 16), i) for i in range(8)]
    pool: list[UOp] = list(ranges)
    roots: list[UOp] = []

    def c(v: int) -> UOp:
        return UOp.const(dtypes.index, v)

    while len(toposort(UOp.sink(*roots))) < n_nodes if roots else True:
        for _ in range(200):
            a, b = rng.choice(pool), rng.choice(pool)
            # keep values small (bounds stay exact, nothing overflows)
            a, b = (x if max(abs(x.vmin), abs(x.vmax)) < 10**6 else rng.choice(ranges)
                    for x in (a, b))
            k = rng.randrange(14)
            if k == 0:
                e = a + c(0)                              # add_zero
            elif k == 1:
                e = a * c(1)                              # mul_one
            elif k == 2:
                d = rng.randint(2, 5)
                e = (a // c(d)) * c(d) + a % c(d)         # divmod_recombine
            elif k == 3:
                d = rng.randint(2, 5)
                e = (a * c(d) + rng.choice(ranges)) // c(d)  # split (fires when bounds allow)
            elif k == 4:
                e = UOp(Ops.CMPLT, dtypes.bool, (a, c(rng.randint(0, 40))))
                e = UOp(Ops.WHERE, dtypes.index, (e, a, b))
            elif k == 5:
                e = UOp(Ops.MAX, dtypes.index, (a, b))
            elif k == 6:
                e = -a
            elif k == 7:
                e = a - b
            else:                                         # plain arithmetic: no rule fires
                op = rng.choice([Ops.ADD, Ops.MUL, Ops.ADD, Ops.MUL, Ops.IDIV, Ops.MOD])
                rhs = c(rng.randint(2, 9)) if op in (Ops.IDIV, Ops.MOD) else b
                e = UOp(op, dtypes.index, (a, rhs))
            pool.append(e)
            if len(pool) > 64:
                roots.append(pool.pop(rng.randrange(8, len(pool))))
    return UOp.sink(*roots)


def serialize(root: UOp) -> list:
    """The graph as [op, dtype, arg, [source indices]] rows, sources first."""
    index: dict[UOp, int] = {}
    rows = []
    for n in toposort(root):
        index[n] = len(rows)
        arg = n.arg[0] if n.op is Ops.RANGE else n.arg
        rows.append([n.op.name, n.dtype.name, arg, [index[s] for s in n.src]])
    return rows


def rebuild(rows: list) -> UOp:
    """The graph of `serialize`'s rows, its nodes built in the rows' order, as tinygrad's side
    builds its own; the root (the last row)."""
    dts = {"index": dtypes.index, "bool": dtypes.bool, "void": dtypes.void}
    nodes: list[UOp] = []
    for op, dt, arg, src in rows:
        s = tuple(nodes[i] for i in src)
        if op == "RANGE":
            nodes.append(UOp.range(s[0], arg))
        elif op == "CONST":
            nodes.append(UOp.const(dts[dt], arg))
        else:
            nodes.append(UOp(Ops[op], dts[dt], s, arg))
    return nodes[-1]


# ---------------------------------------------------------------------- timing
Seconds = tuple[float, float]  # (wall-clock, CPU time of this process)


def match_once(nodes: list[UOp], m) -> Seconds:
    """Seconds of one `m.rewrite(node)` per node (the matcher alone)."""
    rewrite = m.rewrite
    t0, c0 = time.perf_counter(), time.process_time()
    for n in nodes:
        rewrite(n)
    return time.perf_counter() - t0, time.process_time() - c0


def rewrite_once(sink: UOp, m) -> Seconds:
    """Seconds of one `graph_rewrite(sink, m)` (matcher + engine, to a fixed point)."""
    t0, c0 = time.perf_counter(), time.process_time()
    graph_rewrite(sink, m)
    return time.perf_counter() - t0, time.process_time() - c0


TINYGRAD_SIDE = r'''
import json, statistics, sys, time
from tinygrad.dtype import dtypes
from tinygrad.uop import GroupOp
from tinygrad.uop.ops import UOp, UPat, PatternMatcher, Ops, graph_rewrite
rows = json.loads(sys.stdin.readline())
IDX = dtypes.weakint
OPS = {"IDIV": Ops.CDIV, "MOD": Ops.CMOD}
DT = {"index": IDX, "bool": dtypes.bool, "void": dtypes.void}
nodes = []
for op, dt, arg, src in rows:
    s = tuple(nodes[i] for i in src)
    if op == "RANGE": nodes.append(UOp.range(s[0], arg))
    elif op == "CONST": nodes.append(UOp.const(arg, DT[dt]))
    else: nodes.append(UOp(OPS.get(op) or Ops[op], DT[dt], s, arg))
sink = nodes[-1]

def tdiv(a, b): q = abs(a) // abs(b); return q if (a >= 0) == (b >= 0) else -q
def fold(e, a, b=None):
    x, y = a.arg, (b.arg if b is not None else None)
    if e.op is Ops.ADD: v = x + y
    elif e.op is Ops.SUB: v = x - y
    elif e.op is Ops.MUL: v = x * y
    elif e.op is Ops.NEG: v = -x
    elif e.op in (Ops.CDIV, Ops.CMOD):
        if y == 0: return None
        v = tdiv(x, y) if e.op is Ops.CDIV else x - y * tdiv(x, y)
    elif e.op is Ops.MAX: v = max(x, y)
    elif e.op is Ops.CMPLT: v = x < y
    elif e.op is Ops.CMPNE: v = x != y
    elif e.op is Ops.CMPEQ: v = x == y
    else: return None
    return e.const_like(v)

x, c, c1, c2, d = UPat.var("x"), UPat.cvar("c"), UPat.cvar("c1"), UPat.cvar("c2"), UPat.var("d")
def P(op, *src, **kw): return UPat(op, src=src, **kw)
def C(op, *src, **kw): return UPat(op, src=list(src), **kw)   # commutative
zero, one = UPat(Ops.CONST, arg=0), UPat(Ops.CONST, arg=1)
T, F = UPat(Ops.CONST, dtypes.bool, arg=True), UPat(Ops.CONST, dtypes.bool, arg=False)
pm = PatternMatcher([
  (C(Ops.ADD, x, zero), lambda x: x),
  (P(Ops.SUB, x, zero), lambda x: x),
  (P(Ops.SUB, x, x), lambda x: x.const_like(0)),
  (P(Ops.NEG, P(Ops.NEG, x)), lambda x: x),
  (C(Ops.MUL, x, one), lambda x: x),
  (C(Ops.MUL, x, zero), lambda x: x.const_like(0)),
  (P(Ops.CDIV, x, one), lambda x: x),
  (P(Ops.CMOD, x, one), lambda x: x.const_like(0)),
  (P(Ops.MAX, x, x), lambda x: x),
  (P(Ops.WHERE, T, UPat.var("a"), UPat.var("b")), lambda a, b: a),
  (P(Ops.WHERE, F, UPat.var("a"), UPat.var("b")), lambda a, b: b),
  (P(Ops.WHERE, UPat.var(), UPat.var("a"), UPat.var("a")), lambda a: a),
  (UPat(GroupOp.Binary, src=(UPat.cvar("a"), UPat.cvar("b")), name="e"), fold),
  (P(Ops.NEG, UPat.cvar("a"), name="e"), fold),
  (C(Ops.ADD, C(Ops.ADD, x, c1), c2), lambda x, c1, c2: x + (c1.arg + c2.arg)),
  (C(Ops.MUL, C(Ops.MUL, x, c1), c2), lambda x, c1, c2: x * (c1.arg * c2.arg)),
  (P(Ops.SUB, x, c), lambda x, c: x + (-c.arg)),
  (P(Ops.CDIV, C(Ops.MUL, x, c), c), lambda x, c: x if c.arg != 0 else None),
  (P(Ops.CMOD, C(Ops.MUL, x, c), c), lambda x, c: x.const_like(0) if c.arg != 0 else None),
  (C(Ops.ADD, C(Ops.MUL, P(Ops.CDIV, x, c), c), P(Ops.CMOD, x, c)),
   lambda x, c: x if c.arg > 0 else None),
  (P(Ops.CMOD, P(Ops.CMOD, x, c, name="m"), c), lambda x, c, m: m if c.arg != 0 else None),
  (P(Ops.CDIV, C(Ops.ADD, C(Ops.MUL, x, c), d), c),
   lambda x, c, d: x if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None),
  (P(Ops.CMOD, C(Ops.ADD, C(Ops.MUL, x, c), d), c),
   lambda x, c, d: d if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None),
  (P(Ops.CMOD, x, c), lambda x, c: x if 0 <= x.vmin and x.vmax < c.arg else None),
  (P(Ops.CDIV, x, c), lambda x, c: x.const_like(0) if 0 <= x.vmin and x.vmax < c.arg else None),
  (UPat(GroupOp.Comparison, src=(UPat.var("a"), UPat.var("b")), name="e"),
   lambda e, a, b: e.const_like(e.vmin) if e.vmin == e.vmax else None),
])
order = sink.toposort()
def match_once():
    t0, c0 = time.perf_counter(), time.process_time()
    for n in order: pm.rewrite(n)
    return [time.perf_counter() - t0, time.process_time() - c0]
def rewrite_once():
    t0, c0 = time.perf_counter(), time.process_time()
    graph_rewrite(sink, pm)
    return [time.perf_counter() - t0, time.process_time() - c0]
print(json.dumps({"nodes": len(order)}), flush=True)
for line in sys.stdin:  # one round per line: "match" or "rewrite"; [wall, CPU] seconds it took
    print(json.dumps(match_once() if line.strip() == "match" else rewrite_once()), flush=True)
'''


class Tinygrad:
    """tinygrad's side in a subprocess of `python` that stays up: the graph sent once, then one
    timed round per request."""

    def __init__(self, python: str, rows: list):
        self.proc = subprocess.Popen([python, "-c", TINYGRAD_SIDE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(rows) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"tinygrad side failed:\n{self.proc.stderr.read()[-2000:]}")
        self.nodes = json.loads(line)["nodes"]

    def once(self, what: str) -> Seconds:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()
        wall, cpu = json.loads(self.proc.stdout.readline())
        return wall, cpu

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def rounds(sides: dict[str, tuple], runs: int) -> dict[str, tuple[list[Seconds], list[Seconds]]]:
    """(match seconds, rewrite seconds) per side, one of each per round, of `runs` interleaved
    rounds; each side is (match_once, rewrite_once), callables of no argument returning
    (wall, CPU) seconds. In a round every side's match is timed, then every side's rewrite, the
    first side turning round by round."""
    names = list(sides)
    times: dict[str, tuple[list[Seconds], list[Seconds]]] = {k: ([], []) for k in sides}
    for r in range(runs + 1):  # (round 0 warms every side up: not counted)
        order = names[r % len(names):] + names[:r % len(names)]
        for phase in (0, 1):  # 0: match, 1: rewrite
            for name in order:
                seconds = sides[name][phase]()
                if r:
                    times[name][phase].append(seconds)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=7)
    default_tg = os.environ.get("TINYGRAD_PYTHON") or (
        "/opt/tgenv/bin/python" if os.path.exists("/opt/tgenv/bin/python") else None)
    ap.add_argument("--tinygrad", default=default_tg, help="a python with tinygrad installed")
    args = ap.parse_args()

    # Both sides build the graph from the same rows, node by node in the order a match round
    # visits them. The nodes build_graph made are dropped first: they lie scattered in memory
    # (made in the pool's order, between many discarded ones), and a round over them took 1.4x
    # the CPU time of a round over the same graph built in order, a handicap of the memory
    # layout that tinygrad's side, building from the rows, never had.
    built = build_graph(args.nodes)
    rows, gone = serialize(built), weakref.ref(built)
    del built
    gc.collect()
    assert gone() is None, "build_graph's nodes are still alive: the rebuild would find them"
    sink = rebuild(rows)
    nodes = toposort(sink)
    assert serialize(sink) == rows
    gen = matcher("symbolic", "sym")
    interp = interpret_file(load(str(PACKAGE_RULES_DIR / "symbolic.rules")))["sym"]
    assert graph_rewrite(sink, gen) is graph_rewrite(sink, interp)  # same work, same answer
    sides: dict[str, tuple] = {
        "generated": (lambda: match_once(nodes, gen), lambda: rewrite_once(sink, gen)),
        "interpreted": (lambda: match_once(nodes, interp), lambda: rewrite_once(sink, interp))}
    tg = None
    if args.tinygrad:
        try:
            tg = Tinygrad(args.tinygrad, rows)
        except (OSError, RuntimeError) as e:
            print(f"tinygrad side failed: {e}", file=sys.stderr)
        else:
            assert tg.nodes == len(nodes), (tg.nodes, len(nodes))
            sides["tinygrad 0.14"] = (lambda: tg.once("match"), lambda: tg.once("rewrite"))
    else:
        print("tinygrad: not installed (pass --tinygrad PYTHON or set TINYGRAD_PYTHON)")
    times = rounds(sides, args.runs)
    if tg is not None:
        tg.close()

    print(f"rule set sym ({len(gen.rules)} rules), graph of {len(nodes)} nodes, medians of "
          f"{args.runs} interleaved rounds")
    print(f"{'matcher':<14} {'match nodes/s':>14} {'rewrite nodes/s':>16} "
          f"{'match x':>8} {'rewrite x':>10} {'paired':>7} {'cpu match x':>12} "
          f"{'cpu rewrite x':>14}")

    def med(ts: list[Seconds], k: int) -> float:  # k: 0 wall-clock, 1 CPU time
        return statistics.median(t[k] for t in ts)

    g_ms, g_rws = times["generated"]
    for name, (ms, rws) in times.items():
        m, rw = med(ms, 0), med(rws, 0)
        paired = statistics.median(a[0] / b[0] for a, b in zip(ms, g_ms))
        print(f"{name:<14} {len(nodes) / m:>14,.0f} {len(nodes) / rw:>16,.0f} "
              f"{m / med(g_ms, 0):>8.2f} {rw / med(g_rws, 0):>10.2f} {paired:>7.2f} "
              f"{med(ms, 1) / med(g_ms, 1):>12.2f} {med(rws, 1) / med(g_rws, 1):>14.2f}")
    print("(x: how many times faster the generated matcher is, in wall-clock (nodes/s too) or "
          "in CPU time of its own process (cpu);\n paired: the median of the per-round match "
          "ratios, wall-clock)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
