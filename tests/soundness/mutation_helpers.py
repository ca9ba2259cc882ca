"""Helpers of mutations.rules: the real constant folder, re-exported.

(`use rulegrad.rules.symbolic_helpers: ...` does not parse: `rules` is a keyword of the
language, so the fixture names a module beside itself instead.)
"""

from rulegrad.rules.symbolic_helpers import fold_alu

__all__ = ["fold_alu"]
