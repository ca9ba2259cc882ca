"""float32 exp of every kernel: one function and its vector forms, compiled once into a small
library of their own (blocks.py loads it before a kernel that calls it).

In: nothing (C text). Out: `DECLARATION`, which binds the `expf` that render.py's op table
prints for a float32 or float16 EXP (what sigmoid, tanh, erf, gelu, softmax and logsumexp lower
through) to the symbol `rg_expf`, and `SOURCE`, the library's definitions: `rg_expf` itself and
the SIMD clones gcc's vectorizer calls from a kernel's loops, `_ZGV{b,c,d,e}N{4,8,8,16}v_rg_expf`
(the x86-64 vector ABI); and `VECTOR`, the core inline as `rg_vexp_f32` for a kernel's
explicit 8-lane vectors (render.py's op table), and `WIDE`, as `rg_zexp_f32` in 16 lanes (a
512-bit target's reduce of exps, two 8-lane vectors at once, and its local rows of exps), and
as `rg_vexpn_f32` and `rg_zexpn_f32` without the overflow clamp for an argument known <= 0 or
NaN (a softmax's x - max(x), a sigmoid's -|x|: rules/wide_exps.py's `nonpositive`; the clamp
keeps such an x, so the same bits).
Every one of them computes its lanes with the same core, so a vector loop and its scalar
tail give the same bits. The scalar function runs the core's steps on one value (scalar fused
multiply-adds): through a 16-lane call, the two values of a row of 10 left after its 8-lane
vector made a logsumexp over rows of 10 0.56x as fast as libm's scalar expf.

Why not libmvec's `_ZGVeN16v_expf`: it was 0.29 ns per value on this project's machine (AMD
EPYC, AVX-512; calls on an L1-resident row, best of 300), this core 0.20, and exp was 44% of a
softmax's time on one thread (perf); libmvec's was also up to 2.56 ulps off, and libm's scalar
expf (a loop's tail) gave other bits than it. The accuracy contract: within 0.9 ulp of the
exact value over float32 inputs in [-103.9, 88.7] (tests/test_vexp.py checks every 61st float32
of the range, every float16 and the special values against numpy; the suite's bound for a C
library's function, LIBM_ULPS, is 4).

The core: x clamped to [-104, 88.8] (NaN kept: below -104 exp rounds to +0, above 88.8 to
inf, so -inf gives 0 and +inf gives inf), k = round(x / ln 2) by the 1.5 * 2^23 shift,
r = x - k ln 2 in two fused steps (Cody-Waite, Cephes' split of ln 2: k times its 9-bit high
part is exact), exp(r) = 1 + r + r^2 P(r), P of degree 4 (six fused multiply-adds for exp(r)),
then times 2^k rounded once: AVX-512's scalef, or 2^(k >> 1) (exact: the product stays normal)
times 2^(k - (k >> 1)), which rounds once into the subnormals and gives the same bits. P is a
minimax fit of exp's relative error on |r| <= ln 2 / 2 (bench/exp_poly.py --fit): 3e-9, 0.03
ulp, so the steps' roundings make the error, as they did with Cephes' P of degree 5 (a fused
step more, the same 0.894 ulp; this core runs 16 lanes 1.12x as fast as that one did, one
thread on an L1 row, CPU time). Without FMA instructions (RULEGRAD_CFLAGS without
-march=native, or a CPU without them) each fused step is a multiply and an add: within 1.2 ulp,
and still one core for every lane. Over every float32 of the range (bench/exp_poly.py --step 1,
a C loop against double exp): 0.894 ulp with FMA instructions (AVX-512's and AVX2's), 1.176 without.
"""

from __future__ import annotations

NAME = "rg_expf"  # the library's symbol

# The core a build's target takes names its symbols (`rg_expf_z`, `_ZGVeN16v_rg_expf_z`, ...):
# AVX-512's, FMA's or the plain one. A kernel built under other flags than the library (a
# RULEGRAD_CFLAGS change within a process) then binds to a library of its own core (blocks.py
# keys the library by the flags), never to a clone another build lacks (an undefined
# _ZGVeN16v_ symbol stopped its load) nor to a scalar tail from another core.
TAG = r"""
#ifndef RG_EXP_TAG
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define RG_EXP_TAG "_z"
#elif defined(__FMA__) && defined(__GNUC__) && !defined(__clang__)
#define RG_EXP_TAG "_f"
#else
#define RG_EXP_TAG "_p"
#endif
#endif"""

