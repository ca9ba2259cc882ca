"""The C compiler's flags: the user's tuning, plus the flags rulegrad's semantics need.

In: `RULEGRAD_CFLAGS` (or the default tuning and the kernel's kind). Out: the flag list of a
build. Unset, each kernel is compiled at the optimization level its kind needs (`LEVELS`);
set, the user chooses optimization and target (`-O2`, `-march=...`, `-fopenmp`, ...) for every
kernel, and no level of ours is added; the flags that make C compute what numpy computes
(`SEMANTIC`) are always added, last.

The user's words (RULEGRAD_CFLAGS, and RULEGRAD_CC's after its program) are checked against an
allow-list of flags known not to change results (`allowed`): anything else (`-ffast-math`,
`-specs=FILE`, `-Dexpf=exp2f`, `@FILE`, `-include`, a file name, an unknown flag) is refused with
an error naming it and what is allowed, at the first build, never silently. The environment
variables compilers read that could change results (CPATH, GCC_EXEC_PREFIX, ...:
`COMPILER_ENV`) are cleared from every compiler run's environment (`compiler_env`).
"""

from __future__ import annotations

import os
import re
import shlex

# -march=native: vectorize for this CPU (the level: LEVELS, per kind of kernel).
# -fno-math-errno: sqrt & co. need not set errno, so they vectorize; values are unchanged.
# -fno-trapping-math: no program reads the floating-point exception flags, so gcc may compute
# both sides of a select and blend them (clang's default); without it a NaN-propagating max
# never vectorizes (a comparison "could trap"), and a 2x2 max-pool runs 7x slower. Values are
# unchanged. -fopenmp: the `omp` pragmas the renderer writes (without it the kernels run on one
# thread, with the same results).
# -fno-thread-jumps: gcc's jump threading copies the code between two selects on one condition
# into both of its paths (the second select is then known on each), and the vectorizer's
# if-conversion computes both copies in every lane. A sigmoid, `e = exp(c ? -x : x)` then
# `c ? 1/(1+e) : e/(1+e)`, called the vector exp twice and divided twice per element:
# (x*y + 1.5).sigmoid() * x over 4M ran 7.7 -> 3.0 ms on one thread, the same bits. The loops
# the renderer writes have no branch that threading would save (values are unchanged).
# But not for a kernel with a gated read (`g ? p[i] : 0`, a pad or a mask): there, threading
# is what kept gcc 12.2 from a wrong-code bug. Without it, a gate that holds for a whole inner
# loop (a scan's window, `t < r1`) is if-converted into masked loads, and when that inner loop
# is short (unrolled whole by gcc, or by the UNROLL action) the vectorizer runs the outer loop
# with the loads as one group and gives every vector of the group the first vector's mask
# (by all signs gcc PR 114375, fixed in later releases): an int32 cumsum along the middle
# axis of 3x4x5 gave its input back. Threading splits such a loop on its gate before it is
# vectorized, so a kernel with a gated read gets -fthread-jumps, last (`cflags`' `gated`;
# RenderedKernel.gated).
DEFAULT_TUNING = "-march=native -fno-math-errno -fno-trapping-math -fno-thread-jumps -fopenmp"
# The optimization level per kind of kernel (render.RenderedKernel.kind). Kernels written as
# explicit vectors or register tiles (gemm.py, flash.py, render.py's vector paths) leave -O3
# little to win and it spent most of a build on them (cc1 instructions under callgrind, -O3 /
# -O1: 2x2 max-pool 507M / 157M, matmul+bias+relu 952M / 344M). -O1 alone does not vectorize
# the plain loops beside them (softmax ran 6.5x, attention 20x slower); with -ftree-vectorize
# they ran as fast as at -O3 (medians of 75 calls, interleaved, the same bits). Plain loops keep
# -O3 (at -O1 -ftree-vectorize a column sum ran 1.7x slower). -fno-tree-bit-ccp: gcc's
# known-bits propagation spent a sixth of a pool's build (3x3 max-pool 193M / 161M) and changed
# nothing computed nor how fast (0.98-1.04x). A kernel with no plain loop (the pools) skips
# -ftree-vectorize: 7% of its build, the same speed.
# The packed products, their tiles reading x through a pointer per row and their rows'
# divisions out of the k loops (gemm.py's _RowOffsets), run at -O1 -ftree-vectorize as fast as
# at -O2 (matmul 1.05x, conv 0.98, MLP 1.03, one and two threads) for two thirds of its
# compiler work (matmul 316M -> 212M); the -falign-* flags of -O2 are kept: without them a
# tile's loop ran 14% slower in one build than another (its place in a cache line).
# A flash kernel whose blocks are the block library's (blocks.py) is loops around calls, a
# row's softmax and stores: -fira-region=one and -fno-ivopts took attention 8x256x64's build
# 235M -> 196M, kernel times within 2%. With its blocks printed (RULEGRAD_BLOCK_LIBRARY=0, a
# computed operand) attention ran 8% slower so: such a kernel is compiled as a packed one.
_ALIGN = "-falign-functions -falign-jumps -falign-labels -falign-loops"
LEVELS = {"loops": "-O3", "vector": "-O1 -ftree-vectorize -fno-tree-bit-ccp",
          "packed": f"-O1 -ftree-vectorize -fno-tree-bit-ccp {_ALIGN}",
          "flash": "-O1 -ftree-vectorize -fno-tree-bit-ccp -fira-region=one -fno-ivopts",
          "explicit": "-O1 -fno-tree-bit-ccp"}
