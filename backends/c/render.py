"""Kernel AST -> C: one C function per kernel, text only.

In: a lowered kernel AST (`backends/KERNEL_AST.md`, "after lowering": a SINK of STOREs over
RANGE / INDEX / LOAD / REDUCE / ALU nodes, with every REDUCE in loop form and every masked load
gated by `rules/lower.rules`). Out: the text of a C function `void NAME(void *p0, ...)` whose
i-th parameter is DEFINE_GLOBAL i.

The renderer is a table from op to C expression (`render_alu`) plus the structural cases, which
print what the rules decided:

- a STORE becomes nested `for` loops over its ranges (outermost first) around one assignment;
  STOREs over the same ranges share one loop nest;
- a REDUCE(update, *ranges) in loop form becomes its accumulator (the DEFINE_REG in `update`,
  declared with the identity the rule put in its arg) just before its loops and the assignment
  `acc = update` inside them; a REDUCE over a "scan" range (rules/scan_helpers.py: its
  STORE's own loop) declares it before that loop and assigns it once per iteration;
- a gated LOAD(INDEX, gate, alt) becomes `gate ? p[i] : alt`, which never touches memory where
  the gate is false (C's `?:` evaluates one arm only).

Every node is printed as one `const T tN = ...;` temporary, in dependency order, so expression
depth never reaches the C compiler: a 100,000-op chain is 100,000 short statements, and runs
of more than `SEGMENT` are functions of their own (`_segment`). A node is placed in the
outermost loop whose variables it depends on (loop-invariant code is hoisted, e.g. the max of
a softmax row is computed once per row, not once per element).

Loop order is the AST's: a REDUCE over output ranges its STORE marks ACCUMULATED (the
interchange action, rules/interchange_helpers.py: "upcast" columns, an "unroll" register tile,
a block of "vector" columns) keeps an array of accumulators, one per point of them, and runs
their loops inside its own (`_open_columns`). The loops that rules/opt.rules'
parallel action names (rules/parallel_helpers.py) are split across cores (OpenMP); reduce
loops carry `omp simd reduction` so gcc vectorizes them without -ffast-math. A loop the
optimizer made a `vector` (rules/opt_helpers.py) is printed as explicit 8-lane float32 vectors
(`VECTOR_HELPERS`), as are the accumulators of a reduce over "vector" columns.
A float sum of products (matmul, batched or transposed products, convolutions) is printed by
`backends/c/gemm.py` instead: packed operands and a register-blocked inner loop.

Semantics are `runtime/semantics.py`'s table, tested cell by cell (tests/test_semantics.py): C
truncation for IDIV/MOD as the IR defines them, with x/0 = x%0 = 0 and MIN/-1 wrapping;
NaN-propagating MAX/MIN with -0.0 below +0.0; signed overflow wraps (-fwrapv); float16 is
stored as `_Float16` and every float16 operation is done in float and rounded once (what
numpy's half loops do; rules/lower.rules makes the float32 computation explicit before
rendering), and a float16 temporary is a C float (read from a half's bits, rounded by
ctext.HALF_ROUND) so that gcc vectorizes the loop around it, or, in a loop gcc is not told to
vectorize, converted by C's casts (`_scalar_halves`); float -> int casts are defined
for every value (NaN, inf, out of range).

The only text that reaches the source is generated: identifiers are `p<i>`, `t<i>`, `r<i>`,
`acc<i>` and the kernel name after `c_ident` strips it to `[A-Za-z0-9_]`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from typing import NamedTuple

from rulegrad.rules.flash_helpers import Flash
from rulegrad.rules.interchange_helpers import columns
from rulegrad.rules.opt_helpers import VECTOR_LANES, half_row, one_row, reduce_vectors
from rulegrad.rules.pack_helpers import Pack
from rulegrad.rules.parallel_helpers import Parallel, store_groups
from rulegrad.rules.wide_exps import fills_sum, lane_fill, nonpositive, paired, wide_fill, wide_half
from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.loops import free_ranges, stride
from rulegrad.runtime.ops import LIBM_CALLS, GroupOp, Ops
from rulegrad.runtime.target import REDUCE_VECTORS, vector_bytes, vector_lanes
from rulegrad.runtime.uop import UOp, toposort

from . import vexp, vlog
from .ctext import (
    BLOCK_ROWS,
    HALF_BITS,
    HALF_BITS_TEXT,
    HALF_LVALUE,
    HALF_ROUND,
    HALF_ROUND_TEXT,
    HALF_WIDEN,
    HALF_WIDEN_TEXT,
    REDUCE_OPS,
    SUFFIX,
    TEAM,
    TEAM_TEXT,
    VECTOR_HELPERS,
    WIDE_MINMAX,
    WIDE_MINMAX_TEXT,
    Guard,
    Head,
    Loop,
    Region,
    RenderedKernel,
    RenderError,
    Scope,
    Stmt,
    Threads,
    array,
    block_library,
    block_signature,
    ctype,
    dot_signature,
    half_load,
    half_store,
    loop_count,
    pack_signature,
    reduce_name,
    reduce_signature,
    stream_signature,
)


def c_ident(text: str, limit: int = 48) -> str:
    """A C identifier made from arbitrary text: only [A-Za-z0-9_] survive (no user text in C)."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", str(text))[:limit]
    return ident or "k"


# ---------------------------------------------------------------------------- constants
def render_const(value: object, dt: DType) -> str:
    """A C literal equal to `value` in dtype `dt`, exactly (hex floats, NaN, inf, INT64_MIN)."""
    if dt.is_bool:
        return "1" if value else "0"
    if dt.is_float:
        v = float(value)  # type: ignore[arg-type]
        if math.isnan(v):
            body = "__builtin_nanf(\"\")" if dt is dtypes.float32 else "__builtin_nan(\"\")"
        elif math.isinf(v):
            inf = "__builtin_inff()" if dt is dtypes.float32 else "__builtin_inf()"
            body = inf if v > 0 else f"(-{inf})"
        else:
            # a hex literal is the double exactly; the f suffix rounds it once, as numpy does
            body = v.hex() + ("f" if dt is dtypes.float32 else "")
            body = f"({body})" if math.copysign(1.0, v) < 0 else body  # (-0.0 too)
        return f"((_Float16){body})" if dt is dtypes.float16 else body
    v = int(value)  # type: ignore[call-overload]
    lo, hi = dt.min, dt.max
    if not lo <= v <= hi:
        raise RenderError(f"constant {v} out of range for {dt.name}")
    if dt.is_unsigned:
        return f"((uint{dt.itemsize * 8}_t){v}ULL)"
    if v == -(2**63):
        return "((int64_t)(-9223372036854775807LL - 1))"
    return f"(({ctype(dt)}){v}LL)" if dt.itemsize == 8 or dt is dtypes.index else f"({v})"


# ---------------------------------------------------------------------------- the C prelude
# Helpers the op table calls. Every one is `static inline`, so gcc inlines and vectorizes them.
# No #include: the five system headers the kernels once took (stdint, stdio, stdlib, string,
# math) are 3,400 lines the compiler parses on every build, about 20 ms of a 40 ms build of a
# small kernel. The prelude declares the few types and functions the kernels use itself; the
# compiler's predefined macros (__INT8_TYPE__, ...) give the types their ABI's definitions.
PRELUDE = r"""
typedef __INT8_TYPE__ int8_t; typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t; typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t; typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t; typedef __UINT64_TYPE__ uint64_t;
typedef __SIZE_TYPE__ size_t; typedef __UINTPTR_TYPE__ uintptr_t;
typedef uint16_t rg_h16 __attribute__((may_alias));  /* ctext.HALF_LVALUE */
#define memcpy __builtin_memcpy
void *aligned_alloc(size_t, size_t); void free(void *); void abort(void);
long write(int, const void *, size_t);
float expf(float); float logf(float); float exp2f(float); float log2f(float); float sinf(float);
float sqrtf(float); float truncf(float); float powf(float, float); float fmodf(float, float);
double exp(double); double log(double); double exp2(double); double log2(double);
double sin(double); double sqrt(double); double trunc(double); double pow(double, double);
double fmod(double, double);
/* cos under another name: gcc merges a sin and a cos of one value into a call of sincos, which
   no loop vectorizes (a tan, sin / cos, ran 8x slower); the asm label keeps libm's symbol, and
   libmvec's (its vector variants are named from it) */
#define RG_COS_F32 float rg_cosf(float) __asm__("cosf")
#define RG_COS_F64 double rg_cos(double) __asm__("cos")
RG_COS_F32; RG_COS_F64;
/* packed products (backends/c/gemm.py): one vector register of floats or doubles, and a fused
   multiply-add on it where the CPU has one (BLAS does the same) */
typedef float rg_vf32 __attribute__((vector_size(32)));
typedef double rg_vf64 __attribute__((vector_size(32)));
/* (the compiler's builtins, not immintrin.h: that header alone costs 0.6 s per build) */
#if defined(__FMA__) && defined(__clang__) && defined(__has_builtin)
#if __has_builtin(__builtin_elementwise_fma)
#define RG_FMA_BUILTIN 1
#define rg_fma_f32(a, b, c) __builtin_elementwise_fma(a, b, c)
#define rg_fma_f64(a, b, c) __builtin_elementwise_fma(a, b, c)
#endif
#elif defined(__FMA__) && defined(__GNUC__) && !defined(__clang__)
#define RG_FMA_BUILTIN 1
#define rg_fma_f32(a, b, c) __builtin_ia32_vfmaddps256(a, b, c)
#define rg_fma_f64(a, b, c) __builtin_ia32_vfmaddpd256(a, b, c)
#endif
#ifndef RG_FMA_BUILTIN
#define rg_fma_f32(a, b, c) ((a) * (b) + (c))
#define rg_fma_f64(a, b, c) ((a) * (b) + (c))
#endif
/* the same in 512-bit registers, for a target with AVX-512 (runtime/target.py) */
typedef float rg_zf32 __attribute__((vector_size(64)));
typedef double rg_zf64 __attribute__((vector_size(64)));
#if defined(RG_FMA_BUILTIN) && defined(__clang__)
#define rg_zfma_f32(a, b, c) __builtin_elementwise_fma(a, b, c)
#define rg_zfma_f64(a, b, c) __builtin_elementwise_fma(a, b, c)
#elif defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define rg_zfma_f32(a, b, c) __builtin_ia32_vfmaddps512_mask(a, b, c, (unsigned short)-1, 4)
#define rg_zfma_f64(a, b, c) __builtin_ia32_vfmaddpd512_mask(a, b, c, (unsigned char)-1, 4)
#else
#define rg_zfma_f32(a, b, c) ((a) * (b) + (c))
#define rg_zfma_f64(a, b, c) ((a) * (b) + (c))
#endif
/* a kernel's scratch memory (large packed panels): 64-byte aligned; a kernel has no error
   channel, so running out of memory ends the process with a message, never writes to NULL */
static inline void *rg_alloc(size_t n) {
  void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
  static const char msg[] = "rulegrad: out of memory for a kernel's scratch buffer\n";
  if (!p) { write(2, msg, sizeof msg - 1); abort(); }
  return p;
}
#ifdef RG_MVEC
/* glibc's vector math (libmvec): declared `simd`, gcc calls e.g. _ZGVbN4v_expf inside
   vectorized loops (math.h only declares them so under -ffast-math; we keep IEEE semantics
   for everything else). pow too: gelu's x ** 3, a scalar call per element, kept a product's
   epilogue (and every loop with it) from vectorizing */
#define RG_SIMD __attribute__((simd("notinbranch")))
RG_SIMD float expf(float); RG_SIMD float logf(float); RG_SIMD float exp2f(float);
RG_SIMD float log2f(float); RG_SIMD float sinf(float); RG_SIMD float powf(float, float);
RG_SIMD double exp(double); RG_SIMD double log(double); RG_SIMD double exp2(double);
RG_SIMD double log2(double); RG_SIMD double sin(double); RG_SIMD double pow(double, double);
RG_SIMD RG_COS_F32; RG_SIMD RG_COS_F64;
#endif
/* MAX/MIN (runtime/semantics.py): NaN if either side is NaN (numpy), and -0.0 below +0.0 in
   either operand order (IEEE 754-2019 maximum/minimum), so MAX and MIN are commutative.
   Four branch-free vector operations: `a > b ? a : b` is x86's max instruction, which returns
   its second operand on a tie or a NaN; taken both ways round, the two agree except on a tie
   of zeros (their bitwise AND is the one with the sign cleared: +0.0 wins; OR for MIN) and
   on a NaN; an unordered pair gives the quiet NaN numpy's max gives (0x7fc00000, for a
   double 0x7ff8...: __builtin_nan's bits; or'ing in the compare's all ones made a NaN of
   every bit set, which a float16 store kept as 0xffff), picked by one conditional move.
   Written as the select itself: written as masks, `(x & y & ~m) | (m & q)`, gcc 12 kept
   both compares and the masks in a vectorized column max (192 instructions in its loop at
   -O3 where the all-ones OR had 100; the select: 100) and three more in a scalar chain.
   A max down a column is one of these per element and a 3x3 max-pool a chain of eight, so
   their cost (not memory) bounded those kernels with the 12-operation blend this replaces
   (gcc 12 keeps a chain's later steps as compare-and-blend on the integer bits: seven). */
#define RG_FMAX(T, U, S) \
  static inline T rg_max_##S(T a, T b) { union { T f; U u; } x, y, q; \
    x.f = __builtin_isgreater(a, b) ? a : b; y.f = __builtin_isgreater(b, a) ? b : a; \
    q.f = __builtin_nan(""); x.u = __builtin_isunordered(a, b) ? q.u : x.u & y.u; \
    return x.f; } \
  static inline T rg_min_##S(T a, T b) { union { T f; U u; } x, y, q; \
    x.f = __builtin_isless(a, b) ? a : b; y.f = __builtin_isless(b, a) ? b : a; \
    q.f = __builtin_nan(""); x.u = __builtin_isunordered(a, b) ? q.u : x.u | y.u; \
    return x.f; }
RG_FMAX(float, uint32_t, f32)
RG_FMAX(double, uint64_t, f64)
/* float -> int CAST (runtime/semantics.py): NaN gives 0; a value inside int64's range goes
   through int64 and wraps to the width; beyond it, it saturates. Every conversion C does here
   is in range, so the scalar and the vectorized loops give the same bits. */
#define RG_F2I(T, S, LO, HI, FT, FS) static inline T rg_f2i_##S##_##FS(FT x) { \
  return x != x ? (T)0 : x >= (FT)0x1p63 ? (T)(HI) : x < (FT)-0x1p63 ? (T)(LO) : (T)(int64_t)x; }
#define RG_F2U64(FT, FS) static inline uint64_t rg_f2i_u64_##FS(FT x) { \
  return x != x ? 0 : x >= (FT)0x1p64 ? __UINT64_MAX__ : x >= (FT)0x1p63 ? (uint64_t)x \
    : x < (FT)-0x1p63 ? 0 : (uint64_t)(int64_t)x; }
#define RG_SF2I(T, S, MAX, FT, FS) RG_F2I(T, S, -MAX - 1, MAX, FT, FS)
#define RG_F2I_ALL(FT, FS) RG_SF2I(int8_t, i8, __INT8_MAX__, FT, FS) \
  RG_SF2I(int16_t, i16, __INT16_MAX__, FT, FS) RG_SF2I(int32_t, i32, __INT32_MAX__, FT, FS) \
  RG_SF2I(int64_t, i64, __INT64_MAX__, FT, FS) RG_F2I(uint8_t, u8, 0, __UINT8_MAX__, FT, FS) \
  RG_F2I(uint16_t, u16, 0, __UINT16_MAX__, FT, FS) \
  RG_F2I(uint32_t, u32, 0, __UINT32_MAX__, FT, FS) RG_F2U64(FT, FS)
/* IDIV/MOD truncate (C); x/0 and x%0 give 0 as numpy does; MIN/-1 wraps (no SIGFPE) */
#define RG_IDIV(T, S) \
  static inline T rg_idiv_##S(T a, T b) { return b == 0 ? 0 : (b == -1 ? (T)(0 - a) : a / b); } \
  static inline T rg_mod_##S(T a, T b) { return (b == 0 || b == -1) ? 0 : a % b; }
#define RG_UDIV(T, S) \
  static inline T rg_idiv_##S(T a, T b) { return b == 0 ? 0 : a / b; } \
  static inline T rg_mod_##S(T a, T b) { return b == 0 ? 0 : a % b; }
/* the shift by >= the width is undefined in C; numpy gives 0 (or -1 for negative >>) */
#define RG_SHIFT(T, U, S, W) \
  static inline T rg_shl_##S(T a, T b) { return (b < 0 || b >= W) ? 0 : (T)((U)a << b); } \
  static inline T rg_shr_##S(T a, T b) { return (b < 0 || b >= W) ? (a < 0 ? (T)-1 : 0) : a >> b; }
/* integer power by squaring; negative exponents give 0 except for bases 1 and -1 (numpy
   raises for them; we return the value the formula 1/x^n truncates to; an unsigned b is never
   negative) */
#define RG_POW(T, S) static inline T rg_pow_##S(T a, T b) { \
  if (b < 0) return a == 1 ? 1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : 1) : 0); \
  T r = 1; while (b) { if (b & 1) r = (T)(r * a); a = (T)(a * a); b >>= 1; } return r; }
/* float POW is C's pow (runtime/semantics.py) on every path: gcc's vectorizer turns pow(x, 0.5)
   into a sqrt instruction even under IEEE flags, which gives -0.0 and NaN at -0.0 and -inf where
   pow gives +0.0 and +inf, so a vector loop and its scalar tail disagreed. The select puts
   pow's values back (a constant exponent other than 0.5 folds it away). */
#define RG_FPOW(T, S, F) static inline T rg_fpow_##S(T a, T b) { T r = F(a, b); \
  return (b == (T)0.5 && (a == 0 || a == -(T)__builtin_inf())) \
    ? (a == 0 ? (T)0 : (T)__builtin_inf()) : r; }
#define RG_INTS(T, U, S, W) RG_IDIV(T, S) RG_SHIFT(T, U, S, W) RG_POW(T, S)
#define RG_UINTS(T, S, W) RG_UDIV(T, S) RG_SHIFT(T, T, S, W) RG_POW(T, S)
"""

