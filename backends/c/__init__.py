"""The C backend: kernel ASTs rendered to C, built with cffi into one library per schedule.

`render` (AST -> C text), `build` (C text -> loaded library, via `cache` on disk), `run`
(schedule + numpy buffers -> kernels called). Errors: `CompileError`, `CacheError`.
"""

from .errors import CacheError, CompileError
from .render import RenderError, render_kernel
from .run import CKernel, CProgram, compile_program, run_schedule

__all__ = ["CacheError", "CompileError", "RenderError", "render_kernel", "CKernel", "CProgram",
           "compile_program", "run_schedule"]
