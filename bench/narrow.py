"""Tall-K narrow-N products (GEMV-like: `x @ w`, a long reduce, few columns) against torch eager.

    python bench/narrow.py [--rounds N] [--cpu] [MxKxN[:dtype][:t] ...]

Per shape: rulegrad's and torch's median time per call (interleaved rounds, bench/harness.py;
`--cpu`: the process's CPU time, all threads, not wall time), their ratio, and DEBUG=2's actions
of rulegrad's kernel. A shape's `:t` reads w transposed (`x @ w.T`, w stored N x K); its dtype
float32 by default. RULEGRAD_THREADS (default 2) sets both sides' threads.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import interleaved_medians, torch_module  # noqa: E402

SHAPES = ["2x100003x5", "1x65537x3", "7x50000x16", "1x1000000x1", "64x4099x7", "4x100003x9",
          "8x30011x13", "3x100003x17", "2x100003x5:float64", "2x100003x5:t",
          # rows 5-8 of x @ w.T (dots or packed by cost), a w.T past the caches, float16
          "5x30011x13:t", "6x4099x16:t", "7x50000x16:t", "8x30011x13:t", "4x4096x1024:t",
          "2x100003x9:float16", "7x4099x33:float16", "8x30011x13:float16:t"]


def _point(rulegrad, torch, spec: str, rounds: int, clock) -> tuple[float, float, bool, str]:
    """(rulegrad's, torch's median seconds a call, whether rulegrad's values are numpy's, the
    kernels' actions)."""
    dims, *opts = spec.split(":")
    m, k, n = map(int, dims.split("x"))
    dt = np.dtype(next((o for o in opts if o != "t"), "float32"))
    t = "t" in opts
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k)).astype(dt)
    w = (rng.standard_normal((n, k) if t else (k, n)) * k ** -0.5).astype(dt)
    fn = rulegrad.jit(lambda a, b: a @ (b.T if t else b))
    a, b = rulegrad.Tensor(x), rulegrad.Tensor(w)
    ta, tb = torch.from_numpy(x), torch.from_numpy(w)
    tw = tb.T if t else tb
    want = x.astype(np.float64) @ (w.T if t else w).astype(np.float64)
    got = fn(a, b).numpy()
    ok = bool(np.allclose(got, want, rtol=1e-2, atol=1e-2 * np.sqrt(k) * np.abs(x).max()))
    with torch.no_grad():
        ours, theirs = interleaved_medians([lambda: fn(a, b).numpy(), lambda: (ta @ tw).numpy()],
                                           rounds, clock=clock)
    return ours, theirs, ok, _actions(a @ (b.T if t else b))


def _actions(t) -> str:
    """DEBUG=2's actions of each kernel of t's schedule (tests/optimizer_actions.py's)."""
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import actions, optimize_kernel
    return " | ".join(a for item in t.schedule()
                      for a in actions(optimize_kernel(lower_only(item.ast))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes", nargs="*", default=SHAPES)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpu", action="store_true", help="CPU time of the process, not wall time")
    args = ap.parse_args(argv)
    import rulegrad
    torch = torch_module()
    if torch is None:
        print("bench/narrow.py needs torch", file=sys.stderr)
        return 2
    clock = time.process_time if args.cpu else time.perf_counter
    print(f"{'shape':<24} {'rulegrad ms':>11} {'torch ms':>9} {'speed':>7}")
    for spec in args.shapes:
        ours, theirs, ok, acts = _point(rulegrad, torch, spec, args.rounds, clock)
        print(f"{spec:<24} {ours * 1e3:>11.3f} {theirs * 1e3:>9.3f} {theirs / ours:>6.2f}x"
              f"{'' if ok else '  WRONG'}  {acts}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
