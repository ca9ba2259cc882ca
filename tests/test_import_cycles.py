"""The package's imports go one way: no import cycle, and no module imports another's private
name (issue 35).

bench/import_cycles.py reads every import (module level and inside functions; not those under
`if TYPE_CHECKING:`), as issue 35's own counter does."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent



def _counter():
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "bench" /
                                                  "import_cycles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_no_import_cycle():
    counter = _counter()
    edges, _ = counter.graph()
    assert counter.cycles(edges) == []


def test_the_counter_finds_a_cycle_it_is_shown():
    counter = _counter()
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert counter.cycles(edges) == [["a", "b", "c"]]


def test_no_import_of_a_private_name():
    _, private = _counter().graph()
    assert private == []


def test_the_runtime_imports_no_tool():
    """fuzz, demo and the training demo are programs on top of the package (rulegrad.tools): the
    layers a program runs on (dsl, rules, runtime, backends) never import them."""
    edges, _ = _counter().graph()
    lower = ("rulegrad.dsl", "rulegrad.rules", "rulegrad.runtime", "rulegrad.backends")
    upward = [(a, b) for a, targets in edges.items() if a.startswith(lower)
              for b in targets if b.startswith("rulegrad.tools")]
    assert upward == []
