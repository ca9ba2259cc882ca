"""The typed AST of the `.rules` language (see LANGUAGE.md).

The parser (`parser.py`) builds it from text; the checker (`check.py`) validates it and
flattens rule sets; the printer (`printer.py`) turns it back into canonical text; the generator
and the interpreted matcher consume the checked form. Every node carries its source `Span`.
Nodes are frozen dataclasses, so two parses of the same text compare equal (spans aside: use
`strip_spans` to compare shapes of trees from different texts).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Span:
    path: str
    line: int  # 1-based
    col: int  # 1-based
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


NO_SPAN = Span("<none>", 0, 0, 0, 0)


def _span() -> Any:
    # spans never take part in equality: a reprinted file parses to an equal tree
    return field(default=NO_SPAN, compare=False, repr=False)


# ------------------------------------------------------------------------ patterns
@dataclass(frozen=True)
class OpRef:
    """One name in op position, as written: an op (`ADD`) or a group (`Movement`)."""

    name: str
    span: Span = _span()


@dataclass(frozen=True)
class DTypeRef:
    """A dtype name (`int32`, `index`) or dtype class (`ints`, `floats`) in a pattern."""

    name: str
    span: Span = _span()


@dataclass(frozen=True)
class PNode:
    """`OP(...)`, `OP[...]`, `{A, B}(...)`, `Group(...)` or a bare `OP` (any sources)."""

    ops: tuple[OpRef, ...]
    srcs: tuple[Pattern, ...] | None  # None: any sources
    commutative: bool = False  # written with [...]
    ellipsis: bool = False  # a trailing `...`: any further sources
    arg: Expr | None = None  # `arg=` constraint
    tag: Expr | None = None  # `tag=` constraint
    dtype: DTypeRef | None = None
    span: Span = _span()
    rest: str | None = None  # `OP(x, *rest)`: the sources after the fixed ones, as a tuple


@dataclass(frozen=True)
class PVar:
    """A capture `x` (any node, bound to x) or the wildcard `_` (name None)."""

    name: str | None
    dtype: DTypeRef | None = None
    span: Span = _span()


@dataclass(frozen=True)
class PConst:
    """A literal in pattern position: a CONST node with this value."""

    value: bool | int | float
    dtype: DTypeRef | None = None
    span: Span = _span()


@dataclass(frozen=True)
class PBind:
    """`name:PAT` or `PAT as name`: match PAT and bind the node to name."""

    name: str
    pattern: Pattern
    postfix: bool = False  # written as `PAT as name` (printing keeps the author's form)
    span: Span = _span()


Pattern = PNode | PVar | PConst | PBind


def subpatterns(p: Pattern) -> Iterator[Pattern]:
    """p and every pattern inside it (a bind's pattern, a node's sources), each before the
    ones inside it, sources left to right: the one walk the checker and generator ask of a
    pattern (a loop, no recursion on the pattern's depth)."""
    stack = [p]
    while stack:
        q = stack.pop()
        yield q
        if isinstance(q, PBind):
            stack.append(q.pattern)
        elif isinstance(q, PNode) and q.srcs:
            stack.extend(reversed(q.srcs))


# ------------------------------------------------------------------------ expressions
@dataclass(frozen=True)
class ELit:
    value: Any  # None, bool, int, float, str
    span: Span = _span()


@dataclass(frozen=True)
class EName:
    """A lower-case name: a capture, a helper, `ctx`, a builtin, or a global like `dtypes`."""

    name: str
    span: Span = _span()


@dataclass(frozen=True)
class EOpName:
    """A capitalised name in an expression: an op constructor (`ADD(x, y)`) or `Ops`, `UOp`, ..."""

    name: str
    span: Span = _span()


@dataclass(frozen=True)
class EAttr:
    obj: Expr
    attr: str
    span: Span = _span()


@dataclass(frozen=True)
class ESlice:
    lower: Expr | None
    upper: Expr | None
    step: Expr | None
    span: Span = _span()


@dataclass(frozen=True)
class EIndex:
    obj: Expr
    index: Expr  # may be an ESlice
    span: Span = _span()


@dataclass(frozen=True)
class ECall:
    func: Expr
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Expr], ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class EBinOp:
    op: str  # + - * / // %
    left: Expr
    right: Expr
    span: Span = _span()


@dataclass(frozen=True)
class EUnary:
    op: str  # - or not
    operand: Expr
    span: Span = _span()


@dataclass(frozen=True)
class ECompare:
    """A comparison chain: `a < b <= c` is left=a, ops=('<', '<='), rights=(b, c)."""

    left: Expr
    ops: tuple[str, ...]  # == != < <= > >= in 'not in' is 'is not'
    rights: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True)
class EBool:
    op: str  # and / or
    values: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True)
