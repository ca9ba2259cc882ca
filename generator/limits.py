"""The limits `rulegrad check` runs under, in one place (the CLI reads them without importing z3).

- DEFAULT_RLIMIT: z3's resource limit per proof query, in z3's own count of work (not seconds),
  so that the same rule, seed and limits give the same verdict on any machine under any load;
  a rule's cases share RULE_RLIMIT_FACTOR times it.
- HANG_SECONDS: wall clock one rule may take before it is an `error` (a helper that never
  returns). It only bounds hangs: no verdict but that error depends on it.
"""

DEFAULT_RLIMIT = 10_000_000
RULE_RLIMIT_FACTOR = 5
HANG_SECONDS = 120.0
