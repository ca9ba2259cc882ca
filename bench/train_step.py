"""The MLP training step the benchmarks time, written once for rulegrad and tinygrad.

An MLP 784-256-10 on a batch of 64: forward, cross-entropy against one-hot labels, backward,
and an SGD update of the four parameters. `step_tensors` returns what one step realizes (the
loss, then the optimizer's tensors: parameters holding their ASSIGNs, and for rulegrad the
gradients), built from the library's own Tensor and SGD classes.

Run as a script, it times a step over a fresh batch, as users train (a new Tensor of a numpy
array each step, `opt.step(loss)`, the loss read), beside torch eager and torch.compile doing
the same, and the same step over one batch used every step (`--same` only). rulegrad's step is
timed twice: as written (no jit: each step builds its graphs) and under `rulegrad.jit` (given
the batch's arrays; from its fourth call a replay of the recorded kernels):

    python bench/train_step.py [--sizes 784-256-10-128,64-128-10-64] [--rounds N] [--same]
                               [--no-compile] [--cpu] [--old OLD_TREE [--steps N]]

Times are wall-clock medians of interleaved rounds (bench/harness.py), with the CPU time of
the whole run; "eager/rg" and "compile/rg" are torch's time over rulegrad's (> 1: rulegrad is
faster), "eager/jit" and "compile/jit" the same over the jitted step's. The losses of each
side's first steps are checked against torch eager's.

With `--old OLD_TREE` (`git archive main | tar -x -C /tmp/old`), the step without the jit of that
tree and of this one instead, in two worker processes (bench/ab.py's), `--steps` steps a turn,
taking turns round by round: each side's median per step and the median and range of the
per-round ratios old/new (> 1: this tree is faster; the range says how noisy the machine was).
"""

from __future__ import annotations

from typing import Any

import numpy as np

SHAPES = {"w1": (784, 256), "b1": (256,), "w2": (256, 10), "b2": (10,)}
BATCH, LR = 64, 0.01
NAME = "mlp train step 784-256-10 b64"


def data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {k: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
           for k, s in SHAPES.items()}
    out["x"] = rng.standard_normal((BATCH, 784)).astype(np.float32)
    out["y"] = np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)]
    return out


def setup(T: Any, arrays: dict[str, np.ndarray]) -> tuple[dict[str, Any], Any]:  # noqa: N803
    """The tensors (parameters realized, requires_grad) and the library's SGD over them."""
    if T.__module__.startswith("tinygrad"):
        from tinygrad.helpers import TRAINING
        from tinygrad.nn.optim import SGD

        TRAINING.value = 1  # tinygrad's optimizers refuse to step otherwise
    else:
        from rulegrad.nn.optim import SGD
    t = {k: T(v) for k, v in arrays.items()}
    for k in SHAPES:
        t[k].requires_grad = True
    T.realize(*t.values())
    return t, SGD([t[k] for k in SHAPES], lr=LR)


def step_tensors(t: dict[str, Any], opt: Any) -> list[Any]:
    """One step's tensors to realize together: the loss first."""
    opt.zero_grad()
    logits = (t["x"] @ t["w1"] + t["b1"]).relu() @ t["w2"] + t["b2"]
    loss = -(logits.log_softmax(1) * t["y"]).sum(1).mean()
    loss.backward()
    return [loss, *opt.schedule_step()]


def _mlp(d: int, h: int, o: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"w1": (rng.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32),
            "b1": np.zeros(h, np.float32),
            "w2": (rng.standard_normal((h, o)) / np.sqrt(h)).astype(np.float32),
            "b2": np.zeros(o, np.float32)}


