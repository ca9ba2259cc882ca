"""Build C kernels into one plain shared library; load it with ctypes; cache it.

In: rendered kernels (`render.RenderedKernel`). Out: a loaded `Library` with one callable per
kernel, each taking its buffers as raw addresses (Python ints).

The source of every kernel of a schedule goes into one C file, compiled by the C compiler
straight into a shared object (a large program's kernels go into a few C files compiled at
once and linked into one: `partition`): no Python.h, no generated wrapper, no setuptools
(cffi's API mode compiled the Python headers on every build, which cost more than our
kernels). The library is loaded through ctypes (`dlopen`); its kernels are
`void name(void *, ...)` and take addresses. With gcc, the programs of a compiler run (cc1 | as,
then ld) are run directly, not through the driver (`stages.py`).

The compiler command and flags are assembled in one function, `compile_command`:
`RULEGRAD_CC` (default: the C compiler Python was built with, else `cc`) and `RULEGRAD_CFLAGS`
(added to the flags rulegrad's semantics need: `flags.py`,
which refuses flags that would change results).

Loading: every load is from a file of our own under a fresh name (the private build folder, or
a fresh copy of the verified cache bytes), so `dlopen` can never hand back the handle of an
older library that had the same path, and what was checked is what runs. A `Library` is
released (`dlclose`) when the last program using it is gone: the program table of `run.py` is
bounded, so the number of libraries loaded in a process is too.
"""

from __future__ import annotations

import _ctypes
import ctypes
import os
import shlex
import shutil
import sys
import sysconfig
import threading
import time
import weakref
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from rulegrad.runtime.env import env_int

from . import cache as disk
from . import flags as _flags
from . import stages
from .blocks import load_for
from .errors import CompileError, CompilerNotFound, NoFloat16
from .launch import launched, launcher
from .render import RenderedKernel, prelude

# what every build needs whatever the user's flags: a position-independent shared object;
# -pipe: no temporary assembly file between compiler and assembler (the flags: flags.py)
_REQUIRED_OBJECT = ["-fPIC", "-pipe"]
_REQUIRED = ["-shared", *_REQUIRED_OBJECT]
# the layout of a cached library: bump when what a library exports changes
_FORMAT = "plain-so-2"


@cache
def _mvec() -> list[str]:
    """glibc's vector math library when this system has it (exp, log, sin in SIMD). Asked of the
    dynamic loader (its soname, well under a millisecond), not `ctypes.util.find_library`, which
    runs `ldconfig -p` in every process's first build (~10 ms)."""
    return ["-DRG_MVEC", "-lmvec"] if _opens("libmvec.so.1") else []


def _opens(soname: str, mode: int = ctypes.DEFAULT_MODE) -> bool:
    """Whether the dynamic loader can load the shared library `soname` (it is then loaded)."""
    try:
        ctypes.CDLL(soname, mode=mode)
    except OSError:
        return False
    return True


def link_flags(cc: list[str], flags: list[str]) -> list[str]:
    """How the shared object is linked. With gcc: no start files, no libc linker script, and no
    shared library at all where the process has it loaded for the kernels (`_runtime`): the
    library's calls (expf, GOMP_parallel, libmvec's _ZGVdN8v_expf) stay undefined and `dlopen`
    binds them to the loaded ones. Reading libm's linker script, libm, libmvec and libgomp
    took 17M of the linker's 23M instructions in every build (callgrind): ~4 ms of CPU. A
    library that cannot be loaded so is named (`-lgomp`, ...), as before; libgcc (an archive
    of helpers gcc may call, e.g. for float16) is always linked in. Other compilers (clang
    names another OpenMP runtime) link the default way."""
    mvec = _mvec()
    if not is_gcc(cc):
        return mvec
    named = [lib for lib, needed in (("-lgomp", "-fopenmp" in flags), ("-lmvec", bool(mvec)),
                                     ("-lm", True)) if needed and not _runtime(lib)]
    return [*mvec[:1], "-nostdlib", *named, "-lgcc"]


_SONAMES = {"-lgomp": "libgomp.so.1", "-lmvec": "libmvec.so.1", "-lm": "libm.so.6"}


@cache
def _runtime(lib: str) -> bool:
    """Whether the shared library the link flag `lib` names is loaded into this process for
    every kernel library to bind to (`RTLD_GLOBAL`: a library loaded later resolves its
    undefined symbols in it). libgomp reads its environment when it loads: the OpenMP
    defaults are set first."""
    _openmp_defaults()
    return _opens(_SONAMES[lib], os.RTLD_NOW | os.RTLD_GLOBAL)


