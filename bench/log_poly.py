"""The float32 log core's polynomial (backends/c/vlog.py): where its coefficients come from and
how far the core is from the exact value over every positive float32.

    python bench/log_poly.py [--fit | --speed] [--step N] [--cflags "-O2 -mavx2 -mno-fma"]

`--fit` prints R's coefficients for log1p(f) = f - f^2/2 + f^3 R(f), R of degree 7, on
f in [sqrt(1/2) - 1, sqrt(2) - 1] (with a margin): a minimax fit of log1p's relative error by
Lawson's iteration (weighted least squares in float64 against mpmath's log1p), its error with
the coefficients rounded to float32, in units of 2^-24. Without it: vlog.CORE compiled (the
kernels' -ffp-contract=off -fwrapv) and run on every `--step`th positive float32 bit pattern,
subnormals included (1: all 2^31 of them, about a minute), 8 lanes at a time, and on each value
alone (the scalar function) and, on an AVX-512 target, in 16 lanes (the same bits required of
all three), against libm's double log: the largest
error in float32 ulps of the exact value, as vlog.py's docstring quotes it, and how many values
the forms disagree on (must be 0). tests/test_vlog_61.py checks every 61st float32 through
the Tensor API. `--speed`: the time per value of glibc's logf and of the core's scalar, 8- and
16-lane forms (a C loop of 4096 floats summed, best CPU time of 200 calls), as vlog.py quotes.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from rulegrad.backends.c import vlog

HARNESS = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static double ulps(float y, double e) {
  int ex; frexp(fabs(e), &ex);
  double ulp = ldexp(1.0, ex - 24);
  return fabs((double)y - e) / ulp; }
int main(int argc, char **argv) {
  const uint32_t step = (uint32_t)atoi(argv[1]), top = 0x7f7fffffu;  /* FLT_MAX */
  double worst = 0; float at = 0; long differ = 0;
  for (uint32_t u = 1; u <= top; u += 8 * step) {
    float xs[8]; rg_xf8 x;
    for (int i = 0; i < 8; i++) {
      uint32_t v = u + i * step; v = v > top ? top : v; memcpy(&xs[i], &v, 4); }
    memcpy(&x, xs, 32);
#ifdef __AVX512F__
    rg_xf16 z = {0}; memcpy(&z, xs, 32); z = rg_log16(z);
#endif
    x = rg_log8(x);
    for (int i = 0; i < 8; i++) {
      float s = rg_log1(xs[i]);
      if (memcmp(&s, &x[i], 4)) differ++;
#ifdef __AVX512F__
      if (memcmp(&s, &z[i], 4)) differ++;
#endif
      double e = ulps(x[i], log((double)xs[i]));
      if (e > worst) { worst = e; at = xs[i]; } }
    if (u > top - 8 * step) break;
  }
  printf("max %.4f ulp at %a; the forms differ on %ld\n", worst, at, differ);
  return 0; }
"""


SPEED = r"""
#include <math.h>
#include <stdio.h>
#include <time.h>
static double now(void) {
  struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec; }
__attribute__((noinline)) float one(const float *x, int n) {
  float s = 0; for (int i = 0; i < n; i++) s += rg_log1(x[i]); return s; }
__attribute__((noinline)) float glibc(const float *x, int n) {
  float s = 0; for (int i = 0; i < n; i++) s += logf(x[i]); return s; }
__attribute__((noinline)) float eight(const float *x, int n) {
  rg_xf8 s = {0};
  for (int i = 0; i < n; i += 8) { rg_xf8 v; memcpy(&v, x + i, 32); s += rg_log8(v); }
  return s[0]; }
#ifdef __AVX512F__
__attribute__((noinline)) float sixteen(const float *x, int n) {
  rg_xf16 s = {0};
  for (int i = 0; i < n; i += 16) { rg_xf16 v; memcpy(&v, x + i, 64); s += rg_log16(v); }
  return s[0]; }
#endif
int main(void) {
  static float x[4096];
  for (int i = 0; i < 4096; i++) x[i] = 0.01f + i * 0.37f;
  float (*f[])(const float *, int) = {glibc, one, eight,
#ifdef __AVX512F__
                                      sixteen
#endif
  };
  const char *names[] = {"glibc logf", "scalar core", "8 lanes", "16 lanes"};
  for (int k = 0; k < (int)(sizeof f / sizeof *f); k++) {
    double best = 1e9; volatile float sink;
    for (int r = 0; r < 200; r++) {
      double t = now(); sink = f[k](x, 4096); t = now() - t; best = t < best ? t : best; }
    (void)sink;
    printf("%s %.3f ns a value\n", names[k], best / 4096 * 1e9); }
  return 0; }
"""


def fit() -> None:
    import mpmath

    mpmath.mp.dps = 40
    a, b = np.sqrt(0.5) - 1, np.sqrt(2) - 1
    f = (a + b) / 2 + (b - a) / 2 * 1.0001 * np.cos(np.linspace(0, np.pi, 3001))
    f = f[np.abs(f) > 1e-5]
    exact = [mpmath.log1p(mpmath.mpf(x)) for x in f]
    lp = np.array([float(e) for e in exact])
    target = np.array([float((e - x + mpmath.mpf(x) ** 2 / 2) / mpmath.mpf(x) ** 3)
                       for e, x in zip(exact, f)])
    weight = np.abs(f**3 / lp)  # R's error as a relative error of log1p
    basis, w = np.stack([f**i for i in range(8)], 1), np.ones_like(f)
    for _ in range(300):
        scale = np.sqrt(w) * weight
        c = np.linalg.lstsq(basis * scale[:, None], target * scale, rcond=None)[0]
        err = np.abs((basis @ c - target) * weight)
        w = w * err / (w * err).sum()
    c32 = c.astype(np.float32).astype(np.float64)
    err32 = np.abs((basis @ c32 - target) * weight).max()
    print(f"approximation error {err.max():.3g} relative; with float32 coefficients "
          f"{err32 / 2**-24:.3f} x 2^-24")
    hexes = (float(np.float32(x)).hex().split("p") for x in c)
    print("R from f^0 up:", ", ".join(f"{m.rstrip('0')}p{e}f" for m, e in hexes))


def measure(harness: str, step: int, cflags: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "log.c", Path(tmp) / "log"
        src.write_text("#include <stdint.h>\n#include <string.h>\n" + vlog.CORE + harness)
        subprocess.run(["gcc", *cflags.split(), "-ffp-contract=off", "-fwrapv", "-fno-math-errno",
                        str(src), "-o", str(exe), "-lm"], check=True)
        print(f"{cflags}: " + subprocess.run([str(exe), str(step)], capture_output=True,
                                             text=True, check=True).stdout.strip())


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--step", type=int, default=61)
    ap.add_argument("--cflags", default="-O2 -march=native")
    args = ap.parse_args()
    if args.fit:
        fit()
    else:
        measure(SPEED if args.speed else HARNESS, args.step, args.cflags)
