"""What an editor asks about a `.rules` file, answered from its text: the language server's core.

In: a file's text and path (and a way to read the files it names). Out: its problems (the
parser's and the checker's own diagnostics, located), where a name is defined and used, what a
name means (hover), what may be typed at a place (completion), and the quick fixes of "did
you mean". Positions here are 0-based lines and columns in characters (code points); lsp.py
converts them to what the editor counts (UTF-16 units by default).

Names are found by a small scan of the tokens (comments and strings skipped), not from the
AST, so that definitions and references still work while the file being typed does not parse.
Diagnostics come from the dsl front end itself (no second checker). Helper modules are Python:
until the workspace is trusted they are never imported (the checker runs with
`import_helpers=False`), and a note on the file's first `use` says so.
"""

from __future__ import annotations

import ast as pyast
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from rulegrad.dsl import ast as A
from rulegrad.dsl.errors import Diagnostic, RulesError

Reader = Callable[[str], "str | None"]  # path -> text (an open editor buffer or the disk)


@dataclass(frozen=True)
class Loc:
    """A range on one line of a file: 0-based line, columns [start, end) in characters."""

    path: str
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class Problem:
    """A diagnostic for the editor; `fix` is the replacement a "did you mean" offers."""

    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    severity: str = "error"  # error | information
    fix: str | None = None


@dataclass(frozen=True)
class Tok:
    kind: str  # name | string | op
    value: str
    line: int
    col: int

    @property
    def end(self) -> int:
        return self.col + len(self.value)


_TOKEN = re.compile(r"""(?P<ws>\s+)|(?P<comment>\#[^\n]*)
  |(?P<string>"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)
  |(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>->|\.\.\.|\S)""", re.VERBOSE)