def compiler() -> list[str]:
    env = os.environ.get("RULEGRAD_CC")
    if env:  # (its flags checked as RULEGRAD_CFLAGS's are: an allow-list, flags.py)
        try:
            words = shlex.split(env)
        except ValueError as e:
            raise _flags.CFlagsError(f"RULEGRAD_CC={env!r} cannot be split into words: {e}"
                                     ) from e
        return _flags.check_compiler(words)
    cc = sysconfig.get_config_var("CC")
    return shlex.split(cc)[:1] if cc else ["cc"]


def is_gcc(cc: list[str]) -> bool:
    """Whether the compiler `cc` is gcc (its version banner does not say clang): gcc's own
    flags (flags.GCC_ONLY) and link (`link_flags`) are for it only."""
    return "clang" not in compiler_version(tuple(cc)).lower()


def cflags(kind: str | None = None, openmp: bool = True, gated: bool = False) -> list[str]:
    # the user's flags (else the level of the kernel's kind) plus the ones rulegrad's semantics
    # need (flags.py refuses unsafe ones), without gcc's own for another compiler
    return _flags.for_compiler(_flags.cflags(kind=kind, openmp=openmp, gated=gated),
                               is_gcc(compiler()))


def build_parts(kernels: list[RenderedKernel], jobs: int
                ) -> list[tuple[list[str], list[RenderedKernel]]]:
    """The compiler runs of a library: (flags, kernels) each. Kernels compiled at different
    optimization levels (their kinds', `flags.LEVELS`) are in different runs; each group of
    one level is split further where that pays (`partition`), and has -fopenmp only if one
    of its kernels starts threads itself (an extra compiler run would cost more)."""
    # (a program with no kernels, its buffers only copied or sharded, is one empty library)
    groups: dict[tuple[str, ...], list[RenderedKernel]] = {} if kernels else {tuple(cflags()): []}
    for k in kernels:
        groups.setdefault(tuple(cflags(k.kind, gated=k.gated)), []).append(k)
    return [(list(f) if not group or any(k.openmp for k in group)
             else _flags.without_openmp(list(f)), part)
            for f, group in groups.items() for part in partition(group, jobs)]


def compile_command(cc: list[str], flags: list[str], source: str | list[str], output: str
                    ) -> list[str]:
    """The one place a compiler command line is assembled (flags policy: `cflags`): one
    compiler run from C source to shared object, or (a list) linking a parallel build's
    objects into one."""
    inputs = [source] if isinstance(source, str) else source
    return [*cc, *flags, *_REQUIRED, *inputs, "-o", output, *link_flags(cc, flags)]


def object_command(cc: list[str], flags: list[str], source: str, output: str) -> list[str]:
    """One part of a parallel build: C source to an object file."""
    return [*cc, *flags, *_REQUIRED_OBJECT, *_mvec()[:1], "-c", source, "-o", output]


# ---------------------------------------------------------------------------- parallel builds
# A program's kernels are independent functions: compiled as separate translation units by
# concurrent compiler runs and linked once, the build takes about as long as its largest part
# rather than the sum (attention's four kernels, an MLP's two products). Each extra part costs
# a compiler start and the prelude (~20 ms of CPU) and the link moves to a separate run, so a
# part must hold at least SPLIT_MIN_CHARS of kernel source (a packed product is ~4,000
# characters and ~150 ms to compile; an elementwise kernel ~500 and ~10 ms).
SPLIT_MIN_CHARS = 1500


