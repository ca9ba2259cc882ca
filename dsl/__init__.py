"""rulegrad.dsl: the `.rules` language front end (text -> checked rule AST).

    parse(text, path) -> RulesFile       syntax (parser.py, grammar.lark)
    check(file)       -> CheckedFile     names, arity, bindings, shadowing (check.py, subsume.py)
    load(path)        -> CheckedFile     read + parse + check; RulesError lists every error
    print_file(file)  -> str             canonical text (printer.py)

Each phase raises `RulesError` (its `.diagnostics`; `str()` is the printed report).
"""

from __future__ import annotations

from typing import Any

from .ast import CheckedFile
from .check import Loader, check, check_collect, read_file
from .errors import Diagnostic, RulesError, format_diagnostics
from .printer import print_file


def __getattr__(name: str) -> Any:
    # the parser (Lark and its grammar) loads on first use (PEP 562): generated matchers import
    # `rulegrad.dsl.names`, and loading Lark with it cost every process's first realize
    # 50-250 ms for a parser it never runs
    if name in ("parse", "parse_collect"):
        from . import parser

        return getattr(parser, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load(path: str, loader: Loader | None = None) -> CheckedFile:
    """Read, parse and check a rules file (and what it imports), or raise `RulesError` with
    every error found."""
    from .parser import parse_collect

    loader = loader or read_file
    try:
        text = loader(path)
    except OSError as e:
        raise FileNotFoundError(f"cannot read rules file {path}: {e}") from e
    rf, diags = parse_collect(text, path)
    if rf is None:
        raise RulesError(diags, {path: text})
    checked, diags, sources = check_collect(rf, loader)
    if diags or checked is None:
        raise RulesError(diags, sources)
    return checked


__all__ = ["Diagnostic", "RulesError", "check", "format_diagnostics", "load", "parse",
           "print_file"]