_MEAN = re.compile(r"did you mean '([A-Za-z_][A-Za-z0-9_]*)'\?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokens(text: str) -> list[Tok]:
    """The names, strings and operators of a text, with their 0-based positions."""
    out: list[Tok] = []
    line, line_start = 0, 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "op"
        if kind not in ("ws", "comment"):
            out.append(Tok(kind, m.group(), line, m.start() - line_start))
        newlines = m.group().count("\n")
        if newlines:
            line += newlines
            line_start = m.start() + m.group().rindex("\n") + 1
    return out


# ------------------------------------------------------------------------ definitions
@dataclass(frozen=True)
class Definition:
    kind: str  # set | context | pipeline | def | helper | import | rule
    name: str
    loc: Loc
    source: str = ""  # a helper's module, an imported set's file (as written)


def definitions(text: str, path: str) -> list[Definition]:
    """Every name the file declares, with where: rule sets, contexts, pipelines, definitions,
    helpers, imported sets and rule labels."""
    toks = tokens(text)
    lines = text.split("\n")
    out: list[Definition] = []

    def loc(t: Tok) -> Loc:
        return Loc(path, t.line, t.col, t.end)

    i = 0
    block = "set"  # what `name:` at a line's start is: a rule label, or a context's field
    while i < len(toks):
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        first = i == 0 or toks[i - 1].line != t.line
        if first and t.value in ("rules", "context", "record", "pipeline", "def") \
                and nxt is not None and nxt.kind == "name" and nxt.line == t.line:
            kind = {"rules": "set", "record": "context"}.get(t.value, t.value)
            block = kind
            out.append(Definition(kind, nxt.value, loc(nxt)))
        elif first and t.value in ("use", "analysis"):
            j = i + 1
            module = ""
            while j < len(toks) and toks[j].value != ":" and toks[j].line == t.line:
                module += toks[j].value
                j += 1
            j += 1
            while j < len(toks) and toks[j].kind == "name":
                out.append(Definition("helper", toks[j].value, loc(toks[j]), module))
                if j + 1 < len(toks) and toks[j + 1].value == ",":
                    j += 2
                else:
                    break
        elif first and t.value == "from" and nxt is not None and nxt.kind == "string":
            j = i + 3
            while j < len(toks) and toks[j].kind == "name":
                out.append(Definition("import", toks[j].value, loc(toks[j]),
                                      nxt.value.strip("\"'")))
                if j + 1 < len(toks) and toks[j + 1].value == ",":
                    j += 2
                else:
                    break
        elif first and t.kind == "name" and nxt is not None and nxt.value == ":" \
                and nxt.col == t.end and _blank_after(lines, nxt) and t.value[0].islower():
            out.append(Definition("rule" if block == "set" else "field", t.value, loc(t)))
        i += 1
    return out


def _blank_after(lines: list[str], t: Tok) -> bool:
    line = lines[t.line]
    return t.end < len(line) and line[t.end] in " \t"


def token_at(text: str, line: int, col: int) -> Tok | None:
    """The name or string token under (or just before) a position."""
    for t in tokens(text):
        if t.line == line and t.col <= col <= t.end and t.kind in ("name", "string"):
            return t
    return None


def resolve(path: str, written: str) -> str:
    """The file a path written in `path` (an import) names."""
    return os.path.normpath(os.path.join(os.path.dirname(path), written))


def definition(text: str, path: str, line: int, col: int, read: Reader) -> list[Loc]:
    """Where the name at (line, col) is defined: a rule set (here or in the file it is
    imported from), a context, a pipeline, a rule, a helper's Python `def`, an imported file."""
    tok = token_at(text, line, col)
    if tok is None:
        return []
    if tok.kind == "string":  # `from "other.rules" import ...`: the file itself
        target = resolve(path, tok.value.strip("\"'"))
        return [Loc(target, 0, 0, 0)] if read(target) is not None else []
    found = _find(tok.value, path, text, read)
    if not found and tok.value[0].islower():  # a capture: where its rule first names it
        lo, hi = _statement_lines(text, line)
        found = [u for u in _uses(path, text, tok.value) if lo <= u.line <= hi][:1]
    return found


def _find(name: str, path: str, text: str | None, read: Reader) -> list[Loc]:
    seen: set[str] = set()
    todo = [(path, text)]
    while todo:  # through imports, file by file (an import cycle ends at a file seen before)
        where, body = todo.pop()
        if body is None or where in seen:
            continue
        seen.add(where)
        defs = [d for d in definitions(body, where) if d.name == name]
        own = [d.loc for d in defs if d.kind not in ("import", "helper", "field")]
        if own:
            return own
        for d in defs:
            if d.kind == "helper":
                found = _helper_def(name, d.source, where)
                return [found] if found is not None else [d.loc]
            target = resolve(where, d.source)
            todo.append((target, read(target)))
    return []


def helper_path(module: str, rules_path: str) -> str | None:
    """The `.py` file of a helper module, found without importing anything: a relative module
    beside the rules file, or a module of the rulegrad package."""
    if module.startswith("."):
        from rulegrad.dsl.check import helper_file

        return helper_file(module, rules_path)
    parts = module.split(".")
    if parts[0] != "rulegrad":
        return None
    import rulegrad

    base = os.path.dirname(os.path.dirname(os.path.abspath(rulegrad.__file__)))
    # the package's folders are its subpackages (pyproject's package-dir): rulegrad.x -> x/
    return os.path.join(base, *parts[1:]) + ".py" if len(parts) > 1 else None


def _helper_def(name: str, module: str, rules_path: str) -> Loc | None:
    """The line of `def name` / `class name` / `NAME =` in a helper module's source (parsed
    with Python's `ast`, never run)."""
    file = helper_path(module, rules_path)
    if file is None or not os.path.isfile(file):
        return None
    node = _py_def(file, name)
    if node is None:
        return Loc(file, 0, 0, 0)
    return Loc(file, node.lineno - 1, node.col_offset, node.col_offset)


def _py_def(file: str, name: str) -> pyast.AST | None:
    try:
        with open(file, encoding="utf-8") as f:
            tree = pyast.parse(f.read(), file)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (pyast.FunctionDef, pyast.ClassDef)) and node.name == name:
            return node
        if isinstance(node, (pyast.Assign, pyast.AnnAssign)):
            targets = node.targets if isinstance(node, pyast.Assign) else [node.target]
            if any(isinstance(t, pyast.Name) and t.id == name for t in targets):
                return node
    return None


