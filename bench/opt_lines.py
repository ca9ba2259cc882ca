"""The kernel optimizer's size against issue 32's budget: non-blank lines of backends/ (Python,
C and headers), rules/opt*.rules, and the helper modules those rule files `use`.

    python bench/opt_lines.py [--check]

Prints each file's count, the total and the budget (3,600 lines); `--check` exits 1 when the
total is over it. A signal of complexity to watch, never a target to golf.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 3600
# `use .opt_helpers: a, b` (a module of rules/, relative to the rules file)
_USE = re.compile(r"^\s*use\s+\.(\w+)\s*:", re.MULTILINE)


def nonblank(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def counted_files(root: Path = ROOT) -> list[Path]:
    """backends/'s .py, .c and .h files, rules/opt*.rules, and the modules those `use`."""
    files = sorted(p for p in (root / "backends").rglob("*")
                   if p.suffix in (".py", ".c", ".h") and "__pycache__" not in p.parts)
    rules = sorted((root / "rules").glob("opt*.rules"))
    used: list[Path] = []
    for r in rules:
        for name in _USE.findall(r.read_text()):
            module = root / "rules" / f"{name}.py"
            if module.exists() and module not in used:
                used.append(module)
    return files + rules + used


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when over the budget")
    args = parser.parse_args(argv)
    total = 0
    for path in counted_files():
        n = nonblank(path)
        total += n
        print(f"{n:6d}  {path.relative_to(ROOT)}")
    print(f"{total:6d}  total non-blank lines (budget {BUDGET:,}: "
          f"{'within' if total <= BUDGET else f'{total - BUDGET:,} over'})")
    return 1 if args.check and total > BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
