"""Rows across lanes against the row form, kernel by kernel: each short-row program compiled
twice in one process, once with opt.rules' `rows_across` declining every kernel and once taking
every kernel it applies to (`across(sink, always=True)`), timed in interleaved rounds beside
torch eager; and which form the cost model chooses.

    python bench/across_ab.py [--ops meansub,...] [--shapes 4096x5,...] [--rounds N] [--cpu]

Per point: the medians (us) of the row form, the across form and torch, row/across (> 1:
across is faster), and the form `across` chooses; WRONG where the other form was more than 10%
faster. The machine is shared: read `uptime` beside it, and rerun a WRONG before believing it.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from harness import interleaved_medians, torch_module
from short_rows import EXTRA, OPS, jitted

import rulegrad
import rulegrad.rules.generated.opt as generated_opt
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.rules.across_helpers import across

SHAPES = ["4096x5", "65536x5", "4096x3", "4096x7", "4096x12", "16384x12", "1000x16", "8192x16",
          "4099x13", "100000x3", "8192x2"]
FORMS = {"row": lambda sink: None, "across": lambda sink: across(sink, always=True)}


def _compiled(f, x, form: str):
    """f under jit with the rule's helper replaced by `form`'s, from a fresh schedule."""
    return jitted(f, x, FORMS[form])


def _choice(f, x) -> str:
    """Which form the cost model picks for f(x): whether a kernel of its schedule is optimized
    otherwise than in the row form."""
    lows = [lower_only(item.ast) for item in f(x).schedule()]
    chosen = [optimize_kernel(low) for low in lows]
    saved = generated_opt.across
    generated_opt.across = FORMS["row"]
    try:
        kept = [optimize_kernel(low) for low in lows]
    finally:
        generated_opt.across = saved
    return "across" if any(a is not b for a, b in zip(chosen, kept)) else "row"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default="meansub,softmax,logsumexp,max,sum")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--cpu", action="store_true",
                    help="the process's CPU time per call (all threads), not wall time: the "
                         "work done, less disturbed by other jobs on a loaded machine")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    os.environ["RULEGRAD_KERNEL_INDEX"] = "0"  # (kernels printed before are not reused)
    torch = torch_module()
    rng = np.random.default_rng(0)
    print(f"{'op':10} {'shape':>9} {'row us':>8} {'across us':>9} {'torch us':>8} "
          f"{'row/across':>10} chosen")
    bad = 0
    for op in args.ops.split(","):
        f, tf = {**OPS, **EXTRA}[op]
        for s in args.shapes.split(","):
            n, d = map(int, s.split("x"))
            a = rng.standard_normal((n, d)).astype(np.float32)
            x, xt = rulegrad.Tensor(a).realize(), torch.from_numpy(a.copy())
            row, acr = _compiled(f, x, "row"), _compiled(f, x, "across")
            t_row, t_acr, t_t = interleaved_medians(
                [lambda row=row, x=x: row(x).numpy(), lambda acr=acr, x=x: acr(x).numpy(),
                 lambda tf=tf, xt=xt: tf(xt).numpy()], args.rounds, clock=clock)
            choice = _choice(f, x)
            best = "across" if t_row > t_acr else "row"
            wrong = choice != best and max(t_row, t_acr) / min(t_row, t_acr) > 1.1
            bad += wrong
            print(f"{op:10} {s:>9} {t_row * 1e6:8.1f} {t_acr * 1e6:9.1f} {t_t * 1e6:8.1f} "
                  f"{t_row / t_acr:10.2f} {choice}{'  WRONG' if wrong else ''}", flush=True)
    print(f"{bad} wrong choices")


if __name__ == "__main__":
    main()
