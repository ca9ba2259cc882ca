"""The package's import graph only gets simpler: no new import cycle, no new private import.

bench/import_cycles.py reads every import (module level and inside functions; not those under
`if TYPE_CHECKING:`). The cycles still left are listed here; a cycle that is not inside one of
them, or a cycle that grew, fails. Shrink these lists as the cycles are cut (issue 35)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the cycles not cut yet; each found cycle must lie inside one of these
KNOWN = [
    {"rulegrad.rules.kernelize_helpers", "rulegrad.runtime.kernelize",
     "rulegrad.runtime.schedule", "rulegrad.runtime.schedule_cache"},
    {"rulegrad.runtime.autograd", "rulegrad.runtime.nn", "rulegrad.runtime.tensor",
     "rulegrad.runtime.tensor_ops"},
]
MAX_PRIVATE_IMPORTS = 16


def _counter():
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "bench" /
                                                  "import_cycles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_no_new_import_cycle():
    counter = _counter()
    edges, _ = counter.graph()
    for cycle in counter.cycles(edges):
        assert any(set(cycle) <= known for known in KNOWN), f"a new import cycle: {cycle}"


def test_the_counter_finds_a_cycle_it_is_shown():
    counter = _counter()
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert counter.cycles(edges) == [["a", "b", "c"]]


def test_no_new_import_of_a_private_name():
    _, private = _counter().graph()
    assert len(private) <= MAX_PRIVATE_IMPORTS, "\n".join(private)


def test_the_runtime_imports_no_tool():
    """fuzz, demo and the training demo are programs on top of the package (rulegrad.tools): the
    layers a program runs on (dsl, rules, runtime, backends) never import them."""
    edges, _ = _counter().graph()
    lower = ("rulegrad.dsl", "rulegrad.rules", "rulegrad.runtime", "rulegrad.backends")
    upward = [(a, b) for a, targets in edges.items() if a.startswith(lower)
              for b in targets if b.startswith("rulegrad.tools")]
    assert upward == []
