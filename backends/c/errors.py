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


class CacheError(RuntimeError):
    """The kernel cache folder is unsafe (not ours, or writable by others) or unusable."""
