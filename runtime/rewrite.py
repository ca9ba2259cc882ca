"""The rewrite engine: apply a matcher to every node of a graph until nothing changes.

In: a root UOp and a matcher (any object with `rewrite(uop, ctx) -> UOp | None`; the generated
and interpreted matchers of `rulegrad.generator` are the usual ones). Out: the rewritten root,
or with `graph_rewrite_map` the map from every old node to its new one.

Semantics follow tinygrad's `graph_rewrite`: top-down (the default) rewrites a node's sources
before the node, then the node to a fixed point; bottom-up rewrites the node to a fixed point
first, then its sources. Results are memoised per call, so shared subgraphs are rewritten once.
A rule that raises `RewriteNotReady` is retried after the rest of the work queue. The walk is an
explicit stack (no recursion), and a budget on rule firings turns a rule set that never settles
into a `RewriteBudgetError` naming the rules that kept firing. The budget scales with the graph:
`RULEGRAD_REWRITE_BUDGET` firings per node of the pass's input (default 1,000; a graph counts as
at least `MIN_NODES` nodes), so a legal 1.25M-op chain settles while a cycle is still caught.

Three walks, one order: `_general` serves every mode (bottom-up, traced, diagnosing a spent
budget); `_top_down` and `_bottom_up` serve the common passes (the matcher's op table, no trace)
with less work per node, and tests hold them to the same attempts in the same order.
"""

from __future__ import annotations

import collections
import copy
import gc
from dataclasses import dataclass, field
from typing import Any, Protocol

from .env import changed, env_int
from .uop import UOp, new_uop, ops_mask, toposort


class RewriteNotReady(Exception):
    """Raised by a rule that must wait until its siblings have been rewritten."""


@dataclass(frozen=True)
class RuleInfo:
    """Where a rule came from: its name, `file:line`, and source text."""

    name: str
    path: str = "<python>"
    line: int = 0
    text: str = ""

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def __str__(self) -> str:
        return f"{self.name} at {self.location}"


class Matcher(Protocol):
    def rewrite(self, uop: UOp, ctx: Any = None) -> UOp | None: ...


class RewriteBudgetError(RuntimeError):
    """A rule set kept rewriting past its budget: it probably has a cycle."""

    def __init__(self, pass_name: str, budget: int, rules: list[tuple[str, int]]):
        self.pass_name, self.budget, self.rules = pass_name, budget, rules
        listing = "\n".join(f"  {count:6d}x  {rule}" for rule, count in rules) or "  (unknown)"
        super().__init__(f"pass {pass_name!r} did not settle after {budget} rule firings; "
                         f"the rules that keep firing:\n{listing}")


@dataclass
class Firing:
    """One recorded rule application (kept when tracing is on)."""

    pass_name: str
    rule: RuleInfo | None
    before: UOp
    after: UOp
    # where in the pass's graph the firing happened, for a viewer to draw it in context: the
    # node of the walk whose rewrite `before` is a step of (a node of the pass's input graph,
    # or one a rule made inside another firing's result), and what it became when the pass
    # ended (None until then)
    origin: UOp | None = None
    final: UOp | None = None


@dataclass
class PassRecord:
    """One graph_rewrite call seen while tracing: its root before and after, its matcher and
    ctx (so a viewer can ask why a rule did not fire), and its firings `firings[start:end]`."""

    name: str
    matcher: Any
    ctx: Any
    before: UOp
    after: UOp
    start: int
    end: int
    attempts: list[int] = field(default_factory=list)  # per rule of the matcher, this pass
    matches: list[int] = field(default_factory=list)
    # with tracing(copy_ctx=True): a copy of ctx as the pass received it (UOps and Buffers are
    # shared, not copied), so the pass can be run again exactly (generator/passdiff.py)
    ctx_before: Any = None
    bottom_up: bool = False
    # what each node the walk visited became (the pass's memo table, kept while tracing): a
    # viewer places a firing whose result a user's rewrite absorbed
    replace: dict[UOp, UOp] = field(default_factory=dict)


@dataclass
class Tracer:
    """Collects firings and passes: `with tracing() as t: ...; t.firings, t.passes`."""

    firings: list[Firing] = field(default_factory=list)
    passes: list[PassRecord] = field(default_factory=list)
    limit: int = 1_000_000
    copy_ctx: bool = False


_tracer: Tracer | None = None
# rule firings a pass may make per node of its input graph before it is called non-terminating
# (the symbolic and rangeify passes fire a handful per node), and the least any pass gets
PER_NODE_BUDGET = 1_000
MIN_NODES = 1_000