# What a kernel that calls expf gets in its prelude (render.py): expf under the library's symbol.
# A redeclaration of the builtin with an asm label renames its calls (glibc redirects its own
# functions so), and gcc names the vector clones after that symbol (`simd`, as libm's for
# libmvec). Calls of a function of another name stayed scalar wherever gcc had sunk one into a
# branch (erf's far side: "control flow in loop"): only a builtin is if-converted.
DECLARATION = (TAG + '\n__attribute__((simd("notinbranch"))) float expf(float) '
               '__asm__("rg_expf" RG_EXP_TAG);')

# The core's steps, static and inline (one guard, so a kernel's prelude may hold them beside the
# library's own text): the library's functions below, and a kernel's explicit vectors
# (`VECTOR`), compute every lane with them.
CORE = TAG + r"""
#ifndef RG_EXP_CORE
#define RG_EXP_CORE 1
typedef float rg_xf4 __attribute__((vector_size(16)));
typedef float rg_xf8 __attribute__((vector_size(32)));
typedef float rg_xf16 __attribute__((vector_size(64)));
typedef int32_t rg_xi8 __attribute__((vector_size(32)));
#define RG_EXP_SHIFT 0x1.8p23f
#define RG_EXP_POLY(FMA, B, p, r) \
  p = B(0x1.6a241ap-10f); p = FMA(p, r, B(0x1.1239f2p-7f)); p = FMA(p, r, B(0x1.5558f2p-5f)); \
  p = FMA(p, r, B(0x1.555492p-3f)); p = FMA(p, r, B(0x1.fffffcp-2f)); \
  p = FMA(p, r, B(1.0f)); p = FMA(p, r, B(1.0f))
#if defined(__FMA__) && defined(__GNUC__) && !defined(__clang__)
#define RG_FMA1(a, b, c) __builtin_fmaf(a, b, c)
#define RG_FMA8(a, b, c) __builtin_ia32_vfmaddps256(a, b, c)
#else
#define RG_FMA1(a, b, c) ((a) * (b) + (c))
#define RG_FMA8(a, b, c) ((a) * (b) + (c))
#endif
#define RG_B1(c) (c)
#define RG_B8(c) ((rg_xf8){0} + (c))
/* one value: a compare that is false (NaN) keeps x; 2^k in two exact halves */
static inline __attribute__((always_inline)) float rg_exp1(float x) {
  x = x > 88.8f ? 88.8f : x;
  x = x < -104.0f ? -104.0f : x;
  const float kf = RG_FMA1(x, 0x1.715476p+0f, RG_EXP_SHIFT), k = kf - RG_EXP_SHIFT;
  float r = RG_FMA1(k, -0x1.63p-1f, x), p;
  r = RG_FMA1(k, 0x1.bd0106p-13f, r);
  RG_EXP_POLY(RG_FMA1, RG_B1, p, r);
  int32_t ki; memcpy(&ki, &kf, 4);
  ki -= 0x4B400000;  /* RG_EXP_SHIFT's bits */
  const int32_t k1 = ki >> 1, k2 = ki - k1;
  const uint32_t u1 = (uint32_t)(k1 + 127) << 23, u2 = (uint32_t)(k2 + 127) << 23;
  float s1, s2; memcpy(&s1, &u1, 4); memcpy(&s2, &u2, 4);
  return p * s1 * s2;
}
/* the same steps on 8 lanes; AVX's min and max return their second operand, x, where it is NaN,
   as the compares keep it (one instruction a clamp, not a compare and a blend) */
#if defined(__AVX__) && defined(__GNUC__)
#define RG_CLAMP8(x, MINMAX, OP, c) x = MINMAX(RG_B8(c), x)
#else
#define RG_CLAMP8(x, MINMAX, OP, c) do { rg_xi8 m_ = x OP RG_B8(c); \
  x = (rg_xf8)((~m_ & (rg_xi8)x) | (m_ & (rg_xi8)RG_B8(c))); } while (0)
#endif
/* an argument known <= 0 or NaN (wide_exps.nonpositive): the steps but the overflow clamp,
   which keeps such an x, so the same bits */
static inline __attribute__((always_inline)) rg_xf8 rg_exp8n(rg_xf8 x) {
  RG_CLAMP8(x, __builtin_ia32_maxps256, <, -104.0f);
  const rg_xf8 kf = RG_FMA8(x, RG_B8(0x1.715476p+0f), RG_B8(RG_EXP_SHIFT)), k = kf - RG_EXP_SHIFT;
  rg_xf8 r = RG_FMA8(k, RG_B8(-0x1.63p-1f), x), p;
  r = RG_FMA8(k, RG_B8(0x1.bd0106p-13f), r);
  RG_EXP_POLY(RG_FMA8, RG_B8, p, r);
  const rg_xi8 ki = (rg_xi8)kf - (rg_xi8)RG_B8(RG_EXP_SHIFT), k1 = ki >> 1, k2 = ki - k1;
  return p * (rg_xf8)((k1 + 127) << 23) * (rg_xf8)((k2 + 127) << 23);
}
static inline __attribute__((always_inline)) rg_xf8 rg_exp8(rg_xf8 x) {
  RG_CLAMP8(x, __builtin_ia32_minps256, >, 88.8f);
  return rg_exp8n(x);
}
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define RG_B16(c) ((rg_xf16){0} + (c))
#define RG_B4(c) ((rg_xf4){0} + (c))
#define RG_M16 (unsigned short)-1, 4
/* the steps with AVX-512's scalef for 2^k (the same single rounding as the two halves'), on a
   vector type T: min/max return their second operand, x, where it is NaN. _LOW's steps are the
   same but the overflow clamp: for x <= 0 (or NaN) that clamp keeps x, so the same bits */
#define RG_EXP_SCALEF(T, B, MIN, MAX, FMA, SCALEF) \
  x = MIN(B(88.8f), x); RG_EXP_SCALEF_LOW(T, B, MAX, FMA, SCALEF)
#define RG_EXP_SCALEF_LOW(T, B, MAX, FMA, SCALEF) \
  x = MAX(B(-104.0f), x); \
  const T k = FMA(x, B(0x1.715476p+0f), B(RG_EXP_SHIFT)) - RG_EXP_SHIFT; \
  T r = FMA(k, B(-0x1.63p-1f), x), p; \
  r = FMA(k, B(0x1.bd0106p-13f), r); \
  RG_EXP_POLY(FMA, B, p, r); \
  return SCALEF(p, k);
#define RG_MIN16(a, b) __builtin_ia32_minps512_mask(a, b, b, RG_M16)
#define RG_MAX16(a, b) __builtin_ia32_maxps512_mask(a, b, b, RG_M16)
#define RG_FMA16(a, b, c) __builtin_ia32_vfmaddps512_mask(a, b, c, RG_M16)
#define RG_SCALEF16(a, b) __builtin_ia32_scalefps512_mask(a, b, a, RG_M16)
static inline __attribute__((always_inline)) rg_xf16 rg_exp16(rg_xf16 x) {
  RG_EXP_SCALEF(rg_xf16, RG_B16, RG_MIN16, RG_MAX16, RG_FMA16, RG_SCALEF16) }
/* an argument known <= 0 or NaN (wide_exps.nonpositive: x - max(x) over x's own row) */
static inline __attribute__((always_inline)) rg_xf16 rg_exp16n(rg_xf16 x) {
  RG_EXP_SCALEF_LOW(rg_xf16, RG_B16, RG_MAX16, RG_FMA16, RG_SCALEF16) }
#ifdef __AVX512VL__
/* 8 and 4 lanes (and one value, in 4) the same way: fewer steps than the two halves */
#define RG_SCALEF8(a, b) __builtin_ia32_scalefps256_mask(a, b, a, (unsigned char)-1)
#define RG_SCALEF4(a, b) __builtin_ia32_scalefps128_mask(a, b, a, (unsigned char)-1)
static inline __attribute__((always_inline)) rg_xf8 rg_exp8s(rg_xf8 x) {
  RG_EXP_SCALEF(rg_xf8, RG_B8, __builtin_ia32_minps256, __builtin_ia32_maxps256,
                __builtin_ia32_vfmaddps256, RG_SCALEF8) }
static inline __attribute__((always_inline)) rg_xf4 rg_exp4s(rg_xf4 x) {
  RG_EXP_SCALEF(rg_xf4, RG_B4, __builtin_ia32_minps, __builtin_ia32_maxps,
                __builtin_ia32_vfmaddps, RG_SCALEF4) }
#define rg_exp8 rg_exp8s
#define rg_exp1(x) (rg_exp4s(RG_B4(x))[0])
#endif
#endif
#endif"""

