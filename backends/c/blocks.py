"""Register blocks of the packed products, each compiled once into a library of its own.

In: the name a kernel calls, `rg_block_<vector type>_<rows>` (gemm.py prints the call). Out:
the library holding it, built (or read from the compile cache) and loaded so that a kernel
library loaded after it binds its calls to it (`RTLD_GLOBAL`).

A register block is the inner loop of a packed product: for each of `rows` rows u,
out[u][0:TJ] = sum_k x_u(k) * w[k][0:TJ], k in order, one fused multiply-add per step, in two
vector registers per row (TJ = two registers of columns). gcc spent a quarter of a packed
matmul's build on its block (53M of 204M compiler instructions; attention's two: 180M of 426M),
the same few lines in every product. Here each block is compiled once per cache, and a
product's kernel calls it once per tile and panel (512^3: 2,752 calls of 512 steps each), with
the same operations in the same order, so the same bits.

x_u(k) is xr[u][xo[k]] with an offset table `xo` (a convolution's window, read in place), or
xr[u][k * xs] without one (a row of A read in place, or of x packed per tile row after row:
xs = 1; x packed a row apart per step, a convolution's: xr[u] = pa + u, xs = rows).
A part-full panel of y read in place (`rg_block_<vector type>_<rows>_last`: y's first column,
its step along k and its `cols`, one vector's to two) keeps the second register on the row's last
vector, overlapping the first: nothing past y's last column is read.

The library also holds the copy of panels of y (`rg_pack_*`): dst[k][0:TJ] = y's values at
src[k * sk + c * sj], zeros past the panel's columns, for a y that is a plain load (a matmul's
B, a convolution's weights, attention's k and v), several panels side by side copied a row of
y at a time (the packing action's `group`; one panel: 1).

The reductions of a row of memory (`rg_reduce_{add,max,min}_f32`, float32) are a library each,
so that a process's first row sum builds its own alone, not every block: a cold 64x256 row sum
took 509 ms of compiler CPU with the blocks (6 compiler runs), 116 ms with the three reductions
and ~55 ms with its own. A row reduction is what a "vector" reduce of a plain
load calls (render.py's `_vector_reduce`: a softmax's row max and sum, a row sum): four vectors
of 8 partial results, each combining every fourth vector of the row, the whole vectors left one
each into the first ones, the values left into the result, then the vectors: the steps the
kernel prints without the library, so the same bits (a max or min: x86's max per vector, NaNs
flagged apart, and the printed steps when a NaN or a zero result needs them: `_reduce_exact`).
Printed in each kernel, a softmax's two reductions took its library from 129M to 158M compiler
instructions; called, 97M.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterable
from functools import cache, partial
from typing import Any

from rulegrad.rules.opt_helpers import REDUCE_VECTORS, VECTOR_LANES
from rulegrad.rules.pack_helpers import PANEL_VECTORS, dot_shape
from rulegrad.runtime.dtype import DType, dtypes
from rulegrad.runtime.env import env_get
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.target import cache_bytes, vector_bytes, vector_registers

from . import vexp, vlog
from .ctext import (
    BLOCK_ROWS,
    HALF_WIDEN,
    REDUCE_OPS,
    VECTOR_HELPERS,
    RenderedKernel,
    block_signature,
    ctype,
    dot_signature,
    pack_signature,
    reduce_name,
    reduce_signature,
    stream_signature,
    vector_names,
)


def name(dt: DType, lanes: int, rows: int) -> str:
    """The block of `rows` rows of two `lanes`-wide registers of dt."""
    vt, _ = vector_names(dt, lanes)
    return f"rg_block_{vt[3:]}_{rows}"


def pack_name(dt: DType, lanes: int) -> str:
    """The copy of panels of y, in the library of the panels' register width."""
    vt, _ = vector_names(dt, lanes)
    return f"rg_pack_{vt[3:]}"


