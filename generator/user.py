"""A user's own `.rules` file, loaded for use in a program: its generated module, fresh.

In: the path of a `.rules` file anywhere (outside the package), and the folder its generated
module lives in (default: `generated/` beside the file, what `rulegrad gen FILE --out DIR`
writes). Out: its matchers by rule-set name (`load_rules`).

A generated module is imported only when it is exactly what `rulegrad gen` would write now from
the rules file (and the files it imports): a module that is missing or stale is regenerated
(`regenerate=True`, the default), or refused with an error naming the module and the command
that regenerates it. A stale module is never imported.

`value_reads` says where a rule set may read a constant's value (a guard, a `where`, a helper
call, a literal in a pattern): the schedule cache keeps such values in its key
(runtime/schedule_cache.py), so a value on the other side of a guard is scheduled again.

`refutations` is what `add_rules` asks before it runs a user's rule set: the rules of the file
and of the files it imports that `rulegrad check` refutes (each with its counterexample). The
verdict is kept by the content of everything it depends on (`verdict_key` of verdicts.py: the
rules file and the files it imports, its helper modules, the semantics table and the checker's
own modules; not where the file is), in memory and beside the generated module
(`<stem>.check`), so adding the same file again, or a copy of it from another folder, costs no
check.
"""

from __future__ import annotations

import hashlib
import json
import linecache
import os
import shlex
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rulegrad.dsl import ast as A
from rulegrad.dsl.check import gradient_rules
from rulegrad.runtime.matcher import RAN_FROM

from .verdicts import content_key, verdict_key, write_json

if TYPE_CHECKING:
    from rulegrad.runtime.matcher import RuleMatcher


class UserRulesError(RuntimeError):
    """A user's rules file cannot be used: missing, broken, or its generated module is stale."""


class UnsoundRulesError(UserRulesError):
    """A user's rule set holds a rule `rulegrad check` refutes (it changes results)."""


class UnprovenRulesError(UserRulesError):
    """A user's rule set holds a rule `rulegrad check` could neither prove nor refute
    (`unknown`, `unchecked`, `error`): nothing showed it keeps results."""


_loaded: dict[tuple[str, str], tuple[str, dict[str, RuleMatcher]]] = {}  # -> (text, matchers)


def module_path(rules: str | Path, module_dir: str | Path | None = None) -> Path:
    """Where the generated module of `rules` is: `module_dir/<stem>.py`."""
    rules = Path(rules)
    return Path(module_dir if module_dir is not None else rules.parent / "generated") \
        / f"{rules.stem}.py"


def load_rules(rules: str | Path, module_dir: str | Path | None = None,
               regenerate: bool = True) -> dict[str, RuleMatcher]:
    """The matchers of a user's rules file, by rule-set name (see the module docstring)."""
    from rulegrad.dsl.errors import RulesError

    from . import compile_file

    rules = Path(rules)
    if not rules.is_file():
        raise UserRulesError(f"{rules}: no such rules file")
    target = module_path(rules, module_dir)
    try:
        text = compile_file(rules, target.parent)  # what `rulegrad gen` would write now
    except RulesError as e:
        raise UserRulesError(str(e)) from None
    key = (str(rules.resolve()), str(target.resolve()))
    content = text + content_key(rules)  # (a helper edited since: imported again)
    cached = _loaded.get(key)
    if cached is not None and cached[0] == content:
        return cached[1]
    current = target.read_text(encoding="utf-8") if target.is_file() else None
    if current != text:
        if not regenerate:
            command = (f"rulegrad gen {shlex.quote(str(rules))} --out "
                       f"{shlex.quote(str(target.parent))}")
            if current is None:
                raise UserRulesError(f"{target} is missing (no module was generated from "
                                     f"{rules} there yet): run `{command}`")
            raise UserRulesError(f"{target} is stale (generated from {rules}, which changed "
                                 f"since, or by an older rulegrad): run `{command}`")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".py.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)  # atomic: an importer never sees half a module
    found = _import(target, text, content).MATCHERS
    _loaded[key] = (content, found)
    return found


