"""The matcher object that generated and interpreted rule sets share, and its support code.

In: for one rule set (or one block of it), its rules' `RuleInfo`s and a dispatch table from root
op to a per-op function, produced by `rulegrad.generator` (the generated module, or the
interpreter): `table[op](n, ctx) -> (UOp, RuleInfo) | None`, the rewrite of `n` by the first rule
that fires and that rule, or None.

Out: a `RuleMatcher` with the interface the rewrite engine wants (`rewrite`, `rewrite_with_rule`,
`name`, `rules`, and `table` for the engine's fast path), composable with `+` / `compose`
(first match wins, left to right).

Per-rule statistics (tinygrad's TRACK_MATCH_STATS): with `RULEGRAD_MATCH_STATS=1` in the
environment when a rules module is imported, `match_stats` gives each block a `MatchStats` and
the matching code counts, per rule, its attempts (structural test passed) in place; matches are
counted as they are returned. A table per block is printed at exit. A generated module's
counting lines are comments (`COUNT_MARK`), so they cost nothing while statistics are off; when
a block's counting is switched on, `count_attempts` gives the module's functions the code of
the same source with those lines in force.
"""

from __future__ import annotations
import __future__

import atexit
import hashlib
import importlib
import importlib.util
import linecache
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import Any

from .dtype import DType, dtypes
from .ops import GroupOp, Ops
from .rewrite import RewriteNotReady, RuleInfo
from .uop import UOp

MatchFn = Callable[[UOp, Any], Any]  # (n, ctx) -> (UOp, RuleInfo) | None


# ---------------------------------------------------------------------- statistics
class MatchStats:
    """Per-rule counters of one block of rules: attempts (the structural test passed, counted
    by the matching code) and matches (counted by `RuleMatcher.rewrite`)."""

    def __init__(self, name: str, rules: tuple[RuleInfo, ...]):
        self.name, self.rules = name, rules
        self.attempts = [0] * len(rules)
        self.matches = [0] * len(rules)


_all_stats: list[MatchStats] = []
# where a block's counters live: (namespace, variable, block name, its rules); the generated
# code reads the variable, so setting it switches counting on
Home = tuple[dict, str, str, tuple[RuleInfo, ...]]
_stats_of_rule: dict[int, tuple[MatchStats, int]] = {}  # id(RuleInfo) -> its counters


def stats_enabled() -> bool:
    from .env import env_flag

    return env_flag("RULEGRAD_MATCH_STATS")


def match_stats(name: str, rules: tuple[RuleInfo, ...]) -> MatchStats | None:
    """The counters of one block of rules, or None when statistics are off."""
    if not stats_enabled():
        return None
    st = MatchStats(name, rules)
    for k, r in enumerate(rules):
        _stats_of_rule[id(r)] = (st, k)
    _register(st)
    return st


def _enable(home: Home) -> MatchStats:
    """Switch counting on for one block from now on (a trace asks, whatever the environment)."""
    space, var, name, rules = home
    st = space[var]
    if st is None:
        st = space[var] = MatchStats(name, rules)
        for k, r in enumerate(rules):
            _stats_of_rule[id(r)] = (st, k)
        count_attempts(space)
    return st


# the prefix of a generated line that counts an attempt: `#+ if _x_st: _x_st.attempts[3] += 1`
COUNT_MARK = "#+ "
_COUNTING_LINE = re.compile(rf"^(\s*){re.escape(COUNT_MARK)}", re.M)
# the name under which a loader that runs a generated module from a text, not from its file,
# leaves that text in the module (generator/user.py): the source `count_attempts` compiles
RAN_FROM = "__rulegrad_ran_from__"
# a generated module's (file, source) -> its functions' code as generated and with the
# counting lines in force, by (name, first line)
_counting_codes: dict[tuple[str, str], tuple[dict[tuple[str, int], CodeType],
                                             dict[tuple[str, int], CodeType]]] = {}


def _functions_of(module_code: CodeType) -> dict[tuple[str, int], CodeType]:
    return {(c.co_name, c.co_firstlineno): c for c in module_code.co_consts
            if isinstance(c, CodeType)}