def build_jobs() -> int:
    """How many compiler runs a build may have at once: `RULEGRAD_BUILD_JOBS`, default the
    CPUs this process may run on."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return env_int("RULEGRAD_BUILD_JOBS", cpus, minimum=1)


def partition(kernels: list[RenderedKernel], jobs: int) -> list[list[RenderedKernel]]:
    """The kernels in at most `jobs` parts of about equal source size (largest first, each
    to the smallest part), every part at least SPLIT_MIN_CHARS; one part when splitting does
    not pay. Each part keeps the kernels' order."""
    sizes = [len(k.source) for k in kernels]
    n = min(jobs, len(kernels), sum(sizes) // SPLIT_MIN_CHARS)
    while n > 1:
        parts: list[list[int]] = [[] for _ in range(n)]
        load = [0] * n
        for i in sorted(range(len(kernels)), key=lambda i: -sizes[i]):
            j = load.index(min(load))
            parts[j].append(i)
            load[j] += sizes[i]
        if min(load) >= SPLIT_MIN_CHARS:
            return [[kernels[i] for i in sorted(p)] for p in sorted(parts, key=min)]
        n -= 1
    return [list(kernels)]


_probes: dict[tuple[str, ...], stages.Question] = {}
_versions: dict[tuple[str, ...], str] = {}
_probe_lock = threading.Lock()
if hasattr(os, "register_at_fork"):  # a forked child cannot wait for its parent's probe
    os.register_at_fork(after_in_child=_probes.clear)


def probe_compiler(cc: list[str] | None = None) -> None:
    """Start asking the compiler for its `--version` (part of the cache key) in the background:
    `compile_program` calls this before it lowers and renders, so a process's first build does
    not wait ~15 ms for the answer."""
    key = tuple(cc or compiler())
    with _probe_lock:
        if key in _probes or key in _versions:
            return
        _probes[key] = stages.Question([*key, "--version"])


def compiler_version(cc: tuple[str, ...]) -> str:
    """The compiler's `--version` banner, part of the cache key (a new gcc rebuilds); asked
    once per process and compiler."""
    probe_compiler(list(cc))
    with _probe_lock:
        if cc in _versions:
            return _versions[cc]
        question = _probes.pop(cc)
        version = question.answer()
        if (e := question.error) is not None:  # it did not start, or did not answer in time
            raise CompilerNotFound(list(cc), e.strerror or str(e)) from None
        _versions[cc] = (version or "").strip()
        return _versions[cc]


def full_source(kernels: list[RenderedKernel]) -> str:
    body = "\n".join(k.source for k in kernels)
    return prelude(name for k in kernels for name in k.uses) + "\n" + body


def cache_key(source: str, cc: list[str], flags: list[str]) -> str:
    """`flags`: every flag a library's build used (`_key_flags`)."""
    link = link_flags(cc, flags)
    return disk.key_of(_FORMAT, source, "\0".join(cc), "\0".join(flags + _REQUIRED + link),
                       compiler_version(tuple(cc)))


# ---------------------------------------------------------------------------- libraries
_CTYPES_MAX_ARGS = 1024  # CTYPES_MAX_ARGCOUNT
_LOCAL = os.RTLD_NOW | os.RTLD_LOCAL  # a library's symbols are its own
_dlclose = getattr(_ctypes, "dlclose", None)  # POSIX only; elsewhere libraries stay loaded


class Library:
    """A loaded kernel library; `dlclose`d when the last reference to it goes."""

    live = 0  # libraries loaded and not yet released in this process

    def __init__(self, key: str, path: Path, mode: int = _LOCAL):
        self.key = key
        self._dll: ctypes.CDLL | None = ctypes.CDLL(str(path), mode=mode)
        self._keep: list[Any] = []  # cffi views of the same handle
        Library.live += 1

    def function(self, cname: str, nparams: int, nvars: int = 0, launch: int = 0,
                 combine: int = 0, shared: tuple[int, int] = (0, 0), team: int = 0) -> Any:
        """The kernel `cname`, called with one address (int) per buffer, then one `long long`
        per symbolic size (DEFINE_VAR); a launched kernel (`launch` iterations) on the
        threads of launch.py, a launched reduce (`combine`-byte slots) then `cname_fin`, a
        kernel of shared scratch (RenderedKernel.shared) with its scratch; a launched one on a
        team of `team` threads (RenderedKernel.team; 0: the runtime's count)."""
        assert self._dll is not None, "library already released"
        if launch:
            finish = self.address(f"{cname}_fin") if combine else 0
            return launched(launcher(build_library), self.address(cname), nparams, launch,
                            finish, combine, shared, team)
        if nparams + nvars > _CTYPES_MAX_ARGS:
            return self._cffi_function(cname, nparams, nvars)
        fn = getattr(self._dll, cname)
        fn.argtypes = [ctypes.c_void_p] * nparams + [ctypes.c_longlong] * nvars
        fn.restype = None
        return fn

    def address(self, name: str) -> int:
        """The address of the library's function `name` (a C caller calls it directly)."""
        assert self._dll is not None, "library already released"
        return ctypes.cast(getattr(self._dll, name), ctypes.c_void_p).value or 0

    def _cffi_function(self, cname: str, nparams: int, nvars: int = 0) -> Any:
        """ctypes calls take at most 1024 arguments; a kernel over more buffers (a sum of 2,000
        tensors) is called through cffi's ABI mode on the same handle (addresses as
        uintptr_t, passed like pointers)."""
        from cffi import FFI

        assert self._dll is not None
        ffi = FFI()
        ffi.cdef(f"void {cname}({', '.join(['uintptr_t'] * nparams + ['long long'] * nvars)});")
        lib = ffi.dlopen(ffi.cast("void *", self._dll._handle))
        self._keep.append(lib)
        return getattr(lib, cname)

    def release(self) -> None:
        dll, self._dll = getattr(self, "_dll", None), None  # None: dlopen itself failed
        if dll is not None:
            # (through the instance: at interpreter exit the module's globals may be gone)
            type(self).live -= 1
            if _dlclose is not None and not sys.is_finalizing():
                _dlclose(dll._handle)

    def __del__(self) -> None:
        self.release()


# ---------------------------------------------------------------------------- in-process cache
# weak: a library stays loaded while a program (run.py's bounded table, or a caller) holds it
_loaded: weakref.WeakValueDictionary[str, Library] = weakref.WeakValueDictionary()
_lock = threading.Lock()
# compiles: libraries built; compiler_runs: compiler processes they took (parallel parts, link)
stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0, "compile_seconds": 0.0,
         "compiler_runs": 0}