def _import(path: Path, text: str, content: str | None = None) -> ModuleType:
    """The module `path` holds, run from `text` (the very text checked fresh: a file that
    changes after the check is not what runs); `content` (default `text`) names it: its
    helpers' text too, so an edited helper is imported again."""
    name = "rulegrad_user_rules_" + hashlib.sha256(
        (str(path.resolve()) + (text if content is None else content)).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    mod = ModuleType(name)
    mod.__file__ = str(path)
    # the text it ran from, which the file may not be (or not hold any more): kept in it for
    # runtime/matcher.py's count_attempts (another module generated at this path later puts
    # its own text in linecache), and in linecache for tracebacks (no time stamp: kept as is)
    mod.__dict__[RAN_FROM] = text
    linecache.cache[str(path)] = (len(text), None, text.splitlines(True), str(path))
    exec(compile(text, str(path), "exec"), mod.__dict__)  # noqa: S102 - our own generated code
    sys.modules[name] = mod
    return mod


# ---------------------------------------------------------------------- the check's verdict
@dataclass(frozen=True)
class Refutation:
    """A rule `rulegrad check` refutes, or could not show sound (`verdict` unknown, unchecked,
    error): its name and line, where, and the counterexample (or why it is inconclusive)."""

    rule: str
    line: int
    location: str
    counterexample: str
    path: str = ""  # the file the rule is written in
    verdict: str = "refuted"


@dataclass(frozen=True)
class _Kept:
    """A refutation as a verdict keeps it: its file named relative to the checked file
    (`_relative`), since the verdict is kept by content and serves a copy of the file under
    another name or in another folder."""

    rule: str
    line: int
    file: str
    counterexample: str
    verdict: str = "refuted"


NEVER_FIRES = "never-fires"  # a kept verdict's: the check's warning, not a refutation


class NeverFiresWarning(UserWarning):
    """`add_rules` loads a rule `rulegrad check` showed can never fire (a guard no value
    satisfies, a pattern no well-typed node has): it runs, changing nothing, and its author
    most likely meant something else. The message is the check's, at the rule's
    file:line:col."""


_verdicts: dict[str, tuple[_Kept, ...]] = {}  # verdict_key -> the rules not shown sound


def _relative(path: str | Path, me: Path) -> str:
    """`path` as a kept verdict names it: "" for the checked file `me` itself, else relative to
    its folder (a file it imports)."""
    path = Path(path).resolve()
    return "" if path == me else Path(os.path.relpath(path, me.parent)).as_posix()


def _resolve(name: str, me: Path) -> Path:
    return me if name == "" else me.parent / name


def refutations(rules: str | Path, module_dir: str | Path | None = None
                ) -> tuple[Refutation, ...]:
    """The rules of `rules` that `rulegrad check` refutes (its default settings), or shows
    neither sound nor unsound (`verdict`: unknown, unchecked, error: the check's exit status 3),
    and those it warns can never fire (`verdict` NEVER_FIRES, `counterexample` the warning's
    located text), from the kept verdict when nothing it depends on changed."""
    from .paths import display_path
    from .soundness import INCONCLUSIVE, check_paths

    me = Path(rules).resolve()
    key = verdict_key(rules)
    kept = module_path(rules, module_dir).with_suffix(".check")
    found = _verdicts.get(key)
    if found is None:
        found = _read_verdict(kept, key)
    if found is None:
        report = check_paths([str(rules)])  # (the files it imports too)
        found = tuple(_Kept(r.rule.name, r.rule.span.line, _relative(r.rule.span.path, me),
                            (r.counterexample or "") if r.verdict == "refuted" else r.detail,
                            r.verdict)
                      for r in report.rules if r.verdict == "refuted" or _unproven(r, INCONCLUSIVE))
        # a rule the check warns of (z3 showed it can never fire), kept with its located text
        found += tuple(_Kept(r.rule.name, r.rule.span.line, _relative(r.rule.span.path, me),
                             r.warning, NEVER_FIRES) for r in report.rules if r.warning)
        _write_verdict(kept, key, found)
    _verdicts[key] = found
    return tuple(Refutation(k.rule, k.line, f"{display_path(_resolve(k.file, me))}:{k.line}",
                            k.counterexample, str(_resolve(k.file, me)), k.verdict)
                 for k in found)



def _unproven(report: Any, inconclusive: tuple[str, ...]) -> bool:
    """A verdict with no evidence the rule keeps results: `unchecked` or `error` (nothing ran
    it), or `unknown` with no example passed (z3 gave up and no instance was drawn, or the rule
    reads the pass context). An `unknown` whose examples passed runs: z3 gives up ("canceled")
    on ordinary sound rules over floats, such as a guard on a constant's value, which a
    hundred drawn instances (ties, range ends, special values) did not refute."""
    return report.verdict in inconclusive and not (report.verdict == "unknown" and
                                                   report.examples > 0)


def _read_verdict(path: Path, key: str) -> tuple[_Kept, ...] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return tuple(_Kept(str(r["rule"]), int(r["line"]), str(r["file"]),
                           str(r["counterexample"]), str(r["verdict"])) for r in data["found"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, or not a verdict of ours: check again


def _write_verdict(path: Path, key: str, found: tuple[_Kept, ...]) -> None:
    data = {"key": key, "found": [r.__dict__ for r in found]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, data)
    except OSError:
        pass  # a folder we cannot write: the verdict is kept in memory only


# ---------------------------------------------------------------------- reading values
@dataclass(frozen=True)
class ValueReads:
    """Where a rule set's rules may read a constant's value: the constants up to `depth`
    sources below a node whose op is in `roots` (None: any node)."""

    roots: frozenset[str] | None
    depth: int


UNBOUNDED = 1 << 30  # a depth no graph reaches


def value_reads(rules: str | Path, rule_set: str) -> ValueReads | None:
    """Where rule set `rule_set` of `rules` may read constants' values; None when no rule of
    it does (no `.arg`, no call, no literal or `arg=` in its pattern: it matches structure)."""
    from rulegrad.dsl import load

    cf = load(str(rules))
    stack, seen = [cf], set()
    found = None
    while stack and found is None:
        f = stack.pop()
        if f.file.path in seen:
            continue
        seen.add(f.file.path)
        found = next((rs for rs in f.rulesets if rs.name == rule_set), None)
        stack.extend(f.imported)
    if found is None:
        return None
    roots: set[str] | None = set()
    depth = -1
    for rule in found.rules:
        reads = _reads_values(rule)
        if reads is None:
            continue
        pattern = rule.pattern
        while isinstance(pattern, A.PBind):
            pattern = pattern.pattern
        if isinstance(pattern, A.PNode) and roots is not None:
            roots.update(op.name for op in pattern.ops)
        else:
            roots = None  # a variable or literal at the root: any node
        depth = max(depth, UNBOUNDED if reads == "anywhere" else _depth(rule.pattern))
    if depth < 0:
        return None
    return ValueReads(None if roots is None else frozenset(roots), depth)


def _reads_values(rule: A.Rule) -> str | None:
    """Whether a rule may read a value: "anywhere" below its root when its guard, lets or right
    side call a helper (a function given nodes) or walk `.src`; "matched" for `.arg` or a
    method call there, or a literal or `arg=` constraint in its pattern; else None. (Walked
    without recursion.)"""
    found = None
    stack: list[object] = [rule.guard, rule.rhs, rule.pattern, *(e for _, e in rule.lets)]
    while stack:
        e = stack.pop()
        if (isinstance(e, A.ECall) and not isinstance(e.func, A.EAttr)) or \
                (isinstance(e, A.EAttr) and e.attr in ("src", "toposort", "base")):
            return "anywhere"
        if isinstance(e, (A.ECall, A.PConst)) or (isinstance(e, A.EAttr) and e.attr == "arg") \
                or (isinstance(e, A.PNode) and e.arg is not None):
            found = "matched"
        if isinstance(e, (tuple, list)):
            stack.extend(e)
        elif hasattr(e, "__dataclass_fields__") and not isinstance(e, A.Span):
            stack.extend(getattr(e, name) for name in e.__dataclass_fields__)
    return found


def _depth(pattern: A.Pattern) -> int:
    """How many sources deep a pattern looks below its root."""
    deepest, stack = 0, [(pattern, 0)]  # (pattern, how deep)
    while stack:
        p, d = stack.pop()
        if isinstance(p, A.PBind):
            stack.append((p.pattern, d))
        elif isinstance(p, A.PNode):
            deepest = max(deepest, d)
            stack.extend((s, d + 1) for s in p.srcs or ())
        else:
            deepest = max(deepest, d)
    return deepest


# ---------------------------------------------------------------------- the entry point
def add_rules(path: str | os.PathLike[str], rule_set: str | None = None, *,
              before: str | None = None, after: str | None = None, bottom_up: bool = False,
              module_dir: str | os.PathLike[str] | None = None,
              regenerate: bool = True, allow_refuted: bool = False,
              allow_unknown: bool = False) -> Any:
    """Run rule set `rule_set` of the user's rules file `path` as a pass of the scheduler,
    just `before` or `after` one of its passes (`stages()`), for every program realized from now
    on; in a `with` block, only for the programs realized inside it.

    The file's generated module (`module_dir/<stem>.py`, default `generated/` beside the file)
    is regenerated when missing or stale; with `regenerate=False` that is an error naming the
    module instead. `rule_set` may be omitted when the file has one.

    The file is checked as `rulegrad check` checks it, once per content (the verdict is kept
    beside the generated module): a rule of the set that the check refutes would change what
    programs compute, and is refused (`UnsoundRulesError`, with the counterexample), unless
    `allow_refuted=True` says to run it anyway (a warning names it). A rule the check has no
    evidence for (`unchecked`, `error`, or `unknown` with no example passed: nothing ran it) is
    refused too (`UnprovenRulesError`, saying why), unless `allow_unknown=True` (the check's
    `--allow-unknown`) says to run it (a warning names it). An `unknown` rule whose drawn
    examples all passed (z3 gave up) runs (docs/language.md says why)."""
    from rulegrad.runtime.schedule import UserPass, register, stages

    if (before is None) == (after is None):
        raise ValueError("add_rules: say where the pass runs, before=STAGE or after=STAGE "
                         f"(one of {', '.join(stages())})")
    stage = before if before is not None else after
    found = load_rules(path, module_dir, regenerate)
    if rule_set is None:
        if len(found) != 1:
            raise UserRulesError(f"{path} has rule sets {', '.join(found)}: name one")
        (rule_set,) = found
    if rule_set not in found:
        raise UserRulesError(f"{path} has no rule set {rule_set!r}; it has: {', '.join(found)}")
    # a rule by name, line and file name (the set may hold rules of the files it imports)
    ours = {(info.name, info.line, Path(info.path).name) for info in found[rule_set].rules}
    flagged = [r for r in refutations(path, module_dir)
               if (r.rule, r.line, Path(r.path).name) in ours]
    refuted = [r for r in flagged if r.verdict == "refuted"]
    unproven = [r for r in flagged if r.verdict not in ("refuted", NEVER_FIRES)]
    for r in flagged:  # runs (a rule that never fires changes nothing), but its author is told
        if r.verdict == NEVER_FIRES:
            warnings.warn(f"add_rules: {r.counterexample}", NeverFiresWarning, stacklevel=2)
    if refuted:
        text = "\n".join(f"{r.location}: rule {r.rule} is refuted by `rulegrad check`; "
                         f"counterexample:\n{r.counterexample}" for r in refuted)
        if not allow_refuted:
            raise UnsoundRulesError(
                f"add_rules: rule set {rule_set!r} of {path} would change what programs "
                f"compute:\n{text}\nFix the rule, or pass allow_refuted=True to run it anyway.")
        warnings.warn(f"add_rules: running refuted rules (allow_refuted=True):\n{text}",
                      RuntimeWarning, stacklevel=2)
    if unproven:
        text = "\n".join(f"{r.location}: rule {r.rule} is {r.verdict} to `rulegrad check`: "
                         f"{r.counterexample}" for r in unproven)
        if not allow_unknown:
            raise UnprovenRulesError(
                f"add_rules: rule set {rule_set!r} of {path} has rules that `rulegrad check` "
                f"could not show keep what programs compute:\n{text}\nProve them (simplify the "
                "rule, give it a guard z3 can read), or pass allow_unknown=True to run them "
                "anyway.")
        warnings.warn(f"add_rules: running rules not shown sound (allow_unknown=True):\n{text}",
                      RuntimeWarning, stacklevel=2)
    if _is_gradient_set(path, rule_set):
        raise UserRulesError(
            f"add_rules: rule set {rule_set!r} of {path} is a gradient set (`# check: "
            "gradient`): each rule gives one gradient per source (a tuple), not a rewrite of "
            "the node, so it cannot run as a pass of the scheduler; `rulegrad check` compares "
            "it with torch's autograd (docs/gradients.md)")
    reads = value_reads(path, rule_set)
    up = UserPass(str(path), rule_set, "before" if before is not None else "after", stage,
                  bottom_up, found[rule_set],
                  None if reads is None else (_ops(reads.roots), reads.depth))
    return register(up)




def _is_gradient_set(rules: str | Path, rule_set: str) -> bool:
    """Whether `rule_set` (in `rules` or a file it imports) is marked `# check: gradient`."""
    from rulegrad.dsl import load

    stack, seen = [load(str(rules))], set()
    while stack:
        f = stack.pop()
        if f.file.path in seen:
            continue
        seen.add(f.file.path)
        found = next((rs for rs in f.rulesets if rs.name == rule_set), None)
        if found is not None:
            marked = gradient_rules(f.file)
            return any((r.span.line, r.span.col) in marked for r in found.rules)
        stack.extend(f.imported)
    return False


def _ops(names: frozenset[str] | None) -> frozenset[Any] | None:
    """The ops of a pattern's root names; None (any op) when a name is a group of ops."""
    from rulegrad.runtime.ops import Ops

    if names is None or any(name not in Ops.__members__ for name in names):
        return None
    return frozenset(Ops[name] for name in names)
