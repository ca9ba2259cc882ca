"""Shape sweep: every workload family at tiny, prime, batch-1, tall, skinny and large shapes,
rulegrad beside PyTorch eager.

    python bench/sweep.py [--family NAME,...] [--rounds N] [--quick]

Per point: rulegrad's and torch eager's median wall time per call (inputs already in each
framework's arrays, the result read as a numpy array, interleaved rounds in one run), torch's
time over ours (> 1: rulegrad is faster), and the share of the machine's roof rulegrad reaches
(the measured FMA peak for products, the measured copy bandwidth for memory-bound cases).
rulegrad's side is called through `rulegrad.jit` (its kernels replayed, as a user who calls a
function many times would; `--no-jit` calls it directly). Outputs are checked against torch;
a mismatch is printed and counted. Points under 0.1 ms are dominated by per-call latency and
are summarised apart. torch is bench-only (`pip install -e ".[bench]"`).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from harness import (
    close,
    copy_bandwidth,
    fma_peak,
    geomean,
    interleaved_medians,
    roof_share,
    torch_module,
)
from workloads import point

# family -> shapes: tiny, prime, batch 1, tall, skinny, large (and the issue's own cliffs)
SWEEP: dict[str, list[tuple]] = {
    "attention": [(1, 7, 4), (1, 97, 31), (1, 1024, 64), (2, 2048, 32), (16, 64, 128),
                  (8, 512, 64)],
    "mlp": [(4, 8, 16, 4), (61, 97, 53, 11), (1, 128, 256, 10), (512, 128, 128, 128),
            (32, 64, 128, 10), (256, 784, 512, 10)],
    "linear_gelu": [(3, 5, 7), (127, 131, 137), (1, 1024, 1024), (4096, 64, 64),
                    (64, 4096, 64), (128, 128, 128), (256, 1024, 1024)],
    "conv2d": [(1, 1, 5, 1, 3, 1), (1, 3, 64, 16, 7, 2), (1, 16, 31, 32, 3, 1),
               (32, 8, 16, 8, 3, 1), (1, 64, 56, 64, 3, 1), (16, 32, 32, 64, 3, 1)],
    "sum": [(0, 3, 5, 7), (1, 97, 1009), (1, 1, 1 << 20), (0, 8192, 33), (1, 33, 8192),
            (1, 2048, 2048), (0, 2048, 2048), (1, 64, 256, 256)],
    "max": [(2, 3, 5, 7), (1, 8192, 33), (0, 97, 1009), (1, 1, 1 << 20), (0, 33, 8192),
            (1, 64, 256, 256), (2, 64, 256, 256)],
    "layernorm": [(2, 3), (97, 1009), (1, 4096), (8192, 33), (33, 8192), (1024, 1024)],
    "batchnorm": [(2, 3, 4), (8, 97, 13), (1, 16, 7), (64, 8, 64), (4, 256, 8),
                  (64, 64, 32)],
    "softmax": [(2, 3), (97, 1009), (1, 4096), (8192, 33), (33, 8192), (1024, 1024)],
}
SMALL = 1e-4  # seconds: below this a point measures per-call latency


def run_point(torch, p, rounds: int, jit: bool) -> dict:
    import rulegrad
    rg = rulegrad.jit(p.rg) if jit else p.rg
    ins_rg = {k: rulegrad.Tensor(v).realize() for k, v in p.inputs.items()}
    ins_t = {k: torch.from_numpy(v.copy()) for k, v in p.inputs.items()}
    with torch.no_grad():
        want = p.torch(**ins_t).numpy()
        got = rg(**ins_rg).numpy()
        ok = close(got, want, **p.tol)
        ours, theirs = interleaved_medians(
            [lambda: rg(**ins_rg).numpy(), lambda: p.torch(**ins_t).numpy()], rounds)
    return {"name": p.name, "ours": ours, "torch": theirs, "ok": ok,
            "roof": roof_share(p.flops, p.nbytes, ours)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default=",".join(SWEEP), help="comma-separated families")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="the first three shapes of each family")
    ap.add_argument("--no-jit", action="store_true",
                    help="call rulegrad directly, not through rulegrad.jit's replay")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.family.split(",")) - set(SWEEP))
    if unknown:
        ap.error(f"unknown family {', '.join(unknown)}; the families: {', '.join(SWEEP)}")
    torch = torch_module()
    if torch is None:
        print("bench/sweep.py needs torch: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    print(f"roofs: FMA peak {fma_peak() / 1e9:.0f} GFLOP/s, copy {copy_bandwidth() / 1e9:.1f} "
          f"GB/s")
    print(f"{'point':<34} {'rulegrad ms':>11} {'torch ms':>9} {'speed':>7} {'roof':>6}")
    rows, bad = [], 0
    for family in args.family.split(","):
        shapes = SWEEP[family][:3] if args.quick else SWEEP[family]
        for shape in shapes:
            r = run_point(torch, point(family, *shape), args.rounds, not args.no_jit)
            rows.append(r)
            bad += not r["ok"]
            speed = r["torch"] / r["ours"]
            flag = "" if r["ok"] else "  WRONG"
            flag += "  SLOW" if speed < 1 / 1.5 and r["ours"] >= SMALL else ""
            print(f"{r['name']:<34} {r['ours'] * 1e3:>11.3f} {r['torch'] * 1e3:>9.3f} "
                  f"{speed:>6.2f}x {r['roof'] * 100:>5.0f}%{flag}", flush=True)
    big = [r["torch"] / r["ours"] for r in rows if r["ours"] >= SMALL]
    small = [r["torch"] / r["ours"] for r in rows if r["ours"] < SMALL]
    print(f"\ngeomean speed over torch eager: {geomean(big):.2f}x over {len(big)} points "
          f">= 0.1 ms; {geomean(small):.2f}x over {len(small)} points under 0.1 ms "
          f"(per-call latency); worst {min(big, default=float('nan')):.2f}x; {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
