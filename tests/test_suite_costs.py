"""tests/suite_costs.py: one line per test, written by the process that ran it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
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


def test_the_summary_sums_each_file_and_each_sweep_and_skips_a_torn_line(tmp_path, capsys):
    """`python tests/suite_costs.py FILE --by family`: a parametrized test's cases are one
    family (their CPU seconds, compiler runs and libraries added), costliest first; a torn
    last line (a run stopped mid-write) is skipped, not a traceback."""
    lines = ["1.5\t3\t2\ttests/test_a.py::test_x[1-2]\n",
             "0.3\t1\t1\ttests/test_a.py::test_x[3-4]\n",
             "2.0\t0\t0\ttests/test_b.py::test_y\n",
             "0.5\t2\t1\ttests/test_a.py::test_z\n",
             "0.7\t1"]
    assert suite_costs.summary(lines, "family") == [
        ("tests/test_b.py::test_y", 2.0, 0, 0, 1),
        ("tests/test_a.py::test_x", 1.8, 4, 3, 2),
        ("tests/test_a.py::test_z", 0.5, 2, 1, 1)]
    assert suite_costs.summary(lines, "file") == [
        ("tests/test_a.py", 2.3, 6, 4, 3), ("tests/test_b.py", 2.0, 0, 0, 1)]
    costs = tmp_path / "costs.tsv"
    costs.write_text("".join(lines))
    assert suite_costs.main([str(costs), "--top", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["2.3\t6\t4\t3\ttests/test_a.py", "4.3\t6\t4\t4\t(all 2)"]
    with pytest.raises(SystemExit):  # (argparse's worded error, exit status 2)
        suite_costs.main([str(tmp_path / "missing.tsv")])
    assert "cannot read the costs file" in capsys.readouterr().err