def tracing_active() -> bool:
    """Whether a `tracing()` block is recording firings now."""
    return _tracer is not None


class tracing:  # noqa: N801 - used as a context manager, like a function
    """Record every rule firing of every pass run inside the `with` block."""

    def __init__(self, limit: int = 1_000_000, copy_ctx: bool = False):
        self.tracer = Tracer(limit=limit, copy_ctx=copy_ctx)

    def __enter__(self) -> Tracer:
        global _tracer
        self._saved, _tracer = _tracer, self.tracer
        changed()  # (realize plans stop while the passes are traced: runtime/plans.py)
        return self.tracer

    def __exit__(self, *exc: object) -> None:
        global _tracer
        _tracer = self._saved
        changed()


def _rule_of(matcher: Any, node: UOp, ctx: Any) -> tuple[UOp | None, RuleInfo | None]:
    """Rewrite one node and say which rule did it (matchers without the hook name none)."""
    with_rule = getattr(matcher, "rewrite_with_rule", None)
    if with_rule is not None:
        return with_rule(node, ctx)
    return matcher.rewrite(node, ctx), None


class _Rewriter:
    """One graph_rewrite call: the memo table, the budget, and the rewrite step."""

    def __init__(self, matcher: Any, ctx: Any, bottom_up: bool, name: str,
                 budget: int | None):
        self.matcher, self.ctx, self.bottom_up, self.name = matcher, ctx, bottom_up, name
        self.replace: dict[UOp, UOp] = {}
        self.fired = 0
        # an explicit budget is absolute; the default one is per node, and the graph is only
        # counted if a pass ever fires more than for MIN_NODES nodes (`_over_budget`)
        self.per_node = None if budget is not None else _per_node_budget()
        self.budget = self.limit = budget if budget is not None else self.per_node * MIN_NODES
        self.root: UOp | None = None
        self.diagnose: collections.Counter[str] | None = None  # set once the budget is spent
        self.trace = trace = _tracer
        self.stats0: tuple[list[int], list[int]] | None = None
        self.ctx_before = None
        # while tracing: the walk node being rewritten now, the input node each node the walk
        # made stands for (a firing's result, a node rebuilt on new sources), and this pass's
        # firings (their `final` is filled in when the pass ends)
        self.at: UOp | None = None
        self.origins: dict[UOp, UOp] = {}
        self.mine: list[tuple[Firing, UOp]] = []
        if trace is None:
            # the walks call the matcher's own op -> function table, not `rewrite` (off while
            # tracing, counting statistics, or diagnosing a spent budget)
            self.table = table = getattr(matcher, "table", None)
            # the ops the table has rules for: a node whose graph holds none of them
            # (UOp._ops) is its own rewrite, and its sources are not visited
            self.mask = _mask_of(table) if table is not None else 0
        else:
            self.table, self.mask = None, 0
            if trace.copy_ctx and ctx is not None:
                self.ctx_before = copy.deepcopy(ctx)
            enable = getattr(matcher, "enable_stats", None)  # per-rule attempts for the trace
            if enable is not None:
                st = enable()
                self.stats0 = (list(st.attempts), list(st.matches))
        self.waiting = 0  # consecutive deferrals with no progress between them

    def step(self, node: UOp) -> UOp | None:
        """One rewrite attempt on `node`: the new node, or None when no rule applies."""
        if self.trace is None and self.diagnose is None:
            new = self.matcher.rewrite(node, self.ctx)
        else:
            new, rule = _rule_of(self.matcher, node, self.ctx)
            trace = self.trace
            if new is not None and trace is not None and len(trace.firings) < trace.limit:
                at = self.at if self.at is not None else node
                fired = Firing(self.name, rule, node, new, self.origins.get(at, at))
                trace.firings.append(fired)
                self.mine.append((fired, at))
            if new is not None and self.diagnose is not None:
                self.diagnose[str(rule) if rule else type(self.matcher).__name__] += 1
        if new is None or new is node:
            return None
        self.fired += 1
        if self.fired > self.budget:
            self._over_budget()
        return new

    def _over_budget(self) -> None:
        if self.per_node is not None and self.root is not None:
            # first time over: the real budget is per node of the input graph
            scaled = self.per_node * len(toposort(self.root))
            self.per_node = None
            if scaled > self.fired:
                self.budget = self.limit = scaled
                return
        # past the budget, watch a window of firings to name the rules that keep going
        if self.diagnose is None:
            self.diagnose = collections.Counter()
            self.table = None  # name the rules from now on
            self.budget = self.fired + 1000
            return
        raise RewriteBudgetError(self.name, self.limit, self.diagnose.most_common(8))

    def fixed_point(self, node: UOp) -> UOp:
        while (new := self.step(node)) is not None:
            node = new
        return node

    def run(self, root: UOp) -> UOp:
        # the walk allocates a tuple per visit and the rules new nodes, none of them cyclic:
        # the cyclic collector, run every 700 allocations over every live node, only costs time
        # (a quarter of a symbolic pass); it is back on when the pass ends
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._walk(root)
        finally:
            if was_enabled:
                gc.enable()

    def _walk(self, root: UOp) -> UOp:
        self.root = root  # a spent budget is scaled by this graph's size (`_over_budget`)
        # (node, stage, work node): stage 0 = first visit, 1 = sources done, 2 = link result
        stack: collections.deque[tuple[UOp, int, UOp]] = collections.deque([(root, 0, root)])
        if self.table is not None:  # both return early if a spent budget turns diagnosis on
            (self._bottom_up if self.bottom_up else self._top_down)(stack)
        if stack:
            self._general(stack)
        return self.replace[root]

    def _top_down(self, stack: collections.deque[tuple[UOp, int, UOp]]) -> None:
        """The walk of `_general` for the common pass (top-down, the matcher's table, no trace),
        in the same order, with less work per node: the op table is called directly, and a node
        rewritten to a new one goes on matching in place while the new node's sources are
        already done (instead of a push and a pop of three stack entries per step)."""
        replace, ctx, lookup, mask = self.replace, self.ctx, self.table.get, self.mask
        done, pop, push = replace.__getitem__, stack.pop, stack.append
        waiting = self.waiting
        while stack:
            n, stage, work = pop()
            if n in replace:
                continue
            if stage == 0:
                if not n._ops & mask:  # no rule fires anywhere in n's graph
                    replace[n] = n
                    continue
                pending = False
                for s in reversed(n.src):  # a loop, not a comprehension: no frame per node
                    if s not in replace:
                        # a source no rule can touch (a leaf without rules: a constant, a
                        # buffer) is itself, decided here instead of by a push and a pop
                        if not s._ops & mask or (not s.src and lookup(s.op) is None):
                            replace[s] = s
                            continue
                        if not pending:
                            push((n, 1, n))
                            pending = True
                        push((s, 0, s))
                if pending:
                    continue
            elif stage == 2:
                linked = replace.get(work)
                if linked is None:
                    stack.appendleft((n, 2, work))
                    waiting += 1
                    continue
                replace[n] = linked
                waiting = 0
                continue
            # the sources of n are rewritten (top-down, the work node is n itself)
            try:
                src = tuple(map(done, n.src))
            except KeyError:  # a source is still waiting: retry later
                stack.appendleft((n, 1, n))
                waiting += 1
                continue
            links: list[UOp] = []  # the nodes that become what the chain ends in
            # fresh: a node not seen before this step; built: one rebuilt over rewritten
            # sources, which are their own rewrites (every value in `replace` maps to itself),
            # so its sources need no second look
            cur, fresh, built = n, False, False
            if src != n.src:
                links.append(n)
                cur, fresh, built = new_uop(UOp, n.op, n.dtype, src, n.arg, n.tag), True, True
            while True:
                if fresh:  # its first visit, in place
                    if cur in replace:
                        final = replace[cur]
                        break
                    if not cur._ops & mask:  # no rule fires anywhere in its graph
                        replace[cur] = final = cur
                        break
                    if not built:
                        try:
                            src = tuple(map(done, cur.src))
                        except KeyError:  # rare: a rule made new sources, to be visited first
                            _push_links(push, links, cur)
                            push((cur, 0, cur))
                            cur = None
                            break
                        if src != cur.src:
                            links.append(cur)
                            cur, built = new_uop(UOp, cur.op, cur.dtype, src, cur.arg,
                                                 cur.tag), True
                            continue
                try:
                    f = lookup(cur.op)
                    hit = None if f is None else f(cur, ctx)
                except RewriteNotReady:
                    _push_links(push, links, cur)
                    waiting += 1
                    if waiting > len(stack) + 1:
                        raise RuntimeError(f"pass {self.name!r}: a rule deferred "
                                           f"(RewriteNotReady) on {cur!r} and "
                                           "nothing else could make progress") from None
                    stack.appendleft((cur, 1, cur))
                    cur = None
                    break
                if hit is None or hit[0] is cur:
                    replace[cur] = final = cur
                    break
                self.fired += 1
                links.append(cur)
                cur, fresh, built = hit[0], True, False
                if self.fired > self.budget:
                    self._over_budget()
                    if self.table is None:  # diagnosing: the general walk names the rules
                        _push_links(push, links, cur)
                        push((cur, 0, cur))
                        self.waiting = waiting
                        return
            if cur is None:
                continue
            for x in links:
                replace[x] = final
            waiting = 0
        self.waiting = waiting

    def _bottom_up(self, stack: collections.deque[tuple[UOp, int, UOp]]) -> None:
        """The walk of `_general` for a bottom-up pass with the matcher's table and no trace,
        in the same order: a node's fixed point calls the op table in place (no `fixed_point`,
        `step` and `rewrite` frames per attempt)."""
        replace, ctx, lookup, mask = self.replace, self.ctx, self.table.get, self.mask
        done, pop, push = replace.__getitem__, stack.pop, stack.append
        waiting = self.waiting
        while stack:
            n, stage, new_n = pop()
            if n in replace:
                continue
            if stage == 0:
                if not n._ops & mask:  # no rule fires anywhere in n's graph
                    replace[n] = n
                    continue
                # down a chain: the first source left to do is the stack's next entry, so it
                # is taken at once (no push and pop of it); the others are pushed as before
                while True:
                    # the node itself to a fixed point first (its sources are not rewritten yet)
                    new_n = n
                    while (f := lookup(new_n.op)) is not None:
                        hit = f(new_n, ctx)
                        if hit is None or hit[0] is new_n:
                            break
                        new_n = hit[0]
                        self.fired += 1
                        if self.fired > self.budget:
                            self._over_budget()
                            if self.table is None:  # diagnosing: the general walk names them
                                push((n, 2, new_n))
                                push((new_n, 0, new_n))
                                self.waiting = waiting
                                return
                    first = None  # the first source left to do (pushed last, popped next)
                    for s in reversed(new_n.src):  # a loop, not a comprehension: no frame
                        if s not in replace:
                            # a source no rule can touch (a leaf without rules: a constant, a
                            # buffer) is itself, decided here instead of by a push and a pop
                            if not s._ops & mask or (not s.src and lookup(s.op) is None):
                                replace[s] = s
                                continue
                            if first is None:
                                push((n, 1, new_n))
                            else:
                                push((first, 0, first))
                            first = s
                    if first is None:  # every source is done: on to n's sources' results
                        break
                    n = first
            elif stage == 2:
                linked = replace.get(new_n)
                if linked is None:
                    stack.appendleft((n, 2, new_n))
                    waiting += 1
                    continue
                replace[n] = linked
                waiting = 0
                continue
            try:  # the sources of new_n are rewritten
                src = tuple(map(done, new_n.src))
            except KeyError:  # a source is still waiting: retry later
                stack.appendleft((n, 1, new_n))
                waiting += 1
                continue
            if src == new_n.src:
                replace[n] = new_n
                continue
            result = new_uop(UOp, new_n.op, new_n.dtype, src, new_n.arg, new_n.tag)
            push((n, 2, result))
            push((result, 0, result))
        self.waiting = waiting

    def _general(self, stack: collections.deque[tuple[UOp, int, UOp]]) -> None:
        """The walk in every mode (bottom-up, traced, diagnosing a spent budget)."""
        replace, step = self.replace, self.step
        done = replace.__getitem__
        waiting = self.waiting  # consecutive deferrals with no progress between them
        while stack:
            n, stage, new_n = stack.pop()
            if n in replace:
                continue
            if stage == 0:
                if self.bottom_up:
                    self.at = n
                    new_n = self.fixed_point(n)
                # a source not yet rewritten is pushed even if an older entry waits deeper in
                # the stack: it is then done first, and the older entry is skipped when popped
                pending = False
                for s in reversed(new_n.src):  # a loop, not a comprehension: no frame per node
                    if s not in replace:
                        if not pending:
                            stack.append((n, 1, new_n))
                            pending = True
                        stack.append((s, 0, s))
                if pending:
                    continue
                stage = 1  # every source is done: go on at once (most nodes of a DAG)
            if stage == 1:
                try:
                    src = tuple(map(done, new_n.src))
                except KeyError:  # a source is still waiting: retry later
                    stack.appendleft((n, 1, new_n))
                    waiting += 1
                    continue
                if src == new_n.src:
                    if self.bottom_up:
                        replace[n] = new_n
                        continue
                    try:
                        self.at = n
                        result = step(new_n)
                    except RewriteNotReady:
                        waiting += 1
                        if waiting > len(stack) + 1:
                            raise RuntimeError(f"pass {self.name!r}: a rule deferred "
                                               f"(RewriteNotReady) on {new_n!r} and "
                                               "nothing else could make progress") from None
                        stack.appendleft((n, 1, new_n))
                        continue
                    if result is None:
                        replace[n] = new_n
                        waiting = 0
                        continue
                else:
                    result = new_uop(UOp, new_n.op, new_n.dtype, src, new_n.arg, new_n.tag)
                if self.trace is not None:  # the result's own rewrites are steps of n's
                    self.origins.setdefault(result, self.origins.get(n, n))
                stack.append((n, 2, result))
                stack.append((result, 0, result))
                continue
            linked = replace.get(new_n)
            if linked is None:
                stack.appendleft((n, 2, new_n))
                waiting += 1
                continue
            replace[n] = linked
            waiting = 0
        self.waiting = waiting


