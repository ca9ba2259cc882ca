"""The errors the C backend raises: a failed compile, and a cache folder it will not trust."""

from __future__ import annotations


class CompileError(RuntimeError):
    """The C compiler rejected a generated source.

    `message` is the compiler's own output (stderr), `source_path` the C file kept for
    inspection, `command` the command line that failed."""

    def __init__(self, message: str, source_path: str, command: list[str]):
        self.message, self.source_path, self.command = message, source_path, command
        super().__init__(f"C compiler failed ({' '.join(command[:1])}); source kept at "
                         f"{source_path}\n{message.strip()}")


class CompilerNotFound(CompileError):
    """The C compiler cannot be started at all (not installed, or RULEGRAD_CC names nothing).

    Its message is one line saying what to do: nothing was compiled, so no source is kept."""

    def __init__(self, command: list[str], reason: str):
        self.message, self.source_path, self.command = reason, "", command
        RuntimeError.__init__(
            self, f"no C compiler: cannot run {command[0]!r} ({reason}); install one with "
            "OpenMP (e.g. `apt-get install gcc`), point RULEGRAD_CC at one, or run without C: "
            "RULEGRAD_BACKEND=interp")


class NoFloat16(CompileError):
    """The compiler has no `_Float16` for this target (clang before 15 on x86-64; gcc has it from
    12): the compiler's error, worded as what to use instead. Only float16 kernels need it."""

    # what clang says; gcc before 12 says "unknown type name" of any type, so it is not matched
    MARK = "_Float16 is not supported on this target"

    def __init__(self, message: str, source_path: str, command: list[str]):
        self.message, self.source_path, self.command = message, source_path, command
        RuntimeError.__init__(
            self, f"{command[0]} cannot compile float16 kernels: it has no _Float16 type on this "
            "target (clang gained it on x86-64 in version 15, gcc in 12). Point RULEGRAD_CC at "
            "one that has it (RULEGRAD_CC=gcc, or clang 15 or later), or cast the float16 "
            f"tensors to float32 first; source kept at {source_path}\n"
            + next(line for line in message.splitlines() if NoFloat16.MARK in line))


class CacheError(RuntimeError):
    """The kernel cache folder is unsafe (not ours, or writable by others) or unusable."""
