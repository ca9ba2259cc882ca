"""Run gcc's stages ourselves: the compiler proper piped into the assembler, then the linker.

In: a compiler command line (build.py's `compile_command`, `object_command`)
and the names of the files in it. Out: a started `Job` that ends as that command would, with
the compiler's messages and exit status.

gcc's driver is a program of its own between us and the work: it starts, reads its specs,
asks the CPU what -march=native means, then runs cc1 | as, then collect2, itself a program
that loads the LTO plugin and runs ld. For a small kernel library that is about a fifth of the
build (an empty library: 35 ms through the driver, 27 ms with the same programs run directly).
So the driver is asked once (`-###`: the commands it would run, without running them) for each
command line (its file names aside) and the commands are run directly: the same programs, with
the same arguments, but collect2 replaced by the linker it would run, without the LTO plugin
(no LTO object is ever linked here). A command whose plan is not that shape (clang, -flto,
-fuse-ld, a wrapper that prints something else) runs through the driver, as before.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
from functools import cache
from pathlib import Path

from .flags import compiler_env

_NAME = "@name@"  # stands for the file names' varying part in a plan
_TEMP = "rg_@name@_stage{}.o"  # the driver's temporary objects, here in the build folder
_plans: dict[tuple[str, ...], list[list[list[str]]] | None] = {}
_lock = threading.Lock()


# a shell word of a plan line: unquoted characters and double-quoted runs, glued together
# (`"-march=znver3"` is -march=znver3); shlex's whitespace only, as POSIX words are split
_WORD = re.compile(r'(?:[^ \t\r\n"]+|"[^"]*")+')


def split_words(line: str) -> list[str]:
    """`shlex.split(line)`: the POSIX shell words of a line. The driver's plan (three lines,
    ~2,000 characters, ~150 words) took shlex's character-at-a-time tokenizer 1-2 ms of a
    process's first build; a line without a backslash or a single quote and with its double
    quotes paired (all gcc prints) is split by one regular expression instead."""
    if "\\" in line or "'" in line or line.count('"') % 2:
        return shlex.split(line)
    return [w.replace('"', "") for w in _WORD.findall(line)]


def plan(cmd: list[str], name: str) -> list[list[list[str]]] | None:
    """The steps `cmd` is: each a pipeline of commands, run after the one before ends; None
    when it must run through the driver. `name` is the part of the command's file names that
    differs from build to build (a library's key): the driver is asked once per command line
    with other such names."""
    if not _is_gcc(cmd[0]):
        return None
    key = tuple(a.replace(name, _NAME) for a in cmd)
    with _lock:
        if key not in _plans:
            _plans[key] = _ask(list(key))
        steps = _plans[key]
    if steps is None:
        return None
    return [[[a.replace(_NAME, name) for a in c] for c in pipe] for pipe in steps]


def _ask(cmd: list[str]) -> list[list[list[str]]] | None:
    """The driver's own plan for `cmd`, or None where it is not cc1 | as, then collect2."""
    out = Question([*cmd, "-###"]).answer(stderr=True)
    if out is None:
        return None
    steps: list[list[list[str]]] = []
    joined = False  # the line before ended with "|": this command reads its output
    for line in out.splitlines():
        if not line.startswith(" "):
            continue
        try:
            args = split_words(line)
        except ValueError:
            return None
        piped = bool(args) and args[-1] == "|"
        args = args[:-1] if piped else args
        if not args:
            return None
        if joined:
            steps[-1].append(args)
        else:
            steps.append([args])
        joined = piped
    temps: dict[str, str] = {}
    for pipe in steps:
        for i, args in enumerate(pipe):
            name = os.path.basename(args[0])
            if name == "collect2":
                if cmd[0] not in _linkers:
                    _linkers[cmd[0]] = linker_of(out, cmd[0])
                linker = _linkers[cmd[0]]
                if linker is None or any(a.startswith(("-fuse-ld", "-flto")) for a in args):
                    return None
                pipe[i] = [linker, *_without_plugin(args[1:])]
            elif name == "as" and "-o" in args[:-1]:
                obj = args[args.index("-o") + 1]
                if _NAME not in obj:  # the driver's temporary object: one in our folder
                    temps.setdefault(obj, _TEMP.format(len(temps)))
            elif name != "cc1":
                return None
    # each source compiled (cc1 | as), then, unless -c, the link
    shapes = [[os.path.basename(c[0]) for c in p] for p in steps]
    linked = shapes and shapes[-1] == [os.path.basename(_linkers.get(cmd[0]) or "collect2")]
    compiled = shapes[:-1] if linked else shapes
    if not shapes or any(s != ["cc1", "as"] for s in compiled):
        return None
    return [[[temps.get(a, a) for a in c] for c in pipe] for pipe in steps]


@cache
def _is_gcc(program: str) -> bool:
    """Whether `program` is gcc's driver itself (/usr/bin/cc or gcc, through their links), not
    a wrapper (ccache, a script): a wrapper is run as the user asked, on every build."""
    path = shutil.which(program)
    return path is not None and "gcc" in os.path.basename(os.path.realpath(path))


def _without_plugin(args: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "-plugin":
            skip = True
        elif not a.startswith("-plugin-opt="):
            kept.append(a)
    return kept


_linkers: dict[str, str | None] = {}  # compiler -> the linker collect2 runs (as it names it)


def linker_of(plan_text: str, program: str) -> str | None:
    """The linker `program -print-prog-name=ld` names, read from its `-###` plan where that is
    sure: the driver looks for `ld` in its program folders (the plan's COMPILER_PATH) and names
    it bare when none has one, as a system gcc's do. A folder holding an `ld` or a target's
    `*-ld` (a cross or -B setup) is asked as before: one process fewer in every first build."""
    folders = next((ln[len("COMPILER_PATH="):].split(os.pathsep) for ln in plan_text.splitlines()
                    if ln.startswith("COMPILER_PATH=")), None)
    if folders is not None and not any(_has_linker(f) for f in folders if f):
        return "ld"
    return (Question([program, "-print-prog-name=ld"]).answer() or "").strip() or None


def _has_linker(folder: str) -> bool:
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(n == "ld" or n.endswith("-ld") for n in names)


ANSWER_SECONDS = 60.0  # a question the compiler has not answered by then is given up


class Question:
    """A question to the compiler, started now; `answer` is what it printed, or None (it
    failed, took over `ANSWER_SECONDS`, or did not start: `error` says why of the last two).

    The question runs in a process group of its own: a compiler that is a wrapper script may
    leave a child holding the pipes open (`cc "$@" & sleep 100`), so a question not answered in
    time is ended by killing its whole group, and its pipes are closed, never read to their end.
    """

    def __init__(self, cmd: list[str]):
        self.cmd = cmd
        self.error: OSError | None = None
        try:
            self.proc: subprocess.Popen[str] | None = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env=compiler_env(), start_new_session=True)
        except OSError as e:
            self.proc, self.error = None, e

    def answer(self, stderr: bool = False) -> str | None:
        if self.proc is None:
            return None
        try:
            out, err = self.proc.communicate(timeout=ANSWER_SECONDS)
        except subprocess.TimeoutExpired:
            self._stop()
            self.error = TimeoutError(
                errno.ETIMEDOUT, f"`{shlex.join(self.cmd)}` gave no answer in "
                f"{ANSWER_SECONDS:g} s; it and the processes it started were stopped")
            return None
        return (err if stderr else out) if self.proc.returncode == 0 else None

    def _stop(self) -> None:
        proc = self.proc
        assert proc is not None
        try:  # (the group's leader is not yet waited for: its id cannot name another group)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()


class Job:
    """A command run as its plan's steps (or through the driver): `wait` gives its exit
    status and messages, as the driver's would be."""

    def __init__(self, cmd: list[str], name: str, cwd: Path, log: str):
        self.cwd, self.steps = cwd, plan(cmd, name) or [[cmd]]
        # every program's messages, in one file: no pipe of messages can fill and stall one
        # program of a pipeline while another is read
        self.log = open(cwd / log, "w+b")  # noqa: SIM115 (closed by wait)
        try:
            self.procs = self._start(self.steps[0])
        except OSError:
            self.log.close()
            raise

    def _start(self, pipe: list[list[str]]) -> list[subprocess.Popen[bytes]]:
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for i, args in enumerate(pipe):
                last = i == len(pipe) - 1
                procs.append(subprocess.Popen(
                    args, cwd=self.cwd, stdin=procs[-1].stdout if procs else subprocess.DEVNULL,
                    stdout=self.log if last else subprocess.PIPE, stderr=self.log,
                    env=compiler_env()))
                if i:  # (the reader holds its end: the writer sees it close)
                    procs[-2].stdout.close()  # type: ignore[union-attr]
        except OSError:
            for p in procs:
                p.kill()
                p.wait()
            raise
        return procs

    def wait(self) -> tuple[int, str]:
        """Run the remaining steps: the first failing step's exit status, and every message."""
        status = 0
        try:
            for n, pipe in enumerate(self.steps):
                procs = self.procs if n == 0 else self._start(pipe)
                for p in procs:
                    code = p.wait()
                    status = status or code
                if status:
                    break
            self.log.seek(0)
            return status, self.log.read().decode(errors="replace")
        finally:
            self.log.close()
