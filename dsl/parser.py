"""Parser: `.rules` text -> `RulesFile` (the typed AST of ast.py), or a `RulesError`.

In: the text of a rules file and the path to report it under. Out: a `RulesFile` whose nodes
carry 1-based spans, or a `RulesError` listing every syntax error found.

Phases, each a function below:
1. `_lex`: Lark's basic lexer over grammar.lark. A character no token starts with (or an
   unterminated string) is reported, blanked out, and lexing starts again, so one bad character
   does not hide the rest of the file.
2. `_postlex`: the newline and bracket logic the grammar cannot say (see grammar.lark's header):
   which newlines end a rule, which `{` opens a rule block, which `name:` is a rule label.
3. `_parse_tokens`: the LALR parser, fed token by token. On a syntax error the error is worded
   (`_explain`), then the parser drops input up to the end of the rule or declaration and pops
   its stack back to a state where a rule (or a declaration) may start, so the next error in
   the file is found too.
4. `_ToAst`: the Lark tree -> ast.py nodes; the few structural errors the grammar lets through
   (`...` not last, an unknown `foo=` constraint, ...) are reported here.
"""

from __future__ import annotations

import ast as pyast
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.lexer import BasicLexer, LexerThread
from lark.parsers.lalr_analysis import Shift

from . import ast as A
from .errors import Diagnostic, RulesError

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")


@cache
def grammar() -> Lark:
    """The LALR parser (built once). Strict (a conflict is an error) when `interegular` is there:
    Lark needs it to check terminals for collisions; the grammar is conflict-free either way and
    tests/test_dsl.py builds it strictly when it can."""
    try:
        import interegular  # noqa: F401

        strict = True
    except ImportError:
        strict = False
    return Lark(GRAMMAR_PATH.read_text(), parser="lalr", lexer="basic", strict=strict,
                propagate_positions=True, maybe_placeholders=False)


@cache
def _lexer() -> BasicLexer:
    # built once: Lark.lex() builds (and, in strict mode, collision-checks) a lexer per call
    return BasicLexer(grammar().lexer_conf)


@cache
def _types() -> dict[str, str]:
    """Terminal name of each literal token: '(' -> 'LPAR', '->' -> '__ANON_0', ..."""
    return {t.pattern.value: t.name for t in grammar().terminals if t.pattern.type == "str"}


def _t(value: str) -> str:
    return _types()[value]


OPENERS = {"(": ")", "[": "]", "{": "}"}
BLOCK_OPEN, BLOCK_CLOSE, NL, END = "_LBLOCK", "_RBLOCK", "_NL", "$END"


def _span(path: str, tok: Token) -> A.Span:
    return A.Span(path, tok.line, tok.column, tok.end_line, tok.end_column)


# ------------------------------------------------------------------------ 1. lexing
def _lex(text: str, path: str, diags: list[Diagnostic]) -> list[Token]:
    blanked = text
    for _ in range(200):  # each round blanks one bad spot; give up on absurd files
        try:
            return list(LexerThread.from_text(_lexer(), blanked).lex(None))
        except UnexpectedCharacters as e:
            pos, ch = e.pos_in_stream, blanked[e.pos_in_stream]
            if ch in "\"'":
                end = blanked.find("\n", pos)
                end = len(blanked) if end < 0 else end
                msg, hint = "unterminated string", f"close it with {ch} on the same line"
            else:
                m = re.compile(r"[^\s\w()\[\]{}.,:#\"']+").match(blanked, pos)
                end = m.end() if m else pos + 1
                msg, hint = f"unexpected character {blanked[pos:end]!r}", None
            diags.append(Diagnostic(A.Span(path, e.line, e.column, e.line,
                                           e.column + (end - pos)), msg, hint))
            blanked = blanked[:pos] + " " * (end - pos) + blanked[end:]
    return []


# ------------------------------------------------------------------------ 2. post-lexing
@dataclass
class _Tok:
    """A token for the parser, with the brackets open just before it (for error messages)."""

    tok: Token
    open: tuple[Token, ...]


def _retype(tok: Token, type_: str) -> Token:
    return Token.new_borrow_pos(type_, tok.value, tok)


def _split_label(tok: Token) -> list[Token]:
    # `name:` that is not a rule label: the name, then a ':' token
    name = tok.value[:-1]
    kind = _types().get(name, "LNAME")  # a keyword stays a keyword (and then fails to parse)
    first = Token(kind, name, tok.start_pos, tok.line, tok.column, tok.line,
                  tok.column + len(name), tok.start_pos + len(name))
    colon = Token(_t(":"), ":", tok.start_pos + len(name), tok.line, tok.column + len(name),
                  tok.line, tok.column + len(name) + 1, tok.start_pos + len(name) + 1)
    return [first, colon]


