"""docs/ARCHITECTURE.md names files; a file that moves or goes must take the doc with it.

Every `folder/file.py` (or `.rules`, `.md`, `.lark`) the doc names in backquotes exists under
that path; a bare `file.py` exists somewhere in the package's folders."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
FOLDERS = ("api", "backends", "dsl", "generator", "rules", "runtime", "tools", "bench", "tests")
_NAMED = re.compile(r"[\w/.-]+\.(?:py|rules|md|lark)\b")


def named_files(text: str) -> set[str]:
    """The file names inside the backquoted spans of `text` (outside its fenced blocks; not a
    pattern such as `*_helpers.py`, nor a dotted module name such as `rulegrad.rules`)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    spans = [s for s in re.findall(r"`([^`\n]+)`", prose) if not re.search(r"[*<]", s)]
    return {name for span in spans for name in _NAMED.findall(span)
            if not name.startswith("rulegrad.")}


def missing(names: set[str]) -> list[str]:
    everywhere = {p.name for f in FOLDERS for p in (ROOT / f).rglob("*") if p.is_file()}
    return sorted(n for n in names
                  if not ((ROOT / n).exists() if "/" in n else n in everywhere))


def test_the_files_the_architecture_doc_names_exist():
    names = named_files(DOC.read_text(encoding="utf-8"))
    assert len(names) > 40  # the doc is concrete: it names the files
    assert missing(names) == []


def test_a_moved_file_is_found():
    assert missing({"runtime/tensor.py", "tensor_ops.py", "rules/rangeify.rules"}) == []
    assert missing({"runtime/no_such_module.py", "no_such_helpers.py"}) == [
        "no_such_helpers.py", "runtime/no_such_module.py"]
