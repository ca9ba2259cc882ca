"""The C text every printer of a kernel shares: types, names, scopes, the block library's calls.

In: dtypes, ops and kernel UOps. Out: C text (a type's name, a vector type, a block's
signature, the vector helpers, a loop's header printed from its `Loop`) and the containers the
printers fill (`Scope` and what opens it, `Stmt`, a loop's `Threads`) and return
(`RenderedKernel`). This is the bottom of backends/c: the workload printers (gemm.py,
flash.py), the block library (blocks.py) and the renderer (render.py) build on it, and it
imports none of them:

    ctext, blocks, gemm, flash, render, launch, build   (bottom to top: each module imports
                                                         only modules before it)

(launch.py and blocks.py are handed the builder by build.py, which loads them; they never
import it.)
"""

from __future__ import annotations

from typing import NamedTuple

from rulegrad.rules.pack_helpers import TILE_ROWS
from rulegrad.runtime.dtype import DType
from rulegrad.runtime.loops import range_size
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.record import FrozenRecord
from rulegrad.runtime.target import block_library as block_library  # (the printers')
from rulegrad.runtime.uop import UOp


class RenderError(ValueError):
    """The kernel AST is not in the form the renderer prints (a bug upstream, named here)."""


# ---------------------------------------------------------------------------- types
_CTYPE = {
    "bool": "_Bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "float16": "_Float16", "float32": "float", "float64": "double",
    "index": "int64_t",
}


def ctype(dt: DType) -> str:
    try:
        return _CTYPE[dt.name]
    except KeyError:
        raise RenderError(f"no C type for dtype {dt.name}") from None


BLOCK_ROWS = range(1, TILE_ROWS + 1)  # the block library's blocks: a tile's rows, or fewer


def block_signature(ct: str) -> str:
    """The parameters of a register block of the block library (blocks.py), whose kernels
    call them: steps, x's row pointers, x's offset table or 0, x's stride, the panel (packed,
    or y's columns in place) and the step between its rows of k, the output and its row
    stride."""
    return (f"(int64_t n, const {ct} *const *xr, const int64_t *xo, int64_t xs, "
            f"const {ct} *w, int64_t ldw, {ct} *out, int64_t ldo)")


def stream_signature(ct: str) -> str:
    """The parameters of a streamed block of the block library (blocks.py): steps, x's row
    pointers, offset table or 0 and stride (as a register block's), y's first element of the
    columns and its stride along k (read in place, contiguous along the columns), the columns,
    the output and its row stride."""
    return (f"(int64_t n, const {ct} *const *xr, const int64_t *xo, int64_t xs, "
            f"const {ct} *w, int64_t sk, int64_t cols, {ct} *out, int64_t ldo)")


def dot_signature(ct: str) -> str:
    """The parameters of a tiled dot of the block library (blocks.py's `_dot`): steps, x's row
    pointers (each read forward along k), y's first column (read forward along k) and the
    step between its columns, the columns, the output and its row stride."""
    return (f"(int64_t n, const {ct} *const *xr, const {ct} *w, int64_t sj, int64_t cols, "
            f"{ct} *out, int64_t ldo)")


# the float32 row reductions of the block library, one per op: x[0] op ... op x[n - 1] in the
# order of a "vector" reduce (`_vector_reduce`, which calls them for a row of memory)
REDUCE_OPS = {Ops.ADD: "add", Ops.MAX: "max", Ops.MIN: "min"}


def reduce_name(op: Ops) -> str:
    return f"rg_reduce_{REDUCE_OPS[op]}_f32"


def reduce_signature(ct: str) -> str:
    """The parameters of a row reduction of the block library: the row, its length."""
    return f"(const {ct} *x, int64_t n)"


def pack_signature(ct: str, src: str = "") -> str:
    """The parameters of the block library's copy of panels of y: steps, columns, y's first
    element of the panels (of C type `src`, else ct: a float16 y's halves as uint16_t, widened
    as they are copied), its strides along k and along the columns, the panels, a panel's
    width, how many panels."""
    return (f"(int64_t n, int64_t cols, const {src or ct} *src, int64_t sk, int64_t sj, "
            f"{ct} *dst, int64_t tj, int64_t panels)")


SUFFIX = {"int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "index": "i64",
           "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
           "float32": "f32", "float64": "f64", "float16": "f32", "bool": "u8"}