DEFAULT_LEVEL = "-O3"  # a kind not in LEVELS
# -fwrapv: signed overflow wraps, as numpy's ints. -ffp-contract=off: a*b+c stays two roundings,
# as numpy computes it (the packed matmul loops call fma() explicitly).
# -fvect-cost-model=very-cheap: gcc 12.2's loop vectorizer under its default (dynamic) cost
# model drops lanes of padded reads followed by a select (a 2x3 pad + relu lost one of its three
# positive values when called on numpy's buffers; found by `rulegrad fuzz --backend c`, seeds
# 167, 439, 446); the very-cheap model vectorizes only loops it can replace whole, and gives
# the right values on all three. The packed matmul loops vectorize by hand and are unaffected.
# What it costs: nothing measurable. bench/kernels.py's 16 cases, kernels alone, built both ways
# and timed side by side on one thread (best of 25): very-cheap / dynamic between 0.41 and 1.21,
# 13 of 16 within 0.84-1.06 and no case consistently slower (a loaded machine). Always added,
# last.
SEMANTIC = ("-fwrapv", "-ffp-contract=off", "-fvect-cost-model=very-cheap")

# The flags a build may take from the user (RULEGRAD_CFLAGS, and RULEGRAD_CC's words after the
# program): an ALLOW-list of flags known to change how fast a kernel runs, never what it computes.
# A deny-list always missed one: `-specs=FILE` (a specs file adding -ffast-math), `-Dexpf=exp2f`
# (a macro renaming a function of the prelude), `@FILE` (flags read from a file), `-include`,
# `-I` (another header), `-Wl,...` and `-Wa,...` (other programs' options), a source or object
# file. Anything not listed here is refused with its name and this list.
_ALLOWED = frozenset({
    # optimization levels (-Ofast is -ffast-math: refused below)
    "-O", "-O0", "-O1", "-O2", "-O3", "-Os", "-Og",
    # OpenMP: threads and `omp simd`, same values (the kernels' reductions are not `omp` ones)
    "-fopenmp", "-fopenmp-simd",
    # the semantic flags themselves and the defaults of safe math, spelled out
    "-fwrapv", "-ffp-contract=off", "-fno-fast-math", "-fmath-errno", "-fno-math-errno",
    "-ftrapping-math", "-fno-trapping-math", "-fsigned-zeros", "-fno-unsafe-math-optimizations",
    "-fno-associative-math", "-fno-reciprocal-math", "-fno-finite-math-only",
    "-fhonor-nans", "-fhonor-infinities", "-ffp-model=strict", "-mfpmath=sse",
    # code generation that keeps every value: vectorizing (under -ffp-contract=off and no
    # reassociation a vector lane computes what the scalar loop does), unrolling, alignment,
    # register allocation, frame pointers, position independence, hardening, debug info
    "-ftree-vectorize", "-fno-tree-vectorize", "-ftree-loop-vectorize",
    "-fno-tree-loop-vectorize", "-ftree-slp-vectorize", "-fno-tree-slp-vectorize",
    "-funroll-loops", "-fno-unroll-loops", "-funroll-all-loops", "-fpeel-loops",
    "-fsplit-loops", "-fprefetch-loop-arrays", "-fno-prefetch-loop-arrays",
    "-fno-tree-bit-ccp", "-fno-ivopts", "-fthread-jumps", "-fno-thread-jumps",
    "-fomit-frame-pointer", "-fno-omit-frame-pointer",
    "-fstrict-aliasing", "-fno-strict-aliasing", "-fno-plt", "-fno-semantic-interposition",
    "-fPIC", "-fpic", "-fno-common", "-fstack-protector", "-fstack-protector-strong",
    "-fstack-protector-all", "-fno-stack-protector", "-fstack-clash-protection",
    "-fcf-protection", "-pipe", "-w", "-g", "-g0", "-g1", "-g2", "-g3", "-ggdb",
})
# flags with a value, any value: their prefixes
_ALLOWED_PREFIXES = (
    "-march=", "-mtune=", "-mcpu=",  # which CPU: which instructions, not what they compute
    "-mprefer-vector-width=", "-falign-functions", "-falign-jumps", "-falign-labels",
    "-falign-loops", "-fira-region=", "-fira-algorithm=", "-fvect-cost-model=",
    "-fsimd-cost-model=", "-fmax-errors=", "-fdiagnostics-color=",
    "--param=",  # the optimizers' limits (unrolling, inlining): never a value
)
# instruction set extensions (-mavx2, -mno-avx512f, ...): which instructions, not what they
# compute (FMA instructions are not used for a*b+c under -ffp-contract=off)
_ISA = re.compile(r"-m(no-)?(sse[1-4]?(\.[12])?|sse4a|ssse3|avx|avx2|avx512[a-z0-9]+|avxvnni|fma|"
                  r"fma4|f16c|bmi2?|popcnt|lzcnt|aes|pclmul|movbe|sha|adx|rdrnd|rdseed|"
                  r"vzeroupper|xsave[a-z]*|neon|sve2?|simd)")
