"""Products against numpy's BLAS: the packed kernels alone, numpy and ours timed interleaved.

    python bench/gemm.py [--threads 1,2] [--runs N] [--only NAME,...]
                         [--vs PYTHON] [--rounds R]

For each thread count (OMP_NUM_THREADS and OPENBLAS_NUM_THREADS, set before either library
starts, so each count runs in its own process) and each case: numpy's time and ours (the C
kernels of the case's schedule, `compile_program(sched).run(bufs)`), timed in alternating
blocks of calls; medians and the fastest call, GFLOP/s beside the machine's FMA peak (one core's
when one thread). With `--vs PYTHON` (another checkout's interpreter, e.g. main's venv) the
same worker runs under both interpreters, alternating, `--rounds` times each, and the table
shows both trees' np/ours side by side: ratios from one run of a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

# name: (input shapes, one expression read both ways (Tensors and arrays), multiply-adds)
CASES: dict[str, tuple] = {
    "matmul 512^3": ({"a": (512, 512), "b": (512, 512)}, "a @ b", 512**3),
    "matmul+bias+relu 512^3": ({"a": (512, 512), "b": (512, 512), "c": (512,)},
                               "relu(a @ b + c)", 512**3),
    "MLP layer 1 256x512x512": ({"a": (256, 512), "b": (512, 512), "c": (512,)},
                                "relu(a @ b + c)", 256 * 512 * 512),
    "MLP layer 2 256x512x128": ({"a": (256, 512), "b": (512, 128), "c": (128,)},
                                "a @ b + c", 256 * 512 * 128),
    "conv 8x16x32x32*32x16x3x3": ({"x": (8, 16, 32, 32), "w": (32, 16, 3, 3)}, "conv(x, w)",
                                  8 * 32 * 30 * 30 * 16 * 9),
    "matmul 256^3": ({"a": (256, 256), "b": (256, 256)}, "a @ b", 256**3),
    "matmul 1024^3": ({"a": (1024, 1024), "b": (1024, 1024)}, "a @ b", 1024**3),
    "matmul 384x768x512": ({"a": (384, 768), "b": (768, 512)}, "a @ b", 384 * 768 * 512),
    "matmul 500^3": ({"a": (500, 500), "b": (500, 500)}, "a @ b", 500**3),
    "batched 8x256x64x256": ({"a": (8, 256, 64), "b": (8, 64, 256)}, "a @ b", 8 * 256 * 64 * 256),
}


def _np_env() -> dict:
    def conv(x, w):
        win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
        return np.einsum("nchwyx,ocyx->nohw", win, w, optimize=True)
    return {"relu": lambda x: np.maximum(x, 0), "conv": conv}


def _rg_env() -> dict:
    return {"relu": lambda x: x.relu(), "conv": lambda x, w: x.conv2d(w)}


def worker(names: list[str], runs: int) -> dict:
    """{case: {np, ours, best_np, best_ours (seconds), macs}} and the FMA peak, in this
    process's thread setting."""
    from rulegrad import Tensor
    from rulegrad.backends.c import compile_program
    from rulegrad.backends.c.roofline import machine

    out: dict = {"peak": machine().fma_gflops, "cases": {}}
    for name in names:
        shapes, expr, macs = CASES[name]
        rng = np.random.default_rng(0)
        arrays = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
        tensors = {k: Tensor(v).realize() for k, v in arrays.items()}
        sched = eval(expr, _rg_env(), dict(tensors)).schedule()
        prog = compile_program(sched)
        bufs = [[b.ensure() for b in item.bufs] for item in sched]
        env = dict(arrays)
        fns = [lambda e=expr, v=env: eval(e, _np_env(), v), lambda p=prog, b=bufs: p.run(b)]
        times: list[list[float]] = [[], []]
        cpus: list[list[float]] = [[], []]
        block = 5
        for _ in range(max(1, runs // block)):
            for fn, ts, cs in zip(fns, times, cpus):
                fn()  # untimed: the other side's threads settle
                for _ in range(block):
                    c0, t0 = time.process_time(), time.perf_counter()
                    fn()
                    ts.append(time.perf_counter() - t0)
                    cs.append(time.process_time() - c0)
        out["cases"][name] = {"np": statistics.median(times[0]),
                              "ours": statistics.median(times[1]),
                              "best_np": min(times[0]), "best_ours": min(times[1]),
                              "cpu_np": statistics.median(cpus[0]),
                              "cpu_ours": statistics.median(cpus[1]), "macs": macs}
    return out


def _run(python: str, threads: int, names: list[str], runs: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               RULEGRAD_BACKEND="c")
    cmd = [python, __file__, "--worker", "--runs", str(runs), "--only", ",".join(names)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"bench/gemm.py: worker {python} failed:\n{res.stderr}")
    return json.loads(res.stdout.splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--vs", default="", help="another tree's python, compared in the same run")
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args()
    names = [n for n in CASES if not args.only or any(o in n for o in args.only.split(","))]
    if args.worker:
        print(json.dumps(worker(names, args.runs)))
        return 0
    pythons = {"ours": sys.executable, **({"vs": args.vs} if args.vs else {})}
    print(os.popen("uptime").read().strip())
    for threads in (int(t) for t in args.threads.split(",")):
        res: dict[str, list[dict]] = {k: [] for k in pythons}
        for _ in range(args.rounds):
            for key, py in pythons.items():
                res[key].append(_run(py, threads, names, args.runs))
        peak = max(r["peak"] for rs in res.values() for r in rs)
        peak_t = peak  # measured on the worker's threads (bench/roofline.py's kernel)
        print(f"\n{threads} thread(s): FMA peak {peak:.0f} GFLOP/s on {threads} thread(s); "
              f"medians of {args.rounds} rounds x {args.runs} calls; np/ours > 1: ours faster")
        head = f"{'case':28s} {'np ms':>7s} {'ours ms':>8s} {'GFLOP/s':>8s} {'%peak':>6s} "
        head += f"{'np/ours':>8s} {'best':>6s} {'cpu':>6s}"
        if "vs" in res:
            head += f" {'vs ms':>7s} {'np/vs':>6s} {'best':>6s} {'cpu':>6s} {'vs/ours':>8s}"
        print(head)
        for name in names:
            def agg(key: str, field: str, name: str = name, res: dict = res) -> float:
                return statistics.median(r["cases"][name][field] for r in res[key])
            macs = res["ours"][0]["cases"][name]["macs"]
            ours, np_t = agg("ours", "ours"), agg("ours", "np")
            gfl = 2 * macs / ours / 1e9
            line = (f"{name:28s} {np_t * 1e3:7.3f} {ours * 1e3:8.3f} {gfl:8.1f} "
                    f"{100 * gfl / peak_t:6.0f} {np_t / ours:8.2f} "
                    f"{agg('ours', 'best_np') / agg('ours', 'best_ours'):6.2f} "
                    f"{agg('ours', 'cpu_np') / agg('ours', 'cpu_ours'):6.2f}")
            if "vs" in res:
                vs, np_v = agg("vs", "ours"), agg("vs", "np")
                line += (f" {vs * 1e3:7.3f} {np_v / vs:6.2f} "
                         f"{agg('vs', 'best_np') / agg('vs', 'best_ours'):6.2f} "
                         f"{agg('vs', 'cpu_np') / agg('vs', 'cpu_ours'):6.2f} "
                         f"{(np_t / ours) / (np_v / vs):8.2f}")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
