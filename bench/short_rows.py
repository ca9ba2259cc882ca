"""Short and middling rows beside torch eager (issue 32's sweep points): a row max, sum, mean
subtracted, softmax and logsumexp over rows of D values, N rows.

    python bench/short_rows.py [--ops max,sum,...] [--rows 1,2,...] [--counts 1,7,...]
                               [--dtype float32|float16] [--rounds N]

Per point: torch eager's median wall time per call over rulegrad's (> 1: rulegrad is faster),
rulegrad called through `rulegrad.jit` with its input already realized, interleaved rounds
(harness.interleaved_medians); outputs checked against torch. The last line is the geomean.
"""

from __future__ import annotations

import argparse

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
}
ROWS = [1, 2, 3, 5, 7, 8, 16, 17, 31, 33, 64, 65]
COUNTS = [1, 7, 1000, 8192]


def _ints(s: str) -> list[int]:
    return [int(v) for v in s.split(",") if v]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--rows", default=",".join(map(str, ROWS)))
    ap.add_argument("--counts", default=",".join(map(str, COUNTS)))
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    import rulegrad
    torch = torch_module()
    ratios, wrong = [], 0
    rng = np.random.default_rng(0)
    print(f"{'op':10} {'shape':>10} {'ours us':>9} {'torch us':>9} {'torch/ours':>10}")
    for op in args.ops.split(","):
        rg_f, t_f = OPS[op]
        for n in _ints(args.counts):
            for d in _ints(args.rows):
                x = rng.standard_normal((n, d)).astype(args.dtype)
                fn = rulegrad.jit(rg_f)
                xr, xt = rulegrad.Tensor(x).realize(), torch.from_numpy(x.copy())
                with torch.no_grad():
                    ok = close(fn(xr).numpy(), t_f(xt).numpy(),
                               *((2e-2, 2e-2) if args.dtype == "float16" else ()))
                    ours, theirs = interleaved_medians(
                        [lambda fn=fn, xr=xr: fn(xr).numpy(),
                         lambda t_f=t_f, xt=xt: t_f(xt).numpy()], args.rounds)
                wrong += not ok
                ratios.append(theirs / ours)
                print(f"{op:10} {f'{n}x{d}':>10} {ours * 1e6:9.1f} {theirs * 1e6:9.1f} "
                      f"{theirs / ours:10.2f}{'' if ok else '  WRONG'}", flush=True)
    print(f"geomean torch/ours {geomean(ratios):.2f} over {len(ratios)} points, {wrong} wrong")


if __name__ == "__main__":
    main()