# ------------------------------------------------------------------------ references
def references(text: str, path: str, line: int, col: int, files: dict[str, str]
               ) -> list[Loc]:
    """Every use of the name at (line, col): in the file that defines it and in every file
    (of `files`, path -> text) that imports it from there; a capture only within its rule."""
    tok = token_at(text, line, col)
    if tok is None or tok.kind != "name":
        return []
    name = tok.value
    files = {**files, path: text}
    read: Reader = files.get
    defs = _find(name, path, text, read)
    if not defs:  # a capture, an op, a builtin: the uses in this rule (or this file for ops)
        if name[0].isupper():
            return _uses(path, text, name)
        lo, hi = _statement_lines(text, line)
        return [u for u in _uses(path, text, name) if lo <= u.line <= hi]
    home = defs[0].path
    out: list[Loc] = []
    for other, body in sorted(files.items()):
        imported = any(d.kind == "import" and d.name == name
                       and resolve(other, d.source) == home for d in definitions(body, other))
        if other in (home, path) or imported:
            out.extend(_uses(other, body, name))
    if home not in files:  # a helper: its `def` in the Python file too
        out.extend(d for d in defs if d not in out)
    return out


def _uses(path: str, text: str, name: str) -> list[Loc]:
    toks = tokens(text)
    return [Loc(path, t.line, t.col, t.end) for i, t in enumerate(toks)
            if t.kind == "name" and t.value == name
            and not (i > 0 and toks[i - 1].value == "." and toks[i - 1].col == t.col - 1)]


def _statement_lines(text: str, line: int) -> tuple[int, int]:
    """The lines of the rule (or declaration) around `line`, from the parse when there is one."""
    from rulegrad.dsl.parser import parse_collect

    rf, _ = parse_collect(text, "<text>")
    for rule in _rules(rf):
        if rule.span.line - 1 <= line <= rule.span.end_line - 1:
            return rule.span.line - 1, rule.span.end_line - 1
    return line, line


def _rules(rf: A.RulesFile | None) -> list[A.Rule]:
    if rf is None:
        return []
    return [r for rs in rf.rulesets for term in rs.terms if isinstance(term, A.RuleBlock)
            for r in term.rules]


# ------------------------------------------------------------------------ diagnostics
TRUST_NOTE = ("helper modules are not imported (their code is not run) until the workspace is "
              "trusted: helper names and signatures are not checked. Trust it with the command "
              "'rulegrad.trustWorkspace' or the setting rulegrad.trusted")


def _problem(d: Diagnostic, text: str) -> Problem:
    s = d.span
    line, col = max(s.line - 1, 0), max(s.col - 1, 0)
    end_line, end_col = max(s.end_line - 1, line), max(s.end_col - 1, 0)
    if (end_line, end_col) <= (line, col):
        end_line, end_col = line, col + 1
    mean = _MEAN.search(d.message)
    lines = text.split("\n")
    covered = lines[line][col:end_col] if end_line == line and line < len(lines) else ""
    if mean and not _WORD.fullmatch(covered):
        mean = None  # the fix replaces the range: only when it is the misspelt name itself
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return Problem(line, col, end_line, end_col, message, fix=mean.group(1) if mean else None)


