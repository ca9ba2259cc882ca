"""`rulegrad gen [PATH...] [--out DIR] [--check]`: regenerate matcher modules.

In: `.rules` paths (default: every `rules/*.rules` of the package). Out: one module per file,
`rules/generated/<stem>.py` (or `DIR/<stem>.py` with `--out`); with `--check`, nothing is
written and the exit status is 1 when a module is stale or missing, naming each. A broken rules
file prints its diagnostics to stderr and exits 2.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
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


def _write_atomic(target: Path, text: str) -> None:
    """Write through a temporary file of a unique name in the same folder, then rename: an
    importer never sees half a module, and two `gen` runs at once never share a temporary."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}-", suffix=".py.tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a module is read by everyone
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
        except OSError as e:  # not a readable UTF-8 regular file (dsl/files.py says why)
            print(f"{path}: error: {e}" if not str(e).startswith(str(path)) else str(e),
                  file=sys.stderr)
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
        _write_atomic(target, text)
        print(f"wrote {_show(target)}")
    for line in stale:
        print(line, file=sys.stderr)
    if stale:
        print("run `rulegrad gen` to regenerate", file=sys.stderr)
    return status or (1 if stale else 0)
