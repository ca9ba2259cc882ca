"""float32 log of every kernel: one function and its vector forms, beside the exp (vexp.py) and
in its library (blocks.py builds the two together: one library, one load).

In: nothing (C text). Out: `DECLARATION`, which binds the `logf` that render.py's op table
prints for a float32 or float16 LOG (log_softmax, logsumexp, cross_entropy, a log of an
elementwise value) to the symbol `rg_logf`; `SOURCE`, the library's definitions: `rg_logf` and
the SIMD clones gcc's vectorizer calls from a kernel's loops (`_ZGV{b,c,d,e}N{4,8,8,16}v_rg_logf`,
the x86-64 vector ABI); `VECTOR`, the core inline as `rg_vlog_f32` for a kernel's explicit
8-lane vectors. Every one computes its lanes with the same steps, so a vector loop and its
scalar tail give the same bits. Before it, a LOG across lanes was glibc's scalar logf lane by
lane (an extract, a call and an insert a lane), and gcc's loops called libmvec's. Per value
(bench/log_poly.py --speed, a C loop of 4096 floats, best CPU time of 200, this project's AVX-512
machine): glibc's logf 2.51 ns, the scalar core 2.11, 8 lanes 0.52, 16 lanes 0.32.

The core: a subnormal x scaled by 2^23 first (k 23 lower), then x = 2^k m with m in
[sqrt(1/2), sqrt 2) from the bits (k = (bits(x) - bits(sqrt(1/2))) >> 23, m's bits x's less
k << 23), f = m - 1 (exact: Sterbenz), log x = k ln 2 + f + f^2 P(f), P(f) = -1/2 + f R(f),
R of degree 7 a minimax fit of log1p's relative error on f's range (bench/log_poly.py --fit:
0.12 ulp of 1 with R's coefficients rounded to float32). k ln 2 + f is kept as a sum of two
floats (k times ln 2's 16-bit high part is exact, and Fast2Sum gives the rounding of adding f,
|k ln 2| > |f| whenever k is not 0), so the rounding that x near sqrt 2 and 1/sqrt 2 would
otherwise pay twice (k ln 2 and f of opposite signs, a result of half their size) is paid
once. The special values by selects on x: 0 (either sign) gives -inf, +inf inf, a negative
or NaN NaN. Twelve fused multiply-adds a lane (eight of them the polynomial).

The accuracy contract: within 0.9 ulp of the exact value over every positive float32, the
subnormals included: 0.886 at most (bench/log_poly.py --step 1, a C loop of the core against
double log over all 2^31 positive bit patterns, which also finds the scalar, 8- and 16-lane
forms' bits the same; tests/test_vlog_61.py checks every 61st through the Tensor API, every
float16 and the special values against numpy). Without FMA instructions (a RULEGRAD_CFLAGS
without -march=native) each fused step is a multiply and an add: 0.954, within the 1.2 the
suite allows the exp so. One core for every lane either way.
"""

from __future__ import annotations

from . import vexp

NAME = "rg_logf"  # the library's symbol (under vexp.TAG's suffix: the core its target takes)

# What a kernel that calls logf gets in its prelude (render.py): logf under the library's symbol,
# with its SIMD clones declared (vexp.DECLARATION says why a redeclared builtin).
DECLARATION = (vexp.TAG + '\n__attribute__((simd("notinbranch"))) float logf(float) '
               '__asm__("rg_logf" RG_EXP_TAG);')

