"""The limits `rulegrad check` runs under, in one place (the CLI reads them without importing z3).

- DEFAULT_RLIMIT: z3's resource limit per proof query, in z3's own count of work (not seconds),
  so that the same rule, seed and limits give the same verdict on any machine under any load;
  a rule's cases share RULE_RLIMIT_FACTOR times it.
- ABSTRACT_SHARE: a float query is first tried with its rounded operations abstracted
  (generator/fp_abstract.py), under 1/ABSTRACT_SHARE of its limit, then in full.
- HANG_SECONDS: CPU seconds one rule may take before it is an `error` (a helper that never
  returns); CPU time, not wall clock, so a loaded machine does not turn a slow rule into an
  error. A helper that blocks without using the CPU (a sleep, a read) is stopped after
  HANG_WALL_FACTOR times that in wall clock.
- MAX_ULP: the largest `# check: ulp N` honoured without `--max-ulp`: what the package's own
  rules need (rangeify.rules' float sums, 8); a larger tolerance would hide a wrong constant
  (8 ulp of float16 is already 0.8%). A rule asking for more is checked at the cap, and says so.
"""

DEFAULT_RLIMIT = 10_000_000
RULE_RLIMIT_FACTOR = 5
ABSTRACT_SHARE = 10
HANG_SECONDS = 60.0
HANG_WALL_FACTOR = 10
MAX_ULP = 8
