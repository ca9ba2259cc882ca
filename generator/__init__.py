"""rulegrad.generator: `.rules` files -> Python matcher modules.

The phases, one module each (no phase reaches back into an earlier one):

    text --dsl.parser--> RulesFile --dsl.check--> CheckedFile
         --signatures.check_helper_calls--> (helper calls fit the helpers' signatures)
         --match_ir.lower--> MatchIR (per block of rules: per root op, a decision tree)
         --emit.module_model--> ModuleModel --templates/matcher.py.j2--> Python source

`contexts.py` prints the file's declared contexts and records as classes (the module holds
them; `interp.py` runs the same source). `interp.py` runs a CheckedFile directly (the oracle);
`cli.py` is `rulegrad gen`.
"""

from __future__ import annotations

from pathlib import Path

# The phases load on first use: every `rulegrad` command reads generator/limits.py for its
# options' defaults, and importing a submodule runs this file first; `emit` would pull in
# Jinja2 and the rule language's AST (~0.15 CPU-s of each CLI start) for commands that print
# no matcher (`cache`, `demo`, `fuzz`, `viz`). tests/test_latency.py checks the CLI start.


def __getattr__(name: str):
    if name == "lower":  # re-exported: the match IR of a rule set
        from .match_ir import lower

        return lower
    raise AttributeError(f"module 'rulegrad.generator' has no attribute {name!r}")


def compile_file(path: str | Path, out_dir: str | Path | None = None) -> str:
    """The generated module for one rules file (raises `RulesError` on a broken file).

    `out_dir` is where the module will be written; paths in it are relative to there."""
    from rulegrad.dsl.check import check
    from rulegrad.dsl.files import read_rules_file
    from rulegrad.dsl.parser import parse

    from .emit import module_model, render
    from .signatures import check_helper_calls

    text = read_rules_file(str(path))              # 0. a regular UTF-8 file (RulesFileError)
    tree = parse(text, str(path))                  # 1. text -> typed AST (syntax errors)
    checked = check(tree)                          # 2. names, arity, shadowing, helpers
    check_helper_calls(checked)                    # 3. helper calls fit their signatures
    model = module_model(checked, out_dir)         # 4. lowering to tries, every decision
    return render(model)                           # 5. the template prints it
