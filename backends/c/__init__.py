"""The C backend: kernel ASTs lowered by rules, rendered to C, built into a shared library, run
on numpy buffers.

In: `ScheduleItem`s (backends/KERNEL_AST.md). Out: their buffers written. The phases, one
module each, in the order data flows:

- `lower`   kernel AST -> kernel AST: the rule sets of `rules/lower.rules` (float16 through
            float32, MULACC, power-of-two index division, decided valid masks)
- `render`  kernel AST -> C text: a table from op to C plus the structural cases (loop nests,
            reduce accumulators, guarded loads, loop interchange and register tiles for
            matmul-like kernels, OpenMP pragmas); deep expressions as temporaries. It builds
            on `ctext` (the C text every printer shares), `blocks` (the block library's
            source), `gemm` and `flash` (the packed products and attention tiles), none of
            which imports it (bottom to top: ctext, blocks, gemm, flash, render)
- `build`   C text -> loaded library: all kernels of a schedule in one plain shared object
            (compiled in parts at once when large), loaded with ctypes, the compiler command
            and flags in one place
            (it hands itself to `launch`, the threads' region, and to `blocks`, which it
            loads before a kernel that calls them, so neither imports it back)
- `cache`   the library on disk (content-addressed, atomic, checked, healed, bounded)
- `run`     schedule + numpy buffers -> kernels called

Environment: `RULEGRAD_BACKEND=c` routes `realize()` here; `RULEGRAD_CC` (compiler command),
`RULEGRAD_CFLAGS` (tuning flags, to which `flags.SEMANTIC` is always added;
only flags known not to change results are taken, from either: `flags.allowed`),
`RULEGRAD_CACHE` (the cache folder, default `$XDG_CACHE_HOME/rulegrad` or `~/.cache/rulegrad`;
only the cache's own `rg_<key>.*` entries in it are ever deleted), `RULEGRAD_CACHE_MAX` (its
size limit, default 500M; 0 keeps no library on disk), `RULEGRAD_BUILD_JOBS` (compiler runs
at once for one build, default the CPUs), `DEBUG=4` (print the C source).

Numerics: numpy's for every dtype (see `render`'s docstring). Not pinned down: float -> int
casts of NaN, inf or out-of-range values (what the CPU's truncating conversion gives, as in
numpy on x86), and the rounding of float sums, which may be reassociated (SIMD lanes,
threads), so they match numpy within rounding, not bit for bit.

Errors: `CompileError` (compiler output + kept source path), `CacheError` (unsafe cache
folder), `RenderError` (an AST outside the kernel form).
"""

from .errors import CacheError, CompileError
from .render import RenderError, render_kernel
from .run import CKernel, CProgram, compile_program, run_schedule

__all__ = ["CacheError", "CompileError", "RenderError", "render_kernel", "CKernel", "CProgram",
           "compile_program", "run_schedule"]
