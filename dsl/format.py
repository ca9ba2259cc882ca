"""Formatter: `.rules` text -> the same text laid out canonically, every comment kept.

In: the text of a rules file (and the path to report it under). Out: the formatted text, or a
`RulesError` when the file does not parse (nothing is formatted then).

It works on lines and tokens, never on the AST: the AST has no comments, and `# check:`
annotations and the reasons beside rules live in comments (printer.py, which prints from the
AST, drops them). Only the blanks between tokens change; the tokens, the comments and the line
breaks stay as written, so every line keeps its number (unnamed rules are named after theirs).

- each line that starts a declaration, a rule, a field or a pass is indented two spaces per
  open block; a continuation line (inside brackets, after `\\`, after a trailing `+`) keeps
  its own indentation;
- a run of blanks between two tokens becomes one space; `->` has a space on each side, `,` one
  after it; no space just inside `(` and `[` nor before `,`;
- in a block, rule labels (and field names) sit in one column, and so do a pipeline's pass
  names, rule sets and directions; in a run of one-line rules (or fields) with no blank or
  comment line between them, the `->` and the trailing comments are aligned in columns too,
  within `WIDTH` columns where possible (a line that would pass it is left out of the column);
- trailing blanks go; the file ends with one newline.

`format_text` re-parses what it made and compares the tree with the original's: a formatter
that changed what a file means would be worse than none, so that is an error, never an output.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .ast import strip_spans
from .errors import RulesError

WIDTH = 100  # the line length the project keeps to (pyproject's ruff line-length)
INDENT = "  "  # per open block, as every rules file of the project is written

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\f]+)
  | (?P<comment>\#.*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>0[xX][0-9a-fA-F]+|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[0-9]+)
  | (?P<op>->|==|!=|<=|>=|//|\.\.\.|\S)
""", re.VERBOSE)

_OPEN, _CLOSE = "([{", ")]}"
# a line ending in one of these goes on at the top level (`rules a = b +`, `use m: f,`)
_TOP_CONTINUES = {"+", "=", ",", ":", "import"}


class FormatError(Exception):
    """The formatter's output would not mean what its input meant (a bug in the formatter)."""


@dataclass
class _Line:
    """One physical line: its tokens (a blank before each or not), its comment, its role."""

    indent: str
    tokens: list[str]
    spaced: list[bool]  # spaced[i]: whether blanks stood before tokens[i] in the source
    comment: str | None
    statement: bool = False  # starts a declaration, rule, field or pass
    inside: bool = False  # starts inside brackets or a continued line
    whole: bool = False  # ... and ends on this line (it can join a column)
    depth: int = 0  # the blocks open at its start
    block: int = 0  # which block it is in (0: the top level), for the label column


def _split(line: str) -> _Line:
    body = line.rstrip()
    indent = body[: len(body) - len(body.lstrip())]
    tokens: list[str] = []
    spaced: list[bool] = []
    comment = None
    blank = False
    for m in _TOKEN.finditer(body, len(indent)):
        kind = m.lastgroup
        if kind == "ws":
            blank = True
            continue
        if kind == "comment":
            comment = m.group()
            break
        tokens.append(m.group())
        spaced.append(blank)
        blank = False
    return _Line(indent, tokens, spaced, comment)


def _is_label(tokens: list[str], i: int, spaced: list[bool]) -> bool:
    """`name: ` at i (a rule label or a field name): a name, a ':' right after it, then a blank."""
    return (i + 2 < len(tokens) and tokens[i + 1] == ":" and not spaced[i + 1]
            and spaced[i + 2] and re.match(r"[a-z_]", tokens[i]) is not None)


def _join(tokens: list[str], spaced: list[bool]) -> str:
    """The tokens with canonical blanks between them (see the module docstring)."""
    out = ""
    for i, tok in enumerate(tokens):
        if i == 0:
            out = tok
            continue
        prev = tokens[i - 1]
        space = spaced[i]
        if tok == "->" or prev in ("->", ","):
            space = True
        if tok in (",", ")", "]") or prev in ("(", "["):
            space = False
        if prev == ":" and spaced[i] and i >= 2 and not spaced[i - 1]:
            space = True  # `name: x` keeps the blank that makes `name:` a label
        if tok == "," and prev == ",":
            space = False
        out += (" " if space else "") + tok
    return out


