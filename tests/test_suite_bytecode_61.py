"""tests/conftest.py's bytecode folder: where bytecode writing is off, the suite's processes keep
their compiled modules in a folder of the session's cache, never beside the sources."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import conftest
import pytest


def test_bytecode_off_is_moved_into_the_cache_and_a_users_choice_is_kept(tmp_path, monkeypatch):
    for name in (conftest.BYTECODE, "PYTHONPYCACHEPREFIX"):  # (each restored after the test)
        monkeypatch.setenv(name, "")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX")
    conftest._bytecode_in(str(tmp_path))
    assert os.environ[conftest.BYTECODE] == "cache"
    prefix = str(tmp_path / "pycache")
    assert os.environ.get("PYTHONPYCACHEPREFIX") == prefix
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ  # (what children and workers read)
    assert (sys.dont_write_bytecode, sys.pycache_prefix) == (False, prefix)
    # a prefix of the user's own, with writing off: left as it is (nothing written)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "theirs"))
    conftest._bytecode_in(str(tmp_path / "other"))
    assert os.environ[conftest.BYTECODE] == "user"
    assert os.environ["PYTHONPYCACHEPREFIX"] == str(tmp_path / "theirs")
    assert os.environ.get("PYTHONDONTWRITEBYTECODE") == "1" and sys.dont_write_bytecode
    # writing on (Python's default): __pycache__ beside the sources, as the user has it
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX")
    conftest._bytecode_in(str(tmp_path / "other"))
    assert "PYTHONPYCACHEPREFIX" not in os.environ and sys.pycache_prefix is None


def test_a_child_process_keeps_its_bytecode_in_the_sessions_cache(tmp_path):
    """A `python -c` child of a test (as the CLI tests start) reads a module it imports from
    the session's bytecode folder the second time, and writes nothing beside the source."""
    if os.environ.get(conftest.BYTECODE) == "user":
        pytest.skip("this run writes bytecode as the user has it (PYTHONDONTWRITEBYTECODE unset)")
    session = os.environ["RULEGRAD_TEST_SESSION_CACHE"]
    (tmp_path / "s61_mod.py").write_text("VALUE = 61\n")
    code = "import s61_mod, sys; print(s61_mod.VALUE, s61_mod.__cached__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == "61"
    cached = Path(out[1])
    assert cached == Path(importlib.util.cache_from_source(str(tmp_path / "s61_mod.py")))
    assert cached.is_file() and cached.is_relative_to(session)
    assert not (tmp_path / "__pycache__").exists()
