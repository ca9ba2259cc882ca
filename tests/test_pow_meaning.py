"""POW means C's pow, whatever the layout of its exponent (runtime/semantics.py, issue 31).

numpy computes an exponent of 0.5 held in a scalar or a broadcast (stride 0) as sqrt, which
differs from pow at -0.0 and -inf. The IR's POW must not inherit that: a constant exponent
(expanded, stride 0) and a materialized one give pow's values on every backend, and the checker
refutes `POW(x, 0.5) -> SQRT(x)`. The Tensor API's `x ** 0.5` with a Python float is SQRT on
purpose, as numpy and torch compute it. Oracles: the C library's pow (through ctypes) and
torch.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import textwrap

import numpy as np
import pytest
import torch

from rulegrad.generator.soundness import check_paths
from rulegrad.runtime.tensor import Tensor

BACKENDS = ("c", "interp", "oracle")
FLOATS = (np.float16, np.float32, np.float64)
BASES = [-0.0, 0.0, -np.inf, np.inf, np.nan, -1.0, 4.0, 0.25, -8.0, 1.0, 9.0, 1 / 16] * 3


_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
_LIBM.pow.restype, _LIBM.pow.argtypes = ctypes.c_double, (ctypes.c_double, ctypes.c_double)
_LIBM.powf.restype, _LIBM.powf.argtypes = ctypes.c_float, (ctypes.c_float, ctypes.c_float)


def _c_pow(base: np.ndarray, e: float) -> np.ndarray:
    """The C library's pow of each element (powf for float32; float16 through powf, as numpy's
    half loops compute). The bases are ones whose root is exact, so any correct pow agrees."""
    f = _LIBM.pow if base.dtype == np.float64 else _LIBM.powf
    return np.array([f(float(x), e) for x in base]).astype(base.dtype)


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    nan = np.isnan(want)
    return bool(np.array_equal(np.isnan(got), nan)
                and np.array_equal(got[~nan], want[~nan])
                and np.array_equal(np.signbit(got[~nan]), np.signbit(want[~nan])))


def _exponents(n: int, dt: type) -> dict[str, Tensor]:
    """0.5 laid out four ways: a constant expanded (stride 0), a 0-d tensor broadcast, a
    one-element buffer expanded, and a buffer of n copies."""
    return {
        "full": Tensor.full((n,), 0.5, dtype=np.dtype(dt).name),
        "0-d": Tensor(np.array(0.5, dt)).reshape(1).expand(n),
        "1-elt": Tensor(np.array([0.5], dt)).expand(n),
        "buffer": Tensor(np.full(n, 0.5, dt)),
    }


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", FLOATS)
def test_pow_is_c_pow_for_every_layout_of_its_exponent(monkeypatch, backend, dt):
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    base = np.array(BASES, dt)
    want = _c_pow(base, 0.5)
    assert want[0] == 0 and not np.signbit(want[0]) and want[2] == np.inf  # +0.0, +inf
    for how, e in _exponents(len(base), dt).items():
        got = (Tensor(base) ** e).numpy()
        assert got.dtype == dt, how
        assert _same(got, want), (backend, how, got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", (np.float32, np.float64))
def test_python_half_exponent_is_sqrt_as_numpy_and_torch(monkeypatch, backend, dt):
    """`x ** 0.5` (a Python float) is numpy's and torch's sqrt path, value and gradient."""
    monkeypatch.setenv("RULEGRAD_BACKEND", backend)
    base = np.array(BASES, dt)
    with np.errstate(all="ignore"):
        want_np = base ** 0.5
    t = torch.tensor(base, requires_grad=True)
    y = t ** 0.5
    y.backward(torch.ones_like(y))
    assert _same(want_np, y.detach().numpy())  # the two oracles agree: -0.0 and NaN
    x = Tensor(base, requires_grad=True)
    out = x ** 0.5
    out.sum().backward()
    assert out.dtype == x.dtype
    assert _same(out.numpy(), want_np)
    assert _same(x.grad.numpy(), t.grad.numpy())
    # any other exponent, or a tensor of 0.5s, stays POW: C's pow at -0.0 and -inf
    assert _same((Tensor(base) ** Tensor.full(base.shape, 0.5, dtype=x.dtype)).numpy(),
                 _c_pow(base, 0.5))


@pytest.mark.parametrize("dt", (np.int32, np.int8, np.bool_))
def test_python_half_exponent_of_ints_has_numpys_dtype(dt):
    a = np.array([0, 1, 4, 9], dt) if dt is not np.bool_ else np.array([True, False])
    got = (Tensor(a) ** 0.5).numpy()
    want = a ** 0.5
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_check_refutes_pow_half_as_sqrt(tmp_path):
    """The rule matches numpy's scalar fast path, so an oracle that computed POW with it
    passed the rule; pow and sqrt differ at -0.0 and -inf."""
    f = tmp_path / "pow.rules"
    f.write_text(textwrap.dedent("""
        rules r = {
          pow_half: POW(x:float32, 0.5) -> SQRT(x)
          pow_one:  POW(x:float32, 1.0) -> x
        }
        """).lstrip("\n"))
    rep = {r.rule.name: r for r in check_paths([str(f)], examples=60, rlimit=2_000_000).rules}
    bad = rep["pow_half"]
    assert bad.verdict == "refuted", bad.line()
    assert "-inf" in bad.counterexample or "-0.0" in bad.counterexample, bad.counterexample
    # the sound twin (pow(x, 1) is x, NaN included) is not refuted
    assert rep["pow_one"].verdict != "refuted", rep["pow_one"].line()
    x = np.array([-0.0, -np.inf], np.float32)
    assert not _same(np.sqrt(x), _c_pow(x, 0.5))  # the oracle's own view of the difference