def problems(text: str, path: str, read: Reader, trusted: bool) -> list[Problem]:
    """Every error `rulegrad gen` would report for this text, located in this file (an error in
    an imported file is shown on the import), plus the note on an untrusted workspace."""
    from rulegrad.dsl.check import check_collect
    from rulegrad.dsl.parser import parse_collect

    rf, diags = parse_collect(text, path)
    checked = None
    if rf is not None:
        def loader(p: str) -> str:
            body = read(p)
            if body is None:
                raise FileNotFoundError(p)
            return body

        checked, diags, _ = check_collect(rf, loader, import_helpers=trusted)
        if trusted and checked is not None and not diags:
            from rulegrad.generator.signatures import check_helper_calls

            try:
                check_helper_calls(checked)
            except RulesError as e:
                diags = e.diagnostics
    out = [_problem(d, text) for d in diags if _same(d.span.path, path)]
    foreign = [d for d in diags if not _same(d.span.path, path)]
    imports = rf.imports if rf is not None else ()
    for d in foreign:
        imp = next((i for i in imports if _same(resolve(path, i.path), d.span.path)), None)
        where = imp.span if imp is not None else A.Span(path, 1, 1, 1, 2)
        out.append(_problem(Diagnostic(where, f"in {d.span.path}:{d.span.line}:{d.span.col}: "
                                       f"{d.message}"), text))
    if not trusted and rf is not None and rf.uses:
        s = rf.uses[0].span
        out.append(Problem(s.line - 1, s.col - 1, s.line - 1, s.col - 1 + len("use"),
                           TRUST_NOTE, "information"))
    return out


