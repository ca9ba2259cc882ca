"""The README and docs/*.md: every ```python block runs, in order, file by file, so the
examples cannot rot; and the README is the front door the project promises.

A block runs unless its fence says `python norun`; a ```rules file=NAME block is written to
NAME first (a rules file the next examples read). Each document runs in a process of its own,
in a fresh folder, its blocks sharing one namespace as a reader's session would. Oracles: the
examples' own asserts and comparisons with numpy, and any exception."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)

RUNNER = r"""
import json, sys
blocks = json.loads(sys.stdin.read())
scope = {"__name__": "__main__"}
for b in blocks:
    if b["kind"] == "file":
        open(b["name"], "w").write(b["code"])
        continue
    code = compile("\n" * (b["line"] - 1) + b["code"], b["doc"], "exec")
    exec(code, scope)
"""


def blocks(doc: Path) -> list[dict]:
    """The blocks of a document to run or write, in order, with their first line."""
    text = doc.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        info = m.group(1).split()
        line = text.count("\n", 0, m.start(2)) + 1
        if info[:1] == ["python"] and "norun" not in info:
            out.append({"kind": "python", "code": m.group(2), "line": line,
                        "doc": str(doc.relative_to(ROOT))})
        files = [w[5:] for w in info[1:] if w.startswith("file=")]
        if info[:1] == ["rules"] and files:
            out.append({"kind": "file", "name": files[0], "code": m.group(2)})
    return out


RUNNABLE = [d for d in DOCS if any(b["kind"] == "python" for b in blocks(d))]


def test_the_docs_have_examples_to_run():
    names = {d.name for d in RUNNABLE}
    assert {"README.md", "tensor.md", "language.md", "symbolic-sizes.md"} <= names


@pytest.mark.long
@pytest.mark.parametrize("doc", RUNNABLE, ids=lambda d: d.name)
def test_examples_run(doc, tmp_path):
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(blocks(doc)),
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 250
    head = "\n".join(lines[:40])
    # the two commands CI and users run, and beside them what they need
    assert 'pip install -e . && rulegrad demo' in head
    assert 'pip install -e ".[test]" && pytest' in head
    assert "Python >= 3.11" in head and "OpenMP" in head and "apt-get install gcc" in head
    assert re.search(r"about \d+ minutes on 2 cores", text)
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^pytest$", ci, re.M)  # CI runs exactly the README's test command


def test_readme_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)\)", doc.read_text(encoding="utf-8")):
            if "://" not in target:
                assert (doc.parent / target).exists(), f"{doc.name}: {target}"
    assert "docs/language.md" in text
