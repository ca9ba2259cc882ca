"""The C the renderer prints for a corpus of programs, one hash per kernel: a change that keeps
every hash printed the same C (no behaviour change); one that changes some must pass the kernel
tests instead.

    python bench/render_hashes.py OUT.json [--compare BEFORE.json]

The corpus: bench/kernels.py's cases and every shape of bench/sweep.py's tables, scheduled (not
run) under both schedulers with the optimizer on and off, each kernel lowered, optimized with
the heuristic's choices and rendered as compile_program does; and tests/optimizer_runs.py's
training steps (SGD, momentum, Adam, AdamW on its MLP at batches 1, 8 and 13), run through C,
each kernel hashed as it is printed. A hash covers the whole RenderedKernel (source, launch,
uses, kind, ...). The kernel index is off (every kernel is printed); set RULEGRAD_CACHE to keep
the training steps' libraries apart from yours. `--compare` prints the keys whose hash changed
and exits 1 when any did.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ["RULEGRAD_KERNEL_INDEX"] = "0"
os.environ.setdefault("RULEGRAD_BACKEND", "c")
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

import numpy as np  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.backends.c import run as crun  # noqa: E402
from rulegrad.backends.c.lower import lower_only  # noqa: E402
from rulegrad.backends.c.opt import optimize_kernel  # noqa: E402
from rulegrad.backends.c.render import c_ident, render_kernel  # noqa: E402
from rulegrad.rules.choices import DEFAULT  # noqa: E402
from rulegrad.runtime.kernelize import using  # noqa: E402

TABLES = ("SWEEP", "HELD_OUT", "HELD_OUT_OTHER", "HELD_OUT_3", "HELD_OUT_4", "HELD_OUT_5")


def digest(rk: object) -> str:
    return hashlib.sha256(repr(rk).encode()).hexdigest()[:16]


def programs():
    """(name, a function making the program's lazy tensors) for each corpus program."""
    import kernels
    import sweep
    import workloads

    for case in kernels.CASES:
        def make(case=case):
            rng = np.random.default_rng(0)
            return case.rg(*[Tensor(rng.standard_normal(s).astype(np.float32))
                             for s in case.inputs.values()])
        yield f"kernels:{case.name}", make
    for table in TABLES:
        for family, shapes in getattr(sweep, table).items():
            for shape in shapes:
                def make(family=family, shape=shape):
                    p = workloads.point(family, *shape)
                    return p.rg(*[Tensor(v) for v in p.inputs.values()])
                yield f"sweep:{family}:{shape}", make


def scheduled(out: dict[str, str]) -> None:
    for scheduler in ("rangeify", "kernelize"):
        for opt in ("1", "0"):
            os.environ["RULEGRAD_OPT"] = opt
            with using(scheduler):
                for name, make in programs():
                    tag = f"{scheduler}/opt{opt}/{name}"
                    try:
                        t = make()
                        ts = t if isinstance(t, (tuple, list)) else (t,)
                        items = ts[0].schedule(*ts[1:])
                    except Exception as e:  # (a program that does not schedule: its error)
                        out[tag] = f"error {type(e).__name__}: {e}"[:120]
                        continue
                    for i, item in enumerate(items):
                        restrict = len(set(map(id, item.bufs))) == len(item.bufs)
                        key = f"{tag}#{i}:{item.name}"
                        try:
                            rk = render_kernel(optimize_kernel(lower_only(item.ast), DEFAULT),
                                               f"k{i}_{c_ident(item.name)}", restrict=restrict)
                            out[key] = digest(rk)
                        except Exception as e:
                            out[key] = f"error {type(e).__name__}: {e}"[:120]


def training_steps(out: dict[str, str]) -> None:
    import optimizer_runs as runs

    printed: list[tuple[str, str]] = []
    render = crun.render_kernel

    def recorded(ast, cname, restrict=True):
        rk = render(ast, cname, restrict)
        printed.append((cname, digest(rk)))
        return rk

    crun.render_kernel = recorded
    try:
        for scheduler, backend, opt in runs.RUNS:
            if backend != "c":
                continue
            os.environ["RULEGRAD_OPT"] = opt
            with using(scheduler):
                for kind in runs.OPTIMIZERS:
                    ours, optim, _, _ = runs.mlp_models(kind)
                    rng = np.random.default_rng(1)
                    for batch in (1, 8, 13):
                        x, y = runs.mlp_batch(rng, batch)
                        optim.zero_grad()
                        runs.mlp_loss(Tensor, ours, Tensor(x), Tensor(y)).backward()
                        optim.step()
                    for i, (cname, h) in enumerate(printed):
                        out[f"steps/{scheduler}/opt{opt}/{kind}#{i}:{cname}"] = h
                    printed.clear()
    finally:
        crun.render_kernel = render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where the hashes are written (JSON)")
    parser.add_argument("--compare", help="hashes written before (JSON): print what changed")
    args = parser.parse_args(argv)
    out: dict[str, str] = {}
    scheduled(out)
    training_steps(out)
    Path(args.out).write_text(json.dumps(out, indent=0, sort_keys=True))
    errors = sum(v.startswith("error") for v in out.values())
    print(f"{len(out)} kernels ({errors} errors)")
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        changed = sorted(k for k in before.keys() | out.keys() if before.get(k) != out.get(k))
        for k in changed:
            print(f"changed: {k}")
        print(f"{len(changed)} of {len(out)} changed")
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
