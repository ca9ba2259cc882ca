"""The machine facts (runtime/target.py): sysfs and cpuinfo text parsed from fixtures, the
overrides, and a clear EnvError for a bad one."""

from __future__ import annotations

import os

import pytest

from rulegrad.runtime import target
from rulegrad.runtime.env import EnvError

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14
flags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw
bugs\t\t: sysret_ss_attrs

processor\t: 1
model name\t: Another CPU
flags\t\t: fpu
"""


def _index(root, name: str, level: str, kind: str, size: str) -> None:
    d = root / name
    d.mkdir()
    (d / "level").write_text(level + "\n")
    (d / "type").write_text(kind + "\n")
    (d / "size").write_text(size + "\n")


def test_cpuinfo_first_processor():
    c = target.parse_cpuinfo(CPUINFO)
    assert c.model == "AMD EPYC 9R14"
    assert c.flags == {"fpu", "sse2", "avx", "avx2", "fma", "avx512f", "avx512bw"}
    assert target.parse_cpuinfo("processor : 0\nisa : rv64imafdc\n") == target.Cpu("", frozenset())


def test_sysfs_caches(tmp_path):
    _index(tmp_path, "index0", "1", "Data", "48K")
    _index(tmp_path, "index1", "1", "Instruction", "32K")  # not data: ignored
    _index(tmp_path, "index2", "2", "Unified", "2048K")
    _index(tmp_path, "index3", "3", "Unified", "32M")
    assert target.read_caches(tmp_path) == {1: 48 << 10, 2: 2 << 20, 3: 32 << 20}


def test_sysfs_unreadable_entries_are_skipped(tmp_path):
    _index(tmp_path, "index0", "1", "Data", "lots")
    _index(tmp_path, "index1", "x", "Unified", "1M")
    (tmp_path / "index2").mkdir()  # no files at all
    _index(tmp_path, "index3", "2", "Unified", "1M")
    assert target.read_caches(tmp_path) == {2: 1 << 20}
    assert target.read_caches(tmp_path / "absent") == {}


def test_sizes():
    assert target.parse_size("32K") == 32768
    assert target.parse_size("1024K\n") == 1 << 20
    assert target.parse_size("32M") == 32 << 20
    assert target.parse_size("4096") == 4096
    assert target.parse_size("0K") is None
    assert target.parse_size("K") is None


def test_machine_caches_fall_back_by_level(monkeypatch, tmp_path):
    _index(tmp_path, "index0", "2", "Unified", "1M")
    monkeypatch.setattr(target, "CACHE_DIR", tmp_path)
    target._caches.cache_clear()
    try:
        for level in (1, 2, 3):
            monkeypatch.delenv(f"RULEGRAD_L{level}_BYTES", raising=False)
        assert target.cache_bytes(1) == target.FALLBACK_CACHE[1]
        assert target.cache_bytes(2) == 1 << 20
        assert target.cache_bytes(3) == target.FALLBACK_CACHE[3]
    finally:
        target._caches.cache_clear()


def test_overrides(monkeypatch):
    monkeypatch.setenv("RULEGRAD_L1_BYTES", "48K")
    monkeypatch.setenv("RULEGRAD_L2_BYTES", "2M")
    monkeypatch.setenv("RULEGRAD_L3_BYTES", "100000")
    monkeypatch.setenv("RULEGRAD_THREADS", "3")
    assert [target.cache_bytes(v) for v in (1, 2, 3)] == [48 << 10, 2 << 20, 100000]
    assert target.threads() == 3
    monkeypatch.delenv("RULEGRAD_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # OpenMP's own, when ours is not set
    assert target.threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "4,2")  # a list per nesting level: not one count
    assert target.threads() == len(os.sched_getaffinity(0))
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert target.threads() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("name, value, words", [
    ("RULEGRAD_L2_BYTES", "big", "expected a size"),
    ("RULEGRAD_L1_BYTES", "0", "at least 1 byte"),
    ("RULEGRAD_THREADS", "0", "at least 1"),
    ("RULEGRAD_THREADS", "two", "expected a whole number"),
])
def test_bad_overrides_name_the_variable(monkeypatch, name, value, words):
    monkeypatch.setenv(name, value)
    with pytest.raises(EnvError, match=name) as err:
        target.cache_bytes(int(name[10])) if "_L" in name else target.threads()
    assert words in str(err.value)


def test_machine_id_names_model_flags_and_cores(monkeypatch):
    first = target.machine_id()
    assert first == target.machine_id() and len(first) == 16
    other = target.Cpu(target.cpu().model, target.cpu().flags | {"made_up_flag"})
    monkeypatch.setattr(target, "cpu", lambda: other)
    assert target.machine_id() != first
    monkeypatch.setattr(target, "cpu", lambda: target.Cpu("Another CPU", other.flags))
    second = target.machine_id()
    assert second != first
    n = target.cores()
    monkeypatch.setattr(target, "cores", lambda: n + 1)
    assert target.machine_id() != second
