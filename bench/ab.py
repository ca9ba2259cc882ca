"""Old against new: the same sweep points run by two source trees of rulegrad, interleaved.

    python bench/ab.py OLD_TREE [--family NAME,...] [--held-out | --held-out-other | --held-out-3]
                            [--rounds N] [--cpu] [POINT ...]

OLD_TREE is a checkout of the other commit (e.g. `git archive main | tar -x -C /tmp/old`). Two
worker processes, one importing rulegrad from OLD_TREE and one from this tree (each with a
compile cache of its own), are timed in alternating rounds, one at a time, so both see the same
machine. Per point: each side's median time per call through `rulegrad.jit`, new's speed over
old's, whether the outputs agree, and whether the kernels' C is the same text: on a loaded
machine a ratio of identical code is noise, and "same C" says so. POINT is `family:AxBxC`
(e.g. `conv2d:4x64x28x64x3x1x4`); without points, the families' sweep shapes (bench/sweep.py's
SWEEP, HELD_OUT, HELD_OUT_OTHER or HELD_OUT_3).

The workers reach the other tree through the editable install's path finder (pip's
`__editable___*_finder` module, whose MAPPING names each subpackage's folder): a bench-only
means of running two commits side by side, nothing rulegrad itself reads.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TREE = HERE.parent

# a worker's first lines, given `root` (its tree) and `here` (this tree): rulegrad is imported from
# root through the editable install's path finder (also bench/latency_ab.py's workers)
USE_TREE = '''
finders = [m for m in sys.modules if m.startswith("__editable__") and m.endswith("_finder")]
if finders:  # point the editable install at this worker's tree
    f = sys.modules[finders[0]]
    f.MAPPING = {k: v.replace(here, root, 1) for k, v in f.MAPPING.items()}
'''

_WORKER = r'''
import glob, json, sys, time
root, here, tag, out, clock = sys.argv[1:6]
clock = getattr(time, clock)
''' + USE_TREE + r'''sys.path.insert(0, here + "/bench")
import numpy as np
np.seterr(all="ignore")
import harness  # noqa: F401  (threads and OMP settings, as the sweep's)
from workloads import point
import rulegrad
from rulegrad.backends.c import compile_program
assert rulegrad.__file__.startswith(root), rulegrad.__file__
fns = {}
for line in sys.stdin:
    cmd, key, n = line.split()
    if cmd == "prep":
        fam, shape = key.split(":")
        p = point(fam, *map(int, shape.split("x")))
        ins = {k: rulegrad.Tensor(v).realize() for k, v in p.inputs.items()}
        with open(f"{out}/{tag}.c", "w") as src:
            src.write(compile_program(p.rg(**ins).schedule()).source)
        g = rulegrad.jit(p.rg)
        fn = lambda g=g, ins=ins: g(**ins).numpy()
        np.save(f"{out}/{tag}.npy", fn())
        t0 = time.perf_counter(); fn(); dt = time.perf_counter() - t0
        fns[key] = fn
        print(json.dumps(dt), flush=True)
    else:
        fn = fns[key]; fn()
        t0 = clock()
        for _ in range(int(n)): fn()
        print(json.dumps((clock() - t0) / int(n)), flush=True)
'''


class Worker:
    def __init__(self, root: Path, tag: str, out: str, clock: str = "perf_counter") -> None:
        env = dict(os.environ, RULEGRAD_CACHE=f"{out}/cache-{tag}")
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER, str(root), str(TREE), tag,
                                      out, clock], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)

    def ask(self, cmd: str, key: str, n: int = 0) -> float:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"{cmd} {key} {n}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())


def main(argv: list[str] | None = None) -> int:
    from sweep import HELD_OUT, HELD_OUT_3, HELD_OUT_OTHER, SWEEP

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path, help="the other commit's source tree")
    ap.add_argument("points", nargs="*", help="family:AxBxC points (default: the families')")
    ap.add_argument("--family", default="", help="comma-separated families (default: all)")
    ap.add_argument("--held-out", action="store_true", help="HELD_OUT's shapes, not SWEEP's")
    ap.add_argument("--held-out-other", action="store_true",
                    help="HELD_OUT_OTHER's shapes (the non-product families)")
    ap.add_argument("--held-out-3", action="store_true",
                    help="HELD_OUT_3's shapes (the third held-out set, every family)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpu", action="store_true",
                    help="the process's CPU time (all threads) per call, not wall time: the "
                         "work done, less disturbed by other jobs on a loaded machine")
    args = ap.parse_intermixed_args(argv)
    table = (HELD_OUT_3 if args.held_out_3 else HELD_OUT_OTHER if args.held_out_other
             else HELD_OUT if args.held_out else SWEEP)
    families = args.family.split(",") if args.family else list(table)
    points = args.points or [f"{f}:{'x'.join(map(str, s))}" for f in families
                             for s in table.get(f, [])]
    out = tempfile.mkdtemp(prefix="rg_ab_")
    clock = "process_time" if args.cpu else "perf_counter"
    old, new = Worker(args.old.resolve(), "old", out, clock), Worker(TREE, "new", out, clock)
    speeds, differ = [], 0
    for key in points:
        first = max(old.ask("prep", key), new.ask("prep", key))
        agree = np.allclose(np.load(f"{out}/old.npy"), np.load(f"{out}/new.npy"), rtol=1e-3,
                            atol=1e-4)
        same = Path(f"{out}/old.c").read_text() == Path(f"{out}/new.c").read_text()
        differ += not same
        n = max(1, min(500, int(0.05 / max(first, 1e-6))))
        to, tn = [], []
        for _ in range(args.rounds):
            to.append(old.ask("time", key, n))
            tn.append(new.ask("time", key, n))
        mo, mn = statistics.median(to), statistics.median(tn)
        speeds.append(mo / mn)
        # (the fastest rounds' ratio beside: on a machine other jobs load, the one least
        # disturbed; "same C" points show how far either strays)
        print(f"{key:<34} old {mo * 1e3:9.3f} ms  new {mn * 1e3:9.3f} ms  new speed "
              f"{mo / mn:5.2f}x (fastest {min(to) / min(tn):5.2f}x)  "
              f"{'same C' if same else 'C differs'}"
              + ("" if agree else "  OUTPUTS DIFFER"), flush=True)
    gm = float(np.exp(np.mean(np.log(speeds))))
    print(f"\ngeomean new/old speed {gm:.2f}x over {len(speeds)} points ({differ} with other C); "
          f"worst {min(speeds):.2f}x")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