_table_masks: dict[int, tuple[Any, int]] = {}  # id(table) -> (table, the OP_BIT of its ops)


def _mask_of(table: Any) -> int:
    found = _table_masks.get(id(table))
    if found is None or found[0] is not table:
        found = _table_masks[id(table)] = (table, ops_mask(table))
    return found[1]


def _push_links(push: Any, links: list[UOp], last: UOp) -> None:
    """The stage-2 entries the general walk would hold for a chain links[0] -> ... -> last."""
    for i, x in enumerate(links):
        push((x, 2, links[i + 1] if i + 1 < len(links) else last))


def _per_node_budget() -> int:
    return env_int("RULEGRAD_REWRITE_BUDGET", PER_NODE_BUDGET, minimum=1)


def _budget_for(budget: int | None) -> int | None:
    if budget is not None and budget < 1:
        raise ValueError(f"a rewrite budget must be at least 1 rule firing, got {budget}")
    return budget


def graph_rewrite(sink: UOp, matcher: Any, ctx: Any = None, bottom_up: bool = False,
                  name: str | None = None, budget: int | None = None) -> UOp:
    """Rewrite `sink` with `matcher` to a fixed point; see the module docstring."""
    pass_name = name or getattr(matcher, "name", type(matcher).__name__)
    rw = _Rewriter(matcher, ctx, bottom_up, pass_name, _budget_for(budget))
    start = len(_tracer.firings) if _tracer is not None else 0
    out = rw.run(sink)
    _record_pass(rw, sink, out, start)
    return out