# The prelude's functions on demand: the integer kernels' helpers, OpenMP's NaN-propagating
# reductions, the block library's declarations. Each text is in a library only when one of its
# kernels uses a name it defines (RenderedKernel.uses, recorded by the printer that printed the
# name: `alu_helper` for the op table's). Parsed on every build, the 56 integer helpers cost a
# float kernel's build ~7M of the ~9M compiler instructions the whole prelude takes
# (callgrind, gcc 12), for nothing.
_INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
_ON_DEMAND: tuple[tuple[frozenset[str], str], ...] = tuple(
    (frozenset(names), text) for names, text in (
        ({f"rg_f2i_{i}_f32" for i in _INTS}, "RG_F2I_ALL(float, f32)"),
        ({"rg_fpow_f32"}, "RG_FPOW(float, f32, powf)"),
        ({"rg_fpow_f64"}, "RG_FPOW(double, f64, pow)"),
        ({f"rg_f2i_{i}_f64" for i in _INTS}, "RG_F2I_ALL(double, f64)"),
        *(({f"rg_{f}_{i}" for f in ("idiv", "mod", "shl", "shr", "pow")},
           f"{macro}({t}, {'u' + t + ', ' if i[0] == 'i' else ''}{i}, {i[1:]})")
          for i, t, macro in ((i, f"{'u' if i[0] == 'u' else ''}int{i[1:]}_t",
                               "RG_INTS" if i[0] == "i" else "RG_UINTS") for i in _INTS)),
        *(({f"rg{m}_{s}"}, f"#pragma omp declare reduction(rg{m}_{s} : {t} : "
           f"omp_out = rg_{m}_{s}(omp_out, omp_in)) initializer(omp_priv = omp_orig)")
          for m in ("max", "min") for t, s in (("float", "f32"), ("double", "f64"))),
        # a sum from -0.0 (a pick, runtime/ops.py's reduce_start): each lane from -0.0 too
        # (`reduction(+:)` starts them at +0.0, and +0.0 + -0.0 loses a picked -0.0's sign)
        *(({f"rgaddz_{s}"}, f"#pragma omp declare reduction(rgaddz_{s} : {t} : "
           f"omp_out += omp_in) initializer(omp_priv = -0.0{'f' if s == 'f32' else ''})")
          for t, s in (("float", "f32"), ("double", "f64"))),
        *(({f"rg_block_{w}{s}_{rows}{x}" for w in "vz" for rows in BLOCK_ROWS
            for x in ("", "_stream", "_last")} | {f"rg_dot_{w}{s}_{rows}" for w in "vz"
                                                   for rows in BLOCK_ROWS},
           " ".join(f"void rg_block_{w}{s}_{rows}{block_signature(t)}; "
                    f"void rg_block_{w}{s}_{rows}_stream{stream_signature(t)}; "
                    f"void rg_block_{w}{s}_{rows}_last{stream_signature(t)}; "
                    f"void rg_dot_{w}{s}_{rows}{dot_signature(t)};"
                    for w in "vz" for rows in BLOCK_ROWS))
          for t, s in (("float", "f32"), ("double", "f64"))),
        # the copy of panels a row at a time (blocks.py's `_pack`)
        *(({f"rg_pack_{w}{s}" for w in "vz"},
           " ".join(f"void rg_pack_{w}{s}{pack_signature(t)};" for w in "vz"))
          for t, s in (("float", "f32"), ("double", "f64"))),
        # and of a float16 y's panels, widened (blocks.py's `_half_pack`)
        ({f"rg_pack_{w}f32_h16" for w in "vz"},
         " ".join(f"void rg_pack_{w}f32_h16{pack_signature('float', 'uint16_t')};"
                  for w in "vz")),
        ({TEAM}, TEAM_TEXT),  # a printed threaded loop's team, capped (ctext.Threads.team)
        ({HALF_WIDEN}, HALF_WIDEN_TEXT),  # a float16 read from memory (a kernel's LOAD)
        ({HALF_ROUND}, HALF_ROUND_TEXT),  # a float32 CAST to float16, kept as a float
        ({HALF_BITS}, HALF_BITS_TEXT),  # such a float stored as a float16
        ({vexp.NAME}, vexp.DECLARATION),  # float32 exp: the block library's (vexp.py)
        ({"rg_vexp_f32"}, vexp.VECTOR),  # and its core, inline, for explicit vectors
        ({"rg_zexp_f32"}, vexp.WIDE),  # and in 16 lanes, for a reduce's pairs of them
        ({"rg_zload_f16"}, vexp.WIDE_HALF),  # and a float16 row's 16 lanes of halves
        ({WIDE_MINMAX}, WIDE_MINMAX_TEXT),  # 16 lanes' MAX and MIN (after vexp.WIDE's types)
        ({vlog.NAME}, vlog.DECLARATION),  # float32 log: the same library's (vlog.py)
        ({"rg_vlog_f32"}, vlog.VECTOR),  # and its core inline, in 8 lanes
        ({reduce_name(o) for o in REDUCE_OPS},
         " ".join(f"float {reduce_name(o)}{reduce_signature('float')};" for o in REDUCE_OPS)),
    ))


def prelude(uses: Iterable[str]) -> str:
    """The prelude of kernels that use the names `uses` (their RenderedKernel.uses): PRELUDE,
    then each function on demand that defines one of them."""
    used = set(uses)
    return PRELUDE + "".join(text + "\n" for names, text in _ON_DEMAND
                             if not used.isdisjoint(names))


def _fcast(dt: DType, x: str) -> str:
    """An operand as the type libm computes it in (float16 is widened to float)."""
    return f"(float){x}" if dt is dtypes.float16 else x


def alu_helper(node: UOp) -> str | None:
    """The prelude's function on demand (`_ON_DEMAND`) that render_alu's expression of `node`
    calls, if any: a float-to-int CAST (defined for every value), a float POW, an integer
    IDIV, MOD, SHL, SHR or POW (defined for every operand)."""
    op, dt = node.op, node.dtype
    sdt = node.src[0].dtype if node.src else dt
    if op is Ops.CAST:
        if sdt is dtypes.float32 and dt is dtypes.float16:
            return HALF_ROUND
        return f"rg_f2i_{SUFFIX[dt.name]}_{SUFFIX[sdt.name]}" if sdt.is_float and dt.is_int \
            else None
    if sdt.is_float:  # (a float16's in float)
        return f"rg_fpow_{'f64' if sdt is dtypes.float64 else 'f32'}" if op is Ops.POW else None
    if op in (Ops.IDIV, Ops.MOD, Ops.SHL, Ops.SHR, Ops.POW) and not sdt.is_bool:
        return f"rg_{op.name.lower()}_{SUFFIX[sdt.name]}"
    return None


def _plain_bound(x: UOp, name: str, i: int) -> bool:
    """Whether a MAX or MIN against x, its operand i printed as `name`, is one compare-select
    (a clamp's bound: gelu's +-25, an exp's floor; four vector operations and a blend each in
    rg_max_f32): x a constant, not NaN (the other side's NaN is kept: `c > x` is false for it,
    as numpy's maximum returns its NaN operand) and not zero (no tie of +0.0 and -0.0 to order,
    runtime/semantics.py), and `name` x itself: its literal, or slot i, which the printer fills
    with it. A reduce's update is printed over other names (its accumulator, a thread's partial
    result), which may be NaN or a zero."""
    return x.op is Ops.CONST and isinstance(x.arg, float) and x.arg == x.arg and x.arg != 0 \
        and name in (_SLOTS[i], render_const(x.arg, x.dtype))


def render_alu(node: UOp, a: list[str]) -> str:
    """The C expression of one ALU/CAST/BITCAST node over its operand names `a`: a prelude
    helper's call, a cast, or the template of `node`'s op in the table of its operands' type."""
    op, dt = node.op, node.dtype
    sdt = node.src[0].dtype if node.src else dt
    helper = alu_helper(node)
    if helper is not None:
        return f"{helper}({', '.join(_fcast(sdt, x) for x in a)})"
    if op is Ops.CAST:
        return f"({ctype(dt)})({a[0]})"
    if op is Ops.BITCAST:
        if dt.itemsize != sdt.itemsize:
            raise RenderError(f"BITCAST {sdt.name} -> {dt.name}: sizes differ")
        return (f"({{ {ctype(dt)} o_; {ctype(sdt)} i_ = {a[0]}; "
                f"memcpy(&o_, &i_, sizeof o_); o_; }})")
    if op in (Ops.MAX, Ops.MIN) and sdt in (dtypes.float32, dtypes.float64):
        at = next((i for i, x in enumerate(node.src) if _plain_bound(x, a[i], i)), None)
        if at is not None:  # x against a constant c, neither NaN nor zero: one compare-select
            c, x = a[at], a[1 - at]
            return f"(__builtin_is{'greater' if op is Ops.MAX else 'less'}({c}, {x}) ? {c} : {x})"
    if sdt.is_float and op in _FLOAT:  # libm's in the operands' precision (`_fcast`)
        return _FLOAT[op].format(*(_fcast(sdt, x) for x in a), s=SUFFIX[sdt.name],
                                 f="" if sdt is dtypes.float64 else "f")
    template = (_BOOL if sdt.is_bool else _INT).get(op) or _SCALAR.get(op)
    if template is None:
        raise RenderError(f"op {op.name} is not defined on {sdt.name}")
    return template.format(*a)