# A float16 read from memory, as the float it is exactly: a scalar `_Float16` anywhere in a loop
# (a load, a conversion, a compare) keeps gcc 12 from vectorizing that loop on a target without
# AVX512-FP16, so a max down the columns of a float16 matrix ran one element at a time (0.25x
# torch on 4096x4096); the half's bits read as a uint16_t and widened by the integer and float
# operations below vectorize with the rest of the loop. Subnormal halves are renormalized by a
# subtraction, never through a subnormal float (a process with denormals-are-zero set, as a
# library built with -ffast-math sets it, would read those as 0); a NaN comes out quiet, as
# F16C's conversion makes it.
HALF_WIDEN = "rg_f16_f32"
HALF_WIDEN_TEXT = r"""static inline float rg_f16_f32(uint16_t h) {
  const uint32_t bits = (uint32_t)(h & 0x7fffu) << 13, e = h & 0x7c00u;
  uint32_t u = bits + 0x38800000u, v;
  float tiny;
  memcpy(&tiny, &u, 4);
  tiny -= 0x1p-14f;  /* 2^-14 + m 2^-24, less 2^-14: m 2^-24 */
  memcpy(&v, &tiny, 4);
  u = e == 0x7c00u ? bits | 0x7f800000u | (bits > 0x0f800000u ? 0x00400000u : 0u)
      : e == 0 ? v : bits + 0x38000000u;  /* (the exponent rebiased, 15 -> 127) */
  u |= (uint32_t)(h & 0x8000u) << 16;
  memcpy(&tiny, &u, 4);
  return tiny;
}"""


# A float32 rounded to the nearest float16 (ties to even; past 65520 to inf), kept as a float:
# the graph's CAST to float16, whose value is mostly widened again at once (a softmax's
# x - max, then exp), and `(float)(_Float16)x` is that scalar `_Float16` again. Halves from
# 2^-14 up: the 13 bits below a half's last one dropped, rounding to even; below: a multiple
# of 2^-24, which adding and taking away 0.5 rounds to (the float add rounds to even).
HALF_ROUND = "rg_round_f16"
HALF_ROUND_TEXT = r"""static inline float rg_round_f16(float x) {
  uint32_t a, r, t;
  float tiny = __builtin_fabsf(x) + 0.5f;
  tiny -= 0.5f;
  memcpy(&a, &x, 4); memcpy(&t, &tiny, 4);
  const uint32_t sign = a & 0x80000000u;
  a &= 0x7fffffffu;
  r = (a + 0xfffu + ((a >> 13) & 1u)) & ~0x1fffu;
  r = sign | (a > 0x7f800000u ? (a | 0x00400000u) & ~0x1fffu  /* a NaN, quiet */
              : a >= 0x477ff000u ? 0x7f800000u : a < 0x38800000u ? t : r);
  memcpy(&x, &r, 4);
  return x;
}"""


# The float16 bits of a float that holds a half exactly (every float16 temporary: HALF_WIDEN's,
# HALF_ROUND's, a pick of them), for a store: `p[i] = x` from a float into a `_Float16` kept a
# loop that also read halves from being vectorized (a float16 softmax's exp row, 3x slower
# than the scalar F16C code it replaced); integer operations, a subnormal half's by its
# multiple of 2^-24.
HALF_BITS = "rg_f16_bits"
HALF_BITS_TEXT = r"""static inline uint16_t rg_f16_bits(float x) {
  uint32_t a;
  memcpy(&a, &x, 4);
  const uint32_t sign = (a >> 16) & 0x8000u;
  const uint32_t sub = (uint32_t)(int32_t)(__builtin_fabsf(x) * 0x1p24f);
  a &= 0x7fffffffu;
  return (uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu)  /* a NaN */
                            : a >= 0x47800000u ? 0x7c00u : a < 0x38800000u ? sub
                            : (a - 0x38000000u) >> 13));
}"""


# A half's bits in memory, read and written beside `_Float16` accesses to the same array (a
# local row stored by its bits and summed through `(float)`; a buffer a kernel writes and
# reads): through a plain `uint16_t *` those accesses are of another type, which C's aliasing
# rules let gcc reorder, and at -O3 it read a float16 softmax's local row before the bits were
# stored there (every output NaN; `rulegrad check` refuted unroll_reduce on it). `may_alias`
# is the character types' exemption, given to this one type (render.PRELUDE declares it).
HALF_LVALUE = "rg_h16"


def half_store(lvalue: str, value: str) -> str:
    """The statement storing `value`, a float holding a half, into the `_Float16` `lvalue`."""
    return f"*({HALF_LVALUE} *)&{lvalue} = {HALF_BITS}({value});"


