"""tests/suite_costs.py: one line per test, written by the process that ran it."""

from __future__ import annotations

from types import SimpleNamespace

import suite_costs


def _session(plugins: set[str]) -> SimpleNamespace:
    manager = SimpleNamespace(hasplugin=lambda name: name in plugins)
    return SimpleNamespace(config=SimpleNamespace(pluginmanager=manager))


def test_a_test_is_counted_once_by_its_worker_never_by_the_xdist_controller(tmp_path,
                                                                          monkeypatch):
    """xdist tells its controller of every test a worker starts and finishes: the controller
    (the process with xdist's `dsession` plugin) writes nothing, a worker or a run without xdist
    one line per test, tab-separated before the test's id."""
    out = tmp_path / "costs.tsv"
    monkeypatch.setattr(suite_costs, "_FILE", str(out))
    monkeypatch.setattr(suite_costs, "_started", {})
    for plugins, name in (({"dsession"}, "t::controller"), (set(), "t::worker")):
        monkeypatch.setattr(suite_costs, "_counting", False)
        suite_costs.pytest_sessionstart(_session(plugins))
        suite_costs.pytest_runtest_logstart(name, None)
        suite_costs.pytest_runtest_logfinish(name, None)
    lines = out.read_text().splitlines()
    assert [ln.split("\t")[-1] for ln in lines] == ["t::worker"], lines
    cpu, runs, libs, _ = lines[0].split("\t")
    assert float(cpu) >= 0 and int(runs) == 0 and int(libs) == 0, lines
