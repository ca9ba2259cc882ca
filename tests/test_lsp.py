"""`rulegrad lsp`, driven over stdio as an editor drives it: JSON-RPC with Content-Length
framing, to a `rulegrad lsp` process of its own.

Oracles: the rules files written here (what is misspelt where, what is defined on which line),
the checker's own message for the same text (the server must not invent a second checker), and
UTF-16 column arithmetic done by hand on non-ASCII text."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rulegrad.dsl.check import check_collect
from rulegrad.dsl.parser import parse

SET_FILE = """\
# identities of addition
rules base = {
  add_zero: ADD[x, 0] -> x
}
"""
# a comment with non-ASCII text (each of "é" and "😀" is 1 and 2 UTF-16 units) before the error
MAIN = """\
from "base.rules" import base
# é😀 identities, and a string "😀" in a guard below
rules main = base + {
  mul_one: MUL[x, 1] if "😀" != "é" -> x
  neg_neg: NEGG(NEG(x)) -> x
}
"""


def _utf16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


class Client:
    """A language client: writes framed requests, reads framed messages on a thread."""

    def __init__(self, cwd: Path):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "rulegrad.cli", "lsp"], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.messages: queue.Queue = queue.Queue()
        self.backlog: list[dict] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                key, value = line.split(":", 1)
                headers[key.lower()] = value.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def send(self, msg: dict) -> None:
        data = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict) -> object:
        self.next_id += 1
        rid = self.next_id
        self.send({"id": rid, "method": method, "params": params})
        msg = self.wait(lambda m: m.get("id") == rid and "method" not in m)
        assert "error" not in msg, msg
        return msg["result"]

    def wait(self, pred, timeout: float = 60) -> dict:
        """The first message `pred` accepts, in order of arrival; the others are kept for a
        later wait (a notification may come before the answer to a request)."""
        for i, msg in enumerate(self.backlog):
            if pred(msg):
                return self.backlog.pop(i)
        while True:
            msg = self.messages.get(timeout=timeout)
            if "method" in msg and "id" in msg:  # a request of the server's: answer it
                self.send({"id": msg["id"], "result": None})
            if pred(msg):
                return msg
            self.backlog.append(msg)

    def diagnostics(self, uri: str) -> list[dict]:
        msg = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                        and m["params"]["uri"] == uri)
        return msg["params"]["diagnostics"]

    def close(self) -> None:
        try:
            self.request("shutdown", {})
            self.notify("exit", {})
            self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "base.rules").write_text(SET_FILE, encoding="utf-8")
    (tmp_path / "main.rules").write_text(MAIN, encoding="utf-8")
    client = Client(tmp_path)
    client.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(),
                                  "capabilities": {}, "workspaceFolders": [
                                      {"uri": tmp_path.as_uri(), "name": "ws"}]})
    client.notify("initialized", {})
    yield client, tmp_path
    client.close()


def _open(client: Client, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "rulegrad", "version": 1,
        "text": path.read_text(encoding="utf-8") if text is None else text}})
    return uri


def test_misspelt_op_is_a_diagnostic_on_its_line_and_the_fix_clears_it(ws):
    client, root = ws
    uri = _open(client, root / "main.rules")
    diags = client.diagnostics(uri)
    errors = [d for d in diags if d["severity"] == 1]
    assert len(errors) == 1, diags
    d = errors[0]
    line = MAIN.splitlines()[4]
    col = line.index("NEGG")
    assert d["range"]["start"] == {"line": 4, "character": _utf16(line[:col])}
    assert d["range"]["end"] == {"line": 4, "character": _utf16(line[:col + 4])}
    # the checker's own words for the same text
    want = check_collect(parse(MAIN, str(root / "main.rules")))[1]
    assert any(w.message in d["message"] for w in want) and "NEG" in d["message"]

    # the quick fix offers the checker's "did you mean"
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}})
    assert actions and actions[0]["kind"] == "quickfix"
    (edit,) = actions[0]["edit"]["changes"][uri]
    assert edit["newText"] == "NEG" and edit["range"] == d["range"]

    fixed = MAIN.replace("NEGG(", "NEG(")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": fixed}]})
    assert [d for d in client.diagnostics(uri) if d["severity"] == 1] == []


def test_utf16_columns_after_non_ascii_text(ws):
    client, root = ws
    # an error after strings of characters outside the BMP (2 UTF-16 units each) on its line
    text = 'rules s = {\n  r: ADD(x, y) if "😀😀😀" != "😀é" -> EXP2(ADDD(x, y))  # ü\n}\n'
    uri = _open(client, root / "u.rules", text)
    (d,) = [d for d in client.diagnostics(uri) if d["severity"] == 1]
    line = text.splitlines()[1]
    col = line.index("ADDD")
    assert _utf16(line[:col]) - col == 4  # the test means something: the two counts differ
    assert d["range"]["start"] == {"line": 1, "character": _utf16(line[:col])}
    assert d["range"]["end"] == {"line": 1, "character": _utf16(line[:col + 4])}
    # a position the editor sends in UTF-16 units is read as one: hover on EXP2 (read as
    # characters, the same number would point into ADDD, which is no op)
    pos = {"line": 1, "character": _utf16(line[:line.index("EXP2")]) + 1}
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos})
    assert hover is not None and "**EXP2**" in hover["contents"]["value"]


def test_definition_finds_rule_sets_across_files_and_helpers(ws):
    client, root = ws
    (root / "helpers.py").write_text('def twice(x):\n    """Twice x."""\n    return x + x\n')
    text = ('use .helpers: twice\nfrom "base.rules" import base\n'
            'rules main = base + {\n  r: MUL[x, 2] -> twice(x)\n}\n'
            'rules more = main + {\n  q: NEG(NEG(x)) -> x\n}\n')
    uri = _open(client, root / "main.rules", text)
    client.diagnostics(uri)

    def goto(line: int, word: str, nth: int = 0) -> list[dict]:
        src = text.splitlines()[line]
        col = src.index(word)
        for _ in range(nth):
            col = src.index(word, col + 1)
        return client.request("textDocument/definition", {
            "textDocument": {"uri": uri}, "position": {"line": line, "character": col + 1}})

    (loc,) = goto(5, "main")  # `rules more = main + ...`: the set in this file
    assert loc["uri"] == uri and loc["range"]["start"] == {"line": 2, "character": 6}
    (loc,) = goto(2, "base", 0)  # `rules main = base + ...`: imported, found in base.rules
    assert loc["uri"] == (root / "base.rules").as_uri()
    assert loc["range"]["start"] == {"line": 1, "character": 6}
    (loc,) = goto(3, "twice")  # a helper: its `def` in the Python file (read, not imported)
    assert loc["uri"] == (root / "helpers.py").as_uri() and loc["range"]["start"]["line"] == 0
    (loc,) = goto(3, "x", 1)  # a capture: where its rule binds it (`MUL[x, 2]`)
    assert loc["uri"] == uri and loc["range"]["start"] == {"line": 3, "character": 9}
    (loc,) = goto(1, '"base.rules"')  # the import's path: the file
    assert loc["uri"] == (root / "base.rules").as_uri()

    refs = client.request("textDocument/references", {
        "textDocument": {"uri": uri}, "position": {"line": 1, "character": 26},
        "context": {"includeDeclaration": True}})
    where = sorted((r["uri"].rsplit("/", 1)[1], r["range"]["start"]["line"]) for r in refs)
    assert where == [("base.rules", 1), ("main.rules", 1), ("main.rules", 2)]
    refs = client.request("textDocument/references", {
        "textDocument": {"uri": uri}, "position": {"line": 3, "character": 20},
        "context": {"includeDeclaration": True}})
    assert sorted((r["uri"].rsplit("/", 1)[1], r["range"]["start"]["line"]) for r in refs) == [
        ("helpers.py", 0), ("main.rules", 0), ("main.rules", 3)]


def test_hover_completion_and_formatting(ws):
    client, root = ws
    uri = _open(client, root / "base.rules")
    client.diagnostics(uri)
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": 2, "character": 13}})
    value = hover["contents"]["value"]
    assert "**ADD**" in value and "2 sources" in value and "Commutative" in value
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": 2, "character": 4}})
    assert "rule add_zero" in hover["contents"]["value"] and "base" in hover["contents"]["value"]

    messy = "rules base = {\n  add_zero:ADD[x ,0]->x   # keep me\n   mul_one: MUL[x, 1] -> x\n}\n"
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": messy}]})
    client.diagnostics(uri)
    items = client.request("textDocument/completion", {
        "textDocument": {"uri": uri}, "position": {"line": 2, "character": 24}})["items"]
    labels = {(i["label"], i["detail"]) for i in items}
    assert {("ADD", "op"), ("Movement", "group"), ("x", "capture"), ("base", "set")} <= labels
    # after `name:` (no blank: a capture's dtype) come the dtypes
    items = client.request("textDocument/completion", {
        "textDocument": {"uri": uri}, "position": {"line": 1, "character": 11}})["items"]
    assert {"float32", "ints", "index"} <= {i["label"] for i in items if i["detail"] == "dtype"}
    assert "ADD" not in {i["label"] for i in items}
    edits = client.request("textDocument/formatting", {
        "textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})
    (edit,) = edits
    assert "# keep me" in edit["newText"]
    assert edit["newText"].splitlines()[1] == "  add_zero:ADD[x, 0] -> x  # keep me"
    assert edit["newText"].splitlines()[2] == "  mul_one: MUL[x, 1] -> x"


def test_helpers_are_not_imported_until_the_workspace_is_trusted(ws):
    client, root = ws
    marker = root / "imported.txt"
    # the module also prints on import: that must not reach the editor's JSON-RPC stream
    (root / "h.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nprint('hello')\n"
                               "def one(x):\n    return x\n")
    text = "use .h: one, nothere\nrules s = {\n  r: NEG(x) -> one(x)\n}\n"
    uri = _open(client, root / "t.rules", text)
    diags = client.diagnostics(uri)
    assert not marker.exists()
    assert [d["severity"] for d in diags] == [3] and "trusted" in diags[0]["message"]
    assert diags[0]["range"]["start"]["line"] == 0
    client.request("workspace/executeCommand", {"command": "rulegrad.trustWorkspace",
                                                "arguments": []})
    diags = client.diagnostics(uri)
    assert marker.exists()  # trusted: the module was imported, and its missing name is found
    assert any("has no 'nothere'" in d["message"] for d in diags)


def test_a_definition_is_found_and_offered():
    """A `def` of the file (LANGUAGE.md, "Definitions"): go-to-definition from a rule that
    calls it lands on its name, and completion offers it like a helper. (The index alone,
    without a server: the oracle is the text written here.)"""
    from rulegrad import rules_index as ix

    text = "def twice(x) -> x + x\nrules r = {\n  a: NEG(x) -> twice(x)\n}\n"
    col = text.splitlines()[2].index("twice") + 1
    assert ix.definition(text, "t.rules", 2, col, lambda p: None) == [ix.Loc("t.rules", 0, 4, 9)]
    assert ("twice", "helper") in ix.completions(text, "t.rules", 2, col)