def half_load(address: str) -> str:
    """The value of the float16 at `address` (a `_Float16` lvalue) as a float (HALF_WIDEN)."""
    return f"{HALF_WIDEN}(*(const {HALF_LVALUE} *)&{address})"


# MAX and MIN on 16 float32 lanes (vexp.WIDE's types: a float16 store's loop in 16 lanes,
# rules/wide_exps.py's `_wide_halves`), lane for lane rg_vmax_f32's and rg_vmin_f32's: either
# side NaN gives the quiet NaN, a tie of zeros +0.0 (MAX: the AND of both ways round's picks)
# and -0.0 (MIN: their OR), as numpy. Plain vector C, so any target compiles it.
WIDE_MINMAX = "rg_zmax_f32"
WIDE_MINMAX_TEXT = r"""#ifndef RG_ZMINMAX
#define RG_ZMINMAX 1
static inline rg_zf32 rg_zmax_f32(rg_zf32 a, rg_zf32 b) {
  const rg_zi32 x = (rg_zi32)rg_zsel_f32(a > b, a, b), y = (rg_zi32)rg_zsel_f32(b > a, b, a);
  return rg_zsel_f32((a != a) | (b != b), rg_zset_f32(__builtin_nanf("")), (rg_zf32)(x & y)); }
static inline rg_zf32 rg_zmin_f32(rg_zf32 a, rg_zf32 b) {
  const rg_zi32 x = (rg_zi32)rg_zsel_f32(a < b, a, b), y = (rg_zi32)rg_zsel_f32(b < a, b, a);
  return rg_zsel_f32((a != a) | (b != b), rg_zset_f32(__builtin_nanf("")), (rg_zf32)(x | y)); }
#endif"""


def array(ct: str, name: str, count: int, heap: bool = False) -> str:
    """`count` elements of C type ct: on the stack, 64-byte aligned, or on the heap (freed)."""
    if heap:
        return f"{ct} *{name} = ({ct} *)rg_alloc({count} * sizeof({ct}));"
    return f"{ct} {name}[{count}] __attribute__((aligned(64)));"


def vector_names(dt: DType, lanes: int) -> tuple[str, str]:
    """The prelude's C vector type of `lanes` values of dt and its fused multiply-add:
    rg_vf32 / rg_fma_f32 in 256 bits, rg_zf32 / rg_zfma_f32 in 512 (runtime/target.py)."""
    sfx = SUFFIX[dt.name]
    return ((f"rg_zf{sfx[1:]}", f"rg_zfma_{sfx}") if lanes * dt.itemsize == 64
            else (f"rg_v{sfx}", f"rg_fma_{sfx}"))


