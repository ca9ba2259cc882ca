"""Old against new generated matcher, in one process: `match` of bench/matcher.py, interleaved.

    python bench/matcher_ab.py OLD [--module symbolic] [--set sym] [--rounds 60] [--opcodes]

OLD is another tree's generated module of the same rules file (a file, or a tree in which it is
rules/generated/MODULE.py, e.g. `git archive main | tar -x -C /tmp/old`). Both modules run on
this tree's runtime (so OLD must speak its matcher API: compare generator changes, not runtime
ones; bench/ab.py and two processes for those). On bench/matcher.py's graph, after checking
that both rewrite every node to the same node, rounds of one `rewrite(node)` per node alternate
between the two (the first side turning each round) and each side's CPU time is taken
(`time.process_time`); printed: each side's median ns per node, and the median of the per-round
ratios old/new. On a shared machine this resolves ~1-2% where two processes' timings, minutes
apart, scatter by ~10%.

--opcodes: instead, the bytecode instructions each side executes per node over one round
(a `sys.settrace` count of opcode events in every Python frame the matcher runs, helpers
included): a count of work that a busy machine does not disturb (it misses the C-level cost of
an instruction, e.g. a cache miss: confirm a saving with timed rounds).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

from matcher import build_graph, rebuild, serialize  # (bench/matcher.py: the same graph)

from rulegrad.rules.generated import __file__ as _generated_init
from rulegrad.runtime.uop import toposort


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def opcodes(rewrite, nodes: list) -> float:
    """Bytecode instructions executed per node by one `rewrite(node)` per node."""
    count = [0]

    def frame_trace(frame, event, arg):
        frame.f_trace_opcodes = True

        def step(frame, event, arg):
            if event == "opcode":
                count[0] += 1
            return step
        return step

    sys.settrace(frame_trace)
    try:
        for n in nodes:
            rewrite(n)
    finally:
        sys.settrace(None)
    return count[0] / len(nodes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", help="the old generated module, or a tree holding it")
    ap.add_argument("--module", default="symbolic")
    ap.add_argument("--set", default="sym", help="the rule set in the module")
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--opcodes", action="store_true")
    args = ap.parse_args()
    old_path = Path(args.old)
    if old_path.is_dir():
        old_path = old_path / "rules" / "generated" / f"{args.module}.py"
    new_path = Path(_generated_init).parent / f"{args.module}.py"
    sides = {"old": getattr(load_module(old_path, "_ab_old"), args.set),
             "new": getattr(load_module(new_path, "_ab_new"), args.set)}

    built = build_graph(args.nodes)
    rows = serialize(built)
    del built
    gc.collect()
    nodes = toposort(rebuild(rows))
    for n in nodes:  # the same work, the same answers (and every table made, bounds cached)
        assert sides["old"].rewrite(n) is sides["new"].rewrite(n), n
    rewrites = {k: m.rewrite for k, m in sides.items()}
    print(f"{args.module}.{args.set}: {old_path} (old) against {new_path} (new), "
          f"{len(nodes)} nodes")
    if args.opcodes:
        for k, rw in rewrites.items():
            print(f"{k}: {opcodes(rw, nodes):.2f} bytecode instructions per node")
        return 0

    times: dict[str, list[float]] = {k: [] for k in rewrites}
    names = list(rewrites)
    gc.disable()  # (a collection would land in one side's round)
    try:
        for r in range(args.rounds + 1):  # (round 0 warms up: not counted)
            for k in names[r % 2:] + names[:r % 2]:
                rw = rewrites[k]
                t0 = time.process_time()
                for n in nodes:
                    rw(n)
                if r:
                    times[k].append(time.process_time() - t0)
    finally:
        gc.enable()
    for k, ts in times.items():
        print(f"{k}: {statistics.median(ts) / len(nodes) * 1e9:.0f} ns per node (CPU, median "
              f"of {args.rounds})")
    paired = statistics.median(a / b for a, b in zip(times["old"], times["new"]))
    print(f"old/new: {paired:.3f} (median of the per-round ratios; > 1: new is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
