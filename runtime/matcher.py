"""The matcher object that generated and interpreted rule sets share, and its support code.

In: for one rule set, its rules' `RuleInfo`s and two dispatch tables from root op to a per-op
function, both produced by `rulegrad.generator` (the generated module, or the interpreter):

- `fast[op](n, ctx) -> UOp | None`: the rewrite of `n` by the first rule that fires, or None;
- `traced[op](n, ctx, stats) -> (UOp, rule index) | None`: the same, also naming the rule, and
  reporting each attempt to `stats` (`start(k) -> t0`, `stop(k, t0, result, n)`).

Out: a `RuleMatcher` with the interface the rewrite engine wants (`rewrite`,
`rewrite_with_rule`, `name`, `rules`), composable with `+` (first match wins, left to right).

Per-rule statistics (tinygrad's TRACK_MATCH_STATS): with `RULEGRAD_MATCH_STATS=1` in the
environment when a matcher is built, `rewrite` goes through the traced table and counts, per
rule, its attempts (structural test passed), matches and time; a table per matcher is printed
at exit. When the flag is off, `rewrite` is the fast table and nothing is counted.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from .dtype import DType, dtypes
from .ops import GroupOp, Ops
from .rewrite import RewriteNotReady, RuleInfo
from .uop import UOp

FastFn = Callable[[UOp, Any], "UOp | None"]
TracedFn = Callable[[UOp, Any, Any], "tuple[UOp, int] | None"]


# ---------------------------------------------------------------------- statistics
class _NoStats:
    """The stats sink used for `rewrite_with_rule` when statistics are off: records nothing."""

    @staticmethod
    def start(k: int) -> int:
        return 0

    @staticmethod
    def stop(k: int, t0: int, result: Any, n: UOp) -> None:
        return None


NO_STATS = _NoStats()


class MatchStats:
    """Per-rule counters of one matcher: attempts, matches, nanoseconds spent in guard + RHS."""

    def __init__(self, name: str, rules: tuple[RuleInfo, ...]):
        self.name, self.rules = name, rules
        self.attempts = [0] * len(rules)
        self.matches = [0] * len(rules)
        self.ns = [0] * len(rules)

    def start(self, k: int) -> int:
        self.attempts[k] += 1
        return time.perf_counter_ns()

    def stop(self, k: int, t0: int, result: Any, n: UOp) -> None:
        self.ns[k] += time.perf_counter_ns() - t0
        if result is not None and result is not n:
            self.matches[k] += 1


class _Offset:
    """A view of a composed matcher's stats for one of its parts (rule k -> k + offset)."""

    __slots__ = ("stats", "offset")

    def __init__(self, stats: Any, offset: int):
        self.stats, self.offset = stats, offset

    def start(self, k: int) -> int:
        return self.stats.start(k + self.offset)

    def stop(self, k: int, t0: int, result: Any, n: UOp) -> None:
        self.stats.stop(k + self.offset, t0, result, n)


_all_stats: list[MatchStats] = []


def stats_enabled() -> bool:
    from .env import env_flag

    return env_flag("RULEGRAD_MATCH_STATS")


def stats_table() -> str:
    """Every used matcher's per-rule statistics, one table per matcher, every rule listed (a
    rule with zero attempts is the first thing to look at when a rule does not fire)."""
    lines: list[str] = []
    for st in _all_stats:
        if not any(st.attempts):
            continue
        rows = range(len(st.rules))
        lines.append(f"match stats: {st.name}")
        lines.append(f"  {'rule':<28} {'location':<32} {'attempts':>9} {'matches':>8} {'ms':>9}")
        for i in rows:
            r = st.rules[i]
            lines.append(f"  {r.name:<28} {r.location:<32} {st.attempts[i]:>9} "
                         f"{st.matches[i]:>8} {st.ns[i] / 1e6:>9.3f}")
    return "\n".join(lines)