# ---------------------------------------------------------------------------- vectors
# A "vector" loop (rules/opt_helpers.py, `vectorizable`) is printed with explicit 8-lane
# float32 vectors: what gcc's `omp simd` made of a stride-2 window (lane-by-lane inserts and a
# 16-byte and a scalar tail on a 31-wide row) cost a 3x3 max-pool half its time. Each kernel
# that uses them carries these helpers once per library (the guard); they compute lane by lane
# exactly what the scalar ops do (MAX/MIN as rg_max_f32, IEEE +, -, *, /, no contraction).
# a > b, a < b, NaN, MAX and MIN on vector lanes: float32's 8 lanes, and the same text on
# float64's 4 (`_as_f64`)
_MAX_MIN_F32 = r"""
/* a > b ? a : b and a < b ? a : b lane by lane: x86's max and min instructions */
#if defined(__AVX__) && defined(__GNUC__)
#define rg_vgt_f32(a, b) __builtin_ia32_maxps256(a, b)
#define rg_vlt_f32(a, b) __builtin_ia32_minps256(a, b)
#define rg_vnan_f32(a, b) ((rg_vi32)__builtin_ia32_cmpps256(a, b, 3)) /* one unordered compare */
#else
#define rg_vnan_f32(a, b) (((a) != (a)) | ((b) != (b)))
static inline rg_vf32 rg_vgt_f32(rg_vf32 a, rg_vf32 b) {
  rg_vi32 m = a > b; return (rg_vf32)((m & (rg_vi32)a) | (~m & (rg_vi32)b)); }
static inline rg_vf32 rg_vlt_f32(rg_vf32 a, rg_vf32 b) {
  rg_vi32 m = a < b; return (rg_vf32)((m & (rg_vi32)a) | (~m & (rg_vi32)b)); }
#endif
/* the prelude's rg_max_f32 / rg_min_f32 on 8 lanes: both ways round, AND (OR) for a tie of
   zeros, numpy's quiet NaN where either side is NaN. With AVX-512 the unordered compare
   writes a mask register and the AND (OR) is masked over that NaN: the four operations of
   the all-ones OR this replaces (a NaN of every bit set, 0xffff stored as a float16; a
   blend after it took a float64 max of 1M 0.098 -> 0.123 ms) */
#if defined(__AVX512VL__) && defined(__AVX512DQ__) && defined(__GNUC__) && !defined(__clang__)
#define rg_vqnan_f32(a, b, OP, x, y) __builtin_ia32_##OP##ps256_mask(x, y, \
  rg_vset_f32(__builtin_nanf("")), (unsigned char)~__builtin_ia32_cmpps256_mask(a, b, 3, 0xff))
#else
#define rg_vqnan_f32(a, b, OP, x, y) ({ const rg_vi32 m_ = rg_vnan_f32(a, b); \
  (rg_vf32)((m_ & (rg_vi32)rg_vset_f32(__builtin_nanf(""))) \
            | (~m_ & ((rg_vi32)(x) RG_##OP (rg_vi32)(y)))); })
#endif
#define RG_and &
#define RG_or |
static inline rg_vf32 rg_vmax_f32(rg_vf32 a, rg_vf32 b) {
  return rg_vqnan_f32(a, b, and, rg_vgt_f32(a, b), rg_vgt_f32(b, a)); }
static inline rg_vf32 rg_vmin_f32(rg_vf32 a, rg_vf32 b) {
  return rg_vqnan_f32(a, b, or, rg_vlt_f32(a, b), rg_vlt_f32(b, a)); }
/* the same inside a vector reduce's loop (render.py's `_vector_steps`), where a NaN lane may
   be any NaN: an OR of the compare's all ones, one operation fewer each step. The
   accumulators are combined by rg_vmax_f32 (rg_vmin_f32) after the loop, which gives the
   quiet NaN (a float64 max of 1M took 0.098 ms with this, 0.113 with rg_vmax_f64) */
static inline rg_vf32 rg_vmaxl_f32(rg_vf32 a, rg_vf32 b) {
  rg_vi32 x = (rg_vi32)rg_vgt_f32(a, b), y = (rg_vi32)rg_vgt_f32(b, a);
  return (rg_vf32)((x & y) | rg_vnan_f32(a, b)); }
static inline rg_vf32 rg_vminl_f32(rg_vf32 a, rg_vf32 b) {
  rg_vi32 x = (rg_vi32)rg_vlt_f32(a, b), y = (rg_vi32)rg_vlt_f32(b, a);
  return (rg_vf32)((x | y) | rg_vnan_f32(a, b)); }
""".strip("\n")  # (its neighbours end and begin its lines)


def _as_f64(text: str) -> str:
    """float32's vector helpers on 4 float64 lanes: the same meanings, double's builtins."""
    return (text.replace("f32", "f64").replace("rg_vi32", "rg_vi64").replace("ps256", "pd256")
            .replace("8 lanes", "4 lanes"))


