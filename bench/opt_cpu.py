"""CPU seconds the kernel optimizer's Python spends deciding kernels (issue 33's cold start, the
suite's time): every program of bench/peers.py and of bench/sweep.py's tables scheduled once,
each kernel lowered, optimized with the heuristic's choices and rendered (as compile_program
does; nothing is compiled or run), and the process CPU time of the optimize calls, of the
whole, and the number of `toposort` walks.

    python bench/opt_cpu.py [--profile OUT.prof] [--repeat N] [--no-keep]

The kernel ASTs are built first; each `--repeat` round optimizes all of them again (their nodes
rebuilt from a pickled copy: a node no longer held is built anew, with no answer kept on it), and
one more round, untimed, counts the walks. CPU time (process), not wall time: other sessions
share the machine; `--no-keep` runs the optimizer with no answers kept (as it ran before
runtime/uop.py's `keeping_answers`).
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("RULEGRAD_BACKEND", "c")
sys.path[:0] = [str(ROOT / "bench")]

import numpy as np  # noqa: E402

from rulegrad import Tensor  # noqa: E402
from rulegrad.backends.c.lower import lower_only  # noqa: E402
from rulegrad.backends.c.opt import optimize_kernel  # noqa: E402
from rulegrad.backends.c.render import c_ident, render_kernel  # noqa: E402
from rulegrad.rules.choices import DEFAULT  # noqa: E402
from rulegrad.runtime import uop  # noqa: E402


def shapes():
    import peers
    import sweep
    seen = set()
    for family, shape in peers.CASES:
        seen.add((family, shape))
        yield family, shape
    for table in ("SWEEP", "HELD_OUT", "HELD_OUT_OTHER", "HELD_OUT_3", "HELD_OUT_4", "HELD_OUT_5"):
        for family, rows in getattr(sweep, table).items():
            for shape in rows:
                if (family, shape) not in seen:
                    seen.add((family, shape))
                    yield family, shape


def lowered() -> list[tuple[str, object, bool]]:
    """(name, lowered kernel AST, restrict) of every kernel of the corpus."""
    from workloads import point
    out = []
    for family, shape in shapes():
        p = point(family, *shape)
        t = p.rg(*[Tensor(np.asarray(v)) for v in p.inputs.values()])
        ts = t if isinstance(t, (tuple, list)) else (t,)
        for i, item in enumerate(ts[0].schedule(*ts[1:])):
            restrict = len(set(map(id, item.bufs))) == len(item.bufs)
            out.append((f"k{i}_{c_ident(item.name)}", lower_only(item.ast), restrict))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", help="write a cProfile of the optimize rounds here")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-keep", action="store_true",
                        help="keep no answers across the helpers (the walks as before they were)")
    args = parser.parse_args(argv)
    if args.no_keep:
        import contextlib

        from rulegrad.backends.c import opt
        opt.keeping_answers = contextlib.nullcontext
    t0 = time.process_time()
    kernels = pickle.dumps(lowered())
    built = time.process_time() - t0
    prof = None
    if args.profile:
        import cProfile
        prof = cProfile.Profile()
    opt = rend = 0.0
    for _ in range(args.repeat):
        ks = pickle.loads(kernels)  # (nodes rebuilt: see the docstring)
        if prof:
            prof.enable()
        t = time.process_time()
        done = [(name, optimize_kernel(ast, DEFAULT), r) for name, ast, r in ks]
        opt += time.process_time() - t
        if prof:
            prof.disable()
        t = time.process_time()
        for name, ast, r in done:
            render_kernel(ast, name, restrict=r)
        rend += time.process_time() - t
        del ks, done
    if prof:
        prof.dump_stats(args.profile)
    calls, walks = _counted_round(pickle.loads(kernels))
    print(f"{len(pickle.loads(kernels))} kernels; build+schedule+lower {built:.2f}s CPU; "
          f"optimize {opt / args.repeat:.3f}s CPU a round ({args.repeat} rounds); render "
          f"{rend / args.repeat:.3f}s; in optimize (a round more, counted): {calls} toposort "
          f"calls, {walks} walks")
    return 0


def _counted_round(ks: list) -> tuple[int, int]:
    """The toposort calls and the walks (calls that walk: not answered from a kept one) of one
    more round, untimed (the counting wrappers cost time)."""
    walks, calls = [0], [0]

    def counted(*a, **k):
        calls[0] += 1
        return _WALK(*a, **k)

    _COUNTED[0] = counted
    inner = getattr(uop, "_toposort", None)  # the walk itself, when answers are kept

    def walked(*a, **k):
        walks[0] += 1
        return inner(*a, **k)

    _patch(counted)
    if inner:
        uop._toposort = walked
    try:
        for _, ast, _ in ks:
            optimize_kernel(ast, DEFAULT)
    finally:
        _patch(_WALK)
        if inner:
            uop._toposort = inner
    return calls[0], walks[0] if inner else calls[0]


def _patch(fn) -> None:
    """Point every rulegrad module's imported `toposort` at fn (the count covers `from ...
    import toposort`)."""
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("rulegrad") \
                and getattr(mod, "toposort", None) in (_WALK, _COUNTED[0]):
            mod.toposort = fn


_WALK = uop.toposort
_COUNTED: list = [None]


if __name__ == "__main__":
    sys.exit(main())