# (on vector lanes too, ctext.VECTOR_HELPERS: a compare gives a lane mask, all ones where it
# holds, which AND, OR and XOR combine as bools do, and which a select (WHERE) blends by)
_INFIX = {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.FDIV: "/", Ops.CMPLT: "<",
          Ops.CMPNE: "!=", Ops.CMPEQ: "==", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^"}
# each op's C over its operands {0}, {1}, {2}: on every type (`_SCALAR`), on floats (`_FLOAT`:
# {f} libm's suffix, {s} the prelude's; vector loops call libmvec's (RG_MVEC), except float32's
# expf and logf: the block library's, vexp.py and vlog.py), on integers and on bools (MAX is
# OR, MIN is AND; -x on a bool is x: numpy computes on 0/1, then != 0)
_SCALAR = {**{op: f"({{0}} {c} {{1}})" for op, c in _INFIX.items()},
           Ops.WHERE: "({0} ? {1} : {2})", Ops.NEG: "(-{0})"}
_FLOAT = {**{op: f"{name}{{f}}({{0}})" for op, name in (
    (Ops.EXP, "exp"), (Ops.LOG, "log"), (Ops.EXP2, "exp2"), (Ops.LOG2, "log2"), (Ops.SIN, "sin"),
    (Ops.COS, "rg_cos"), (Ops.SQRT, "sqrt"), (Ops.TRUNC, "trunc"))},
    Ops.MOD: "fmod{f}({0}, {1})", Ops.IDIV: "trunc{f}({0} / {1})",  # (IDIV: the oracle's)
    Ops.RECIPROCAL: "(1.0{f} / {0})", Ops.MAX: "rg_max_{s}({0}, {1})",
    Ops.MIN: "rg_min_{s}({0}, {1})"}
_INT = {Ops.MAX: "({0} > {1} ? {0} : {1})", Ops.MIN: "({0} < {1} ? {0} : {1})", Ops.TRUNC: "{0}"}
_BOOL = {Ops.MAX: "({0} | {1})", Ops.MIN: "({0} & {1})", Ops.NEG: "{0}"}


_VECTOR_LOAD = {1: "rg_vload_f32", 2: "rg_vload2_f32"}  # float32 lanes, by stride
_LANE_LOAD = {dtypes.bool: "rg_vload_b", dtypes.float16: "rg_vload_f16",
              dtypes.float64: "rg_vload_f64"}  # (and int32's rg_vload_i32)
VECTOR_EXP = "rg_vexp_f32"
WIDE_EXP = "rg_zexp_f32"  # (vexp.WIDE: 16 lanes, with its loads, selects and stores)
WIDE_HALF = "rg_zload_f16"  # (vexp.WIDE_HALF: 16 halves' loads, roundings and stores)
VECTOR_LOG = "rg_vlog_f32"  # (vlog.VECTOR: the log core inline, 8 lanes)


_FLOAT_LANES = (dtypes.float32, dtypes.float16)  # (a half in a float lane: exactly its value)


def vector_type(dt: DType) -> str:
    """The C type of a value's 8 lanes: floats (a float16's too), or int32 lanes (a bool's a
    lane mask); a float64 row reduce's 4 lanes of doubles."""
    if dt is dtypes.float64:
        return "rg_vf64"
    return "rg_vf32" if dt in _FLOAT_LANES else "rg_vi32"


def broadcast(dt: DType, name: str, wide: bool = False) -> str:
    """A scalar of dtype `dt` in every lane (a bool as a lane mask: 0 or all ones); `wide`: in
    16 float32 or mask lanes (vexp.WIDE's)."""
    if wide:
        return f"rg_zset_i32(-(int32_t)({name}))" if dt is dtypes.bool else f"rg_zset_f32({name})"
    if dt in _FLOAT_LANES or dt is dtypes.float64:
        return f"rg_vset_f{64 if dt is dtypes.float64 else 32}({name})"
    return f"rg_vset_i32(-(int32_t)({name}))" if dt is dtypes.bool else f"rg_vset_i32({name})"


def _vector_cast(src: DType, dst: DType, a: str) -> str:
    """A CAST between float32, int32 and bool lanes, lane by lane as C's scalar casts; a
    float16's float lanes are already float32, and a float32 is rounded to float16 in them."""
    if {src, dst} == {dtypes.float16, dtypes.float32}:
        return f"rg_vround_f16({a})" if dst is dtypes.float16 else a
    if dst is dtypes.bool:  # nonzero (a NaN too) is true
        return f"({a} != {broadcast(src, '0')})"
    if src is dtypes.bool:  # a mask's all ones is -1: true is 1
        a = f"(-{a})"
    if dst is src or (src is dtypes.bool and dst is dtypes.int32):
        return a
    return f"__builtin_convertvector({a}, {vector_type(dst)})"


def render_vector(node: UOp, a: list[str]) -> str:
    """The C expression of one op on 8-lane vectors (operands already vectors): float32 math,
    int32 arithmetic, compares and bool ops as lane masks, WHERE as a blend, casts."""
    if node.op is Ops.CAST:
        return _vector_cast(node.src[0].dtype, node.dtype, a[0])
    template = _VECTOR.get(node.op)
    if template is None or (node.op in _F32_ONLY and node.dtype is not dtypes.float32):
        raise RenderError(f"op {node.op.name} has no vector form (rules/opt_helpers.py: "
                          "vectorizable)")
    return template.format(*a, s=SUFFIX[node.dtype.name],
                           lane="f32" if node.dtype in _FLOAT_LANES else "i32")


# (EXP and LOG: float32's, vexp.py's and vlog.py's cores, inline: their preludes' VECTOR)
_VECTOR = {**_SCALAR, Ops.EXP: VECTOR_EXP + "({0})", Ops.MAX: "rg_vmax_{s}({0}, {1})",
           Ops.MIN: "rg_vmin_{s}({0}, {1})", Ops.WHERE: "rg_vsel_{lane}({0}, {1}, {2})",
           # (RECIPROCAL correctly rounded: 1 / x lane by lane; SQRT: float32's libm call on
           # each lane, rg_vmap_f32, correctly rounded too)
           Ops.RECIPROCAL: "(rg_vset_f32(1.0f) / {0})", Ops.LOG: VECTOR_LOG + "({0})",
           Ops.SQRT: "rg_vmap_f32(sqrtf, {0})"}
_F32_ONLY = {Ops.LOG, Ops.SQRT}


def _unroll(r: UOp) -> str:
    """The pragma of an "unroll" loop (a register tile's rows or columns): all of it."""
    return f"#pragma GCC unroll {loop_count(r)}" if r.arg[1] == "unroll" else ""


_OMP_REDUCE = {Ops.ADD: "+", Ops.MUL: "*"}
_SLOTS = [f"\0{i}\0" for i in range(4)]  # operand i as a printer prints it (`_printed`)
_FIXED_OPS = frozenset({Ops.CONST, Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR})
_HALF_ARRAYS = (Ops.DEFINE_GLOBAL, Ops.DEFINE_LOCAL)  # a float16 one's C elements: _Float16


class KernelRenderer:
    """The state of rendering one kernel: scopes, temporaries, deps."""

    def __init__(self, ast: UOp, restrict: bool):
        self.ast, self.restrict = ast, restrict
        # the loops the parallel action split across cores, by range id; and per loop nest;
        # each threaded loop's team, by range id (Parallel.teams: the model's; 0 the runtime's)
        par = ast.arg if isinstance(ast.arg, Parallel) else None
        self.parallel = par.ranges if par is not None else frozenset()
        self.nests = par.nests if par is not None else ()
        self.teams = {i: par.team(i) for i in self.parallel} if par is not None else {}
        self.order = toposort(ast)  # the one walk of the whole kernel; the rest reuse it
        self.deps = free_ranges(ast, self.order)
        # kernel-local row -> the sums its filling loop adds up ("fill" reduces: opt.rules'
        # fill_reduce, rules/wide_exps.py's `filled`), each read as LOAD(INDEX(row, r))
        self.fills: dict[UOp, list[UOp]] = {}
        for n in self.order:
            if n.op is Ops.REDUCE and n.src[1:] and n.src[-1].arg[1] == "fill":
                self.fills.setdefault(n.src[0].src[1].src[0].src[0], []).append(n)
        self.fixed: dict[UOp, str] = {}  # constants and buffers: the same text everywhere
        self.ntemp = 0
        self.root = Scope("", frozenset())
        self.stack: list[Scope] = [self.root]
        self.loop_names: dict[UOp, str] = {}
        self.params: dict[int, UOp] = {}
        self.vars: set[str] = set()
        self.written: set[int] = set()
        self.vartypes: dict[str, str] = {}  # C type of every generated name (for segments)
        # a name that reads names (an INDEX's `p0[t5]`) as data (a Stmt.form), a constant (`_at`'s
        # 0 too) as text alone; any other is one value (`t<i>`, a loop variable, a cell, a size)
        self.forms: dict[str, tuple[str, ...]] = {"0": ("0",)}
        self.escaped: set[str] = set()  # the names a line other than a Stmt reads (`emit`)
        self.choices: list[str] = []  # how the actions were printed (launch, block library)
        self.vector: UOp | None = None  # the open "vector" loop's RANGE: what varies along it
        self.vector_nodes: set[UOp] = set()  # vectors that do not vary along it (accumulators)
        # the reduce loop whose later rows are prefetched, and how many rows ahead
        self.prefetch: tuple[UOp, int] | None = None
        self.used_vectors = False
        # the open vector loop computes two 8-lane vectors at once, in 16 lanes (pairs:
        # `_vector_steps`)
        self.wide = False
        # a "simd" loop (rules/opt_helpers.py): explicit vectors' values left to gcc; the
        # kernel is compiled at the explicit vectors' level all the same
        self.gcc_vectors = False
        self.printed_blocks = False  # a flash register block printed here, not the library's
        self.kind = "loops"  # RenderedKernel.kind
        self.gated = False  # a gated read was printed (RenderedKernel.gated)
        self.calls: set[str] = set()  # the block library's functions called (`call`)
        self.uses: set[str] = set()  # the prelude's functions on demand printed (`prelude`)
        # the NaN-propagating (or from -0.0) OpenMP reductions declared for threads: used if
        # their loop is not launched
        self.declared: set[str] = set()
        self.threaded: set[UOp] = set()  # reduces given an `omp parallel for ... reduction`
        self.combines: list[_Combine] = []  # their accumulators, for `_launched`
        # the open store group's interchanged columns (interchange_helpers.columns), and those
        # an array of accumulators' loops bind now (a reduce nested in it is plain inside them)
        self.columns: tuple[UOp, ...] = ()
        self.inside: set[UOp] = set()
        # a kernel gemm.py printed as threads sharing a scratch area (RenderedKernel.shared):
        # (iterations to launch, bytes, zeroed bytes, team: RenderedKernel.team); its code names
        # the area `s_`
        self.shared: tuple[int, int, int, int] | None = None
        self.frees: list[tuple[Scope, str]] = []  # kernel-local arrays on the heap, their hosts
        # the C bounds [lo, hi) of the loops over a range visiting part of it, by range id (a
        # masked flash head's row passes over its tile's window of keys: backends/c/flash.py)
        self.windows: dict[int, tuple[str, str]] = {}

    def call(self, name: str) -> str:
        """`name`, a function of the block library the kernel calls, recorded
        (RenderedKernel.calls: build.py loads its library first)."""
        self.calls.add(name)
        return name

    # -- names
    def fresh(self, prefix: str = "t") -> str:
        self.ntemp += 1
        return f"{prefix}{self.ntemp}"

    def stmt(self, name: str, ct: str, expr: str, srcs: list[str] | None = None) -> Stmt:
        """`expr` over `_SLOTS` for `srcs` (`_printed`), or text read as one value (a cell)."""
        self.vartypes[name] = ct
        if srcs is None:
            self.vartypes.setdefault(expr, ct)
        return Stmt(name, ct, ("", expr, "") if srcs is None else self._printed(expr, srcs))

    def form(self, name: str) -> tuple[str, ...]:
        return self.forms.get(name) or ("", name, "")

    def cell(self, acc: str, at: tuple[str, ...]) -> str:
        """The name `acc[at]`, `at` a form over loop variables, in the name table."""
        form = ("", acc, "[" + at[0], *at[1:-1], at[-1] + "]")
        self.forms["".join(form)] = form
        return "".join(form)

    def _printed(self, template: str, srcs: list[str]) -> tuple[str, ...]:
        """The form of a printer's text over `_SLOTS`: slot i filled with srcs[i]'s form."""
        form = [""]
        for k, piece in enumerate(template.split("\0")):
            part = self.form(srcs[int(piece)]) if k % 2 else (piece,)
            form[-1] += part[0]
            form += part[1:]
        return tuple(form)

    def lookup(self, n: UOp) -> str | None:
        name = self.fixed.get(n)
        if name is not None:
            return name
        for scope in reversed(self.stack):  # computed values first: most lookups are those
            name = scope.names.get(n)
            if name is not None:
                return name
        return self._fix(n) if n.op in _FIXED_OPS else None

    def _fix(self, n: UOp) -> str:
        """The name of a node with the same text everywhere: a constant, buffer or size."""
        if n.op is Ops.CONST:
            name = self.fixed[n] = render_const(n.arg, n.dtype)
            self.forms[name] = (name,)
        elif n.op is Ops.DEFINE_GLOBAL:
            self.params[n.arg] = n
            name = self.fixed[n] = f"p{n.arg}"
        else:  # DEFINE_VAR, a symbolic size: a parameter of the kernel, by name
            self.vars.add(n.arg[0])
            name = self.fixed[n] = f"(({ctype(n.dtype)})var_{n.arg[0]})"
            self.vartypes[name] = ctype(n.dtype)  # (one value to a function of a long run)
        return name

    def home(self, n: UOp) -> Scope:
        """The outermost open scope where every loop variable `n` reads is bound."""
        need = self.deps[n]
        for scope in self.stack:
            if need <= scope.bound:
                return scope
        missing = ", ".join(f"RANGE{r.arg}" for r in need - self.stack[-1].bound)
        raise RenderError(f"{n.op.name} reads {missing}, which no enclosing STORE or REDUCE "
                          "loops over")

    def loop_var(self, r: UOp) -> str:
        """The C variable of RANGE r's loops (`r<i>`, the same in every loop over r)."""
        var = self.loop_names.setdefault(r, f"r{len(self.loop_names)}")
        self.vartypes[var] = "int64_t"
        return var

    def open_loop(self, parent: Scope, r: UOp, pragma: str | Threads = "", start: str = "0",
                  count: int | None = None, last: int | None = None,
                  simd: bool = False) -> Scope:
        """A loop binding RANGE r; by default over all of it, else `count` values from
        `start` (one tile of a tiled loop; with a `last`, values past it are `last`); split
        across cores when `pragma` is a `Threads`; `omp simd` when `simd`."""
        var = self.loop_var(r)
        threads: Threads | None = None
        if isinstance(pragma, Threads):
            assert count is None, "threads run a whole range"
            threads, head = pragma.loop(var, loop_count(r))
        elif count is None and r.arg[0] in self.windows:  # a masked head's window of keys
            lo, hi = self.windows[r.arg[0]]
            head = Loop(var, hi, lo, pragma=pragma, simd=simd)
        else:  # a tile counts from 0, so its trip count is a constant gcc can unroll (with
            # -fwrapv, `start + count` might wrap, and a loop from start to it has no known count)
            head = Loop(var if count is None else f"{var}_u",
                        loop_count(r) if count is None else count, pragma=pragma, simd=simd)
        scope = Scope(head, parent.bound | {r}, threads=threads)
        scope.names[r] = var
        if count is not None:
            value = f"{start} + {var}_u"
            if last is not None:
                value = f"({value} < {last} ? {value} : {last})"
            scope.items.append(f"const int64_t {var} = {value};")
        return parent.open(scope)

    # -- expressions
    def emit(self, root: UOp) -> str:
        """Emit the statements computing `root` in the open scopes; return its C name, for a
        line other than a Stmt (its names marked `escaped`)."""
        work: list[tuple[UOp, int]] = [(root, 0)]
        # a REDUCE switches the scope stack to its own loops while its body is emitted: what
        # `_enter` returned, and the accumulator's (or local array's) C name
        saved: list[tuple[tuple, str]] = []
        lookup, reduce_op, local_op = self.lookup, Ops.REDUCE, Ops.DEFINE_LOCAL  # read once
        while work:
            n, stage = work.pop()
            if stage == 0:
                if lookup(n) is not None:
                    continue
                # down a chain: a source already named is not pushed, and the first one left
                # to emit (the next entry popped) is taken at once, its lookup done
                while True:
                    if n.op is reduce_op and n.src[-1].arg[1] == "fill":
                        self._fill_reduce(n)
                        break
                    if n.op is reduce_op and n.src[-1].arg[1] == "vector":
                        self._vector_reduce(n)
                        break
                    if n.op is reduce_op or n.op is local_op:  # its loops opened, then its body
                        (self._open_reduce if n.op is reduce_op else self._open_local)(n, saved)
                        work += [(n, 2 if n.op is reduce_op else 3), (n.src[0], 0)]
                        break
                    work.append((n, 1))
                    first = None
                    for s in reversed(n.src):
                        if lookup(s) is None:
                            if first is not None:
                                work.append((first, 0))
                            first = s
                    if first is None:
                        break
                    n = first
            elif stage == 1:
                if lookup(n) is None:
                    self._emit_node(n)
            elif stage == 2:
                self._close_reduce(n, saved)
            else:
                self._close_local(n, saved)
        name = self.lookup(root)
        assert name is not None
        self.escaped.update(self.form(name)[1::2])
        return name

    def _emit_node(self, n: UOp) -> None:
        scope = self.home(n)
        srcs = [self.lookup(s) for s in n.src]
        if n.op is Ops.RANGE:
            raise RenderError(f"RANGE{n.arg} is read outside the loops over it")
        a = _SLOTS[:len(srcs)]  # the printers print slots, filled by `_printed`
        ct = ctype(n.dtype)
        if n.op is Ops.INDEX:
            # an INDEX names an address; LOAD and STORE print it
            name = scope.names[n] = f"{srcs[0]}[{srcs[1]}]"
            self.forms[name] = self._printed(f"{a[0]}[{a[1]}]", srcs)  # type: ignore[arg-type]
            return
        if self._is_vector(n):
            self._emit_vector(n, scope, srcs)  # type: ignore[arg-type]
            return
        if n.op is Ops.LOAD:
            idx = n.src[0]
            if idx.op is not Ops.INDEX:
                raise RenderError("LOAD must read an INDEX")
            if idx.src[0].op is Ops.DEFINE_GLOBAL:
                self.params.setdefault(idx.src[0].arg, idx.src[0])
            if len(idx.src) > 2:
                raise RenderError("a LOAD of a masked INDEX: lower.rules gates it first "
                                  "(LOAD(INDEX(b, off), gate, alt))")
            # a gated load reads memory only where its gate holds (C evaluates one arm)
            value = a[0]
            if n.dtype is dtypes.float16 and idx.src[0].op in _HALF_ARRAYS:
                value, ct = half_load(a[0]), "float"  # (a _Float16's bits: ctext.HALF_WIDEN)
                self.uses.add(HALF_WIDEN)
            if len(n.src) == 1:
                expr = value
            else:
                expr = f"({a[1]} ? {value} : {a[2]})"
                self.gated = True  # (RenderedKernel.gated: flags.py's jump threading)
        elif n.op in GroupOp.Elementwise:
            expr = render_alu(n, a)
            if n.dtype is dtypes.float16 and n.op in (Ops.WHERE, Ops.CAST):
                # a pick of halves (a padding's gate), or a float rounded to one (HALF_ROUND):
                # a half, exactly, as a float (no scalar _Float16 in a loop gcc vectorizes)
                ct = "float"
            if (helper := alu_helper(n)) is not None:
                self.uses.add(helper)
            if n.op in (Ops.EXP, Ops.LOG) and n.src[0].dtype in _FLOAT_LANES:  # float32's
                # exp and log (a half's in float: render_alu): the prelude binds them to vexp's
                # and vlog's, in one library
                self.call(vexp.NAME if n.op is Ops.EXP else vlog.NAME)
        else:
            raise RenderError(f"the C renderer has no rule for {n.op.name} in a kernel")
        name = self.fresh()
        scope.add(self.stmt(name, ct, expr, srcs))  # type: ignore[arg-type]
        scope.names[n] = name

    # -- explicit vectors (a "vector" loop: rules/opt_helpers.py, `vectorizable`)
    def _unrounded(self, value: UOp, name: str) -> tuple[UOp, str]:
        """What a vector store of float16 lanes converts: a float32 CAST to float16's float32
        itself (the store rounds it once, the same bits), not the cast's round trip and a
        second conversion (3 where 1 does)."""
        src = value.src[0] if value.op is Ops.CAST else None
        if src is None or value.dtype is not dtypes.float16 or src.dtype is not dtypes.float32 \
                or not self._is_vector(src):
            return value, name
        return src, self.lookup(src)

    def _is_vector(self, n: UOp) -> bool:
        """A value that varies along the open vector loop: one 8-lane vector (its index
        arithmetic stays scalar, the offset of lane 0)."""
        return (self.vector is not None and n.dtype is not dtypes.index
                and (self.vector in self.deps[n] or n in self.vector_nodes))

    def _lanes(self, n: UOp, name: str) -> str:
        """An operand as a vector: a value that does not vary along the loop is broadcast."""
        return name if self._is_vector(n) else broadcast(n.dtype, name, self.wide)

    def _emit_vector(self, n: UOp, scope: Scope, srcs: list[str]) -> None:
        if self.wide:  # (every 16-lane value: vexp.WIDE defines their type and functions)
            self.uses.add(WIDE_EXP)
        if n.op is Ops.LOAD:
            # lane u reads offset + step * u: the index is affine in the loop variable
            step = stride(n.src[0].src[1], self.vector)  # type: ignore[arg-type]
            # (wide_exps' `paired`: contiguous float32 loads only; int, bool, half and double
            # lanes contiguously; float32's every one, every other, else lane by lane, `step`
            # apart: whole rows read far apart)
            if self.wide and n.dtype is dtypes.float16:
                self.uses.add(WIDE_HALF)
            load = f"rg_zload_f{16 if n.dtype is dtypes.float16 else 32}" if self.wide \
                else _VECTOR_LOAD.get(step) \
                if n.dtype is dtypes.float32 else _LANE_LOAD.get(n.dtype, "rg_vload_i32")
            expr = f"{load}(&{_SLOTS[0]})" if load else f"rg_vloads_f32(&{_SLOTS[0]}, {step})"
            row = None if self.prefetch is None else stride(n.src[0].src[1], self.prefetch[0])
            if row:
                # an address, never dereferenced: computed as an integer (no pointer past the
                # buffer in C), and a prefetch of an unmapped address does not fault
                scope.add(f"__builtin_prefetch((const void *)((uintptr_t)&{self.emit(n.src[0])} + "
                          f"{self.prefetch[1] * row} * sizeof {srcs[0]}));")
        elif n.op is Ops.CAST and n.src[0].dtype is dtypes.index:
            # an index affine in the loop (a mask's position, `j + 1`): lane u is lane 0's value
            # plus u steps, wrapped to int32 as the scalar cast wraps
            step = stride(n.src[0], self.vector)  # type: ignore[arg-type]
            iota = ", ".join(str(u * step) for u in range(VECTOR_LANES))  # type: ignore[operator]
            expr = f"(rg_vset_i32((int32_t)({_SLOTS[0]})) + (rg_vi32){{{iota}}})"
        elif n.op in _INFIX and n.dtype in (dtypes.float32, dtypes.float64) and (
                self._is_vector(n.src[0]) or self._is_vector(n.src[1])):
            # `v + x`: C's vector extension broadcasts a scalar operand of the element type
            # itself, lane for lane the same value as `v + rg_vset_f32(x)`, without an inline
            # call for gcc to expand per statement (on a 100,000-op chain, 3x its build time)
            expr = render_vector(n, _SLOTS)
        elif self.wide and n.op is Ops.CAST:  # (wide_half's: between float16 and float32)
            expr = f"rg_zround_f16({_SLOTS[0]})" if n.dtype is dtypes.float16 else _SLOTS[0]
            self.uses.add(WIDE_HALF)
        elif self.wide and n.op in (Ops.MAX, Ops.MIN):  # (a float16 store's: wide_exps)
            args = ", ".join(self._lanes(s, x) for s, x in zip(n.src, _SLOTS))
            expr = f"rg_z{n.op.name.lower()}_f32({args})"
            self.uses.add(WIDE_MINMAX)
        elif self.wide and n.op in (Ops.EXP, Ops.WHERE):
            args = ", ".join(self._lanes(s, x) for s, x in zip(n.src, _SLOTS))
            # (an exp of x - max(x): its argument <= 0, no overflow clamp; the same bits)
            fn = "sel" if n.op is Ops.WHERE else "expn" if nonpositive(n.src[0]) else "exp"
            expr = f"rg_z{fn}_f32({args})"
        else:
            expr = render_vector(n, [self._lanes(s, x) for s, x in zip(n.src, _SLOTS)])
            if n.op is Ops.EXP and nonpositive(n.src[0]):  # (as rg_zexpn_f32: the same bits)
                expr = f"rg_vexpn_f32({self._lanes(n.src[0], _SLOTS[0])})"
            if n.op in (Ops.EXP, Ops.LOG):
                self.uses.add(VECTOR_EXP if n.op is Ops.EXP else VECTOR_LOG)
        name = self.fresh()
        wide = "rg_zi32" if n.dtype is dtypes.bool else "rg_zf32"
        scope.add(self.stmt(name, wide if self.wide else vector_type(n.dtype), expr, srcs))
        scope.names[n] = name

    def _open_vector(self, parent: Scope, r: UOp, threads: Threads | None,
                     unroll: str = "", lanes: int = VECTOR_LANES) -> Scope:
        """The loop over r in steps of `lanes`, binding r to each vector's first lane; the last
        vector overlaps the one before it (the loop is at least `lanes` long), so the rest of a
        row is whole vectors, not a scalar tail (`unroll`: its pragma)."""
        var, n = self.loop_var(r), loop_count(r)
        if threads is not None:
            threads, head = threads.loop(f"{var}_v", n, lanes)
            head = head._replace(vector=True)
        else:
            head = Loop(f"{var}_v", n, step=lanes, pragma=unroll, vector=True)
        scope = Scope(head, parent.bound | {r}, threads=threads)
        scope.names[r] = var
        last = n - lanes
        scope.items.append(f"const int64_t {var} = {var}_v < {last} ? {var}_v : {last};"
                           if n % lanes else f"const int64_t {var} = {var}_v;")
        parent.open(scope)
        self.vector = r
        self.used_vectors = True
        return scope

    # -- reductions (in loop form: rules/lower.rules made each one REDUCE(op(acc, v), *ranges))
    def _open_reduce(self, red: UOp, saved: list) -> None:
        if red.src[1:] and red.src[1].arg[1] == "scan":
            self._open_scan(red, saved)
            return
        cols = tuple(c for c in self.columns if c in self.deps[red] and c not in self.inside)
        if cols:
            self._open_columns(red, cols, saved)
            return
        host, acc, reg = self.home(red), self.fresh("acc"), _accumulator(red)
        declaration = self._declare(host, ctype(reg.dtype), acc, render_const(reg.arg, reg.dtype))
        last = len(red.src) - 2
        mark, nest = self._open_nest(host, red.src[1:], lambda i: self._reduce_pragma(
            red, acc, innermost=i == last, outermost=i == 0))
        nest[-1].names[reg] = acc  # the accumulator, read by the combined value inside the loops
        saved.append((mark, acc, declaration, (), None))

    def _declare(self, host: Scope, ct: str, acc: str, ident: str, size: int | None = None) -> str:
        """Declare accumulator `acc` of C type ct in `host`, from `ident`: one value, or an
        array of `size` of them; returns the declaration."""
        if size is None:
            line, self.vartypes[acc] = f"{ct} {acc} = {ident};", ct
        else:
            line = (f"{ct} {acc}[{size}]; for (int64_t n_ = 0; n_ < {size}; n_++) {acc}[n_] = "
                    f"{ident};")
            self.vartypes[acc] = f"{ct} *"
        host.add(line)
        return line

    def _open_scan(self, red: UOp, saved: list) -> None:
        """A running accumulator along its STORE's open loop (rules/scan_helpers.py): declared
        before that loop, updated once per iteration of it where the update's loops are bound
        (`_close_reduce`), its value read after the update."""
        r = red.src[1]
        inside = next(k for k, s in enumerate(self.stack) if r in s.bound)
        # one accumulator per point of the loops inside r's that it reads (a scan down the
        # rows: one per column), in the order they were opened
        cols = tuple(c for k in range(inside + 1, len(self.stack))
                     for c in self.stack[k].bound - self.stack[k - 1].bound
                     if c in self.deps[red])
        reg = _accumulator(red)
        acc, ct, ident = self.fresh("acc"), ctype(reg.dtype), render_const(reg.arg, reg.dtype)
        self._declare(self.stack[inside - 1], ct, acc, ident,
                      math.prod(loop_count(c) for c in cols) if cols else None)
        if cols:
            acc = self.cell(acc, _row_major(cols, self.loop_names))
        self.stack[inside].names[reg] = acc
        saved.append((None, acc, None, (), None))

    def _open_columns(self, red: UOp, cols: tuple[UOp, ...], saved: list) -> None:
        """A reduce over output columns (rules/interchange_helpers.py: ranges of its STORE it
        depends on, marked ACCUMULATED): an array of accumulators, one per point of `cols`,
        where the loops outside them run; the reduce's loops, and inside them the columns' (a
        reduce over those columns nested in its value runs inside them, plain); its value,
        read by the STORE inside its own column loops, is the cell of theirs."""
        host = self._home_outside(red, cols)
        reg = _accumulator(red)
        # what reads the accumulator reads its cell, so varies with the columns: a pass of rows
        # folded to `acc + 0.0` (cumsum(0)[0]: rows gated off) read none and was printed
        # outside their loops, naming a column not bound there (C that did not compile)
        marked, extra = {reg}, frozenset(cols)
        for n in toposort(red.src[0]):
            if n is reg or any(s in marked for s in n.src):
                marked.add(n)
                self.deps[n] = self.deps[n] | extra
        acc, ct, ident = self.fresh("acc"), ctype(reg.dtype), render_const(reg.arg, reg.dtype)
        # a block of explicit vectors (kind "vector", when the store prints them: `restrict`):
        # 8 float32 or int32 lanes, 4 float64 (`vector_type`)
        vec = cols[-1] if cols[-1].arg[1] == "vector" and self.restrict else None
        size, lanes = math.prod(loop_count(c) for c in cols), vector_lanes(reg.dtype.itemsize)
        size = size if vec is None else -(-size // lanes)  # (the last may overlap)
        ct, ident = (ct, ident) if vec is None else (vector_type(reg.dtype),
                                                     broadcast(reg.dtype, ident))
        self._declare(host, ct, acc, ident, size)
        mark, nest = self._open_nest(host, red.src[1:])
        scope = nest[-1]
        if vec is not None:  # (what the value reads along the vector is vectors; `outside`)
            outside = (self.vector, self.vector_nodes, self.prefetch)
            k = red.src[-1]
            self.prefetch = (k, k.arg[2]) if k.arg[1] == "prefetch" else None
            scope = self._open_vector(scope, vec, None, f"#pragma GCC unroll {size}", lanes)
            self.stack.append(scope)
            self.vector_nodes = {reg}
            # (vector u of the block: its loop counter's column over the lanes, a power of two;
            # the counter, not the column: a last vector that overlaps the one before it, its
            # column clamped to the row's end, keeps an accumulator of its own, and its lanes
            # sum their columns over the same rows in the same order as the one before it)
            shift = f" >> {lanes.bit_length() - 1}"
            name = self.cell(acc, ("", f"{self.loop_names[vec]}_v", shift))
            scope.names[reg] = name
            self.inside.add(vec)
            saved.append((mark, name, None, cols, outside))
            return
        nested = any(n.op is Ops.REDUCE and self.deps[n] & set(cols)
                     for n in toposort(red.src[0])[:-1])
        for i, c in enumerate(cols):
            simd = c.arg[1] == "upcast" and i == len(cols) - 1 and not nested
            scope = self.open_loop(scope, c, "" if simd else _unroll(c), simd=simd)
            self.stack.append(scope)
        name = self.cell(acc, _row_major(cols, self.loop_names))
        scope.names[reg] = name
        self.inside.update(cols)
        saved.append((mark, name, None, cols, None))

    def _home_outside(self, red: UOp, cols: tuple[UOp, ...]) -> Scope:
        """The outermost open scope binding every loop variable `red` reads but `cols`."""
        need = self.deps[red] - set(cols)
        return next(scope for scope in self.stack if need <= scope.bound)

    def _vector_reduce(self, red: UOp) -> None:
        """A reduce whose innermost loop is marked "vector" (rules/opt_helpers.py,
        `vector_reduce`): `reduce_vectors` vectors of partial results, each combining every
        that-many-th vector of the loop's values over its blocks, then the whole vectors left;
        the last values (fewer than a vector) go into the scalar accumulator, and the vectors
        are combined into it after the loops. A MAX or MIN is exact in any order and repeated
        values change nothing: its last values are one vector overlapping the whole ones, and
        its vectors' lanes are combined as vectors (`rg_vhmax_f32`), not one by one. A row of
        memory (the value a plain load) that is the reduce's only loop calls the block
        library's reduction instead (blocks.py: compiled once per cache; a sum's the same steps,
        a max's the same bits). Under loops of the reduce's own (a sum over N of each image's
        short H*W run) the vectors stay outside them, combined once per output: a call per run
        combined its lanes once per run (a sum over (0, 2, 3) of 8x4096x3x3 on one thread ran
        at 2.2x torch's speed so, 7.9x inline; 32x256x7x7 1.5x, 3.2x)."""
        host = self.home(red)
        reg, update, r = _accumulator(red), red.src[0], red.src[-1]
        ct, ident = ctype(reg.dtype), render_const(reg.arg, reg.dtype)
        exact = red.arg in (Ops.MAX, Ops.MIN)
        # 8 float32 lanes or 4 float64 (their helpers: ctext.VECTOR_HELPERS)
        vt, sfx, lanes = vector_type(reg.dtype), SUFFIX[reg.dtype.name], \
            vector_lanes(reg.dtype.itemsize)
        acc, accv = self.fresh("acc"), self.fresh("acc")
        declaration = self._declare(host, ct, acc, ident)
        self.vartypes[accv] = f"{vt} *"
        outside = (self.vector, self.vector_nodes, self.wide)
        self.wide = False
        mark, nest = self._open_nest(host, red.src[1:-1], lambda i: self._reduce_pragma(
            red, acc, innermost=False, outermost=i == 0))
        scope, vhome = nest[-1], host
        if red in self.threaded:  # each iteration of the threads' loop (the first) its own
            vhome = nest[1]
            self.combines.append(_Combine(acc, update, declaration))
        value = update.src[1]
        if value.op is Ops.LOAD and len(value.src) == 1 and block_library() and len(red.src) == 2 \
                and not _from_negative_zero(reg) and reg.dtype is dtypes.float32:
            # a row of memory: the block library's reduction of it (compiled once per cache;
            # it sums from +0.0, so not a sum from -0.0, whose all -0.0 row must stay -0.0)
            window = self.windows.get(r.arg[0])
            row = self._at(value.src[0], r, window[0] if window else "0")
            count = f"{window[1]} - {window[0]}" if window else loop_count(r)
            call = f"{self.call(reduce_name(red.arg))}(&{row}, {count})"
            scope.add(f"{acc} = {render_alu(update, [acc, call])};")
            self._leave(mark)
            self.wide = outside[2]
            host.names[red] = acc
            return
        n = loop_count(r)
        nvec = reduce_vectors(red.arg, n, lanes)
        pairs = paired(red)
        vhome.add(f"{vt} {accv}[{nvec}]; for (int u_ = 0; u_ < {nvec}; "
                  f"u_++) {accv}[u_] = rg_vset_{sfx}({ident});")
        self.vector, self.vector_nodes, self.used_vectors = r, {reg}, True
        window = self.windows.get(r.arg[0])
        whole = self._vector_spans(red, accv, nvec, exact, scope, *(window or (0, n)), lanes,
                                    pairs)
        vector_tail = not exact and window is None and lanes <= n and \
            self._vector_tail(red, acc, whole)
        self.vector, self.vector_nodes = None, set()
        if not exact and not vector_tail and (window is not None or n > whole):  # one at a time
            if window is None:
                tail = self.open_loop(scope, r, "", str(whole), n - whole)
            else:
                self.windows[r.arg[0]] = (str(whole), window[1])
                tail = self.open_loop(scope, r)
                self.windows[r.arg[0]] = window
            self.stack.append(tail)
            tail.names[reg] = acc
            tail.add(f"{acc} = {self.emit(update)};")
        self._leave(mark)
        self.vector, self.vector_nodes, self.wide = outside
        both = render_vector(update, [f"{accv}[0]", f"{accv}[u_]"])
        if nvec > 1:
            vhome.add(f"for (int u_ = 1; u_ < {nvec}; u_++) {accv}[0] = {both};")
        if exact:
            folded = f"rg_vh{red.arg.name.lower()}_{sfx}({accv}[0])"
            vhome.add(f"{acc} = {render_alu(update, [acc, folded])};")
        else:
            lane = render_alu(update, [acc, f"{accv}[0][u_]"])
            vhome.add(f"for (int u_ = 0; u_ < {lanes}; u_++) {acc} = {lane};")
        host.names[red] = acc

    def _vector_tail(self, red: UOp, acc: str, whole: int | str) -> bool:
        """A float32 sum's last values (fewer than a vector, from `whole`) whose value calls
        exp and no other libm function: one vector of the value ending at the loop's end (exp's
        vector core, the scalar call's bits: vexp.py), its last lanes added to the scalar
        accumulator one at a time, in the order the scalar tail added them, so the same sum;
        one vector's work for up to 7 calls (a logsumexp over rows of 13 made 5 calls a row,
        1.56x as long; one thread, CPU time). False (nothing printed) for another sum, which
        keeps its scalar tail (a log's or sin's vector form is not its scalar call's bits)."""
        r, n, lanes = red.src[-1], loop_count(red.src[-1]), VECTOR_LANES
        value = red.src[0].src[1]
        calls = {x.op for x in toposort(value)} & LIBM_CALLS
        if red.dtype is not dtypes.float32 or not isinstance(whole, int) or n <= whole \
                or calls != {Ops.EXP}:
            return False
        with self._strided(r, "", str(n - lanes), 1, lanes) as (lane, _):
            step = render_alu(red.src[0], [acc, f"{self.emit(value)}[u_]"])
            lane.add(f"for (int u_ = {whole - (n - lanes)}; u_ < {lanes}; u_++) {acc} = {step};")
        return True

    @contextmanager
    def _strided(self, r: UOp, pragma: str, start: str, count: int, step: int):
        """A loop of `count` iterations binding RANGE r to `start + i * step`, pushed while the
        body is emitted (yields it and its variable), then closed: the scope it opened in fills
        again what it was filling before."""
        parent = self.stack[-1]
        rest = parent.open_child
        lane = self.open_loop(parent, r, pragma, start, count)
        var = lane.names[r]
        lane.items[0] = f"const int64_t {var} = {start} + {var}_u * {step};"
        self.stack.append(lane)
        yield lane, var
        self.stack.pop()
        parent.open_child = rest

    def _open_nest(self, host: Scope, ranges: tuple[UOp, ...],
                   pragma: Callable[[int], str | Threads] | None = None) -> tuple[tuple, list]:
        """Switch the scope stack to `host` (`_enter`) and open a loop over each of `ranges`
        there, outermost first, each pushed (`pragma(i)`: the i-th one's, asked as it opens);
        returns what `_leave` restores and [host, *the loops]."""
        mark, nest = self._enter(host), [host]
        for i, r in enumerate(ranges):
            nest.append(self.open_loop(nest[-1], r, "" if pragma is None else pragma(i)))
            self.stack.append(nest[-1])
        return mark, nest

    def _enter(self, host: Scope) -> tuple[int, list[Scope], list[tuple[Scope, Scope | None]]]:
        """Switch the scope stack to `host`, where a reduce's or a local array's loops open;
        returns what `_leave` restores."""
        depth = self.stack.index(host)
        mark = (depth, self.stack, [(s, s.open_child) for s in self.stack[depth:]])
        self.stack = self.stack[: depth + 1]
        return mark

    def _leave(self, mark: tuple[int, list[Scope], list[tuple[Scope, Scope | None]]]) -> None:
        """Back to the scopes open before `_enter`: the loops opened since are closed, and what
        was being filled is again."""
        depth, old_stack, opened = mark
        for s in self.stack[depth:]:
            s.open_child = None
        self.stack = old_stack
        for s, child in opened:
            s.open_child = child

    def _at(self, idx: UOp, r: UOp, value: str) -> str:
        """The C name of INDEX `idx` where RANGE r is `value` (its statements added to the open
        scope)."""
        parent = self.stack[-1]
        at = Scope("", parent.bound | {r})
        at.names[r] = value
        self.stack.append(at)
        name = self.emit(idx)
        self.stack.pop()
        for item in at.items:
            parent.add(item)
        return name

    def _vector_spans(self, red: UOp, accv: str, nvec: int, exact: bool, scope: Scope,
                      lo: int | str, hi: int | str, lanes: int,
                      pairs: bool = False) -> int | str:
        """A vector reduce's steps over [lo, hi) of its loop, the whole loop (0 to its count)
        or a window known at run time (`windows`, C text): blocks of `nvec` vectors, then whole
        vectors (unrolled where their count is known); a MAX's or MIN's last values in one
        vector ending at `hi` (in a window it may start before `lo`: the loop is at least a
        vector long, and every value outside the window is the op's identity,
        rules/flash_mask.py); with `pairs`, the blocks' vectors two at a time (`_vector_steps`).
        Returns where a sum's last values, one at a time, begin."""
        block = nvec * lanes
        if isinstance(hi, int):
            main, whole = hi - hi % block, hi - hi % lanes
            last = str(hi - lanes) if hi > whole else None
        else:
            main, whole = self.fresh("kb"), self.fresh("kb")
            self.vartypes[main] = self.vartypes[whole] = "int64_t"
            scope.add(f"const int64_t {main} = {lo} + ({hi} - ({lo})) / {block} * {block};")
            scope.add(f"const int64_t {whole} = {lo} + ({hi} - ({lo})) / {lanes} * {lanes};")
            last = f"({hi} < {lanes} ? 0 : {hi} - {lanes})"
        rest = scope.open_child  # (what is still being filled after these loops)
        spans = [(lo, main, block, nvec)] if main else []
        if isinstance(whole, str) and nvec > 1:
            spans.append((main, whole, lanes, 1))
        for first, end, step, count in spans:
            kb = self.fresh("kb")
            self.open_counter(scope, Loop(kb, end, first, step=step))
            self._vector_steps(red, accv, kb, count, lanes, pairs and count == nvec)
            self.stack.pop()
            scope.open_child = rest  # (the next loop after this one)
        if isinstance(whole, int) and whole > main:
            self._vector_steps(red, accv, str(main), (whole - main) // lanes, lanes)
        if exact and last is not None:
            if isinstance(whole, str):  # (a window may end on a whole vector)
                self.open_counter(scope, Guard(f"{whole} < {hi}"))
            self._vector_steps(red, accv, last, 1, lanes)
            if isinstance(whole, str):
                self.stack.pop()
                scope.open_child = rest
        return whole

    def _vector_steps(self, red: UOp, accv: str, start: str, count: int, lanes: int,
                      pairs: bool = False) -> None:
        """`count` vectors of the reduce's innermost loop from `start`, the u-th combined into
        accv[u] (unrolled: the array is registers to gcc); with `pairs` (wide_exps' `paired`,
        an even count) two at a time: the value for both in one 16-lane vector (`wide`: its
        loads and its exp), whose halves are combined into their two cells as one at a time."""
        step = 2 if pairs and count % 2 == 0 else 1
        with self._strided(red.src[-1], f"#pragma GCC unroll {count // step}", start,
                           count // step, step * lanes) as (lane, var):
            if step == 1:
                lane.names[_accumulator(red)] = cell = f"{accv}[{var}_u]"
                self.vartypes[cell] = vector_type(_accumulator(red).dtype)  # (one value: `forms`)
                update = red.src[0]
                if update.op in (Ops.MAX, Ops.MIN) and update.dtype.is_float and \
                        update.src[0] is _accumulator(red):
                    # any NaN in the loop (ctext's rg_vmaxl_f32): the accumulators' combination
                    # after it gives numpy's quiet NaN
                    step_fn = f"rg_v{update.op.name.lower()}l_{SUFFIX[update.dtype.name]}"
                    lane.add(f"{cell} = {step_fn}({cell}, {self.emit(update.src[1])});")
                else:
                    lane.add(f"{cell} = {self.emit(update)};")
            else:
                self.wide = True
                value = self.emit(red.src[0].src[1])
                self.wide = False
                for h in (0, 1):
                    cell = f"{accv}[2 * {var}_u + {h}]"
                    both = render_vector(red.src[0], [cell, f"rg_zhalf_f32({value}, {h})"])
                    lane.add(f"{cell} = {both};")

    def _reduce_pragma(self, red: UOp, acc: str, innermost: bool,
                       outermost: bool) -> str | Threads:
        op, adt = red.arg, red.dtype
        declared = True  # the prelude's (on demand), not OpenMP's own
        if adt.is_float and op in (Ops.MAX, Ops.MIN):
            # the declared NaN-propagating reduction; gcc vectorizes it lane by lane
            omp_op = f"rg{op.name.lower()}_{SUFFIX[adt.name]}"
        elif adt.is_float and op is Ops.ADD and _from_negative_zero(_accumulator(red)):
            omp_op = f"rgaddz_{SUFFIX[adt.name]}"  # a sum from -0.0: its lanes from -0.0
        elif op in _OMP_REDUCE or (op in (Ops.MAX, Ops.MIN) and not adt.is_bool):
            omp_op, declared = _OMP_REDUCE.get(op, op.name.lower()), False
        else:
            return ""
        # a reduce given threads by rules/opt.rules (`thread_reduce`: a full sum)
        if outermost and red.src[1].arg[1] == "thread" and not self._in_parallel():
            self.threaded.add(red)
            if declared:  # (used unless its loop is launched: `render`)
                self.declared.add(omp_op)
            # on the team the action gave it (its range's third field: thread_helpers.threaded)
            first = red.src[1].arg
            return Threads(simd=innermost, reduction=(omp_op, acc),
                           team=first[2] if len(first) > 2 else 0)
        if innermost:
            if declared:
                self.uses.add(omp_op)
            return f"#pragma omp simd reduction({omp_op}:{acc})"
        return ""

    def _in_parallel(self) -> bool:
        return any(s.threads is not None or isinstance(s.head, Region) for s in self.stack)

    def _close_reduce(self, red: UOp, saved: list) -> None:
        mark, acc, declaration, cols, outside = saved.pop()
        if mark is None:  # a scan's step, once per iteration of the loops it reads
            scope = self.home(red.src[0])
            scope.add(f"{acc} = {self.emit(red.src[0])};")
            scope.names[red] = acc
            return
        self.stack[-1].add(f"{acc} = {self.emit(red.src[0])};")
        if outside is not None:  # back to the vectors (or none) of the loops around it
            self.vector, self.vector_nodes, self.prefetch = outside
        if red in self.threaded:
            self.combines.append(_Combine(acc, red.src[0], declaration))
        host = self.stack[-(len(red.src) - 1 + len(cols)) - 1]
        self._leave(mark)
        self.inside.difference_update(cols)
        host.names[red] = acc

    # -- kernel-local arrays: DEFINE_LOCAL(value, *ranges), read by LOAD(INDEX(it, offset))
    def _open_local(self, dl: UOp, saved: list) -> None:
        """Declare the array where the loops it depends on are bound (once per row) and open
        loops over its own ranges there; the value is emitted inside them."""
        host = self.home(dl)
        name = self.fresh("loc")
        size = math.prod(loop_count(r) for r in dl.src[1:])
        ct = ctype(dl.dtype)
        host.add(array(ct, name, size, dl.arg == "heap") if dl.arg else f"{ct} {name}[{size}];")
        if dl.arg == "heap":  # (freed after everything in its host: `render`)
            self.frees.append((host, name))
        self.vartypes[name] = f"{ctype(dl.dtype)} *"
        mark = self._enter(host)
        scope = host
        wide = self.vector is None and wide_fill(dl)  # 16 lanes at a time (wide_exps')
        # 8 halves (opt_helpers'), or 8 float32 lanes of exps on a 256-bit target (wide_exps'),
        # at a time: inside a store's vector loop too (the row is filled once per row, outside
        # it; that loop's vector is restored by `_close_local`)
        half = not (wide or self.wide) and (half_row(dl) or lane_fill(dl))
        outside = (self.vector, self.vector_nodes)
        self.vector_nodes = set() if half else self.vector_nodes
        half_lanes = 16 if half and wide_half(dl) else VECTOR_LANES  # (then self.wide)
        if half_lanes == 16:
            self.uses |= {WIDE_EXP, WIDE_HALF}
        sums = []  # its "fill" reduces: a scalar accumulator each, and two 16-lane vectors
        for red in self.fills.get(dl, ()) if wide and fills_sum(dl) else ():
            acc, lo, hi = self.fresh("acc"), self.fresh("acc"), self.fresh("acc")
            host.add(f"float {acc} = 0x0.0p+0f;")  # (the vector reduce's scalar start, +0.0)
            host.add(f"rg_zf32 {lo} = rg_zset_f32(0x0.0p+0f), {hi} = {lo};")
            self.vartypes[acc], self.vartypes[lo], self.vartypes[hi] = "float", "rg_zf32", "rg_zf32"
            sums.append((red, acc, (lo, hi)))
        for r in dl.src[1:]:  # (vectors along its last loop: a row block's rows before it)
            scope = self._open_vector(scope, r, None, lanes=16 if wide else half_lanes) \
                if (wide or half) and r is dl.src[-1] else self.open_loop(scope, r)
            self.stack.append(scope)
        self.wide |= wide or half_lanes == 16  # (a 16-lane store's lanes stay 16 inside)
        saved.append((mark, name, wide, half and outside, sums))

    def _fill_reduce(self, red: UOp) -> None:
        """A sum the filling loop of the kernel-local row it reads adds up where wide_exps'
        `fills_sum` says (`_open_local`: vectors 0 and 1 of the vector reduce's 4 of 8 partial
        results in 16 lanes, 2 and 3 in another, combined as it combines them), so the same
        bits: the row emitted (a no-op once it is), the sum named then; else the vector
        reduce's loop over the row (`_vector_reduce`)."""
        self.emit(red.src[0].src[1].src[0].src[0])
        if self.lookup(red) is None:
            self._vector_reduce(red)

    def _close_local(self, dl: UOp, saved: list) -> None:
        mark, name, wide, half, sums = saved.pop()
        inner = self.stack[-1]
        at, value = "".join(_row_major(dl.src[1:], self.loop_names)), self.emit(dl.src[0])
        if wide:  # (its last vector overlaps the one before: the same values again)
            inner.add(f"rg_zstore_f32(&{name}[{at}], {value});")
            self.vector, self.wide = None, False
        elif half and dl.dtype is dtypes.float32:  # (`lane_fill`'s)
            inner.add(f"rg_vstore_f32(&{name}[{at}], {self._lanes(dl.src[0], value)});")
            self.vector, self.vector_nodes = half
        elif half:  # (F16C's rounding: the value is a half already, where the graph casts)
            store = "rg_zstore_f16" if self.wide else "rg_vstore_f16"
            # (a value the same along the row, an expanded column's exp: broadcast to the lanes)
            inner.add(f"{store}(&{name}[{at}], {self._lanes(*self._unrounded(dl.src[0], value))});")
            self.vector, self.vector_nodes = half
            self.wide = False  # (`half_row` opens only outside a 16-lane loop)
        else:
            inner.add(self._assign(f"{name}[{at}]", value, dl.dtype))
        inner.fills = True
        # (one loop: its array is read only after it), unless each iteration holds a reduce
        # (a row block's hand-off, rules/row_block_helpers.py: an iteration is a pass over a
        # row, and `_overlap_tails` ran a block of 5 rows' max as 0..4 then 1..5, 8 passes)
        # (a row of a row block's array, its block's rows before it: `one_row`, the same
        # row's loop, whose overlapping last vector writes the same values again)
        deps = free_ranges(dl.src[0])  # (a reduce done before the loop, a softmax's max: no)
        inner.repeats = (len(dl.src) == 2 or one_row(dl)) and not any(
            n.op is Ops.REDUCE and dl.src[-1] in deps[n] for n in toposort(dl.src[0]))
        inner.itemsize = dl.dtype.itemsize
        host = self.stack[-len(dl.src)]
        var, n = self.loop_names[dl.src[-1]], loop_count(dl.src[-1])
        whole = n - n % (REDUCE_VECTORS * VECTOR_LANES)  # the row's blocks of 32
        for _, _, (lo, hi) in sums:
            # 16 values at 16k: vectors 2k, 2k+1 of the vector reduce's 4 (fills_sum), added to
            # lo, which then trades places with hi: after each even number of blocks lo holds
            # vectors 0 and 1, hi 2 and 3 (an accumulator picked by k's parity was a store and
            # a load per block: gcc keeps no array indexed so in registers)
            add = f"{{ const rg_zf32 s_ = {hi}; {hi} = ({lo} + {value}); {lo} = s_; }}"
            inner.add(add if whole == n else f"if ({var}_v < {whole}) {add}")
        self._leave(mark)
        for red, acc, lanes in sums:  # the vector reduce's combine: ((a0 + a1) + a2) + a3
            lo, hi = lanes
            for step in _fill_tail(name, acc, lanes, whole, n):
                host.add(step)
            host.add(f"for (int u_ = 0; u_ < 8; u_++) {acc} = ({acc} + ((({lo}[u_] + "
                     f"{lo}[u_ + 8]) + {hi}[u_]) + {hi}[u_ + 8]));")
            host.names[red] = acc
        host.names[dl] = name

    # -- stores
    def render_group(self, stores: list[UOp]) -> None:
        ranges = stores[0].src[2:]
        if self._try_product(stores[0]):
            return
        self.columns = columns(stores[0], self.deps)
        scope = self.root
        lead = self._flattened(ranges)
        if lead:
            scope = self._open_flattened(scope, lead)
        for i, r in enumerate(ranges[len(lead):], len(lead)):
            threads = i == 0 and r.arg[0] in self.parallel
            # an upcast loop (rules/opt.rules) is vectorized: `omp simd`, with the threads if
            # it is also the outermost
            # explicit vectors assume no two buffers overlap (the last vector recomputes what
            # the one before it wrote): without `restrict`, gcc's `omp simd` instead
            # (a "simd" loop of exps, in 16 lanes: wide_exps' `wide_fill`)
            self.wide = r is ranges[-1] and self.restrict and all(map(wide_fill, stores))
            if (r.arg[1] == "vector" or self.wide) and self.restrict:
                # (a float64 value's 4 lanes: interchange_helpers' register accumulators)
                lanes = vector_lanes(max(st.src[1].dtype.itemsize for st in stores))
                scope = self._open_vector(scope, r, Threads(team=self.teams[r.arg[0]])
                                          if threads else None,
                                          lanes=16 if self.wide else lanes)
                self.stack.append(scope)
                continue
            simd = r.arg[1] in ("upcast", "vector", "simd")
            self.gcc_vectors |= r.arg[1] == "simd"
            pragma: str | Threads = (Threads(simd=simd, team=self.teams[r.arg[0]])
                                     if threads else "" if simd else _unroll(r))
            scope = self.open_loop(scope, r, pragma, simd=simd)
            self.stack.append(scope)
        for st in stores:
            self.emit_store(st)
        # the innermost loop's iterations may run twice (`_overlap_tails`) when no value read
        # is a buffer the stores write (an in-place update would apply twice), nor a reduce
        # along the stores' loops (a running sum's accumulator per column would add twice)
        targets = {st.src[0].src[0].arg for st in stores}
        inner = self.stack[-1]
        inner.repeats = self.restrict and not any(
            (n.op is Ops.DEFINE_GLOBAL and n.arg in targets)
            or (n.op is Ops.REDUCE and not set(ranges).isdisjoint(n.src[1:]))
            for st in stores for n in toposort(st.src[1]))
        inner.itemsize = max(st.src[1].dtype.itemsize for st in stores)
        self.close_loops()
        self.vector, self.wide = None, False

    def _flattened(self, ranges: tuple[UOp, ...]) -> tuple[UOp, ...]:
        """The outer loops of a nest that the parallel action flattened into one threaded loop
        (a `Parallel` nest of 2 or more ranges, the first of `ranges`), or ()."""
        ids = tuple(r.arg[0] for r in ranges)
        for nest in self.nests:
            lead = ranges[:len(nest)]
            if (len(nest) > 1 and ids[:len(nest)] == nest
                    and not any(r.arg[1] in ("upcast", "vector", "simd") for r in lead)):
                return lead
        return ()

    def _open_flattened(self, parent: Scope, loops: tuple[UOp, ...]) -> Scope:
        """One threaded loop over every combination of `loops` (outermost first, as nested
        loops would run them), each loop's value computed from its counter; pushed on the
        scope stack."""
        sizes = [loop_count(r) for r in loops]
        threads, head = Threads(team=self.teams[loops[0].arg[0]]).loop(self.fresh("rf"),
                                                                        math.prod(sizes))
        self.vartypes[threads.var] = "int64_t"
        scope = Scope(head, parent.bound | set(loops), threads=threads)
        inner = math.prod(sizes)
        for k, (r, n) in enumerate(zip(loops, sizes)):
            inner //= n
            var = self.loop_var(r)
            value = threads.var if inner == 1 else f"{threads.var} / {inner}"
            scope.items.append(f"const int64_t {var} = {value}{f' % {n}' if k else ''};")
            scope.names[r] = var
        self.stack.append(parent.open(scope))
        return scope

    def _assign(self, lvalue: str, value: str, dt: DType) -> str:
        """`lvalue = value;`, a float16 temporary (a C float) stored by its bits (HALF_BITS)."""
        if dt is dtypes.float16 and self.vartypes.get(value) == "float":
            self.uses.add(HALF_BITS)
            return half_store(lvalue, value)
        return f"{lvalue} = {value};"

    def emit_store(self, st: UOp) -> None:
        """The assignment of STORE st in the innermost open scope (its value and index emitted
        first)."""
        idx, value = st.src[0], st.src[1]
        if idx.op is not Ops.INDEX or idx.src[0].op is not Ops.DEFINE_GLOBAL:
            raise RenderError("STORE must write an INDEX of a DEFINE_GLOBAL")
        self.written.add(idx.src[0].arg)
        self.params.setdefault(idx.src[0].arg, idx.src[0])
        v = self.emit(value)
        off = self.emit(idx.src[1])
        line = self._assign(f"p{idx.src[0].arg}[{off}]", v, value.dtype)
        if self.vector is not None:  # 8 (16; 4 doubles) lanes from p[off] (stride 1)
            sfx = {dtypes.float16: "f16", dtypes.float64: "f64", dtypes.int32: "i32"}.get(
                value.dtype, "f32")
            store = f"rg_{'z' if self.wide else 'v'}store_{sfx}"
            value, v = self._unrounded(value, v)
            if self.wide:  # (vexp.WIDE's types and broadcasts even where no value is a
                # vector: a constant fill stores rg_zset_f32's lanes)
                self.uses.add(WIDE_EXP)
            if self.wide and sfx == "f16":  # (16 halves: wide_exps' `_wide_halves`)
                self.uses.add(WIDE_HALF)
            line = f"{store}(&p{idx.src[0].arg}[{off}], {self._lanes(value, v)});"
            step = stride(idx.src[1], self.vector)
            if step != 1 and not self.wide and sfx == "f32":  # (lane by lane: across_helpers)
                line = f"rg_vstores_f32(&p{idx.src[0].arg}[{off}], {step}, " \
                       f"{self._lanes(value, v)});"
        if len(idx.src) > 2:
            line = f"if ({self.emit(idx.src[2])}) {line}"
        self.stack[-1].add(line)

    def close_loops(self, keep: Scope | None = None) -> None:
        """Close every scope opened inside `keep` (which stays open), by default every open
        loop: what is emitted next goes in the function's body."""
        depth = self.stack.index(self.root if keep is None else keep)
        for s in self.stack[depth:]:
            s.open_child = None
        del self.stack[depth + 1:]

    # -- attention heads in one kernel (rules/opt.rules' `flash_store`, printed by flash.py) and
    # sums of products packed (`pack_store`, printed by gemm.py), as the STORE's arg says
    # (flash.py and gemm.py are imported by the first kernel that has their action: a
    # process's first tiny add loads neither)
    def _try_product(self, st: UOp) -> bool:
        if isinstance(st.arg, Flash):
            from .flash import render_flash

            render_flash(self, st)
            self.kind = "packed" if self.printed_blocks else "flash"
            return True
        if isinstance(st.arg, Pack):
            from .gemm import plan, render_packed

            render_packed(self, st, *plan(self, st))
            if self.kind == "loops":
                self.kind = "packed"
            return True
        return False

    def open_counter(self, parent: Scope, head: Head, threads: Threads | None = None) -> Scope:
        """A loop that binds no RANGE (a counter: tiles, panels, blocks), or a guard or region
        in one, pushed on the scope stack; `threads`: how it is split across cores
        (`Threads.loop` made `head`)."""
        self.stack.append(parent.open(Scope(head, parent.bound, threads=threads)))
        return self.stack[-1]

    # -- the function
    def render(self, cname: str) -> RenderedKernel:
        if self.ast.op is not Ops.SINK:
            raise RenderError(f"a kernel AST is a SINK, not {self.ast.op.name}")
        for st in self.ast.src:
            if st.op is not Ops.STORE:
                raise RenderError(f"a kernel SINK holds STOREs, not {st.op.name}")
        for stores in store_groups(self.ast):  # (the parallel action's loop nests)
            self.render_group(stores)
        nparams = max(self.params) + 1 if self.params else 0
        pdt = tuple(self.params[i].dtype if i in self.params else dtypes.uint8
                    for i in range(nparams))
        var_names = tuple(sorted(self.vars))
        if self.shared is not None:
            if var_names:
                raise RenderError("a kernel of shared scratch takes no symbolic sizes")
            launch, finish, team = self.shared[0], None, self.shared[3]
        else:
            launch, finish, team = (0, None, 0) if var_names else _launched(self.root,
                                                                             self.combines)
        if launch:
            lines = [f"void {cname}(void *const *a_, int64_t lo_, int64_t hi_)", "{"]
            self.choices.append(f"LAUNCH {launch}" + (" COMBINE" if finish else "")
                                + (" SHARED" if self.shared else ""))
        else:
            params = ([f"void *v{i}" for i in range(nparams)]
                      + [f"long long var_{v}" for v in var_names])
            lines = [f"void {cname}({', '.join(params) or 'void'})", "{"]
        pointers = []
        for i in range(nparams):
            const = "" if i in self.written else "const "
            t = ctype(pdt[i])
            # restrict: no two buffers overlap, so gcc may vectorize without runtime checks
            qual = "restrict " if self.restrict else ""
            arg = f"a_[{i}]" if launch else f"v{i}"
            pointers.append(f"  {const}{t} *{qual}p{i} = ({const}{t} *){arg};")
            self.vartypes[f"p{i}"] = f"{const}{t} *{qual}"
        for host, name in self.frees:
            host.items.append(f"free({name});")
        _simd_fills(self.root)
        _overlap_tails(self.root, vector_bytes())
        _scalar_halves(self.root)
        segments, body = _layout(self.root, "  ", self.vartypes, self.escaped, cname)
        combine = 0
        if finish is not None:  # the slots' array, written here and combined by NAME_fin
            t = ctype(finish.update.dtype)
            combine = finish.update.dtype.itemsize
            lines += [*pointers, f"  {t} *restrict q_ = ({t} *)a_[{nparams}];", *body, "}",
                      f"__attribute__((cold)) void {cname}_fin(void *const *a_)", "{",
                      *pointers,
                      f"  const {t} *restrict q_ = (const {t} *)a_[{nparams}];"]
            _scalar_halves(finish.scope)
            more, body = _layout(finish.scope, "  ", self.vartypes, self.escaped, cname + "_fin")
            segments += more
        else:
            lines += pointers
        if self.shared is not None:
            lines.append(f"  unsigned char *const s_ = (unsigned char *)a_[{nparams}];")
        lines.extend(body)
        lines.append("}")
        source = "".join(s + "\n" for s in segments) + "\n".join(lines) + "\n"
        # (a float16 bit function every loop that called it printed as C's: `_scalar_halves`)
        self.uses -= {f for f in (HALF_WIDEN, HALF_ROUND, HALF_BITS) if f"{f}(" not in source}
        if f"{TEAM}(" in source:  # (a launched loop's pragma is gone: launch.py caps its team)
            self.uses.add(TEAM)
        if self.used_vectors:
            source = VECTOR_HELPERS + source
        if self.used_vectors or self.gcc_vectors:
            if self.kind == "loops":
                self.kind = "vector" if _has_plain_innermost(self.root) else "explicit"
        # OpenMP's threads: a region, or a threaded loop not launched (`_launch_header`), whose
        # reduction, if the prelude declares it, is used
        threads = [s.threads for s in self.root.tree() if s.threads is not None]
        self.uses.update(t.reduction[0] for t in threads
                         if t.reduction is not None and t.reduction[0] in self.declared)
        openmp = bool(threads) or any(isinstance(s.head, Region) for s in self.root.tree())
        return RenderedKernel(cname, source, nparams, pdt, var_names, tuple(self.choices),
                              self.kind, launch, combine,
                              self.shared[1:3] if self.shared is not None else (0, 0),
                              self.gated, tuple(sorted(self.calls)),
                              tuple(sorted(self.uses | self.calls)), openmp, team)


# A kernel whose whole body is one threaded loop (`omp parallel for` over a loop from 0 by a
# constant step: a scope with a `Threads` fact, after nothing but `const` statements, which
# each thread then computes for itself, and before nothing) is printed as that loop's body over
# a range of its iterations, and launch.py's one precompiled OpenMP region (its docstring says
# what a region costs gcc) runs it on each thread's share, as `omp parallel for` would (its
# static schedule: the same iterations per thread). A loop scheduled dynamically (the
# heads of attention's flash tiles, a batch of packed products) is launched too, in the same
# static shares: the bench's attention kernel costs gcc 232M instructions so, about 25M less
# (its kernel 0.67 ms before, 0.73 after on two threads, in one noisy run).
# A threaded reduce (a full sum: rules/opt.rules' `thread_reduce`) is launched too: each
# iteration of its threaded loop reduces into an accumulator of its own and stores it in a slot
# of its own, and a second function, run once after the threads, combines the slots in order
# and runs what followed the loop (the store of the sum). The value no longer depends on how
# many threads ran (OpenMP combined one partial per thread), and the library has no region:
# a 4M-float sum cost gcc and the assembler 148M instructions with its region, 114M launched.
# The finishing function combines a few hundred values once per call, in order: it is `cold`
# (compiled for size; 13M fewer instructions than -O3's unrolled loop, 9M fewer than a vector
# reduction).


class _Combine(NamedTuple):
    """A reduce given threads: its accumulator, its update node op(acc, value), and the
    line that declares the accumulator."""

    acc: str
    update: UOp
    declaration: str


class _Finish(NamedTuple):
    """The body of a launched reduce's NAME_fin (`_launched`), and the update it combines."""

    scope: Scope
    update: UOp


def _launched(root: Scope, combines: list[_Combine]) -> tuple[int, _Finish | None, int]:
    """The iterations of the kernel's one threaded loop when it can be launched (rewriting its
    header to run [lo_, hi_) of them), else 0; for a reduce, its finishing function; and the
    loop's team (Threads.team: the threads launch.py runs it on, 0 the runtime's count)."""
    at = [i for i, x in enumerate(root.items) if isinstance(x, Scope)]
    if len(at) != 1:
        return 0, None, 0
    before, loop, after = root.items[:at[0]], root.items[at[0]], root.items[at[0] + 1:]
    assert isinstance(loop, Scope)
    t = loop.threads  # (what opened the loop recorded how it is threaded: ctext.Threads)
    if t is None:
        return 0, None, 0
    simd, var, size, step = t.simd, t.var, t.size, t.step or 1
    op, acc = t.reduction if t.reduction is not None else (None, None)
    if op is None:
        if after or not all(isinstance(x, Stmt) for x in before):
            return 0, None, 0
        return _launch_header(loop, size, simd), None, t.team
    c = next((c for c in combines if c.acc == acc), None)
    declared = [x for x in before if not isinstance(x, Stmt)]
    if (c is None or step != 1 or len(declared) != 1
            or declared[0] != c.declaration
            or any(isinstance(x, Scope) for x in after)):
        return 0, None, 0
    # each iteration: the accumulator from the identity, then into its slot
    loop.items = [declared[0], *loop.items, f"q_[{var}] = {acc};"]
    # a loop with loops inside keeps their `omp simd`; one without may be a vector loop itself
    nested = any(isinstance(x, Scope) for x in loop.items)
    _launch_header(loop, size, simd and not nested)
    root.items = [*(x for x in before if x is not declared[0]), loop]
    combining = Scope(Loop("i_", size), root.bound)
    combining.items.append(f"{acc} = {render_alu(c.update, [acc, 'q_[i_]'])};")
    return size, _Finish(Scope("", root.bound, [*before, combining, *after]), c.update), t.team


def _launch_header(loop: Scope, size: int, simd: bool) -> int:
    """Rewrite `loop` to run iterations [lo_, hi_) of its `size / step` (`omp simd` when
    `simd`); returns their count."""
    head = loop.loop
    assert head is not None, "a threaded loop is a Loop (Threads.loop)"
    # iteration i is the loop's value i * step, as in the loop it replaces
    by = "" if head.step == 1 else f" * {head.step}"
    loop.head = head._replace(start=f"lo_{by}", stop=f"hi_{by}", pragma="", simd=simd)
    loop.threads = None  # (launch.py's threads run it: no OpenMP region of its own)
    return -(-size // head.step)


# Every build adds gcc's "very cheap" vectorizer cost model (flags.py's SEMANTIC), which
# vectorizes a loop only at a width that divides its count: a row of 250 (softmax's exp, a
# flash tile's probabilities) ran one value at a time, a row of 1000 in 8 lanes of 16. A loop
# that fills an array, each iteration its own element (Scope.fills: a local array's values, a
# flash tile's packed probabilities and its stores), says `omp simd`, which gcc vectorizes at
# full width whatever the count, the rest in narrower vectors and one at a time.
def _simd_fills(root: Scope) -> None:
    """`omp simd` on every filling loop (Scope.fills) with no loop inside (a guard, `if`, may
    be) and no pragma, that is not a loop of explicit vectors."""
    for scope in root.tree():
        h = scope.loop
        if (scope.fills and h is not None and not (h.pragma or h.simd or h.vector)
                and scope.guards_only()):
            scope.head = h._replace(simd=True)


# The bit functions of a float16 (ctext.HALF_WIDEN, HALF_ROUND, HALF_BITS) are ~10 integer
# operations each, worth it only in a loop gcc vectorizes: there they run 8 at a time where a
# scalar `_Float16` kept the whole loop scalar. A loop gcc is not told to vectorize (a short
# row's unrolled sum, 100003 x 13: 0.2x torch with them, 3x with F16C's one conversion) and
# the code outside every loop convert as C does, `(float)` and `(_Float16)`, one instruction.
_SCALAR_HALF = ((f"{HALF_WIDEN}(*(const {HALF_LVALUE} *)&", "(float)("),
                (f"{HALF_ROUND}(", "(float)(_Float16)("))
_HALF_STORE = re.compile(rf"\*\({HALF_LVALUE} \*\)&(.*) = {HALF_BITS}\((.*)\);")


def _vectorized(head: Loop) -> bool:
    """Whether gcc is told to vectorize this loop: `omp simd` (a pragma's too) or explicit
    vectors."""
    return head.simd or head.vector or "simd" in head.pragma


def _scalar_halves(root: Scope) -> None:
    """A float16's bit functions (`_SCALAR_HALF`, `_HALF_STORE`) printed as C's conversions
    wherever the innermost loop around them is not vectorized (`_vectorized`), or none is."""
    stack = [(root, root.loop is not None and _vectorized(root.loop))]
    while stack:
        scope, vectorized = stack.pop()
        for i, x in enumerate(scope.items):
            if isinstance(x, Scope):
                stack.append((x, _vectorized(x.loop) if x.loop is not None else vectorized))
            elif vectorized:
                continue
            elif isinstance(x, Stmt):
                form = x.form
                for bits, plain in _SCALAR_HALF:
                    form = tuple(t.replace(bits, plain) for t in form)
                scope.items[i] = x._replace(form=form)
            elif (m := _HALF_STORE.fullmatch(x)) is not None:
                scope.items[i] = f"{m[1]} = (_Float16)({m[2]});"


# gcc vectorizes an `omp simd` loop of a count that is not whole vectors with its last values
# in narrower vectors and then one at a time: a softmax row of 77 ran 4 vectors of 16 exps, one
# of 8 and 5 calls of the scalar exp, each as dear as a vector's; rows of 10, one vector and 2.
# A loop whose iterations may run twice (Scope.repeats) is printed as two: its whole vectors,
# then a vector's worth of last iterations, which overlap the ones before (the same values
# written again), so gcc runs every iteration in a full vector (as UPCAST's explicit vectors
# end). A vector holds `vbytes // itemsize` of the loop's values (Scope.itemsize: its widest
# stored value): 8 floats in 32 bytes, 4 doubles, 16 halves, 32 int8s.
def _overlap_tails(root: Scope, vbytes: int) -> None:
    """Each `omp simd` loop (no clause) from 0 to a known count n by 1 that may repeat
    iterations, with no loop inside: n - n % w iterations, then the last w, w the lanes of its
    widest stored value, halved, up to n (at least 4, and n not whole vectors of it)."""
    for parent in root.tree():
        for i in range(len(parent.items) - 1, -1, -1):
            loop = parent.items[i]
            h = loop.loop if isinstance(loop, Scope) else None
            if (h is None or not (h.simd and loop.repeats and loop.itemsize)
                    or h.pragma or h.vector or h.start != 0 or h.step != 1
                    or not isinstance(h.stop, int) or len(loop.items) > SEGMENT
                    or not loop.guards_only()):
                continue
            n, w = h.stop, vbytes // loop.itemsize
            while w > n:
                w //= 2
            if w < 4 or n % w == 0:
                continue
            loop.head = h._replace(stop=n - n % w)
            tail = Scope(h._replace(start=n - w), loop.bound, list(loop.items), dict(loop.names))
            parent.items.insert(i + 1, tail)


def _has_plain_innermost(root: Scope) -> bool:
    """Whether some scope with no scope inside is not a loop of explicit vectors
    (`_open_vector`): a plain loop, which gcc's vectorizer vectorizes (softmax's exp), but also
    a guard and a vector reduce's unrolled steps (`_vector_steps`: a Loop not marked `vector`),
    as when this read the header text."""
    return any(s.head and not (s.loop is not None and s.loop.vector)
               and not any(isinstance(x, Scope) for x in s.items) for s in root.tree())


def _fill_tail(row: str, acc: str, lanes: tuple[str, str], whole: int, n: int) -> list[str]:
    """A "fill" sum's values past its row's last block of 32 (`_close_local`), read back from
    the row in the vector reduce's steps (rg_reduce_add_f32's): up to three vectors of 8 into
    its partial results 0, 1 and 2 (halves of the two 16-lane accumulators, `lanes`), then the
    rest one at a time into the scalar sum, before the partial results are combined into it."""
    steps = [f"for (int u_ = 0; u_ < 8; u_++) {lanes[v // 2]}[u_ + {8 * (v % 2)}] = "
             f"({lanes[v // 2]}[u_ + {8 * (v % 2)}] + {row}[{whole + 8 * v} + u_]);"
             for v in range((n - whole) // 8)]
    rest = whole + (n - whole) // 8 * 8
    if rest < n:
        steps.append(f"for (int64_t k_ = {rest}; k_ < {n}; k_++) {acc} = ({acc} + {row}[k_]);")
    return steps


def _row_major(ranges: tuple[UOp, ...], names: dict[UOp, str]) -> tuple[str, ...]:
    """The offset of the point of `ranges` their loop variables bind in an array laid out
    row-major over them (the last fastest), as a form (Stmt.form)."""
    form, stride = [""], math.prod(map(loop_count, ranges))
    for r in ranges:
        stride //= loop_count(r)
        form[-1] += " + " if len(form) > 1 else ""
        form += [names[r], "" if stride == 1 else f" * {stride}"]
    return tuple(form)


def _from_negative_zero(reg: UOp) -> bool:
    """Whether an accumulator (DEFINE_REG) starts from -0.0: a pick's sum (runtime/ops.py,
    reduce_start), whose every partial result must start there too."""
    return reg.dtype.is_float and reg.arg == 0 and math.copysign(1.0, reg.arg) < 0


def _accumulator(red: UOp) -> UOp:
    """The DEFINE_REG of a REDUCE in loop form (rules/lower.rules, `reduce_to_loop`), at the
    bottom of its update's chain when a step combines several values (an interchange's rows
    per pass: op(op(acc, x0), x1))."""
    v = red.src[0]
    while v.op is red.arg and v.src and v.src[0].op is red.arg:
        v = v.src[0]
    if red.arg is None or not v.src or v.src[0].op is not Ops.DEFINE_REG:
        raise RenderError("a REDUCE not in loop form reached the renderer: lower.rules' "
                          "reduce_to_loop makes it REDUCE(op(acc, v), *ranges)")
    return v.src[0]


# a run of more straight-line statements than this becomes several functions: gcc's register
# allocator is superlinear in a basic block's size (20,000 statements: ~50 s; 100,000: the
# compiler crashes), while 100 functions of 1,000 statements build in seconds
SEGMENT = 1000


def _flatten(root: Scope, indent: str) -> list[tuple[str, str | Stmt]]:
    """The scope tree as (indent, line-or-Stmt) in print order; iterative."""
    out: list[tuple[str, str | Stmt]] = []
    stack: list[tuple[Scope | str | Stmt, str, int]] = [(root, indent, 0)]
    while stack:
        item, ind, state = stack.pop()
        if not isinstance(item, Scope):
            if isinstance(item, str):
                out.extend((ind, line) for line in item.split("\n"))
            else:
                out.append((ind, item))
            continue
        inner = ind
        if item.head:
            if state == 1:
                out.append((ind, "}"))
                continue
            head = str(item.head).split("\n")
            out.extend((ind, line) for line in head[:-1])
            out.append((ind, head[-1] + " {"))
            stack.append((item, ind, 1))
            inner = ind + "  "
        for child in reversed(item.items):
            stack.append((child, inner, 0))
    return out


def _layout(root: Scope, indent: str, vartypes: dict[str, str], escaped: set[str],
            cname: str) -> tuple[list[str], list[str]]:
    """Print the body; split runs of more than SEGMENT statements into helper functions.

    A segment's parameters are the names it reads from outside; its outputs (names defined in
    it and read later, by a statement or by another line: `escaped`) come back through
    pointers. Returns (helper functions, body)."""
    flat = _flatten(root, indent)
    last_read = {ident: i for i, (_, item) in enumerate(flat) if type(item) is Stmt
                 for ident in item.form[1::2]}
    helpers: list[str] = []
    named: dict[tuple, str] = {}  # what defines a helper's text -> its name
    body: list[str] = []
    end = 0  # where the group of lines ends in `flat`
    for stmts, group in itertools.groupby(flat, lambda line: type(line[1]) is Stmt):
        lines = list(group)
        end += len(lines)
        if not stmts or len(lines) <= SEGMENT:
            body.extend(ind + str(item) for ind, item in lines)
            continue
        for lo in range(0, len(lines), SEGMENT):
            run: list[Stmt] = [st for _, st in lines[lo:lo + SEGMENT]]  # type: ignore[misc]
            after = end - len(lines) + lo + len(run)  # (the index past the run)
            outputs = [k for k, st in enumerate(run)
                       if st.name in escaped or last_read.get(st.name, -1) >= after]
            call = _segment(run, outputs, vartypes, named, helpers, cname)
            body.extend(lines[0][0] + line for line in call)
    return helpers, body


def _segment(run: list[Stmt], outputs: list[int], vartypes: dict[str, str],
             named: dict[tuple, str], helpers: list[str], cname: str) -> list[str]:
    """The lines that call one run of statements as a function (inline if a value it reads
    has no known C type). The function has names of its own (`a<i>` what it reads from
    outside, in the order first read; `v<i>` its i-th statement), so runs that compute alike
    from different names are one function (`named`: its text -> its name; a new one is added
    to `helpers`): a long periodic chain's segments are all one, which gcc then compiles once
    (at -O1 it does not fold identical functions itself)."""
    local: dict[str, str] = {st.name: f"v{k}" for k, st in enumerate(run)}
    inputs: list[str] = []
    for st in run:
        for x in st.form[1::2]:
            if x not in local:
                local[x] = f"a{len(inputs)}"
                inputs.append(x)
    exprs = ["".join(x if j % 2 == 0 else local[x] for j, x in enumerate(st.form)) for st in run]
    intypes, ctypes = tuple(map(vartypes.get, inputs)), tuple(st.ctype for st in run)
    if None in intypes:
        return list(map(str, run))
    key = (ctypes, tuple(exprs), tuple(outputs), intypes)
    fname = named.get(key)
    if fname is None:
        fname = named[key] = f"{cname}_s{len(helpers)}"
        params = ([f"{t} a{j}" for j, t in enumerate(intypes)]
                  + [f"{ctypes[k]} *o{k}" for k in outputs])
        helpers.append("\n".join([
            f"static __attribute__((noinline)) void {fname}({', '.join(params) or 'void'})", "{",
            *(f"  const {ct} v{k} = {e};" for k, (ct, e) in enumerate(zip(ctypes, exprs))),
            *(f"  *o{k} = v{k};" for k in outputs), "}"]))
    call = [f"{run[k].ctype} {run[k].name};" for k in outputs]
    args = inputs + [f"&{run[k].name}" for k in outputs]
    call.append(f"{fname}({', '.join(args)});")
    return call


def render_kernel(ast: UOp, cname: str, restrict: bool = True) -> RenderedKernel:
    """Print one kernel AST as a C function named `cname` (a generated identifier);
    `restrict` false when two parameters may alias."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", cname):
        raise RenderError(f"not a C identifier: {cname!r}")
    return KernelRenderer(ast, restrict).render(cname)


# numerics this renderer does not pin down (documented for users of the C path):
# - float sums may be reassociated (`omp simd reduction`, threads): the result equals
#   numpy's within rounding, not bit for bit (numpy itself sums pairwise).

