"""Issue 31, the blind spots left after session 62 (helper hunt63), each test seen failing on the
code before its fix: `cache info` counting forged entries, guards no value can satisfy, shadowing
between rules whose patterns carry literals, integer constants out of their dtype's range."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest


# ====================================================================== cache info: ours only
@pytest.fixture
def project_cache(tmp_path, monkeypatch) -> Path:
    from rulegrad.backends.c import cache as disk

    path = tmp_path / "project"
    path.mkdir(mode=0o700)
    monkeypatch.setenv("RULEGRAD_CACHE", str(path))
    monkeypatch.delenv("RULEGRAD_CACHE_MAX", raising=False)
    monkeypatch.setattr(disk, "_fallback", {})
    monkeypatch.setattr(disk, "_cleaned", set())
    return path


def test_cache_info_counts_only_what_clear_would_delete(project_cache):
    """A project folder holding files forged under entry names (a library with no sidecar, one
    with a sidecar for other bytes, a .beam naming another key): info counted them as libraries
    though clear leaves them; it must count what clear removes, and the same bytes."""
    from rulegrad.backends.c import cache as disk

    mine = [disk.key_of("kernel", str(i)) for i in range(3)]
    for key in mine:
        disk.install(key, b"\x7fELF library " + key.encode())
    forged = [disk.key_of("forged", str(i)) for i in range(4)]
    (project_cache / f"rg_{forged[0]}.so").write_bytes(b"\0" * 50_000)
    (project_cache / f"rg_{forged[1]}.so").write_bytes(b"\0" * 50_000)
    (project_cache / f"rg_{forged[1]}.sha256").write_bytes(
        f"{mine[1]} {'0' * 64}\n".encode())  # a sidecar naming another entry
    (project_cache / f"rg_{forged[2]}.beam").write_bytes(b'{"key": "%s"}' % mine[0].encode())
    (project_cache / f"rg_{forged[3]}.c").write_bytes(b"int main(void) { return 0; }\n")
    out = disk.info()
    assert "entries   3 libraries" in out, out
    size = sum(p.stat().st_size for p in project_cache.iterdir()
               if any(k in p.name for k in mine))
    assert f"{size} B" in out or f"{size / 1024:.1f} KB" in out, out
    removed, failed, _ = disk.clear()
    assert (removed, failed) == (3, 0)
    assert "entries   0 libraries" in disk.info()
    assert len(list(project_cache.iterdir())) == 5  # the forged files, left alone


def test_cache_info_on_2000_entries_reads_each_file_once(project_cache, monkeypatch):
    """The ownership test reads (and hashes) every library; info over 2,000 entries must do so
    once per file, not once per file per check (counted, not timed)."""
    from rulegrad.backends.c import cache as disk

    for i in range(2000):
        key = disk.key_of("many", str(i))
        so, side = disk.entry_paths(key, project_cache)
        data = b"lib" + key.encode()
        side.write_bytes(disk._sidecar_text(key, data))
        so.write_bytes(data)
    reads = []
    real = disk.read_regular
    monkeypatch.setattr(disk, "read_regular", lambda p, n: reads.append(p) or real(p, n))
    assert "entries   2000 libraries" in disk.info()
    assert len(reads) <= 2 * 2 * 2000  # each .so: itself and its sidecar; each sidecar: itself