def _pack(dt: DType, lanes: int) -> str:
    # `panels` panels side by side (panel p: columns p * tj on, at dst + p * n * tj), copied a
    # row of y at a time: each step reads panels * tj contiguous columns, not tj of them a row
    # apart (a wide y's panel touches a page per step, where the prefetchers stop: a 1024x4096
    # float32 y copied panel by panel took 1.6 ms of one core, four panels a row at a time 1.1,
    # eight 0.7). Panel p's row: dst[k][0:tj] = src[k * sk + c * sj] for its columns c, then 0
    # (they add nothing). A whole row of contiguous columns is one copy of a known size, which
    # gcc makes two vector moves: the loop over `cols` (a count it does not know) stayed scalar
    # at the cheap vector cost model, and a 512x512 B took 290 us to pack, 75 us so
    # A y read transposed (sk == 1: a weight stored (out, in), `x @ w.T`) is copied 8 steps of
    # k at a time, each column's 8 values one run of its row: the row-at-a-time order read one
    # value of each of tj rows a step, a gather (640x2560 copied into panels of 32: 0.25 ->
    # 0.21 ms of one core, 1024x1024 0.56 -> 0.25, 4096x1024 2.3 -> 1.5; a C bench, best of
    # 200). The same values in the same places.
    ct, tj = ctype(dt), 2 * lanes
    transposed = (
        f"  if (sk == 1 && sj != 1) {{\n"
        f"    for (int64_t p = 0; p < panels; p++) {{\n"
        f"      {ct} *d = dst + p * n * tj;\n"
        f"      const int64_t c0 = p * tj, left = cols - c0 > 0 ? cols - c0 : 0;\n"
        f"      const int64_t m = left < tj ? left : tj;\n"
        f"      int64_t k = 0;\n"
        f"      for (; k + 8 <= n; k += 8) {{\n"
        f"        for (int64_t c = 0; c < m; c++) {{\n"
        f"          const {ct} *s = src + (c0 + c) * sj + k;\n"
        f"          for (int u = 0; u < 8; u++) d[(k + u) * tj + c] = s[u];\n        }}\n"
        f"        for (int64_t c = m; c < tj; c++) for (int u = 0; u < 8; u++) "
        f"d[(k + u) * tj + c] = 0;\n      }}\n"
        f"      for (; k < n; k++) {{\n"
        f"        for (int64_t c = 0; c < m; c++) d[k * tj + c] = src[(c0 + c) * sj + k];\n"
        f"        for (int64_t c = m; c < tj; c++) d[k * tj + c] = 0;\n      }}\n"
        f"    }}\n    return;\n  }}\n")
    return (f"void {pack_name(dt, lanes)}{pack_signature(ct)}\n{{\n{transposed}"
            f"  for (int64_t k = 0; k < n; k++) {{\n"
            f"    const {ct} *s = src + k * sk;\n"
            f"    for (int64_t p = 0; p < panels; p++) {{\n"
            f"      {ct} *d = dst + (p * n + k) * tj;\n"
            f"      const int64_t c0 = p * tj, left = cols - c0 > 0 ? cols - c0 : 0;\n"
            f"      const int64_t m = left < tj ? left : tj;\n"
            f"      if (sj == 1 && m == {tj} && tj == {tj}) {{\n"
            f"        memcpy(d, s + c0, sizeof({ct}) * {tj});\n        continue;\n      }}\n"
            f"      if (sj == 1) for (int64_t c = 0; c < m; c++) d[c] = s[c0 + c];\n"
            f"      else for (int64_t c = 0; c < m; c++) d[c] = s[(c0 + c) * sj];\n"
            f"      for (int64_t c = m; c < tj; c++) d[c] = 0;\n    }}\n  }}\n}}\n")


def half_pack_name(lanes: int) -> str:
    """The copy of panels of a float16 y widened into float32 panels of `lanes`-wide registers
    (`_half_pack`)."""
    return pack_name(dtypes.float32, lanes) + "_h16"


