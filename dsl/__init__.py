"""rulegrad.dsl: the `.rules` language front end (text -> checked rule AST).

    parse(text, path) -> RulesFile       syntax (parser.py, grammar.lark)
    check(file)       -> CheckedFile     names, arity, bindings, shadowing (check.py, subsume.py)
    load(path)        -> CheckedFile     read + parse + check; RulesError lists every error
    print_file(file)  -> str             canonical text (printer.py)
"""

from .errors import Diagnostic, RulesError, format_diagnostics
from .parser import parse

__all__ = ["Diagnostic", "RulesError", "format_diagnostics", "parse"]