def count_attempts(space: dict) -> None:
    """Give the functions of the generated module `space` (its globals) the code that counts
    attempts: its own source with the `COUNT_MARK` lines in force (each tests its block's
    counters, None while that block is not counted). The function objects stay, so every table
    and composed matcher holding them counts from now on. A namespace that is not a generated
    module (the interpreter's) is left alone; so is a function that already counts."""
    path = space.get("__file__")
    if not isinstance(path, str) or not path.endswith(".py"):
        return
    funcs = [f for f in list(space.values())
             if isinstance(f, FunctionType) and f.__code__.co_filename == path]
    if not funcs:
        return
    # the source the module ran from: the text a loader of generated code left in it
    # (generator/user.py runs a user's module from the text it checked, and the module of an
    # edited rules file, written to the same path, from its new text: the earlier module, still
    # a caller's, ran from the earlier text, which neither the file nor linecache holds now),
    # else its file
    text = space.get(RAN_FROM)
    if not isinstance(text, str):
        text = "".join(linecache.getlines(path, space))
    codes = _counting_codes.get((path, text))
    if codes is None:
        # compiled with the module's own __future__ flags, not this module's
        flags = funcs[0].__code__.co_flags & _FUTURE_FLAGS
        codes = _counting_codes[path, text] = tuple(  # type: ignore[assignment]
            _functions_of(compile(t, path, "exec", flags, dont_inherit=True))
            for t in (text, _COUNTING_LINE.sub(r"\1", text)))
    plain, counting = codes
    for f in funcs:
        key = (f.__code__.co_name, f.__code__.co_firstlineno)
        if f.__code__ == counting.get(key):
            continue
        if f.__code__ != plain.get(key):  # (the file was written again since its import)
            raise RuntimeError(f"{path} is not the source its module ran from: its match "
                               "statistics need a new process")
        f.__code__ = counting[key]


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


class CombinedStats:
    """The counters of a composed matcher: its blocks' counters, end to end, as lists."""

    def __init__(self, name: str, parts: list[MatchStats]):
        self.name, self.parts = name, parts
        self.rules = tuple(r for p in parts for r in p.rules)

    @property
    def attempts(self) -> list[int]:
        return [a for p in self.parts for a in p.attempts]

    @property
    def matches(self) -> list[int]:
        return [m for p in self.parts for m in p.matches]


def _count_match(rule: RuleInfo) -> None:
    found = _stats_of_rule.get(id(rule))
    if found is not None:
        found[0].matches[found[1]] += 1