def _batches(d: int, o: int, b: int, n: int = 8, seed: int = 1) -> list[tuple]:
    """n batches, drawn before timing; a step takes the next one (a new array each step)."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((b, d)).astype(np.float32),
             np.eye(o, dtype=np.float32)[rng.integers(0, o, b)]) for _ in range(n)]


def _rulegrad_step(w: dict, batches: list[tuple], same: bool, jit: bool = False):
    """rulegrad's step; with `jit`, the same step under `rulegrad.jit`, given the batch's
    numpy arrays (a replay copies them into its own buffers: no Tensor is made)."""
    import rulegrad
    from rulegrad import Tensor
    from rulegrad.nn.optim import SGD

    p = {k: Tensor(v.copy(), requires_grad=True).realize() for k, v in w.items()}
    opt = SGD(list(p.values()), lr=LR)
    held = [(Tensor(x).realize(), Tensor(y).realize()) for x, y in batches[:1]]
    at = [0]

    def train(x, y):
        opt.zero_grad()
        logits = (x @ p["w1"] + p["b1"]).relu() @ p["w2"] + p["b2"]
        loss = -(logits.log_softmax(1) * y).sum(1).mean()
        loss.backward()
        opt.step(loss)
        return loss

    f = rulegrad.jit(train) if jit else train

    def step() -> float:
        if same:
            x, y = held[0]
        else:
            xb, yb = batches[at[0] % len(batches)]
            at[0] += 1
            x, y = (xb, yb) if jit else (Tensor(xb), Tensor(yb))
        return f(x, y).item()
    return step


def _torch_step(torch, w: dict, batches: list[tuple], same: bool, compiled: bool):
    p = {k: torch.from_numpy(v.copy()).requires_grad_() for k, v in w.items()}
    opt = torch.optim.SGD(list(p.values()), lr=LR)

    def fwd(x, y):
        logits = torch.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return -(torch.log_softmax(logits, 1) * y).sum(1).mean()

    f = torch.compile(fwd) if compiled else fwd
    at = [0]

    def step() -> float:
        xb, yb = batches[0 if same else at[0] % len(batches)]
        at[0] += 1
        opt.zero_grad()
        loss = f(torch.from_numpy(xb), torch.from_numpy(yb))
        loss.backward()
        opt.step()
        return loss.item()
    return step


_WORKER = r'''
import sys, time
root, here, size, steps = sys.argv[1:5]
''' + "{USE_TREE}" + r'''
sys.path.insert(0, here + "/bench")
import train_step, rulegrad
assert rulegrad.__file__.startswith(root), rulegrad.__file__
d, h, o, b = map(int, size.split("-"))
step = train_step._rulegrad_step(train_step._mlp(d, h, o), train_step._batches(d, o, b), False)
for _ in range(30):
    step()
print("ready", flush=True)
for _ in sys.stdin:  # (a turn: `steps` steps, their CPU time per step)
    t = time.process_time()
    for _ in range(int(steps)):
        step()
    print((time.process_time() - t) / int(steps), flush=True)
'''


def old_against_new(old: str, sizes: str, rounds: int, steps: int) -> None:
    """The no-jit step of tree `old` and of this one, interleaved (`--old`)."""
    import os
    import statistics
    import subprocess
    import sys
    from pathlib import Path

    from ab import USE_TREE

    here = str(Path(__file__).resolve().parent.parent)
    code = _WORKER.replace("{USE_TREE}", USE_TREE)
    for size in sizes.split(","):
        procs = {tag: subprocess.Popen(
            [sys.executable, "-c", code, str(Path(root).resolve()), here, size, str(steps)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, RULEGRAD_CACHE=f"{os.environ.get('RULEGRAD_CACHE', '/tmp/rg')}"
                                                f"-{tag}")) for tag, root in (("old", old),
                                                                                ("new", here))}
        for p in procs.values():
            if p.stdout.readline().strip() != "ready":
                raise SystemExit(f"a worker failed to start for {size}")
        times: dict[str, list[float]] = {"old": [], "new": []}
        for r in range(rounds):  # (each side first in every other round)
            for tag in (("old", "new") if r % 2 == 0 else ("new", "old")):
                procs[tag].stdin.write("go\n")
                procs[tag].stdin.flush()
                times[tag].append(float(procs[tag].stdout.readline()))
        for p in procs.values():
            p.stdin.close()
            p.wait()
        ratios = [a / b for a, b in zip(times["old"], times["new"])]
        print(f"no-jit step {size}: old {statistics.median(times['old']) * 1e3:.3f} ms, "
              f"new {statistics.median(times['new']) * 1e3:.3f} ms, old/new "
              f"{statistics.median(ratios):.3f} (rounds {min(ratios):.2f}-{max(ratios):.2f})",
              flush=True)


def main() -> None:
    import argparse
    import time

    from harness import interleaved_medians, torch_module

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="784-256-10-128,64-128-10-64",
                    help="d-h-o-batch, comma-separated")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--same", action="store_true", help="also one batch used every step")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--cpu", action="store_true",
                    help="time CPU, not wall clock (a loaded machine; torch on one thread)")
    ap.add_argument("--old", help="a source tree: its no-jit step against this tree's")
    ap.add_argument("--steps", type=int, default=100, help="steps per turn with --old")
    args = ap.parse_args()
    if args.old:
        return old_against_new(args.old, args.sizes, args.rounds, args.steps)
    torch = torch_module()
    if args.cpu and torch is not None:
        torch.set_num_threads(1)  # (its other threads' CPU would count, not their wall time)
    modes = [False, True] if args.same else [False]
    print(f"{'step':<34} {'rulegrad ms':>11} {'jit ms':>7} {'eager ms':>9} {'compile ms':>10} "
          f"{'eager/rg':>8} {'compile/rg':>10} {'eager/jit':>9} {'compile/jit':>11}")
    for sizes in args.sizes.split(","):
        d, h, o, b = map(int, sizes.split("-"))
        w, batches = _mlp(d, h, o), _batches(d, o, b)
        for same in modes:
            sides = {"rulegrad": _rulegrad_step(w, batches, same),
                     "jit": _rulegrad_step(w, batches, same, jit=True)}
            if torch is not None:
                sides["eager"] = _torch_step(torch, w, batches, same, False)
                if not args.no_compile:
                    sides["compile"] = _torch_step(torch, w, batches, same, True)
            # the first steps of each side from the same weights and batches: equal losses
            losses = {k: [f() for _ in range(3)] for k, f in sides.items()}
            wrong = [k for k, v in losses.items() if "eager" in losses and
                     not np.allclose(v, losses["eager"], rtol=1e-4, atol=1e-5)]
            cpu = time.process_time()
            clock = time.process_time if args.cpu else time.perf_counter
            times = dict(zip(sides, interleaved_medians(list(sides.values()), args.rounds,
                                                        clock=clock)))
            cpu = time.process_time() - cpu
            rg, jt = times["rulegrad"], times["jit"]
            cells = [f"{times[k] * 1e3:>9.3f}" if k in times else f"{'-':>9}"
                     for k in ("eager", "compile")]
            ratios = [f"{times[k] / base:>8.2f}x" if k in times else f"{'-':>9}"
                      for base in (rg, jt) for k in ("eager", "compile")]
            name = f"{'same' if same else 'fresh'} batch {d}-{h}-{o} b{b}"
            print(f"{name:<34} {rg * 1e3:>11.3f} {jt * 1e3:>7.3f} {cells[0]} {cells[1]:>10} "
                  f"{ratios[0]} {ratios[1]:>10} {ratios[2]:>9} {ratios[3]:>11}  (cpu {cpu:.1f} s)"
                  + (f"  WRONG: {', '.join(wrong)}" if wrong else ""), flush=True)


if __name__ == "__main__":
    main()