def _postlex(tokens: list[Token]) -> list[_Tok]:
    """Keep the newlines that end a rule or a declaration; name the braces of rule blocks;
    keep `name:` as a LABEL only at the start of a rule."""
    out: list[_Tok] = []
    stack: list[Token] = []  # open brackets, innermost last; block braces typed _LBLOCK
    pending: Token | None = None  # a newline, emitted once we know what follows it
    top_continues = {_t(v) for v in ("+", "=", ",", ":", "import")}

    def emit(tok: Token) -> None:
        out.append(_Tok(tok, tuple(stack)))

    for tok in tokens:
        if tok.type == NL:
            in_brackets = bool(stack) and stack[-1].type != BLOCK_OPEN
            if in_brackets or not out or out[-1].tok.type in (NL, BLOCK_OPEN):
                continue
            if not stack and out[-1].tok.type in top_continues:
                continue  # `rules a = b +` / `use m: f,` go on on the next line
            pending = tok
            continue
        value = tok.value
        closes_block = value == "}" and bool(stack) and any(t.type == BLOCK_OPEN for t in stack)
        if pending is not None:
            # no newline token before the `}` of a block or before a `+` between terms
            if not (closes_block or (not stack and value == "+")):
                emit(pending)
            pending = None
        if tok.type == "LABEL":
            at_rule_start = bool(stack) and stack[-1].type == BLOCK_OPEN and out[-1].tok.type in (
                NL, BLOCK_OPEN)
            if not at_rule_start:
                for part in _split_label(tok):
                    emit(part)
                continue
        if value == "{" and tok.type == _t("{"):
            if not stack:
                tok = _retype(tok, BLOCK_OPEN)
            emit(tok)
            stack.append(tok)
            continue
        if value in ("}", ")", "]") and tok.type != "STRING":
            opener = next((i for i in range(len(stack) - 1, -1, -1)
                           if OPENERS.get(stack[i].value) == value), None)
            if value == "}" and closes_block:
                # the `}` of a block closes whatever was left open inside the block too
                opener = max(i for i, t in enumerate(stack) if t.type == BLOCK_OPEN)
                if opener != len(stack) - 1 and stack[-1].value == "{":
                    opener = len(stack) - 1  # the `}` of an op set inside a block
                if stack[opener].type == BLOCK_OPEN:
                    tok = _retype(tok, BLOCK_CLOSE)
            emit(tok)
            if opener is None and stack and stack[-1].type != BLOCK_OPEN:
                opener = len(stack) - 1  # `MUL(x, 1]`: take it as closing the innermost bracket
            if opener is not None:
                del stack[opener:]
            continue
        if tok.type in (_t("rules"), _t("pipeline"), _t("context"), _t("record"), _t("def")) \
                and stack:
            stack.clear()  # `rules` starts a declaration: whatever is open was left unclosed
        emit(tok)
        if tok.type == _t("->") and stack and stack[-1].type != BLOCK_OPEN:
            # `->` never sits inside brackets: what is open was left unclosed (the parser reports
            # it); close it here so that the next line is a new rule again
            while stack and stack[-1].type != BLOCK_OPEN:
                stack.pop()
        if value in ("(", "["):
            stack.append(tok)
    return out


# ------------------------------------------------------------------------ 3. parsing
def _describe(tok: Token) -> str:
    kind = tok.type
    if kind == NL:
        return "end of line"
    if kind == END:
        return "end of file"
    if kind == BLOCK_CLOSE:
        return "'}'"
    if kind == "LABEL":
        return f"rule label '{tok.value}'"
    if kind == "STRING":
        return f"string {tok.value}"
    if kind in ("INT", "FLOAT"):
        return f"number {tok.value}"
    if kind in ("LNAME", "UNAME"):
        return f"name '{tok.value}'"
    return f"'{tok.value}'"


_EXPECTED_WORDS = {
    "LNAME": "a name", "UNAME": "an op name", "INT": "a number", "FLOAT": "a number",
    "STRING": "a string", "LABEL": "a rule label", NL: "end of line", BLOCK_CLOSE: "'}'",
    BLOCK_OPEN: "'{'", END: "end of file",
}


def _expected_words(expected: set[str]) -> str:
    names = {v: k for k, v in _types().items()}
    words = sorted({_EXPECTED_WORDS.get(e) or f"'{names.get(e, e)}'" for e in expected})
    if len(words) > 6:
        words = words[:6] + ["..."]
    return ", ".join(words)


_BRACKET_WORDS = {"(": "parenthesis", "[": "bracket '['", "{": "brace '{'"}


