"""The kernel library cache on disk: content-addressed, checked on every read, healed, bounded.

In: a cache key (sha256 of C source + compiler command + flags + compiler version) and the
bytes of a freshly built library. Out: the verified bytes of a cached library, or None (build it).

On disk (`RULEGRAD_CACHE`, default `$XDG_CACHE_HOME/rulegrad` or `~/.cache/rulegrad`) each entry
is `rg_<key>.so` plus `rg_<key>.sha256`, which holds the key and the hash of the library's bytes.
The folder is created with mode 0700; a folder that is not ours or that others can write is
refused (we would load code from it).

Trust nothing that is there. An entry is read through one descriptor opened with `O_NOFOLLOW`
and `O_NONBLOCK` (a symlink, e.g. to /dev/zero, is refused; a FIFO does not hang), only if it is
a regular file no larger than `MAX_ENTRY_BYTES`; the sidecar must be ASCII and name this key and
the hash of exactly the bytes read. Anything else (a folder, a device, non-UTF-8 bytes, another
entry's library or sidecar, a truncated file) is a miss: the entry is rebuilt and reinstalled
over whatever was there. The bytes that were checked are the bytes that get loaded (the loader
writes them to a fresh file of its own), so nothing can change between check and load.

Writes go to a temporary name in the same folder and are renamed into place (`os.replace` is
atomic), so racing builders each install a complete file. A cache that cannot be written
(read-only, full, not creatable) is still read; new libraries go to a private temporary folder
for the rest of the process, after one warning. Build folders (`.build-<pid>-*`) left by killed
processes are removed the first time a process uses the cache.

Bounded: past `RULEGRAD_CACHE_MAX` bytes (default 500 MB; `500M`, `2G`) the least recently
used entries are deleted, down to an eighth below the limit (so a full folder is not scanned
again at the next install). A library's modification time is its last use (a load touches it).
A process scans the folder (and evicts) when what it counted there could pass the limit, or
after it added an eighth of the entries it counted, not at every install: what other processes
added since its last scan is found at its next one.
`RULEGRAD_CACHE_MAX=0` keeps no library on disk: each build is loaded from its private build
folder, nothing is installed, and the entries already there are deleted (every new process
compiles again). `rulegrad cache info|clear` shows and empties the folder; clear reports what it
removed, and exits non-zero naming the first error when some entry could not be removed.

`RULEGRAD_BEAM`'s searched winners (backends/c/beam.py) are entries too: `rg_<key>.beam`, a small
JSON object that names its own key (one that does not is a miss, searched again); so are printed
kernels (backends/c/kernel_index.py): `rg_<key>.rk`, which name their own key too.

Only what the cache made is ever deleted: an entry is a regular file named exactly
`rg_<40 hex digits>.so|.sha256|.c|.beam|.rk` whose content names its key (a library: its sidecar
holds its key and the hash of its bytes; a kept C source ends with a comment naming it, or,
kept by an earlier release, opens with the renderer's prelude and names no entry), a build
folder or temporary file exactly `.build-<pid>-<suffix>` / `.tmp-<pid>-<suffix>`. Anything else
in the folder (`rg_results/`, `rg_notes.txt`, a file forged under an entry's name, when
RULEGRAD_CACHE names a project folder) is left alone by clear and eviction, and not counted by
info, which counts by the same test (it reads each library and its sidecar once: 2,000
entries of 13.5 KB take 0.2 s, against 0.09 s for the listing alone).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

from .errors import CacheError

DEFAULT_MAX_BYTES = 500 * 1024**2
MAX_ENTRY_BYTES = 256 * 1024**2  # no kernel library is this large; a bigger file is not ours
ORPHAN_AGE = 60.0  # seconds a dead process's build folder is left alone (clock skew, NFS)
_SIDECAR_BYTES = 4096
_lock = threading.RLock()


# ---------------------------------------------------------------------------- folders
def cache_dir() -> Path:
    """The cache folder, created (0700) and checked on first use."""
    return ensure_private_dir(configured_dir(), create=True)


def configured_dir() -> Path:
    env = os.environ.get("RULEGRAD_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "rulegrad"


_checked: set[Path] = set()


def ensure_private_dir(path: Path, create: bool = True) -> Path:
    """Create `path` with mode 0700 if missing; refuse it unless we own it and only we write."""
    if path in _checked:
        return path
    if create:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.stat()
    if not stat.S_ISDIR(st.st_mode):
        raise CacheError(f"kernel cache {path} is not a folder")
    if st.st_uid != os.getuid():
        raise CacheError(f"kernel cache {path} belongs to uid {st.st_uid}, not to us "
                         f"({os.getuid()}); set RULEGRAD_CACHE to a folder of your own")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheError(f"kernel cache {path} is writable by other users (mode "
                         f"{stat.S_IMODE(st.st_mode):o}); run `chmod 700 {path}` or set "
                         "RULEGRAD_CACHE")
    _checked.add(path)
    return path


# the private folder new libraries go to when the configured cache cannot be written, per
# configured folder (a test may point RULEGRAD_CACHE elsewhere mid-process)
_fallback: dict[Path, Path] = {}
_cleaned: set[Path] = set()


def _readable_dir() -> Path | None:
    """The configured folder when it exists (and is safe); None when there is none yet."""
    path = configured_dir()
    try:
        return cache_dir()
    except CacheError:
        raise
    except OSError:
        return path if path in _fallback else None


def write_dir() -> Path:
    """Where new libraries and build folders go: the cache, or (once it failed) a private
    temporary folder, announced by one warning."""
    path = configured_dir()
    with _lock:
        if path in _fallback:
            return _fallback[path]
        try:
            d = cache_dir()
            if d not in _cleaned:
                _cleaned.add(d)
                clean_orphans(d)
            return d
        except CacheError:
            raise
        except OSError as e:
            return use_fallback(path, e)


def use_fallback(path: Path, why: OSError) -> Path:
    """Switch this process to a private temporary folder for `path`'s new entries."""
    with _lock:
        if path not in _fallback:
            tmp = Path(tempfile.mkdtemp(prefix="rulegrad-cache-"))
            _fallback[path] = tmp
            warnings.warn(f"rulegrad: the kernel cache {path} cannot be written "
                          f"({why.strerror or why}); this process keeps its compiled kernels in "
                          f"{tmp} instead",
                          RuntimeWarning, stacklevel=3)
        return _fallback[path]


