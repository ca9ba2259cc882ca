"""rulegrad.dsl: the `.rules` language front end (text -> checked rule AST).

    parse(text, path) -> RulesFile       syntax (parser.py, grammar.lark)
    check(file)       -> CheckedFile     names, arity, bindings, shadowing (check.py, subsume.py)
    load(path)        -> CheckedFile     read + parse + check; RulesError lists every error
    print_file(file)  -> str             canonical text (printer.py)

Each phase raises `RulesError` (its `.diagnostics`; `str()` is the printed report).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ast import CheckedFile
    from .check import Loader

# Every phase loads on first use (PEP 562): generated matchers import `rulegrad.dsl.names`,
# which imports this package first, and loading Lark and its grammar with it cost every
# process's first realize 50-250 ms; the AST's ~60 dataclasses and the checker cost another
# 35 ms, for a front end a tensor program never runs.
_LAZY = {"parse": "parser", "parse_collect": "parser", "CheckedFile": "ast",
         "Loader": "check", "check": "check", "check_collect": "check", "read_file": "check",
         "Diagnostic": "errors", "RulesError": "errors", "format_diagnostics": "errors",
         "print_file": "printer"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    """The package keeps exporting the function `check`: loading the submodule of that name
    binds the module on its package, which the eager import used to overwrite at once."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "check" and isinstance(value, types.ModuleType):
            value = value.check
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def load(path: str, loader: Loader | None = None) -> CheckedFile:
    """Read, parse and check a rules file (and what it imports), or raise `RulesError` with
    every error found."""
    from .check import check_collect, read_file
    from .errors import RulesError
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