# The core's steps (vexp.CORE's types and fused-step macros): one value, 8 lanes, and 16 on an
# AVX-512 target. Scalar and vector steps are the same IEEE operations in the same order (the
# kernels build with -ffp-contract=off), so every form gives the same bits.
CORE = vexp.CORE + r"""
#ifndef RG_LOG_CORE
#define RG_LOG_CORE 1
#define RG_LOG_SQRTH 0x3f3504f3  /* bits of sqrt(1/2) rounded: m's range starts there */
#define RG_LOG_LN2HI 0x1.62e4p-1f  /* ln 2 to 16 bits: k times it is exact (|k| <= 150) */
#define RG_LOG_LN2LO 0x1.7f7d1cp-20f
/* P(f) = -1/2 + f R(f): R of degree 7 (bench/log_poly.py --fit) in Estrin's order, pairs of
   terms, then pairs of pairs by f^2 and f^4: 4 fused steps deep, not Horner's 8 (a chain of
   logs, each a call's argument, took 10.7 ns a log in Horner's order, 9.1 so; glibc's 8.4) */
#define RG_LOG_POLY(T, FMA, B, p, f, f2) \
  const T f4 = f2 * f2; \
  const T r01 = FMA(B(-0x1.000228p-2f), f, B(0x1.555554p-2f)); \
  const T r23 = FMA(B(-0x1.547228p-3f), f, B(0x1.99a00cp-3f)); \
  const T r45 = FMA(B(-0x1.0d8602p-3f), f, B(0x1.22d9bap-3f)); \
  const T r67 = FMA(B(-0x1.38b9d6p-4f), f, B(0x1.055eb2p-3f)); \
  p = FMA(FMA(r67, f2, r45), f4, FMA(r23, f2, r01)); p = FMA(p, f, B(-0.5f))
/* log x from kf (k, a float) and f: hi + lo, hi = fl(k ln2hi + f) and its rounding error */
#define RG_LOG_SUM(T, FMA, B, kf, f) \
  const T hi = FMA(kf, B(RG_LOG_LN2HI), f); \
  const T lo = FMA(kf, B(RG_LOG_LN2LO), FMA(kf, B(RG_LOG_LN2HI), -hi) + f); \
  const T f2 = f * f; \
  T p; RG_LOG_POLY(T, FMA, B, p, f, f2); \
  const T y = hi + FMA(f2, p, lo)
static inline __attribute__((always_inline)) float rg_log1(float x) {
  const int sub = x < 0x1p-126f;
  float xs = sub ? x * 0x1p23f : x;
  int32_t ix; memcpy(&ix, &xs, 4);
  const int32_t k = (int32_t)((uint32_t)ix - RG_LOG_SQRTH) >> 23;
  const int32_t im = (int32_t)((uint32_t)ix - ((uint32_t)k << 23));
  float m; memcpy(&m, &im, 4);
  const float kf = (float)k - (sub ? 23.0f : 0.0f), f = m - 1.0f;
  RG_LOG_SUM(float, RG_FMA1, RG_B1, kf, f);
  /* +inf: x; 0 (either sign): -inf; a negative, -inf or NaN: the quiet NaN (positive: a NaN's
     sign and payload are no part of its meaning, and numpy and torch differ on them) */
  return x > 0 && x < __builtin_inff() ? y : x == 0 ? -__builtin_inff()
         : x > 0 ? x : __builtin_nanf("");
}
/* the same steps on a vector type T of lanes (TI: int32 lanes, TU: uint32, SEL: a blend by a
   mask, B: a constant in every lane): 8 lanes, and 16 on an AVX-512 target */
#define RG_LOG_VEC(T, TI, TU, SEL, FMA, B) \
  const TI sub = x < B(0x1p-126f); \
  const TI ix = (TI)SEL(sub, x * B(0x1p23f), x); \
  const TI k = (ix - RG_LOG_SQRTH) >> 23, im = ix - (TI)((TU)k << 23); \
  const T kf = __builtin_convertvector(k, T) - SEL(sub, B(23.0f), B(0.0f)); \
  const T f = (T)im - B(1.0f); \
  RG_LOG_SUM(T, FMA, B, kf, f); \
  const TI ok = (x > B(0.0f)) & (x < B(__builtin_inff())); \
  const T bad = SEL(x == B(0.0f), B(-__builtin_inff()), \
                    SEL(x > B(0.0f), x, B(__builtin_nanf("")))); \
  return SEL(ok, y, bad);
typedef uint32_t rg_xu8 __attribute__((vector_size(32)));
#define RG_SEL8(m, a, b) ((rg_xf8)(((m) & (rg_xi8)(a)) | (~(m) & (rg_xi8)(b))))
static inline __attribute__((always_inline)) rg_xf8 rg_log8(rg_xf8 x) {
  RG_LOG_VEC(rg_xf8, rg_xi8, rg_xu8, RG_SEL8, RG_FMA8, RG_B8) }
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
typedef int32_t rg_xi16 __attribute__((vector_size(64)));
typedef uint32_t rg_xu16 __attribute__((vector_size(64)));
#define RG_SEL16(m, a, b) ((rg_xf16)(((m) & (rg_xi16)(a)) | (~(m) & (rg_xi16)(b))))
static inline __attribute__((always_inline)) rg_xf16 rg_log16(rg_xf16 x) {
  RG_LOG_VEC(rg_xf16, rg_xi16, rg_xu16, RG_SEL16, RG_FMA16, RG_B16) }
#endif
#endif"""

# The library's definitions (beside vexp.SOURCE's, in one library): the function and its clones.
SOURCE = CORE + vexp.clones(NAME, "rg_log", "1, 1, 1, 1, 1, 1, 1, 1")

# A kernel's explicit 8-lane vectors (render.py's op table: `rg_vlog_f32`): the core inline.
VECTOR = CORE + "\nstatic inline rg_vf32 rg_vlog_f32(rg_vf32 x) { return rg_log8(x); }"
