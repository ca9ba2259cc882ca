"""Review of roof67 (issue 33: a 256-bit target's float32 row of exps, vexp's AVX clamps).

roof67 printed `rg_vexpn_f32` (vexp's 8-lane core without its overflow clamp) for every explicit
8-lane exp whose argument wide_exps' `nonpositive` proves <= 0 or NaN, not only in its new
float32 row fill: a float16 sigmoid's and silu's exp(-|x|) and a float16 softmax's x - max(x) on
a 256-bit target take it too, and test_roof67 checks only float32 softmaxes. Checked here
against numpy in float64 (rounded once to a half) at the half range's edges, where an argument
below the core's -104 clamp would otherwise scale by 2^k with k past the exponent's range.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel

F16 = np.float16
# a half's extremes, values whose exp(-|x|) is below float32's subnormals, NaN, infinities, zeros
EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, -65504.0, 200.0, -200.0, 104.5, -104.5,
         88.8, -88.8, 17.0, -17.0, 1e-4, -1e-4, 6e-8, -6e-8, 1.0, -3.5, 11.0]


def _source(t: Tensor) -> str:
    return "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source
                     for i, item in enumerate(t.schedule()))


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


def _softmax64(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)


ORACLES = {"sigmoid": (lambda t: t.sigmoid(), _sigmoid64),
           "silu": (lambda t: t.silu(), lambda x: x.astype(np.float64) * _sigmoid64(x)),
           "softmax": (lambda t: t.softmax(-1), _softmax64)}


@pytest.mark.parametrize("name, shape", [("sigmoid", (1, 22)), ("sigmoid", (4, 67)),
                                         ("sigmoid", (3, 1031)), ("silu", (2, 22)),
                                         ("silu", (5, 97)), ("softmax", (1, 22)),
                                         ("softmax", (1, 1031)), ("softmax", (3, 8))])
def test_a_256_bit_float16_exp_of_a_nonpositive_argument_keeps_its_low_clamp(
        name: str, shape: tuple[int, int], monkeypatch):
    """A float16 sigmoid's, silu's and softmax's exp on 8-lane vectors is rg_vexpn_f32 and gives
    numpy's float64 value rounded to a half (within a half's ulp: float32 steps before one
    rounding), NaN where numpy's is, exp of -65504 zero, at every edge in every lane position."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "32")
    fn, oracle = ORACLES[name]
    rng = np.random.default_rng(shape[0] * shape[1])
    x = np.resize(np.array(EDGES, F16), shape[0] * shape[1])
    x = rng.permutation(x).reshape(shape).astype(F16)
    if name == "softmax":  # (a row of its own max and values 104 to 65504 below it)
        x = np.where(np.isfinite(x), -np.abs(x), x).astype(F16)
        x[:, 0] = 0.0
    t = fn(Tensor(x))
    assert re.search(r"rg_vexpn_f32\(", _source(t))
    with np.errstate(all="ignore"):
        got = t.numpy().astype(np.float64)
        want = oracle(x).astype(F16).astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    big = np.isinf(want)
    assert np.array_equal(got[big], want[big])
    ok = np.isfinite(want)
    # a half's ulp at the value (2^-24 below 2^-14: the subnormals' spacing)
    ulp = np.maximum(np.spacing(np.abs(want[ok]).astype(F16)).astype(np.float64), 2.0 ** -24)
    assert np.all(np.abs(got[ok] - want[ok]) <= ulp), (got[ok], want[ok])
