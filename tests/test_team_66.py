"""Packed products and flash kernels on the model's team (issue 32, team66).

Their actions chose which loop takes threads (`Pack.parallel`, `Flash.parallel`), and the loop
ran the runtime's count: a product of 3 row tiles on 8 threads woke 8, as did 3 heads of 13
rows. Now each runs the team of pack_helpers' `region_threads`: the most threads, up to
RULEGRAD_THREADS, whose shares of its region's work (multiply-adds) each pay for the region's
cost, and at most the iterations its threads claim (row tiles, panels, heads); printed as
`num_threads(rg_team(N))` or handed to the launch (RenderedKernel.team). The oracle of the team
is the model's statement, computed here from the program's sizes (its multiply-adds over the
faked cost); values against numpy in float64.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from optimizer_actions import optimized_kernels

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import RenderedKernel, render_kernel


def _rendered(t: Tensor) -> RenderedKernel:
    (item,) = t.schedule()
    return render_kernel(optimize_kernel(lower_only(item.ast)), "k0_team66")


def _teams(rk: RenderedKernel) -> list[int]:
    """The teams the kernel's threads run: its launch's, else each printed region's."""
    if rk.launch:
        return [rk.team]
    return [int(n) for n in re.findall(r"num_threads\(rg_team\((\d+)\)\)", rk.source)]


def _action(t: Tensor, kind: str) -> object:
    ((opt, _),) = optimized_kernels(t)
    (arg,) = [st.arg for st in opt.src if type(st.arg).__name__ == kind]
    return arg


def _matmul(a: np.ndarray, b: np.ndarray) -> Tensor:
    return Tensor(a) @ Tensor(b)


def _product(shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, np.ndarray]:
    *batch, m, k, n = shape
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((*batch, m, k)).astype(np.float32),
            rng.standard_normal((*batch, k, n)).astype(np.float32))


