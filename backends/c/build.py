"""Build C kernels into one shared library through cffi's API mode; load it; cache it.

In: rendered kernels (`render.RenderedKernel`). Out: a loaded cffi extension module whose
`lib` has one function per kernel.

The source of every kernel of a schedule goes into one C file. cffi's API mode writes the
Python extension around it (`ffi.set_source` + `ffi.emit_c_code`); we run the compiler
ourselves rather than through `ffi.compile`, whose setuptools path sends the compiler's output
to our stderr (we need it in `CompileError`), cannot take the exact command line, and costs
a setuptools import on every cold build.

The compiler command and flags live here and only here: `RULEGRAD_CC` (default: the C compiler
Python was built with, else `cc`) and `RULEGRAD_CFLAGS` (added to the flags rulegrad's semantics
need: `flags.py`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import io
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from functools import cache
from pathlib import Path
from types import ModuleType

from cffi import FFI

from . import cache as disk
from . import flags as _flags
from .errors import CompileError
from .render import PRELUDE, RenderedKernel

# what every build needs whatever the user's flags: a position-independent shared object
_REQUIRED = ["-shared", "-fPIC"]


@cache
def _mvec() -> list[str]:
    """glibc's vector math library when this system has it (exp, log, sin in SIMD)."""
    import ctypes.util

    return ["-DRG_MVEC", "-lmvec"] if ctypes.util.find_library("mvec") else []


def compiler() -> list[str]:
    env = os.environ.get("RULEGRAD_CC")
    if env:
        return shlex.split(env)
    cc = sysconfig.get_config_var("CC")
    return shlex.split(cc)[:1] if cc else ["cc"]


def cflags() -> list[str]:
    # the user's flags plus the ones rulegrad's semantics need (flags.py refuses unsafe ones)
    return _flags.cflags()


@cache
def compiler_version(cc: tuple[str, ...]) -> str:
    """The compiler's `--version` banner, part of the cache key (a new gcc rebuilds)."""
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise CompileError(f"cannot run the C compiler {cc[0]!r}: {e}", "", list(cc)) from e
    return out.stdout.strip()


def full_source(kernels: list[RenderedKernel]) -> str:
    return PRELUDE + "\n" + "\n".join(k.source for k in kernels)


def cdef_of(kernels: list[RenderedKernel]) -> str:
    """The declarations cffi wraps: every parameter is `void *` (numpy buffers of any dtype)."""
    decls = []
    for k in kernels:
        params = ", ".join("void *" for _ in range(k.nparams)) or "void"
        decls.append(f"void {k.cname}({params});")
    return "\n".join(decls)


def cache_key(source: str, cdef: str, cc: list[str], flags: list[str]) -> str:
    h = hashlib.sha256()
    for part in (source, cdef, "\0".join(cc), "\0".join(flags + _mvec()),
                 compiler_version(tuple(cc)),
                 sys.implementation.cache_tag, importlib.machinery.EXTENSION_SUFFIXES[0]):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


# ---------------------------------------------------------------------------- in-process cache
_loaded: dict[str, ModuleType] = {}
_lock = threading.Lock()
stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0}


def clear_memory_cache() -> None:
    """Forget loaded libraries (tests use it to force the disk path)."""
    _loaded.clear()


def build_library(kernels: list[RenderedKernel]) -> ModuleType:
    """The loaded library holding `kernels`: from memory, from disk, or compiled now."""
    source, cdef = full_source(kernels), cdef_of(kernels)
    cc, flags = compiler(), cflags()
    key = cache_key(source, cdef, cc, flags)
    mod = _loaded.get(key)
    if mod is not None:
        stats["memory_hits"] += 1
        return mod
    with _lock:
        if (mod := _loaded.get(key)) is not None:
            return mod
        if int(os.environ.get("DEBUG", "0") or 0) >= 4:
            # the kernels as written (the prelude of helpers is the same for every build)
            print("\n".join(k.source for k in kernels), file=sys.stderr)
        path = disk.lookup(key)
        if path is not None:
            try:
                mod = _load(key, path)
                stats["disk_hits"] += 1
            except ImportError:
                mod = None  # a library that will not load is rebuilt like a corrupt one
        if mod is None:
            path = _compile(key, source, cdef, cc, flags)
            mod = _load(key, path)
            stats["compiles"] += 1
        _loaded[key] = mod
        return mod


def _load(key: str, path: Path) -> ModuleType:
    # OpenMP threads that wait for work spin, by default for ~0.3 ms (burning a core the main
    # thread or another process may need), and with OMP_WAIT_POLICY=passive not at all, when
    # waking a sleeping thread costs ~0.2 ms on a VM: more than the Python work between two
    # kernels of a realize. So they spin a short while (GOMP_SPINCOUNT=20000, tens of
    # microseconds), then sleep. Read once, when libgomp loads; a user's OMP_WAIT_POLICY or
    # GOMP_SPINCOUNT wins (a defined GOMP_SPINCOUNT would override their wait policy).
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", "20000")
    name = f"rg_{key}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _python_includes() -> list[str]:
    paths = sysconfig.get_paths()
    return [f"-I{paths['include']}", f"-I{paths['platinclude']}"]


def _compile(key: str, source: str, cdef: str, cc: list[str], flags: list[str]) -> Path:
    """Compile in a private temporary folder, then install into the cache atomically."""
    name = f"rg_{key}"
    ffi = FFI()
    ffi.cdef(cdef)
    ffi.set_source(name, source)
    cdir = disk.cache_dir()
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=cdir))
    try:
        # the same file name in every process, so racing builds produce identical bytes
        csrc = tmp / f"{name}.c"
        with contextlib.redirect_stdout(io.StringIO()):  # cffi prints "generating ..."
            ffi.emit_c_code(str(csrc))
        out = tmp / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
        # relative names: the object records the source's name, so no random folder in it
        cmd = [*cc, *flags, *_REQUIRED, *_python_includes(), csrc.name, "-o", out.name,
               *_mvec()]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        except OSError as e:
            raise CompileError(str(e), _keep_source(cdir, name, csrc), cmd) from e
        if proc.returncode != 0 or not out.exists():
            msg = (proc.stderr or proc.stdout or f"exit status {proc.returncode}").strip()
            raise CompileError(msg, _keep_source(cdir, name, csrc), cmd)
        if int(os.environ.get("DEBUG", "0") or 0) >= 4:
            _keep_source(cdir, name, csrc)
        return disk.install(key, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _keep_source(cdir: Path, name: str, csrc: Path) -> str:
    """Keep the compiled file (cffi's wrapper around our source, so the compiler's line
    numbers match it) next to the cache entry, for inspection."""
    path = cdir / f"{name}.c"
    disk.atomic_write(path, csrc.read_bytes())
    return str(path)