VECTOR_HELPERS = "".join((r"""
#ifndef RG_VECTORS
#define RG_VECTORS 1
typedef int32_t rg_vi32 __attribute__((vector_size(32)));
static inline rg_vf32 rg_vset_f32(float x) { return (rg_vf32){x, x, x, x, x, x, x, x}; }
static inline rg_vf32 rg_vload_f32(const float *p) { rg_vf32 v; memcpy(&v, p, 32); return v; }
static inline void rg_vstore_f32(float *p, rg_vf32 v) { memcpy(p, &v, 32); }
/* p[0], p[2], ..., p[14]: the loads end at p[14], so none reads past the window's last value */
static inline rg_vf32 rg_vload2_f32(const float *p) {
  rg_vf32 a = rg_vload_f32(p), b = rg_vload_f32(p + 7);
#ifdef __clang__
  return __builtin_shufflevector(a, b, 0, 2, 4, 6, 9, 11, 13, 15);
#else
  return __builtin_shuffle(a, b, (rg_vi32){0, 2, 4, 6, 9, 11, 13, 15});
#endif
}
/* p[0], p[s], ..., p[7 * s], lane by lane: a short row's reads, s apart (opt_helpers'
   GATHER_STRIDES) */
static inline rg_vf32 rg_vloads_f32(const float *p, int64_t s) {
  return (rg_vf32){p[0], p[s], p[2 * s], p[3 * s], p[4 * s], p[5 * s], p[6 * s], p[7 * s]}; }
/* and written so: a row-across kernel's outputs, one per lane, s apart (across_helpers) */
static inline void rg_vstores_f32(float *p, int64_t s, rg_vf32 v) {
  for (int u = 0; u < 8; u++) p[u * s] = v[u]; }
/* a libm function lane by lane: the scalar calls, so the scalar loop's bits (across_helpers'
   logs) */
#define rg_vmap_f32(f, x) ({ const rg_vf32 m_ = (x); \
  (rg_vf32){f(m_[0]), f(m_[1]), f(m_[2]), f(m_[3]), f(m_[4]), f(m_[5]), f(m_[6]), f(m_[7])}; })
""", _MAX_MIN_F32, r"""
/* the MAX (MIN) of a vector's 8 lanes: halves, then quarters, then pairs, as vectors (MAX and
   MIN are exact in any order). Lane by lane through the scalar rg_max_f32 (a float's bits
   moved to the integer unit and back, each step waiting on the last) this cost a max along
   rows of 33 three times what the rest of the row did */
#ifdef __clang__
#define rg_vswap_f32(a, i, j, k, l, m, n, o, p) \
  __builtin_shufflevector(a, a, i, j, k, l, m, n, o, p)
#else
#define rg_vswap_f32(a, i, j, k, l, m, n, o, p) \
  __builtin_shuffle(a, (rg_vi32){i, j, k, l, m, n, o, p})
#endif
#define RG_VHALVES(F) \
  a = F(a, rg_vswap_f32(a, 4, 5, 6, 7, 0, 1, 2, 3)); \
  a = F(a, rg_vswap_f32(a, 2, 3, 0, 1, 6, 7, 4, 5)); \
  return F(a, rg_vswap_f32(a, 1, 0, 3, 2, 5, 4, 7, 6))[0];
static inline float rg_vhmax_f32(rg_vf32 a) { RG_VHALVES(rg_vmax_f32) }
static inline float rg_vhmin_f32(rg_vf32 a) { RG_VHALVES(rg_vmin_f32) }
/* int32 lanes and bool lanes (masks: all ones for true) of the float vector's width, so a
   compare of ints, a bool select or a cast sits in the same vector loop as the float math
   around it (a causal mask's row max ran scalar without them) */
static inline rg_vi32 rg_vset_i32(int32_t x) { return (rg_vi32){x, x, x, x, x, x, x, x}; }
static inline rg_vi32 rg_vload_i32(const int32_t *p) { rg_vi32 v; memcpy(&v, p, 32); return v; }
typedef uint8_t rg_vu8 __attribute__((vector_size(8)));
static inline rg_vi32 rg_vload_b(const _Bool *p) {
  rg_vu8 v; memcpy(&v, p, 8); return __builtin_convertvector(v, rg_vi32) != 0; }
static inline rg_vf32 rg_vsel_f32(rg_vi32 m, rg_vf32 a, rg_vf32 b) {
  return (rg_vf32)((m & (rg_vi32)a) | (~m & (rg_vi32)b)); }
static inline rg_vi32 rg_vsel_i32(rg_vi32 m, rg_vi32 a, rg_vi32 b) { return (m & a) | (~m & b); }
static inline void rg_vstore_i32(int32_t *p, rg_vi32 v) { memcpy(p, &v, 32); }
/* an int32 max and min lane by lane (a compare's mask blends: C has no `?:` on vectors) */
static inline rg_vi32 rg_vmax_i32(rg_vi32 a, rg_vi32 b) { return rg_vsel_i32(a > b, a, b); }
static inline rg_vi32 rg_vmin_i32(rg_vi32 a, rg_vi32 b) { return rg_vsel_i32(a < b, a, b); }
/* 4 float64 lanes, for a float64 row's sum, max or min (render.py's `_vector_reduce`): the
   float32 helpers' meanings on doubles */
typedef int64_t rg_vi64 __attribute__((vector_size(32)));
static inline rg_vf64 rg_vset_f64(double x) { return (rg_vf64){x, x, x, x}; }
static inline rg_vf64 rg_vload_f64(const double *p) { rg_vf64 v; memcpy(&v, p, 32); return v; }
static inline void rg_vstore_f64(double *p, rg_vf64 v) { memcpy(p, &v, 32); }
""", _as_f64(_MAX_MIN_F32), r"""
#ifdef __clang__
#define rg_vswap_f64(a, i, j, k, l) __builtin_shufflevector(a, a, i, j, k, l)
#else
#define rg_vswap_f64(a, i, j, k, l) __builtin_shuffle(a, (rg_vi64){i, j, k, l})
#endif
#define RG_VHALVES_F64(F) \
  a = F(a, rg_vswap_f64(a, 2, 3, 0, 1)); return F(a, rg_vswap_f64(a, 1, 0, 3, 2))[0];
static inline double rg_vhmax_f64(rg_vf64 a) { RG_VHALVES_F64(rg_vmax_f64) }
static inline double rg_vhmin_f64(rg_vf64 a) { RG_VHALVES_F64(rg_vmin_f64) }
/* float16 lanes as float32 lanes (every half is a float exactly): 8 halves widened on the load,
   a float32 rounded to the nearest half (ties to even; overflow to inf, subnormals kept) where
   the graph casts, and on the store. F16C's conversions where the target has them (the
   builtins take the halves' bits; no _Float16 in these, which not every compiler has); else
   lane by lane through the compiler's _Float16 (macros: only a float16 kernel expands them) */
#if defined(__F16C__) && (defined(__GNUC__) || defined(__clang__))
typedef short rg_vh16 __attribute__((vector_size(16)));
static inline rg_vf32 rg_vload_f16(const void *p) {
  rg_vh16 h; memcpy(&h, p, 16); return __builtin_ia32_vcvtph2ps256(h); }
static inline rg_vf32 rg_vround_f16(rg_vf32 v) {
  return __builtin_ia32_vcvtph2ps256(__builtin_ia32_vcvtps2ph256(v, 0)); }
/* converted in a register (the empty asm): gcc folded the store into vcvtps2ph's memory form,
   2x the register form's time per vector on this project's machine (vexp.WIDE_HALF) */
static inline void rg_vstore_f16(void *p, rg_vf32 v) {
  rg_vh16 h = __builtin_ia32_vcvtps2ph256(v, 0); __asm__("" : "+x"(h)); memcpy(p, &h, 16); }
#else
#define rg_vload_f16(p) __extension__ ({ const _Float16 *p_ = (p); \
  (rg_vf32){p_[0], p_[1], p_[2], p_[3], p_[4], p_[5], p_[6], p_[7]}; })
#define rg_vround_f16(v) __extension__ ({ rg_vf32 v_ = (v); \
  for (int i_ = 0; i_ < 8; i_++) v_[i_] = (float)(_Float16)v_[i_]; v_; })
#define rg_vstore_f16(p, v) do { _Float16 *p_ = (p); rg_vf32 v_ = (v); \
  for (int i_ = 0; i_ < 8; i_++) p_[i_] = (_Float16)v_[i_]; } while (0)
#endif
#endif
"""))
# ---------------------------------------------------------------------------- structure
# a printed team capped at the runtime's count (Threads.team; the prelude's on demand)
TEAM = "rg_team"
TEAM_TEXT = ("int omp_get_max_threads(void); static inline int rg_team(int t) "
             "{ const int m = omp_get_max_threads(); return t < m ? t : m; }")


