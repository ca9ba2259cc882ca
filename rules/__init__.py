"""rulegrad.rules: the rule passes (`*.rules`), their Python helpers, and the loader.

    from rulegrad.rules import matcher
    sym = matcher("symbolic", "sym")           # the matcher for rule set `sym` of symbolic.rules
    graph_rewrite(sink, sym)

In: a rules file's stem and a rule-set name. Out: the `RuleMatcher` from the committed
generated module `rules/generated/<stem>.py`, or, with `RULEGRAD_MATCHER=interp` in the
environment, the interpreted matcher built from the `.rules` source (the oracle). A generated
module that is missing, or older than its `.rules` file, is an error that says to run
`rulegrad gen`: running stale rules silently would be worse.
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from rulegrad.runtime.env import env_get

if TYPE_CHECKING:
    from rulegrad.runtime.matcher import RuleMatcher
    from rulegrad.runtime.pipeline import Pipeline

RULES_DIR = Path(__file__).resolve().parent
# (mode, stem) -> (the file's matchers by set name, its pipelines by name)
_cache: dict[tuple[str, str], tuple[dict[str, RuleMatcher], dict[str, Pipeline]]] = {}


class MatcherLoadError(RuntimeError):
    """The generated matchers cannot be used (missing or stale), or no such rule set."""


def mode() -> str:
    """`generated` (the default) or `interp`, from RULEGRAD_MATCHER."""
    value = env_get("RULEGRAD_MATCHER") or "generated"  # read per schedule: the fast read
    if value not in ("generated", "interp"):
        raise MatcherLoadError(f"RULEGRAD_MATCHER={value!r}: expected 'generated' or 'interp'")
    return value


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _generated(stem: str) -> tuple[dict[str, RuleMatcher], dict[str, Pipeline]]:
    source = RULES_DIR / f"{stem}.rules"
    try:
        mod = importlib.import_module(f"rulegrad.rules.generated.{stem}")
    except ModuleNotFoundError as e:
        if e.name != f"rulegrad.rules.generated.{stem}":
            raise
        what = f"rules/{stem}.rules" if source.is_file() else f"a rules file {stem!r}"
        raise MatcherLoadError(f"no generated matchers for {what}: run `rulegrad gen`") from None
    # the module's stamp must match every rules file it was generated from
    for rel, sha in ((mod.SOURCE, mod.SOURCE_SHA256), *mod.DEPENDENCIES):
        path = RULES_DIR.parent / rel
        if not path.is_file():
            raise MatcherLoadError(f"rules/generated/{stem}.py is stale: it was generated from "
                                   f"{rel}, which is gone: run `rulegrad gen`")
        if _sha(path) != sha:
            raise MatcherLoadError(f"rules/generated/{stem}.py is stale ({rel} changed since it "
                                   "was generated): run `rulegrad gen`")
    return mod.MATCHERS, mod.PIPELINES


def _interpreted(stem: str) -> tuple[dict[str, RuleMatcher], dict[str, Pipeline]]:
    from rulegrad.dsl import load
    from rulegrad.generator.interp import interpret_all

    source = RULES_DIR / f"{stem}.rules"
    if not source.is_file():
        raise MatcherLoadError(f"no rules file rules/{stem}.rules")
    return interpret_all(load(str(source)))


def _load(file_stem: str) -> tuple[dict[str, RuleMatcher], dict[str, Pipeline]]:
    key = (mode(), file_stem)
    if key not in _cache:
        _cache[key] = _interpreted(file_stem) if key[0] == "interp" else _generated(file_stem)
    return _cache[key]


def matchers(file_stem: str) -> dict[str, RuleMatcher]:
    """Every rule set of `rules/<file_stem>.rules`, by name."""
    return _load(file_stem)[0]


def pipeline(file_stem: str, name: str) -> Pipeline:
    """Pipeline `name` declared in `rules/<file_stem>.rules` (runtime/pipeline.py runs it)."""
    found = _load(file_stem)[1]
    if name not in found:
        raise MatcherLoadError(f"rules/{file_stem}.rules has no pipeline {name!r}; "
                               f"it has: {', '.join(found) or 'none'}")
    return found[name]


def matcher(file_stem: str, set_name: str) -> RuleMatcher:
    """The matcher of rule set `set_name` in `rules/<file_stem>.rules`."""
    found = matchers(file_stem)
    if set_name not in found:
        raise MatcherLoadError(f"rules/{file_stem}.rules has no rule set {set_name!r}; "
                               f"it has: {', '.join(found)}")
    return found[set_name]


load = matcher  # `rulegrad.rules.load("symbolic", "sym")` reads as well
