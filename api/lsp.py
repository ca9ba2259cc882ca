"""`rulegrad lsp`: a Language Server Protocol server for `.rules` files, on stdin/stdout (pygls).

In: an editor's JSON-RPC messages. Out: diagnostics as the file is typed (the parser's and the
checker's own errors, with their ranges), go-to-definition, find-references, hover, completion,
formatting (dsl/format.py, comments kept) and the "did you mean" quick fixes. The answers come
from rules_index.py; this module converts positions (the editor counts UTF-16 units unless it
asked otherwise; rules_index counts characters) and wires each request to its answer.

Trust: a rules file's helpers are Python, and checking a `use` imports the module. The server
imports none until the workspace is trusted: `initializationOptions: {"trusted": true}`, the
setting `rulegrad.trusted` (workspace/didChangeConfiguration), or the command
`rulegrad.trustWorkspace`. Until then a note on each file's first `use` says so.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from rulegrad import __version__

from . import rules_index as ix
from .rules_index import Loc, Problem

TRUST_COMMAND = "rulegrad.trustWorkspace"
_KINDS = {"op": T.CompletionItemKind.Constructor, "group": T.CompletionItemKind.Enum,
          "dtype": T.CompletionItemKind.TypeParameter, "set": T.CompletionItemKind.Module,
          "helper": T.CompletionItemKind.Function, "context": T.CompletionItemKind.Class,
          "pipeline": T.CompletionItemKind.Module, "capture": T.CompletionItemKind.Variable,
          "builtin": T.CompletionItemKind.Function}


class RulesServer(LanguageServer):
    """The server, with the workspace's trust (False until the user says otherwise)."""

    def __init__(self) -> None:
        super().__init__("rulegrad", __version__)
        self.trusted = False

    # -------------------------------------------------------------- files and positions
    def path(self, uri: str) -> str:
        return os.path.abspath(to_fs_path(uri) or uri)

    def read(self, path: str) -> str | None:
        """A file's text: the editor's buffer when it is open, else the disk."""
        for uri, doc in self.workspace.text_documents.items():  # any scheme (untitled:...)
            if self.path(uri) == path:
                return doc.source
        try:
            return Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def files(self) -> dict[str, str]:
        """Every `.rules` file of the workspace's folders, and every open one, by path."""
        out: dict[str, str] = {}
        roots = [self.path(f.uri) for f in self.workspace.folders.values()]
        if self.workspace.root_path:
            roots.append(os.path.abspath(self.workspace.root_path))
        for root in dict.fromkeys(roots):
            for p in sorted(Path(root).rglob("*.rules"))[:2000]:
                text = self.read(str(p))
                if text is not None:
                    out[str(p)] = text
        for uri, doc in self.workspace.text_documents.items():
            out[self.path(uri)] = doc.source
        return out

    def lines(self, path: str) -> list[str]:
        return (self.read(path) or "").split("\n")

    def to_client(self, path: str, line: int, col: int) -> T.Position:
        codec = self.workspace.position_codec
        return codec.position_to_client_units(self.lines(path), T.Position(line, col))

    def from_client(self, path: str, pos: T.Position) -> tuple[int, int]:
        codec = self.workspace.position_codec
        p = codec.position_from_client_units(self.lines(path), T.Position(pos.line,
                                                                           pos.character))
        return p.line, p.character

    def range(self, path: str, line: int, col: int, end_line: int, end_col: int) -> T.Range:
        return T.Range(self.to_client(path, line, col), self.to_client(path, end_line, end_col))

    def uri(self, path: str) -> str:
        """The URI the editor knows a file by (an open buffer's own, untitled ones too)."""
        for uri in self.workspace.text_documents:
            if self.path(uri) == path:
                return uri
        return from_fs_path(path) or path

    def location(self, loc: Loc) -> T.Location:
        return T.Location(self.uri(loc.path),
                          self.range(loc.path, loc.line, loc.start, loc.line, loc.end))

    # -------------------------------------------------------------- diagnostics
    def diagnostics(self, uri: str) -> list[T.Diagnostic]:
        path = self.path(uri)
        text = self.read(path) or ""
        return [self.diagnostic(path, p) for p in ix.problems(text, path, self.read,
                                                              self.trusted)]

    def diagnostic(self, path: str, p: Problem) -> T.Diagnostic:
        severity = (T.DiagnosticSeverity.Information if p.severity == "information"
                    else T.DiagnosticSeverity.Error)
        data = {"fix": p.fix} if p.fix else None
        return T.Diagnostic(self.range(path, p.line, p.col, p.end_line, p.end_col), p.message,
                            severity=severity, source="rulegrad", data=data)

    def publish(self, uri: str) -> None:
        doc = self.workspace.text_documents.get(uri)
        self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(
            uri=uri, diagnostics=self.diagnostics(uri),
            version=doc.version if doc is not None else None))

    def set_trusted(self, trusted: bool) -> None:
        if trusted == self.trusted:
            return
        self.trusted = trusted
        for uri in list(self.workspace.text_documents):
            self.publish(uri)