def _print_stats() -> None:
    tables = [st for st in _all_stats if any(st.attempts)]
    if not tables:
        return
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # rich is a dependency, but the table must never break an exit
        print(stats_table(), file=sys.stderr)
        return
    console = Console(file=sys.stderr)
    for st in tables:
        table = Table(title=f"match stats: {st.name}")
        for col, justify in (("rule", "left"), ("location", "left"), ("attempts", "right"),
                             ("matches", "right"), ("ms", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for i, r in enumerate(st.rules):
            table.add_row(r.name, r.location, str(st.attempts[i]), str(st.matches[i]),
                          f"{st.ns[i] / 1e6:.3f}")
        console.print(table)


_atexit_registered = False


def _register(stats: MatchStats) -> None:
    global _atexit_registered
    _all_stats.append(stats)
    if not _atexit_registered:
        atexit.register(_print_stats)
        _atexit_registered = True


# ---------------------------------------------------------------------- the matcher
def _chain_fast(fa: FastFn, fb: FastFn) -> FastFn:
    def both(n: UOp, ctx: Any) -> UOp | None:
        r = fa(n, ctx)
        return r if r is not None else fb(n, ctx)
    return both


def _shift_traced(f: TracedFn, offset: int) -> TracedFn:
    def shifted(n: UOp, ctx: Any, st: Any) -> tuple[UOp, int] | None:
        hit = f(n, ctx, _Offset(st, offset))
        return None if hit is None else (hit[0], hit[1] + offset)
    return shifted


def _chain_traced(fa: TracedFn, fb: TracedFn) -> TracedFn:
    def both(n: UOp, ctx: Any, st: Any) -> tuple[UOp, int] | None:
        hit = fa(n, ctx, st)
        return hit if hit is not None else fb(n, ctx, st)
    return both


class RuleMatcher:
    """A rule set ready for `graph_rewrite`: dispatch by root op to per-op functions."""

    def __init__(self, name: str, rules: tuple[RuleInfo, ...], fast: dict[Ops, FastFn],
                 traced: dict[Ops, TracedFn]):
        self.name, self.rules = name, rules
        self._fast, self._traced = fast, traced
        self.stats: MatchStats | None = None
        if stats_enabled():
            self.stats = MatchStats(name, rules)
            _register(self.stats)
            self.rewrite = self._rewrite_counted  # type: ignore[method-assign]

    def __repr__(self) -> str:
        return f"<RuleMatcher {self.name}: {len(self.rules)} rules>"

    def enable_stats(self) -> MatchStats:
        """Count per-rule attempts in `rewrite_with_rule` from now on (traces use it)."""
        if self.stats is None:
            self.stats = MatchStats(self.name, self.rules)
        return self.stats

    def rewrite(self, uop: UOp, ctx: Any = None) -> UOp | None:
        """The node the first applicable rule rewrites `uop` to, or None."""
        f = self._fast.get(uop.op)
        return None if f is None else f(uop, ctx)

    def _rewrite_counted(self, uop: UOp, ctx: Any = None) -> UOp | None:
        f = self._traced.get(uop.op)
        hit = None if f is None else f(uop, ctx, self.stats)
        return None if hit is None else hit[0]

    def rewrite_with_rule(self, uop: UOp, ctx: Any = None) -> tuple[UOp | None, RuleInfo | None]:
        """Like `rewrite`, and the RuleInfo of the rule that fired (for traces)."""
        f = self._traced.get(uop.op)
        hit = None if f is None else f(uop, ctx, self.stats or NO_STATS)
        return (None, None) if hit is None else (hit[0], self.rules[hit[1]])

    def __add__(self, other: RuleMatcher) -> RuleMatcher:
        """The rules of self, then those of other: the first that fires wins."""
        fast = dict(self._fast)
        for op, fb in other._fast.items():
            fast[op] = _chain_fast(fast[op], fb) if op in fast else fb
        traced = dict(self._traced)
        for op, tb in other._traced.items():
            tb = _shift_traced(tb, len(self.rules))
            traced[op] = _chain_traced(traced[op], tb) if op in traced else tb
        return RuleMatcher(f"{self.name}+{other.name}", self.rules + other.rules, fast, traced)


# ---------------------------------------------------------------------- rule-side support
def default_dtype(op: Ops, srcs: tuple[Any, ...]) -> DType:
    """The dtype of `OP(srcs...)` when a rule does not say: bool for comparisons, the value's
    dtype for WHERE, otherwise the first source's (void when there is none)."""
    if op in GroupOp.Comparison:
        return dtypes.bool
    if op is Ops.WHERE and len(srcs) == 3:
        return srcs[1].dtype
    return srcs[0].dtype if srcs else dtypes.void


def as_uop(n: UOp, value: Any) -> UOp | None:
    """A rule's result: a UOp as is, None as is, any other value as a constant like `n`.

    A tuple is also returned as is: a rule that gives one value per source (the gradient rules
    of rules/gradient.rules), called through `rewrite`, never by graph_rewrite."""
    if value is None or isinstance(value, (UOp, tuple)):
        return value
    return n.const_like(value)


def defer() -> Any:
    """The right-hand side `defer`: not ready, retry after the siblings."""
    raise RewriteNotReady


_helper_modules: dict[str, ModuleType] = {}


def load_helper_file(path: str | Path) -> ModuleType:
    """Import a helper `.py` file by path (for rules files outside the package), once."""
    real = os.path.realpath(path)
    mod = _helper_modules.get(real)
    if mod is None:
        name = "rulegrad_helpers_" + hashlib.sha256(real.encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, real)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load rule helpers from {real}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _helper_modules[real] = mod
    return mod


def helper_from(module_file: str, relpath: str, name: str) -> Any:
    """Helper `name` from the `.py` file at `relpath`, relative to the generated module."""
    return getattr(load_helper_file(Path(module_file).parent / relpath), name)


def import_helper(module: str, name: str) -> Any:
    """Helper `name` from an importable dotted module."""
    return getattr(importlib.import_module(module), name)
