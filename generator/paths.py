"""Where things are: the package's rules folder, how a rules file is named in generated code,
and where a rule helper module comes from.

In: paths as the parser recorded them, and `Helper`s of the checked file. Out: stable,
machine-independent names (`rules/symbolic.rules`, `rulegrad.rules.symbolic_helpers`) so that
generated modules have no absolute paths and the same bytes on every machine.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from rulegrad.dsl.ast import Helper

PACKAGE_RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
GENERATED_DIR = PACKAGE_RULES_DIR / "generated"


def package_rules_files() -> list[Path]:
    """Every rules file of the package, in name order (what `gen` and `check` do by default)."""
    return sorted(PACKAGE_RULES_DIR.glob("*.rules"))


def in_package(path: str | Path) -> bool:
    """True for a file directly in rulegrad's rules/ folder."""
    return Path(path).resolve().parent == PACKAGE_RULES_DIR


def display_path(path: str | Path, out_dir: str | Path | None = None) -> str:
    """How generated code and traces name a rules file: `rules/X.rules` for the package's
    files; otherwise the path relative to the folder the generated module goes to."""
    if in_package(path):
        return f"rules/{Path(path).name}"
    base = Path(out_dir) if out_dir is not None else Path.cwd()
    return Path(os.path.relpath(Path(path).resolve(), base.resolve())).as_posix()


def sha256_file(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class HelperSource:
    """Where a helper comes from: an importable module, or a .py file (relative path)."""

    name: str
    module: str | None  # dotted module to import from
    relpath: str | None  # file relative to the generated module, when not importable


def helper_source(h: Helper, out_dir: str | Path | None) -> HelperSource:
    if h.file is None:  # `use some.module: f`
        return HelperSource(h.name, h.module.lstrip("."), None)
    if in_package(h.file):  # `use .mod: f` beside a package rules file
        return HelperSource(h.name, f"rulegrad.rules.{Path(h.file).stem}", None)
    base = Path(out_dir) if out_dir is not None else Path.cwd()
    rel = Path(os.path.relpath(Path(h.file).resolve(), base.resolve())).as_posix()
    return HelperSource(h.name, None, rel)
