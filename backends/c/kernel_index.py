"""The printed kernel of a kernel AST, kept on disk: a later process skips lowering, optimizing
and printing a kernel it has seen (run.py's `compile_program`).

In: a kernel's AST, its C name, `restrict` and the optimizer's settings. Out: the
`RenderedKernel` a process printed for the same, or None (print it, then `store` it).

A fresh process's first call of a program pays, per kernel, the lowering and optimizer passes
and the printer (a training step's fifteen kernels: about a third of its first step once the
libraries are on disk), then finds its library on disk by the printed source (cache.py). This
index keys the printed kernel by everything the three read: the AST as stable text (op, dtype,
arg, sources by position), the C name and `restrict`, the optimizer's settings, the machine's
facts (CPU model, flags, cores, cache sizes, vector width), the block library's setting and
rulegrad's own code (each module's size and modification time, as Python's bytecode cache
checks a source: an edited pass or printer prints anew). An entry is
`rg_<key>.rk`, beside the libraries, evicted and cleared with them: marshal's encoding of the
key and the kernel's fields, a dtype by its name; one that does not decode, or names another
key, is a miss. The compiler is not in the key: the printer never asks it (the command is among
the optimizer's settings; the library's own key has its version), and a fresh process's first
build asks its version while the kernels are printed (build.py's `probe_compiler`), not before.

Not used (every kernel printed, nothing stored) while anything watches the passes or the
printer: DEBUG, a tracing block, match statistics, spec checks, the interpreted matcher, and a
`RULEGRAD_BEAM` search (its winners are keyed apart: beam.py); nor with
`RULEGRAD_KERNEL_INDEX=0` (default on; on/off, true/false, yes/no also read; any other value is
an `EnvError` naming the variable). The test suite turns it off: its tests change the passes'
module constants, which no key sees.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from pathlib import Path

from rulegrad import rules, runtime
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.env import env_flag, env_get
from rulegrad.runtime.rewrite import tracing_active
from rulegrad.runtime.target import cache_bytes, machine_id, vector_bytes
from rulegrad.runtime.uop import UOp, toposort

from . import cache as disk
from .ctext import RenderedKernel

_VERSION = "2"  # of the entry's layout
MAX_ENTRY_BYTES = 16 * 1024**2  # no printed kernel is this large: a bigger file is not ours
# settings under which every kernel is printed anew: each watches a pass or the printer
WATCHERS = ("DEBUG", "RULEGRAD_SPEC", "RULEGRAD_MATCH_STATS", "RULEGRAD_MATCHER", "RULEGRAD_BEAM")
_OFF = (None, "", "0")
# every field of the record, so that a field added to it is kept too (a kernel read back without
# one printed wrong: its prelude lacked the helpers `uses` named)
_FIELDS = RenderedKernel.__slots__
_code: list[str] = []  # rulegrad's code stamp, made once per process


def ast_text(ast: UOp) -> str:
    """The kernel as stable text (op, dtype, arg, sources by position): the same in every
    process, so a key of it finds another process's entry."""
    index: dict[UOp, int] = {}
    lines = []
    for n in toposort(ast):
        index[n] = len(index)
        srcs = ",".join(str(index[s]) for s in n.src)
        lines.append(f"{n.op.name} {n.dtype} {n.arg!r} [{srcs}]")
    return "\n".join(lines)


def code_stamp() -> str:
    """rulegrad's runtime, rules and backends as their modules' names, sizes and modification
    times (Python's own test of a source against its bytecode), read once per process."""
    if not _code:
        parts = []
        for folder in (Path(runtime.__file__).parent, Path(rules.__file__).parent,
                       Path(rules.__file__).parent / "generated", Path(__file__).parent.parent,
                       Path(__file__).parent):
            with os.scandir(folder) as it:
                for e in sorted(it, key=lambda e: e.name):
                    if e.name.endswith(".py"):
                        st = e.stat()
                        parts.append(f"{folder.name}/{e.name} {st.st_size} {st.st_mtime_ns}")
        _code.append(hashlib.sha256("\n".join(parts).encode()).hexdigest())
    return _code[0]


def usable() -> bool:
    """Whether kernels may be read from and stored in the index now."""
    return (env_flag("RULEGRAD_KERNEL_INDEX", default=True) and not tracing_active()
            and all(env_get(name) in _OFF for name in WATCHERS))


def key(ast: UOp, cname: str, restrict: bool, settings: tuple) -> str:
    """The entry's key (`settings`: run.py's CHOICE_SETTINGS' values, the printer's block
    library setting among them)."""
    machine = (machine_id(), cache_bytes(1), cache_bytes(2), cache_bytes(3), vector_bytes())
    return disk.key_of(_VERSION, code_stamp(), ast_text(ast), cname, str(restrict),
                       repr(settings), repr(machine))


def lookup(k: str) -> RenderedKernel | None:
    """The kernel stored under `k`, or None (none there, or not a whole entry of this key)."""
    data = disk.lookup_entry(k, "rk", MAX_ENTRY_BYTES)
    if data is None:
        return None
    try:
        entry = marshal.loads(data)
        if type(entry) is not tuple or len(entry) != 2 or entry[0] != k:
            return None
        fields = dict(zip(_FIELDS, entry[1], strict=True))
        fields["param_dtypes"] = tuple(dtypes.from_name(n) for n in fields["param_dtypes"])
        return RenderedKernel(**fields)
    except (EOFError, ValueError, TypeError, KeyError, AttributeError):
        return None


def store(k: str, rk: RenderedKernel) -> None:
    """Keep `rk` under `k` (a cache that cannot be written keeps nothing)."""
    values = [getattr(rk, f) for f in _FIELDS]
    values[_FIELDS.index("param_dtypes")] = tuple(d.name for d in rk.param_dtypes)
    disk.install_entry(k, "rk", marshal.dumps((k, tuple(values))))