server = RulesServer()


@server.feature(T.INITIALIZE)
def _initialize(ls: RulesServer, params: T.InitializeParams) -> None:
    options = params.initialization_options
    ls.trusted = bool(isinstance(options, dict) and options.get("trusted"))


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
def _did_open(ls: RulesServer, params: T.DidOpenTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
def _did_change(ls: RulesServer, params: T.DidChangeTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(T.TEXT_DOCUMENT_DID_SAVE)
def _did_save(ls: RulesServer, params: T.DidSaveTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
def _did_close(ls: RulesServer, params: T.DidCloseTextDocumentParams) -> None:
    ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(
        uri=params.text_document.uri, diagnostics=[]))


@server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
def _did_change_configuration(ls: RulesServer, params: T.DidChangeConfigurationParams) -> None:
    settings: Any = params.settings
    section = settings.get("rulegrad") if isinstance(settings, dict) else None
    if isinstance(section, dict) and "trusted" in section:
        ls.set_trusted(bool(section["trusted"]))


@server.command(TRUST_COMMAND)
def _trust(ls: RulesServer, *args: Any) -> str:
    ls.set_trusted(True)
    ls.window_show_message(T.ShowMessageParams(
        T.MessageType.Info, "rulegrad: workspace trusted; helper modules are imported and "
        "checked"))
    return "trusted"


@server.feature(T.TEXT_DOCUMENT_DEFINITION)
def _definition(ls: RulesServer, params: T.DefinitionParams) -> list[T.Location]:
    path = ls.path(params.text_document.uri)
    line, col = ls.from_client(path, params.position)
    return [ls.location(loc) for loc in ix.definition(ls.read(path) or "", path, line, col,
                                                      ls.read)]


@server.feature(T.TEXT_DOCUMENT_REFERENCES)
def _references(ls: RulesServer, params: T.ReferenceParams) -> list[T.Location]:
    path = ls.path(params.text_document.uri)
    line, col = ls.from_client(path, params.position)
    locs = ix.references(ls.read(path) or "", path, line, col, ls.files())
    return [ls.location(loc) for loc in locs]


@server.feature(T.TEXT_DOCUMENT_HOVER)
def _hover(ls: RulesServer, params: T.HoverParams) -> T.Hover | None:
    path = ls.path(params.text_document.uri)
    line, col = ls.from_client(path, params.position)
    text = ix.hover(ls.read(path) or "", path, line, col, ls.read)
    if text is None:
        return None
    return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, text))


@server.feature(T.TEXT_DOCUMENT_COMPLETION,
                T.CompletionOptions(trigger_characters=[":", "(", "[", ","]))
def _completion(ls: RulesServer, params: T.CompletionParams) -> T.CompletionList:
    path = ls.path(params.text_document.uri)
    line, col = ls.from_client(path, params.position)
    items = [T.CompletionItem(label, kind=_KINDS.get(kind), detail=kind)
             for label, kind in ix.completions(ls.read(path) or "", path, line, col)]
    return T.CompletionList(is_incomplete=False, items=items)


@server.feature(T.TEXT_DOCUMENT_FORMATTING)
def _formatting(ls: RulesServer, params: T.DocumentFormattingParams) -> list[T.TextEdit]:
    from rulegrad.dsl.errors import RulesError
    from rulegrad.dsl.format import FormatError, format_text

    path = ls.path(params.text_document.uri)
    text = ls.read(path) or ""
    try:
        out = format_text(text, path)
    except (RulesError, FormatError):
        return []  # a file that does not parse is not formatted (its errors are shown)
    if out == text:
        return []
    lines = text.split("\n")
    end = ls.to_client(path, len(lines) - 1, len(lines[-1]))
    return [T.TextEdit(T.Range(T.Position(0, 0), end), out)]


@server.feature(T.TEXT_DOCUMENT_CODE_ACTION,
                T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix]))
def _code_action(ls: RulesServer, params: T.CodeActionParams) -> list[T.CodeAction]:
    out = []
    for d in params.context.diagnostics:
        fix = d.data.get("fix") if isinstance(d.data, dict) else None
        if not fix:
            continue
        edit = T.WorkspaceEdit(changes={params.text_document.uri: [T.TextEdit(d.range, fix)]})
        out.append(T.CodeAction(f"Change to '{fix}'", kind=T.CodeActionKind.QuickFix,
                                diagnostics=[d], edit=edit, is_preferred=True))
    return out


def serve() -> int:
    """Run the server on stdin/stdout until the editor says exit."""
    stream = sys.stdout.buffer
    # stdout is the editor's JSON-RPC stream: what anything else prints (a trusted helper
    # module run on import, a warning) goes to stderr instead of corrupting it
    sys.stdout = sys.stderr
    server.start_io(sys.stdin.buffer, stream)
    return 0
