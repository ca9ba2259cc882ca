"""The verdicts a planted rule must get from `rulegrad check`'s example path: a wrong rule is
refuted with a replayable counterexample, its sound original passes on enough examples (shared
by the instance-family tests: views and sharded tensors, kernel-level nodes)."""

from __future__ import annotations


def assert_refuted(r) -> None:
    assert r.verdict == "refuted" and r.method == "examples", r.line()
    assert r.counterexample and "rewritten to:" in r.counterexample


def assert_passes(r) -> None:
    assert r.verdict == "passed" and r.examples >= 50, f"{r.line()}\n{r.counterexample}"


def write_rules(folder, helpers: str, use: str, rules: dict[str, str]):
    """A rules file of `rules` (name -> rule text) in one set, with `use` naming the helper
    module `helpers` (its source, written beside it as h58_helpers.py); the file's path."""
    import textwrap

    (folder / "h58_helpers.py").write_text(textwrap.dedent(helpers).lstrip("\n"))
    body = "".join(f"  {name}: {text}\n" for name, text in rules.items())
    path = folder / "r.rules"
    path.write_text(f"{use}\n\nrules r = {{\n{body}}}\n")
    return path


def planted_verdicts(folder, helpers: str, use: str, rules: dict[str, str], seed: int) -> dict:
    """`rulegrad check`'s report per rule name for `rules` (`write_rules`) at `seed`."""
    from rulegrad.generator.soundness import check_paths

    path = write_rules(folder, helpers, use, rules)
    return {r.rule.name: r for r in check_paths([str(path)], seed=seed).rules}