def _classify(lines: list[_Line]) -> None:
    """Mark each line's role and the blocks open at its start, from the brackets before it."""
    stack: list[str] = []  # open brackets; '{' of a block is 'B'
    continued = False  # the line before ended with '\' or a top-level continuation
    blocks, current = 0, 0
    for ln in lines:
        ln.block = current
        ln.inside = any(b != "B" for b in stack) or continued
        ln.depth = sum(b == "B" for b in stack)
        ln.statement = bool(ln.tokens) and not ln.inside and ln.tokens[0] != "+"
        for tok in ln.tokens:
            if tok in _OPEN:
                # as the parser's post-lexer has it: a `{` with nothing open opens a block
                if tok == "{" and not stack:
                    blocks += 1
                    current = blocks
                stack.append("B" if tok == "{" and not stack else tok)
            elif tok in _CLOSE and stack:
                stack.pop()
                current = current if stack else 0
        last = ln.tokens[-1] if ln.tokens else None
        inner = any(b in "([{" for b in stack)
        continued = last == "\\" or (not stack and last in _TOP_CONTINUES) or (
            continued and not ln.tokens)
        ln.whole = ln.statement and not inner and last != "\\" and not (
            not stack and last in _TOP_CONTINUES)
        if ln.tokens and ln.tokens[0] == "}" and ln.statement:
            ln.depth = max(0, ln.depth - 1)


_DIRECTIONS = ("top_down", "bottom_up")


def _is_pass(ln: _Line) -> bool:
    """`pass NAME = SET [options]`, a pass of a pipeline."""
    t = ln.tokens
    return ln.statement and len(t) >= 4 and t[0] == "pass" and t[2] == "="


def _pass_widths(lines: list[_Line]) -> dict[int, tuple[int, int, int]]:
    """Per block: the widest pass name, rule-set name and direction, for the passes' columns."""
    out: dict[int, tuple[int, int, int]] = {}
    for ln in lines:
        if _is_pass(ln):
            t = ln.tokens
            d = len(t[4]) if len(t) > 4 and t[4] in _DIRECTIONS else 0
            n, r, w = out.get(ln.block, (0, 0, 0))
            # a rule set with nothing after it needs no column
            out[ln.block] = (max(n, len(t[1])), max(r, len(t[3]) if len(t) > 4 else 0),
                             max(w, d))
    return out


def _pass_text(ln: _Line, widths: tuple[int, int, int]) -> str:
    """A pass with its name, rule set and direction in the block's columns."""
    t, sp = ln.tokens, ln.spaced
    name_w, set_w, dir_w = widths
    text = f"pass {t[1].ljust(name_w)} = {t[3].ljust(set_w)}"
    k = 4
    if len(t) > k and t[k] in _DIRECTIONS:
        text += " " + t[k].ljust(dir_w)
        k += 1
    if len(t) > k:
        text += " " + _join(t[k:], [False] + sp[k + 1:])
    return text.rstrip()


def _cells(ln: _Line) -> list[str]:
    """A one-line statement as [label, head, tail]: `label:`, up to `->`, `->` and the rest.
    Either of label and tail may be empty."""
    toks, sp = ln.tokens, ln.spaced
    start = 0
    label = ""
    if _is_label(toks, 0, sp):
        label, start = toks[0] + ":", 2
    level, arrow = 0, None
    for i in range(start, len(toks)):
        if toks[i] in _OPEN:
            level += 1
        elif toks[i] in _CLOSE:
            level -= 1
        elif toks[i] == "->" and level == 0:
            arrow = i
            break
    end = arrow if arrow is not None else len(toks)
    head = _join(toks[start:end], [False] + sp[start + 1:end])
    tail = _join(toks[end:], [False] + sp[end + 1:]) if arrow is not None else ""
    return [label, head, tail]


def _fit(widths: list[int], rest: list[int]) -> int:
    """The column for a group: the widest member's, dropping the widest while one of them
    would pass WIDTH (`rest`: the width each member adds after the column)."""
    members = sorted(range(len(widths)), key=lambda i: widths[i])
    while members:
        col = widths[members[-1]]
        if all(col + rest[i] <= WIDTH for i in members) or len(members) == 1:
            return col
        members.pop()
    return 0


