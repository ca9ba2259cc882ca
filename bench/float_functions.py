"""tanh, erf, tan and cos (and gelu through them) before and after issue 31's accuracy fixes,
interleaved in one run.

In: nothing (a vector of normal values times 3, so every piece of each function is taken, and
the same vector spread over +-1e4 for tan and cos_1e4). Out: per function and dtype, the new
form's median seconds per call over the old form's (a ratio: the machine is shared and noisy),
and the same for torch where it is installed. "Old" is each function as it was written before:
2 sigmoid(2x) - 1, Abramowitz & Stegun 7.1.26 past 0.84375, sin / (1 - 2 sin(x/2)^2), 1 - 2
sin(x/2)^2 (cos before it was the IR's COS, bench/ulp.py), spelled out here with the same
Tensor ops, so both sides run through the same scheduler and C backend.

    python bench/float_functions.py [n] [case ...]
"""

from __future__ import annotations

import math
import sys

import numpy as np
from harness import interleaved_medians, torch_module

# the old erf's pieces: A&S 7.1.26's polynomial, and fdlibm's below 0.84375 (unchanged)
_AS = [1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592]
_PP = [-2.37630166566501626084e-05, -5.77027029648944159157e-03, -2.84817495755985104766e-02,
       -3.25042107247001499370e-01, 1.28379167095512558561e-01]
_QQ = [-3.96022827877536812320e-06, 1.32494738004321644526e-04, 5.08130628187576562776e-03,
       6.50222499887672944485e-02, 3.97917223959155352819e-01, 1.0]


def _poly(x, coef):
    out = x * 0 + coef[0]
    for c in coef[1:]:
        out = out * x + c
    return out


def old_tanh(x):
    return 2 * (2 * x).clip(-80, 80).sigmoid() - 1


def old_erf(x):
    t = 1.0 / (1.0 + 0.3275911 * x.abs())
    y = 1.0 - t * _poly(t, _AS) * (-x.square()).clip(-80).exp()
    small = x.abs() < 0.84375
    xs = small.where(x, 0.0)
    z = xs * xs
    near0 = xs + xs * (_poly(z, _PP) / _poly(z, _QQ))
    return small.where(near0, small.where(1.0, x).sign() * y)


def old_tan(x):
    half = (x / 2).sin()
    return x.sin() / (1 - 2 * half * half)


def old_cos(x):
    half = (x / 2).sin()
    return 1 - 2 * half * half


def old_gelu(x, erf):
    if erf:
        return x * 0.5 * (1.0 + old_erf(x / math.sqrt(2)))
    cube = x * x * x
    return 0.5 * x * (1 + old_tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * cube)))


# name: (new, old, torch's name, the spread of the arguments)
CASES = {
    "tanh": (lambda t: t.tanh(), old_tanh, "tanh", 3.0),
    "erf": (lambda t: t.erf(), old_erf, "erf", 3.0),
    "tan": (lambda t: t.tan(), old_tan, "tan", 1e4),
    "cos": (lambda t: t.cos(), old_cos, "cos", 3.0),
    # libmvec's sinf and cosf call the scalar function for a whole vector with a lane past
    # about 1e4 (11x slower): the old form's sin(x/2) stayed under it up to 2e4
    "cos_1e4": (lambda t: t.cos(), old_cos, "cos", 1e4),
    "gelu_tanh": (lambda t: t.gelu(), lambda t: old_gelu(t, False), None, 3.0),
    "gelu_erf": (lambda t: t.gelu(approximate="none"), lambda t: old_gelu(t, True), None, 3.0),
}


def main() -> None:
    from rulegrad import Tensor

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
    names = sys.argv[2:] or list(CASES)
    torch = torch_module()
    print(f"n = {n}: new / old, and new / torch (median seconds per call, interleaved)")
    for dt in (np.float32, np.float64):
        for name in names:
            new, old, tname, scale = CASES[name]
            a = (np.random.default_rng(0).standard_normal(n) * scale).astype(dt)
            t = interleaved_medians(_calls(Tensor(a).realize(), a, new, old, tname, torch),
                                    rounds=7)
            vs_torch = f"  new/torch {t[0] / t[2]:5.2f}" if len(t) > 2 else ""
            print(f"{np.dtype(dt).name:8s} {name:10s} new/old {t[0] / t[1]:5.2f}{vs_torch}")


def _calls(x, a, new, old, tname, torch) -> list:
    """The new form's call, the old form's, and torch's where it has the function."""
    fns = [lambda: new(x).numpy(), lambda: old(x).numpy()]
    if torch is not None and tname is not None:
        ta = torch.from_numpy(a)
        fns.append(lambda: getattr(torch, tname)(ta).numpy())
    return fns

if __name__ == "__main__":
    main()