def new_build_dir() -> Path:
    """A fresh folder for one build, named after this process so an orphan can be recognised."""
    d = write_dir()
    try:
        return Path(tempfile.mkdtemp(prefix=f".build-{os.getpid()}-", dir=d))
    except OSError as e:
        if d == _fallback.get(configured_dir()):
            raise
        d = use_fallback(configured_dir(), e)
        return Path(tempfile.mkdtemp(prefix=f".build-{os.getpid()}-", dir=d))


# the names of what this module makes (see the module docstring); nothing else is deleted
_ORPHAN = re.compile(r"\.(build|tmp)-(\d+)-[A-Za-z0-9_]+(\.so|\.sha256|\.c|\.rk)?")
_ENTRY = re.compile(r"rg_([0-9a-f]{40})\.(so|sha256|c|beam|rk)")


def clean_orphans(d: Path) -> int:
    """Remove build folders and temporary files whose process is gone; how many were removed."""
    removed = 0
    now = time.time()
    try:
        entries = list(os.scandir(d))
    except OSError:
        return 0
    for e in entries:
        m = _ORPHAN.fullmatch(e.name)
        if m is None:
            continue  # not a name of ours: someone else's file
        try:
            age = now - e.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        alive = _alive(int(m.group(2)))
        if (not alive and age > ORPHAN_AGE) or age > 86400:
            _remove(Path(e.path))
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours to signal
    return True


def _remove(path: Path) -> OSError | None:
    """Delete whatever is at `path` (file, link, FIFO or folder), never following a link; the
    error when it could not be deleted (it is still there)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    except FileNotFoundError:
        return None
    except OSError as e:
        return e
    return None


# ---------------------------------------------------------------------------- reading
def read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of `path` if it is a regular file (not a link) of at most `limit` bytes."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None  # missing, a symlink (ELOOP), unreadable
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return None  # grew while we read
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def key_of(*parts: str) -> str:
    """An entry's key: the sha256 of its parts, each ended by a NUL (40 hex digits)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:40]


def _sidecar_text(key: str, data: bytes) -> bytes:
    return f"{key} {hashlib.sha256(data).hexdigest()}\n".encode()


def entry_paths(key: str, d: Path | None = None) -> tuple[Path, Path]:
    """The library and its sidecar for a cache key."""
    d = cache_dir() if d is None else d
    return d / f"rg_{key}.so", d / f"rg_{key}.sha256"