class Threads(NamedTuple):
    """A loop split across cores (`#pragma omp parallel for`), as the printer that opened it
    decided: its clauses (`simd` too; a reduce's OpenMP operator and accumulator; a dynamic
    schedule) and, once opened (`loop`), its variable running from 0 to `size` by `step` (None:
    by one). The renderer launches a kernel whose body is one such loop (render.py's
    `_launched`) from this, never from the header's text."""

    simd: bool = False
    reduction: tuple[str, str] | None = None
    dynamic: bool = False
    var: str = ""
    size: int = 0
    step: int | None = None
    # the threads the parallel action's model gave the loop (a launched loop's RenderedKernel.team;
    # else `num_threads(rg_team(N))`: at most the runtime's count, as launch.py's `rg_launch`, for
    # OpenMP's clause overrides it: a kernel optimized at RULEGRAD_THREADS=4 and run at 1, a jit
    # replay's, woke 4 threads); 0: the runtime's count
    team: int = 0

    def loop(self, var: str, size: int, step: int | None = None) -> tuple[Threads, Loop]:
        """The opened loop's fact and its structure: the pragma, then `for` from 0."""
        clauses = " simd" if self.simd else ""
        if self.reduction is not None:
            clauses += f" reduction({self.reduction[0]}:{self.reduction[1]})"
        if self.dynamic:
            clauses += " schedule(dynamic)"
        if self.team:
            clauses += f" num_threads({TEAM}({self.team}))"
        return (self._replace(var=var, size=size, step=step),
                Loop(var, size, step=step or 1, pragma=f"#pragma omp parallel for{clauses}"))