def clones(fn: str, core: str, fill: str) -> str:
    """The library's definitions of `fn` (float32 -> float32): the function and its SIMD
    clones (x86's vector ABI names, so gcc's vector loops call them), each the steps of
    `core`1/8/16 (`rg_exp8`, ...); a 4-lane clone runs the 8-lane steps with its upper half
    `fill` (a value the core takes quietly)."""
    return rf"""
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
rg_xf16 {fn}_e(rg_xf16 x) __asm__("_ZGVeN16v_{fn}" RG_EXP_TAG);
rg_xf16 {fn}_e(rg_xf16 x) {{ return {core}16(x); }}
#endif
float {fn}_1(float x) __asm__("{fn}" RG_EXP_TAG);
float {fn}_1(float x) {{ return {core}1(x); }}
rg_xf4 {fn}_b(rg_xf4 x) __asm__("_ZGVbN4v_{fn}" RG_EXP_TAG);
rg_xf4 {fn}_b(rg_xf4 x) {{
  rg_xf8 v = {{{fill}}}; memcpy(&v, &x, 16); v = {core}8(v); memcpy(&x, &v, 16); return x; }}
#ifdef __AVX__
rg_xf8 {fn}_c(rg_xf8 x) __asm__("_ZGVcN8v_{fn}" RG_EXP_TAG);
rg_xf8 {fn}_c(rg_xf8 x) {{ return {core}8(x); }}
#endif
#ifdef __AVX2__
rg_xf8 {fn}_d(rg_xf8 x) __asm__("_ZGVdN8v_{fn}" RG_EXP_TAG);
rg_xf8 {fn}_d(rg_xf8 x) {{ return {core}8(x); }}
#endif
"""


