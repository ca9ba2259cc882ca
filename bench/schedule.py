"""Scheduling time of the reference programs, rulegrad beside tinygrad 0.14.

    python bench/schedule.py [--runs 5]

For each program of the fusion table (tests/test_fusion.py), the time to turn the lazy graph
into kernels (inputs realized first; nothing is run): rulegrad's `create_schedule` and, when a
tinygrad 0.14 environment exists (`/opt/tgenv`, or TINYGRAD_PYTHON), tinygrad's
`Tensor.schedule_linear()` in a subprocess (this same file, run with `--tinygrad`), medians of
several runs, kernel counts, and the ratio rulegrad / tinygrad (the target is <= 0.5); beside
them, the same for rulegrad's second scheduler, kernelize (runtime/kernelize.py). Both
schedule caches are off (RULEGRAD_SCHEDULE_CACHE=0, tinygrad's SCACHE=0), so the rule passes
themselves are timed; `--cached` turns both on (a repeated program then costs a lookup). Then the
scale check: scheduling time per op of an elementwise chain at n = 1,000 and 10,000 (the ratio
should be <= 2), and a 100,000-op chain scheduled and run through the kernel interpreter.

The programs are written once against the tinygrad-compatible Tensor API and built with
whichever Tensor class the process has.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import train_step  # bench/train_step.py, beside this file (also for the tinygrad process)

TINYGRAD_PYTHON = os.environ.get("TINYGRAD_PYTHON", "/opt/tgenv/bin/python")


def programs(T: Any, buf: Callable[..., Any]) -> list[tuple[str, Callable[[], list[Any]]]]:  # noqa: N803
    """(name, build) pairs; build() returns the tensors to schedule together."""

    def conv2d(x: Any, w: Any) -> Any:
        n, c, h, wd = x.shape
        o, _, kh, kw = w.shape
        oh, ow = h - kh + 1, wd - kw + 1
        rh, rw = -(-kh * (h + 1) // h), -(-kw * (wd + 1) // wd)
        xr = x.reshape(n, c, 1, h, 1, wd).expand(n, c, rh, h, rw, wd).reshape(n, c, rh * h, rw * wd)
        xr = xr.shrink(((0, n), (0, c), (0, kh * (h + 1)), (0, kw * (wd + 1))))
        xr = xr.reshape(n, c, kh, h + 1, kw, wd + 1)
        xr = xr.shrink(((0, n), (0, c), (0, kh), (0, oh), (0, kw), (0, ow)))
        xr = xr.permute(0, 1, 3, 5, 2, 4)
        prod = xr.reshape(n, 1, c, oh, ow, kh, kw) * w.reshape(1, o, c, 1, 1, kh, kw)
        return prod.sum((2, 5, 6)).reshape(n, o, oh, ow)

    def layernorm(x: Any) -> Any:
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) * (x - mean)).mean(-1, keepdim=True)
        return (x - mean) / (var + 1e-5).sqrt()

    def mlp() -> list[Any]:
        x, w1, b1, w2, b2 = buf(64, 784), buf(784, 256), buf(256), buf(256, 10), buf(10)
        return [((x @ w1 + b1).relu() @ w2 + b2).log_softmax(1)]

    def attention() -> list[Any]:
        q, k, v = buf(128, 64), buf(128, 64), buf(128, 64)
        return [(q @ k.T / 8).softmax(-1) @ v]

    def exp_sum_max() -> list[Any]:
        x = buf(256, 256)
        return [x.exp().sum(0), x.exp().max(1)]

    n4m = 1 << 22
    return [
        ("relu(a*b+c) 4M", lambda: [(buf(n4m) * buf(n4m) + buf(n4m)).relu()]),
        ("row sum 2048x2048", lambda: [buf(2048, 2048).sum(1)]),
        ("full sum 4M", lambda: [buf(n4m).sum()]),
        ("softmax 1024x1024", lambda: [buf(1024, 1024).softmax(-1)]),
        ("layernorm 1024x1024", lambda: [layernorm(buf(1024, 1024))]),
        ("matmul 512x512", lambda: [buf(512, 512) @ buf(512, 512)]),
        ("conv2d 8x16x32x32 32x16x3x3", lambda: [conv2d(buf(8, 16, 32, 32), buf(32, 16, 3, 3))]),
        ("mlp 784-256-10 b64", mlp),
        ("attention 128x64", attention),
        ("exp.sum(0)+exp.max(1) 256", exp_sum_max),
        # forward + backward + SGD update (bench/train_step.py): the loss, the gradients and
        # the parameters' ASSIGNs scheduled together
        (train_step.NAME, lambda: train_step.step_tensors(*train_step.setup(T, train_step.data()))),
    ]


def measure(schedule: Callable[[list[Any]], int], progs: list, runs: int) -> dict[str, Any]:
    """{name: (median seconds, fastest seconds, kernel count)}; each run builds the program
    afresh. The fastest run is printed beside the median: on a shared machine it is the figure
    least disturbed by other processes."""
    out = {}
    for name, build in progs:
        times, count = [], 0
        for _ in range(runs):
            outs = build()
            gc.collect()
            gc.disable()  # as timeit does: a collection is noise, not scheduling time
            t0 = time.process_time()
            count = schedule(outs)
            times.append(time.process_time() - t0)
            gc.enable()
        out[name] = (statistics.median(times), min(times), count)
    return out


# ---------------------------------------------------------------------- the tinygrad side
def tinygrad_main(runs: int) -> None:
    from tinygrad import Tensor as T

    def buf(*shape: int) -> Any:
        return T.empty(*shape).realize()

    def schedule(outs: list[Any]) -> int:
        linear = outs[0].schedule_linear(*outs[1:])
        return len(linear.src)

    print(json.dumps(measure(schedule, programs(T, buf), runs)))


def run_tinygrad(runs: int) -> dict[str, Any] | None:
    if not os.path.exists(TINYGRAD_PYTHON):
        return None
    def run(dev: str) -> subprocess.CompletedProcess:
        return subprocess.run([TINYGRAD_PYTHON, __file__, "--tinygrad", "--runs", str(runs)],
                              capture_output=True, text=True, timeout=3600,
                              env={**os.environ, "PYTHONPATH": "", "DEV": dev}, cwd="/tmp")

    proc = run(os.environ.get("DEV", "CPU"))
    if proc.returncode != 0 and "DEV" not in os.environ:
        # tinygrad's CPU device needs clang; scheduling itself does not depend on the device
        print("tinygrad's CPU device failed (no clang?): scheduling on DEV=PYTHON",
              file=sys.stderr)
        proc = run("PYTHON")
    if proc.returncode != 0:
        print(f"tinygrad side failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- the rulegrad side
def chain(T: Any, n: int) -> Any:
    import numpy as np

    t = T(np.ones((16,), dtype=np.float32))
    for i in range(n):
        t = t * 1.0001 if i % 2 else t + 0.5
    return t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5, help="runs per program (median)")
    p.add_argument("--tinygrad", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-scale", action="store_true", help="skip the elementwise-chain check")
    p.add_argument("--cached", action="store_true",
                   help="keep both schedule caches on (default: off, to time the passes)")
    args = p.parse_args()
    os.environ["RULEGRAD_SCHEDULE_CACHE"] = os.environ["SCACHE"] = "1" if args.cached else "0"
    if args.tinygrad:
        tinygrad_main(args.runs)
        return
    import numpy as np

    from rulegrad import Tensor
    from rulegrad.runtime.schedule import create_schedule

    def buf(*shape: int) -> Any:
        return Tensor(np.zeros(shape, dtype=np.float32))

    def schedule(outs: list[Any]) -> int:
        return len(create_schedule([t.uop for t in outs]))

    def schedule_kz(outs: list[Any]) -> int:
        return len(create_schedule([t.uop for t in outs], scheduler="kernelize"))

    progs = programs(Tensor, buf)
    schedule(progs[0][1]())  # load the generated matchers before timing
    schedule_kz(progs[0][1]())
    ours = measure(schedule, progs, args.runs)
    kz = measure(schedule_kz, progs, args.runs)
    theirs = run_tinygrad(args.runs)
    print(f"{'program':30s} {'rulegrad':>10s} {'k':>3s} {'kernelize':>10s} {'k':>3s} "
          f"{'tinygrad':>10s} {'k':>3s} {'ratio':>6s} {'(fastest runs)':>16s}")
    ratios, fast_ratios = [], []
    for name, _ in progs:
        t, tmin, k = ours[name]
        line = f"{name:30s} {t * 1e3:8.2f}ms {k:3d} {kz[name][0] * 1e3:8.2f}ms {kz[name][2]:3d}"
        if theirs is not None and name in theirs:
            tt, ttmin, tk = theirs[name]
            ratios.append(t / tt)
            fast_ratios.append(tmin / ttmin)
            line += f" {tt * 1e3:8.2f}ms {tk:3d} {t / tt:6.2f} {tmin / ttmin:16.2f}"
        print(line)
    if ratios:
        print(f"median over programs of rulegrad/tinygrad (medians of runs): "
              f"{statistics.median(ratios):.2f}, max {max(ratios):.2f}; (fastest runs): "
              f"{statistics.median(fast_ratios):.2f}; target <= 0.5")
    else:
        print(f"(tinygrad 0.14 not found at {TINYGRAD_PYTHON}: rulegrad side only)")
    if args.no_scale:
        return
    per_op = {}
    for n in (1_000, 10_000):
        t = chain(Tensor, n)
        t0 = time.perf_counter()
        create_schedule([t.uop])
        per_op[n] = (time.perf_counter() - t0) / n
        print(f"chain of {n:6d} ops: {per_op[n] * 1e6:7.1f} us/op")
    print(f"per-op ratio n=10,000 / n=1,000: {per_op[10_000] / per_op[1_000]:.2f} (target <= 2)")
    os.environ["RULEGRAD_BACKEND"] = "interp"
    t = chain(Tensor, 100_000)
    t0 = time.perf_counter()
    got = t.numpy()
    want = chain(lambda a: a, 100_000)  # the same chain on numpy
    ok = np.allclose(got, want, rtol=1e-3)
    print(f"chain of 100000 ops scheduled and run (interp): {time.perf_counter() - t0:.1f}s, "
          f"{'matches numpy' if ok else 'MISMATCH'}")


if __name__ == "__main__":
    main()