# warnings (not -Wl, -Wa, -Wp: those pass options to other programs)
_WARNING = re.compile(r"-W(no-)?[a-z][a-z0-9+=-]*")
# a compiler launcher RULEGRAD_CC may name before the compiler ("ccache gcc")
LAUNCHERS = ("ccache", "sccache")

# flags that are known to change results, and why: the message says so in words
_REFUSED = {
    "-ffast-math": "assumes no NaN or inf and reorders float arithmetic",
    "-Ofast": "turns on -ffast-math",
    "-funsafe-math-optimizations": "reorders float arithmetic",
    "-fassociative-math": "reorders float sums and products",
    "-freciprocal-math": "replaces x/y by x*(1/y)",
    "-ffinite-math-only": "assumes no NaN or inf",
    "-fno-honor-nans": "assumes no NaN",
    "-fno-honor-infinities": "assumes no inf",
    "-fno-signed-zeros": "ignores the sign of zero",
    "-fapprox-func": "approximates exp, log, sin, ...",
    "-menable-unsafe-fp-math": "reorders float arithmetic",
    "-mdaz-ftz": "flushes denormals to zero",
    "-fsingle-precision-constant": "rounds double constants to float",
    "-fno-wrapv": "makes signed overflow undefined (numpy's ints wrap)",
    "-fstrict-overflow": "makes signed overflow undefined (numpy's ints wrap)",
    "-ftrapv": "aborts on signed overflow (numpy's ints wrap)",
    # x86-64's floats live in SSE registers; without SSE (or SSE2, for doubles) gcc computes
    # them on the x87 unit in extended precision, and a float64 sum rounds twice (1 + (2^-53
    # + 2^-80) is 1.0, numpy's is 1 + 2^-52): these two are no mere choice of instructions
    "-mno-sse": "computes floats on the x87 unit in extended precision, rounding twice",
    "-mno-sse2": "computes doubles on the x87 unit in extended precision, rounding twice",
}
_REFUSED_PREFIX: tuple[tuple[str | tuple[str, ...], str], ...] = (
    ("-ffp-contract=", "fuses a*b+c into one rounding"),
    ("-ffp-model=", "relaxes float semantics"),
    ("-mfpmath=", "computes in x87 extended precision"),
    ("-mrecip", "approximates division and square root"),
    ("-specs", "reads a specs file, which may add any flag (-ffast-math)"),
    ("@", "reads more flags from a file"),
    ("-D", "defines a macro, which may rename a function of the kernels (-Dexpf=exp2f)"),
    ("-U", "undefines a macro the kernels may use"),
    ("-include", "puts another file into every kernel's source"),
    ("-imacros", "puts another file's macros into every kernel's source"),
    (("-I", "-isystem", "-iquote", "-idirafter"), "reads headers from another folder"),
    ("-B", "runs the compiler's programs from another folder"),
    (("-Wl,", "-Xlinker"), "passes options to the linker"),
    ("-Wa,", "passes options to the assembler"),
    ("-Wp,", "passes options to the preprocessor"),
    ("-L", "links libraries from another folder"),
    ("-l", "links another library (which may replace expf, ...)"),
)
# the environment variables the compiler, its programs or the linker read, which could change
# what a kernel computes (another header, another cc1, another libm, extra options): cleared
# from the environment of every compiler run (`compiler_env`). LD_LIBRARY_PATH is kept: a
# compiler installed outside the system's folders may need it to start at all.
COMPILER_ENV = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
                "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", "GCC_COMPARE_DEBUG",
                "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "CCC_OVERRIDE_OPTIONS",
                "COLLECT_GCC_OPTIONS", "COLLECT_GCC", "COLLECT_LTO_WRAPPER", "LD_PRELOAD",
                "LD_RUN_PATH", "CL", "_CL_")