# The library's definitions: the function and its SIMD clones, each the core's steps.
SOURCE = CORE + clones(NAME, "rg_exp", "0")

# What a kernel of explicit 8-lane vectors (render.py's op table: `rg_vexp_f32`) gets in its
# prelude: the core's 8-lane steps inline, not a call of the library's clone. In a row's sum
# (logsumexp's exp(x - max)) a call per vector spilled the partial sums around it and kept the
# vectors' steps apart; inline, a block's vectors interleave. The same steps as the clones' and
# the function's, so the lanes give the bits the library gives a scalar tail.
VECTOR = CORE + """
static inline rg_vf32 rg_vexp_f32(rg_vf32 x) { return rg_exp8(x); }
static inline rg_vf32 rg_vexpn_f32(rg_vf32 x) { return rg_exp8n(x); }  /* x <= 0 or NaN */"""

# What a reduce computing two of its 8-lane vectors as one 16-lane value (rules/wide_exps.py's
# `paired`, render.py's `_vector_steps`), or a local row filled 16 lanes at a time (`wide_fill`),
# gets: a contiguous 16-lane load and store, the core's 16-lane steps (AVX-512's; elsewhere two
# 8-lane halves, the same bits), and a half of the result for each 8-lane partial sum. The
# core's instructions are as many at 16 lanes as at 8.
WIDE = CORE + r"""
static inline rg_zf32 rg_zload_f32(const float *p) { rg_zf32 v; memcpy(&v, p, 64); return v; }
static inline void rg_zstore_f32(float *p, rg_zf32 v) { memcpy(p, &v, 64); }
typedef int32_t rg_zi32 __attribute__((vector_size(64)));  /* masks: all ones for true */
static inline rg_zf32 rg_zset_f32(float x) {
  return (rg_zf32){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
static inline rg_zi32 rg_zset_i32(int32_t x) {
  return (rg_zi32){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
static inline rg_zf32 rg_zsel_f32(rg_zi32 m, rg_zf32 a, rg_zf32 b) {
  return (rg_zf32)((m & (rg_zi32)a) | (~m & (rg_zi32)b)); }
static inline rg_vf32 rg_zhalf_f32(rg_zf32 v, int h) {
  rg_vf32 r; memcpy(&r, (const char *)&v + 32 * h, 32); return r; }
static inline rg_zf32 rg_zexp_f32(rg_zf32 x) {
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
  return rg_exp16(x);
#else
  rg_xf8 a, b; memcpy(&a, &x, 32); memcpy(&b, (const char *)&x + 32, 32);
  a = rg_exp8(a); b = rg_exp8(b); memcpy(&x, &a, 32); memcpy((char *)&x + 32, &b, 32); return x;
#endif
}
/* an argument known <= 0 or NaN: no overflow clamp, the same bits as rg_zexp_f32's there */
static inline rg_zf32 rg_zexpn_f32(rg_zf32 x) {
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
  return rg_exp16n(x);
#else
  rg_xf8 a, b; memcpy(&a, &x, 32); memcpy(&b, (const char *)&x + 32, 32);
  a = rg_exp8n(a); b = rg_exp8n(b); memcpy(&x, &a, 32); memcpy((char *)&x + 32, &b, 32); return x;
#endif
}"""