class Loop(NamedTuple):
    """A `for` loop as the printer that opened it built it: `var` from `start` while below
    `stop` (a known count, or C text: a launched loop's `hi_`), by `step`; `pragma` printed
    before it, then `omp simd` when `simd` (no clause: each iteration its own); `vector`: a
    loop of explicit vectors, `step` lanes an iteration (render.py's `_open_vector`). The
    renderer's decisions read these fields; `str()` prints the header once they are made."""

    var: str
    stop: int | str
    start: int | str = 0
    step: int = 1
    pragma: str = ""
    simd: bool = False
    vector: bool = False

    def __str__(self) -> str:
        v, lines = self.var, [self.pragma] if self.pragma else []
        if self.simd:
            lines.append("#pragma omp simd")
        inc = f"{v}++" if self.step == 1 else f"{v} += {self.step}"
        lines.append(f"for (int64_t {v} = {self.start}; {v} < {self.stop}; {inc})")
        return "\n".join(lines)


class Guard(NamedTuple):
    """An `if (cond)` scope: what it holds runs for some iterations of its loop only."""

    cond: str

    def __str__(self) -> str:
        return f"if ({self.cond})"


class Region(NamedTuple):
    """`#pragma omp parallel`: a block every thread runs (gemm.py's threads claiming work)."""

    pragma: str = "#pragma omp parallel"  # (a field: a tuple of none would be false, no head)

    def __str__(self) -> str:
        return f"{self.pragma}\n"


Head = Loop | Guard | Region | str  # what opens a Scope


class Scope:
    """A block of C statements: the function body, a loop, a guard. Items are lines or child
    scopes.

    `head` is what opens it: a `Loop`, a `Guard`, a `Region`, C text no decision reads (a
    counter threads claim by an atomic add, an `else`) or "" (a plain block: the body).
    `bound` is every loop variable visible here; `names` the nodes already computed here.
    (A class of slots, compared by identity, not a dataclass: a process's first kernel imports
    it, and a dataclass compiles its methods when its class is made, runtime/record.py.)"""

    __slots__ = ("head", "bound", "items", "names", "open_child", "fills", "threads",
                 "repeats", "itemsize")

    def __init__(self, head: Head, bound: frozenset[UOp],
                 items: list[str | Stmt | Scope] | None = None,
                 names: dict[UOp, str] | None = None, threads: Threads | None = None) -> None:
        self.head = head
        self.bound = bound
        self.items: list[str | Stmt | Scope] = [] if items is None else items
        self.names: dict[UOp, str] = {} if names is None else names
        self.open_child: Scope | None = None  # the child being filled; lines added go before it
        # each iteration writes an element of its own and reads none another wrote (a local
        # array's fill here; a flash tile's panel copy and stores, flash.py): `omp simd` holds
        # for it (`_simd_fills`)
        self.fills = False
        self.threads = threads  # a loop split across cores: how (render.py's `_launched`)
        # an iteration run twice computes and writes the same values: it reads nothing the
        # kernel writes, carries no accumulator over iterations (a running sum's), and writes
        # an element of its own (render.py's `_overlap_tails`)
        self.repeats = False
        self.itemsize = 0  # the widest value its stores write (0: not known): `omp simd`'s lanes

    @property
    def loop(self) -> Loop | None:
        """The `for` loop this scope is, if it is one."""
        return self.head if isinstance(self.head, Loop) else None

    def tree(self, itself: bool = True) -> list[Scope]:
        """This scope (unless not `itself`) and every scope inside it (iterative)."""
        out, stack = [], [self]
        while stack:
            scope = stack.pop()
            out.append(scope)
            stack.extend(x for x in scope.items if isinstance(x, Scope))
        return out if itself else out[1:]

    def guards_only(self) -> bool:
        """Whether every scope inside this one is a guard, `if` (no loop)."""
        return all(isinstance(s.head, Guard) for s in self.tree(False))

    def open(self, child: Scope) -> Scope:
        """Add `child` as the scope being filled (what is added here meanwhile goes before it)."""
        self.add(child)
        self.open_child = child
        return child

    def add(self, line: str | Stmt | Scope) -> None:
        if self.open_child is None:
            self.items.append(line)
            return
        # insert before the loop that is still being filled: it reads what we add here
        for pos in range(len(self.items) - 1, -1, -1):
            if self.items[pos] is self.open_child:
                self.items.insert(pos, line)
                return
        raise AssertionError("open child scope not among items")