def _half_pack(lanes: int) -> str:
    # `_pack`'s copy, for y's halves (uint16_t) into float32 panels, the same places, each
    # value widened exactly (a float16 matmul is a float32 sum of its operands widened). Eight
    # halves at a time by F16C's conversion where the target has it (one instruction: gcc 12
    # keeps a `_Float16` conversion scalar even with F16C), else lane by lane through
    # HALF_WIDEN, the bits F16C gives (a NaN quiet). Printed, the copy had widened and stored
    # one element of a panel's 16 rows a step through HALF_WIDEN: a float16 x @ w.T of
    # 2x2048x512 spent most of its time there (0.51-0.75x the dots' speed, rev67c). A y read
    # transposed (sk == 1) is read 8 steps of k of 8 columns at a time, each column's 8 halves
    # one run of its row, widened and transposed in registers into 8 rows of the panel.
    sfx = f"v{lanes}"  # (helpers named per library: each is compiled alone, `_one`)
    f8, h8, i8 = f"rg_f8{sfx}_", f"rg_h8{sfx}_", f"rg_i8{sfx}_"
    widen, t8, sh = f"rg_widen8{sfx}_", f"rg_t8{sfx}_", f"RG_SHUF8{sfx}_"

    def shuf(a: str, b: str, mask: tuple[int, ...]) -> str:
        return f"{sh}({a}, {b}, {', '.join(map(str, mask))})"

    lo2, hi2 = (0, 8, 1, 9, 4, 12, 5, 13), (2, 10, 3, 11, 6, 14, 7, 15)
    lo4, hi4 = (0, 1, 8, 9, 4, 5, 12, 13), (2, 3, 10, 11, 6, 7, 14, 15)
    lo8, hi8 = (0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15)
    # column c's 8 values r_c -> step u's 8 columns o_u: pairs, quads, then the halves
    t = [shuf(f"r{2 * q}", f"r{2 * q + 1}", m) for q in range(4) for m in (lo2, hi2)]
    s_ = [shuf(f"t{a}", f"t{a + 2}", m) for a in (0, 1, 4, 5) for m in (lo4, hi4)]
    o = {u: shuf(f"s{u % 4}", f"s{u % 4 + 4}", lo8 if u < 4 else hi8) for u in range(8)}
    helpers = (
        f"typedef float {f8} __attribute__((vector_size(32)));\n"
        f"typedef short {h8} __attribute__((vector_size(16)));\n"
        f"typedef int {i8} __attribute__((vector_size(32)));\n"
        # (clang has no __builtin_shuffle: ctext's VECTOR_HELPERS choose so too)
        f"#ifdef __clang__\n#define {sh}(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)\n"
        f"#else\n#define {sh}(a, b, ...) __builtin_shuffle(a, b, ({i8}){{__VA_ARGS__}})\n#endif\n"
        f"static inline {f8} {widen}(const uint16_t *s) {{\n"
        f"#if defined(__F16C__) && (defined(__GNUC__) || defined(__clang__))\n"
        f"  {h8} h; memcpy(&h, s, 16); return __builtin_ia32_vcvtph2ps256(h);\n#else\n"
        f"  {f8} v; for (int u = 0; u < 8; u++) v[u] = {HALF_WIDEN}(s[u]); return v;\n"
        f"#endif\n}}\n"
        f"static inline void {t8}(const uint16_t *s, int64_t sj, float *d, int64_t tj) {{\n"
        f"  const {f8} " + ", ".join(f"r{c} = {widen}(s + {c} * sj)" for c in range(8)) + ";\n"
        f"  const {f8} " + ", ".join(f"t{a} = {e}" for a, e in enumerate(t)) + ";\n"
        f"  const {f8} " + ", ".join(f"s{a} = {e}" for a, e in enumerate(s_)) + ";\n"
        + "".join(f"  {{ const {f8} o = {o[u]}; memcpy(d + {u} * tj, &o, 32); }}\n"
                  for u in range(8)) + "}\n")
    transposed = (
        "  if (sk == 1 && sj != 1) {\n"
        "    for (int64_t p = 0; p < panels; p++) {\n"
        "      float *d = dst + p * n * tj;\n"
        "      const int64_t c0 = p * tj, left = cols - c0 > 0 ? cols - c0 : 0;\n"
        "      const int64_t m = left < tj ? left : tj;\n"
        "      int64_t k = 0;\n"
        "      for (; k + 8 <= n; k += 8) {\n"
        "        int64_t c = 0;\n"
        f"        for (; c + 8 <= m; c += 8) {t8}(src + (c0 + c) * sj + k, sj, "
        "d + k * tj + c, tj);\n"
        f"        for (; c < m; c++) {{ const {f8} v = {widen}(src + (c0 + c) * sj + k);\n"
        "          for (int u = 0; u < 8; u++) d[(k + u) * tj + c] = v[u]; }\n"
        "        for (; c < tj; c++) for (int u = 0; u < 8; u++) d[(k + u) * tj + c] = 0;\n"
        "      }\n"
        "      for (; k < n; k++) {\n"
        f"        for (int64_t c = 0; c < m; c++) d[k * tj + c] = {HALF_WIDEN}(src[(c0 + c) * sj"
        " + k]);\n"
        "        for (int64_t c = m; c < tj; c++) d[k * tj + c] = 0;\n      }\n"
        "    }\n    return;\n  }\n")
    return (f"{helpers}void {half_pack_name(lanes)}{pack_signature('float', 'uint16_t')}\n"
            f"{{\n{transposed}"
            "  for (int64_t k = 0; k < n; k++) {\n"
            "    const uint16_t *s = src + k * sk;\n"
            "    for (int64_t p = 0; p < panels; p++) {\n"
            "      float *d = dst + (p * n + k) * tj;\n"
            "      const int64_t c0 = p * tj, left = cols - c0 > 0 ? cols - c0 : 0;\n"
            "      const int64_t m = left < tj ? left : tj;\n"
            "      int64_t c = 0;\n"
            f"      if (sj == 1) for (; c + 8 <= m; c += 8) {{ const {f8} v = {widen}(s + c0 + c);"
            " memcpy(d + c, &v, 32); }\n"
            f"      for (; c < m; c++) d[c] = {HALF_WIDEN}(s[(c0 + c) * sj]);\n"
            "      for (; c < tj; c++) d[c] = 0;\n    }\n  }\n}\n")


def half_pack_kernel(lanes: int) -> list[RenderedKernel]:
    """The library of the widening copy of float16 panels (`_half_pack`)."""
    f = half_pack_name(lanes)
    return [RenderedKernel(f, _half_pack(lanes), 0, (), kind="packed", uses=(f, HALF_WIDEN))]


