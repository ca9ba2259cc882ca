"""The ulp audit of the float functions (issue 31): how far each is from the correctly rounded
value, per dtype and per kind of argument, beside numpy's own error.

In: nothing (the sweeps are built here, seeded). Out: one line per function, dtype and sweep:
the max and median error of rulegrad's C backend in ulps of the dtype, and numpy's (its function
computed in the dtype; for sigmoid and gelu, the textbook formula in the dtype), against float64
numpy (math's erf, erfc) rounded to the dtype: correctly rounded is 0.5. Also counted: NaN
where the oracle has none, or none where it has one. The float64 oracle is itself within about
an ulp of float64, so float64's numbers are good to about one ulp.

The sweeps: `uniform` (each function's usual range), `zeros` (the floats nearest each function's
zeros: k pi / 2 for trig with k up to 1e5, 1 for log), `large` (1e4..1e6 for trig; near overflow
and underflow for exp), `tiny` (subnormals and tiny normals), `special` (+-0, +-inf, NaN and the
dtype's extremes) and `switch` (where a vector path hands over to another: numpy's float32 sin /
cos at 71476.0625, libmvec's big-argument and underflow paths, powers of two and their
neighbours). Each is run with the default flags (vector loops, libmvec) and, with `--scalar`,
with `-fno-tree-vectorize` (libm's scalar calls).

    python bench/ulp.py [--scalar] [function ...]
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable

import numpy as np

DTYPES = (np.float16, np.float32, np.float64)


def ulp_errors(got: np.ndarray, want: np.ndarray, dt: type) -> np.ndarray:
    """|got - want| in ulps of `want` rounded to dt (the subnormal spacing at least); equal values
    (infinities too) are 0, an infinity against a finite value is inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        spacing = np.spacing(np.abs(want).astype(dt)).astype(np.float64)
        spacing = np.maximum(np.where(np.isfinite(spacing), spacing, np.finfo(dt).max),
                             float(np.finfo(dt).smallest_subnormal))
        err = np.abs(got.astype(np.float64) - want) / spacing
        rounded = want.astype(dt)  # (past the dtype's max, correctly rounded is inf)
    err[(got.astype(np.float64) == want) | (np.isinf(got) & (got == rounded))] = 0
    return np.where(np.isnan(err), np.inf, err)


def _neighbours(x: np.ndarray, dt: type, steps: int = 2) -> np.ndarray:
    """x rounded to dt and its `steps` floats on each side."""
    out, lo, hi = [x.astype(dt)], x.astype(dt), x.astype(dt)
    for _ in range(steps):
        lo, hi = np.nextafter(lo, dt(-np.inf)), np.nextafter(hi, dt(np.inf))
        out += [lo, hi]
    return np.concatenate(out)


def _special(dt: type) -> np.ndarray:
    f = np.finfo(dt)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, f.tiny, f.smallest_subnormal, f.max,
                     f.eps, 1.0, -1.0], np.float64)


def _tiny(rng: np.random.Generator, dt: type) -> np.ndarray:
    f = np.finfo(dt)
    lo = math.log10(float(f.smallest_subnormal))
    mag = 10.0 ** rng.uniform(lo, math.log10(float(f.tiny)) + 2, 1500)
    return np.concatenate([mag, -mag])


def _pow2(lo: int, hi: int) -> np.ndarray:
    return 2.0 ** np.arange(lo, hi + 1)


def _trig_sweeps(rng: np.random.Generator, dt: type) -> dict[str, np.ndarray]:
    top = min(1e5, float(np.finfo(dt).max) / 2 / math.pi)  # float16's zeros end at 65504
    ks = np.unique(np.concatenate([np.arange(1, 3001), np.geomspace(3001, top, 3000).round()]))
    zeros = ks * (math.pi / 2)
    return {
        "uniform": rng.uniform(-10, 10, 6000),
        "zeros": np.concatenate([zeros, -zeros]),
        "large": rng.choice([-1, 1], 6000) * np.geomspace(1e4, 1e6, 6000),
        "switch": np.concatenate([[71476.0625, 105414.0, 2.0 ** 24, 823550.0, 1e6, 4e9],
                                  _pow2(-30, 40)]),
    }


def _exp_sweeps(rng: np.random.Generator, dt: type, base: float) -> dict[str, np.ndarray]:
    lmax = math.log(float(np.finfo(dt).max)) / math.log(base)
    lsub = math.log(float(np.finfo(dt).smallest_subnormal)) / math.log(base)
    ltiny = math.log(float(np.finfo(dt).tiny)) / math.log(base)
    return {
        "uniform": rng.uniform(lsub * 1.02, lmax * 1.02, 6000),
        "zeros": rng.uniform(-1, 1, 3000) * 10.0 ** rng.uniform(-8, 0, 3000),
        "large": np.concatenate([rng.uniform(lmax - 3, lmax + 1, 2000),
                                 rng.uniform(lsub - 1, ltiny + 3, 2000)]),
        "switch": np.array([lmax, ltiny, lsub, -80.0, -708.0, -87.3, 88.7, 709.7, -745.1]),
    }


