"""How much of the two schedulers is Python behind rules (issue 35's targets).

    python bench/rule_shares.py

Across the scheduler's rule files (rangeify.rules, kernel.rules, kernelize.rules):

- the share of rules whose right-hand side is a bare helper call (`SINK as s -> walk(ctx, s)`:
  the rule says nothing of what changes; target <= 25%);
- the non-blank lines of the Python modules those files name with `use` or `analysis`, beside
  the rules (a leading dot), `symbolic_helpers` aside: the algebra shares it (target <= 500).
  Modules of the runtime they name (the IR: `runtime.view`, `runtime.ops`, ...) are listed but
  not counted; scheduler code moved there would have to be counted by hand;
- the longest rule texts of every rules file of the package (rules/*.rules): a rule's, a
  definition's (`def`) or a context method's text on one line, comments and runs of blanks
  dropped (dsl/parser.py's `one_line`), label or name included (target <= 200 characters).

The numbers are printed per file and in total; the exit status is 0 (a measure, not a gate:
tests/test_pipeline.py holds the targets).
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
MAX_TEXT = 200  # characters of one rule's text, on one line


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


def rule_texts(path: Path) -> list[tuple[int, str, str]]:
    """(length, what, text) of every rule, definition and context method of a rules file: the
    text on one line (comments and runs of blanks dropped), longest first."""
    from rulegrad.dsl import ast as A
    from rulegrad.dsl import load
    from rulegrad.dsl.parser import one_line

    f = load(str(path)).file
    lines = f.source.split("\n")

    def text(span: A.Span) -> str:  # the source a span covers, on one line
        part = lines[span.line - 1:span.end_line]
        part[-1] = part[-1][:span.end_col - 1]
        part[0] = part[0][span.col - 1:]
        return one_line("\n".join(part))

    out = [(len(r.text), f"rule {r.name}", r.text) for rs in f.rulesets for term in rs.terms
           if isinstance(term, A.RuleBlock) for r in term.rules]
    out += [(len(d.text), f"def {d.name}", d.text) for d in f.defs]
    for c in f.contexts:
        out += [(len(t), f"{c.name}.{m.name}", t) for m in c.methods for t in [text(m.span)]]
    return sorted(out, key=lambda x: -x[0])


def helper_lines() -> dict[str, int]:
    """The counted helper modules of the scheduler's rule files -> their non-blank lines."""
    modules = set().union(*(used_modules(stem) for stem in FILES))
    return {m: nonblank_lines(RULES / f"{m[1:]}.py") for m in sorted(modules)
            if m.startswith(".") and m not in NOT_COUNTED}


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
    counted = helper_lines()
    for module in sorted(modules):
        if module in counted:
            print(f"  {module:34s} {counted[module]:5d}")
        else:
            why = "shared with the algebra" if module in NOT_COUNTED else "not counted"
            print(f"  {module:34s}     - ({why})")
    print(f"helper modules: {sum(counted.values())} non-blank lines (target <= {MAX_LINES})")
    texts = sorted(((n, f"{path.name}: {what}") for path in sorted(RULES.glob("*.rules"))
                    for n, what, _ in rule_texts(path)), reverse=True)
    over = [t for t in texts if t[0] > MAX_TEXT]
    print(f"rule texts: {len(over)} of {len(texts)} over {MAX_TEXT} characters; the longest:")
    for n, what in texts[:8]:
        print(f"  {n:5d}  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