def _reduce(op: Ops) -> str:
    # render.py's `_vector_reduce` as a kernel prints it, step for step: the same bits
    if op is not Ops.ADD:
        return _reduce_exact(op.name.lower(), "__builtin_inff()" if op is Ops.MIN
                             else "-__builtin_inff()")
    lanes, nvec = VECTOR_LANES, REDUCE_VECTORS

    def step(u: int, at: str) -> str:
        return f"a{u} = (a{u} + rg_vload_f32(x + {at}));"

    block = " ".join(step(u, f"k + {u * lanes}") for u in range(nvec))
    # the whole vectors left: the u-th into a_u, as the kernel's loop over them
    left = " ".join(f"if (k + {lanes} <= n) {{ {step(u, 'k')} k += {lanes};"
                    for u in range(nvec - 1)) + " }" * (nvec - 1)
    vectors = "a0"
    for u in range(1, nvec):
        vectors = f"({vectors} + a{u})"
    accs = ", ".join(f"a{u} = a0" for u in range(1, nvec))
    return (f"{VECTOR_HELPERS}float {reduce_name(op)}{reduce_signature('float')}\n{{\n"
            f"  float acc = 0.0f;\n  rg_vf32 a0 = rg_vset_f32(0.0f), {accs};\n"
            f"  int64_t k = 0;\n"
            f"  for (; k + {nvec * lanes} <= n; k += {nvec * lanes}) {{ {block} }}\n"
            f"  {left}\n"
            f"  for (; k < n; k++) acc = (acc + x[k]);\n"
            f"  a0 = {vectors};\n"
            f"  for (int u = 0; u < {lanes}; u++) acc = (acc + a0[u]);\n"
            f"  return acc;\n}}\n")


def _reduce_exact(fn: str, ident: str) -> str:
    # a MAX or MIN, exact in any order, a repeated value changing nothing. The row's pass keeps
    # x86's max (min) per vector, 1 operation: the larger value, the second operand on a tie or
    # a NaN; and ORs each vector's NaN lanes into a flag, 2 more: 3 operations a vector against
    # the 5 of rg_vmax_f32, which orders +-0.0 and propagates NaN on every step (a row max of
    # 4096 values 64 -> 45 us, 256: 74 -> 56, 33: the same; one core). Without a NaN, that is
    # the row's largest value by value; only its sign when it is 0 depends on which zero came
    # last, so a zero result, or a NaN flagged, takes the exact pass (`rg_exact_*`: whole
    # vectors, then one ending at the row's end overlapping them, lanes combined as vectors by
    # rg_vhmax_f32, as render.py's `_vector_reduce` prints it): the same bits either way
    lanes, nvec = VECTOR_LANES, REDUCE_VECTORS
    x86 = {"max": "rg_vgt_f32", "min": "rg_vlt_f32"}[fn]
    exact_step = " ".join(f"a{u} = rg_v{fn}_f32(a{u}, rg_vload_f32(x + k + {u * lanes}));"
                          for u in range(nvec))
    accs = ", ".join(f"a{u} = a0" for u in range(1, nvec))
    flags = ", ".join(f"n{u} = n0" for u in range(1, nvec))
    both = "a0"
    for u in range(1, nvec):
        both = f"rg_v{fn}_f32({both}, a{u})"

    def step(u: int, at: str) -> str:
        return (f"{{ const rg_vf32 v = rg_vload_f32(x + {at}); n{u} |= rg_vnan_f32(v, v); "
                f"a{u} = {x86}(a{u}, v); }}")

    fast = " ".join(step(u, f"k + {u * lanes}") for u in range(nvec))
    pairs = [f"a{u}" for u in range(nvec)]  # the accumulators combined pairwise
    while len(pairs) > 1:
        odd = pairs[len(pairs) & ~1:]
        pairs = [f"{x86}({a}, {b})" for a, b in zip(pairs[::2], pairs[1::2])] + odd
    nan = " | ".join(f"n{u}" for u in range(nvec))
    halves = "".join(f"  a0 = {x86}(a0, rg_vswap_f32(a0, {', '.join(map(str, p))}));\n"
                     for p in _HALVES)
    return (f"{VECTOR_HELPERS}static float rg_exact_{fn}_f32{reduce_signature('float')}\n{{\n"
            f"  rg_vf32 a0 = rg_vset_f32({ident}), {accs};\n  int64_t k = 0;\n"
            f"  for (; k + {nvec * lanes} <= n; k += {nvec * lanes}) {{ {exact_step} }}\n"
            f"  for (; k + {lanes} <= n; k += {lanes}) "
            f"a0 = rg_v{fn}_f32(a0, rg_vload_f32(x + k));\n"
            f"  if (k < n) a1 = rg_v{fn}_f32(a1, rg_vload_f32(x + n - {lanes}));\n"
            f"  return rg_vh{fn}_f32({both});\n}}\n"
            f"float rg_reduce_{fn}_f32{reduce_signature('float')}\n{{\n"
            f"  if (n < {lanes}) {{\n    float acc = {ident};\n"
            f"    for (int64_t k = 0; k < n; k++) acc = rg_{fn}_f32(acc, x[k]);\n"
            f"    return acc;\n  }}\n"
            f"  rg_vf32 a0 = rg_vset_f32({ident}), {accs};\n"
            f"  rg_vi32 n0 = {{0}}, {flags};\n  int64_t k = 0;\n"
            f"  for (; k + {nvec * lanes} <= n; k += {nvec * lanes}) {{ {fast} }}\n"
            f"  for (; k + {lanes} <= n; k += {lanes}) {step(0, 'k')}\n"
            f"  if (k < n) {step(1, f'n - {lanes}')}\n"
            f"  a0 = {pairs[0]};\n{halves}"
            f"  const rg_vi32 nan = {nan};\n  int any = 0;\n"
            f"  for (int u = 0; u < {lanes}; u++) any |= nan[u];\n"
            f"  return any || a0[0] == 0.0f ? rg_exact_{fn}_f32(x, n) : a0[0];\n}}\n")