def clear_memory_cache() -> None:
    """Forget loaded libraries (tests use it to force the disk path)."""
    _loaded.clear()


def _key_flags(parts: list[tuple[list[str], list[RenderedKernel]]]) -> list[str]:
    """The flags of a build for its cache key: each kernel's (a kind compiled at another level
    is another library), the same whatever the parts' split."""
    flags = {k.cname: fl for fl, part in parts for k in part}
    return [f for name in sorted(flags) for f in (f"@{name}", *flags[name])]


def build_library(kernels: list[RenderedKernel], mode: int = _LOCAL) -> Library:
    """The loaded library holding `kernels`: from memory, from disk, or compiled now (`mode`:
    dlopen's; the block library, which kernels call, is global: blocks.py)."""
    source = full_source(kernels)
    cc, parts = compiler(), build_parts(kernels, build_jobs())
    key = cache_key(source, cc, _key_flags(parts))
    lib = _loaded.get(key)
    if lib is not None:
        stats["memory_hits"] += 1
        return lib
    calls = {c for k in kernels for c in k.calls}
    if mode == _LOCAL and calls:
        # before this library is loaded, so its calls bind to them (as the kernels' printers
        # recorded them: RenderedKernel.calls)
        load_for(calls, build_library)
    with _lock:
        if (lib := _loaded.get(key)) is not None:
            return lib
        if env_int("DEBUG", 0) >= 4:
            # the kernels as written (the prelude of helpers is the same for every build)
            print("\n".join(k.source for k in kernels), file=sys.stderr)
        data = disk.lookup(key)
        if data is not None:
            try:
                lib = _load_bytes(key, data, mode)
                stats["disk_hits"] += 1
            except OSError:
                lib = None  # verified but not loadable (another machine's?): rebuilt
        if lib is None:
            lib = _compile(key, source, parts, cc, mode)
            stats["compiles"] += 1
        _loaded[key] = lib
        return lib


def _openmp_defaults() -> None:
    # OpenMP threads that wait for work spin, by default for ~0.3 ms (burning a core the main
    # thread or another process may need), and with OMP_WAIT_POLICY=passive not at all, when
    # waking a sleeping thread costs ~0.2 ms on a VM: more than the Python work between two
    # kernels of a realize. So they spin a short while (GOMP_SPINCOUNT=20000, tens of
    # microseconds), then sleep. Read once, when libgomp loads; a user's OMP_WAIT_POLICY or
    # GOMP_SPINCOUNT wins (a defined GOMP_SPINCOUNT would override their wait policy).
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", "20000")


