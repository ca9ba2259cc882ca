"""libm's functions with one implementation per process: each call of log, sin, cos, exp2, log2,
pow (float32 and float64) and float64's exp gives the same bits for the same input, in a vector
loop, its remainder or a scalar loop (float32's exp: vexp.py's core, the same way).

In: nothing (C text). Out: `DECLARATION`, which binds the functions render.py's op table prints
(`logf`, `sin`, `rg_cos`, `pow`, ...) to this library's symbols (`rg_m_logf_e`, ...) with SIMD
clones, and `SOURCE`, the library: each function and its clones `_ZGV{b,c,d,e}N..v_rg_m_..`
(the x86-64 vector ABI, which gcc's vectorizer calls), every one a call of ONE of glibc's
libmvec variants, the widest the build's target has (`_ZGVeN8v_sin` with AVX-512, else
`_ZGVdN4v_sin` with AVX2, else `_ZGVbN2v_sin`): a narrower clone pads its lanes to it, a
wider one splits, and the scalar function puts its value in every lane.

Why: libm's scalar functions and libmvec's variants round differently. Over 200,000 draws,
libm's sin and libmvec's `_ZGVdN4v_sin` disagreed on 63% of them, `_ZGVdN8v_exp2f` and
`_ZGVeN16v_exp2f` on 21%; and gcc's loop over `sin` called all three kinds (AVX-512 body,
AVX2 epilogue, scalar tail). A value computed twice, once in each kind of loop, then differed
by ulps and an equality between them failed: `(x.cos() == x.cos().max(0))` missed the max,
argmax gave INT32_MAX, a max's gradient was NaN. Each variant computes a lane from its own
value alone (its special inputs through libm's scalar function, lane by lane), so one variant
is one function of the input.

Why the widest: a vector loop keeps the speed it had (ns per value in an L1 loop, AVX-512
against AVX2: logf 0.28 / 0.38, log2f 0.19 / 0.42, exp2 0.54 / 0.89, powf 1.87 / 2.52); pinned
to AVX2, a 1M-element log2f and a row sum of float64 exps ran 1.3-1.5x slower. The price is a
scalar call (a loop's remainder, a loop gcc does not vectorize): through this library, cosf
5.8 ns against libm's 3.0 (AVX2's 4.6), sin 5.6 against 8.3, and a pow's vector call costs
~25 ns whatever its lanes. A loop left scalar (a max over rows of 9 of cosf, whose rows the
renderer does not vectorize) ran 1.8x slower than with libm's scalar cosf.

Without libmvec (RG_MVEC unset), another CPU or another compiler, no tag is defined: the
kernels call libm's scalar functions, one implementation too.
"""

from __future__ import annotations

NAME = "rg_m"  # the library's key (blocks.py) and the kernels' name for it (RenderedKernel.calls)

# The variant a build's target pins names the symbols (`rg_m_sin_e`): a kernel built under other
# flags than an earlier library (RULEGRAD_CFLAGS changed within a process) binds to a library
# of its own (blocks.py keys it by the flags), never to clones another target lacks.
TAG = r"""
#if defined(RG_MVEC) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) \
  && !defined(RG_LIBM_TAG)
#if defined(__AVX512F__)
#define RG_LIBM_TAG "_e"
#define RG_LIBM_PIN 'e'
#elif defined(__AVX2__)
#define RG_LIBM_TAG "_d"
#define RG_LIBM_PIN 'd'
#else
#define RG_LIBM_TAG "_b"
#define RG_LIBM_PIN 'b'
#endif
#endif"""

# (C name, libm's name, type, arguments): cos under another C name (render.py's prelude: gcc
# merges a sin and a cos of one value into a sincos, which no loop vectorizes)
FUNCTIONS = (
    ("logf", "logf", "float", 1), ("exp2f", "exp2f", "float", 1),
    ("log2f", "log2f", "float", 1), ("sinf", "sinf", "float", 1),
    ("rg_cosf", "cosf", "float", 1), ("powf", "powf", "float", 2),
    ("exp", "exp", "double", 1), ("log", "log", "double", 1), ("exp2", "exp2", "double", 1),
    ("log2", "log2", "double", 1), ("sin", "sin", "double", 1),
    ("rg_cos", "cos", "double", 1), ("pow", "pow", "double", 2),
)