# the lanes each step of a vector's horizontal max (min) brings together: halves, quarters,
# pairs (ctext.py's RG_VHALVES)
_HALVES = ((4, 5, 6, 7, 0, 1, 2, 3), (2, 3, 0, 1, 6, 7, 4, 5), (1, 0, 3, 2, 5, 4, 7, 6))


def last_name(dt: DType, lanes: int, rows: int) -> str:
    """The register block of `rows` rows over a part-full panel read in place (`_block`'s
    `last`)."""
    return name(dt, lanes, rows) + "_last"


def _block(dt: DType, lanes: int, rows: int, last: bool = False) -> str:
    # `last`: the panel's `cols` columns (one vector's to two) read in place (stream_signature),
    # its second register the last vector of the row, overlapping the first where cols < 2
    # vectors (its own accumulators: each column's sum the same steps in the same order, so
    # the same bits; stored after the first). A whole panel's second vector would read past
    # y's end, and the streamed block keeps its sums in memory: a narrow product's one panel
    # (8x30011x13, two tiles) ran as a copy of y into padded panels, then the block
    vt, fma = vector_names(dt, lanes)
    ct = ctype(dt)
    second, ldw = ("cols - " + str(lanes), "sk") if last else (str(lanes), "ldw")
    us = range(rows)
    acc = " ".join(f"{vt} a{u}_0 = ({vt}){{0}}, a{u}_1 = ({vt}){{0}};" for u in us)
    rowp = " ".join(f"const {ct} *x{u} = xr[{u}];" for u in us)
    step = "\n".join(
        f"    {{ const {vt} x = x{u}[o] - ({vt}){{0}}; a{u}_0 = {fma}(x, w0, a{u}_0); "
        f"a{u}_1 = {fma}(x, w1, a{u}_1); }}" for u in us)
    # w's rows `ldw` apart: a packed panel's (TJ), or y's own where the packing action reads
    # y in place (`Pack.inplace`), whose rows start anywhere: unaligned loads (the same on
    # aligned data)
    body = (f"    const {vt} w0 = *(const {vt}_u *)(w + k * {ldw}), "
            f"w1 = *(const {vt}_u *)(w + k * {ldw} + {second});\n{step}")
    stores = "\n".join(f"  *({vt} *)(out + {u} * ldo) = a{u}_0; "
                       f"*({vt}{'_u' if last else ''} *)(out + {u} * ldo + {second}) = a{u}_1;"
                       for u in us)
    head = (last_name(dt, lanes, rows) + stream_signature(ct) if last
            else name(dt, lanes, rows) + block_signature(ct))
    return (f"void {head}\n{{\n"
            f"  typedef {ct} {vt}_u __attribute__((vector_size({lanes * dt.itemsize}), "
            f"aligned({dt.itemsize})));\n  {rowp}\n  {acc}\n"
            f"  if (xo) for (int64_t k = 0; k < n; k++) {{\n    const int64_t o = xo[k];\n"
            f"{body}\n  }}\n"
            f"  else for (int64_t k = 0; k < n; k++) {{\n    const int64_t o = k * xs;\n"
            f"{body}\n  }}\n{stores}\n}}\n")


# rows of y a streamed block reads side by side per pass over its columns: each sum is loaded
# and stored once per STREAM_STEPS multiply-adds (one at a time, the stores bound it: 2x1024
# x4096 ran 1.8x slower, one step a pass, 0.43 -> 0.78 ms on two cores), while each row of
# y is still read forward, a stream the prefetchers follow
STREAM_STEPS = 4


def stream_name(dt: DType, lanes: int, rows: int) -> str:
    """The streamed block of `rows` rows (`_stream`)."""
    return name(dt, lanes, rows) + "_stream"