def stats_table() -> str:
    """Every block's per-rule statistics, one table per block (rules that were tried)."""
    lines: list[str] = []
    for st in _all_stats:
        if not any(st.attempts):
            continue
        rows = range(len(st.rules))  # every rule: one never tried is the first thing to look at
        lines.append(f"match stats: {st.name}")
        lines.append(f"  {'rule':<28} {'location':<32} {'attempts':>9} {'matches':>8}")
        for i in rows:
            r = st.rules[i]
            lines.append(f"  {r.name:<28} {r.location:<32} {st.attempts[i]:>9} "
                         f"{st.matches[i]:>8}")
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
                             ("matches", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for i, r in enumerate(st.rules):
            table.add_row(r.name, r.location, str(st.attempts[i]), str(st.matches[i]))
        console.print(table)


_atexit_registered = False


def _register(stats: MatchStats) -> None:
    global _atexit_registered
    _all_stats.append(stats)
    if not _atexit_registered:
        atexit.register(_print_stats)
        _atexit_registered = True


# ---------------------------------------------------------------------- the matcher
def _chain(fa: MatchFn, fb: MatchFn) -> MatchFn:
    def both(n: UOp, ctx: Any) -> Any:
        hit = fa(n, ctx)
        return hit if hit is not None else fb(n, ctx)
    return both


def _no_rule(n: UOp, ctx: Any) -> None:
    return None


_EVERY_OP = tuple(Ops)  # (iterating the enum itself costs a generator step per member)


def _fast_rewrite(table: dict[Ops, MatchFn]) -> Callable[..., UOp | None]:
    # `RuleMatcher.rewrite` without attribute lookups (it runs once per node of a graph), over
    # a table with every op (one without rules has `_no_rule`): a subscript, no call of `get`
    # and no test of what it found
    every = {op: table.get(op, _no_rule) for op in _EVERY_OP}

    def rewrite(uop: UOp, ctx: Any = None) -> UOp | None:
        hit = every[uop.op](uop, ctx)
        if hit is not None:
            return hit[0]
        return None
    return rewrite


class RuleMatcher:
    """A rule set ready for `graph_rewrite`: dispatch by root op to per-op functions."""

    def __init__(self, name: str, rules: tuple[RuleInfo, ...], table: dict[Ops, MatchFn],
                 over: bool = False, home: tuple[dict, str] | None = None,
                 homes: tuple[Home, ...] | None = None):
        self.name, self.rules = name, rules
        self._table = table
        # where each block's counters live (`home`: this block's namespace and variable)
        self.homes: tuple[Home, ...] = homes if homes is not None else \
            ((home[0], home[1], name, rules),) if home is not None else ()
        # a generated block whose functions first try the rules before it in its set: `compose`
        # puts them in place of the earlier functions instead of chaining after them
        self.over = over
        self.counting = stats_enabled()  # matches are counted in `rewrite`, not in the table
        if home is not None and home[0][home[1]] is not None:  # counted from its import on
            count_attempts(home[0])
        # (not counting, the first `rewrite` puts the fast one in its place)

    @property
    def table(self) -> dict[Ops, MatchFn] | None:
        """op -> function, for an engine that calls them directly (None while counting)."""
        return None if self.counting else self._table

    def __repr__(self) -> str:
        return f"<RuleMatcher {self.name}: {len(self.rules)} rules>"

    @property
    def stats(self) -> CombinedStats | None:
        """Per-rule attempts and matches, in the order of `rules` (None unless counting)."""
        parts = [space[var] for space, var, _, _ in self.homes]
        if not parts or any(st is None for st in parts):
            return None
        return CombinedStats(self.name, parts)

    def enable_stats(self) -> CombinedStats:
        """Count per-rule attempts (and, in `rewrite_with_rule`, matches) from now on."""
        return CombinedStats(self.name, [_enable(h) for h in self.homes])

    def rewrite(self, uop: UOp, ctx: Any = None) -> UOp | None:
        """The node the first applicable rule rewrites `uop` to, or None."""
        if not self.counting:
            # A process loads every rule set of a file at once (a first tiny add: 48) and calls
            # few of them (the engine mostly reads `table`): each one's table of every op is
            # made at its first call, not when it is loaded. Made once: a caller that bound
            # `m.rewrite` before that first call (`rw = m.rewrite; for n in g: rw(n)`) keeps
            # calling this method, which then finds the table made, not a new one per node
            fast = self.__dict__.get("rewrite")
            if fast is None:
                fast = self.rewrite = _fast_rewrite(self._table)  # type: ignore[method-assign]
            return fast(uop, ctx)
        f = self._table.get(uop.op)
        if f is None:
            return None
        hit = f(uop, ctx)
        if hit is None:
            return None
        _count_match(hit[1])
        return hit[0]

    def rewrite_with_rule(self, uop: UOp, ctx: Any = None) -> tuple[UOp | None, RuleInfo | None]:
        """Like `rewrite`, and the RuleInfo of the rule that fired (for traces)."""
        f = self._table.get(uop.op)
        hit = None if f is None else f(uop, ctx)
        if hit is None:
            return None, None
        _count_match(hit[1])  # a trace (or a budget's diagnosis): firings are few
        return hit

    def __add__(self, other: RuleMatcher) -> RuleMatcher:
        """The rules of self, then those of other: the first that fires wins."""
        return compose(f"{self.name}+{other.name}", self, other)


def compose(name: str, *parts: RuleMatcher) -> RuleMatcher:
    """One matcher named `name` trying `parts` in order (the rule set `a + {...} + b`)."""
    table: dict[Ops, MatchFn] = {}
    for part in parts:
        for op, f in part._table.items():
            table[op] = _chain(table[op], f) if op in table and not part.over else f
    return RuleMatcher(name, tuple(r for p in parts for r in p.rules), table,
                       homes=tuple(h for p in parts for h in p.homes))


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
    of rules/gradient.rules), called through `rewrite`, never by graph_rewrite; and so is a dict,
    a gradient rule's {node below: gradient} (runtime/autograd.py)."""
    if value is None or isinstance(value, (UOp, tuple, dict)):
        return value
    return n.const_like(value)


def defer() -> Any:
    """The right-hand side `defer`: not ready, retry after the siblings."""
    raise RewriteNotReady


_helper_modules: dict[tuple[str, str], ModuleType] = {}


def load_helper_file(path: str | Path) -> ModuleType:
    """Import a helper `.py` file by path (for rules files outside the package), once per
    content: a helper edited since is imported again (the rules that call it, and the check's
    verdict on them, are about what the file says now)."""
    real = os.path.realpath(path)
    data = Path(real).read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:16]
    mod = _helper_modules.get((real, digest))
    if mod is None:
        name = f"rulegrad_helpers_{hashlib.sha256(real.encode()).hexdigest()[:12]}_{digest}"
        spec = importlib.util.spec_from_file_location(name, real)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load rule helpers from {real}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _helper_modules[(real, digest)] = mod
    return mod


def helper_from(module_file: str, relpath: str, name: str) -> Any:
    """Helper `name` from the `.py` file at `relpath`, relative to the generated module."""
    return getattr(load_helper_file(Path(module_file).parent / relpath), name)


def import_helper(module: str, name: str) -> Any:
    """Helper `name` from an importable dotted module."""
    return getattr(importlib.import_module(module), name)