def _log_sweeps(rng: np.random.Generator, dt: type) -> dict[str, np.ndarray]:
    f = np.finfo(dt)
    span = math.log10(float(f.max))
    one = 1 + rng.choice([-1, 1], 3000) * 10.0 ** rng.uniform(math.log10(float(f.eps)), -1, 3000)
    return {
        "uniform": 10.0 ** rng.uniform(-span, span, 6000),
        "zeros": one,
        "large": np.concatenate([-rng.uniform(0, 10, 100), 10.0 ** rng.uniform(span - 1, span,
                                                                                500)]),
        "switch": _pow2(-20, 20),
    }


def _pos_sweeps(rng: np.random.Generator, dt: type) -> dict[str, np.ndarray]:
    span = math.log10(float(np.finfo(dt).max))
    return {"uniform": 10.0 ** rng.uniform(-span, span, 6000), "switch": _pow2(-24, 24)}


def _sigmoid_like(rng: np.random.Generator, dt: type) -> dict[str, np.ndarray]:
    return {
        "uniform": rng.uniform(-20, 20, 6000),
        "zeros": rng.uniform(-1, 1, 3000) * 10.0 ** rng.uniform(-10, 0, 3000),
        "large": rng.choice([-1, 1], 3000) * 10.0 ** rng.uniform(1, 4, 3000),
        "switch": np.array([0.625, 0.84375, 1.25, 1 / 0.35, 6.0, 20.0, 28.0, 40.0, 80.0]),
    }


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))  # (scipy's expit flushes subnormal results to 0)
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _gelu(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + tanh u) as x sigmoid(2u): 1 + tanh u cancels in the negative tail."""
    return x * _sigmoid(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x))


def _numpy_gelu(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    return t(0.5) * x * (t(1) + np.tanh(t(math.sqrt(2 / math.pi)) * (x + t(0.044715) * x * x * x)))


def _erf(x: np.ndarray) -> np.ndarray:
    """libm's erf, through math (scipy's flushes subnormal results to 0)."""
    return np.array([math.erf(v) for v in x.tolist()], np.float64)


def _erfc(x: np.ndarray) -> np.ndarray:
    return np.array([math.erfc(v) for v in x.tolist()], np.float64)


def _gelu_erf(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * _erfc(-x / math.sqrt(2))  # (1 + erf cancels at large negative x)


def _numpy_sigmoid(x: np.ndarray) -> np.ndarray:
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


def _numpy_gelu_erf(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    return t(0.5) * x * (t(1) + _erf(x / t(math.sqrt(2))).astype(x.dtype))


def _pow_pairs(rng: np.random.Generator, dt: type) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(base, exponent) pairs: pow's sweeps are two-dimensional."""
    n = 4000
    lmax = math.log2(float(np.finfo(dt).max))
    near1 = 1 + rng.choice([-1, 1], n) * 10.0 ** rng.uniform(-7, -1, n)
    ints = rng.integers(-12, 13, n).astype(np.float64)
    sp_b = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, 0.5])
    sp_e = np.array([0.0, -0.0, 0.5, 1.0, -1.0, 2.0, 3.0, np.inf, -np.inf, np.nan])
    sb, se = np.meshgrid(sp_b, sp_e)
    return {
        "uniform": (2.0 ** rng.uniform(-8, 8, n), rng.uniform(-8, 8, n)),
        "zeros": (near1, rng.uniform(-1, 1, n) * 10.0 ** rng.uniform(0, 4, n)),
        "large": (2.0 ** rng.uniform(0.5, 4, n), rng.uniform(0.9, 1.02, n) * lmax / 2),
        "negative": (-rng.uniform(0.1, 8, n), ints),
        "special": (sb.ravel(), se.ravel()),
    }


