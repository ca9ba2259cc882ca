"""Review of exp55 (the float32 exp core and fill_reduce at any row length) and lines55 (the
gemm and flash folds), as an adversary looking for wrong answers: the cases that were wrong.

The core itself held its contract everywhere this review looked (every 13th float32 bit
pattern over all of float32 at 1, 8 and 16 lanes, with FMA, AVX-512's scalef and neither:
0.881 and 1.162 ulp; every pattern: 0.894 and 1.176, as vexp.py says; vector lanes and
scalar tails bit for bit), and so did softmax,
log_softmax and logsumexp rows of 1..69 and near multiples of 16 and 32 up to 4099 (NaN, +-inf,
all -inf, -0.0, masks, keepdim, a non-last axis, threads 1..3, 256- and 512-bit targets bit for
bit) and products and attention of odd shapes. What was off is older than both: float16
functions of several exps (logsumexp, mish, selu, sinh, cosh, logsigmoid, softplus, elu, celu)
rounded to float16 between their ops, 1.6 to 10.4 ulps off torch's float16 (which computes
them in float32 and rounds once).
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _ulps16(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of exact rounded to float16 (the subnormal
    spacing below), 0 where both are the same NaN, and where exact rounds to an infinity, 0 for
    that infinity and inf for anything else."""
    with np.errstate(all="ignore"):
        rounded = exact.astype(np.float16)
        e = np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(rounded)).astype(np.float64)
    e[(got.astype(np.float64) == exact) | (np.isnan(got) & np.isnan(exact))] = 0
    over = np.isinf(rounded)
    e[over] = np.where(got[over] == rounded[over], 0, np.inf)
    return e


def _halves(n: int, seed: int) -> np.ndarray:
    """float16 values of [-20, 12] and small negatives: rows whose logsumexp is near 0 (the
    max and the log of the sum cancel), and mish's subnormal results below -15."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-20, 12, n), -np.logspace(-4, 1.3, n // 4),
                           rng.uniform(-3, 0.5, n)]).astype(np.float16)


@pytest.mark.parametrize("cols", [1, 2, 9, 16, 33])
def test_a_float16_logsumexp_rounds_once(cols: int):
    """logsumexp of float16 rows in float32, rounded to float16 once (torch's): in float16,
    m + log(sum) rounded each term and cancelled, 10.4 ulps off at 0.041 (rows of 9)."""
    x = _halves(4000, cols)
    x = x[: len(x) // cols * cols].reshape(-1, cols)
    exact = torch.logsumexp(torch.from_numpy(x.astype(np.float64)), -1).numpy()
    for keepdim in (False, True):
        got = Tensor(x).logsumexp(-1, keepdim=keepdim).numpy()
        assert got.dtype == np.float16
        assert _ulps16(got.reshape(-1), exact).max() <= 1.0


# each was op by op in float16 (rounded between its ops), this far off (ulps): mish 8.5 (its
# softplus rounded to the least subnormal below -15: -1.0e-6 for -5.1e-7), selu 2.2, sinh 2.0,
# cosh 1.7, logsigmoid 1.65, softplus 1.6, elu and celu 1.56
@pytest.mark.parametrize("name", ["mish", "selu", "sinh", "cosh", "logsigmoid", "softplus", "elu",
                                  "celu"])
def test_a_float16_function_of_exps_rounds_once(name: str):
    """A float16 x's function of exps computed in float32 and rounded once (torch's), within an
    ulp of the exact value (0.5 and float32's error)."""
    x = _halves(4000, 3)
    fn = getattr(F, name, None) or getattr(torch, name)
    exact = fn(torch.from_numpy(x.astype(np.float64))).numpy()
    got = getattr(Tensor(x), name)().numpy()
    assert got.dtype == np.float16
    assert _ulps16(got, exact).max() <= 1.0