def _stream(dt: DType, lanes: int, rows: int) -> str:
    # out[u][0:cols] = sum_k x_u(k) * w[k * sk + 0:cols], y read in place: STREAM_STEPS rows
    # of y at a time, each `cols` columns read forward, the sums in memory (L1: the packing
    # action's `stream` sizes the columns), each output's steps in k order from 0, one fused
    # multiply-add each (vectors, then the columns left one at a time): a register block's
    # operations, so its bits. For a product of one row tile, whose panels would each be read
    # once: packing them copied y to read it back once (2x1024x4096: 1.1 -> 0.43 ms)
    vt, fma = vector_names(dt, lanes)
    ct, steps = ctype(dt), STREAM_STEPS
    sfma = "__builtin_fmaf" if dt is dtypes.float32 else "__builtin_fma"
    us = range(rows)
    ut = f"{vt}_u"  # (y's rows and the columns start anywhere: an unaligned vector)
    mt = "int32_t" if dt.itemsize == 4 else "int64_t"  # (a lane mask)
    rowp = " ".join(f"const {ct} *x{u} = xr[{u}];" for u in us)

    def offsets(count: int) -> str:
        return " ".join(f"const int64_t o{t} = xo ? xo[k + {t}] : (k + {t}) * xs;"
                        for t in range(count))

    def body(count: int) -> str:
        xs = " ".join(f"const {vt} b{u}_{t} = x{u}[o{t}] - ({vt}){{0}};"
                      for u in us for t in range(count))
        ws = " ".join(f"const {ut} w{t} = *(const {ut} *)(w + (k + {t}) * sk + c);"
                      for t in range(count))
        vec = " ".join(f"{{ {vt} a = *({ut} *)(out + {u} * ldo + c); "
                       + " ".join(f"a = {fma}(b{u}_{t}, w{t}, a);" for t in range(count))
                       + f" *({ut} *)(out + {u} * ldo + c) = a; }}" for u in us)
        one = " ".join(f"{{ {ct} a = out[{u} * ldo + c]; "
                       + " ".join(f"a = {sfma}(x{u}[o{t}], w[(k + {t}) * sk + c], a);"
                                  for t in range(count))
                       + f" out[{u} * ldo + c] = a; }}" for u in us)
        # the columns left after the whole vectors: one vector ending at the last column, its
        # lanes before `c` (done already) kept as they were (a scalar tail of up to 15 columns
        # per row and step ran a 6x1536x127 product 1.3x slower); one at a time when the
        # columns are fewer than a vector
        keep = " ".join(f"{{ const {vt} o_ = *({ut} *)(out + {u} * ldo + c); {vt} a = o_; "
                        + " ".join(f"a = {fma}(b{u}_{t}, w{t}, a);" for t in range(count))
                        + f" *({ut} *)(out + {u} * ldo + c) = ({vt})(((mi_)o_ & ~m_) | "
                        f"((mi_)a & m_)); }}" for u in us)
        return (f"    {offsets(count)}\n    {xs}\n    int64_t c = 0;\n"
                f"    for (; c + {lanes} <= cols; c += {lanes}) {{ {ws}\n      {vec} }}\n"
                f"    if (c < cols && cols >= {lanes}) {{\n"
                f"      const mi_ m_ = lane_ >= ({mt})(c - (cols - {lanes})); c = cols - {lanes};\n"
                f"      {ws}\n      {keep}\n      c = cols;\n    }}\n"
                f"    for (; c < cols; c++) {{ {one} }}\n")

    zero = " ".join(f"out[{u} * ldo + c] = 0;" for u in us)
    return (f"void {stream_name(dt, lanes, rows)}{stream_signature(ct)}\n{{\n"
            f"  typedef {ct} {ut} __attribute__((vector_size({lanes * dt.itemsize}), "
            f"aligned({dt.itemsize})));\n"
            f"  typedef {mt} mi_ __attribute__((vector_size({lanes * dt.itemsize})));\n"
            f"  const mi_ lane_ = {{{', '.join(map(str, range(lanes)))}}};\n  {rowp}\n"
            f"  for (int64_t c = 0; c < cols; c++) {{ {zero} }}\n  int64_t k = 0;\n"
            f"  for (; k + {steps} <= n; k += {steps}) {{\n{body(steps)}  }}\n"
            f"  for (; k < n; k++) {{\n{body(1)}  }}\n}}\n")


