"""`rulegrad check`: prove or property-test that every rule preserves meaning.

In: `.rules` paths or folders of them (default: every `rules/*.rules` of the package), an
example count, a seed, optionally one rule name. Out: one line per rule (name, `file:line`,
method, verdict), the counterexample under each refuted rule, the loops found between rules of
a set, then totals per verdict and per method. The exit status (`EXIT_*`): 1 when a rule is
refuted or a loop is confirmed; 2 when a rules file does not load (its diagnostics are
printed); 3 when a rule is `unknown`, `unchecked` or `error` (nothing showed it sound;
`--allow-unknown` makes that 0); else 0.

Equal means identical bits in both methods (NaN equals NaN, -0.0 is not 0.0); a rule marked
`# check: ulp N` (on its line, above it, or on its set's line) may differ by N units in the last
place, and its verdict says so; one marked `# check: sum` (a float sum rewritten) by the
reduction contract, 2·n·u·sum |terms| per output of a sum of n terms. A rule whose guard,
right side or helper raises, exits or hangs (past HANG_SECONDS of CPU time) gets the verdict
`error`, naming what happened; the run goes on.

The phases, one module each:
- classify (here): a rule marked `# check: structural` (see `structural_rules`) gets the
  pass-differential verdict of passdiff.py: the fuzzer programs on which it fired, each pass
  checked against the oracle (`unknown` when no program fires it); a rule marked
  `# check: unreachable` (one that reports a bug in its set by raising) must fire on none of
  those programs; every other rule is first given to z3;
- smt.py: integer/index/bool/float arithmetic rules, proved or refuted with z3 (a timeout is
  `unknown`, never a pass); what it cannot translate (helper calls, tensor ops) falls through;
- instances.py + examples.py: draw instances of the left side (scalar index math, tensor
  graphs with views, sharded tensors over 2-3 devices, an INDEX of a tensor graph read at drawn
  in-range RANGE values, or a kernel's REDUCE), rewrite with the rule alone, compare both sides
  with the numpy oracle (the kernel interpreter for a kernel's value); a z3 `unknown` also
  runs examples, which may still refute it, but never turn it into a pass; a z3
  counterexample is replayed the same way, so every refutation is confirmed (or flagged) by
  an independent evaluator;
- termination.py: static loop candidates per rule set, confirmed with the rewrite budget on
  instances; a loop the budget catches while examples run is reported too.

A rule that none of these can check (it needs the pass context, or its pattern holds
kernel-level nodes no instance can be drawn for, and it is not marked structural) gets the
verdict `unchecked`, so no rule escapes silently.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rulegrad.dsl import ast as A
from rulegrad.dsl.check import gradient_rules
from rulegrad.generator.paths import in_package, package_rules_files

from .limits import DEFAULT_RLIMIT, HANG_SECONDS, HANG_WALL_FACTOR, MAX_ULP
from .verdicts import VerdictFolder

# A mark is a comment of its own that ends its line (`...  # check: structural`), never words
# inside prose ("# rules that are not check: structural ...") nor inside a string literal
STRUCTURAL_MARK = re.compile(r"#\s*check:\s*structural\s*$")
ULP_MARK = re.compile(r"#\s*check:\s*ulp\s+(\d+)\s*$")
UNREACHABLE_MARK = re.compile(r"#\s*check:\s*unreachable\s*$")
# a float sum rewritten into another order or a product (rangeify's reduce_expand: x * n for n
# copies of x): its sides may differ as two orders of the sum may, by the reduction contract
# (docs/checker.md), 2·n·u·sum |terms|, which grows with n as no fixed number of ulps does
SUM_MARK = re.compile(r"#\s*check:\s*sum\s*$")
EXIT_OK, EXIT_REFUTED, EXIT_USAGE, EXIT_UNKNOWN = 0, 1, 2, 3
INCONCLUSIVE = ("unknown", "unchecked", "error")
BOUNDS_EXAMPLES = 10  # examples that test a z3 proof's vmin/vmax assumption on real graphs


@dataclass
class RuleReport:
    """The outcome for one rule."""

    rule: A.Rule
    location: str  # file:line
    method: str  # z3 | examples | gradient | kernel | structural | -
    verdict: str  # proved | passed | refuted | unknown | structural | unchecked | error
    detail: str = ""
    examples: int = 0
    counterexample: str | None = None
    seconds: float = 0.0
    ulp: int = 0  # the tolerance the rule's file states (`# check: ulp N`)
    sum: bool = False  # within the reduction contract instead (`# check: sum`)
    warning: str = ""  # located, e.g. a guard no value satisfies (the rule never fires)

    @property
    def verdict_text(self) -> str:
        if self.verdict == "passed":
            text = f"passed {self.examples} examples"
        elif self.verdict == "structural":
            text = "agreed (pass-differential)"
        else:
            text = self.verdict
        return text + (f" within {self.ulp} ulp" if self.ulp else "") + \
            (" within the sum contract" if self.sum else "")

    def line(self, name_width: int = 24, loc_width: int = 28) -> str:
        detail = f"  ({self.detail})" if self.detail else ""
        return (f"{self.rule.name:<{name_width}} {self.location:<{loc_width}} {self.method:<10} "
                f"{self.verdict_text}{detail}")


@dataclass
class LoopReport:
    ruleset: str
    first: str  # "name at file:line"
    second: str
    confirmed: bool
    detail: str = ""

    def line(self) -> str:
        pair = (f"{self.first} rewrites its own output" if self.first == self.second
                else f"{self.first} and {self.second} rewrite each other's output")
        status = "LOOP (the rewrite budget ran out)" if self.confirmed else "possible loop"
        return f"rule set {self.ruleset}: {pair}: {status}"


@dataclass
class CheckReport:
    rules: list[RuleReport] = field(default_factory=list)
    loops: list[LoopReport] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return any(r.verdict == "refuted" for r in self.rules) or any(
            lp.confirmed for lp in self.loops)

    @property
    def inconclusive(self) -> list[RuleReport]:
        """Rules nothing showed sound, and rules proved only because they never fire (a proof
        of a rule that cannot fire shows nothing; its author meant something else)."""
        return [r for r in self.rules if r.verdict in INCONCLUSIVE or r.warning]

    def exit_code(self, allow_unknown: bool = False) -> int:
        if self.failed:
            return EXIT_REFUTED
        if self.inconclusive and not allow_unknown:
            return EXIT_UNKNOWN
        return EXIT_OK

    def totals(self) -> tuple[Counter, Counter]:
        return Counter(r.verdict for r in self.rules), Counter(r.method for r in self.rules)

    def summary(self) -> str:
        verdicts, methods = self.totals()
        order = ["proved", "passed", "refuted", "unknown", "error", "structural", "unchecked"]
        v = ", ".join(f"{k} {verdicts[k]}" for k in order if verdicts[k])
        m = ", ".join(f"{k} {methods[k]}" for k in ("z3", "examples", "gradient", "kernel",
                                                     "structural", "-")
                      if methods[k])
        loops = sum(lp.confirmed for lp in self.loops)
        return (f"{len(self.rules)} rules in {self.seconds:.1f}s: {v}\n"
                f"by method: {m}\nloops: {loops} confirmed, "
                f"{len(self.loops) - loops} possible")


# ---------------------------------------------------------------------- inputs
def _location(rule: A.Rule) -> str:
    from .paths import display_path

    path = display_path(rule.span.path) if rule.span.line else rule.span.path
    return f"{path}:{rule.span.line}"


def marked_rules(rf: A.RulesFile, mark: re.Pattern) -> dict[tuple[int, int], re.Match]:
    """The (line, col) of every rule carrying `mark` in its file's text, with the match.

    The mark is a comment: at the end of a rule's line or on the comment lines just above it
    (that rule), or likewise at a `rules NAME = ...` line (every rule written in that set's
    blocks); the rule's own mark wins over its set's."""
    lines = rf.source.splitlines()

    def marked(line: int) -> re.Match | None:
        if 1 <= line <= len(lines) and (m := mark.search(comment_of(lines[line - 1]))):
            return m
        k = line - 1  # the comment block right above
        while 1 <= k <= len(lines) and lines[k - 1].lstrip().startswith("#"):
            if m := mark.search(lines[k - 1]):
                return m
            k -= 1
        return None

    out: dict[tuple[int, int], re.Match] = {}
    for rs in rf.rulesets:
        whole = marked(rs.span.line)
        for term in rs.terms:
            if isinstance(term, A.RuleBlock):
                for r in term.rules:
                    m = marked(r.span.line) or whole
                    if m is not None:
                        out[(r.span.line, r.span.col)] = m
    return out


def comment_of(line: str) -> str:
    """The comment that ends a line of rules text ('' if none): from the first `#` outside a
    string literal (`-> error "# check: unreachable"` is a message, not a mark)."""
    quote = None
    k = 0
    while k < len(line):
        c = line[k]
        if quote is not None:
            if c == "\\":
                k += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return line[k:]
        k += 1
    return ""


def structural_rules(rf: A.RulesFile) -> set[tuple[int, int]]:
    """The (line, col) of every rule marked `# check: structural` (see marked_rules)."""
    return set(marked_rules(rf, STRUCTURAL_MARK))


def ulp_rules(rf: A.RulesFile) -> dict[tuple[int, int], int]:
    """The tolerance in ulps of every rule marked `# check: ulp N` (see marked_rules)."""
    return {k: int(m.group(1)) for k, m in marked_rules(rf, ULP_MARK).items()}


def _mentions_bounds(e: Any) -> bool:
    """Whether a guard reads some node's vmin or vmax."""
    if isinstance(e, A.EAttr) and e.attr in ("vmin", "vmax"):
        return True
    if isinstance(e, tuple):
        return any(_mentions_bounds(x) for x in e)
    if hasattr(e, "__dataclass_fields__") and not isinstance(e, A.Span):
        return any(_mentions_bounds(getattr(e, f)) for f in e.__dataclass_fields__
                   if f != "span")
    return False


