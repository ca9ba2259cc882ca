"""`rulegrad gen [PATH...] [--out DIR] [--check]`: regenerate matcher modules.

In: `.rules` paths (default: every `rules/*.rules` of the package). Out: one module per file,
`rules/generated/<stem>.py` (or `DIR/<stem>.py` with `--out`); with `--check`, nothing is
written and the exit status is 1 when a module is stale or missing, naming each. A broken rules
file prints its diagnostics to stderr and exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .paths import GENERATED_DIR, in_package, package_rules_files


def _target(path: Path, out: str | None) -> Path | None:
    if out is not None:
        return Path(out) / f"{path.stem}.py"
    if in_package(path):
        return GENERATED_DIR / f"{path.stem}.py"
    return None


def _show(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def run_gen(paths: list[str], out: str | None = None, check: bool = False) -> int:
    """Generate (or with `check`, verify) the matcher modules; the exit status."""
    from rulegrad.dsl.errors import RulesError

    from . import compile_file

    files = [Path(p) for p in paths] if paths else package_rules_files()
    status, stale = 0, []
    for path in files:
        if not path.is_file():
            print(f"{path}: error: no such rules file", file=sys.stderr)
            status = 2
            continue
        target = _target(path, out)
        if target is None:
            print(f"{path}: error: not in rulegrad's rules/ folder; say where the module goes "
                  "with --out DIR", file=sys.stderr)
            status = 2
            continue
        try:
            text = compile_file(path, target.parent)
        except RulesError as e:
            print(str(e), file=sys.stderr)
            status = 2
            continue
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if check:
            if current != text:
                state = "missing" if current is None else "stale"
                stale.append(f"{_show(target)} is {state} (from {_show(path)})")
            continue
        if current == text:
            print(f"unchanged {_show(target)}")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".py.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)  # atomic: an importer never sees half a module
        print(f"wrote {_show(target)}")
    for line in stale:
        print(line, file=sys.stderr)
    if stale:
        print("run `rulegrad gen` to regenerate", file=sys.stderr)
    return status or (1 if stale else 0)
