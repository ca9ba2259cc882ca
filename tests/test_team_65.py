"""Threads from the cost model, all the way to the launch (issue 32, team65).

Checked: the team the parallel action's model picks (pack_helpers' `region_threads`: the most
threads, up to RULEGRAD_THREADS, whose shares of the work each pay for the region's cost) is
the team recorded (DEBUG=2's `PARALLEL ... on N threads`), printed (RenderedKernel.team) and
run (launch.py's `rg_launch` and driver.py's C loop run a team of that many); values against
numpy. The oracle of the team is the model's statement itself, computed here from the
program's size: x*2+1 reads one value per element, so its work is its element count.
"""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.c import build, driver, launch, run
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import RenderedKernel, render_kernel
from rulegrad.runtime.dtype import dtypes

COST = 1 << 14  # a region's cost, in loads (PARALLEL_MIN_WORK), faked for small programs

# a launched kernel that records the team that ran it (OpenMP's count, the same in every share)
# and the iterations it ran
TEAM = r"""
int omp_get_num_threads(void);
void rg_record_team65(void *const *args, int64_t lo, int64_t hi)
{
  __atomic_store_n((int64_t *)args[0], (int64_t)omp_get_num_threads(), __ATOMIC_SEQ_CST);
  __atomic_add_fetch((int64_t *)args[0] + 1, hi - lo, __ATOMIC_SEQ_CST);
}
"""


def _parallel(t: Tensor) -> list[str]:
    ((_, acts),) = optimized_kernels(t)
    return [a for a in acts if a.startswith("PARALLEL")]


def _rendered(t: Tensor) -> RenderedKernel:
    (item,) = t.schedule()
    return render_kernel(optimize_kernel(lower_only(item.ast)), "k0_team65")


def _threaded_program(nthreads: int) -> None:
    """Run a threaded program, so RULEGRAD_THREADS is applied to OpenMP (launch.py's cap)."""
    x = np.arange(1 << 22, dtype=np.float32)
    np.testing.assert_array_equal((Tensor(x) * 2).numpy(), x * 2)
    from rulegrad.backends.c import threads

    assert threads.max_threads() == nthreads