def _render_group(group: list[_Line], label_w: int, pass_w: tuple[int, int, int]
                  ) -> list[str]:
    """Lines of one run of one-line statements, with labels, arrows and comments in columns
    (the columns of labels and of passes, `label_w` and `pass_w`, are the whole block's)."""
    indent = INDENT * group[0].depth
    cells = [["", _pass_text(ln, pass_w), ""] if _is_pass(ln) else _cells(ln) for ln in group]
    prefixes = [c[0].ljust(label_w) if c[0] else "" for c in cells]
    heads = [len(indent) + len(p) + len(c[1]) for p, c in zip(prefixes, cells)]
    arrowed = [i for i, c in enumerate(cells) if c[2]]
    arrow_col = _fit([heads[i] for i in arrowed], [len(cells[i][2]) + 1 for i in arrowed])
    texts = []
    for c, prefix, head in zip(cells, prefixes, heads):
        text = indent + prefix + c[1]
        if c[2]:
            text = (text.ljust(arrow_col) if head <= arrow_col else text) + " " + c[2]
        texts.append(text)
    commented = [i for i, ln in enumerate(group) if ln.comment]
    com_col = _fit([len(texts[i]) for i in commented],
                   [len(group[i].comment or "") + 2 for i in commented])
    out = []
    for i, (ln, text) in enumerate(zip(group, texts)):
        if ln.comment:
            pad = com_col if len(text) <= com_col and i in commented else len(text)
            text = text.ljust(pad) + "  " + ln.comment
        out.append(text.rstrip())
    return out


def _render_line(ln: _Line, label_w: int, pass_w: tuple[int, int, int]) -> str:
    indent = INDENT * ln.depth if ln.statement or (not ln.tokens and not ln.inside) \
        else ln.indent
    code = _pass_text(ln, pass_w) if _is_pass(ln) else _join(ln.tokens, ln.spaced)
    if ln.statement and _is_label(ln.tokens, 0, ln.spaced):  # its label in the block's column
        code = (ln.tokens[0] + ":").ljust(label_w) + _join(ln.tokens[2:], [False] + ln.spaced[3:])
    if ln.comment is None:
        return (indent + code).rstrip()
    return (indent + code + ("  " if code else "") + ln.comment).rstrip()


def _layout(text: str) -> str:
    lines = [_split(line) for line in text.split("\n")]
    _classify(lines)
    label_w: dict[int, int] = {}  # per block: the widest label, and a blank
    for ln in lines:
        if ln.statement and ln.depth > 0 and _is_label(ln.tokens, 0, ln.spaced):
            label_w[ln.block] = max(label_w.get(ln.block, 0), len(ln.tokens[0]) + 2)
    pass_w = _pass_widths(lines)
    out: list[str] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.whole and ln.depth > 0:
            j = i
            while j < len(lines) and lines[j].whole and lines[j].depth == ln.depth \
                    and lines[j].tokens[0] != "}":
                j += 1
            if j > i:
                out.extend(_render_group(lines[i:j], label_w.get(ln.block, 0),
                                         pass_w.get(ln.block, (0, 0, 0))))
                i = j
                continue
        out.append(_render_line(ln, label_w.get(ln.block, 0), pass_w.get(ln.block, (0, 0, 0))))
        i += 1
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _meaning(text: str, path: str) -> object:
    from .parser import parse_collect

    rf, diags = parse_collect(text, path)
    if rf is None:
        raise RulesError(diags, {path: text})
    return strip_spans(rf)


def format_text(text: str, path: str = "<text>") -> str:
    """The formatted text (see the module docstring); RulesError if `text` does not parse."""
    before = _meaning(text, path)
    out = _layout(text.replace("\r\n", "\n"))
    try:
        after = _meaning(out, path)
    except RulesError as e:
        raise FormatError(f"{path}: formatting would break the file:\n{e}") from None
    if after != before:
        raise FormatError(f"{path}: formatting would change what the file means; left as is")
    return out




def rules_files(paths: list[str]) -> list[Path]:
    """The `.rules` files named: each file as given, each folder's `.rules` files within it."""
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted(p.rglob("*.rules")) if p.is_dir() else [p])
    return out


def run_fmt(paths: list[str], check: bool = False) -> int:
    """`rulegrad fmt [--check] PATH...`: rewrite each file formatted (with `check`: write
    nothing, name each file that would change). Exit status: 0, 1 when `check` found one to
    change, 2 when a file could not be read or parsed (its errors are printed)."""
    from .files import read_rules_file

    status, changed = 0, []
    for path in rules_files(paths):
        try:
            text = read_rules_file(str(path))
            out = format_text(text, str(path))
        except (OSError, RulesError, FormatError) as e:
            print(str(e) if str(e).startswith(str(path)) or isinstance(e, RulesError)
                  else f"{path}: error: {e}", file=sys.stderr)
            status = 2
            continue
        if out == text:
            continue
        changed.append(path)
        if check:
            print(f"{path} would be reformatted", file=sys.stderr)
        else:
            tmp = path.with_name(f".{path.name}.fmt.tmp")
            tmp.write_text(out, encoding="utf-8")
            tmp.replace(path)  # atomic: an editor or `gen` never reads half a file
            print(f"formatted {path}")
    return status or (1 if check and changed else 0)
