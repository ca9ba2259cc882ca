"""Normalizations over short rows (issues 32 and 33: softmax, log_softmax, logsumexp and layernorm
of rows of 2..UNROLL_MAX values) run with their rows across vector lanes where the optimizer's
count of vector ops per row says so (opt.rules' `rows_across`, rules/across_helpers.py): each
row's reduces unrolled, its outputs one STORE per column, lane u computing row i + u.

Values against numpy in float64 at test_norm_rows' tolerances, with NaN, +inf and -inf in rows,
rows of -inf whole (a softmax of them is NaN, as numpy's), length-1 rows, prime lengths and
counts, both schedulers, float32 and float64 (whose lanes read contiguously only: the row form).
Which layout was chosen is read from the kernels' recorded actions (DEBUG=2's), never timed."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import kernel_actions, optimized_kernels
from row_oracles import log_softmax, logsumexp, softmax, special_rows

from rulegrad import Tensor
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import UNROLL_MAX, VECTOR_LANES
from rulegrad.runtime.uop import toposort

TOL = {"float32": (2e-5, 2e-6), "float64": (1e-12, 1e-14)}


def _layernorm(a: np.ndarray) -> np.ndarray:
    d = a - a.mean(-1, keepdims=True)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5)


PROGRAMS = {
    "softmax": (lambda t: t.softmax(-1), softmax),
    "log_softmax": (lambda t: t.log_softmax(-1), log_softmax),
    "logsumexp": (lambda t: t.logsumexp(-1), logsumexp),
    "layernorm": (lambda t: t.layernorm(), _layernorm),
}
# tall rows of 5, a prime count of prime rows, rows of 2, 7, 8 (a vector), 12 and 16 (the
# unroll bound), a batch of 3, length-1 rows, one vector of rows, a row count short of a vector
SHAPES = [(4099, 5), (1031, 13), (257, 2), (1000, 7), (96, 8), (64, 12), (33, UNROLL_MAX),
          (3, 97, 11), (50, 1), (8, 3), (5, 6)]


def _check(name: str, shape: tuple[int, ...], dtype: str) -> None:
    program, oracle = PROGRAMS[name]
    x = special_rows(shape, dtype, seed=sum(shape))
    got = program(Tensor(x)).numpy()
    with np.errstate(all="ignore"):
        want = oracle(x.astype(np.float64))
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    rtol, atol = TOL[dtype]
    # NaN where the oracle has NaN, the same infinities, every other value within tolerance
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol,
                               err_msg=f"{name} {shape} {dtype}")


@pytest.mark.parametrize("scheduler", ["rangeify", "kernelize"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_short_rows_equal_numpy(monkeypatch, name, shape, dtype, scheduler):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", scheduler)
    _check(name, shape, dtype)


def _across(t: Tensor) -> list:
    """The kernels of t's schedule whose rows the optimizer ran across lanes: a STORE over a
    "vector" row loop and no reduce left in them."""
    out = []
    for k, _ in optimized_kernels(t):
        nodes = toposort(k)
        if any(n.op is Ops.STORE and n.src[-1].arg[1] == "vector" for n in nodes) and \
                not any(n.op is Ops.REDUCE for n in nodes):
            out.append(k)
    return out


# rows of 5, 7 and 13 (a prime: one vector and 5 lanes of the row form's second), 12; a
# log_softmax's row of 13 (no local row of exps: its row form's vectors cost less) stays rows,
# and so does a layer norm's of 12 or 13 (its two sums and a square root, no exp: the forms
# ran within 0.7x to 1.2x of each other, bench/across_ab.py; the count of a core's work per row
# puts its 24 lanes moved in and out above the row form's vectors)
ACROSS = [("softmax", shape) for shape in [(4099, 5), (1000, 7), (1031, 13), (64, 12)]] + \
    [("layernorm", (4099, 5)), ("layernorm", (1000, 7))] + \
    [("log_softmax", (4099, 5)), ("log_softmax", (1000, 7))] + \
    [("softmax", (4099, 3)), ("softmax", (257, 2)), ("softmax", (9, 4))]  # (upcast_across's
# rows of 2..4, whose kernel-local row of exps gcc's `omp simd` over the rows left scalar)


@pytest.mark.parametrize("name,shape", ACROSS, ids=lambda s: "x".join(map(str, s))
                         if isinstance(s, tuple) else s)
def test_rows_of_outputs_go_across_lanes(name, shape):
    """A row of outputs: one STORE per column, named ACROSS, its row loop in vectors."""
    x = special_rows(shape, "float32", seed=1)
    t = PROGRAMS[name][0](Tensor(x))
    acts = [a for k in kernel_actions(t) for a in k]
    assert any(a.startswith(f"ACROSS r0 ({shape[0]} rows across vector lanes") and
               a.endswith(f"as {shape[1]} stores)") for a in acts), acts
    (k,) = _across(t)
    stores = [n for n in k.src if n.op is Ops.STORE]
    assert len(stores) == shape[1]
    _check(name, shape, "float32")


@pytest.mark.parametrize("shape", [(4099, 5), (1031, 13), (64, 12), (4096, UNROLL_MAX)],
                         ids=lambda s: "x".join(map(str, s)))
def test_logsumexp_rows_go_across_lanes(shape):
    """One output a row: the row's max and sum of exps unrolled, its rows in vectors of 8
    (where the row form kept a scalar chain per row, or a vector of partials of 13 lanes)."""
    x = special_rows(shape, "float32", seed=2)
    t = Tensor(x).logsumexp(-1)
    acts = [a for k in kernel_actions(t) for a in k]
    count = -(-shape[0] // VECTOR_LANES)
    assert any(a.startswith(f"UPCAST r0 ({shape[0]} iterations, {count} vectors of 8")
               for a in acts), acts
    assert not any(a.startswith("VECTOR") for a in acts), acts
    assert len(_across(t)) == 1
    _check("logsumexp", shape, "float32")


@pytest.mark.parametrize("case", ["long_rows", "float64", "few_rows", "elementwise", "gcc_rows"])
def test_rows_stay_rows(case):
    """Rows longer than UNROLL_MAX (their reduces are vectors of partials), float64 rows (no
    gathered float64 lanes), fewer rows than a vector, a kernel that combines no values of a
    row, and a layer norm of rows of 3 (upcast_across's: gcc runs its rows in vectors, no
    kernel-local row in them) keep their forms."""
    x = np.random.default_rng(3).standard_normal((256, 9)).astype(np.float32)
    t = {"long_rows": lambda: Tensor(np.tile(x, (1, 4))).softmax(-1),
         "float64": lambda: Tensor(x.astype(np.float64)).softmax(-1),
         "few_rows": lambda: Tensor(x[:VECTOR_LANES - 1]).layernorm(),
         "elementwise": lambda: (Tensor(x) * 2).exp(),
         "gcc_rows": lambda: Tensor(x[:, :3]).layernorm()}[case]()
    acts = [a for k in kernel_actions(t) for a in k]
    assert not any(a.startswith("ACROSS") for a in acts), acts
    assert not _across(t)