def kernels(dt: DType, lanes: int) -> list[RenderedKernel]:
    """The library of dt's blocks in `lanes`-wide registers: its register blocks and its panel
    copies."""
    # one per row count; each a library of its own (`_one`), built when a kernel first calls
    # it (all in one: 353M compiler instructions, ~90 ms, for the one or two a product calls);
    # each uses its own declaration in the prelude
    return [RenderedKernel(f, make(dt, lanes, rows), 0, (), kind="packed", uses=(f,),
                           gated=named is stream_name)  # (its offsets: `xo ? xo[k] : k * xs`)
            for named, make in ((name, _block), (stream_name, _stream),
                                (last_name, partial(_block, last=True)), (dot_name, _dot))
            for rows in BLOCK_ROWS if (f := named(dt, lanes, rows))] + [
        RenderedKernel(f, _pack(dt, lanes), 0, (), kind="packed", uses=(f,))
        for f in (pack_name(dt, lanes),)]


def reductions(which: str | None = None) -> list[RenderedKernel]:
    """The float32 row reductions (`which`: the one of that name, "add", "max" or "min"): each
    is a library of its own."""
    return [RenderedKernel(reduce_name(op), _reduce(op), 0, (), kind="packed",
                           uses=(reduce_name(op),))
            for op, name in REDUCE_OPS.items() if which in (None, name)]


def _one(cname: str, dt: DType, lanes: int) -> list[RenderedKernel]:
    """The library of one block or panel copy of dt's in `lanes`-wide registers (a kernel
    calls one or two of the 16: a cold 64x96x48 matmul's build took 467 ms of compiler CPU
    with them all)."""
    return [k for k in kernels(dt, lanes) if k.cname == cname]


def _exp_library() -> list[RenderedKernel]:
    """The float32 exp's and log's library: rg_expf, rg_logf and their SIMD clones (vexp.py,
    vlog.py): one library, so a log_softmax's kernels load one."""
    return [RenderedKernel(vexp.NAME, vexp.SOURCE + vlog.SOURCE, 0, (), kind="packed")]


# build.py's `build_library` (rendered kernels, dlopen mode -> a loaded library): handed in by
# the builder, which loads the blocks a kernel calls before the kernel, so this module never
# imports it back
Builder = Callable[..., Any]

_lock = threading.Lock()
_loaded: dict[str, object] = {}  # vector type (a reduction's, exp's) -> its library, once


