"""Review of team66 (rev66a): a packed product's team is its action's (`Pack.team`).

team66 had the printer (gemm.py) compute a product's team from its claims after the action
had threaded the row tiles by their work alone: a product of one row tile and one panel
(6x4096x16) was launched on a team of one, and a batch of two such products printed a region of
one thread per product (`num_threads(rg_team(1))`) where the batch's two products pay for two.
Now the action caps the team at the claims (pack_helpers' `claims`) and threads nothing, or the
batch, where they pay for fewer than two; the printer prints `Pack.team`.
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
    return render_kernel(optimize_kernel(lower_only(item.ast)), "k0_rev66a")


def _teams(rk: RenderedKernel) -> list[int]:
    """The teams the kernel's threads run: its launch's, else each printed region's."""
    if rk.launch:
        return [rk.team]
    return [int(n) for n in re.findall(r"num_threads\(rg_team\((\d+)\)\)", rk.source)]


def _pack(t: Tensor):
    ((opt, _),) = optimized_kernels(t)
    (pack,) = [st.arg for st in opt.src if type(st.arg).__name__ == "Pack"]
    return pack


def _operands(shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, np.ndarray]:
    *batch, m, k, n = shape
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((*batch, m, k)).astype(np.float32),
            rng.standard_normal((*batch, k, n)).astype(np.float32))


def _check(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a.astype(np.float64) @ b,
                               rtol=1e-3, atol=1e-3)


# one row tile (at most 6 rows) of one panel (16 columns, or 8): one claim, whatever its work
@pytest.mark.parametrize("nthreads", [2, 8])
@pytest.mark.parametrize("shape", [(6, 4096, 16), (5, 2048, 8)])
def test_a_product_of_one_claim_takes_no_team(fake_machine, nthreads, shape):
    fake_machine(nthreads, 1 << 12)  # (its work pays for 100 threads and more)
    a, b = _operands(shape, 1)
    pack = _pack(Tensor(a) @ Tensor(b))
    assert pack.parallel == "" and pack.team == 0, pack.describe()
    rk = _rendered(Tensor(a) @ Tensor(b))
    assert rk.launch == 0 and "omp parallel" not in rk.source, (rk.launch, rk.team)
    _check(a, b)


# a batch of products of one claim each: the batch takes the threads (each product a share)
@pytest.mark.parametrize("nthreads", [2, 8])
@pytest.mark.parametrize("shape", [(2, 6, 4096, 16), (3, 5, 2048, 8)])
def test_a_batch_of_one_claim_products_threads_the_batch(fake_machine, nthreads, shape):
    fake_machine(nthreads, 1 << 12)
    a, b = _operands(shape, 2)
    pack = _pack(Tensor(a) @ Tensor(b))
    team = min(nthreads, shape[0])
    assert pack.parallel == "batch" and pack.team == team, pack.describe()
    assert pack.describe().endswith(f"PARALLEL batch on {team} threads")
    assert _teams(_rendered(Tensor(a) @ Tensor(b))) == [team]
    _check(a, b)


# the printer runs the action's team, whichever loop it threads (launched, a printed region,
# the batch, panels), never a team of one
@pytest.mark.parametrize("nthreads", [2, 3, 8])
@pytest.mark.parametrize("shape", [(601, 16, 33), (13, 97, 61), (12, 2048, 16), (7, 4096, 16),
                                   (3, 13, 64, 16), (5, 97, 128, 96), (2, 6, 4096, 16)])
def test_the_printed_team_is_the_actions(fake_machine, nthreads, shape):
    fake_machine(nthreads, 1 << 12)
    a, b = _operands(shape, 3)
    pack = _pack(Tensor(a) @ Tensor(b))
    teams = _teams(_rendered(Tensor(a) @ Tensor(b)))
    assert teams == ([pack.team] if pack.parallel else []), (pack.describe(), teams)
    assert all(2 <= t <= nthreads for t in teams), teams
    _check(a, b)