def _same(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


# ------------------------------------------------------------------------ hover
def hover(text: str, path: str, line: int, col: int, read: Reader) -> str | None:
    """Markdown about the name at (line, col): an op (its sources, groups, dtypes and meaning,
    from the semantics table), a group, a dtype, a rule set, a rule, a helper."""
    from rulegrad.dsl.names import DTYPE_NAMES, GROUP_NAMES, OP_NAMES

    tok = token_at(text, line, col)
    if tok is None or tok.kind != "name":
        return None
    name = tok.value
    if name in OP_NAMES:
        return op_doc(name)
    if name in GROUP_NAMES:
        from rulegrad.runtime.ops import OP_GROUPS

        members = ", ".join(sorted(op.name for op in OP_GROUPS[name]))
        return f"**{name}** (op group): {members}"
    if name in DTYPE_NAMES and not any(d.name == name for d in definitions(text, path)):
        from rulegrad.dsl.names import resolve_dtype

        dts = ", ".join(sorted(str(getattr(d, "name", d)) for d in resolve_dtype(name) or ()))
        return f"**{name}** (dtype): {dts}"
    for d in definitions(text, path):
        if d.name != name:
            continue
        if d.kind == "rule":
            return _rule_doc(text, path, name)
        if d.kind == "helper":
            return _helper_doc(name, d.source, path)
    locs = _find(name, path, text, read)
    if locs:
        body = text if locs[0].path == path else read(locs[0].path)
        if body is not None:
            kinds = {d.name: d.kind for d in definitions(body, locs[0].path)}
            line_text = body.split("\n")[locs[0].line].strip()
            return (f"**{name}** ({kinds.get(name, 'name')}), "
                    f"{os.path.basename(locs[0].path)}:{locs[0].line + 1}\n\n```\n{line_text}\n```")
    return None


def op_doc(name: str) -> str:
    """An op's signature and meaning: sources, groups, the dtype classes it is defined on
    (runtime/semantics.py's DOMAIN) and the semantics table's notes that name it."""
    from rulegrad.dsl.names import arity
    from rulegrad.runtime import semantics
    from rulegrad.runtime.ops import OP_GROUPS, Ops

    op = Ops[name]
    n = arity(op)
    lines = [f"**{name}**: {'any number of' if n is None else n} source"
             f"{'' if n == 1 else 's'}"]
    groups = sorted(g for g, ops in OP_GROUPS.items() if op in ops and g != "All")
    if groups:
        lines.append(f"groups: {', '.join(groups)}")
    classes = {"b": "bool", "i": "signed ints", "u": "unsigned ints", "f": "floats"}
    if op in semantics.DOMAIN:
        lines.append("defined on: " + ", ".join(classes[k] for k in semantics.DOMAIN[op]))
    notes = [p for p in _semantic_notes() if re.search(rf"\b{name}\b", p)]
    lines.extend(f"- {p}" for p in notes[:4])
    return "\n\n".join(lines)


def _semantic_notes() -> list[str]:
    from rulegrad.runtime import semantics

    doc = semantics.__doc__ or ""
    return [" ".join(b.split()) for b in re.split(r"\n- ", doc)[1:]]


def _rule_doc(text: str, path: str, name: str) -> str:
    """A rule's set, text and its `# check:` annotation (the verdict a check recorded beside
    it)."""
    from rulegrad.dsl.parser import parse_collect

    rf, _ = parse_collect(text, path)
    lines = text.split("\n")
    for rs in rf.rulesets if rf is not None else ():
        for term in rs.terms:
            for rule in term.rules if isinstance(term, A.RuleBlock) else ():
                if rule.name == name:
                    span = lines[rule.span.line - 1:rule.span.end_line]
                    notes = [m.group(1) for ln in span for m in
                             [re.search(r"#\s*check:\s*(.*)", ln)] if m]
                    verdict = f"\n\ncheck: {notes[0]}" if notes else ""
                    return (f"**rule {name}** in set `{rs.name}`, line {rule.span.line}"
                            f"\n\n```\n{rule.text}\n```{verdict}")
    return f"**rule {name}**"


def _helper_doc(name: str, module: str, rules_path: str) -> str:
    file = helper_path(module, rules_path)
    head = f"**{name}**: helper from `{module}`"
    node = _py_def(file, name) if file is not None and os.path.isfile(file) else None
    if isinstance(node, (pyast.FunctionDef, pyast.ClassDef)):
        sig = f"def {name}({pyast.unparse(node.args)})" if isinstance(
            node, pyast.FunctionDef) else f"class {name}"
        doc = pyast.get_docstring(node) or ""
        return f"{head}\n\n```python\n{sig}\n```\n\n{doc}".rstrip()
    return head


# ------------------------------------------------------------------------ completion
def completions(text: str, path: str, line: int, col: int) -> list[tuple[str, str]]:
    """(label, kind) of what may be typed at (line, col): after `name:` a dtype; otherwise the
    ops and groups, the captures of the rule there, the file's sets, helpers and contexts."""
    from rulegrad.dsl.names import BUILTINS, DTYPE_NAMES, GROUP_NAMES, OP_NAMES

    lines = text.split("\n")
    before = lines[line][:col] if line < len(lines) else ""
    word = re.search(r"[A-Za-z0-9_]*$", before)
    start = before[: word.start()] if word else before
    if re.search(r"[A-Za-z0-9_)\]]:$", start) or start.rstrip().endswith("dtype="):
        return [(d, "dtype") for d in sorted(DTYPE_NAMES)]
    out = [(n, "op") for n in sorted(OP_NAMES)] + [(g, "group") for g in sorted(GROUP_NAMES)]
    kinds = {"set": "set", "import": "set", "helper": "helper", "context": "context",
             "pipeline": "pipeline", "def": "helper"}  # a definition is called like a helper
    seen = set()
    for d in definitions(text, path):
        if d.kind in kinds and d.name not in seen:
            seen.add(d.name)
            out.append((d.name, kinds[d.kind]))
    out += [(c, "capture") for c in _captures_near(text, line)]
    out += [(b, "builtin") for b in sorted(BUILTINS)]
    return out


def _captures_near(text: str, line: int) -> list[str]:
    """The capture names of the rule on `line`: from its pattern when the file parses, else the
    lower-case names left of its `->`."""
    from rulegrad.dsl.names import DTYPE_NAMES
    from rulegrad.dsl.parser import parse_collect
    from rulegrad.dsl.subsume import capture_names

    rf, _ = parse_collect(text, "<text>")
    for rule in _rules(rf):
        if rule.span.line - 1 <= line <= rule.span.end_line - 1:
            return list(dict.fromkeys(capture_names(rule.pattern)))
    src = text.split("\n")[line] if line < len(text.split("\n")) else ""
    head = src.split("->")[0]
    head = re.sub(r"^\s*[a-z_][A-Za-z0-9_]*:\s", "", head)  # a rule label is not a capture
    names = [w for w in _WORD.findall(head) if w[0].islower() and w not in DTYPE_NAMES
             and w not in ("as", "if", "and", "or", "not", "in", "is")]
    return list(dict.fromkeys(names))