@cache
def _libraries() -> dict[str, tuple[str, Callable[[], list[RenderedKernel]]]]:
    """Each function of the block library -> its library's key and kernels: a block or panel
    copy, a row reduction (8-lane vectors whatever the target), the float32 exp (its prelude
    binds expf to rg_expf) are each a library, so a first product, sum or sigmoid builds what
    it calls alone."""
    table = {vexp.NAME: ("exp", _exp_library), vlog.NAME: ("exp", _exp_library)}
    table.update((reduce_name(op), (f"reduce_{which}", partial(reductions, which)))
                 for op, which in REDUCE_OPS.items())
    for dt, width in itertools.product((dtypes.float32, dtypes.float64), (32, 64)):
        lanes = width // dt.itemsize
        for f in (pack_name(dt, lanes), *(named(dt, lanes, rows) for rows in BLOCK_ROWS
                                          for named in (name, stream_name, last_name,
                                                        dot_name))):
            table[f] = (f, partial(_one, f, dt, lanes))
    for width in (32, 64):
        table[half_pack_name(width // 4)] = (half_pack_name(width // 4),
                                             partial(half_pack_kernel, width // 4))
    return table


def load_for(calls: Iterable[str], build: Builder) -> None:
    """Load (building once per cache, with `build`) the block libraries of the functions
    `calls` (kernels' RenderedKernel.calls), before the library holding the kernels is loaded."""
    libraries = {}
    for call in calls:
        if call not in _libraries():
            raise ValueError(f"{call!r} is no function of the block library")
        libraries.update([_libraries()[call]])
    for key, library in sorted(libraries.items()):
        if key == "exp":  # (of the core the flags' target takes: vexp.TAG)
            key = "\0".join((key, env_get("RULEGRAD_CC") or "", env_get("RULEGRAD_CFLAGS") or ""))
        with _lock:
            if key in _loaded:
                continue
            _loaded[key] = build(library(), mode=os.RTLD_NOW | os.RTLD_GLOBAL)


def load_float32(build: Builder) -> None:
    """Load the float32 blocks of this target's width (runtime/target.py) and the row
    reductions: what a process's first float32 product and row sum load, for a caller that
    counts builds to take them out of the way."""
    load_for([k.cname for k in kernels(dtypes.float32, vector_bytes() // 4)], build)
    load_for([reduce_name(op) for op in REDUCE_OPS], build)


def load_exp(build: Builder) -> None:
    """Load the float32 exp's library (vexp.py): what a process's first float32 exp loads."""
    load_for([vexp.NAME], build)


def dot_name(dt: DType, lanes: int, rows: int) -> str:
    """The register-tiled dot of `rows` rows (`_dot`)."""
    vt, _ = vector_names(dt, lanes)
    return f"rg_dot_{vt[3:]}_{rows}"


def dot_chunk(rows: int, columns: int, itemsize: int, lanes: int) -> int:
    """A tiled dot's steps of k per pass over its columns: the tile's rows' and `columns`
    columns' values for them fill half of one core's L1 (runtime/target.py), so every column
    block after the first reads x from L1 and each column of y is read once per tile."""
    per = (cache_bytes(1) // 2) // ((rows + columns) * itemsize)
    return max(lanes, per // lanes * lanes)


def _dot(dt: DType, lanes: int, rows: int) -> str:
    # out[u * ldo + c] = x_u . w_c for u < rows, c < cols: x_u = xr[u][0:n], w_c = w[c * sj:
    # c * sj + n] (x @ w.T: both read forward along k). Lane l of each output's vector of
    # partial sums adds x_u[k] * w_c[k] for k = l, l + lanes, ... in k order from +0.0, one
    # fused multiply-add each; at the end the lanes are summed in a fixed tree (halves), then
    # the tail of k past the last whole vector is added step by step in k order. Each output's
    # operations depend on n and the lanes only, not on the tile, its row groups, the column
    # blocks or the k chunks: a row's result is the same in a product of any number of rows.
    # Register tile: the rows in even groups of at most R, C columns at a time, R * C
    # accumulators (dot_shape), each loaded vector of x used C times and of w R times; k in
    # chunks (dot_chunk) so x's rows are read from L1 by every column block after the first,
    # the partial sums kept in `s_` between chunks (loaded and stored once per chunk)
    vt, fma = vector_names(dt, lanes)
    ct = ctype(dt)
    ut = f"{vt}_u"
    tj = PANEL_VECTORS * lanes  # (a panel's columns, pack_helpers' `panel_width`: per panel)
    big, cols_c = dot_shape(rows, vector_registers(), tj)
    chunk = dot_chunk(rows, tj, dt.itemsize, lanes)
    groups = -(-rows // big)
    sizes = [rows // groups + (g < rows % groups) for g in range(groups)]
    starts = [sum(sizes[:g]) for g in range(groups)]

    def block(first: int, count: int, width: int) -> str:
        us, qs = range(first, first + count), range(width)
        load = " ".join(f"{vt} a{u}_{q} = s_[{u} * {tj} + c + {q}];" for u in us for q in qs)
        step = (" ".join(f"const {vt} v{u} = *(const {ut} *)(x{u} + k);" for u in us) + " " +
                " ".join(f"{{ const {vt} w_ = *(const {ut} *)(w + (c + {q}) * sj + k); " +
                         " ".join(f"a{u}_{q} = {fma}(v{u}, w_, a{u}_{q});" for u in us) + " }"
                         for q in qs))
        store = " ".join(f"s_[{u} * {tj} + c + {q}] = a{u}_{q};" for u in us for q in qs)
        return (f"      {{ {load}\n        for (int64_t k = k0; k < k1; k += {lanes}) {{ "
                f"{step} }}\n        {store} }}\n")

    groups_text = "".join(
        f"    for (c = 0; c + {cols_c} <= cols; c += {cols_c})\n{block(f, n, cols_c)}"
        f"    for (; c < cols; c++)\n{block(f, n, 1)}"
        for f, n in zip(starts, sizes))
    rowp = " ".join(f"const {ct} *x{u} = xr[{u}];" for u in range(rows))
    sfma = "__builtin_fmaf" if dt is dtypes.float32 else "__builtin_fma"
    tree = "".join(f"      for (int l = 0; l < {h}; l++) t_[l] += t_[l + {h}];\n"
                   for h in (lanes >> i for i in range(1, lanes.bit_length())) if h)
    return (f"void {dot_name(dt, lanes, rows)}{dot_signature(ct)}\n{{\n"
            f"  typedef {ct} {ut} __attribute__((vector_size({lanes * dt.itemsize}), "
            f"aligned({dt.itemsize})));\n  {rowp}\n"
            f"  {vt} s_[{rows * tj}];\n"
            f"  for (int i = 0; i < {rows * tj}; i++) s_[i] = ({vt}){{0}};\n"
            f"  const int64_t nv = n - n % {lanes};\n  int64_t c;\n"
            f"  for (int64_t k0 = 0; k0 < nv; k0 += {chunk}) {{\n"
            f"    const int64_t k1 = k0 + {chunk} < nv ? k0 + {chunk} : nv;\n"
            f"{groups_text}  }}\n"
            f"  for (int u = 0; u < {rows}; u++)\n"
            f"    for (c = 0; c < cols; c++) {{\n"
            f"      {ct} t_[{lanes}];\n"
            f"      for (int l = 0; l < {lanes}; l++) t_[l] = s_[u * {tj} + c][l];\n"
            f"{tree}"
            f"      {ct} a = t_[0];\n"
            f"      for (int64_t k = nv; k < n; k++) a = {sfma}(xr[u][k], w[c * sj + k], a);\n"
            f"      out[u * ldo + c] = a;\n    }}\n}}\n")