class CFlagsError(ValueError):
    """RULEGRAD_CFLAGS or RULEGRAD_CC holds a flag that may change results, or cannot be read."""


# gcc's own flags, which other compilers (clang) refuse or ignore with a warning: left out for
# them (clang has no known-bits pass to turn off, vectorizes without gcc 12.2's cost-model bug,
# aligns loops itself, and has neither gcc's register allocator regions, its IV optimizer nor its
# jump-threading switch)
GCC_ONLY = ("-fno-tree-bit-ccp", "-fvect-cost-model=", "-falign-", "-fira-", "-fno-ivopts",
            "-fno-thread-jumps", "-fthread-jumps")


def for_compiler(flags: list[str], gcc: bool) -> list[str]:
    """`flags` as the compiler takes them: gcc's own (GCC_ONLY) left out for another one."""
    return flags if gcc else [f for f in flags if not f.startswith(GCC_ONLY)]


def cflags(env: str | None = None, kind: str | None = None, openmp: bool = True,
           gated: bool = False) -> list[str]:
    """The flags of a build: the user's (`RULEGRAD_CFLAGS`), else the level of the kernel's
    `kind` (LEVELS) and `DEFAULT_TUNING`; then `SEMANTIC`, and -fthread-jumps for a kernel
    with a gated read (`gated`: gcc 12.2 miscompiles some without it, above). A kernel that
    starts no threads of its own (`openmp` false: serial, or launched by launch.py) takes
    -fopenmp-simd for -fopenmp: its `omp simd` loops as before, and neither the OpenMP
    builtins nor libgomp in its build. Raises CFlagsError for a flag that would change results."""
    text = os.environ.get("RULEGRAD_CFLAGS") if env is None else env
    if text is None or not text.strip():  # (set but empty, as `RULEGRAD_CFLAGS= cmd`: unset)
        text = f"{LEVELS.get(kind or '', DEFAULT_LEVEL)} {DEFAULT_TUNING}"
    try:
        user = shlex.split(text)
    except ValueError as e:
        raise CFlagsError(f"RULEGRAD_CFLAGS={text!r} cannot be split into flags: {e}") from e
    check_flags(user, "RULEGRAD_CFLAGS")
    return ((user if openmp else without_openmp(user)) + [f for f in SEMANTIC]
            + (["-fthread-jumps"] if gated else []))