# What a kernel that calls one of them gets in its prelude (render.py): each bound, with SIMD
# clones, to this library's symbol (a redeclaration of the builtin with an asm label, as
# vexp.DECLARATION binds expf); without a tag, libm's own (cos under its C name). pow has
# clones too: gelu's x ** 3 as a scalar call per element kept a product's epilogue (and every
# loop with it) from vectorizing.
DECLARATION = TAG + "\n#ifdef RG_LIBM_TAG\n" + "\n".join(
    f'__attribute__((simd("notinbranch"))) {t} {c}({", ".join([t] * n)}) '
    f'__asm__("rg_m_{m}" RG_LIBM_TAG);' for c, m, t, n in FUNCTIONS) + \
    '\n#else\nfloat rg_cosf(float) __asm__("cosf"); double rg_cos(double) __asm__("cos");\n#endif'

# the vector ABI's ISAs: (letter, the macro a target defines, register bytes)
_ISAS = (("b", None, 16), ("c", "__AVX__", 32), ("d", "__AVX2__", 32), ("e", "__AVX512F__", 64))


def _types() -> str:
    """The vector types of every ISA's registers: `rg_m_{b,c,d,e}_{float,double}`."""
    out = []
    for isa, macro, size in _ISAS:
        text = " ".join(f"typedef {t} rg_m_{isa}_{t} __attribute__((vector_size({size})));"
                        for t in ("float", "double"))
        out.append(text if macro is None else f"#ifdef {macro}\n{text}\n#endif")
    return "\n".join(out)


def _definitions(pin: str, width: int) -> str:
    """Every function of FUNCTIONS and its clones through libmvec's variant `pin` (registers of
    `width` bytes)."""
    out = []
    for _, m, t, n in FUNCTIONS:
        size = 4 if t == "float" else 8
        w, vt = width // size, f"rg_m_{pin}_{t}"  # the pinned variant's lanes and type
        pinned = f"_ZGV{pin}N{w}{'v' * n}_{m}"
        vs = ", ".join(f"v{i}" for i in range(n))
        out.append(f"{vt} {pinned}({', '.join([vt] * n)});")
        # the scalar function: its value in every lane
        sig = ", ".join(f"{t} x{i}" for i in range(n))
        fill = " ".join(f"{vt} v{i}; for (int i = 0; i < {w}; i++) v{i}[i] = x{i};"
                        for i in range(n))
        out.append(f'{t} rg_m1_{m}({sig}) __asm__("rg_m_{m}" RG_LIBM_TAG);\n'
                   f"{t} rg_m1_{m}({sig}) {{ {fill} return {pinned}({vs})[0]; }}")
        for isa, macro, size_ in _ISAS:  # each clone: its lanes padded with lane 0, or split
            lanes, ct = size_ // size, f"rg_m_{isa}_{t}"
            total = max(lanes, w)
            body = (f"{t} a[{n}][{total}], r[{total}]; "
                    + " ".join(f"memcpy(a[{i}], &x{i}, {size_}); for (int i = {lanes}; "
                               f"i < {total}; i++) a[{i}][i] = a[{i}][0];" for i in range(n))
                    + f" for (int j = 0; j < {total}; j += {w}) {{ "
                    + " ".join(f"{vt} v{i}; memcpy(&v{i}, a[{i}] + j, {width});"
                               for i in range(n))
                    + f" const {vt} y = {pinned}({vs}); memcpy(r + j, &y, {width}); }}"
                    + f" {ct} o; memcpy(&o, r, {size_}); return o;")
            sig = ", ".join(f"{ct} x{i}" for i in range(n))
            sym = f"_ZGV{isa}N{lanes}{'v' * n}_rg_m_{m}"
            text = (f'{ct} rg_m{isa}_{m}({sig}) __asm__("{sym}" RG_LIBM_TAG);\n'
                    f"{ct} rg_m{isa}_{m}({sig}) {{ {body} }}")
            out.append(text if macro is None else f"#ifdef {macro}\n{text}\n#endif")
    return "\n".join(out)


# The library: under the tag's variant, each function and its clones (nothing without a tag)
SOURCE = TAG + "\n#ifdef RG_LIBM_TAG\n" + _types() + "\n" + "\n".join(
    f"#{'if' if i == 0 else 'elif'} RG_LIBM_PIN == '{pin}'\n{_definitions(pin, width)}"
    for i, (pin, width) in enumerate((("e", 64), ("d", 32), ("b", 16)))) + \
    "\n#endif\n#endif\nint rg_m_loaded;\n"
