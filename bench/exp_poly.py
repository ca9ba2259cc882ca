"""The float32 exp core's polynomial (backends/c/vexp.py): where its coefficients come from and
how far the core is from the exact value over every float32 of its range.

    python bench/exp_poly.py [--fit] [--step N] [--cflags "-O2 -mavx2 -mno-fma"]

`--fit` prints P's coefficients for exp(r) = 1 + r + r^2 P(r), P of degree 4, on
|r| <= ln 2 / 2 (with a margin for k's rounding): a minimax fit of exp's relative error by
Lawson's iteration (weighted least squares, float64), its approximation error and each
coefficient rounded to float32 as vexp.py prints it. Without it: vexp.CORE compiled (default
-O2 -march=native -ffp-contract=off, the kernels' own) and run on every `--step`th float32 bit
pattern of [-103.9, 88.7], both signs (1: all of them, about 2.2e9, minutes), against libm's
double exp: the largest error in float32 ulps of the exact value (subnormal spacing below), as
vexp.py's docstring quotes it. A C loop, not the suite: tests/test_vexp.py checks every 61st
float32 through the Tensor API.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from rulegrad.backends.c import vexp

HARNESS = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static double ulps(float y, double e) {
  if (e > 3.4028234663852886e38) return isinf(y) ? 0 : 99;
  int ex; frexp(fabs(e), &ex);
  double ulp = ldexp(1.0, ex - 24); if (ulp < 0x1p-149) ulp = 0x1p-149;
  return fabs((double)y - e) / ulp; }
int main(int argc, char **argv) {
  const uint32_t step = (uint32_t)atoi(argv[1]);
  double worst = 0; float at = 0;
  for (int s = 0; s < 2; s++) {
    const uint32_t top = s ? 0xC2CFCCCDu : 0x42B16666u;  /* -103.9, 88.7 */
    for (uint32_t u = s ? 0x80000000u : 0; u <= top; u += 8 * step) {
      float xs[8]; rg_xf8 x;
      for (int i = 0; i < 8; i++) {
        uint32_t v = u + i * step; v = v > top ? top : v; memcpy(&xs[i], &v, 4); }
      memcpy(&x, xs, 32); x = rg_exp8(x);
      for (int i = 0; i < 8; i++) {
        double e = ulps(x[i], exp((double)xs[i]));
        if (e > worst) { worst = e; at = xs[i]; } }
      if (u > top - 8 * step) break;
    }
  }
  printf("max %.4f ulp at %a\n", worst, at);
  return 0; }
"""


def fit() -> None:
    half = np.log(2) / 2 * 1.0002
    r = np.cos(np.linspace(0, np.pi, 4001)) * half
    r = r[np.abs(r) > 1e-6]
    target, weight = (np.exp(r) - 1 - r) / r**2, r**2 / np.exp(r)  # relative error of exp
    basis, w = np.stack([r**i for i in range(5)], 1), np.ones_like(r)
    for _ in range(200):
        scale = np.sqrt(w) * weight
        c = np.linalg.lstsq(basis * scale[:, None], target * scale, rcond=None)[0]
        err = np.abs((basis @ c - target) * weight)
        w = w * err / (w * err).sum()
    print(f"approximation error {err.max():.3g} relative ({err.max() / 2**-23:.3f} ulp of 1)")
    hexes = (float(np.float32(x)).hex().split("p") for x in c)
    print("P from r^0 up:", ", ".join(f"{m.rstrip('0')}p{e}f" for m, e in hexes))


def measure(step: int, cflags: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "exp.c", Path(tmp) / "exp"
        src.write_text("#include <stdint.h>\n#include <string.h>\n" + vexp.CORE + HARNESS)
        subprocess.run(["gcc", *cflags.split(), "-ffp-contract=off", str(src), "-o", str(exe),
                        "-lm"], check=True)
        print(f"{cflags}: " + subprocess.run([str(exe), str(step)], capture_output=True,
                                             text=True, check=True).stdout.strip())


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--step", type=int, default=61)
    ap.add_argument("--cflags", default="-O2 -march=native")
    args = ap.parse_args()
    fit() if args.fit else measure(args.step, args.cflags)