def _record_pass(rw: _Rewriter, before: UOp, after: UOp, start: int) -> None:
    if rw.trace is None:
        return
    rec = PassRecord(rw.name, rw.matcher, rw.ctx, before, after, start, len(rw.trace.firings),
                     ctx_before=rw.ctx_before, bottom_up=rw.bottom_up, replace=rw.replace)
    for f, at in rw.mine:
        f.final = rw.replace.get(at)
    if rw.stats0 is not None:
        st = rw.matcher.stats
        rec.attempts = [a - b for a, b in zip(st.attempts, rw.stats0[0])]
        rec.matches = [a - b for a, b in zip(st.matches, rw.stats0[1])]
    rw.trace.passes.append(rec)


def graph_rewrite_map(sink: UOp, matcher: Any, ctx: Any = None, bottom_up: bool = False,
                      name: str | None = None, budget: int | None = None,
                      input_map: dict[UOp, UOp] | None = None) -> dict[UOp, UOp]:
    """Like graph_rewrite, but return {every node reachable from sink: what it became}.

    With `input_map` (an earlier pass's map), the result maps the original nodes through both."""
    pass_name = name or getattr(matcher, "name", type(matcher).__name__)
    rw = _Rewriter(matcher, ctx, bottom_up, pass_name, _budget_for(budget))
    start = len(_tracer.firings) if _tracer is not None else 0
    _record_pass(rw, sink, rw.run(sink), start)
    new_map = {k: rw.replace.get(k, k) for k in toposort(sink)}
    if input_map is not None:
        return {k: new_map.get(v, v) for k, v in input_map.items()}
    return new_map
