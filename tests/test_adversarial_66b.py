"""Adversarial sweep of exp65's proof (adv66, issue 31): `wide_exps.nonpositive` proves an exp's
argument <= 0 by matching v - max(v): v is the max's own value at another range of its size.

Near misses of that match that reach it (a few rows, so the max stays a REDUCE in the row's
loop rather than a hand-off): a shifted read of the row (x[:, 1:] less the max of x[:, :-1])
and the first row broadcast over every row less each row's max, stored and summed (the paired
16-lane reduce). v and the max read the same buffer over ranges of the same size, elsewhere:
the value is not one the max took. Each keeps exp's overflow clamp at 512 bits and gives
numpy's values, exp(+inf) inf. (test_exp_65 holds another tensor's max, part of the row's, the
other axis's and a scaled max; test_review_65e the symbolic sizes.)
"""

from __future__ import annotations

import numpy as np
import pytest
from ulps import fused, ulps

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel

F32 = np.float32
ULPS = 0.9 if fused() else 1.2  # vexp.py's bounds (tests/test_vexp.py's)


def _source(t: Tensor) -> str:
    return "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source
                     for i, item in enumerate(t.schedule()))


def _shifted(x):
    return x[:, 1:] - x[:, :-1].max(1, keepdims=True)


def _first_row(x):
    return np.broadcast_to(x[:1], x.shape) - x.max(1, keepdims=True)


# (name, the argument as a program, as numpy): v less a max that reads the row elsewhere
_NEAR_MISSES = [
    ("a shifted read of the row", lambda t: t[:, 1:] - t[:, :-1].max(1, keepdim=True), _shifted),
    ("the first row less each row's max",
     lambda t: t[:1].expand(t.shape) - t.max(1, keepdim=True), _first_row),
]


def _planted(rows: int, cols: int) -> np.ndarray:
    """Normal values, and above the other rows' and its own row's earlier values where v reads
    them and the max does not: +inf, 100 and 88.8 (exp overflows) in row 0's last columns."""
    x = np.random.default_rng(66).standard_normal((rows, cols)).astype(F32)
    x[0, -1], x[0, -2], x[0, -3] = np.inf, 100.0, 88.8
    x[1:, -3:] = -1.0
    x[-1, :-3] = -50.0
    return x


@pytest.mark.parametrize("shape", [(3, 65), (2, 130), (3, 64)])
@pytest.mark.parametrize("summed", [False, True], ids=["stored", "summed"])
@pytest.mark.parametrize("name,argument,oracle", _NEAR_MISSES, ids=[c[0] for c in _NEAR_MISSES])
def test_a_value_read_elsewhere_than_its_max_keeps_the_clamp(name, argument, oracle, summed,
                                                               shape, monkeypatch):
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x = _planted(*shape)
    out = argument(Tensor(x)).exp()
    out = out.sum(1) if summed else out
    assert "rg_zexpn_f32(" not in _source(out), name
    got = out.numpy()
    with np.errstate(all="ignore"):
        arg = oracle(x)
        exact = np.exp(arg.astype(np.float64))
        exact = exact.sum(1) if summed else exact
        want = exact.astype(F32)  # (overflows to inf where float32's exp does)
    assert (arg > 88.8).any() and np.isinf(want).any(), name  # (the case needs the clamp)
    assert np.array_equal(np.isnan(got), np.isnan(want)), name
    assert np.array_equal(np.isinf(got), np.isinf(want)), name
    fin = np.isfinite(want)
    if summed:  # (a sum of 64 exps in float32: its rounding, not the exp's)
        np.testing.assert_allclose(got[fin], exact[fin], rtol=4e-6)
    else:
        assert ulps(got[fin], exact[fin], F32).max() <= ULPS, name