class Stmt(NamedTuple):
    """`const T name = expr;`: the one kind of statement a long run can be split at (a named
    tuple: one is made per node of the kernel, a frozen dataclass cost three times as much);
    `form`, its expression: text, and at odd places the names it reads (render's `_segment`)."""

    name: str
    ctype: str
    form: tuple[str, ...]

    def __str__(self) -> str:
        return f"const {self.ctype} {self.name} = {''.join(self.form)};"


class RenderedKernel(FrozenRecord):
    """One kernel's C function: its C name, text, and how many buffer parameters it takes (a
    frozen record, runtime/record.py: equal, hashed and printed by its fields)."""

    __slots__ = ("cname", "source", "nparams", "param_dtypes", "var_names", "choices", "kind",
                 "launch", "combine", "shared", "gated", "calls", "uses", "openmp", "team")
    cname: str
    source: str
    nparams: int
    param_dtypes: tuple[DType, ...]
    var_names: tuple[str, ...]  # DEFINE_VARs, passed as `long long` after the buffers
    choices: tuple[str, ...]  # how the actions were printed (launched, blocks), for DEBUG
    # what was printed: "loops" (gcc vectorizes them), "vector" (loops of explicit 8-lane
    # vectors beside plain loops gcc vectorizes), "explicit" (explicit vectors and no plain
    # innermost loop: a pool), "packed" / "flash" (gemm.py's, flash.py's register tiles; flash
    # tiles that print a register block themselves are "packed", flags.py says why);
    # flags.py's LEVELS maps it to the optimization level the kernel is compiled at
    kind: str
    # > 0: a launched kernel (`_launched`), `void name(void *const *args, int64_t lo, int64_t
    # hi)` running iterations [lo, hi) of its one threaded loop of `launch` iterations; the
    # threads come from launch.py. 0: `void name(void *v0, ...)`, called once.
    launch: int
    # > 0: the launched kernel is a reduce (`_launched`): each iteration leaves its value in
    # slot i (this many bytes) of a scratch array, args[nparams], and `NAME_fin(args)` combines
    # the slots in order and stores the result. 0: no scratch, no finish.
    combine: int
    # (bytes, zeroed) > 0: the launched kernel shares a scratch area of this many bytes among
    # its threads (a packed product's panels, claim counters and ready marks: gemm.py), given
    # as args[nparams] with its first `zeroed` bytes zero; launch.py allocates it per call
    shared: tuple[int, int]
    # the kernel reads memory under a condition, `(g ? p1[i] : 0)` (a padded or masked read),
    # as its printer recorded when it printed one: flags.py compiles it with jump threading on
    gated: bool
    # the functions of the block library (blocks.py: register blocks, panel copies, row
    # reductions, vexp.py's rg_expf) the kernel calls, sorted, as its printers recorded when
    # they printed each call: build.py loads their libraries before the kernel's
    calls: tuple[str, ...]
    # the prelude's functions on demand the kernel names (render.py's `prelude`: an integer
    # division, a float-to-int cast, an OpenMP reduction, a block's declaration), sorted, as its
    # printers recorded when they printed each
    uses: tuple[str, ...]
    # the kernel starts OpenMP threads itself (a `Region` or an unlaunched `Threads` loop, as its
    # printers built them): flags.py compiles only such kernels with -fopenmp, which costs gcc
    # a third more work per threaded loop
    openmp: bool
    # a launched kernel's team: the threads the parallel action's model gave its loop
    # (rules/parallel_helpers.py's `Parallel.teams`), which launch.py's region runs it on (at
    # most `launch` of them); 0: the runtime's count (OpenMP's, RULEGRAD_THREADS)
    team: int

    def __init__(self, cname: str, source: str, nparams: int, param_dtypes: tuple[DType, ...],
                 var_names: tuple[str, ...] = (), choices: tuple[str, ...] = (),
                 kind: str = "loops", launch: int = 0, combine: int = 0,
                 shared: tuple[int, int] = (0, 0), gated: bool = False,
                 calls: tuple[str, ...] = (), uses: tuple[str, ...] = (),
                 openmp: bool = False, team: int = 0) -> None:
        self._init(cname, source, nparams, param_dtypes, var_names, choices, kind, launch,
                   combine, shared, gated, calls, uses, openmp, team)


def loop_count(r: UOp) -> int:
    """A RANGE's trip count, a constant (the C renderer prints no symbolic loop)."""
    size = range_size(r)
    if size is None:
        raise RenderError("symbolic range sizes are not supported by the C renderer")
    return size
