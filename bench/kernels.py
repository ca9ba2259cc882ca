"""Kernel benchmark: warm wall time of whole `realize` calls through C, beside numpy (and
tinygrad 0.14 when /opt/tgenv has it), plus cold time and per-call overhead.

    python bench/kernels.py [--runs N] [--only NAME,...] [--no-tinygrad]

Each case builds its tensor graph from already-realized inputs and calls `realize()`, so a
warm time includes graph building, scheduling (rule passes), the in-process library lookup and
the kernels; "kernels" is the C kernels alone (the same schedule run directly). "cold" is the
first call of a case in a fresh cache folder: rendering and compiling included (the process's
own start-up, its first realize ever, is measured before the cases and shown apart). "#kz" and
"kz ms" are the kernel count and kernel time of the schedule rulegrad's second scheduler,
kernelize (runtime/kernelize.py), makes for the same program; "relerr" is the larger of the two
schedules' errors against numpy. Times are
medians of `--runs` runs, timed in interleaved blocks (ours, numpy, kernels; three rounds), each
block after a short untimed warm-up; ratios are numpy time / our time (> 1: faster than numpy).
tinygrad runs in its own interpreter (a subprocess, DEV=CPU); it is never a
rulegrad dependency.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

os.environ.setdefault("RULEGRAD_BACKEND", "c")
TG_PYTHON = "/opt/tgenv/bin/python"


@dataclass
class Case:
    name: str
    inputs: dict[str, tuple[int, ...]]
    rg: Callable[..., object]     # Tensors -> Tensor (lazy)
    np: Callable[..., np.ndarray]  # arrays -> array
    tg: str                        # the same in tinygrad: an expression over the input names
    blas: bool = False             # a sum of products: issue 15 asks for numpy's BLAS speed
    strided: bool = False          # issue 15's strided set: faster than tinygrad and numpy


def _layernorm_rg(x):
    mu = x.mean(axis=1, keepdim=True)
    d = x - mu
    return d / ((d * d).mean(axis=1, keepdim=True) + 1e-5).sqrt()


def _layernorm_np(x):
    mu = x.mean(axis=1, keepdims=True)
    d = x - mu
    return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + np.float32(1e-5))


def _softmax_np(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _conv_np(x, w):
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))  # n ci ho wo 3 3
    return np.einsum("nchwyx,ocyx->nohw", win, w, optimize=True)


def _mlp_rg(x, w1, b1, w2, b2):
    return (x @ w1 + b1).relu() @ w2 + b2


def _mlp_np(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def _attn_rg(q, k, v):
    s = (q @ k.transpose(1, 2)) * (1 / 8.0)
    return s.softmax(-1) @ v


def _attn_np(q, k, v):
    s = (q @ k.transpose(0, 2, 1)) * np.float32(1 / 8.0)
    return _softmax_np(s) @ v


def _pool3_np(x, reduce):
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    return reduce(win, axis=(-2, -1))


POOL = (16, 64, 64, 64)  # NCHW float32, 16 MB
CASES = [
    Case("relu(a*b+c) 4M", {"a": (4 << 20,), "b": (4 << 20,), "c": (4 << 20,)},
         lambda a, b, c: (a * b + c).relu(), lambda a, b, c: np.maximum(a * b + c, 0),
         "(a*b+c).relu()"),
    Case("row sum 2048x2048", {"x": (2048, 2048)}, lambda x: x.sum(axis=1),
         lambda x: x.sum(axis=1), "x.sum(axis=1)"),
    Case("full sum 4M", {"x": (4 << 20,)}, lambda x: x.sum(), lambda x: x.sum(), "x.sum()"),
    Case("softmax 1024x1024", {"x": (1024, 1024)}, lambda x: x.softmax(), _softmax_np,
         "x.softmax()"),
    Case("layernorm 1024x1024", {"x": (1024, 1024)}, _layernorm_rg, _layernorm_np,
         "x.layernorm(axis=1, eps=1e-5)"),
    Case("matmul 512^3", {"a": (512, 512), "b": (512, 512)}, lambda a, b: a @ b,
         lambda a, b: a @ b, "a@b", blas=True),
    # a matmul with an elementwise epilogue (bias, activation), fused into its store loop
    Case("matmul+bias+relu 512^3", {"a": (512, 512), "b": (512, 512), "c": (512,)},
         lambda a, b, c: (a @ b + c).relu(), lambda a, b, c: np.maximum(a @ b + c, 0),
         "(a@b+c).relu()", blas=True),
    Case("conv2d 8x16x32x32 * 32x16x3x3", {"x": (8, 16, 32, 32), "w": (32, 16, 3, 3)},
         lambda x, w: x.conv2d(w), _conv_np, "x.conv2d(w)", blas=True),
    Case("MLP 256x512-512-128", {"x": (256, 512), "w1": (512, 512), "b1": (512,),
                                 "w2": (512, 128), "b2": (128,)},
         _mlp_rg, _mlp_np, "(x@w1+b1).relu()@w2+b2", blas=True),
    Case("attention 8x256x64", {"q": (8, 256, 64), "k": (8, 256, 64), "v": (8, 256, 64)},
         _attn_rg, _attn_np, "(q@k.transpose(1,2)*(1/8.0)).softmax(-1)@v", blas=True),
    # strided and small-axis reductions (issue 15): pooling windows, sums down columns and
    # over a middle axis
    Case("maxpool 2x2 16x64x64x64", {"x": POOL},
         lambda x: x.reshape(16, 64, 32, 2, 32, 2).max(axis=(3, 5)),
         lambda x: x.reshape(16, 64, 32, 2, 32, 2).max(axis=(3, 5)),
         "x.reshape(16, 64, 32, 2, 32, 2).max(axis=(3, 5))", strided=True),
    Case("meanpool 2x2 16x64x64x64", {"x": POOL},
         lambda x: x.reshape(16, 64, 32, 2, 32, 2).mean(axis=(3, 5)),
         lambda x: x.reshape(16, 64, 32, 2, 32, 2).mean(axis=(3, 5)),
         "x.reshape(16, 64, 32, 2, 32, 2).mean(axis=(3, 5))", strided=True),
    Case("maxpool 3x3 s2 16x64x64x64", {"x": POOL},
         lambda x: x.max_pool2d(kernel_size=3, stride=2),
         lambda x: _pool3_np(x, np.max), "x.max_pool2d(kernel_size=3, stride=2)", strided=True),
    Case("avgpool 3x3 s2 16x64x64x64", {"x": POOL},
         lambda x: x.avg_pool2d(kernel_size=3, stride=2),
         lambda x: _pool3_np(x, np.mean), "x.avg_pool2d(kernel_size=3, stride=2)", strided=True),
    Case("column sum 2048x2048", {"x": (2048, 2048)}, lambda x: x.sum(axis=0),
         lambda x: x.sum(axis=0), "x.sum(axis=0)", strided=True),
    Case("middle sum 64x256x256", {"x": (64, 256, 256)}, lambda x: x.sum(axis=1),
         lambda x: x.sum(axis=1), "x.sum(axis=1)", strided=True),
    Case("middle max 64x256x256", {"x": (64, 256, 256)}, lambda x: x.max(axis=1),
         lambda x: x.max(axis=1), "x.max(axis=1)", strided=True),
]


BEST: dict[int, float] = {}  # id(fn) -> fastest run, for the "best" columns
BLOCK_WARMUP = 0.15  # seconds of untimed calls before each timed block
ROUNDS = 3  # blocks per function, interleaved: slow drift of a shared machine hits all sides


def _busy(fn: Callable[[], object], seconds: float) -> None:
    fn()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        fn()


def median_times(fns: list[Callable[[], object]], runs: int) -> list[float]:
    """Median time of each function, timed in ROUNDS interleaved blocks (A A A, B B B, A A A,
    ...) of about `runs / ROUNDS` calls. The fastest call is kept in BEST: on a shared machine
    it is the better estimate of what the code costs, the median of what a user sees.

    Each block starts after BLOCK_WARMUP seconds of untimed calls of its own function: after
    numpy's matmul, OpenBLAS's threads spin for about 0.1 s and take a core from whatever runs
    next, and this VM's idle vCPUs need a moment of load to reach full speed. The warm-up
    measures each side in its steady state rather than in the other's aftermath."""
    times: list[list[float]] = [[] for _ in fns]
    per_block = max(1, -(-runs // ROUNDS))
    for _ in range(ROUNDS):
        for fn, ts in zip(fns, times):
            _busy(fn, BLOCK_WARMUP)
            for _ in range(per_block):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
    for fn, ts in zip(fns, times):
        BEST[id(fn)] = min(ts)
    return [statistics.median(ts) for ts in times]


def process_startup() -> dict[str, float]:
    """The first realize of a process, of a program no case has: what a case's cold start would
    also pay if it came first (module imports, the first use of each pass, the compiler's
    version), measured apart so each case's cold is its own."""
    from rulegrad import Tensor
    from rulegrad.backends.c import blocks, build, launch

    built = build.stats["compile_seconds"]
    t0 = time.perf_counter()
    (Tensor([1.0]) + 1).realize()
    # the threads' launcher, built once per cache and loaded once per process, by the first
    # program with a launched kernel (backends/c/launch.py): counted here, not in that case
    launch.launcher(build.build_library)
    # likewise the float32 register blocks of the packed products (backends/c/blocks.py),
    # built once per cache and loaded by the first product, and the float32 exp's library
    # (backends/c/vexp.py), loaded by the first exp
    before = build.stats["compile_seconds"]
    blocks.load_float32(build.build_library)
    blocks.load_exp(build.build_library)
    return {"cold": time.perf_counter() - t0, "build": build.stats["compile_seconds"] - built,
            "blocks": build.stats["compile_seconds"] - before}


# a case's build is timed this many times, each in an empty cache and with no library loaded
# (the first is its cold start): one compiler run on a shared machine varies by a fifth
BUILD_REPEATS = 5
# numpy's BLAS (OpenBLAS) keeps its worker threads spinning for about 0.1 s after each call, and
# the bench times numpy's products right before the next case's cold start: a spinning thread
# held one of this machine's two cores while gcc ran, and an MLP's build (two compiler runs at
# once) took 66 ms instead of 45 (medians of 5, a 512^3 numpy matmul 20 times before each
# build; the same with a 0.15 s pause: 43-54). Builds are timed after this pause, as a user's
# first realize runs when no BLAS call has just finished.
SETTLE_SECONDS = 0.2


def fresh_build(realize: Callable[[], object]) -> float:
    """Seconds the C compiler ran for `realize` in an empty cache, with no program or library
    of this process reused; the bench's cache is restored after."""
    from rulegrad.backends.c import build, run

    cache = os.environ["RULEGRAD_CACHE"]
    os.environ["RULEGRAD_CACHE"] = tempfile.mkdtemp(prefix="rulegrad-bench-build-")
    build.clear_memory_cache()
    run._programs.clear()
    try:
        time.sleep(SETTLE_SECONDS)
        built = build.stats["compile_seconds"]
        realize()
        return build.stats["compile_seconds"] - built
    finally:
        shutil.rmtree(os.environ["RULEGRAD_CACHE"], ignore_errors=True)
        os.environ["RULEGRAD_CACHE"] = cache


def run_case(case: Case, runs: int) -> dict[str, float]:
    from rulegrad import Tensor
    from rulegrad.backends.c import compile_program

    rng = np.random.default_rng(0)
    arrays = {k: rng.standard_normal(s).astype(np.float32) for k, s in case.inputs.items()}
    tensors = {k: Tensor(v).realize() for k, v in arrays.items()}
    from rulegrad.backends.c import build

    time.sleep(SETTLE_SECONDS)  # (numpy's BLAS threads from the last case: see above)
    built = build.stats["compile_seconds"]
    t0 = time.perf_counter()
    out = case.rg(**tensors).realize()
    cold = time.perf_counter() - t0
    built = build.stats["compile_seconds"] - built  # the compiler's share of the cold start
    builds = [built, *(fresh_build(lambda: case.rg(**tensors).realize())
                       for _ in range(BUILD_REPEATS - 1))]
    ref = case.np(**arrays)
    err = float(np.max(np.abs(out.numpy() - ref)) / (np.max(np.abs(ref)) + 1e-30))
    f_rg = lambda: case.rg(**tensors).realize()  # noqa: E731
    f_rn = lambda: case.rg(**tensors).realize().numpy()  # noqa: E731  (as users read it)
    f_np = lambda: case.np(**arrays)  # noqa: E731
    sched = case.rg(**tensors).schedule()
    prog = compile_program(sched)
    bufs = [[b.ensure() for b in item.bufs] for item in sched]
    f_k = lambda: prog.run(bufs)  # noqa: E731
    sched_kz = case.rg(**tensors).schedule(scheduler="kernelize")
    prog_kz = compile_program(sched_kz)
    bufs_kz = [[b.ensure() for b in item.bufs] for item in sched_kz]
    f_kz = lambda: prog_kz.run(bufs_kz)  # noqa: E731
    out_kz = case.rg(**tensors).realize(scheduler="kernelize").numpy()
    err = max(err, float(np.max(np.abs(out_kz - ref)) / (np.max(np.abs(ref)) + 1e-30)))
    warm, warm_np, numpy_t, kern, kern_kz = median_times([f_rg, f_rn, f_np, f_k, f_kz], runs)
    from rulegrad.backends.c import roofline

    works = [roofline.work(item.ast, [b.size * b.dtype.itemsize for b in item.bufs])
             for item in sched]
    written = sum(_written_bytes(item) for item in sched)
    return {"cold": cold, "build": statistics.median(builds), "warm": warm, "warm_np": warm_np,
            "numpy": numpy_t,
            "kernels": kern, "written": written,
            "kz": kern_kz, "nkz": len(sched_kz),
            "bytes": sum(w.nbytes for w in works), "flops": sum(w.flops for w in works),
            "nkernels": len(sched), "relerr": err, "best_np": BEST[id(f_np)],
            "best_warm": BEST[id(f_rg)], "best_kern": BEST[id(f_k)]}


def _written_bytes(item) -> int:
    """The bytes of the buffers a kernel stores into (the rest of its buffers it only reads)."""
    from rulegrad.runtime.ops import Ops
    from rulegrad.runtime.uop import toposort

    slots = {n.src[0].src[0].arg for n in toposort(item.ast)
             if n.op is Ops.STORE and n.src[0].op is Ops.INDEX}
    return sum(b.size * b.dtype.itemsize for i, b in enumerate(item.bufs) if i in slots)


# A read-only stream, all threads, four 256-bit accumulators per thread: the rate at which this
# machine's cores read a buffer of a given size that was just read (a 16 MB input stays in this
# machine's 32 MB L3 between runs, as a case's input does between its runs), which bounds a
# reduction (it reads its input once and writes little). numpy has no read-only primitive that
# runs at this rate on all cores, so the bench measures it with its own kernel.
_READ_SOURCE = r"""
typedef float rg_uf32 __attribute__((vector_size(32), aligned(4)));
void rg_read_bw(void *v0, void *v1, long long n)
{
  const float *x = (const float *)v0;
  float *out = (float *)v1;
  float total = 0;
  #pragma omp parallel for reduction(+:total) if(n > 0)
  for (long long b = 0; b < (n < 0 ? -n : n) / 4096; b++) {
    rg_uf32 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    const float *p = x + b * 4096;
    for (long i = 0; i < 4096; i += 32) {
      a0 += *(const rg_uf32 *)(p + i); a1 += *(const rg_uf32 *)(p + i + 8);
      a2 += *(const rg_uf32 *)(p + i + 16); a3 += *(const rg_uf32 *)(p + i + 24);
    }
    const rg_uf32 s = a0 + a1 + a2 + a3;
    for (int l = 0; l < 8; l++) total += s[l];
  }
  out[0] = total;
}
"""


@functools.cache
def read_bandwidth(nbytes: int) -> float:
    """Bytes per second of the read-only stream above over `nbytes` (rounded to 16 KB), the
    fastest of 15 runs after 3 untimed ones, on all threads or on one (n < 0), whichever is
    faster (on a loaded machine a thread of the team may wait for a core)."""
    from rulegrad.backends.c.build import build_library
    from rulegrad.backends.c.render import RenderedKernel
    from rulegrad.runtime.dtype import dtypes

    lib = build_library([RenderedKernel("rg_read_bw", _READ_SOURCE, 2, (dtypes.float32,) * 2,
                                        ("n",), openmp=True)])
    fn = lib.function("rg_read_bw", 2, 1)
    x = np.ones(max(4096, nbytes // 4 // 4096 * 4096), np.float32)
    out = np.zeros(1, np.float32)
    best = math.inf
    for n in (x.size, -x.size):
        call = lambda n=n: fn(x.ctypes.data, out.ctypes.data, n)  # noqa: E731
        for _ in range(3):
            call()
        best = min(best, *(_timed(call) for _ in range(15)))
        assert out[0] == x.size  # the kernel read every element
    return x.nbytes / best


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def overhead(runs: int) -> dict[str, float]:
    """Per-call cost of an already-built 1-kernel program: the C call alone, and realize."""
    from rulegrad import Tensor
    from rulegrad.backends.c import compile_program

    a = Tensor(np.ones(1, np.float32)).realize()
    (a + 1).realize()
    sched = (a + 1).schedule()
    prog = compile_program(sched)
    bufs = [[b.ensure() for b in item.bufs] for item in sched]
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        prog.run(bufs)
    call = (time.perf_counter() - t0) / n
    realize = median_times([lambda: (a + 1).realize()], max(runs, 20))[0]
    return {"call": call, "realize": realize}


# ---------------------------------------------------------------------- the training step
def train_step_times(runs: int) -> dict[str, float]:
    """bench/train_step.py through rulegrad: the first step (scheduling and compiling
    included), the median warm step (graph, backward, schedule-cache lookup, kernels), and the
    kernel count of one step."""
    import train_step

    from rulegrad import Tensor
    from rulegrad.runtime.schedule import create_schedule

    t, opt = train_step.setup(Tensor, train_step.data())

    def step() -> list[object]:
        xs = train_step.step_tensors(t, opt)
        xs[0].realize(*xs[1:])
        return xs

    xs = train_step.step_tensors(t, opt)
    count = len(create_schedule([x.uop for x in xs]))
    t0 = time.perf_counter()
    xs[0].realize(*xs[1:])
    cold = time.perf_counter() - t0
    warm = median_times([step], runs)[0]
    return {"cold": cold, "warm": warm, "best": BEST[id(step)], "nkernels": count}


_TG_TRAIN_SCRIPT = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import train_step
from tinygrad import Tensor, Device
from tinygrad.helpers import GlobalCounters
runs = int(sys.argv[2])
t, opt = train_step.setup(Tensor, train_step.data())
def step():
    xs = train_step.step_tensors(t, opt)
    xs[0].realize(*xs[1:])
    Device[Device.DEFAULT].synchronize()
k0 = GlobalCounters.kernel_count
t0 = time.perf_counter(); step(); cold = time.perf_counter() - t0
count = GlobalCounters.kernel_count - k0
step(); step()
ts = []
for _ in range(runs):
    t0 = time.perf_counter(); step(); ts.append(time.perf_counter() - t0)
print(json.dumps({"warm": statistics.median(ts), "best": min(ts), "cold": cold,
                  "nkernels": count}))
"""


def tinygrad_train_step(runs: int) -> dict[str, float] | str:
    """tinygrad's times for the same step, or why there are none."""
    if not os.path.exists(TG_PYTHON):
        return f"no tinygrad environment at {TG_PYTHON}"
    env = {**os.environ, "DEV": "CPU"}
    env.pop("DEBUG", None)
    bench_dir = os.path.dirname(os.path.abspath(__file__))
    try:
        proc = subprocess.run([TG_PYTHON, "-c", _TG_TRAIN_SCRIPT, bench_dir, str(runs)], env=env,
                              capture_output=True, text=True, timeout=1800, cwd="/tmp")
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"not run ({e})"
    if proc.returncode != 0:
        return "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:120]
    return json.loads(proc.stdout.strip().splitlines()[-1])


_TG_SCRIPT = r"""
import json, statistics, sys, time
from tinygrad import Tensor, Device
cases = json.loads(sys.argv[1]); runs = int(sys.argv[2]); out = {}
for name, inputs, expr in cases:
    Tensor.manual_seed(0)
    env = {k: Tensor.randn(*s).realize() for k, s in inputs.items()}
    def f():
        r = eval(expr, {"Tensor": Tensor}, env).realize()
        Device[Device.DEFAULT].synchronize()
    def f_np():  # the result read as users read it
        eval(expr, {"Tensor": Tensor}, env).realize().numpy()
    t0 = time.perf_counter(); f(); cold = time.perf_counter() - t0
    f(); f(); f_np()
    ts, ts_np = [], []
    for _ in range(runs):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
        t0 = time.perf_counter(); f_np(); ts_np.append(time.perf_counter() - t0)
    out[name] = {"warm": statistics.median(ts), "warm_np": statistics.median(ts_np),
                 "cold": cold}
print(json.dumps(out))
"""


def tinygrad_times(cases: list[Case], runs: int) -> dict[str, dict[str, float]] | None:
    if not os.path.exists(TG_PYTHON):
        return None
    payload = json.dumps([[c.name, c.inputs, c.tg] for c in cases])
    env = {**os.environ, "DEV": "CPU"}
    env.pop("DEBUG", None)
    try:
        proc = subprocess.run([TG_PYTHON, "-c", _TG_SCRIPT, payload, str(runs)], env=env,
                              capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"tinygrad: not run ({e})", file=sys.stderr)
        return None
    if proc.returncode != 0:
        print("tinygrad failed:\n" + proc.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ms(t: float | None) -> str:
    return "-" if t is None else f"{t * 1e3:9.2f}"


def print_train_step(runs: int, no_tinygrad: bool) -> None:
    import train_step

    ours = train_step_times(runs)
    tg = "not asked (--no-tinygrad)" if no_tinygrad else tinygrad_train_step(runs)
    print(f"\n{train_step.NAME} (forward, backward, SGD update as ASSIGNs):")
    print(f"  rulegrad: warm step {_ms(ours['warm'])} ms (fastest {_ms(ours['best'])}), "
          f"first step {_ms(ours['cold'])} ms, {ours['nkernels']} kernels")
    if isinstance(tg, str):
        print(f"  tinygrad: {tg}")
    else:
        print(f"  tinygrad: warm step {_ms(tg['warm'])} ms (fastest {_ms(tg['best'])}), "
              f"first step {_ms(tg['cold'])} ms, {tg['nkernels']} kernels; "
              f"tinygrad / rulegrad warm: {tg['warm'] / ours['warm']:.2f}")


def print_roofline(cases: list[Case], results: dict[str, dict]) -> None:
    """Each case's kernels (fastest run) as GB/s and GFLOP/s beside this machine's measured
    copy bandwidth and FMA peak (backends/c/roofline.py)."""
    from rulegrad.backends.c import roofline

    m = roofline.machine()
    print(f"\nroofline: machine copy {m.copy_gbs:.1f} GB/s (numpy, best of 5), FMA peak "
          f"{m.fma_gflops:.0f} GFLOP/s (float32, {m.vector_bits}-bit, all threads, per thread "
          f"CPU time)")
    print(f"{'case':32s} {'MB':>7s} {'MFLOP':>9s} {'GB/s':>7s} {'%copy':>6s} {'GFLOP/s':>8s} "
          f"{'%peak':>6s}")
    for c in cases:
        r = results[c.name]
        if "error" in r:
            continue
        t = r["best_kern"]
        gbs, gfl = r["bytes"] / t / 1e9, r["flops"] / t / 1e9
        print(f"{c.name:32s} {r['bytes'] / 1e6:7.1f} {r['flops'] / 1e6:9.1f} {gbs:7.2f} "
              f"{100 * gbs / m.copy_gbs:6.0f} {gfl:8.2f} {100 * gfl / m.fma_gflops:6.1f}")


def print_bounds(cases: list[Case], results: dict[str, dict],
                 tg: dict[str, dict[str, float]] | None) -> None:
    """Which of issue 15's clauses each case meets: a sum of products (`Case.blas`) at least
    as fast as numpy's BLAS; any other at least 1.5x numpy (whole realize), or, where numpy
    itself is near the machine's limit, our kernels within 10% of that limit; a case of the
    strided set (`Case.strided`) also its own clause, faster than numpy and tinygrad. The
    limit of a case is the time to read what its kernels read at the read-only bandwidth plus
    to write what they write at the copy bandwidth (copy: bytes read + written per second)."""
    from rulegrad.backends.c import roofline

    copy = roofline.machine().copy_gbs * 1e9
    print(f"\nbounds: limit = bytes read / read bandwidth + bytes written / copy bandwidth "
          f"({copy / 1e9:.1f} GB/s); read bandwidth: a C stream summing a buffer of the case's "
          f"read size, warm, on all threads or one (the faster), fastest of 15 (rd GB/s); "
          f"%lim = limit / fastest run")
    print(f"{'case':32s} {'rd MB':>6s} {'rd GB/s':>7s} {'wr MB':>6s} {'lim ms':>7s} {'%lim':>5s} "
          f"{'np%lim':>6s} {'np/ours':>7s}  meets")
    for c in cases:
        r = results[c.name]
        if "error" in r:
            continue
        wr = r["written"]
        rd = r["bytes"] - wr
        read = read_bandwidth(rd)
        lim = rd / read + wr / copy
        ours, nump = 100 * lim / r["best_kern"], 100 * lim / r["best_np"]
        ratio = r["numpy"] / r["warm"]
        if c.blas:
            meets = "numpy's BLAS speed" if ratio >= 1 else "SLOWER than numpy's BLAS"
        elif ratio >= 1.5:
            meets = "1.5x numpy"
        elif ours >= 90:
            meets = f"within 10% of the limit (numpy at {nump:.0f}%)"
        else:
            meets = "NEITHER"
        if c.strided:  # (whole realize, as the other clauses)
            t = tg.get(c.name) if tg else None
            faster = ratio > 1 and (t is None or t["warm"] > r["warm"])
            meets += ("; strided set: faster than numpy" + (" and tinygrad" if t else "")
                      if faster else "; strided set: NOT faster than numpy and tinygrad")
        print(f"{c.name:32s} {rd / 1e6:6.1f} {read / 1e9:7.1f} {wr / 1e6:6.1f} "
              f"{lim * 1e3:7.2f} {ours:5.0f} {nump:6.0f} {ratio:7.2f}  {meets}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--only", help="comma-separated case name prefixes")
    p.add_argument("--no-tinygrad", action="store_true")
    args = p.parse_args(argv)
    cases = CASES
    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        cases = [c for c in CASES if any(c.name.startswith(k) for k in keys)]
    # a fresh cache: the first call of each case is a true cold start
    os.environ["RULEGRAD_CACHE"] = tempfile.mkdtemp(prefix="rulegrad-bench-")
    startup = process_startup()
    results = {}
    for c in cases:
        print(f"running {c.name} ...", file=sys.stderr, flush=True)
        try:
            results[c.name] = run_case(c, args.runs)
        except Exception as e:  # a case the pipeline cannot run yet: say so, run the rest
            results[c.name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"}
    tg = None if args.no_tinygrad else tinygrad_times(cases, args.runs)
    head = (f"{'case':32s} {'numpy ms':>9s} {'ours ms':>9s} {'np/ours':>8s} {'kern ms':>9s} "
            f"{'np/kern':>8s} {'best':>6s} {'#k':>3s} {'#kz':>3s} {'kz ms':>9s} {'cold ms':>9s} "
            f"{'build ms':>9s} {'tg cold':>9s} {'tg ms':>9s} "
            f"{'tg/ours':>8s} {'+np ms':>9s} {'tg +np':>9s} {'tg/ours':>8s} {'relerr':>8s}")
    print(head)
    print("-" * len(head))
    for c in cases:
        r = results[c.name]
        if "error" in r:
            print(f"{c.name:32s} FAILED {r['error']}")
            continue
        t = tg.get(c.name) if tg else None
        tgw = t["warm"] if t else None
        tg_ratio = f"{tgw / r['warm']:8.2f}" if tgw else f"{'-':>8s}"
        tgn = t.get("warm_np") if t else None
        tgn_ratio = f"{tgn / r['warm_np']:8.2f}" if tgn else f"{'-':>8s}"
        print(f"{c.name:32s} {_ms(r['numpy'])} {_ms(r['warm'])} {r['numpy'] / r['warm']:8.2f} "
              f"{_ms(r['kernels'])} {r['numpy'] / r['kernels']:8.2f} "
              f"{r['best_np'] / r['best_kern']:6.2f} {r['nkernels']:3d} {r['nkz']:3d} "
              f"{_ms(r['kz'])} {_ms(r['cold'])} {_ms(r['build'])} "
              f"{_ms(t['cold'] if t else None):>9s} {_ms(tgw):>9s} {tg_ratio} "
              f"{_ms(r['warm_np'])} {_ms(tgn):>9s} {tgn_ratio} {r['relerr']:8.1e}")
    print_roofline(cases, results)
    print_bounds(cases, results, tg)
    if not args.only or any("train".startswith(k.strip()) for k in args.only.split(",")):
        print_train_step(args.runs, args.no_tinygrad)
    ov = overhead(args.runs)
    print("\nnp/ours: whole realize() (graph, schedule, run); np/kern: the C kernels alone; "
          "best: fastest numpy run / fastest kernel run (the least disturbed by other load); "
          f"cold: the first realize in a fresh cache, of which build: the C compiler's run "
          f"(the median of {BUILD_REPEATS}, each in an empty cache); "
          "tg cold: tinygrad's first realize; +np: realize() then .numpy(), the result read as "
          "users read it (ours: a read-only view of the buffer, no copy)")
    print(f"process start-up: the first realize of this process (a 1-element add, before the "
          f"cases), the threads' launcher and the float32 register blocks (each built once per "
          f"cache) {startup['cold'] * 1e3:.1f} ms, of which build {startup['build'] * 1e3:.1f} "
          f"ms (the blocks {startup['blocks'] * 1e3:.1f}; the rest: imports, the first "
          f"scheduler and backend use, the compiler's version asked once); each case's cold "
          f"comes after it")
    print(f"per-call overhead, built 1-kernel program: C call {ov['call'] * 1e6:.1f} us; "
          f"whole realize() of a 1-element op {ov['realize'] * 1e6:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
