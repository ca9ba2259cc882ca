"""A test's C backend with nothing built yet: its own compile cache, no schedule cache or
realize plans, and no library or program kept in memory from an earlier test (so the test sees
the build its own settings make)."""

from __future__ import annotations

from rulegrad.backends.c import build, run


def fresh_c(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RULEGRAD_SCHEDULE_CACHE", "0")
    monkeypatch.setenv("RULEGRAD_PLANS", "0")
    build.clear_memory_cache()
    run._programs.clear()