def _load_bytes(key: str, data: bytes, mode: int = _LOCAL) -> Library:
    """Load verified library bytes from a fresh file of ours (a new name and inode)."""
    tmp = disk.new_build_dir()
    try:
        path = tmp / f"rg_{key}.so"
        path.write_bytes(data)
        _openmp_defaults()
        return Library(key, path, mode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the mapping outlives the file


def _compile(key: str, source: str, parts: list[tuple[list[str], list[RenderedKernel]]],
             cc: list[str], mode: int = _LOCAL) -> Library:
    """Compile in a private build folder (in parts, concurrently, when that pays or their flags
    differ: `build_parts`), install into the cache, load the built file."""
    tmp = disk.new_build_dir()
    # the link's: the parts differ in optimization level and OpenMP only
    flags = cflags(openmp=any(k.openmp for _, part in parts for k in part))
    try:
        # the same file names in every process, so racing builds produce identical bytes;
        # relative names: the object records the source's name, so no random folder in it
        out = tmp / f"rg_{key}.so"
        t0 = time.perf_counter()
        try:
            _build(key, tmp, source, parts, cc, flags, out.name)
        except CompileError as e:
            if ICE not in e.message or not is_gcc(cc):
                raise
            # gcc 12.2's vectorizer crashes on some sources (a float64 cummax's row of 13:
            # a segmentation fault in its SLP pass); the same source, its SLP pass off
            _build(key, tmp, source, [([*fl, NO_SLP], part) for fl, part in parts], cc,
                   [*flags, NO_SLP], out.name)
        stats["compile_seconds"] += time.perf_counter() - t0  # (bench/kernels.py's "build")
        if not out.exists():
            raise CompileError("the compiler exited without error and wrote no library",
                               _keep_source(key, source), compile_command(cc, flags, "", ""))
        if env_int("DEBUG", 0) >= 4:
            _keep_source(key, source)
        disk.install(key, out.read_bytes())
        _openmp_defaults()
        return Library(key, out, mode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


ICE = "internal compiler error"  # (gcc's words for its own crash)
NO_SLP = "-fno-tree-slp-vectorize"  # (changes no result: flags.py allows it to the user too)


def _build(key: str, tmp: Path, source: str, parts: list[tuple[list[str], list[RenderedKernel]]],
           cc: list[str], flags: list[str], out: str) -> None:
    """Compile `parts` in `tmp` to `out`: one compiler run, or one per part and a link."""
    if len(parts) == 1:
        _run(key, tmp, {f"rg_{key}.c": source},
             lambda c: compile_command(cc, parts[0][0], c, out))
        return
    sources = {f"rg_{key}_{i}.c": full_source(part) for i, (_, part) in enumerate(parts)}
    part_flags = {c: fl for c, (fl, _) in zip(sources, parts)}
    _run(key, tmp, sources, lambda c: object_command(cc, part_flags[c], c, c[:-2] + ".o"))
    objects = [c[:-2] + ".o" for c in sources]
    _run(key, tmp, {"": source}, lambda _: compile_command(cc, flags, objects, out))


def _run(key: str, cwd: Path, sources: dict[str, str], command: Callable[[str], list[str]]
         ) -> None:
    """Write each source (file name -> text; "" names none) into `cwd` and run the compiler
    on them all at once (its stages run directly where that is gcc's plan: stages.py); the
    first failure raises with the compiler's message, keeping the source it failed on."""
    runs: list[tuple[list[str], str, stages.Job | OSError]] = []
    for name, text in sources.items():
        if name:
            (cwd / name).write_text(text)
        cmd = command(name)
        try:
            job: stages.Job | OSError = stages.Job(cmd, key, cwd, f"{name or 'link'}.log")
        except OSError as e:
            job = e
        runs.append((cmd, text, job))
    stats["compiler_runs"] += len(runs)
    failure: CompileError | None = None
    for cmd, text, job in runs:
        if isinstance(job, OSError) and failure is None and _unstartable(job):
            failure = CompilerNotFound(cmd, job.strerror or str(job))
        elif isinstance(job, OSError):
            failure = failure or CompileError(str(job), _keep_source(key, text), cmd)
            continue
        try:
            status, messages = job.wait()  # (wait for every run, failed or not)
        except OSError as e:
            status, messages = 1, str(e)
        if failure is None and status != 0:
            error = NoFloat16 if NoFloat16.MARK in messages else CompileError
            failure = error(messages.strip() or f"exit status {status}",
                            _keep_source(key, text), cmd)
    if failure is not None:
        raise failure


def _unstartable(e: OSError) -> bool:
    """Whether a compiler run failed to start because the program is not there (or not a
    program): then nothing was compiled, and the error says what to install."""
    return isinstance(e, (FileNotFoundError, PermissionError, NotADirectoryError))


def _keep_source(key: str, text: str) -> str:
    """Keep a compiled source next to the cache entry, for inspection."""
    path = disk.write_dir() / f"rg_{key}.c"
    disk.atomic_write(path, text.encode() + disk.kept_source_mark(key))  # (last: line numbers stay)
    return str(path)
