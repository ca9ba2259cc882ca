"""rulegrad beside the compilers a CPU user would pick: numpy, torch eager, torch.compile and
jax.jit, on every workload family and a training step.

    python bench/peers.py [--only NAME,...] [--rounds N] [--no-compile] [--no-train]

Each case is called as its users call it: inputs already in the framework's arrays, the result
read as a numpy array. Times are wall-clock medians of `--rounds` (>= 5) interleaved rounds in
one run; outputs are checked against torch eager. rulegrad is called through `rulegrad.jit`
(`--no-jit`: directly), as torch.compile and jax.jit are. Every peer runs at its best on THREADS
threads with OMP_WAIT_POLICY=passive (harness.py); torch.compile takes the better of its
default and max-autotune-no-cudagraphs modes. "cold" is each side's first call (tracing,
compiling), in this process; the cold start line is each side's first call in a fresh process
with an empty cache (`--no-cold` skips it). "best" is the fastest of torch eager, torch.compile
and jax.jit; "vs best" is its time over rulegrad's (> 1: rulegrad is faster). "roof" is
rulegrad's share of the measured FMA peak (products) or copy bandwidth (memory-bound cases).
torch and jax are bench-only (`pip install -e ".[bench]"`).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from harness import (
    close,
    copy_bandwidth,
    fma_peak,
    geomean,
    interleaved_medians,
    jax_module,
    roof_share,
    torch_module,
)
from workloads import point

CASES = [
    ("elementwise", (1 << 22,)), ("sum", (1, 2048, 2048)), ("softmax", (1024, 1024)),
    ("layernorm", (1024, 1024)), ("matmul", (512, 512, 512)),
    ("linear_gelu", (256, 1024, 1024)), ("mlp", (256, 784, 512, 10)),
    ("conv2d", (16, 32, 32, 64, 3, 1)), ("attention", (8, 512, 64)), ("maxpool", (16, 64, 64)),
    ("batchnorm", (64, 64, 32)), ("logsumexp", (4096, 1024)), ("add", (16,)),
]
TRAIN = [(784, 256, 10, 128), (64, 128, 10, 64)]


def _cold(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _compiled(torch, fn, ins, want, rounds):
    """torch.compile's better mode for `fn`: (callable, cold seconds)."""
    best = None
    for mode in ("default", "max-autotune-no-cudagraphs"):
        torch._dynamo.reset()
        cf = torch.compile(fn, mode=mode)
        call = lambda cf=cf: cf(**ins).numpy()  # noqa: E731
        cold = _cold(call)
        (t,) = interleaved_medians([call], max(2, rounds // 2))
        if best is None or t < best[2]:
            best = (call, cold, t)
    return best[0], best[1]


def run_case(torch, jax, family: str, shape: tuple, rounds: int, compile_: bool,
             jit: bool) -> dict:
    import rulegrad
    p = point(family, *shape)
    ins_t = {k: torch.from_numpy(v.copy()) for k, v in p.inputs.items()}
    with torch.no_grad():
        want = p.torch(**ins_t).numpy()
        sides: dict[str, object] = {}
        cold: dict[str, float] = {}
        ins_rg = {k: rulegrad.Tensor(v).realize() for k, v in p.inputs.items()}
        rg = rulegrad.jit(p.rg) if jit else p.rg  # as jax.jit and torch.compile are called
        sides["rulegrad"] = lambda: rg(**ins_rg).numpy()
        cold["rulegrad"] = _cold(sides["rulegrad"])
        sides["torch"] = lambda: p.torch(**ins_t).numpy()
        if compile_:
            sides["compile"], cold["compile"] = _compiled(torch, p.torch, ins_t, want, rounds)
        if jax is not None:
            ins_j = {k: jax.device_put(v) for k, v in p.inputs.items()}
            jf = jax.jit(p.jax)
            sides["jax"] = lambda: np.asarray(jf(**ins_j))
            cold["jax"] = _cold(sides["jax"])
        ok = {name: close(fn(), want, **p.tol) for name, fn in sides.items()}
        times = dict(zip(sides, interleaved_medians(list(sides.values()), rounds)))
    return {"name": p.name, "times": times, "cold": cold, "ok": ok,
            "roof": roof_share(p.flops, p.nbytes, times["rulegrad"])}


PEERS = ("torch", "compile", "jax")


def _header() -> None:
    print(f"{'case':<30} {'rulegrad':>9} {'torch':>9} {'compile':>9} {'jax':>9} "
          f"{'vs best':>8} {'roof':>5}  cold ms (rulegrad / compile / jax)")


def _report(rows: list[dict]) -> None:
    peers = PEERS
    for r in rows:
        t = r["times"]
        best = min(t[p] for p in peers if p in t)
        cells = " ".join(f"{t[p] * 1e3:>9.3f}" if p in t else f"{'-':>9}" for p in peers)
        cold = " / ".join(f"{r['cold'][p] * 1e3:.0f}" if p in r["cold"] else "-"
                          for p in ("rulegrad", "compile", "jax"))
        wrong = [name for name, ok in r["ok"].items() if not ok]
        print(f"{r['name']:<30} {t['rulegrad'] * 1e3:>9.3f} {cells} "
              f"{best / t['rulegrad']:>7.2f}x {r['roof'] * 100:>4.0f}%  {cold}"
              + (f"  WRONG: {', '.join(wrong)}" if wrong else ""), flush=True)


def train_case(torch, jax, sizes: tuple, rounds: int, compile_: bool, jit: bool = True) -> dict:
    """One SGD step of an MLP with a log-softmax loss: forward, backward, update, loss read;
    rulegrad's through `rulegrad.jit` (`jit` false: the step run as it is every call, its
    realizes served by the schedule cache and plans)."""
    import rulegrad
    from rulegrad.nn.optim import SGD

    d, h, o, b = sizes
    rng = np.random.default_rng(0)
    w = {"w1": (rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32),
         "b1": np.zeros(h, np.float32),
         "w2": (rng.standard_normal((h, o)) / np.sqrt(h)).astype(np.float32),
         "b2": np.zeros(o, np.float32)}
    x = rng.standard_normal((b, d)).astype(np.float32)
    y = np.eye(o, dtype=np.float32)[rng.integers(0, o, b)]
    lr = 0.01

    rp = {k: rulegrad.Tensor(v.copy(), requires_grad=True).realize() for k, v in w.items()}
    rx, ry = rulegrad.Tensor(x).realize(), rulegrad.Tensor(y).realize()
    opt = SGD(list(rp.values()), lr=lr)

    def rg_train(x, y):
        opt.zero_grad()
        logits = (x @ rp["w1"] + rp["b1"]).relu() @ rp["w2"] + rp["b2"]
        loss = -(logits.log_softmax(1) * y).sum(1).mean()
        loss.backward()
        opt.step(loss)  # the loss realized with the update, from the weights before it
        return loss

    if jit:  # the step's kernels recorded once, then replayed (runtime/jit.py)
        rg_train = rulegrad.jit(rg_train)

    def rg_step():
        return rg_train(rx, ry).item()

    tp = {k: torch.from_numpy(v.copy()).requires_grad_() for k, v in w.items()}
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    topt = torch.optim.SGD(list(tp.values()), lr=lr)

    def t_fwd(p):
        logits = torch.relu(tx @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return -(torch.log_softmax(logits, 1) * ty).sum(1).mean()

    def t_step(fwd=t_fwd):
        topt.zero_grad()
        loss = fwd(tp)
        loss.backward()
        topt.step()
        return loss.item()

    sides = {"rulegrad": rg_step, "torch": t_step}
    if compile_:
        cf = torch.compile(t_fwd)
        sides["compile"] = lambda: t_step(cf)
    if jax is not None:
        import jax.numpy as jnp

        def j_loss(p, x, y):
            logits = jnp.maximum(x @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"]
            return -(jax.nn.log_softmax(logits, 1) * y).sum(1).mean()

        @jax.jit
        def j_update(p, x, y):
            loss, g = jax.value_and_grad(j_loss)(p, x, y)
            return loss, {k: p[k] - lr * g[k] for k in p}

        jp = {k: jax.device_put(v.copy()) for k, v in w.items()}
        jx, jy = jax.device_put(x), jax.device_put(y)
        state = {"p": jp}

        def j_step():
            loss, state["p"] = j_update(state["p"], jx, jy)
            return float(loss)

        sides["jax"] = j_step
    # torch eager and compile share their parameters: torch's two steps are checked, then
    # compile's first step goes on from them and is timed as its cold call
    cold, losses = {}, {}
    for k in ("rulegrad", "torch", "jax"):
        if k in sides:
            t0 = time.perf_counter()
            losses[k] = [sides[k]()]
            cold[k] = time.perf_counter() - t0
            losses[k].append(sides[k]())  # the second loss shows the first update was right
    if "compile" in sides:
        cold["compile"] = _cold(sides["compile"])
    ok = {k: np.allclose(v, losses["torch"], rtol=1e-4, atol=1e-5) for k, v in losses.items()}
    times = dict(zip(sides, interleaved_medians(list(sides.values()), rounds)))
    return {"name": f"train {d}-{h}-{o} b{b}", "times": times, "cold": cold, "ok": ok,
            "roof": 0.0}


# a first call in a fresh process: (imports, then the first add's seconds) printed by the child
_COLD_CHILD = {
    "rulegrad": ("import time; t0 = time.perf_counter(); import numpy as np; "
                 "from rulegrad import Tensor; t1 = time.perf_counter(); "
                 "x = np.arange(16, dtype=np.float32); r = (Tensor(x) + Tensor(x)).numpy(); "
                 "t2 = time.perf_counter(); assert (r == 2 * x).all(); print(t1 - t0, t2 - t1)"),
    "jax": ("import time; t0 = time.perf_counter(); import numpy as np, jax; "
            "t1 = time.perf_counter(); x = jax.device_put(np.arange(16, dtype=np.float32)); "
            "r = np.asarray(jax.jit(lambda a, b: a + b)(x, x)); t2 = time.perf_counter(); "
            "assert (r == 2 * np.arange(16)).all(); print(t1 - t0, t2 - t1)"),
}


# a first training step in a fresh process (TRAIN[0]'s sizes): the seconds from the model's
# arrays to the first loss read, forward, backward and update, as `train_case` steps
_STEP_SETUP = ("import time, numpy as np; d, h, o, b = {sizes}; rng = np.random.default_rng(0); "
               "w = {{'w1': (rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32), "
               "'b1': np.zeros(h, np.float32), "
               "'w2': (rng.standard_normal((h, o)) / np.sqrt(h)).astype(np.float32), "
               "'b2': np.zeros(o, np.float32)}}; "
               "x = rng.standard_normal((b, d)).astype(np.float32); "
               "y = np.eye(o, dtype=np.float32)[rng.integers(0, o, b)]; ")
_STEP_CHILD = {
    "rulegrad": _STEP_SETUP + (
        "t0 = time.perf_counter(); import rulegrad; from rulegrad.nn.optim import SGD; "
        "p = {{k: rulegrad.Tensor(v, requires_grad=True).realize() for k, v in w.items()}}; "
        "opt = SGD(list(p.values()), lr=0.01); tx, ty = rulegrad.Tensor(x), rulegrad.Tensor(y)\n"
        "def step():\n opt.zero_grad(); "
        "logits = (tx @ p['w1'] + p['b1']).relu() @ p['w2'] + p['b2']; "
        "loss = -(logits.log_softmax(1) * ty).sum(1).mean(); loss.backward(); opt.step(loss); "
        "return loss.item()\n"
        "t1 = time.perf_counter(); step(); t2 = time.perf_counter(); print(t1 - t0, t2 - t1)"),
    "jax": _STEP_SETUP + (
        "t0 = time.perf_counter(); import jax, jax.numpy as jnp\n"
        "def f(p, x, y):\n logits = jnp.maximum(x @ p['w1'] + p['b1'], 0) @ p['w2'] + p['b2']; "
        "return -(jax.nn.log_softmax(logits, 1) * y).sum(1).mean()\n"
        "@jax.jit\ndef update(p, x, y):\n loss, g = jax.value_and_grad(f)(p, x, y); "
        "return loss, {{k: p[k] - 0.01 * g[k] for k in p}}\n"
        "p = {{k: jax.device_put(v) for k, v in w.items()}}; jx, jy = jax.device_put(x), "
        "jax.device_put(y); t1 = time.perf_counter(); float(update(p, jx, jy)[0]); "
        "t2 = time.perf_counter(); print(t1 - t0, t2 - t1)"),
}


def cold_start(runs: int = 3) -> dict[str, tuple[float, float]]:
    """The issue's cold start, each side's best of `runs` fresh processes: (import seconds,
    first call seconds) of a tiny add, rulegrad with an empty cache of its own and nothing
    prebuilt, jax.jit from its own cache-less start; and ("cc", (0, seconds)) of a bare
    `cc -shared` of a one-line kernel. The bound: max(jax's first call, 1.5x cc's)."""
    import os
    import subprocess
    import tempfile

    out: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "one.c")
        with open(src, "w") as f:
            f.write("void k(float *o, const float *a, const float *b) "
                    "{ for (int i = 0; i < 16; i++) o[i] = a[i] + b[i]; }\n")
        best = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", src, "-o",
                            os.path.join(tmp, "one.so")], check=True)
            best.append(time.perf_counter() - t0)
        out["cc"] = (0.0, min(best))
        # Python's own bytecode is what an install makes (pip compiles it; jax's is there):
        # the children may write and read theirs, under tmp, and the best run is reported
        env0 = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env0["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
        for side, code in _COLD_CHILD.items():
            times = []
            for i in range(runs + 1):  # (the first run may write the bytecode: not counted)
                env = {**env0, "RULEGRAD_CACHE": os.path.join(tmp, f"cache-{side}-{i}")}
                proc = subprocess.run([sys.executable, "-c", code], env=env,
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    break  # (jax missing: no column)
                if i:
                    times.append(tuple(map(float, proc.stdout.split())))
            if times:
                out[side] = min(times, key=lambda t: t[1])
        # the first training step: with an empty cache ("step"), then in another fresh process
        # over the cache that run filled ("step, cache kept": what a second run of a script sees)
        for side, code in _STEP_CHILD.items():
            code = code.format(sizes=TRAIN[0])
            kept = (("step, cache kept", True),) if side == "rulegrad" else ()  # (jax keeps none)
            for label, reuse in (("step", False), *kept):
                times = []
                for i in range(runs + 1):
                    cache = os.path.join(tmp, f"step-{side}-{0 if reuse else i}")
                    proc = subprocess.run([sys.executable, "-c", code],
                                          env={**env0, "RULEGRAD_CACHE": cache},
                                          capture_output=True, text=True)
                    if proc.returncode != 0:
                        break
                    if i:
                        times.append(tuple(map(float, proc.stdout.split())))
                if times:
                    out[f"{side} {label}"] = min(times, key=lambda t: t[1])
    return out


def _report_cold(cold: dict[str, tuple[float, float]]) -> None:
    cc = cold["cc"][1]
    bound = max(cold["jax"][1] if "jax" in cold else 0.0, 1.5 * cc)
    steps = {k: v for k, v in cold.items() if " step" in k}
    if steps:
        print(f"first training step {'-'.join(map(str, TRAIN[0][:3]))} b{TRAIN[0][3]}, fresh "
              "process: " + ", ".join(f"{k} {v[1] * 1e3:.0f} ms (import and setup "
                                      f"{v[0] * 1e3:.0f} ms)" for k, v in steps.items()))
    sides = ", ".join(f"{k} {v[1] * 1e3:.0f} ms (import {v[0] * 1e3:.0f} ms)"
                      for k, v in cold.items() if k != "cc" and k not in steps)
    print(f"cold start, fresh process, empty cache (first call): {sides}; bare cc -shared "
          f"{cc * 1e3:.0f} ms; bound max(jax, 1.5x cc) {bound * 1e3:.0f} ms"
          + ("" if "rulegrad" not in cold else
             f"; rulegrad {'within' if cold['rulegrad'][1] <= bound else 'OVER'} it"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated families to run")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--no-train", action="store_true", help="skip the training steps")
    ap.add_argument("--no-jit", action="store_true",
                    help="call rulegrad directly, not through rulegrad.jit's replay")
    ap.add_argument("--no-cold", action="store_true",
                    help="skip the cold start in fresh processes with empty caches")
    args = ap.parse_args(argv)
    torch, jax = torch_module(), jax_module()
    if torch is None:
        print("bench/peers.py needs torch: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    if jax is None:
        print("jax is not installed: its column is left out", file=sys.stderr)
    print(f"roofs: FMA peak {fma_peak() / 1e9:.0f} GFLOP/s, copy {copy_bandwidth() / 1e9:.1f} "
          f"GB/s; times in ms")
    only = set(filter(None, args.only.split(",")))
    unknown = sorted(only - {family for family, _ in CASES})
    if unknown:
        ap.error(f"unknown case {', '.join(unknown)}; the cases: "
                 + ", ".join(family for family, _ in CASES))
    rows = []
    _header()
    for family, shape in CASES:
        if only and family not in only:
            continue
        rows.append(run_case(torch, jax, family, shape, max(5, args.rounds),
                             not args.no_compile, not args.no_jit))
        _report(rows[-1:])
    if not args.no_train:
        for sizes in TRAIN:
            rows.append(train_case(torch, jax, sizes, max(5, args.rounds), not args.no_compile,
                                   not args.no_jit))
            _report(rows[-1:])
    if not args.no_cold:
        _report_cold(cold_start())
    speeds = [min(r["times"][p] for p in ("torch", "compile", "jax") if p in r["times"])
              / r["times"]["rulegrad"] for r in rows]
    wrong = sum(not all(r["ok"].values()) for r in rows)
    print(f"\ngeomean speed over the best peer: {geomean(speeds):.2f}x over {len(rows)} cases; "
          f"worst {min(speeds):.2f}x; {wrong} with a wrong output")
    return 1 if wrong else 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