def _mentions_ctx(e: Any) -> bool:
    """Whether an expression tree uses the pass context."""
    if isinstance(e, A.EName):
        return e.name == "ctx"
    if isinstance(e, tuple):
        return any(_mentions_ctx(x) for x in e)
    if hasattr(e, "__dataclass_fields__") and not isinstance(e, A.Span):
        return any(_mentions_ctx(getattr(e, f)) for f in e.__dataclass_fields__ if f != "span")
    return False


def reports_a_bug(rule: A.Rule) -> bool:
    """Whether the rule's right side is an explicit `error "..."` (what `# check: unreachable`
    may be said of: a rule that changes no meaning, it stops the pass)."""
    return isinstance(rule.rhs, A.EError)


@dataclass
class RuleToCheck:
    """One rule written in a file, with what its file's marks say about checking it."""

    rule: A.Rule
    ruleset: A.CheckedRuleSet  # the largest set of the file holding it (for loop probes)
    checked: A.CheckedFile
    structural: bool
    ulp: int = 0
    unreachable: bool = False
    sum: bool = False


def rules_to_check(cf: A.CheckedFile, only: str | None) -> Iterator[RuleToCheck]:
    """The rules written in this file (not imported), each once, in source order."""
    marks, ulps = structural_rules(cf.file), ulp_rules(cf.file)
    unreachable = set(marked_rules(cf.file, UNREACHABLE_MARK))
    sums = set(marked_rules(cf.file, SUM_MARK))
    seen: dict[tuple[int, int], RuleToCheck] = {}
    path = cf.file.path
    for rs in cf.rulesets:
        for r in rs.rules:
            if r.span.path != path or (only is not None and r.name != only):
                continue
            key = (r.span.line, r.span.col)
            if key not in seen:
                seen[key] = RuleToCheck(r, rs, cf, key in marks, ulps.get(key, 0),
                                        key in unreachable, key in sums)
            elif len(rs.rules) > len(seen[key].ruleset.rules):
                seen[key].ruleset = rs
    yield from sorted(seen.values(), key=lambda it: (it.rule.span.line, it.rule.span.col))


