"""Run a pipeline declared in a `.rules` file (LANGUAGE.md, "Pipelines").

In: a `Pipeline` (built from a `pipeline NAME { pass ... }` block by the generated module of its
rules file, or by the interpreted matcher) and a graph. Out: the graph after every pass, and
each pass's context.

Each pass is one `graph_rewrite` of its rule set, in its direction, with its context:
- `ctx=Class`: a new context per run of the pipeline, `Class.start(graph)` when the class has
  it (a context that starts from what it sees; None: it saw nothing to do, and the pass does
  not run), else `Class()`; `ctx=other_pass` shares the
  context of that earlier pass (a pass that collects, then one that acts on what was collected);
- `until_settled`: after each run, `ctx.again()` is the next run's context, or None once a
  rerun would change nothing;
- `collect`: the pass only fills its context; the graph goes on as it was before the pass;
- `spec=STAGE`: with RULEGRAD_SPEC=1 the result is verified as that stage (runtime/spec.py).

Users' rule sets (runtime/schedule.py's `add_rules`) run beside passes through `hook`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .env import env_flag
from .record import FrozenRecord
from .rewrite import graph_rewrite
from .uop import UOp

# (when, pass name, graph) -> graph: what runs "before" or "after" a pass (users' passes)
Hook = Callable[[str, str, UOp], UOp]


class Pass(FrozenRecord):
    """One declared pass: `matcher` is its rule set's (`rules` names it)."""

    __slots__ = ("name", "rules", "matcher", "bottom_up", "ctx", "until_settled", "collect",
                 "spec", "location")
    name: str
    rules: str
    matcher: Any
    bottom_up: bool
    ctx: type | str | None  # a context class, or the pass whose context is shared
    until_settled: bool
    collect: bool
    spec: str | None
    location: str  # `file:line` of the declaration

    def __init__(self, name: str, rules: str, matcher: Any, bottom_up: bool = False,
                 ctx: type | str | None = None, until_settled: bool = False,
                 collect: bool = False, spec: str | None = None, location: str = ""):
        self._init(name, rules, matcher, bottom_up, ctx, until_settled, collect, spec, location)


@dataclass(frozen=True)
class Pipeline:
    name: str
    passes: tuple[Pass, ...]

    @property
    def stages(self) -> tuple[str, ...]:
        """The passes users' rule sets may run beside (not the ones that only collect)."""
        return tuple(p.name for p in self.passes if not p.collect)

    def __call__(self, sink: UOp) -> tuple[UOp, Any]:
        """A pipeline called from a rule: the result, and the context of its last pass."""
        out, ctxs = self.run(sink)
        return out, ctxs.get(self.passes[-1].name) if self.passes else None

    def run(self, sink: UOp, hook: Hook | None = None, inputs: dict[str, UOp] | None = None
            ) -> tuple[UOp, dict[str, Any]]:
        """The graph after every pass, and each pass's context by pass name (`inputs`, when
        given, gets the graph each pass started from)."""
        ctxs: dict[str, Any] = {}
        before = self._before_anchors if hook is not None else {}
        # read once per run, not once per pass (and not at all when no pass names a stage)
        spec = self._checks_spec and env_flag("RULEGRAD_SPEC")
        for i, p in enumerate(self.passes):
            for name in before.get(i, ()):
                sink = hook("before", name, sink)  # type: ignore[misc]
            if inputs is not None:
                inputs[p.name] = sink
            out = self._run_pass(p, sink, ctxs, spec)
            if not p.collect:
                sink = out
                if hook is not None:
                    sink = hook("after", p.name, sink)
        return sink, ctxs

    @functools.cached_property
    def _checks_spec(self) -> bool:
        return any(p.spec is not None for p in self.passes)

    @functools.cached_property
    def _before_anchors(self) -> dict[int, list[str]]:
        """Where the users' passes "before P" run: before P, or, when P acts on a context
        earlier passes filled, before the first of those (they read the same graph)."""
        index = {p.name: i for i, p in enumerate(self.passes)}
        out: dict[int, list[str]] = {}
        for i, p in enumerate(self.passes):
            if p.collect:
                continue
            j = i
            while isinstance(self.passes[j].ctx, str):
                j = index[self.passes[j].ctx]
            out.setdefault(j, []).append(p.name)
        return out

    def _run_pass(self, p: Pass, sink: UOp, ctxs: dict[str, Any], spec: bool) -> UOp:
        if isinstance(p.ctx, str):
            ctx = ctxs[p.ctx]
        elif p.ctx is not None:
            start = getattr(p.ctx, "start", None)
            ctx = start(sink) if start is not None else p.ctx()
            if ctx is None:  # nothing to do in this graph (a whole walk of the engine saved)
                ctxs[p.name] = None
                return sink
        else:
            ctx = None
        while True:
            out = graph_rewrite(sink, p.matcher, ctx=ctx, bottom_up=p.bottom_up, name=p.name)
            if p.spec is not None and spec:
                from .spec import verify

                verify(out, p.spec, p.name)
            nxt = ctx.again() if p.until_settled else None
            if nxt is None:
                break
            ctx = nxt
        ctxs[p.name] = ctx
        return out