def without_openmp(flags: list[str]) -> list[str]:
    """The flags of a kernel that starts no threads itself: -fopenmp-simd for -fopenmp."""
    return ["-fopenmp-simd" if f == "-fopenmp" else f for f in flags]


def check_flags(words: list[str], source: str) -> None:
    """Raise CFlagsError for the first word of `words` (from `source`, an environment variable)
    that is not an allowed flag: it names the word, why it is refused when that is known, and
    what is allowed."""
    for word in words:
        if allowed(word):
            continue
        why = _refusal(word)
        if why is not None:
            raise CFlagsError(
                f"{source}: {word} would change results ({why}); rulegrad's kernels compute what "
                f"numpy computes and always build with {' '.join(SEMANTIC)}. Remove {word}. "
                f"{ALLOWED_TEXT}")
        raise CFlagsError(
            f"{source}: {word} is not a flag rulegrad builds with: only flags known not to "
            f"change what a kernel computes are taken. {ALLOWED_TEXT}")


ALLOWED_TEXT = ("Allowed: optimization levels (-O0..-O3, -Os, -Og), -march=/-mtune=/-mcpu=, "
                "instruction sets (-mavx2, -mno-avx512f, ...), -fopenmp, vectorizing, unrolling "
                "and alignment flags, --param=NAME=VALUE, warnings (-Wall, ...), -g (the whole "
                "list: backends/c/flags.py's _ALLOWED).")


def allowed(flag: str) -> bool:
    """Whether `flag` is known not to change what a kernel computes."""
    if flag in _REFUSED:  # (an instruction set's switch that moves floats to the x87 unit)
        return False
    if flag in _ALLOWED or _ISA.fullmatch(flag) or _WARNING.fullmatch(flag):
        return True
    return flag.startswith(_ALLOWED_PREFIXES)


def check_compiler(words: list[str]) -> list[str]:
    """RULEGRAD_CC's words, checked: the program (after a launcher such as ccache), then
    allowed flags only (`RULEGRAD_CC="gcc -ffast-math"` is refused as the same flag in
    RULEGRAD_CFLAGS would be)."""
    if not words:
        raise CFlagsError("RULEGRAD_CC is set but names no program")
    n = 2 if len(words) > 1 and os.path.basename(words[0]) in LAUNCHERS else 1
    check_flags(words[n:], "RULEGRAD_CC")
    return words


def compiler_env() -> dict[str, str]:
    """The environment of a compiler run: this process's, without `COMPILER_ENV`."""
    return {k: v for k, v in os.environ.items() if k not in COMPILER_ENV}


def _refusal(flag: str) -> str | None:
    if flag in _REFUSED:
        return _REFUSED[flag]
    for prefix, why in _REFUSED_PREFIX:
        if flag.startswith(prefix):
            return why
    if not flag.startswith("-"):
        return "a file given to the compiler: it would be compiled or linked into the kernels"
    return None
