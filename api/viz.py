"""`rulegrad viz`: record a program's rewrite passes and write a page that shows them.

In: a Python script (or a built-in example) that builds and realizes tensors. Out: one static
HTML file (no server, no network) holding the trace as JSON and the viewer (`viz.html`) that
draws it: every pass with its graph before and after (SVG), every firing (rule, `file:line`,
source text, the node it matched and the node it made), per-rule statistics with zero attempts
included, and for a node and a rule of its pass, why the rule did not fire (the first failing
test of its decision tree, from `generator/explain.py`, computed here and stored in the page).

The recording runs the program in this process under `tracing()` (which the schedule cache
steps aside for, so every realize runs its passes).
"""

from __future__ import annotations

import json
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rulegrad.runtime.rewrite import PassRecord, RuleInfo, Tracer, tracing
from rulegrad.runtime.uop import UOp

TEMPLATE = Path(__file__).with_name("viz.html")
WHY_LIMIT = 60_000  # explanations stored per page; past it the page says so


class _Table:
    """Nodes numbered in first-seen order, each stored once; sources before their users."""

    def __init__(self) -> None:
        self.ids: dict[UOp, int] = {}
        self.rows: list[list[Any]] = []

    def add(self, root: UOp) -> int:
        # iterative post-order: a node's sources get their numbers first
        stack: list[tuple[UOp, bool]] = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if node in self.ids:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((s, False) for s in reversed(node.src) if s not in self.ids)
                continue
            self.ids[node] = len(self.rows)
            self.rows.append([node.op.name, node.dtype.name, _short(node.arg),
                              [self.ids[s] for s in node.src], _short(node.tag)])
        return self.ids[root]


def _short(value: Any, limit: int = 80) -> str | None:
    if value is None:
        return None
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def record(program: Callable[[], Any]) -> Tracer:
    """Run `program` with every pass and firing recorded (the schedule cache steps aside while
    tracing is on, so every realize runs its passes)."""
    with tracing() as trace:
        program()
    return trace


def trace_data(trace: Tracer, title: str, why_limit: int = WHY_LIMIT) -> dict[str, Any]:
    """The trace as plain JSON data (the page's input; see viz.html for how it is read)."""
    from rulegrad.generator.explain import RuleIndex, explain
    from rulegrad.generator.match_ir import root_ops

    nodes = _Table()
    rules: dict[RuleInfo, int] = {}

    def rule_id(info: RuleInfo | None) -> int:
        if info is None:
            info = RuleInfo("(a Python matcher)")
        if info not in rules:
            rules[info] = len(rules)
        return rules[info]

    passes: list[dict[str, Any]] = []
    for p in trace.passes:
        passes.append({"name": p.name, "before": nodes.add(p.before), "after": nodes.add(p.after),
                       "firings": [p.start, p.end],
                       "rules": [rule_id(r) for r in getattr(p.matcher, "rules", ())],
                       "attempts": p.attempts, "matches": p.matches})
    # a pass run inside another (a helper's nested pass) is recorded first, as it ends first:
    # each firing belongs to the innermost pass whose range holds it
    owner = [-1] * len(trace.firings)
    for k, p in enumerate(trace.passes):
        for i in range(p.start, p.end):
            if owner[i] < 0:
                owner[i] = k
    firings = [[rule_id(f.rule), nodes.add(f.before), nodes.add(f.after), owner[i]]
               for i, f in enumerate(trace.firings)]
    texts: dict[str, int] = {}
    why: dict[str, int] = {}
    index = RuleIndex()
    for k, p in enumerate(trace.passes):
        infos = getattr(p.matcher, "rules", ())
        checked = [(rule_id(i), index.rule(i)) for i in infos]
        per_op = [(rid, rc, root_ops(rc[0].pattern)) for rid, rc in checked if rc is not None]
        for node in _after_nodes(p):
            for rid, (rule, helpers), ops in per_op:
                if node.op not in ops:
                    continue  # the page says "wrong root op" by itself
                if len(why) >= why_limit:
                    break
                text = str(explain(rule, helpers, node, p.ctx))
                why[f"{k}:{nodes.ids[node]}:{rid}"] = texts.setdefault(text, len(texts))
    roots = {}
    for info in rules:
        found = index.rule(info)
        roots[info] = None if found is None else sorted(op.name for op in
                                                        root_ops(found[0].pattern))
    return {"title": title, "nodes": nodes.rows, "passes": passes, "firings": firings,
            "rules": [[r.name, r.location, r.text, roots[r]] for r in rules],
            "why": why, "why_text": list(texts), "why_complete": len(why) < why_limit}


def _after_nodes(p: PassRecord) -> list[UOp]:
    return p.after.toposort()


def render_html(data: dict[str, Any]) -> str:
    """The viewer page with `data` embedded (`</` escaped so no string ends the script)."""
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return TEMPLATE.read_text(encoding="utf-8").replace("/*TRACE_JSON*/", payload, 1)


# ---------------------------------------------------------------------- programs to record
def _example(name: str) -> Callable[[], Any]:
    from rulegrad.runtime.demo import _blocks

    blocks = {b.name.split()[0]: b for b in _blocks()}  # "mlp", "attention"
    if name not in blocks:
        raise SystemExit(f"rulegrad viz: unknown example {name!r}; choose from "
                         f"{', '.join(sorted(blocks))}")
    return lambda: blocks[name].build().numpy()  # type: ignore[attr-defined]


def _script(path: str, script_args: tuple[str, ...] = ()) -> Callable[[], Any]:
    if not Path(path).is_file():
        raise SystemExit(f"rulegrad viz: no such script: {path}")

    def run() -> None:
        saved = sys.argv
        sys.argv = [path, *script_args]
        try:
            runpy.run_path(path, run_name="__main__")
        finally:
            sys.argv = saved
    return run


def run_viz(script: str | None, example: str | None, out: str, open_page: bool,
            script_args: tuple[str, ...] = ()) -> int:
    program = (_example(example) if example
               else _script(script, script_args))  # type: ignore[arg-type]
    try:
        trace = record(program)
    except Exception as e:  # the user's program failed: say so, as its own error, not ours
        print(f"rulegrad viz: {script or example} raised {type(e).__name__}: {e}",
              file=sys.stderr)
        return 1
    data = trace_data(trace, example or Path(script or "").name)
    Path(out).write_text(render_html(data), encoding="utf-8")
    print(f"{out}: {len(data['passes'])} passes, {len(data['firings'])} firings, "
          f"{len(data['nodes'])} nodes, {len(data['rules'])} rules"
          + ("" if data["why_complete"] else f" (why-not stored for the first {WHY_LIMIT})"))
    if open_page:
        import webbrowser

        webbrowser.open(Path(out).resolve().as_uri())
    return 0