# name: (rulegrad's call, float64 oracle, numpy in the dtype, sweeps)
Sweeps = Callable[[np.random.Generator, type], dict[str, np.ndarray]]
FUNCTIONS: dict[str, tuple[Callable, Callable, Callable, Sweeps]] = {
    "sin": (lambda t: t.sin(), np.sin, np.sin, _trig_sweeps),
    "cos": (lambda t: t.cos(), np.cos, np.cos, _trig_sweeps),
    "tan": (lambda t: t.tan(), np.tan, np.tan, _trig_sweeps),
    "exp": (lambda t: t.exp(), np.exp, np.exp, lambda r, d: _exp_sweeps(r, d, math.e)),
    "exp2": (lambda t: t.exp2(), np.exp2, np.exp2, lambda r, d: _exp_sweeps(r, d, 2.0)),
    "log": (lambda t: t.log(), np.log, np.log, _log_sweeps),
    "log2": (lambda t: t.log2(), np.log2, np.log2, _log_sweeps),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, np.sqrt, _pos_sweeps),
    "sigmoid": (lambda t: t.sigmoid(), _sigmoid, _numpy_sigmoid, _sigmoid_like),
    "tanh": (lambda t: t.tanh(), np.tanh, np.tanh, _sigmoid_like),
    "erf": (lambda t: t.erf(), _erf, lambda x: _erf(x).astype(x.dtype), _sigmoid_like),
    "gelu": (lambda t: t.gelu(), _gelu, _numpy_gelu, _sigmoid_like),
    "gelu_erf": (lambda t: t.gelu(approximate="none"), _gelu_erf, _numpy_gelu_erf,
                 _sigmoid_like),
}


def sweeps(name: str, dt: type) -> dict[str, np.ndarray]:
    """Each sweep of `name` for dt, as float64 values that dt holds exactly (both signs)."""
    rng = np.random.default_rng(46)
    out = FUNCTIONS[name][3](rng, dt)
    out.setdefault("tiny", _tiny(rng, dt))
    out["special"] = _special(dt)
    with np.errstate(over="ignore"):
        return {k: _neighbours(np.concatenate([v, -v]), dt).astype(np.float64)
                for k, v in out.items()}


def _pow_sweeps(dt: type) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    with np.errstate(over="ignore"):
        return {k: (b.astype(dt).astype(np.float64), e.astype(dt).astype(np.float64))
                for k, (b, e) in _pow_pairs(np.random.default_rng(46), dt).items()}


def measure(got: np.ndarray, want: np.ndarray, dt: type) -> tuple[float, float, int]:
    """(max ulps, median ulps, NaN mismatches) of got against the float64 `want`."""
    nan = np.isnan(want)
    bad_nan = int(np.count_nonzero(np.isnan(got) != nan))
    err = ulp_errors(got[~nan], want[~nan], dt)
    if err.size == 0:
        return 0.0, 0.0, bad_nan
    return float(err.max()), float(np.median(err)), bad_nan


def audit(name: str, dt: type) -> list[tuple[str, tuple, tuple, float]]:
    """Per sweep: (sweep, rulegrad's (max, median, NaN mismatches), numpy's, worst argument)."""
    from rulegrad import Tensor

    rows = []
    if name == "pow":
        cases = {k: (b, e) for k, (b, e) in _pow_sweeps(dt).items()}
    else:
        cases = {k: (x,) for k, x in sweeps(name, dt).items()}
    call, oracle, own = (FUNCTIONS[name][:3] if name != "pow" else
                         (lambda b, e: b ** e, np.power, np.power))
    for kind, args in cases.items():
        with np.errstate(all="ignore"):
            want = oracle(*args)
            mine = own(*(a.astype(dt) for a in args))
        got = call(*(Tensor(a.astype(dt)) for a in args)).numpy()
        assert got.dtype == dt, (name, got.dtype)
        ours = measure(got, want, dt)
        nan = np.isnan(want)
        err = ulp_errors(got[~nan], want[~nan], dt)
        worst = float(args[0][~nan][int(np.argmax(err))]) if err.size else float("nan")
        rows.append((kind, ours, measure(np.asarray(mine), want, dt), worst))
    return rows


def main() -> None:
    args = sys.argv[1:]
    if "--scalar" in args:  # libm's scalar calls: nothing vectorized
        os.environ["RULEGRAD_CFLAGS"] = ("-O2 -march=native -fno-math-errno -fno-trapping-math "
                                         "-fno-tree-vectorize -fno-tree-slp-vectorize")
        args.remove("--scalar")
    os.environ.setdefault("RULEGRAD_BACKEND", "c")
    names = args or [*FUNCTIONS, "pow"]
    print(f"{'function':9s} {'dtype':8s} {'sweep':8s} {'max':>10s} {'median':>7s} {'nan':>4s}   "
          f"{'numpy max':>10s} {'median':>7s} {'nan':>4s}   worst at")
    for name in names:
        for dt in DTYPES:
            for kind, ours, theirs, worst in audit(name, dt):
                print(f"{name:9s} {np.dtype(dt).name:8s} {kind:8s} {ours[0]:10.3g} "
                      f"{ours[1]:7.2f} {ours[2]:4d}   {theirs[0]:10.3g} {theirs[1]:7.2f} "
                      f"{theirs[2]:4d}   {worst:.9g}", flush=True)


if __name__ == "__main__":
    main()
