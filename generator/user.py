"""A user's own `.rules` file, loaded for use in a program: its generated module, fresh.

In: the path of a `.rules` file anywhere (outside the package), and the folder its generated
module lives in (default: `generated/` beside the file, what `rulegrad gen FILE --out DIR`
writes). Out: its matchers by rule-set name (`load_rules`).

A generated module is imported only when it is exactly what `rulegrad gen` would write now from
the rules file (and the files it imports): a module that is missing or stale is regenerated
(`regenerate=True`, the default), or refused with an error naming the module and the command
that regenerates it. A stale module is never imported.
"""

from __future__ import annotations

import hashlib
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rulegrad.runtime.matcher import RuleMatcher


class UserRulesError(RuntimeError):
    """A user's rules file cannot be used: missing, broken, or its generated module is stale."""


_loaded: dict[tuple[str, str], tuple[str, dict[str, RuleMatcher]]] = {}  # -> (text, matchers)


def module_path(rules: str | Path, module_dir: str | Path | None = None) -> Path:
    """Where the generated module of `rules` is: `module_dir/<stem>.py`."""
    rules = Path(rules)
    return Path(module_dir if module_dir is not None else rules.parent / "generated") \
        / f"{rules.stem}.py"


def load_rules(rules: str | Path, module_dir: str | Path | None = None,
               regenerate: bool = True) -> dict[str, RuleMatcher]:
    """The matchers of a user's rules file, by rule-set name (see the module docstring)."""
    from rulegrad.dsl.errors import RulesError

    from . import compile_file

    rules = Path(rules)
    if not rules.is_file():
        raise UserRulesError(f"{rules}: no such rules file")
    target = module_path(rules, module_dir)
    try:
        text = compile_file(rules, target.parent)  # what `rulegrad gen` would write now
    except RulesError as e:
        raise UserRulesError(str(e)) from None
    key = (str(rules.resolve()), str(target.resolve()))
    cached = _loaded.get(key)
    if cached is not None and cached[0] == text:
        return cached[1]
    current = target.read_text(encoding="utf-8") if target.is_file() else None
    if current != text:
        if not regenerate:
            command = (f"rulegrad gen {shlex.quote(str(rules))} --out "
                       f"{shlex.quote(str(target.parent))}")
            if current is None:
                raise UserRulesError(f"{target} is missing (no module was generated from "
                                     f"{rules} there yet): run `{command}`")
            raise UserRulesError(f"{target} is stale (generated from {rules}, which changed "
                                 f"since, or by an older rulegrad): run `{command}`")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".py.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)  # atomic: an importer never sees half a module
    found = _import(target, text).MATCHERS
    _loaded[key] = (text, found)
    return found


def _import(path: Path, text: str) -> ModuleType:
    """The module `path` holds, run from `text` (the very text checked fresh: a file that
    changes after the check is not what runs)."""
    name = "rulegrad_user_rules_" + hashlib.sha256(
        (str(path.resolve()) + text).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    mod = ModuleType(name)
    mod.__file__ = str(path)
    exec(compile(text, str(path), "exec"), mod.__dict__)  # noqa: S102 - our own generated code
    sys.modules[name] = mod
    return mod