def _explain(toks: list[_Tok], i: int, expected: set[str], path: str) -> Diagnostic:
    """Word a syntax error: the token at `toks[i]` is not one of `expected`."""
    cur = toks[i]
    tok, open_ = cur.tok, cur.open
    prev = toks[i - 1].tok if i > 0 else None
    prev_v = prev.value if prev is not None else None
    span = _span(path, tok)
    if tok.type in (NL, BLOCK_CLOSE, END) and prev is not None:
        # something is missing: point just after the last token of the line
        span = A.Span(path, prev.end_line, prev.end_column, prev.end_line, prev.end_column)
    desc = _describe(tok)
    if tok.type in (NL, BLOCK_CLOSE) and prev is not None and tok.line > prev.end_line:
        desc = "end of line"
    arrow, if_, colon = _t("->"), _t("if"), _t(":")
    closer_of = {t.value: OPENERS[t.value] for t in open_ if t.type != BLOCK_OPEN}

    # a closing bracket that closes nothing
    if tok.value in (")", "]") or tok.type == _t("}"):
        inner = open_[-1] if open_ and open_[-1].type != BLOCK_OPEN else None
        if inner is None:
            return Diagnostic(span, f"unexpected '{tok.value}'", "nothing is open here to close")
        if OPENERS[inner.value] != tok.value:
            return Diagnostic(span, f"unexpected '{tok.value}': expected '{OPENERS[inner.value]}'"
                              f" to close the '{inner.value}' at {inner.line}:{inner.column}")
    # a bracket left open: the parser trips over a token that cannot be inside it
    inner = open_[-1] if open_ and open_[-1].type != BLOCK_OPEN else None
    if inner is not None:
        stopper = tok.type in (arrow, BLOCK_CLOSE, END, _t("rules"), "LABEL")
        later = tok.line > inner.line and _t(OPENERS[inner.value]) in expected
        if stopper or later:
            what = _BRACKET_WORDS[inner.value]
            return Diagnostic(_span(path, inner), f"unclosed {what}",
                              f"the rule goes on to {desc} at {tok.line}:{tok.column}")
    if tok.type in (END, _t("rules")) and any(t.type == BLOCK_OPEN for t in open_):
        block = next(t for t in open_ if t.type == BLOCK_OPEN)
        return Diagnostic(_span(path, block), "unclosed '{' of a rule block",
                          f"the block goes on to {desc} at {tok.line}:{tok.column}")
    del closer_of

    in_block = any(t.type == BLOCK_OPEN for t in open_)
    ends = (NL, BLOCK_CLOSE, END)
    if in_block:
        if _t("pass") in expected:  # at the start of a pass of a pipeline
            return Diagnostic(span, f"expected a pass, found {desc}",
                              "a pass is: pass NAME = RULESET [bottom_up] [ctx=CONTEXT] "
                              "[until_settled] [collect] [spec=STAGE]")
        if prev is not None and prev.type == _t("pass") or expected == {_t("=")}:
            return Diagnostic(span, f"expected 'NAME = RULESET' after 'pass', found {desc}")
        if "LABEL" in expected:  # at the start of a rule
            if tok.type == arrow:
                return Diagnostic(span, "expected a pattern before '->'")
            return Diagnostic(span, f"expected a rule, found {desc}",
                              "a rule is: [name: ] PATTERN [if GUARD] -> RHS")
        if arrow in expected:
            where = "the pattern" if if_ in expected else "the guard"
            return Diagnostic(span, f"expected '->' after {where}, found {desc}")
        if "LNAME" in expected and _t("(") in expected and tok.type in ends + (arrow,):
            if prev is not None and prev.type == arrow:
                return Diagnostic(span, "expected an expression after '->'")
            if prev is not None and prev.type == if_:
                return Diagnostic(span, "expected a condition after 'if'")
            return Diagnostic(span, f"expected an expression, found {desc}")
        if prev is not None and prev.type == colon and "LNAME" in expected:
            return Diagnostic(span, f"expected a dtype or a pattern after ':', found "
                              f"{desc}")
        if "UNAME" in expected and prev_v in ("{", ","):
            if tok.type == "LNAME":
                return Diagnostic(span, f"expected an op name, found {desc}",
                                  "op names are capitalised (ADD, REDUCE_AXIS)")
    else:  # the top level
        decl_start = {_t("rules"), _t("use"), _t("from")}
        if decl_start & expected:
            return Diagnostic(span, f"expected 'rules', 'use' or 'from' (or 'pipeline'), "
                              f"found {desc}",
                              "rules live inside a rule set: rules NAME = { ... }")
        if expected == {_t("=")}:
            return Diagnostic(span, "a rule set needs '=' after its name")
        if prev is not None and prev.type == _t("rules"):
            return Diagnostic(span, f"expected a rule-set name after 'rules', found "
                              f"{desc}")
        if BLOCK_OPEN in expected:
            return Diagnostic(span, f"expected a rule-set name or '{{' after '{prev_v}', found "
                              f"{desc}")
        if _t("+") in expected and NL in expected:
            return Diagnostic(span, f"expected '+' or the end of the line, found "
                              f"{desc}")
        if prev is not None and prev.type == _t("use"):
            return Diagnostic(span, f"expected a module name after 'use', found "
                              f"{desc}")
        if colon in expected:
            return Diagnostic(span, "expected ':' after the module name",
                              "use MODULE: helper, helper")
        if prev is not None and prev.type == _t("from"):
            return Diagnostic(span, "expected a quoted path after 'from'",
                              'from "other.rules" import name')
        if _t("import") in expected:
            return Diagnostic(span, "expected 'import' after the path")
        if expected == {"LNAME"}:
            return Diagnostic(span, f"expected a name, found {desc}")
    return Diagnostic(span, f"unexpected {desc}", f"expected {_expected_words(expected)}")