class EIf:
    cond: Expr
    then: Expr
    orelse: Expr
    span: Span = _span()


@dataclass(frozen=True)
class ETuple:
    items: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True)
class EList:
    items: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True)
class EComp:
    """A generator expression (`kind="gen"`) or list comprehension (`kind="list"`) with one
    `for` clause: `elt for a, b in iter if c1 if c2`. The `names` are bound in `elt` and
    `conds` only (LANGUAGE.md, "Expressions"); `all(s.op is Ops.CONST for s in a.src)`."""

    kind: str  # "gen" or "list"
    elt: Expr
    names: tuple[str, ...]
    iter: Expr
    conds: tuple[Expr, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class EStar:
    """`*xs` among a call's arguments: the items of `xs`, each an argument."""

    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class EError:
    """The right-hand side `error MESSAGE`: the graph is malformed here; stop with MESSAGE."""

    message: Expr
    span: Span = _span()


@dataclass(frozen=True)
class EDefer:
    """The right-hand side `defer`: not yet, retry after the siblings."""

    span: Span = _span()


Expr = (ELit | EName | EOpName | EAttr | ESlice | EIndex | ECall | EBinOp | EUnary | ECompare
        | EBool | EIf | ETuple | EList | EComp | EStar)


# ------------------------------------------------------------------------ rules and files
@dataclass(frozen=True)
class Rule:
    name: str  # given, or derived as <set>_<line>
    pattern: Pattern
    guard: Expr | None
    rhs: Expr | EDefer | EError
    named: bool = True  # False when the name was derived
    text: str = field(default="", compare=False)  # the rule's source text, one line
    span: Span = _span()
    # `where a = E, ...`: bound in order, each seen by later ones, the RHS and the guard
    lets: tuple[tuple[str, Expr], ...] = ()

    def guard_steps(self) -> list[tuple[int, int, tuple[Expr, ...]]]:
        """The guard as steps `(start, stop, conditions)`: bind lets[start:stop], then test the
        conditions (the guard's `and` terms, in order). A let the guard names is bound just
        before the first term that names it, so a cheap test first spares an expensive let
        (Haskell's `where` scopes over guards too); lets no term names are bound after the guard
        passed (`lets[guard_steps()[-1][1]:]`)."""
        return list(self._guard_steps)

    @functools.cached_property
    def _guard_steps(self) -> tuple[tuple[int, int, tuple[Expr, ...]], ...]:
        # worked out once per rule (the rule is immutable): the interpreter asks at every
        # match, `rulegrad check` some 400,000 times a rule set (names_in walks each term)
        return tuple(self._steps())

    def _steps(self) -> list[tuple[int, int, tuple[Expr, ...]]]:
        if self.guard is None:
            return []
        guard = self.guard
        terms = guard.values if isinstance(guard, EBool) and guard.op == "and" else (guard,)
        index = {name: k for k, (name, _) in enumerate(self.lets)}
        steps: list[tuple[int, int, tuple[Expr, ...]]] = []
        done = 0
        for term in terms:
            need = max((index[n] + 1 for n in names_in(term) if n in index), default=0)
            if steps and need <= done:  # no new let: test it together with the step before
                start, stop, conds = steps[-1]
                steps[-1] = (start, stop, conds + (term,))
            else:
                steps.append((done, max(need, done), (term,)))
                done = max(need, done)
        return steps

    @property
    def guard_lets(self) -> int:
        """How many lets are bound before the guard is known to pass."""
        steps = self._guard_steps
        return steps[-1][1] if steps else 0


@dataclass(frozen=True)
class SetRef:
    """A rule-set name used as a term of `+`."""

    name: str
    span: Span = _span()


@dataclass(frozen=True)
class RuleBlock:
    rules: tuple[Rule, ...]
    span: Span = _span()


@dataclass(frozen=True)
class RuleSet:
    name: str
    terms: tuple[SetRef | RuleBlock, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Use:
    """`use MODULE: a, b`: Python helpers. A leading dot means the file beside the rules."""

    module: str
    names: tuple[str, ...]
    name_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)
    span: Span = _span()
    analysis: bool = False  # `analysis MODULE: a, b`: questions about nodes, never a rewrite


@dataclass(frozen=True)
class Import:
    """`from "other.rules" import a, b`: rule sets of another file."""

    path: str
    names: tuple[str, ...]
    name_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)
    span: Span = _span()


@dataclass(frozen=True)
class Pass:
    """`pass NAME = RULESET [top_down|bottom_up] [ctx=C] [once|until_settled] [collect]
    [spec=STAGE]`: one pass of a pipeline (LANGUAGE.md, "Pipelines")."""

    name: str
    ruleset: str
    bottom_up: bool = False
    ctx: str | None = None  # a context class declared with `use`, or an earlier pass's name
    until_settled: bool = False  # rerun (with the context's `again()`) until it settles
    collect: bool = False  # only fills its context: the graph goes on unchanged
    spec: str | None = None  # with RULEGRAD_SPEC=1, the graph is verified as this stage after
    set_span: Span = _span()
    ctx_span: Span = _span()
    span: Span = _span()