# shapes: prime, tall and skinny, batch 1, a power of two (threaded in vector blocks), and
# sizes whose model team is under every thread count tried
@pytest.mark.parametrize("nthreads", [3, 4, 7])
@pytest.mark.parametrize("shape", [(49157,), (40009, 3), (1, 81929), (1 << 20,), (33, 1009)])
def test_the_models_team_is_recorded_printed_and_launched(fake_machine, launched_teams, nthreads,
                                                          shape):
    fake_machine(nthreads, COST)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    size = x.size
    team = min(nthreads, size // COST)  # the model: every share pays for the region
    t = Tensor(x) * 2 + 1
    acts = _parallel(t)
    assert len(acts) == 1 and acts[0].endswith(f" on {team} threads"), acts
    rk = _rendered(Tensor(x) * 2 + 1)
    assert rk.launch > 0 and rk.team == team, (rk.launch, rk.team)
    # the program's launch is handed the model's team (build.py -> launch.py)
    seen = launched_teams()
    np.testing.assert_array_equal((Tensor(x) * 2 + 1).numpy(), x * np.float32(2) + np.float32(1))
    assert seen == [team]


@pytest.mark.parametrize("nthreads", [3, 4])
@pytest.mark.parametrize("shape", [(1,), (7,), (1000,), (2, 8191), (COST * 2 - 1,)])
def test_work_that_pays_for_fewer_than_two_threads_takes_none(fake_machine, nthreads, shape):
    """Tiny, prime and short programs: no share of two would pay for the region."""
    fake_machine(nthreads, COST)
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    assert _parallel(Tensor(x) * 2 + 1) == []
    rk = _rendered(Tensor(x) * 2 + 1)
    assert rk.launch == 0 and rk.team == 0
    np.testing.assert_array_equal((Tensor(x) * 2 + 1).numpy(), x * np.float32(2) + np.float32(1))


@pytest.mark.parametrize("nthreads", [3, 4, 7])
@pytest.mark.parametrize("team", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("iterations", [1, 2, 1000])
def test_a_launch_runs_the_team_it_is_given(monkeypatch, nthreads, team, iterations):
    """rg_launch's team: the given one (0: the runtime's count), at most the runtime's count
    and the iterations; every iteration runs once. Called from Python and from driver.py's C
    loop (a replayed step's)."""
    monkeypatch.setenv("RULEGRAD_THREADS", str(nthreads))
    _threaded_program(nthreads)
    want = min(iterations, nthreads, team or nthreads)
    lib = build.build_library([RenderedKernel("rg_record_team65", TEAM, 1, (dtypes.int64,))])
    seen = np.zeros(2, dtype=np.int64)
    lib.function("rg_record_team65", 1, launch=iterations, team=team)(seen.ctypes.data)
    assert list(seen) == [want, iterations]
    region = [launch.ctypes.cast(f, launch.ctypes.c_void_p).value
              for f in launch.launcher(build.build_library)]
    at = lib.address("rg_record_team65")
    calls = driver.Calls([(driver.LAUNCHED, 1, iterations, 0, 0, at, region[0], 0, team),
                          (driver.SCRATCH, 1, iterations, 64, 0, at, region[1], 0, team)],
                         build.build_library)
    out = [np.zeros(2, dtype=np.int64) for _ in range(2)]
    calls.fill([[out[0].ctypes.data], [out[1].ctypes.data]])
    calls()
    assert [list(o) for o in out] == [[want, iterations]] * 2


def test_a_replayed_step_launches_the_models_team(fake_machine, monkeypatch):
    """rulegrad.jit's replay (driver.py's C loop) runs each launched kernel with its team."""
    from rulegrad import jit

    fake_machine(4, COST)
    x = np.random.default_rng(6).standard_normal(49157).astype(np.float32)
    f = jit(lambda a: a * 2 + 1)
    for _ in range(4):
        got = f(Tensor(x).realize())
        np.testing.assert_array_equal(got.numpy(), x * np.float32(2) + np.float32(1))
    replay = next(iter(f.entries.values())).replay
    teams = [k.launch[3] for prog in replay.progs for k in prog.kernels if k.launch[0]]
    assert teams == [3], teams  # 49157 loads at a 16K cost: three shares pay, not four
    entries = []
    real = run.Calls

    def spy(es, b):
        entries.extend(es)
        return real(es, b)

    monkeypatch.setattr(run, "Calls", spy)
    run.calls([k for prog in replay.progs for k in prog.kernels])
    assert [e[-1] for e in entries if e[0] == driver.LAUNCHED] == [3]


# ------------------------------------------------- products: the whole product's work per thread


def _packs(t: Tensor) -> list:
    from rulegrad.rules.pack_helpers import Pack

    ((opt, _),) = optimized_kernels(t)
    return [st.arg for st in opt.src if isinstance(st.arg, Pack)]


# rows of 2 tiles, 3 (prime), 100, 200 (tall), and a skinny product of 17 columns
@pytest.mark.parametrize("rows, k, n", [(12, 64, 64), (13, 97, 61), (601, 16, 33),
                                        (1200, 64, 64), (1200, 61, 17)])
@pytest.mark.parametrize("shares", [1.5, 2, 3])
def test_a_products_threads_weigh_its_whole_work_per_thread(fake_machine, rows, k, n, shares):
    """A packed product takes threads when two shares of its multiply-adds each pay for the
    region (region_threads), however many row tiles it has: at 1.5 shares' work none (a product
    of more than one row tile had threaded at any work past one share's cost)."""
    macs = rows * k * n
    fake_machine(2, int(macs / shares))
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    (pack,) = _packs(Tensor(a) @ Tensor(b))
    assert -(-rows // pack.tile) >= 2  # more than one row tile
    assert (pack.parallel != "") == (shares >= 2), pack
    np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a.astype(np.float64) @ b,
                               rtol=1e-4, atol=1e-4)


# ---------------------------------------- an interchanged reduce's shared blocks: the same model


@pytest.mark.parametrize("shape", [(2048, 4096), (97, 1009), (601, 1031), (1024, 2053)])
@pytest.mark.parametrize("shares", [1.5, 2, 3])
def test_a_column_sums_blocks_take_the_threads_its_work_pays_for(fake_machine, shape, shares):
    """A sum down the columns (no output loop around them) shares its column blocks among the
    threads whose shares of its work each pay for the region (region_threads), on a machine of
    4: none at 1.5 shares' work (it had taken blocks at any work past one share's cost), blocks
    for 2 threads at 2 shares (it had cut 4)."""
    rows, cols = shape
    fake_machine(4, int(rows * cols / shares))
    x = np.random.default_rng(cols).standard_normal(shape).astype(np.float32)
    ((_, acts),) = optimized_kernels(Tensor(x).sum(0))
    assert acts[0].startswith("INTERCHANGE"), acts
    threaded = [a for a in acts if a.startswith("PARALLEL")]
    assert bool(threaded) == (shares >= 2) == (" blocks of " in acts[0]), acts
    if shares == 2:
        assert " in 2 blocks of " in acts[0] and threaded[0].endswith(" on 2 threads"), acts
    np.testing.assert_allclose(Tensor(x).sum(0).numpy(), x.astype(np.float64).sum(0),
                               rtol=1e-4, atol=1e-3)


# ------------------------------------------- rows broadcast along their first axis: row blocks


def _rows_np(x: np.ndarray, name: str) -> np.ndarray:
    """numpy's softmax, log_softmax or layernorm (eps 1e-5, no affine) along the last axis."""
    x = x.astype(np.float64)
    if name == "layernorm":
        mean = x.mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
    s = x - x.max(-1, keepdims=True)
    lsm = s - np.log(np.exp(s).sum(-1, keepdims=True))
    return lsm if name == "log_softmax" else np.exp(lsm)


def _rows_of(t: Tensor, name: str) -> Tensor:
    return t.layernorm(-1) if name == "layernorm" else getattr(t, name)(-1)


# (out shape, blocked): a row of x broadcast along the first axis (or two), rows of a prime
# length, batch 1, tall and skinny; not where a row is UNROLL_MAX values or fewer (unrolled
# reduces overlap across rows already) or where fewer than ROWS_MIN rows fit an eighth of L1
@pytest.mark.parametrize("shape, blocked", [((6, 9, 33), True), ((1, 9, 33), True),
                                            ((7, 13, 97), True), ((64, 3, 97), True),
                                            ((3, 5, 7, 65), True), ((6, 9, 16), False),
                                            ((5, 3, 4099), False)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "layernorm"])
def test_rows_broadcast_along_their_first_axis_are_row_blocked(shape, blocked, name):
    x = np.random.default_rng(len(shape) * shape[-1]).standard_normal(
        (3, *shape[1:])).astype(np.float32)
    x[0, ..., 1] = -np.inf if name != "layernorm" else x[0, ..., 1]
    t = _rows_of(Tensor(x)[1:2].expand(*shape), name)
    kernels = optimized_kernels(t)
    rows = [a for _, acts in kernels for a in acts if a.startswith("ROWS ")]
    assert bool(rows) == blocked, [acts for _, acts in kernels]
    want = _rows_np(np.broadcast_to(x[1:2], shape), name)
    np.testing.assert_allclose(_rows_of(Tensor(x)[1:2].expand(*shape), name).numpy(), want,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", [(5, 97, 128, 96), (3, 61, 131, 97), (7, 13, 509, 64)])
def test_a_batch_whose_tile_teams_would_not_pay_threads_the_batch(fake_machine, monkeypatch,
                                                                 case):
    """A batch of products sharing unevenly (5 on 2 threads) whose teams over one product's
    row tiles would each get less than two paying shares, while the whole batch pays for two:
    the batch takes the threads (one region), not none."""
    b, m, k, n = case
    fake_machine(2, b * m * k * n // 3)  # the whole: 3 shares; one product: under 2
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "1K")  # (batch or tiles, as test_flash_threads)
    rng = np.random.default_rng(m)
    x, w = rng.standard_normal((b, m, k)), rng.standard_normal((b, k, n))
    (pack,) = _packs(Tensor(x.astype(np.float32)) @ Tensor(w.astype(np.float32)))
    assert pack.parallel == "batch", pack
    got = (Tensor(x.astype(np.float32)) @ Tensor(w.astype(np.float32))).numpy()
    want = x.astype(np.float32).astype(np.float64) @ w.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
