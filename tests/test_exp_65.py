"""exp of a value known <= 0 (issue 33, exp65): a softmax's exp(x - max(x)) drops the core's
overflow clamp (rules/wide_exps.py's `nonpositive`, vexp's `rg_zexpn_f32`).

The contract is vexp.py's: within 0.9 ulp of the exact value with fused multiply-adds (1.2
without) over [-103.9, 0], numpy's values at the specials, and the same bits as the general
core (the clamp it drops keeps every x <= 0). Checked against numpy's float64 exp over every
61st nonpositive float32 and the specials; a value that may be positive (x less another row's
max, or less a max over part of its row) keeps the clamp, so exp(+inf) stays inf; softmax and
logsumexp rows over a sweep of shapes against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from special_values import assert_same_bits
from ulps import fused, ulps

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel

F32 = np.float32
ULPS = 0.9 if fused() else 1.2  # vexp.py's bounds (tests/test_vexp.py's)
COLS = 1024


def _source(t: Tensor) -> str:
    return "\n".join(render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}").source
                     for i, item in enumerate(t.schedule()))


def _rows_of(values: np.ndarray) -> np.ndarray:
    """`values` in rows of COLS - 1, each with a 0.0 first: the row's max, so x - max is x."""
    n = -(-values.size // (COLS - 1)) * (COLS - 1)
    body = np.resize(values, n).reshape(-1, COLS - 1)
    return np.concatenate([np.zeros((body.shape[0], 1), F32), body], 1)


def _nonpositive_sweep() -> np.ndarray:
    """Every 61st float32 bit pattern from -0.0 to -104.5 (results down to the subnormals and
    past the underflow to +0), and the specials: -inf, NaN, -0.0, the underflow edge."""
    bottom = np.array([104.5], F32).view(np.uint32)[0]
    sweep = (np.arange(0, bottom, 61, dtype=np.uint32) | np.uint32(0x80000000)).view(F32)
    special = np.array([-np.inf, np.nan, -0.0, 0.0, -1e-45, -87.33654, -87.34, -103.97207,
                        -103.97208, -104.0, -1000.0, -3e38, -0.34657359], F32)
    return np.concatenate([special, sweep])


@pytest.mark.parametrize("width", ["32", "64"])
def test_exp_of_x_less_its_rows_max_is_within_the_bound_and_the_cores_bits(width: str,
                                                                             monkeypatch):
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x = _rows_of(_nonpositive_sweep())
    t = Tensor(x)
    e = (t - t.max(1, keepdim=True)).exp()
    # a 512-bit target prints the clamp-free form (wide_exps.nonpositive)
    assert ("rg_zexpn_f32(" in _source(e)) == (width == "64")
    got = e.numpy()
    m = x.max(1, keepdims=True)  # numpy's max: NaN where a row holds one
    arg = x - m
    exact = np.exp(arg.astype(np.float64))
    assert np.array_equal(np.isnan(got), np.isnan(exact))
    ok = ~np.isnan(exact)
    err = ulps(got[ok], exact[ok], F32)
    worst = int(np.argmax(err))
    assert err[worst] <= ULPS, (float(arg[ok][worst]), float(got[ok][worst]))
    assert np.array_equal(got[np.isneginf(arg)], np.zeros(np.isneginf(arg).sum(), F32))
    # the same bits as the general core's exp of the same arguments
    assert_same_bits(got, Tensor(arg).exp().numpy())


@pytest.mark.parametrize("width", ["32", "64"])
def test_a_float16_exp_of_x_less_its_rows_max_is_within_an_ulp(width: str, monkeypatch):
    """Every float16 <= 0 (and -inf, NaN) less its row's max (0): the max is rounded to a half
    before the subtraction, which still bounds the row's halves (wide_exps.nonpositive)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    h = np.arange(0x8000, 0x10000, dtype=np.uint32).astype(np.uint16).view(np.float16)
    x = _rows_of(h.astype(F32)).astype(np.float16)
    t = Tensor(x)
    e = (t - t.max(1, keepdim=True)).exp()
    assert ("rg_zexpn_f32(" in _source(e)) == (width == "64")
    got = e.numpy()
    assert got.dtype == np.float16
    arg = x - x.max(1, keepdims=True)  # (a row of NaN patterns: its max and all of it NaN)
    exact = np.exp(arg.astype(np.float64))
    assert np.array_equal(np.isnan(got), np.isnan(exact))
    ok = ~np.isnan(exact)
    assert (ulps(got[ok], exact[ok], np.float16) <= ULPS).all()
    assert_same_bits(got, Tensor(arg).exp().numpy())


def _maybe_positive_cases() -> list[tuple[str, object]]:
    """Values less a max that does not bound them: another tensor's, part of the row's, a
    shifted read of the row, a max over another axis."""
    return [
        ("another tensor's max", lambda t, y: (t - y.max(1, keepdim=True)).exp()),
        ("part of the row's max", lambda t, y: (t - t[:, :8].max(1, keepdim=True)).exp()),
        ("the other axis's max", lambda t, y: (t - t.max(0, keepdim=True)).exp()),
        ("a max of the row times 0.5", lambda t, y: (t - t.max(1, keepdim=True) * 0.5).exp()),
    ]


@pytest.mark.parametrize("name,fn", _maybe_positive_cases())
def test_a_value_its_max_does_not_bound_keeps_the_overflow_clamp(name: str, fn, monkeypatch):
    """Printed with the clamp (rows of 64, so the exps run in 16 lanes), and exp(+inf) is inf,
    exp(100) overflows to inf. (This CPU's scalef takes NaN times 2^inf to inf, so +inf's
    result without the clamp is inf here too: the printed form is what the proof decides.)"""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    rng = np.random.default_rng(65)
    x = rng.standard_normal((24, 64)).astype(F32)
    x[:, 40] = np.inf
    x[:, 41] = 100.0
    x[:, 42] = 88.8
    y = np.full((24, 64), -3.0, F32)
    out = fn(Tensor(x), Tensor(y))
    assert "rg_zexpn_f32(" not in _source(out), name
    got = out.numpy()
    with np.errstate(all="ignore"):
        want = _numpy_case(name, x, y)
    assert np.array_equal(np.isnan(got), np.isnan(want)), name
    assert np.array_equal(np.isinf(got), np.isinf(want)), name
    fin = np.isfinite(want)
    exact = _numpy_case(name, x, y, np.float64)
    assert ulps(got[fin], exact[fin], F32).max() <= ULPS, name


def _numpy_case(name: str, x: np.ndarray, y: np.ndarray, dt: type = F32) -> np.ndarray:
    """exp of the float32 difference (rulegrad's argument), exact then rounded to `dt`."""
    m = {"another tensor's max": y.max(1, keepdims=True),
         "part of the row's max": x[:, :8].max(1, keepdims=True),
         "the other axis's max": x.max(0, keepdims=True),
         "a max of the row times 0.5": x.max(1, keepdims=True) * F32(0.5)}[name]
    return np.exp((x - m).astype(np.float64)).astype(dt)


def _rows(shape: tuple, dtype, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(F32) * 6
    flat = x.reshape(-1, shape[-1])
    if flat.shape[0] >= 4 and shape[-1] >= 3:
        flat[0, 1], flat[1, 2], flat[2, 0] = np.nan, np.inf, -np.inf
        flat[3] = -np.inf
    return x.astype(dtype)


SHAPES = [(1, 1), (1, 16), (3, 17), (5, 1031), (1, 4097), (97, 1009), (2048, 3), (7, 64),
          (4, 5, 33), (1, 1024)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("width", ["32", "64"])
def test_softmax_and_logsumexp_rows_are_numpys(shape: tuple, dtype, width: str, monkeypatch):
    """At both vector widths (the suite's default is 256-bit: 512 takes the 16-lane forms)."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
    x = _rows(shape, dtype, sum(shape))
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        m = x64.max(-1, keepdims=True)
        e = np.exp(x64 - m)
        want_sm = e / e.sum(-1, keepdims=True)
        mf = np.where(np.isfinite(m), m, 0)
        want_lse = np.log(np.exp(x64 - mf).sum(-1)) + mf[..., 0]
        got_sm = Tensor(x).softmax(-1).numpy().astype(np.float64)
        got_lse = Tensor(x).logsumexp(-1).numpy().astype(np.float64)
    tol = dict(rtol=4e-6, atol=1e-30) if dtype is np.float32 else dict(rtol=4e-3, atol=2e-6)
    np.testing.assert_allclose(got_sm, want_sm, equal_nan=True, **tol)
    np.testing.assert_allclose(got_lse, want_lse, equal_nan=True,
                               **(dict(rtol=2e-6, atol=1e-6) if dtype is np.float32
                                  else dict(rtol=2e-3, atol=2e-3)))


def _signed_sweep(n: int = 1 << 20) -> np.ndarray:
    """Values of both signs over the whole float32 range (every bit pattern's nth), the specials
    among them, in a shape of whole 16-lane vectors and a tail."""
    u = np.linspace(0, 0xFFFFFFFF, n, dtype=np.uint64).astype(np.uint32).view(F32)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.8, 89.0, 100.0, -100.0, 3e38,
                        -3e38, 1e-45, -1e-45, 103.9, -103.9, 104.5, -104.5], F32)
    v = np.concatenate([special, u])
    return np.resize(v, -(-v.size // 13) * 13).reshape(-1, 13)


@pytest.mark.parametrize("op", ["sigmoid", "silu"])
def test_a_sigmoids_exp_of_minus_its_magnitude_is_printed_clamp_free_with_the_same_bits(
        op: str, monkeypatch):
    """A sigmoid's stable form computes exp(-|x|) as a select on x's sign (wide_exps'
    `nonpositive`): at 512 bits the clamp-free exp, the 256-bit target's bits (its library
    call keeps the clamp), and numpy's values."""
    x = _signed_sweep()
    got = {}
    for width in ("32", "64"):
        monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", width)
        t = getattr(Tensor(x), op)()
        assert ("rg_zexpn_f32(" in _source(t)) == (width == "64")
        with np.errstate(all="ignore"):
            got[width] = t.numpy()
    assert_same_bits(got["64"], got["32"])
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        s = np.where(x64 >= 0, 1 / (1 + np.exp(-x64)), np.exp(x64) / (1 + np.exp(x64)))
        want = s if op == "sigmoid" else x64 * s
    # (atol: products rounded into the subnormals, where float32 keeps fewer digits)
    np.testing.assert_allclose(got["64"], want, rtol=1e-6, atol=1e-36, equal_nan=True)


@pytest.mark.parametrize("name", ["x > 1", "x < 1", "x == 0", "y > 0"])
def test_a_select_not_on_its_values_sign_keeps_the_clamp(name: str, monkeypatch):
    """exp(c ? -x : x) is <= 0 only where c is x's sign: any other condition keeps the clamp,
    and exp(+inf) and exp(100) are inf."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x = _signed_sweep(1 << 12)
    y = -x
    c = {"x > 1": x > 1, "x < 1": x < 1, "x == 0": x == 0, "y > 0": y > 0}[name]
    tx, ty = Tensor(x), Tensor(y)
    tc = {"x > 1": tx > 1, "x < 1": tx < 1, "x == 0": tx == 0, "y > 0": ty > 0}[name]
    out = tc.where(-tx, tx).exp()
    assert "rg_zexpn_f32(" not in _source(out)
    with np.errstate(all="ignore"):
        got = out.numpy()
        arg = np.where(c, -x, x)
        exact = np.exp(arg.astype(np.float64))
    assert np.array_equal(np.isnan(got), np.isnan(exact))
    assert np.array_equal(np.isinf(got), np.isinf(exact.astype(F32)))
    fin = np.isfinite(exact.astype(F32))
    assert ulps(got[fin], exact[fin], F32).max() <= ULPS


@pytest.mark.parametrize("name", ["x > 0 ? -x : x", "x < 0 ? x : -x"])
def test_minus_a_magnitude_by_a_select_on_the_sign_is_printed_clamp_free(name: str, monkeypatch):
    """Both select forms of -|x| (wide_exps' `nonpositive`): exp within the bound, NaN kept."""
    monkeypatch.setenv("RULEGRAD_VECTOR_BYTES", "64")
    x = _signed_sweep(1 << 16)
    t = Tensor(x)
    out = ((t > 0).where(-t, t) if name.startswith("x > 0") else (t < 0).where(t, -t)).exp()
    assert "rg_zexpn_f32(" in _source(out)
    got = out.numpy()
    exact = np.exp(-np.abs(x.astype(np.float64)))
    assert np.array_equal(np.isnan(got), np.isnan(exact))
    ok = ~np.isnan(exact)
    assert ulps(got[ok], exact[ok], F32).max() <= ULPS