def _syncs(toks: list[_Tok], i: int) -> Iterator[tuple[int, str]]:
    """Where to resume after an error at toks[i], nearest first: the index of the next token to
    feed, and what the parser must be ready for there ('rule', 'decl' or 'close')."""
    for k in range(i, len(toks)):
        tok = toks[k]
        if tok.tok.type == NL:
            in_block = any(t.type == BLOCK_OPEN for t in tok.open)
            yield k + 1, ("rule" if in_block else "decl")
        elif tok.tok.type == BLOCK_CLOSE:
            yield k, "close"
        elif tok.tok.type == _t("rules") and k > i:
            yield k, "decl"


def _parse_tokens(toks: list[_Tok], path: str, diags: list[Diagnostic],
                  bad_lines: set[int]) -> Tree | None:
    ip = grammar().parse_interactive("", start="start")
    state = ip.parser_state
    table = state.parse_conf.parse_table.states
    # the token that marks a state as a declaration's start: 'from' ('rules' and 'use' can
    # also be module names, `use a.rules: f`, so states inside a module path accept them)
    wants = {"rule": ("LABEL", _t("pass")), "decl": (_t("from"),), "close": (BLOCK_CLOSE,)}
    last = toks[-1].tok if toks else Token(END, "", 0, 1, 1, 1, 1, 0)
    eof = Token(END, "", last.end_pos, last.end_line, last.end_column, last.end_line,
                last.end_column, last.end_pos)
    seq = toks + [_Tok(eof, toks[-1].open if toks else ())]
    i, failed = 0, False
    while i < len(seq):
        tok = seq[i].tok
        try:
            if tok.type == END:
                tree = ip.feed_eof(last)
                return None if failed else tree
            ip.feed_token(tok)
            i += 1
            continue
        except UnexpectedToken as e:
            failed = True
            diag = _explain(seq, i, set(e.expected), path)
            if diag.span.line not in bad_lines:  # a lexing error on this line already said it
                diags.append(diag)
        # drop input up to the next place a rule or declaration may start, and pop the parser
        # back to a state that accepts it there
        start = i + 1 if seq[i].tok.type == BLOCK_CLOSE else i
        for k, kind in _syncs(seq, start):
            # a state that shifts the token (LALR may also *reduce* on `}` mid-expression)
            depth = next((d for d in range(len(state.state_stack) - 1, -1, -1)
                          if any(table[state.state_stack[d]].get(w, (None,))[0] is Shift
                                 for w in wants[kind])), None)
            if depth is not None:
                del state.state_stack[depth + 1:]
                del state.value_stack[depth:]
                i = k
                break
        else:
            return None
    return None


# ------------------------------------------------------------------------ 4. tree -> AST
@dataclass(frozen=True)
class _Kw:
    name: str
    value: A.Expr
    span: A.Span


@dataclass(frozen=True)
class _Ellipsis:
    span: A.Span


@dataclass(frozen=True)
class _Rest:
    name: str
    span: A.Span


@dataclass(frozen=True)
class _Opt:
    name: str
    value: str | None
    span: A.Span
    value_span: A.Span


@dataclass(frozen=True)
class _Lets:
    binds: tuple[tuple[str, A.Expr], ...]


@dataclass(frozen=True)
class _Guard:
    expr: A.Expr


@dataclass(frozen=True)
class _Comp:
    names: tuple[str, ...]
    iter: A.Expr
    conds: tuple[A.Expr, ...]


@dataclass(frozen=True)
class _SlicePart:
    which: str
    expr: A.Expr


