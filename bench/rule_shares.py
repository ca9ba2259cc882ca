"""How much of the two schedulers is Python behind rules (issue 35's targets).

    python bench/rule_shares.py

Across the scheduler's rule files (rangeify.rules, kernel.rules, kernelize.rules):

- the share of rules whose right-hand side is a bare helper call (`SINK as s -> walk(ctx, s)`:
  the rule says nothing of what changes; target <= 25%);
- the non-blank lines of the Python modules those files name with `use` or `analysis`, beside
  the rules (a leading dot), `symbolic_helpers` aside: the algebra shares it (target <= 500).
  Modules of the runtime they name (the IR: `runtime.view`, `runtime.ops`, ...) are listed but
  not counted; scheduler code moved there would have to be counted by hand.

Both numbers are printed per file and in total; the exit status is 0 (a measure, not a gate).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
FILES = ("rangeify", "kernel", "kernelize")
NOT_COUNTED = {".symbolic_helpers"}  # the algebra's, shared with symbolic.rules
MAX_SHARE = 0.25
MAX_LINES = 500


def bare_helper_calls(stem: str) -> tuple[int, int, list[str]]:
    """(rules whose right-hand side is only a call of a `use` helper, rules, their names)."""
    from rulegrad.dsl import ast as A
    from rulegrad.dsl import load

    checked = load(str(RULES / f"{stem}.rules"))
    helpers = {name for use in checked.file.uses if not use.analysis for name in use.names
               if not name[0].isupper()}  # classes and constants build values, they walk nothing
    total, bare = 0, []
    for rs in checked.file.rulesets:
        for term in rs.terms:
            for rule in term.rules if isinstance(term, A.RuleBlock) else ():
                total += 1
                rhs = rule.rhs
                if isinstance(rhs, A.ECall) and isinstance(rhs.func, A.EName) and \
                        rhs.func.name in helpers:
                    bare.append(rule.name)
    return len(bare), total, bare


def used_modules(stem: str) -> set[str]:
    """The modules a rules file names with `use` or `analysis`."""
    from rulegrad.dsl import load

    return {use.module for use in load(str(RULES / f"{stem}.rules")).file.uses}


def nonblank_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def main() -> int:
    bare_all = total_all = 0
    modules: set[str] = set()
    for stem in FILES:
        bare, total, names = bare_helper_calls(stem)
        bare_all, total_all = bare_all + bare, total_all + total
        modules |= used_modules(stem)
        print(f"{stem + '.rules':18s} {bare:3d} of {total:3d} rules are a bare helper call"
              + (f": {', '.join(names)}" if names else ""))
    share = bare_all / max(total_all, 1)
    print(f"{'all':18s} {bare_all:3d} of {total_all:3d} = {share:.0%} (target <= "
          f"{MAX_SHARE:.0%})")
    lines = raw = 0
    for module in sorted(modules):
        if not module.startswith(".") or module in NOT_COUNTED:
            why = "shared with the algebra" if module in NOT_COUNTED else "not counted"
            print(f"  {module:34s}     - ({why})")
            continue
        path = RULES / f"{module[1:]}.py"
        n, all_lines = nonblank_lines(path), len(path.read_text().splitlines())
        lines, raw = lines + n, raw + all_lines
        print(f"  {module:34s} {n:5d} ({all_lines} with blank lines)")
    print(f"helper modules: {lines} non-blank lines (target <= {MAX_LINES}); {raw} with blank "
          "lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
