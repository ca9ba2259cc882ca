"""Short and middling rows beside torch eager (issue 32's sweep points): a row max, sum, mean
subtracted, softmax and logsumexp over rows of D values, N rows.

    python bench/short_rows.py [--ops max,sum,...] [--rows 1,2,...] [--counts 1,7,...]
                               [--dtype float32|float16] [--rounds N] [--before FILE]
                               [--cpu]

Per point: torch eager's median wall time per call over rulegrad's (> 1: rulegrad is faster),
rulegrad called through `rulegrad.jit` with its input already realized, interleaved rounds
(harness.interleaved_medians); outputs checked against torch. `--before FILE`: a copy of an
older rules/across_helpers.py (`git show main:rules/across_helpers.py > /tmp/old.py`) whose
`across` the rows_across rule calls for a second rulegrad column, timed in the same rounds.
The last lines are the geomeans.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time

import numpy as np
from harness import close, geomean, interleaved_medians, torch_module

OPS = {
    "max": (lambda x: x.max(1), lambda x: x.amax(1)),
    "sum": (lambda x: x.sum(1), lambda x: x.sum(1)),
    "meansub": (lambda x: x - x.mean(1, keepdim=True), lambda x: x - x.mean(1, keepdim=True)),
    "softmax": (lambda x: x.softmax(-1), lambda x: x.softmax(-1)),
    "logsumexp": (lambda x: x.logsumexp(-1), lambda x: x.logsumexp(-1)),
}
# (not in the default sweep; bench/across_ab.py's)
EXTRA = {
    "layernorm": (lambda x: x.layernorm(),
                  lambda x: __import__("torch").nn.functional.layer_norm(x, x.shape[-1:])),
    "oversum": (lambda x: x / x.sum(-1, keepdim=True), lambda x: x / x.sum(-1, keepdim=True)),
    "maxsub": (lambda x: x - x.max(1, keepdim=True), lambda x: x - x.amax(1, keepdim=True)),
    "log_softmax": (lambda x: x.log_softmax(-1), lambda x: x.log_softmax(-1)),
}
ROWS = [1, 2, 3, 5, 7, 8, 16, 17, 31, 33, 64, 65]
COUNTS = [1, 7, 1000, 8192]


def _ints(s: str) -> list[int]:
    return [int(v) for v in s.split(",") if v]


def jitted(f, x, helper):
    """f under rulegrad.jit, compiled (three calls) with the rows_across rule calling `helper`
    (None: the tree's own), from a fresh schedule."""
    import rulegrad
    import rulegrad.rules.generated.opt as generated_opt
    from rulegrad.backends.c import build, run
    from rulegrad.runtime import schedule_cache
    schedule_cache.clear()
    build.clear_memory_cache()
    run._programs.clear()  # noqa: SLF001 (a bench's probe, as tests/test_review_59a.py's)
    saved = generated_opt.across
    generated_opt.across = helper or saved
    try:
        fn = rulegrad.jit(f)
        for _ in range(3):
            fn(x).numpy()
    finally:
        generated_opt.across = saved
    return fn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--rows", default=",".join(map(str, ROWS)))
    ap.add_argument("--counts", default=",".join(map(str, COUNTS)))
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--cpu", action="store_true",
                    help="the process's CPU time per call (all threads), not wall time: the "
                         "work done, less disturbed by other jobs on a loaded machine")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--before", default="")
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    import rulegrad
    os.environ["RULEGRAD_KERNEL_INDEX"] = "0"  # (each column's kernels printed anew)
    before = None
    if args.before:
        spec = importlib.util.spec_from_file_location("across_before", args.before)
        before = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(before)
    torch = torch_module()
    ratios: list[float] = []
    ratios_before: list[float] = []
    wrong = 0
    rng = np.random.default_rng(0)
    print(f"{'op':10} {'shape':>10} {'ours us':>9} {'torch us':>9} {'torch/ours':>10}"
          + (f" {'before us':>9} {'torch/before':>12}" if before else ""))
    for op in args.ops.split(","):
        rg_f, t_f = {**OPS, **EXTRA}[op]
        for n in _ints(args.counts):
            for d in _ints(args.rows):
                x = rng.standard_normal((n, d)).astype(args.dtype)
                xr, xt = rulegrad.Tensor(x).realize(), torch.from_numpy(x.copy())
                fns = [jitted(rg_f, xr, None)]
                if before:
                    fns.append(jitted(rg_f, xr, before.across))
                with torch.no_grad():
                    want = t_f(xt).numpy()
                    tol = (2e-2, 2e-2) if args.dtype == "float16" else ()
                    ok = all(close(fn(xr).numpy(), want, *tol) for fn in fns)
                    times = interleaved_medians(
                        [lambda t_f=t_f, xt=xt: t_f(xt).numpy()] +
                        [lambda fn=fn, xr=xr: fn(xr).numpy() for fn in fns], args.rounds,
                        clock=clock)
                wrong += not ok
                theirs, ours = times[0], times[1]
                ratios.append(theirs / ours)
                line = (f"{op:10} {f'{n}x{d}':>10} {ours * 1e6:9.1f} {theirs * 1e6:9.1f} "
                        f"{theirs / ours:10.2f}")
                if before:
                    ratios_before.append(theirs / times[2])
                    line += f" {times[2] * 1e6:9.1f} {theirs / times[2]:12.2f}"
                print(line + ("" if ok else "  WRONG"), flush=True)
    print(f"geomean torch/ours {geomean(ratios):.2f} over {len(ratios)} points, {wrong} wrong")
    if before:
        print(f"geomean torch/before {geomean(ratios_before):.2f}")


if __name__ == "__main__":
    main()
