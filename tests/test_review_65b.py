"""Review of team65 (threads from the cost model to the launch), rev65b.

A team is chosen when a kernel is optimized (RULEGRAD_THREADS then) but may run later under
another count: a `rulegrad.jit` replay keys no settings, and a library is only its source.
A launched loop's team was capped at the runtime's count (launch.py's `rg_launch`); a loop
printed as `#pragma omp parallel for num_threads(N)` was not: OpenMP's clause overrides
`omp_set_num_threads`, so a kernel optimized at RULEGRAD_THREADS=4 ran 4 threads after the
setting went to 1.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.c.render import render_kernel

# a kernel of two threaded nests (a cat's pieces: PEEL's runs), printed with `num_threads`
# (not launched: launch.py runs one loop), optimized on 4 threads, run on 1. libgomp's pool
# keeps the threads a region woke, so the process's task count after the run is its team.
_PRAGMA_TEAM = textwrap.dedent("""
    import os, numpy as np
    os.environ["RULEGRAD_THREADS"] = "{optimized}"
    os.environ["RULEGRAD_KERNEL_INDEX"] = "0"
    from rulegrad import Tensor
    from rulegrad.backends.c import build, threads
    from rulegrad.backends.c.lower import lower_only
    from rulegrad.backends.c.opt import optimize_kernel
    from rulegrad.backends.c.render import render_kernel
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4099, 1033)).astype(np.float32)
    b = rng.standard_normal((4099, 31)).astype(np.float32)
    (item,) = Tensor(a).cat(Tensor(b), dim=1).schedule()
    rk = render_kernel(optimize_kernel(lower_only(item.ast)), "k_rev65b")
    assert rk.launch == 0 and rk.source.count("num_threads(") == 2, rk.source
    lib = build.build_library([rk])
    os.environ["RULEGRAD_THREADS"] = "{run}"
    threads.apply_threads()
    assert threads.max_threads() == {run}
    before = len(os.listdir("/proc/self/task"))
    out = np.zeros((4099, 1064), np.float32)
    lib.function(rk.cname, rk.nparams)(out.ctypes.data, a.ctypes.data, b.ctypes.data)
    assert np.array_equal(out, np.concatenate([a, b], 1))
    print(len(os.listdir("/proc/self/task")) - before)
""")


def test_a_printed_team_is_capped_at_the_runtimes_count(tmp_path):
    """Optimized on 4 threads (the model's team 4), run at RULEGRAD_THREADS=1: one thread, as a
    launched loop (it had woken 3 more); at 2, two."""
    for run, woken in ((1, 0), (2, 1)):
        code = _PRAGMA_TEAM.format(optimized=4, run=run)
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=300, env={**__import__("os").environ,
                                               "RULEGRAD_CACHE": str(tmp_path)})
        assert res.returncode == 0, res.stderr
        assert int(res.stdout.split()[-1]) == woken, (run, res.stdout)


COST = 1 << 14  # a region's cost, in loads (PARALLEL_MIN_WORK), faked for small programs


# (65536 and 3 * COST * 4 values on 4 or 7 threads are split into blocks a PARALLEL loop
# threads, not a THREAD reduce: PARALLEL teams are test_team_65's)
@pytest.mark.parametrize("n, op, nthreads", [
    *((n, "sum", t) for n in (49157, 100003) for t in (2, 3, 4, 7)),
    *((n, op, t) for n, op in ((65536, "sum"), (3 * COST * 4, "max")) for t in (2, 3))])
def test_a_threaded_reduce_launches_the_team_its_work_pays_for(fake_machine, launched_teams,
                                                                 nthreads, n, op):
    """A full reduce given threads by `THREAD` (thread_helpers) runs on the team whose shares of
    its work each pay for the region, as a PARALLEL loop does (it ran the runtime's count: a sum
    of 49157 values at a 16K cost on 7 threads woke 7 where 3 pay). The oracle: the model's
    statement from the size (a sum reads one value per iteration: its work is its length; the
    tail past the blocks, SPLIT's, is not threaded)."""
    fake_machine(nthreads, COST)
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    kernels = optimized_kernels(getattr(Tensor(x), op)())
    acts = [a for _, acts in kernels for a in acts]
    thread = [a for a in acts if a.startswith("THREAD")]
    assert thread, acts
    rks = [render_kernel(opt, f"k{i}_rev65b") for i, (opt, _) in enumerate(kernels)]
    (rk,) = [rk for rk in rks if rk.launch]
    split = [re.search(r"\((\d+) blocks of (\d+)", a) for a in acts if a.startswith("SPLIT")]
    blocked = int(split[0][1]) * int(split[0][2]) if split else n  # (SPLIT's blocks: no tail)
    want = max(2, min(nthreads, rk.launch, blocked // COST))
    assert rk.team == want, (rk.team, want, acts)
    seen = launched_teams()
    got = getattr(Tensor(x), op)().numpy()
    assert seen == [want], seen
    if op == "max":
        assert got == x.max()
    else:
        np.testing.assert_allclose(got, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-3)