def _check_product(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(_matmul(a, b).numpy(), a.astype(np.float64) @ b, rtol=1e-4,
                               atol=1e-4)


# ----------------------------------------------------------- one product, launched on its team


# tall, prime, skinny (x @ w with 17 columns: the rows and columns swapped, A packed): 17 row
# tiles and more, so the tiles never bound the team
@pytest.mark.parametrize("nthreads", [4, 8])
@pytest.mark.parametrize("shape", [(601, 16, 33), (1200, 64, 64), (97, 131, 67),
                                   (1200, 61, 17)])
@pytest.mark.parametrize("shares", [2, 3, 100])
def test_a_launched_products_team_is_the_threads_its_work_pays_for(
        fake_machine, launched_teams, nthreads, shape, shares):
    m, k, n = shape
    macs = m * k * n
    fake_machine(nthreads, macs // shares)
    team = min(nthreads, shares)  # the model: every share pays for the region
    a, b = _product(shape, sum(shape))
    rk = _rendered(_matmul(a, b))
    assert rk.launch > 0 and rk.team == team, (rk.launch, rk.team)
    assert f"PACK on {team} threads" in rk.choices, rk.choices  # (DEBUG=2 says it)
    seen = launched_teams()
    _check_product(a, b)
    assert seen == [team]


# products of few row tiles and panels (12 rows: 2 tiles; 13 prime rows; 7 rows of 16 columns;
# 3 products of 13 rows, their tiles threaded per product) with work for 100 threads: their
# teams are the tiles or panels their threads claim, fewer than 8 (the runtime's count, which
# they had woken)
@pytest.mark.parametrize("nthreads", [4, 8])
@pytest.mark.parametrize("shape", [(12, 64, 64), (13, 97, 61), (7, 300, 16), (3, 13, 64, 16)])
def test_a_product_of_few_tiles_runs_fewer_threads(fake_machine, nthreads, shape):
    *_, m, _k, n = shape
    fake_machine(nthreads, int(np.prod(shape)) // 100)
    a, b = _product(shape, len(shape))
    pack = _action(_matmul(a, b), "Pack")
    assert pack.rows == (len(shape) - 3,) and pack.parallel in ("tiles", "panels"), pack
    claims = max(-(-m // pack.tile), -(-n // pack.panel))  # (the row tiles, or the panels)
    assert claims < 8
    assert _teams(_rendered(_matmul(a, b))) == [min(nthreads, claims)]
    _check_product(a, b)


# ---------------------------------------------- batched products: the batch's team or a product's


# (batch, rows, k, columns): threaded by the batch (one region of all the multiply-adds, at most
# the batch's iterations) or by each product's row tiles (a region per product: its share)
@pytest.mark.parametrize("nthreads", [4, 8])
@pytest.mark.parametrize("shape", [(5, 97, 128, 96), (4, 97, 128, 96), (9, 41, 64, 96),
                                   (2, 601, 16, 33)])
@pytest.mark.parametrize("shares", [2, 3, 100])
def test_a_batched_products_team_is_its_regions_paying_threads(fake_machine, nthreads, shape,
                                                                shares):
    batch, m, k, n = shape
    macs = batch * m * k * n
    cost = macs // shares
    fake_machine(nthreads, cost)
    a, b = _product(shape, m)
    pack = _action(_matmul(a, b), "Pack")
    assert pack.parallel in ("batch", "tiles", "panels") and pack.rows == (1,), pack
    if pack.parallel == "batch":
        team = min(nthreads, macs // cost, batch)
    elif pack.parallel == "tiles":
        team = min(nthreads, macs // batch // cost, -(-m // pack.tile))
    else:  # (the panels, claimed `group` at a time)
        panels = -(-n // pack.panel)
        team = min(nthreads, macs // batch // cost, -(-panels // pack.group))
    assert _teams(_rendered(_matmul(a, b))) == [team]
    _check_product(a, b)


# ------------------------------------------------------------------------- flash kernels


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> Tensor:
    kt = Tensor(k).transpose(-1, -2)
    return ((Tensor(q) @ kt) * np.float32(0.125)).softmax(-1) @ Tensor(v)


def _np_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) * 0.125
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True) @ v.astype(np.float64)


def _heads(shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, ...]:
    *batch, rows, keys, d = shape
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((*batch, x, d)).astype(np.float32)
                 for x in (rows, keys, keys))


# ([heads,] rows, keys, head size): 3 heads of 13 rows (few of both), one head, no head loop
# (a 2-D attention: few rows, tall), 8 heads, prime sizes
@pytest.mark.parametrize("nthreads", [4, 8])
@pytest.mark.parametrize("shape", [(3, 13, 64, 32), (1, 61, 128, 32), (13, 64, 32),
                                   (601, 64, 16), (8, 61, 128, 32), (5, 97, 131, 37)])
@pytest.mark.parametrize("shares", [2, 3, 100])
def test_a_flash_kernels_team_is_the_threads_its_work_pays_for(fake_machine, nthreads, shape,
                                                               shares):
    *batch, rows, keys, d = shape
    work = int(np.prod(shape))  # the output's multiply-adds: rows x head size x keys a head
    cost = work // shares
    fake_machine(nthreads, cost)
    q, k, v = _heads(shape, sum(shape))
    fl = _action(_attention(q, k, v), "Flash")
    assert fl.parallel in ("batch", "tiles"), fl
    heads = batch[0] if batch else 1
    if fl.parallel == "batch":
        team = min(nthreads, work // cost, heads)
    else:
        team = min(nthreads, work // heads // cost, -(-rows // fl.tile))
    assert fl.describe().endswith(f"PARALLEL {fl.parallel} on {team} threads"), fl.describe()
    assert _teams(_rendered(_attention(q, k, v))) == [team]
    np.testing.assert_allclose(_attention(q, k, v).numpy(), _np_attention(q, k, v),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("nthreads", [2, 4])
@pytest.mark.parametrize("shape", [(3, 13, 64, 32), (2, 61, 128, 32)])
def test_heads_whose_work_pays_for_one_thread_take_none(fake_machine, nthreads, shape):
    """Under two shares' work (1.5) no threads: one share had taken the runtime's count."""
    fake_machine(nthreads, int(np.prod(shape) / 1.5))
    q, k, v = _heads(shape, 5)
    fl = _action(_attention(q, k, v), "Flash")
    assert fl.parallel == "" and fl.team == 0, fl
    assert _teams(_rendered(_attention(q, k, v))) == []
    np.testing.assert_allclose(_attention(q, k, v).numpy(), _np_attention(q, k, v),
                               rtol=1e-5, atol=1e-5)


# ------------------------------------------------- values on every thread count, threads used


@pytest.mark.parametrize("nthreads", [1, 2, 3, 4, 7, 8])
def test_products_and_attention_match_numpy_on_every_thread_count(fake_machine, monkeypatch,
                                                                  nthreads):
    """With a cost at which each of these pays for 8 threads or more (so each runs teams of up
    to the runtime's count), on 1 to 8 threads: the values are numpy's."""
    fake_machine(nthreads, 1 << 12)
    for shape in [(601, 16, 33), (13, 97, 61), (12, 64, 64), (5, 97, 128, 96), (1, 2, 300, 700)]:
        _check_product(*_product(shape, nthreads))
    for shape in [(3, 13, 64, 32), (8, 61, 128, 32), (1, 61, 128, 32), (601, 64, 16)]:
        q, k, v = _heads(shape, nthreads)
        np.testing.assert_allclose(_attention(q, k, v).numpy(), _np_attention(q, k, v),
                                   rtol=1e-5, atol=1e-5)


def test_a_replayed_products_launch_keeps_its_team(fake_machine, monkeypatch):
    """rulegrad.jit's replay (driver.py's C loop) runs a launched product on its team: 3 of 4
    threads where three shares of its multiply-adds pay."""
    from rulegrad import jit
    from rulegrad.backends.c import driver, run

    a, b = _product((601, 16, 33), 9)
    fake_machine(4, 601 * 16 * 33 // 3)
    f = jit(lambda x, y: x @ y)
    for _ in range(4):
        got = f(Tensor(a).realize(), Tensor(b).realize())
        np.testing.assert_allclose(got.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    replay = next(iter(f.entries.values())).replay
    kernels = [k for prog in replay.progs for k in prog.kernels]
    assert [k.launch[3] for k in kernels if k.launch[0]] == [3]
    entries = []
    real = run.Calls

    def spy(es, build):
        entries.extend(es)
        return real(es, build)

    monkeypatch.setattr(run, "Calls", spy)
    run.calls(kernels)
    assert [e[-1] for e in entries if e[0] == driver.SCRATCH] == [3]