@dataclass(frozen=True)
class Field:
    """`name: TYPE [= DEFAULT]` in a context: the default is evaluated per new context, with
    `ctx` (the fields before it) and the context's inputs in scope; no default: required."""

    name: str
    type: str  # as written (`dict[UOp, int]`): documentation, printed as the annotation
    default: Expr | None
    span: Span = _span()


@dataclass(frozen=True)
class Method:
    """`name(p, q=LITERAL) -> EXPR [where a = E, ...]`: a method of a context, its body one
    expression; the `where` names are bound in order first (one may be bound for its effect on
    `ctx`, as `noted = ctx.deps.setdefault(b)`)."""

    name: str
    params: tuple[tuple[str, ELit | None], ...]
    body: Expr
    lets: tuple[tuple[str, Expr], ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Def:
    """`def name(p, q=LITERAL) -> EXPR [where a = E, ...]` at the top of a file: a named
    expression, a function of its parameters only (no `ctx` unless it is one of them). Rules,
    context methods and later definitions call it by name; the generated module defines it."""

    name: str
    params: tuple[tuple[str, ELit | None], ...]
    body: Expr
    lets: tuple[tuple[str, Expr], ...] = ()
    text: str = field(default="", compare=False)  # its source text, one line
    span: Span = _span()


@dataclass(frozen=True)
class Context:
    """`context NAME(inputs) { fields and methods }` (or `record NAME { fields }`, a value a rule
    builds): a class the generated module defines. `inputs`: what `NAME.start(...)` is given
    (a pass calls it with its graph) for the fields' defaults."""

    name: str
    inputs: tuple[str, ...]
    fields: tuple[Field, ...]
    methods: tuple[Method, ...]
    record: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class Pipeline:
    """`pipeline NAME { pass ... }`: passes run in order over a graph."""

    name: str
    passes: tuple[Pass, ...]
    span: Span = _span()


@dataclass(frozen=True)
class RulesFile:
    path: str
    uses: tuple[Use, ...]
    imports: tuple[Import, ...]
    rulesets: tuple[RuleSet, ...]
    source: str = field(default="", compare=False, repr=False)
    pipelines: tuple[Pipeline, ...] = ()
    contexts: tuple[Context, ...] = ()
    defs: tuple[Def, ...] = ()


# ------------------------------------------------------------------------ the checked form
@dataclass(frozen=True)
class CheckedRuleSet:
    """A rule set flattened in priority order (imported and `+`-ed sets expanded)."""

    name: str
    rules: tuple[Rule, ...]
    path: str = ""  # the rules file that defines the set


@dataclass(frozen=True)
class Helper:
    """A Python helper the rules may call: `module` as written in `use`, and the file it is in."""

    name: str
    module: str
    file: str | None  # the .py file for `use .mod`; None for an importable dotted module
    analysis: bool = False  # declared by `analysis`: it answers about nodes, it does not rewrite


@dataclass(frozen=True)
class CheckedFile:
    file: RulesFile
    rulesets: tuple[CheckedRuleSet, ...]
    helpers: tuple[Helper, ...]
    imported: tuple[CheckedFile, ...] = ()  # files named by `from "..." import`
    # per pipeline of this file; each pass's rule set resolved to the file that defines it
    pipelines: tuple[CheckedPipeline, ...] = ()


@dataclass(frozen=True)
class CheckedPipeline:
    pipeline: Pipeline
    set_files: tuple[str, ...]  # per pass, the path of the rules file defining its rule set


def strip_spans(node: Any) -> Any:
    """The same tree with every span reset (for comparing trees parsed from different text)."""
    if isinstance(node, tuple):
        return tuple(strip_spans(x) for x in node)
    if not is_dataclass(node) or isinstance(node, Span):
        return node
    changes = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if f.name == "span" or f.name.endswith("_spans"):
            changes[f.name] = NO_SPAN if f.name == "span" else ()
        else:
            changes[f.name] = strip_spans(value)
    return replace(node, **changes)


def names_in(e: object) -> set[str]:
    """Every name an expression mentions (iterative walk over the AST's dataclass fields)."""
    out: set[str] = set()
    stack: list[object] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, EName):
            out.add(x.name)
        elif isinstance(x, (tuple, list)):
            stack.extend(x)
        elif hasattr(x, "__dataclass_fields__") and not isinstance(x, Span):
            stack.extend(getattr(x, f) for f in x.__dataclass_fields__ if f != "span")
    return out
