"""The errors that say the user's setup is wrong, not a program: shared by rulegrad's commands.

In: nothing. Out: the exception types a command reports as one worded line (exit 1) and a
fuzzer stops on at once: a RULEGRAD_* variable that is not a value it takes (a size, a count, a
backend, a scheduler, a flag: each error names the variable and what it takes), a missing C
compiler, an unusable kernel cache, stale generated matchers. Counted as a program's failure,
a bad variable made `rulegrad fuzz` report every program wrong.
"""

from __future__ import annotations


def setup_errors() -> tuple[type[Exception], ...]:
    from rulegrad.backends.c.errors import CacheError, CompilerNotFound
    from rulegrad.backends.c.flags import CFlagsError
    from rulegrad.rules import MatcherLoadError
    from rulegrad.runtime.env import EnvError
    from rulegrad.runtime.kernelize import SchedulerError  # (RULEGRAD_SCHEDULER's)

    return (CompilerNotFound, MatcherLoadError, EnvError, CacheError, CFlagsError,
            SchedulerError)
