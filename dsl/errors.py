"""Diagnostics of the `.rules` front end and their text form.

In: `Diagnostic`s (a span, a message, an optional hint) and the source text of each file they
point into. Out: the report `rulegrad gen` prints (LANGUAGE.md, "Errors"):

    rules/symbolic.rules:12:10: error: unknown op 'ADDD' (did you mean 'ADD'?)
      addd:  ADDD[x, 0] -> x
             ^~~~
    1 error

The source line is printed as it is in the file; the caret sits under the column, followed by
`~` up to the end of the span when the span covers more than one character of that line. A hint,
when there is one, follows on a line `  hint: ...`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .ast import Span


@dataclass(frozen=True)
class Diagnostic:
    """One error: where (`span`), what (`message`), and optionally how to fix it (`hint`)."""

    span: Span
    message: str
    hint: str | None = None

    def sort_key(self) -> tuple[int, int]:
        return (self.span.line, self.span.col)


class RulesError(Exception):
    """Every diagnostic found in a rules file (and the files it imports), ready to print."""

    def __init__(self, diagnostics: list[Diagnostic], sources: Mapping[str, str] | None = None):
        self.diagnostics = list(diagnostics)
        self.sources = dict(sources or {})
        super().__init__(format_diagnostics(self.diagnostics, self.sources))


def _source_line(sources: Mapping[str, str], path: str, line: int) -> str | None:
    text = sources.get(path)
    if text is None:  # a file we did not read ourselves (e.g. an import): try the disk
        from .files import read_rules_file

        try:
            text = read_rules_file(path)
        except OSError:
            return None
    lines = text.splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else None


def _caret(src: str, span: Span) -> str:
    # keep tabs of the source line so the caret lines up however tabs are displayed
    col = max(span.col, 1)
    pad = "".join(c if c == "\t" else " " for c in src[: col - 1])
    pad += " " * max(0, col - 1 - len(src))
    width = 1
    if span.end_line == span.line and span.end_col > span.col:
        width = min(span.end_col, len(src) + 1) - col
    return pad + "^" + "~" * max(0, width - 1)


def order(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Group by file (in order of first appearance), then by position within each file."""
    first: dict[str, int] = {}
    for d in diagnostics:
        first.setdefault(d.span.path, len(first))
    return sorted(diagnostics, key=lambda d: (first[d.span.path], d.sort_key()))


def format_diagnostics(
    diagnostics: list[Diagnostic], sources: Mapping[str, str] | None = None
) -> str:
    """The printed report: each error with its source line and caret, then `N errors`."""
    sources = sources or {}
    out: list[str] = []
    for d in order(diagnostics):
        out.append(f"{d.span}: error: {d.message}")
        src = _source_line(sources, d.span.path, d.span.line)
        if src is not None:
            out.append(src)
            out.append(_caret(src, d.span))
        if d.hint:
            out.append(f"  hint: {d.hint}")
    n = len(diagnostics)
    out.append(f"{n} error" if n == 1 else f"{n} errors")
    return "\n".join(out)