def lookup(key: str) -> bytes | None:
    """The verified bytes of the library for `key`; None when it must be (re)built."""
    dirs = [d for d in (_readable_dir(), _fallback.get(configured_dir())) if d is not None]
    for d in dirs:
        so, side = entry_paths(key, d)
        data = read_regular(so, MAX_ENTRY_BYTES)
        if data is not None and read_regular(side, _SIDECAR_BYTES) == _sidecar_text(key, data):
            _touch(so)
            return data
    return None


def _touch(path: Path) -> None:
    """Mark an entry as just used (its mtime orders eviction); a read-only cache stays as is."""
    try:
        os.utime(path, follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass


# ---------------------------------------------------------------------------- writing
def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader sees the old file or the whole new one; whatever
    sat at `path` (a folder, a FIFO, a link) is replaced."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{os.getpid()}-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:
            os.replace(tmp, path)
        except OSError:
            if not (path.is_dir() and not path.is_symlink()):
                raise
            _remove(path)  # a folder squatting on the entry's name
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def install(key: str, data: bytes) -> Path | None:
    """Put a freshly built library into the cache, sidecar first, each atomically; evict past
    the size limit. A cache that cannot be written sends this and later entries to the
    fallback folder (one warning). With RULEGRAD_CACHE_MAX=0 nothing is installed (None) and
    what is there is evicted."""
    d = write_dir()
    if max_bytes() == 0:
        evict(d, 0)
        return None
    try:
        so = _install_in(d, key, data)
    except OSError as e:
        if d == _fallback.get(configured_dir()):
            raise CacheError(f"cannot write the kernel cache fallback {d}: {e}") from e
        so = _install_in(use_fallback(configured_dir(), e), key, data)
    _evict_when_due(so, len(data) + len(_sidecar_text(key, b"")))  # (a digest's length)
    return so


# What this process last counted in each cache folder: (bytes, entries) at its last scan, plus
# the bytes and entries it installed since. A scan stats every file of the folder, so one per
# install made N builds cost N^2 (the test suite's session cache, thousands of libraries, spent
# more of its time listing itself than compiling). The folder is scanned again, and evicted,
# when what was counted could pass the limit, and after this process has added a RESCAN_SHARE
# of the entries it last counted (other processes write to the folder too: the bytes they added
# since are not counted, so the folder may pass the limit by that much until the next scan).
RESCAN_SHARE = 8  # an eighth: the scans then cost about 8 entries' stats per install
_counted: dict[Path, list[int]] = {}  # folder -> [bytes, entries at the scan, entries added]


def _evict_when_due(so: Path, added: int) -> None:
    d, limit = so.parent, max_bytes()
    seen = _counted.get(d)
    if seen is not None and seen[0] + added <= limit and seen[2] < max(1, seen[1] // RESCAN_SHARE):
        seen[0] += added
        seen[2] += 1
        return
    # past the limit, down to an eighth below it: evicting only to the limit left a full folder
    # at the limit, so every later install passed it and scanned again (63,000 entries: 5 s
    # a scan, a cold `rulegrad fuzz --opt` program spent 108 of its 117 s listing the folder)
    evict(d, limit, keep=so, low=limit - limit // RESCAN_SHARE)


def _install_in(d: Path, key: str, data: bytes) -> Path:
    so, side = entry_paths(key, d)
    atomic_write(side, _sidecar_text(key, data))
    atomic_write(so, data)
    return so


# ---------------------------------------------------------------------------- other entries
# `RULEGRAD_BEAM`'s winners (backends/c/beam.py) and printed kernels (kernel_index.py), each
# naming its own key, beside the libraries, evicted and cleared with them
_CHOICE_BYTES = 4096


def lookup_entry(key: str, suffix: str, limit: int) -> bytes | None:
    """The bytes of the entry `rg_<key>.<suffix>` (marked as just used), if it is a regular
    file of at most `limit` bytes; the caller checks that they name `key`."""
    for d in (_readable_dir(), _fallback.get(configured_dir())):
        if d is not None and (data := read_regular(d / f"rg_{key}.{suffix}", limit)) is not None:
            _touch(d / f"rg_{key}.{suffix}")
            return data
    return None


def install_entry(key: str, suffix: str, data: bytes) -> None:
    """Store `data` as the entry `rg_<key>.<suffix>`, atomically; evict past the size limit.
    A cache that cannot be written keeps nothing; RULEGRAD_CACHE_MAX=0 neither."""
    if max_bytes() == 0:
        return
    path = write_dir() / f"rg_{key}.{suffix}"
    try:
        atomic_write(path, data)
    except OSError:
        return
    _evict_when_due(path, len(data))


def lookup_choice(key: str) -> dict | None:
    """The stored winner for `key` (its JSON object); None when there is none or the entry is
    not a regular file, not JSON, or names another key (a miss: searched again)."""
    import json  # (here and in install_choice: only a search reads or writes a winner)

    data = lookup_entry(key, "beam", _CHOICE_BYTES)
    try:
        entry = json.loads(data.decode("ascii")) if data is not None else None
    except (UnicodeDecodeError, ValueError):
        return None
    return entry if isinstance(entry, dict) and entry.get("key") == key else None


def install_choice(key: str, entry: dict) -> None:
    """Store a winner (a JSON-able object; its key is added). A cache that cannot be written
    keeps nothing (the winner stays in the process's memory)."""
    import json

    install_entry(key, "beam", json.dumps({**entry, "key": key}, sort_keys=True).encode("ascii"))


# ---------------------------------------------------------------------------- bounds
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


def max_bytes() -> int:
    """`RULEGRAD_CACHE_MAX` in bytes (`500M`, `2G`, `1048576`), default 500 MB."""
    text = os.environ.get("RULEGRAD_CACHE_MAX", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    m = _SIZE.fullmatch(text)
    if m is None:
        raise CacheError(f"RULEGRAD_CACHE_MAX={text!r} is not a size; write e.g. 500M, 2G or a "
                         "number of bytes")
    unit = m.group(2).lower()
    return int(float(m.group(1)) * (1024 ** ("kmgt".index(unit) + 1) if unit else 1))


class Entry:
    """One library in the cache, with its sidecar and kept source. (A class of slots, not a
    dataclass: a dataclass compiles its methods from source at import, ~1 ms of a process's
    first realize.)"""

    __slots__ = ("key", "files", "size", "used")

    def __init__(self, key: str, files: list[Path], size: int, used: float):
        self.key, self.files, self.size = key, files, size
        self.used = used  # the library's mtime: its last build or load


def entries(d: Path) -> list[Entry]:
    """The cache's entries (library, sidecar, kept source), least recently used first."""
    groups: dict[str, Entry] = {}
    try:
        listing = list(os.scandir(d))
    except OSError:
        return []
    for e in listing:
        name = e.name
        m = _ENTRY.fullmatch(name)
        if m is None:
            continue  # not a name of ours: someone else's file
        key = m.group(1)
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            continue  # a folder under our name: not ours either (install replaces it)
        ent = groups.setdefault(key, Entry(key, [], 0, 0.0))
        ent.files.append(Path(e.path))
        ent.size += st.st_size
        if name.endswith((".so", ".beam", ".rk")):  # (a searched choice, a printed kernel:
            # entries of their own)
            ent.used = st.st_mtime
    return sorted(groups.values(), key=lambda x: x.used)


def evict(d: Path, limit: int, keep: Path | None = None, low: int | None = None) -> int:
    """When `d` holds more than `limit` bytes, delete least recently used entries until it
    holds at most `low` (default: `limit`); how many were deleted."""
    all_entries = entries(d)
    total = sum(e.size for e in all_entries)
    target = limit if total <= limit or low is None else min(low, limit)
    removed = 0
    for ent in all_entries:
        if total <= target:
            break
        if keep is not None and keep in ent.files:
            continue  # the entry just installed stays, even alone above the limit
        if _remove_entry(ent) is None:
            removed += 1
        total -= ent.size  # (one that cannot be removed is not tried again and again)
    _counted[d] = [total, len(all_entries) - removed, 0]
    return removed


_NOT_OURS = OSError("no file of this entry was made by the cache")


def _remove_entry(ent: Entry) -> OSError | None:
    """Delete the entry's files the cache made; the first error (some file is still there),
    `_NOT_OURS` when none of them is the cache's, else None."""
    mine = [path for path in ent.files if _made_here(path, ent.key)]
    if not mine:
        return _NOT_OURS
    errors = [e for e in map(_remove, mine) if e is not None]
    return errors[0] if errors else None


def _made_here(path: Path, key: str) -> bool:
    """Whether the file at `path` (named `rg_<key>.<suffix>`) is one the cache wrote: each kind
    names its key in its content (a library through its sidecar, which also holds the hash of
    its bytes). A file forged under our name pattern (or one replaced by another's) fails."""
    suffix = path.suffix
    if suffix == ".so":
        data = read_regular(path, MAX_ENTRY_BYTES)
        side = read_regular(path.with_suffix(".sha256"), _SIDECAR_BYTES)
        return data is not None and side == _sidecar_text(key, data)
    limit = MAX_ENTRY_BYTES if suffix in (".c", ".rk") else _SIDECAR_BYTES
    data = read_regular(path, limit)
    if data is None:
        return False  # a link, folder, FIFO or oversized file: the cache writes none
    if suffix == ".sha256":
        return _SIDECAR.fullmatch(data) is not None and data.startswith(key.encode() + b" ")
    if suffix == ".c":
        return data.endswith(kept_source_mark(key)) or _kept_by_a_release(data)
    if suffix == ".beam":
        return b'"key": "%s"' % key.encode() in data
    try:  # .rk: a marshalled (key, fields)
        entry = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return False
    return type(entry) is tuple and len(entry) == 2 and entry[0] == key


_SIDECAR = re.compile(rb"[0-9a-f]{40} [0-9a-f]{64}\n")

# How the kernel sources the renderer wrote open: today's prelude, and the one before it (system
# headers); a source kept before the closing mark existed is recognised by them.
_PRELUDES = (b"typedef __INT8_TYPE__ int8_t;", b"#include <stdint.h>\n#include <stdio.h>")
_MARK_START = b"/* rulegrad kernel cache entry rg_"


def _kept_by_a_release(data: bytes) -> bool:
    """A kernel source kept by a release before the closing mark (DEBUG=4, a failed compile):
    ASCII text opening with a prelude the renderer wrote, and naming no entry (one ending with
    another entry's mark is a copy, not ours). Without this, `cache clear` and eviction left
    every such file for good."""
    return data.isascii() and _MARK_START not in data[-100:] \
        and data.lstrip().startswith(_PRELUDES)


def kept_source_mark(key: str) -> bytes:
    """The last line of a kept C source (build.py keeps one when a compile fails): its key."""
    return f"\n/* rulegrad kernel cache entry rg_{key} */\n".encode()


# ---------------------------------------------------------------------------- the command
def info() -> str:
    d = configured_dir()
    lines = [f"folder    {d}"]
    if not d.exists():
        return "\n".join(lines + ["entries   0 (the folder does not exist yet)"])
    # count what clear and eviction would delete, by the same test: a file forged under an
    # entry's name (a project folder as the cache) is not a library of ours
    ents, total = [], 0
    for ent in entries(d):
        mine = [path for path in ent.files if _made_here(path, ent.key)]
        if mine:
            ents.append(ent)
            total += sum(_size(path) for path in mine)
    limit = max_bytes()
    orphans = [e.name for e in os.scandir(d) if _ORPHAN.fullmatch(e.name)]
    lines.append(f"entries   {len(ents)} libraries, {_human(total)}")
    lines.append(f"limit     {_human(limit)} (RULEGRAD_CACHE_MAX), least recently used go first")
    if ents:
        lines.append(f"oldest    {time.ctime(ents[0].used)}")
        lines.append(f"newest    {time.ctime(ents[-1].used)}")
    if orphans:
        lines.append(f"building  {len(orphans)} build folders or temporary files")
    return "\n".join(lines)


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0  # removed since the listing


def clear() -> tuple[int, int, OSError | None]:
    """Delete every entry and every orphaned build folder: how many entries were deleted, how
    many could not be, and the first error."""
    d = configured_dir()
    if not d.exists():
        return 0, 0, None
    ensure_private_dir(d, create=False)
    removed, failed, first = 0, 0, None
    for ent in entries(d):
        error = _remove_entry(ent)
        if error is None:
            removed += 1
        elif error is not _NOT_OURS:
            failed += 1
            first = first or error
    clean_orphans(d)
    return removed, failed, first


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def main(argv: list[str]) -> int:
    """`rulegrad cache info|clear`."""
    try:
        if argv == ["info"]:
            print(info())
            return 0
        if argv == ["clear"]:
            n, failed, error = clear()
            print(f"removed {n} libraries from {configured_dir()}")
            if failed:
                print(f"rulegrad cache: could not remove {failed} libraries: {error}",
                      file=sys.stderr)
                return 1
            return 0
    except (CacheError, OSError) as e:
        print(f"rulegrad cache: {e}", file=sys.stderr)
        return 2
    print("usage: rulegrad cache info|clear", file=sys.stderr)
    return 2