# What a float16 row filled 16 lanes at a time (rules/wide_exps.py's `wide_half`: a float16
# softmax's exps on a 512-bit target) gets beside WIDE: 16 halves widened to float32 lanes, a
# float32 rounded to the nearest half where the graph casts (ties to even, overflow to inf,
# subnormals kept: the same conversions as ctext's 8-lane rg_vload_f16 / rg_vround_f16 /
# rg_vstore_f16, so the same bits), and stored. 8 halves a vector ran the exp core at half
# the lanes float32's row had (a float16 exp 3x float32's time per value). The store converts
# in a register: gcc folded it into vcvtps2ph's memory form, 2x the register form's time per
# vector on this project's machine (a C loop of 16384 floats, CPU time).
WIDE_HALF = r"""
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
typedef short rg_zh16 __attribute__((vector_size(32)));
static inline rg_zf32 rg_zwiden_f16(rg_zh16 h) {
  return __builtin_ia32_vcvtph2ps512_mask(h, (rg_zf32){0}, (unsigned short)-1, 4); }
static inline rg_zh16 rg_znarrow_f16(rg_zf32 v) {
  return __builtin_ia32_vcvtps2ph512_mask(v, 0, (rg_zh16){0}, (unsigned short)-1); }
static inline rg_zf32 rg_zload_f16(const void *p) {
  rg_zh16 h; memcpy(&h, p, 32); return rg_zwiden_f16(h); }
static inline rg_zf32 rg_zround_f16(rg_zf32 v) { return rg_zwiden_f16(rg_znarrow_f16(v)); }
static inline void rg_zstore_f16(void *p, rg_zf32 v) {
  rg_zh16 h = rg_znarrow_f16(v); __asm__("" : "+v"(h)); memcpy(p, &h, 32); }
#else
static inline rg_zf32 rg_zload_f16(const void *p) {
  const _Float16 *h = (const _Float16 *)p; rg_zf32 v;
  for (int i = 0; i < 16; i++) v[i] = (float)h[i];
  return v; }
static inline rg_zf32 rg_zround_f16(rg_zf32 v) {
  for (int i = 0; i < 16; i++) v[i] = (float)(_Float16)v[i];
  return v; }
static inline void rg_zstore_f16(void *p, rg_zf32 v) {
  _Float16 *h = (_Float16 *)p;
  for (int i = 0; i < 16; i++) h[i] = (_Float16)v[i]; }
#endif"""