# ---------------------------------------------------------------------- checking one rule
def _kept_shape(kept: dict) -> bool:
    """Whether a verdict folder's entry is one `Checker._kept` wrote: a report with the fields
    of `RuleReport` (its rule aside) and a list of (set, rule, message) loops. Any other (a
    truncated or edited entry, one of another version) is checked again, not read."""
    report, loops = kept.get("report"), kept.get("loops")
    if not isinstance(report, dict) or not isinstance(loops, list):
        return False
    fields = {f.name: f for f in dataclasses.fields(RuleReport) if f.name != "rule"}
    required = {name for name, f in fields.items()
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return set(report) <= set(fields) and required <= set(report) and all(
        isinstance(e, list) and len(e) == 3 and all(isinstance(v, str) for v in e) for e in loops)


class Checker:
    """Runs the checks of one rule at a time; holds the matchers built per rule set."""

    def __init__(self, examples: int = 100, seed: int = 0, rlimit: int = DEFAULT_RLIMIT,
                 hang_seconds: float = HANG_SECONDS, max_ulp: int = MAX_ULP,
                 verdicts: str | Path | None = None):
        self.examples, self.seed, self.rlimit = examples, seed, rlimit
        self.hang_seconds, self.max_ulp = hang_seconds, max_ulp
        # a folder other processes keep verdicts in (verdicts.py): a rule one of them checked
        # is read, not checked again
        self.verdicts = VerdictFolder(verdicts) if verdicts is not None else None
        self._recorded: set[str] | None = None  # rules in the recorded programs' passes
        self._helpers: dict[int, dict[str, Any]] = {}
        self._sets: dict[tuple[str, str], Any] = {}
        self.loops_seen: dict[tuple[str, str], str] = {}  # (set, message) from examples

    def helpers(self, cf: A.CheckedFile) -> dict[str, Any]:
        """The names a rule of `cf` may call: its helpers, its file's declared classes,
        definitions and pipelines (rangeify.rules' `simplified` simplifies through `simplify`)."""
        from .interp import interpret_with_names

        if id(cf) not in self._helpers:
            self._helpers[id(cf)] = interpret_with_names(cf)[2]
        return self._helpers[id(cf)]

    def set_matcher(self, item: RuleToCheck) -> Any:
        from .interp import interpret_ruleset

        key = (item.ruleset.path, item.ruleset.name)
        if key not in self._sets:
            self._sets[key] = interpret_ruleset(item.ruleset, self.helpers(item.checked))
        return self._sets[key]

    def one_rule_matcher(self, item: RuleToCheck) -> Any:
        from .interp import interpret_ruleset

        alone = A.CheckedRuleSet(item.rule.name, (item.rule,), item.ruleset.path)
        return interpret_ruleset(alone, self.helpers(item.checked))

    def check(self, item: RuleToCheck) -> RuleReport:
        """The rule's report: the one kept in `verdicts`, else checked (and kept there)."""
        if self.verdicts is None:
            return self._check_guarded(item)
        kept = self.verdicts.answer(self._verdict_key(item), lambda: self._kept(item),
                                    usable=_kept_shape)
        return self._from_kept(item, kept)  # type: ignore[return-value]

    def check_all(self, items: list[RuleToCheck],
                  progress: Callable[[int, int, str], None] | None = None) -> list[RuleReport]:
        """Every item's report, in order. With `verdicts`, the rules no other process is
        checking now come first, then the others' verdicts are waited for (and `progress`,
        which shows each rule as it is checked, is not called)."""
        if self.verdicts is None:
            out = []
            for k, item in enumerate(items):
                if progress is not None:
                    progress(k, len(items), item.rule.name)
                out.append(self._check_guarded(item))
            return out
        keys = [self._verdict_key(item) for item in items]
        by_key = dict(zip(keys, items, strict=True))
        kept = self.verdicts.answer_all(keys, lambda key: self._kept(by_key[key]),
                                        usable=_kept_shape)
        return [self._from_kept(item, kept[key])  # type: ignore[misc]
                for key, item in zip(keys, items, strict=True)]

    def _verdict_key(self, item: RuleToCheck) -> str:
        """What a rule's verdict depends on: its file's `verdict_key`, where and what the rule
        is, and this checker's settings."""
        assert self.verdicts is not None
        r = item.rule
        parts = [self.verdicts.file_key(r.span.path), r.name, r.span.line, r.span.col,
                 item.ruleset.name, item.structural, item.ulp, item.unreachable, item.sum,
                 self.examples, self.seed, self.rlimit, self.hang_seconds, self.max_ulp]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def _kept(self, item: RuleToCheck) -> dict:
        """The rule checked, as a verdict folder keeps it: the report's fields, and the loops
        its examples ran into (`loops_seen`, which the termination check reads)."""
        before = set(self.loops_seen)
        report = self._check_guarded(item)
        fields = {f.name: getattr(report, f.name) for f in dataclasses.fields(report)
                  if f.name != "rule"}
        loops = [[*key, msg] for key, msg in self.loops_seen.items() if key not in before]
        return {"report": fields, "loops": loops}

    def _from_kept(self, item: RuleToCheck, kept: dict) -> RuleReport | None:
        """The report a kept verdict holds, or None when it holds none (`_kept_shape`)."""
        if not _kept_shape(kept):
            return None
        for set_name, rule_name, msg in kept["loops"]:
            self.loops_seen.setdefault((set_name, rule_name), msg)
        return RuleReport(item.rule, **kept["report"])

    def _check_guarded(self, item: RuleToCheck) -> RuleReport:
        """The rule's report, checked now; whatever the rule's own code does (raise, exit,
        hang) is that rule's `error`, never the run's."""
        t0 = time.monotonic()
        notes = []
        if item.ulp > self.max_ulp:
            notes.append(f"asks for {item.ulp} ulp, checked within the cap of {self.max_ulp} "
                         "(--max-ulp raises it)")
            item = dataclasses.replace(item, ulp=self.max_ulp)
        try:
            with _hang_limit(self.hang_seconds):
                item, more = self._honoured_marks(item)
                notes += more
                report = self._check(item)
        except _Hung:
            report = RuleReport(item.rule, _location(item.rule), "-", "error",
                                f"did not finish in {self.hang_seconds:g}s of CPU time: a helper "
                                "or guard "
                                "that never returns?")
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the rule's code, not ours
            report = RuleReport(item.rule, _location(item.rule), "-", "error",
                                f"raised {type(exc).__name__}: {exc}")
        report.ulp, report.sum = item.ulp, item.sum
        report.detail = "; ".join([report.detail] * bool(report.detail) + notes)
        report.seconds = time.monotonic() - t0
        return report

    def _honoured_marks(self, item: RuleToCheck) -> tuple[RuleToCheck, list[str]]:
        """The item with the marks it may use, and a note per mark it may not.

        `structural` and `unreachable` are verdicts of the recorded programs (passdiff.py),
        which run the package's own pipelines: a rule in another file (a user's, even one named
        `rules/symbolic.rules`) runs in none of them, so its firings there are another rule's.
        `unreachable` is for a rule that reports a bug by raising (`-> error "..."`) and whose
        pass is recorded; any other rule so marked is checked like an unmarked one."""
        notes = []
        recorded = in_package(item.checked.file.path)
        if item.unreachable and not reports_a_bug(item.rule):
            notes.append("'# check: unreachable' ignored: the right-hand side is not an "
                         "`error`")
            item = dataclasses.replace(item, unreachable=False)
        if (item.unreachable or item.structural) and recorded:
            recorded = _location(item.rule) in self._recorded_locations()
        if (item.unreachable or item.structural) and not recorded:
            mark = "unreachable" if item.unreachable else "structural"
            notes.append(f"'# check: {mark}' ignored: its rule set runs in no recorded "
                         "program's pass")
            item = dataclasses.replace(item, unreachable=False, structural=False)
        return item, notes

    def _recorded_locations(self) -> set[str]:
        """The `file:line` of every rule in a pass the recorded programs ran."""
        from .passdiff import passdiff

        if self._recorded is None:
            runs = [run for p in passdiff(self.seed).programs for run in p.passes]
            self._recorded = {r.location for run in runs for r in getattr(run.matcher, "rules", ())}
        return self._recorded

    def _check(self, item: RuleToCheck) -> RuleReport:
        from .interp import all_helpers
        from .smt import prove_rule

        rule, loc = item.rule, _location(item.rule)
        if item.unreachable:
            return self._unreachable(item, loc)
        if item.structural:
            return self._pass_differential(item, loc)
        if self._is_gradient(item):  # a `# check: gradient` set: generator/gradcheck.py
            return self._gradient(item)
        helper_names = {h.name for h in all_helpers(item.checked)}
        proof = prove_rule(rule, helper_names, self.rlimit, item.ulp)
        if proof.verdict == "proved":
            if _mentions_bounds(rule.guard):
                # the proof trusts vmin/vmax to contain the value: test that on real graphs,
                # whose bounds runtime/uop.py derives
                ex = self._examples(item, min(self.examples, BOUNDS_EXAMPLES))
                if ex.verdict == "refuted":
                    return RuleReport(rule, loc, "examples", "refuted",
                                      "z3 proved it assuming vmin/vmax contain the value",
                                      ex.examples, ex.counterexample)
                if ex.verdict == "passed":
                    return RuleReport(rule, loc, "z3", "proved",
                                      f"{proof.detail}; bounds on {ex.examples} examples")
            warning = never_fires_warning(rule, proof.cases) if proof.never_fires else ""
            return RuleReport(rule, loc, "z3", "proved", proof.detail, warning=warning)
        if proof.verdict == "refuted":
            text = proof.counterexample or ""
            if proof.instance is not None:  # the same instance through matcher and oracle
                from .examples import replay

                text += "\n" + replay(self.one_rule_matcher(item), *proof.instance, item.ulp)
            return RuleReport(rule, loc, "z3", "refuted", "", counterexample=text)
        if _mentions_ctx(rule.guard) or _mentions_ctx(rule.rhs):
            verdict = "unknown" if proof.verdict == "unknown" else "unchecked"
            return RuleReport(rule, loc, "-", verdict, "uses the pass context")
        ex = self._examples(item)
        if proof.verdict == "unknown":  # examples may refute it, never prove it
            if ex.verdict == "refuted":
                return RuleReport(rule, loc, "examples", "refuted", proof.detail,
                                  ex.examples, ex.counterexample)
            extra = f"; {ex.examples} examples passed" if ex.verdict == "passed" else ""
            return RuleReport(rule, loc, "z3", "unknown", proof.detail + extra,
                              ex.examples if ex.verdict == "passed" else 0)
        if ex.verdict == "unchecked":
            return RuleReport(rule, loc, "-", "unchecked", ex.detail)
        if ex.verdict == "error":
            return RuleReport(rule, loc, "examples", "error", ex.detail, ex.examples,
                              ex.counterexample)
        return RuleReport(rule, loc, "examples", ex.verdict, ex.detail if ex.verdict != "passed"
                          else "", ex.examples, ex.counterexample)

    def _is_gradient(self, item: RuleToCheck) -> bool:
        rule = item.rule
        return (rule.span.line, rule.span.col) in gradient_rules(item.checked.file)

    def _gradient(self, item: RuleToCheck) -> RuleReport:
        from .gradcheck import check_gradient_rule
        from .instances import rule_literals

        res = check_gradient_rule(self.one_rule_matcher(item), self.examples, self.seed,
                                  item.rule.pattern, rule_literals(item.rule))
        return RuleReport(item.rule, _location(item.rule), "gradient", res.verdict, res.detail,
                          res.examples, res.counterexample)

    def _pass_differential(self, item: RuleToCheck, loc: str) -> RuleReport:
        """A structural rule: where the fuzzer's programs made it fire, and whether each pass
        it fired in agreed with the oracle (generator/passdiff.py; one run per invocation)."""
        from .passdiff import rule_verdict

        # (an optimizer rule is run instead: its kernels in C before and after it, optdiff.py)
        method, verdict, detail, n = rule_verdict(loc, item.rule.name,
                                                  lambda: self.one_rule_matcher(item), self.seed)
        return RuleReport(item.rule, loc, method, verdict, detail, n)

    def _unreachable(self, item: RuleToCheck, loc: str) -> RuleReport:
        """A rule that reports a bug in its rule set (it raises when it fires): it changes no
        meaning, so what there is to check is that it never fires on the fuzzer's programs."""
        from .passdiff import passdiff

        verdict, detail = passdiff(self.seed).unreachable_verdict(loc)
        return RuleReport(item.rule, loc, "structural", verdict, detail)

    def _examples(self, item: RuleToCheck, examples: int | None = None) -> Any:
        from .examples import ExampleResult, check_examples
        from .instances import CannotInstantiate, mode_of

        try:
            mode = mode_of(item.rule)
        except CannotInstantiate as exc:
            return ExampleResult("unchecked", detail=str(exc))
        res = check_examples(item.rule, self.one_rule_matcher(item), self.set_matcher(item),
                             mode, examples or self.examples, self.seed, item.ulp, item.sum,
                             self.helpers(item.checked))
        for msg in res.loops:
            self.loops_seen.setdefault((item.ruleset.name, item.rule.name), msg)
        return res


class _Hung(BaseException):
    """The rule ran past its wall-clock limit (a BaseException: no `except Exception` in the
    rule's helpers or in hypothesis may swallow it)."""


TIMER_MAX_SECONDS = 1e9  # about 31 years: below the 9.2e9 s setitimer holds


class _hang_limit:
    """Raise _Hung in the main thread after `seconds` of the process's CPU time (SIGPROF), or
    HANG_WALL_FACTOR times that of wall clock (SIGALRM: a helper blocked without computing);
    elsewhere than the main thread, or without setitimer, no limit. CPU time does not grow
    with the machine's load, so a slow rule on a busy machine is not a hang."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        # a limit longer than a timer holds (`--hang-timeout inf`; setitimer refuses 2^63 ns,
        # 292 years, and more) is no limit: armed, it made every rule an OverflowError
        self.active = (0 < seconds * HANG_WALL_FACTOR < TIMER_MAX_SECONDS
                       and hasattr(signal, "setitimer")
                       and threading.current_thread() is threading.main_thread())

    def __enter__(self) -> None:
        if self.active:
            self.quiet = True  # (see _fire)
            self.previous = {}
            for timer, sig, factor in _timers():
                self.previous[sig] = signal.signal(sig, self._fire)
                # it fires again every half second until disarmed: a raise that lands where it
                # is swallowed (a gc callback, an `except BaseException`) is not the last one
                signal.setitimer(timer, self.seconds * factor, 0.5)
            self.quiet = False

    def _fire(self, signum: int, frame: Any) -> None:
        # never while the timers are armed or disarmed: a raise in __exit__ (or in Python's
        # `signal.signal` wrapper it calls), after one timer is disarmed and before the other,
        # left the wall-clock timer armed to fire again in whatever ran next (a pytest
        # worker's next test ended with an INTERNALERROR on a loaded machine; `check
        # --hang-timeout 0.001` a bare _Hung traceback after the rules), and a raise in
        # __enter__ skips __exit__. The timer fires again half a second later.
        if self.quiet or _unsafe_to_raise(frame):
            return
        raise _Hung()

    def __exit__(self, *exc: Any) -> None:
        if self.active:
            self.quiet = True
            for timer, sig, _ in _timers():
                signal.setitimer(timer, 0)
                signal.signal(sig, self.previous[sig])


def _unsafe_to_raise(frame: Any) -> bool:
    """Whether a raise here would print a traceback the run cannot catch: inside a `__del__`
    (Python reports and swallows it), or inside a z3 object's `__init__` (the half-built
    object's `__del__` then reads a field never set: "Exception ignored in Context.__del__",
    seen once in ~50 runs of `check --hang-timeout 0.03`). The timer fires again."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or (code.co_name == "__init__"
                                         and Path(code.co_filename).parent.name == "z3"):
            return True
        frame = frame.f_back
    return False