_COMMENT_OR_STRING = re.compile(r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|#[^\n]*""")


def one_line(text: str) -> str:
    """A rule's source on one line: comments dropped, whitespace collapsed."""
    text = re.sub(r"\\[\t \f]*\r?\n", " ", text)  # a continued line
    text = _COMMENT_OR_STRING.sub(lambda m: m.group(1) or "", text)
    text = " ".join(text.split())
    return re.sub(r"([(\[{]) | ([)\]}])", lambda m: m.group(1) or m.group(2), text)


def _number(tok: Token) -> int | float:
    if tok.type == "INF":
        return math.inf
    if tok.type == "NAN":
        return math.nan  # always this object, so that equal trees compare equal
    if tok.type == "INT":
        return int(tok.value, 0) if tok.value.lower().startswith("0x") else int(tok.value)
    return float(tok.value)


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree -> ast.py nodes. Structural errors go to `diags`."""

    def __init__(self, path: str, source: str, diags: list[Diagnostic]):
        super().__init__()
        self.path, self.source, self.diags = path, source, diags

    def sp(self, meta: Any) -> A.Span:
        if getattr(meta, "empty", True):
            return A.NO_SPAN
        return A.Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def tsp(self, tok: Token) -> A.Span:
        return _span(self.path, tok)

    def error(self, span: A.Span, message: str, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(span, message, hint))

    # -------------------------------------------------------------- file structure
    def start(self, meta: Any, items: list[Any]) -> A.RulesFile:
        return A.RulesFile(
            self.path,
            tuple(x for x in items if isinstance(x, A.Use)),
            tuple(x for x in items if isinstance(x, A.Import)),
            tuple(x for x in items if isinstance(x, A.RuleSet)),
            source=self.source,
            pipelines=tuple(x for x in items if isinstance(x, A.Pipeline)),
            contexts=tuple(x for x in items if isinstance(x, A.Context)),
            defs=tuple(x for x in items if isinstance(x, A.Def)),
        )

    def module(self, meta: Any, items: list[Token]) -> str:
        return "".join(t.value for t in items)

    def use(self, meta: Any, items: list[Any]) -> A.Use:
        names = items[1:]
        return A.Use(items[0], tuple(t.value for t in names), tuple(map(self.tsp, names)),
                     self.sp(meta))

    def analysis(self, meta: Any, items: list[Any]) -> A.Use:
        return replace(self.use(meta, items), analysis=True)

    def import_(self, meta: Any, items: list[Token]) -> A.Import:
        names = items[1:]
        return A.Import(pyast.literal_eval(items[0].value), tuple(t.value for t in names),
                        tuple(map(self.tsp, names)), self.sp(meta))

    def ruleset(self, meta: Any, items: list[Any]) -> A.RuleSet:
        name = items[0].value
        terms = []
        for term in items[1:]:
            if isinstance(term, A.RuleBlock):
                rules = tuple(r if r.named else replace(r, name=f"{name}_{r.span.line}")
                              for r in term.rules)
                term = replace(term, rules=rules)
            terms.append(term)
        return A.RuleSet(name, tuple(terms), self.sp(meta))

    def pipeline(self, meta: Any, items: list[Any]) -> A.Pipeline:
        return A.Pipeline(items[0].value, tuple(items[1:]), self.sp(meta))

    def context(self, meta: Any, items: list[Any]) -> A.Context:
        kind, name, rest = items[0], items[1].value, items[2:]
        inputs = rest.pop(0) if rest and isinstance(rest[0], tuple) else ()
        return A.Context(name, inputs, tuple(x for x in rest if isinstance(x, A.Field)),
                         tuple(x for x in rest if isinstance(x, A.Method)),
                         kind.value == "record", self.sp(meta))

    def cinputs(self, meta: Any, items: list[Token]) -> tuple[str, ...]:
        return tuple(t.value for t in items)

    def cfield(self, meta: Any, items: list[Any]) -> A.Field:
        default = items[2] if len(items) > 2 else None
        return A.Field(items[0].value[:-1], items[1], default, self.sp(meta))

    def ctype(self, meta: Any, items: list[Any]) -> str:
        args = ["..." if isinstance(x, _Ellipsis) else x for x in items[1:]]
        return items[0].value + (f"[{', '.join(args)}]" if args else "")

    def cmethod(self, meta: Any, items: list[Any]) -> A.Method:
        lets = items.pop().binds if isinstance(items[-1], _Lets) else ()
        params = tuple(x for x in items[1:-1])
        return A.Method(items[0].value, params, items[-1], lets, self.sp(meta))

    def funcdef(self, meta: Any, items: list[Any]) -> A.Def:
        m = self.cmethod(meta, items[1:])
        text = one_line(self.source[meta.start_pos:meta.end_pos])
        return A.Def(m.name, m.params, m.body, m.lets, text, m.span)

    def cparam(self, meta: Any, items: list[Any]) -> tuple[str, A.ELit | None]:
        return items[0].value, (items[1] if len(items) > 1 else None)

    def popt(self, meta: Any, items: list[Token]) -> _Opt:
        value = items[1] if len(items) > 1 else None
        return _Opt(items[0].value, value.value if value is not None else None,
                    self.sp(meta), self.tsp(value) if value is not None else self.sp(meta))

    def pass_(self, meta: Any, items: list[Any]) -> A.Pass:
        name, ruleset, opts = items[0], items[1], items[2:]
        fields: dict[str, Any] = {}
        for o in opts:
            key = {"top_down": "bottom_up", "bottom_up": "bottom_up", "once": "until_settled",
                   "until_settled": "until_settled", "collect": "collect"}.get(o.name)
            if o.value is None and key is not None:
                value: Any = o.name in ("bottom_up", "until_settled", "collect")
            elif o.value is not None and o.name in ("ctx", "spec"):
                key, value = o.name, o.value
                if o.name == "ctx":
                    fields["ctx_span"] = o.value_span
            else:
                self.error(o.span, f"unknown pass option '{o.name}{'=' if o.value else ''}'",
                           "a pass takes top_down or bottom_up, ctx=CONTEXT, once or "
                           "until_settled, collect, spec=STAGE")
                continue
            if key in fields:
                self.error(o.span, f"pass option '{o.name}' contradicts or repeats an earlier "
                           "one")
            fields[key] = value
        return A.Pass(name.value, ruleset.value, set_span=self.tsp(ruleset), span=self.sp(meta),
                      **fields)

    def prest(self, meta: Any, items: list[Token]) -> _Rest:
        return _Rest(items[0].value, self.sp(meta))

    def estar(self, meta: Any, items: list[Any]) -> A.EStar:
        return A.EStar(items[0], self.sp(meta))

    def setref(self, meta: Any, items: list[Token]) -> A.SetRef:
        return A.SetRef(items[0].value, self.sp(meta))

    def block(self, meta: Any, items: list[A.Rule]) -> A.RuleBlock:
        return A.RuleBlock(tuple(items), self.sp(meta))

    def rule(self, meta: Any, items: list[Any]) -> A.Rule:
        name, named = "", False
        if isinstance(items[0], Token):  # LABEL
            name, named = items[0].value[:-1], True
            items = items[1:]
        pattern, rest = items[0], items[1:]
        guard = rest[0].expr if isinstance(rest[0], _Guard) else None
        lets = rest.pop().binds if isinstance(rest[-1], _Lets) else ()
        rhs = rest[-1]
        span = self.sp(meta)
        text = one_line(self.source[meta.start_pos:meta.end_pos])
        return A.Rule(name, pattern, guard, rhs, named, text, span, lets)

    def lets(self, meta: Any, items: list[Any]) -> _Lets:
        return _Lets(tuple((items[i].value, items[i + 1]) for i in range(0, len(items), 2)))

    def eerror(self, meta: Any, items: list[Any]) -> A.EError:
        return A.EError(items[0], self.sp(meta))

    def guard(self, meta: Any, items: list[Any]) -> _Guard:
        return _Guard(items[0])

    def defer(self, meta: Any, items: list[Any]) -> A.EDefer:
        return A.EDefer(self.sp(meta))

    # -------------------------------------------------------------- patterns
    def dtype(self, meta: Any, items: list[Token]) -> A.DTypeRef:
        return A.DTypeRef(items[0].value, self.tsp(items[0]))

    def pbind_postfix(self, meta: Any, items: list[Any]) -> A.PBind:
        return A.PBind(items[1].value, items[0], True, self.sp(meta))

    def pbind_prefix(self, meta: Any, items: list[Any]) -> A.PBind:
        return A.PBind(items[0].value, items[1], False, self.sp(meta))

    def pvar(self, meta: Any, items: list[Any]) -> A.PVar:
        return A.PVar(items[0].value, items[1] if len(items) > 1 else None, self.sp(meta))

    def pwild(self, meta: Any, items: list[Any]) -> A.PVar:
        return A.PVar(None, items[0] if items else None, self.sp(meta))

    def pconst(self, meta: Any, items: list[Any]) -> A.PConst:
        dtype = items.pop() if isinstance(items[-1], A.DTypeRef) else None
        if items[0].type in ("TRUE", "FALSE"):
            value: bool | int | float = items[0].type == "TRUE"
        else:
            value = _number(items[-1])
            if items[0].type == "NEG":
                value = -value
        return A.PConst(value, dtype, self.sp(meta))

    def opspec(self, meta: Any, items: list[Token]) -> tuple[A.OpRef, ...]:
        return tuple(A.OpRef(t.value, self.tsp(t)) for t in items)

    def ellipsis(self, meta: Any, items: list[Any]) -> _Ellipsis:
        return _Ellipsis(self.sp(meta))

    def pkw(self, meta: Any, items: list[Any]) -> _Kw:
        return _Kw(items[0].value, items[1], self.sp(meta))

    def pnode_bare(self, meta: Any, items: list[Any]) -> A.PNode:
        dtype = items[1] if len(items) > 1 else None
        return A.PNode(items[0], None, dtype=dtype, span=self.sp(meta))

    def pnode_fixed(self, meta: Any, items: list[Any]) -> A.PNode:
        return self._pnode(meta, items, commutative=False)

    def pnode_comm(self, meta: Any, items: list[Any]) -> A.PNode:
        return self._pnode(meta, items, commutative=True)

    def _pnode(self, meta: Any, items: list[Any], commutative: bool) -> A.PNode:
        ops, items = items[0], items[1:]
        dtype = items.pop() if items and isinstance(items[-1], A.DTypeRef) else None
        srcs: list[A.Pattern] = []
        ellipsis: _Ellipsis | None = None
        rest: _Rest | None = None
        kws: dict[str, _Kw] = {}
        for item in items:
            if isinstance(item, _Rest):  # `*name`: `...` that binds the remaining sources
                if ellipsis is not None or commutative:
                    self.error(item.span, "'*name' must be the last source pattern, once, and "
                               "not in a commutative [...]")
                rest, item = item, _Ellipsis(item.span)
            if isinstance(item, _Kw):
                if item.name not in ("arg", "tag", "dtype"):
                    self.error(item.span, f"unknown constraint '{item.name}='",
                               "a pattern takes arg=, tag= and dtype=")
                elif item.name in kws:
                    self.error(item.span, f"'{item.name}=' given twice")
                kws[item.name] = item
            elif kws:
                self.error(getattr(item, "span", A.NO_SPAN),
                           "source patterns must come before the keyword constraints")
            elif isinstance(item, _Ellipsis):
                if ellipsis is not None:
                    self.error(item.span, "'...' given twice")
                ellipsis = item
            elif ellipsis is not None:
                self.error(item.span, "'...' must come after the last source pattern")
            else:
                srcs.append(item)
        if "dtype" in kws:
            kw = kws["dtype"]
            value = kw.value
            if isinstance(value, A.EAttr) and value.obj == A.EName("dtypes"):
                dt = A.DTypeRef(value.attr, kw.span)
            elif isinstance(value, A.EName):
                dt = A.DTypeRef(value.name, value.span)
            else:
                dt = None
                self.error(kw.span, "dtype= takes a dtype name (int32, floats, ...)")
            if dtype is not None and dt is not None:
                self.error(kw.span, "the dtype is given twice (':' and 'dtype=')")
            dtype = dtype or dt
        arg = kws["arg"].value if "arg" in kws else None
        tag = kws["tag"].value if "tag" in kws else None
        if ellipsis is not None and not srcs and not commutative and rest is None:
            # `OP(...)` is `OP`: any sources
            return A.PNode(ops, None, False, False, arg, tag, dtype, self.sp(meta))
        return A.PNode(ops, tuple(srcs), commutative, ellipsis is not None, arg, tag, dtype,
                       self.sp(meta), rest.name if rest is not None else None)

    # -------------------------------------------------------------- expressions
    def literal(self, meta: Any, items: list[Token]) -> A.ELit:
        tok = items[0]
        kind = tok.type
        value: Any
        if kind == "STRING":
            value = pyast.literal_eval(tok.value)
        elif kind in ("TRUE", "FALSE", "NONE"):
            value = {"TRUE": True, "FALSE": False, "NONE": None}[kind]
        else:
            value = _number(tok)
        return A.ELit(value, self.sp(meta))

    def ename(self, meta: Any, items: list[Token]) -> A.EName:
        return A.EName(items[0].value, self.sp(meta))

    def eopname(self, meta: Any, items: list[Token]) -> A.EOpName:
        return A.EOpName(items[0].value, self.sp(meta))

    def eattr(self, meta: Any, items: list[Any]) -> A.EAttr:
        return A.EAttr(items[0], items[2].value, self.sp(meta))

    def eindex(self, meta: Any, items: list[Any]) -> A.EIndex:
        return A.EIndex(items[0], items[1], self.sp(meta))

    def slice_lo(self, meta: Any, items: list[Any]) -> _SlicePart:
        return _SlicePart("lower", items[0])

    def slice_hi(self, meta: Any, items: list[Any]) -> _SlicePart:
        return _SlicePart("upper", items[0])

    def slice_step(self, meta: Any, items: list[Any]) -> _SlicePart:
        return _SlicePart("step", items[0])

    def slice(self, meta: Any, items: list[Any]) -> A.ESlice:
        parts = {p.which: p.expr for p in items if isinstance(p, _SlicePart)}
        return A.ESlice(parts.get("lower"), parts.get("upper"), parts.get("step"), self.sp(meta))

    def kwarg(self, meta: Any, items: list[Any]) -> _Kw:
        return _Kw(items[0].value, items[1], self.sp(meta))

    def ecall(self, meta: Any, items: list[Any]) -> A.ECall:
        func, args, kwargs = items[0], [], []
        for item in items[1:]:
            if isinstance(item, _Kw):
                if any(k == item.name for k, _ in kwargs):
                    self.error(item.span, f"keyword argument '{item.name}=' given twice")
                kwargs.append((item.name, item.value))
            else:
                if kwargs:
                    self.error(item.span, "a positional argument after keyword arguments")
                args.append(item)
        return A.ECall(func, tuple(args), tuple(kwargs), self.sp(meta))

    def ecall_gen(self, meta: Any, items: list[Any]) -> A.ECall:
        func, elt, comp = items
        gen = A.EComp("gen", elt, comp.names, comp.iter, comp.conds, self.sp(meta))
        return A.ECall(func, (gen,), (), self.sp(meta))

    def comp(self, meta: Any, items: list[Any]) -> _Comp:
        names = tuple(t.value for t in items if isinstance(t, Token))
        exprs = [x for x in items if not isinstance(x, Token)]
        return _Comp(names, exprs[0], tuple(exprs[1:]))

    def egen(self, meta: Any, items: list[Any]) -> A.EComp:
        elt, comp = items
        return A.EComp("gen", elt, comp.names, comp.iter, comp.conds, self.sp(meta))

    def elistcomp(self, meta: Any, items: list[Any]) -> A.EComp:
        elt, comp = items
        return A.EComp("list", elt, comp.names, comp.iter, comp.conds, self.sp(meta))

    def etuple(self, meta: Any, items: list[Any]) -> A.ETuple:
        return A.ETuple(tuple(items), self.sp(meta))

    def elist(self, meta: Any, items: list[Any]) -> A.EList:
        return A.EList(tuple(items), self.sp(meta))

    def ebinop(self, meta: Any, items: list[Any]) -> A.EBinOp:
        return A.EBinOp(items[1], items[0], items[2], self.sp(meta))

    def addop(self, meta: Any, items: list[Token]) -> str:
        return items[0].value

    mulop = addop

    def compop(self, meta: Any, items: list[Token]) -> str:
        return " ".join(t.value for t in items)

    def ecompare(self, meta: Any, items: list[Any]) -> A.ECompare:
        return A.ECompare(items[0], tuple(items[1::2]), tuple(items[2::2]), self.sp(meta))

    def eneg(self, meta: Any, items: list[Any]) -> A.EUnary:
        return A.EUnary("-", items[1], self.sp(meta))

    def enot(self, meta: Any, items: list[Any]) -> A.EUnary:
        return A.EUnary("not", items[0], self.sp(meta))

    def eand(self, meta: Any, items: list[Any]) -> A.EBool:
        return A.EBool("and", tuple(items), self.sp(meta))

    def eor(self, meta: Any, items: list[Any]) -> A.EBool:
        return A.EBool("or", tuple(items), self.sp(meta))

    def eif(self, meta: Any, items: list[Any]) -> A.EIf:
        return A.EIf(items[1], items[0], items[2], self.sp(meta))


# ------------------------------------------------------------------------ nesting limit
# Deeper parse trees are refused: every later phase (Lark's transformer, the checker, the
# generator) walks the tree recursively, and a real rule nests a few dozen levels at most
MAX_TREE_DEPTH = 200


MAX_BRACKET_DEPTH = MAX_TREE_DEPTH // 2


def _brackets_too_deep(tokens: list[Token], path: str) -> Diagnostic | None:
    """An error at the first bracket opened inside MAX_BRACKET_DEPTH others."""
    depth = 0
    for tok in tokens:
        if tok.type == "STRING":
            continue
        if tok.value in ("(", "[", "{"):
            depth += 1
            if depth > MAX_BRACKET_DEPTH:
                line, col = tok.line or 1, tok.column or 1
                return Diagnostic(A.Span(path, line, col, line, col + 1),
                                  f"nested too deeply: more than {MAX_BRACKET_DEPTH} brackets "
                                  "open at once", "split the rule, or compute the value in a "
                                  "helper")
        elif tok.value in (")", "]", "}"):
            depth = max(0, depth - 1)
    return None


def _too_deep(tree: Tree, path: str) -> Diagnostic | None:
    """An error at the first part of the parse tree nested deeper than MAX_TREE_DEPTH (found
    by an explicit stack, so any depth can be measured)."""
    stack: list[tuple[Any, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, Tree):
            continue
        if depth > MAX_TREE_DEPTH:
            meta = node.meta
            line, col = getattr(meta, "line", 1), getattr(meta, "column", 1)
            span = A.Span(path, line, col, line, col + 1)
            return Diagnostic(span, f"nested too deeply: more than {MAX_TREE_DEPTH} levels of "
                              "patterns, brackets or operators in one rule",
                              "split the rule, or compute the value in a helper")
        stack.extend((c, depth + 1) for c in node.children)
    return None


# ------------------------------------------------------------------------ the entry point
def parse_collect(text: str, path: str) -> tuple[A.RulesFile | None, list[Diagnostic]]:
    """Parse, returning the file (None if it did not parse) and every error found."""
    rf, diags = _parse_text(text, path)
    return rf, list(diags)


# The AST and its diagnostics are immutable, so a text seen again is not parsed again: the
# package's files are read by every load that imports them (rangeify.rules by most), by
# `rulegrad check`, fmt and the language server (rangeify.rules takes 0.16 s to parse).
PARSED_TEXTS_KEPT = 64


@lru_cache(maxsize=PARSED_TEXTS_KEPT)
def _parse_text(text: str, path: str) -> tuple[A.RulesFile | None, tuple[Diagnostic, ...]]:
    diags: list[Diagnostic] = []
    tokens = _lex(text, path, diags)
    deep = _brackets_too_deep(tokens, path)
    if deep is not None:  # before _postlex, whose bookkeeping grows with the depth
        return None, (deep,)
    bad_lines = {d.span.line for d in diags}
    tree = _parse_tokens(_postlex(tokens), path, diags, bad_lines)
    if tree is None or diags:
        return None, tuple(diags)
    deep = _too_deep(tree, path)
    if deep is not None:  # refused before any recursive walk (Lark's transformer is one)
        return None, (deep,)
    rf = _ToAst(path, text, diags).transform(tree)
    return (None if diags else rf), tuple(diags)


def parse(text: str, path: str) -> A.RulesFile:
    """The AST of a rules file; raises `RulesError` with every syntax error found."""
    rf, diags = parse_collect(text, path)
    if rf is None:
        raise RulesError(diags, {path: text})
    return rf
