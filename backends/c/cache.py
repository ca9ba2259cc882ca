"""The kernel library cache: built shared libraries on disk, and loaded ones in this process.

In: a cache key (sha256 of C source + compiler command + flags + compiler version) and a
function that builds the library into a given path. Out: the path of a verified library.

On disk (`RULEGRAD_CACHE`, default `$XDG_CACHE_HOME/rulegrad` or `~/.cache/rulegrad`) each entry
is `rg_<key>.so` plus `rg_<key>.sha256`, the hash of the library's bytes. The folder is created
with mode 0700; a folder that is not ours or that others can write is refused (we would load
code from it). Files are written to a temporary name in the same folder and renamed into place
(`os.replace` is atomic), so several processes may build the same entry at once: each rename
installs a complete file, never a partial one. A library whose bytes do not match its sidecar
(truncated, flipped bytes, a half-finished copy from elsewhere) is rebuilt; no pickle is used.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

from .errors import CacheError


def cache_dir() -> Path:
    """The cache folder, created (0700) and checked on first use."""
    env = os.environ.get("RULEGRAD_CACHE")
    if env:
        path = Path(env).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
        path = base / "rulegrad"
    return ensure_private_dir(path)


_checked: set[Path] = set()


def ensure_private_dir(path: Path) -> Path:
    """Create `path` with mode 0700 if missing; refuse it unless we own it and only we write."""
    if path in _checked:
        return path
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


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader sees the old file or the whole new one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def entry_paths(key: str) -> tuple[Path, Path]:
    """The library and its hash sidecar for a cache key."""
    d = cache_dir()
    return d / f"rg_{key}.so", d / f"rg_{key}.sha256"


def lookup(key: str) -> Path | None:
    """The library for `key` when it is on disk and intact; None when it must be (re)built."""
    so, side = entry_paths(key)
    try:
        expected = side.read_text().strip()
        actual = sha256_file(so)
    except OSError:
        return None
    return so if actual == expected else None


def install(key: str, built: Path) -> Path:
    """Move a freshly built library into the cache, sidecar first, each atomically.

    Builds of the same source are byte-identical (same input, same file name), so racing
    installers write identical pairs and any interleaving leaves a consistent entry."""
    so, side = entry_paths(key)
    data = built.read_bytes()
    atomic_write(side, hashlib.sha256(data).hexdigest().encode() + b"\n")
    atomic_write(so, data)
    return so