def _timers() -> tuple[tuple[int, int, float], ...]:
    """(timer, its signal, its share of the limit): CPU time, then wall clock."""
    return ((signal.ITIMER_PROF, signal.SIGPROF, 1),
            (signal.ITIMER_REAL, signal.SIGALRM, HANG_WALL_FACTOR))


def find_loops(checker: Checker, items: list[RuleToCheck], files: list[A.CheckedFile]
               ) -> list[LoopReport]:
    """Static candidates per set, each confirmed or not by running the set under the budget;
    then loops the budget caught while examples ran that no candidate explains."""
    from .examples import probe_loop
    from .instances import CannotInstantiate, mode_of
    from .termination import loop_candidates

    out: list[LoopReport] = []
    by_rule = {(it.rule.span.path, it.rule.span.line): it for it in items}
    for cf in files:
        for rs in cf.rulesets:
            for cand in loop_candidates(rs):
                a, b = cand.first, cand.second
                item = by_rule.get((a.span.path, a.span.line))
                msg = None
                if item is not None:
                    try:
                        probe = RuleToCheck(a, rs, cf, False)
                        msg = probe_loop(a, checker.set_matcher(probe), mode_of(a),
                                         max(10, checker.examples // 4), checker.seed)
                    except CannotInstantiate:
                        msg = None
                out.append(LoopReport(rs.name, f"{a.name} at {_location(a)}",
                                      f"{b.name} at {_location(b)}", msg is not None, msg or ""))
    named = {(lp.ruleset, lp.first.split(" at ")[0]) for lp in out}
    for (set_name, rule_name), msg in checker.loops_seen.items():
        if (set_name, rule_name) not in named:
            it = next(i for i in items if i.rule.name == rule_name)
            firing = _firing_rules(msg)
            second = firing[0] if firing else "(see the budget error)"
            out.append(LoopReport(set_name, f"{rule_name} at {_location(it.rule)}", second,
                                  True, msg))
    return out


def _firing_rules(msg: str) -> list[str]:
    """The rules a RewriteBudgetError names, most frequent first."""
    return [m.group(1) for m in re.finditer(r"^\s+\d+x\s+(.+)$", msg, re.M)]


# ---------------------------------------------------------------------- the command
def rules_files(paths: list[str]) -> list[Path]:
    """The rules files the paths name: a file itself, a folder every `*.rules` directly in it
    (in name order). Raises OSError for a folder with none."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("*.rules"))
            if not found:
                raise OSError(f"{p}: no .rules files in this folder")
            out += found
        else:
            out.append(p)
    return out


def with_imports(files: list[Path]) -> list[A.CheckedFile]:
    """The files, loaded, in their order, then each file they import (transitively) that is
    not among them, each once, in the order first named (no recursion on the import graph)."""
    from rulegrad.dsl import load

    out: list[A.CheckedFile] = []
    seen: set[Path] = set()
    for cf in [load(str(p)) for p in files]:
        if (key := Path(cf.file.path).resolve()) not in seen:
            seen.add(key)
            out.append(cf)
    k = 0
    while k < len(out):  # (out grows as imports are found: a queue)
        for imp in out[k].imported:
            if (key := Path(imp.file.path).resolve()) not in seen:
                seen.add(key)
                out.append(imp)
        k += 1
    return out


def check_paths(paths: list[str] | None = None, examples: int = 100, seed: int = 0,
                rule: str | None = None, rlimit: int = DEFAULT_RLIMIT,
                progress: Callable[[int, int, str], None] | None = None,
                hang_seconds: float = HANG_SECONDS, max_ulp: int = MAX_ULP,
                verdicts: str | Path | None = None) -> CheckReport:
    """Check every rule of the files and of the files they import (a set may hold imported
    rules, and they run with it: a file's verdict is not its own rules' alone); raises
    RulesError for a file that does not load. `verdicts`: a folder of verdicts shared with
    other processes (verdicts.py), read for the rules they checked and written for the rest."""
    files = rules_files(paths) if paths else package_rules_files()
    checked = with_imports(files)
    items = [it for cf in checked for it in rules_to_check(cf, rule)]
    checker = Checker(examples, seed, rlimit, hang_seconds, max_ulp, verdicts)
    report = CheckReport()
    t0 = time.monotonic()
    report.rules = checker.check_all(items, progress)
    if progress is not None:
        progress(len(items), len(items), "termination")
    report.loops = find_loops(checker, items, checked) if rule is None else [
        lp for lp in find_loops(checker, items, checked) if rule in lp.first or rule in lp.second]
    report.seconds = time.monotonic() - t0
    return report


def never_fires_warning(rule: A.Rule, cases: int = 1) -> str:
    """The warning for a rule z3 showed can never fire, at its `file:line:col`; a float literal
    compared with `==` to a constant's arg (which holds the literal rounded to its dtype) gets
    the comparison that means what was written. `cases`: 0 when no dtypes fit the pattern."""
    from rulegrad.dsl.printer import expr

    lits = sorted({repr(p.value) for p in _walk_expr(rule.pattern) if isinstance(p, A.PConst)})
    what = "its pattern" + (" and passes its guard" if rule.guard is not None else
                            f" (its literal{'s' if len(lits) > 1 else ''} {', '.join(lits)} "
                            "against the constants its dtypes hold: 2049 is no float16 "
                            "constant, -1 no uint8 one)" if lits else "")
    text = (f"{rule.span}: warning: {rule.name} can never fire: no value of its pattern's "
            f"dtypes matches {what}, so its proof says nothing")
    if cases == 0:
        text = (f"{rule.span}: warning: {rule.name} can never fire: its pattern matches no "
                "well-typed node (the dtypes it names cannot meet in one graph)")
    # the rounding hint only where rounding can be the cause: a literal some float dtype does
    # not hold exactly, and a pattern that names a float dtype or none (`MUL(x:int8, c:CONST)
    # if c.arg == 0.5` never fires for want of an int 0.5, and const_like(0.5) would be 0)
    from rulegrad.dsl.names import resolve_dtype
    from rulegrad.runtime.dtype import dtypes as _dt
    from rulegrad.runtime.uop import const_value

    named = [resolve_dtype(n.name) for n in _walk_expr(rule.pattern) if isinstance(n, A.DTypeRef)]
    may_float = not named or any(d is None or any(t.is_float for t in d) for d in named)

    def rounds(v: float) -> bool:
        return any(const_value(t, v) != v for t in (_dt.float16, _dt.float32)
                   if math.isfinite(v))

    for cmp in _walk_expr(rule.guard) if may_float else ():
        if not isinstance(cmp, A.ECompare) or len(cmp.ops) != 1 or cmp.ops[0] not in ("==", "!="):
            continue
        a, b = cmp.left, cmp.rights[0]
        for lit, other in ((a, b), (b, a)):
            if isinstance(lit, A.ELit) and isinstance(lit.value, float) and rounds(lit.value) and \
                    isinstance(other, A.EAttr) and other.attr == "arg":
                like = f"{expr(other.obj)}.const_like({expr(lit)}).arg"
                text += (f"; `{expr(cmp)}` compares the constant's arg, rounded to its dtype, "
                         f"with the float64 {expr(lit)}: write `{expr(other)} {cmp.ops[0]} "
                         f"{like}`")
    return text


def _walk_expr(e: Any) -> Iterator[Any]:
    """Every node of an expression (a stack: no recursion)."""
    todo = [e]
    while todo:
        e = todo.pop()
        if isinstance(e, (list, tuple)):
            todo.extend(e)
        elif hasattr(e, "__dataclass_fields__") and not isinstance(e, A.Span):
            yield e
            todo.extend(getattr(e, f) for f in e.__dataclass_fields__ if f != "span")


def format_report(report: CheckReport) -> str:
    """The text `rulegrad check` prints after its progress display."""
    name_w = max([len(r.rule.name) for r in report.rules] + [10]) + 1
    loc_w = max([len(r.location) for r in report.rules] + [10]) + 1
    out = []
    for r in report.rules:
        out.append(r.line(name_w, loc_w))
        if r.warning:
            out.append(f"  {r.warning}")
        if r.counterexample:
            what = "counterexample" if r.verdict == "refuted" else "instance"
            out.append(f"  {what} for {r.rule.name} at {r.location}:")
            out.append(f"    rule: {' '.join(r.rule.text.split())}")
            out.extend("    " + ln for ln in r.counterexample.splitlines())
    if report.loops:
        out.append("")
        out.append("termination:")
        for lp in report.loops:
            out.append("  " + lp.line())
            if lp.detail:
                out.extend("    " + ln for ln in lp.detail.splitlines())
    out.append("")
    out.append(report.summary())
    return "\n".join(out)


def _progress_printer(stream: Any) -> tuple[Callable[[int, int, str], None], Callable[[], None]]:
    """A rich progress bar on a terminal, plain `[k/n] rule` lines otherwise."""
    if stream.isatty():
        try:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            bar = Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(),
                           TextColumn("{task.description}"), transient=True)
            task = bar.add_task("", total=None)
            bar.start()

            def update(k: int, n: int, name: str) -> None:
                bar.update(task, completed=k, total=n, description=name)

            return update, bar.stop
        except ImportError:  # rich is a dependency, but a plain fallback costs nothing
            pass

    def plain(k: int, n: int, name: str) -> None:
        if k < n:
            print(f"[{k + 1}/{n}] {name}", file=stream, flush=True)

    return plain, lambda: None


def run_check(paths: list[str] | None, examples: int = 100, seed: int = 0,
              rule: str | None = None, rlimit: int = DEFAULT_RLIMIT,
              allow_unknown: bool = False, hang_seconds: float = HANG_SECONDS,
              max_ulp: int = MAX_ULP) -> int:
    """The `rulegrad check` command: print the report; the exit status (EXIT_*)."""
    from rulegrad.dsl.errors import RulesError

    update, stop = _progress_printer(sys.stderr)
    try:
        report = check_paths(paths, examples, seed, rule, rlimit, update, hang_seconds, max_ulp)
    except RulesError as exc:
        stop()
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except UnicodeDecodeError as exc:
        stop()
        print(f"error: a rules file is not UTF-8 text ({exc})", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        stop()
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    stop()
    if rule is not None and not report.rules:
        print(f"error: no rule named {rule!r}", file=sys.stderr)
        return EXIT_USAGE
    print(format_report(report))
    code = report.exit_code(allow_unknown)
    if code == EXIT_UNKNOWN:
        print(f"exit {EXIT_UNKNOWN}: {len(report.inconclusive)} rule(s) neither proved nor "
              "passed, or never firing (--allow-unknown accepts that)", file=sys.stderr)
    return code
