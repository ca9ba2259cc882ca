"""`rulegrad viz`: record a program's rewrite passes and write a page that shows them.

In: a Python script (or a built-in example) that builds and realizes tensors. Out: one static
HTML file (no server, no network) holding the trace as JSON and the viewer (`viz.html`) that
draws it: every pass with its graph before and after (SVG), every firing (rule, `file:line`,
source text, the node it matched and the node it made, each drawn in context: under the input
node it is a step of rewriting, and the output node it became), per-rule statistics with zero
attempts included, and for a node and a rule of its pass, why the rule did not fire (the first
failing test of its decision tree, from `generator/explain.py`, computed here and stored in the
page). docs/viewer.md describes the page.

The recording runs the program in this process under `tracing()` (which the schedule cache
steps aside for, so every realize runs its passes).
"""

from __future__ import annotations

import json
import runpy
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

from rulegrad.runtime.ops import Ops
from rulegrad.runtime.rewrite import RuleInfo, Tracer, tracing
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
            row = [node.op.name, node.dtype.name, None, [self.ids[s] for s in node.src],
                   None if node.tag is None else _text(node.tag, self)]
            self.rows.append(row)
            # after the node has its number: an arg may name nodes (an ASSIGN's ranges)
            row[2] = _arg_text(node, self)
        return self.ids[root]


ARG_LIMIT = 2_000  # characters of one arg's text stored; the page shows all of them


def _arg_text(node: UOp, table: _Table) -> str | None:
    """A node's arg as a reader wants it: a RANGE's number and kind (`loop r1`; the scheduler's
    ranges, numbered from FIRST_RANGE, as `loop R1`), nodes as `#id OP`, names not addresses."""
    from rulegrad.rules.rangeify_helpers import FIRST_RANGE

    arg = node.arg
    if arg is None:
        return None
    if (node.op is Ops.RANGE and isinstance(arg, tuple) and len(arg) == 2
            and isinstance(arg[0], int) and isinstance(arg[1], str)):
        n, kind = arg
        return f"{kind} R{n - FIRST_RANGE}" if n >= FIRST_RANGE else f"{kind} r{n}"
    return _text(arg, table)


def _text(value: Any, table: _Table) -> str:
    text = _value_text(value, table, 0)
    return text if len(text) <= ARG_LIMIT else text[:ARG_LIMIT] + f"... ({len(text)} chars)"


def _value_text(value: Any, table: _Table, depth: int) -> str:
    # recursion over the nesting of one arg (a few levels), never over the graph: a node in
    # an arg is named by its number
    if isinstance(value, UOp):
        return f"#{table.add(value)} {value.op.name}"
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)) and depth < 6:
        inner = ", ".join(_value_text(v, table, depth + 1) for v in value)
        return f"({inner}{',' if len(value) == 1 and isinstance(value, tuple) else ''})" \
            if isinstance(value, tuple) else f"[{inner}]"
    text = repr(value)
    if " object at 0x" in text:  # a default repr: the type and its name say more
        name = getattr(value, "name", None)
        return f"{type(value).__name__}({name})" if isinstance(name, str) else \
            type(value).__name__
    return text


def record(program: Callable[[], Any]) -> Tracer:
    """Run `program` with every pass and firing recorded (the schedule cache steps aside while
    tracing is on, so every realize runs its passes)."""
    with tracing() as trace:
        program()
    return trace


def trace_data(trace: Tracer, title: str, why_limit: int = WHY_LIMIT,
               node_ids: dict[UOp, int] | None = None) -> dict[str, Any]:
    """The trace as plain JSON data (the page's input; see viz.html for how it is read).
    `node_ids`, if given, is filled with each node's number in the data."""
    from rulegrad.generator.explain import RuleIndex, explain
    from rulegrad.generator.match_ir import root_ops

    nodes = _Table()
    rules: dict[RuleInfo, int] = {}
    sources: dict[RuleInfo, RuleInfo] = {}  # a rule -> the same rule with its file's real path

    def rule_id(info: RuleInfo | None, matcher: Any = None) -> int:
        if info is None:
            info = RuleInfo("(a Python matcher)")
        if info not in rules:
            rules[info] = len(rules)
        if info not in sources and matcher is not None:
            sources[info] = _located(info, matcher)
        return rules[info]

    passes: list[dict[str, Any]] = []
    for p in trace.passes:
        passes.append({"name": p.name, "before": nodes.add(p.before), "after": nodes.add(p.after),
                       "firings": [p.start, p.end],
                       "rules": [rule_id(r, p.matcher) for r in getattr(p.matcher, "rules", ())],
                       "attempts": p.attempts, "matches": p.matches})
    # a pass run inside another (a helper's nested pass) is recorded first, as it ends first:
    # each firing belongs to the innermost pass whose range holds it
    owner = [-1] * len(trace.firings)
    for k, p in enumerate(trace.passes):
        for i in range(p.start, p.end):
            if owner[i] < 0:
                owner[i] = k
    firings = [[rule_id(f.rule), nodes.add(f.before), nodes.add(f.after), owner[i],
                -1 if f.origin is None else nodes.add(f.origin),
                -1 if f.final is None else nodes.add(f.final), 0]
               for i, f in enumerate(trace.firings)]
    _place_in_input(firings, passes, nodes.rows)
    _place_in_output(firings, trace.passes, nodes)
    _label_kernels(passes, nodes, [f.after for f in trace.firings])
    texts: dict[str, int] = {}
    why: dict[str, int] = {}
    index = RuleIndex()
    for k, p in enumerate(trace.passes):
        infos = getattr(p.matcher, "rules", ())
        checked = [(rule_id(i), index.rule(sources.get(i, i))) for i in infos]
        per_op = [(rid, rc, root_ops(rc[0].pattern)) for rid, rc in checked if rc is not None]
        for node in p.after.toposort():
            for rid, (rule, helpers), ops in per_op:
                if node.op not in ops:
                    continue  # the page says "wrong root op" by itself
                if len(why) >= why_limit:
                    break
                text = str(explain(rule, helpers, node, p.ctx))
                why[f"{k}:{nodes.ids[node]}:{rid}"] = texts.setdefault(text, len(texts))
    if node_ids is not None:
        node_ids.update(nodes.ids)
    roots = {}
    for info in rules:
        found = index.rule(sources.get(info, info))
        roots[info] = None if found is None else sorted(op.name for op in
                                                        root_ops(found[0].pattern))
    return {"title": title, "nodes": nodes.rows, "passes": passes, "firings": firings,
            "rules": [[r.name, _where(sources.get(r, r)), r.text, roots[r]] for r in rules],
            "why": why, "why_text": list(texts), "why_complete": len(why) < why_limit}


def _located(info: RuleInfo, matcher: Any) -> RuleInfo:
    """`info` with a path the checker can open. A generated module names a user's rules file
    relative to the module's own folder (`../my.rules`; `rules/X.rules` when the module sits
    above a folder `rules/`), and the module's globals (the matcher's counter homes) know where
    that folder is: that file is the rule's, even if the package has a file of the same name.
    Otherwise the path is the package's (`rules/X.rules`), absolute, or relative to the working
    folder (an interpreted rule set)."""
    if Path(info.path).is_absolute():
        return info
    for space, _var, _name, infos in getattr(matcher, "homes", ()):
        module = space.get("__file__") if isinstance(space, dict) else None
        if module and info in infos:
            path = Path(module).parent / info.path
            if path.is_file():
                return RuleInfo(info.name, str(path.resolve()), info.line, info.text)
    return info


def _where(info: RuleInfo) -> str:
    """A rule's `file:line` as the page shows it: package rules as `rules/X.rules`, a user's
    file relative to the working folder when under it (else its full path)."""
    path = Path(info.path)
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        return f"{path.relative_to(Path.cwd()).as_posix()}:{info.line}"
    return info.location


def _place_in_input(firings: list[list[int]], passes: list[dict[str, Any]],
                    rows: list[list[Any]]) -> None:
    """Make each firing's origin (row[4]) a node of its pass's input graph where there is one:
    a node a rule made inside another firing's result stands for that firing's origin."""
    by_pass: dict[int, list[list[int]]] = {}
    for row in firings:
        by_pass.setdefault(row[3], []).append(row)
    for k, rows_k in by_pass.items():
        if k < 0:
            continue
        inputs = _reach(passes[k]["before"], rows)
        made_in: dict[int, int] = {}  # a node new in this pass -> the made node holding it
        origin_of: dict[int, int] = {}  # a made node -> its firing's origin
        for row in rows_k:
            made, origin = row[2], row[4]
            origin_of.setdefault(made, origin)
            stack = [made]
            while stack:  # the nodes this firing made (new ones, not seen before)
                for s in rows[stack.pop()][3]:
                    if s not in inputs and s not in made_in and s not in origin_of:
                        made_in[s] = made
                        stack.append(s)
        resolved: dict[int, int] = {}  # a node -> the input node it stands for, or -1
        for row in rows_k:
            path, o = {}, row[4]  # (a dict: ordered, and a cycle is found at once)
            while o >= 0 and o not in inputs and o not in resolved and o not in path:
                path[o] = None
                if origin_of.get(o, o) != o:  # a made node: its firing's origin
                    o = origin_of[o]
                elif o in made_in:  # a node made inside a firing's result: that firing's
                    o = origin_of.get(made_in[o], -1)
                else:
                    o = -1
            end = resolved.get(o, o if o in inputs else -1)
            for x in path:  # each node is followed once over the whole pass
                resolved[x] = end
            row[4] = end


def _place_in_output(firings: list[list[int]], records: list[Any], nodes: _Table) -> None:
    """A firing's result that a rewrite of its users absorbed (ADD(MULTI, MULTI) -> MULTI(ADD))
    is in no output graph: its place there is what its nearest user in the input became.
    Such a firing's final (row[5]) becomes that output node, and row[6] says so."""
    uops = list(nodes.ids)  # a node's number is its position
    outs: dict[int, set[UOp]] = {}
    anchors: dict[int, dict[UOp, UOp]] = {}
    for row in firings:
        k, origin, final = row[3], row[4], row[5]
        if k < 0 or origin < 0:
            continue
        p = records[k]
        if k not in outs:
            outs[k] = set(p.after.toposort())
        if final >= 0 and uops[final] in outs[k]:
            continue
        if k not in anchors:  # only for a pass that absorbed a result
            anchors[k] = _anchors(p.before, p.replace, outs[k])
        found = anchors[k].get(uops[origin])
        if found is not None and found is not uops[final]:
            row[5], row[6] = nodes.add(found), 1


def _anchors(before: UOp, replace: dict[UOp, UOp], out: set[UOp]) -> dict[UOp, UOp]:
    """Each input node's place in the output: what it became, if that is in the output, else
    its nearest user's (users are visited before their sources)."""
    anchor: dict[UOp, UOp] = {}
    for u in reversed(before.toposort()):
        own = replace.get(u)
        if own is not None and own in out:
            anchor[u] = own
        if u in anchor:
            for s in u.src:
                anchor.setdefault(s, anchor[u])
    return anchor


def _reach(root: int, rows: list[list[Any]]) -> set[int]:
    seen, stack = {root}, [root]
    while stack:
        for s in rows[stack.pop()][3]:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen


def _label_kernels(passes: list[dict[str, Any]], nodes: _Table, made: list[UOp]) -> None:
    """Name the kernel each pass works on (`label`) and number repeated passes (`run`, `runs`).

    A kernel's AST is the output of its `to_kernel` pass and the input of its `lower`, whose
    output `opt` reads: passes chained by their graphs work on one AST, named by the KERNEL
    node that holds it (its arg's name, as the C backend names the function). Kernels are
    numbered in the order firings made them (`made`: the firings' results). Two kernels may
    have one AST (the same loops on other buffers): then the k-th run of a pass on that AST is
    the k-th of those kernels when the counts agree, and otherwise the label names them all."""
    parent = list(range(len(nodes.rows)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in passes:
        parent[find(p["before"])] = find(p["after"])
    kernels: dict[UOp, None] = {}  # KERNEL nodes in the order made, then any others
    for node in [*made, *(s for m in made for s in m.src), *nodes.ids]:
        if node.op is Ops.KERNEL and isinstance(getattr(node.arg, "name", None), str) \
                and getattr(node.arg, "ast", None) in nodes.ids:
            kernels.setdefault(node, None)
    by_ast: dict[int, list[str]] = {}  # a component -> "kernel N name" of its kernels
    for n, node in enumerate(kernels):
        by_ast.setdefault(find(nodes.ids[node.arg.ast]), []).append(
            f"kernel {n} {node.arg.name}")
    runs: dict[tuple[int, str], int] = {}
    for p in passes:
        root = find(p["before"])
        runs[(root, p["name"])] = runs.get((root, p["name"]), 0) + 1
    seen: dict[tuple[int, str], int] = {}
    for p in passes:
        root = find(p["before"])
        names = by_ast.get(root)
        k = seen[(root, p["name"])] = seen.get((root, p["name"]), 0) + 1
        if names is None:
            p["label"] = None
        elif len(names) == runs[(root, p["name"])]:
            p["label"] = names[k - 1]
        else:
            p["label"] = "; ".join(names)
    count: dict[tuple[str, str | None], int] = {}
    for p in passes:
        key = (p["name"], p["label"])
        count[key] = p["run"] = count.get(key, 0) + 1
    for p in passes:
        p["runs"] = count[(p["name"], p["label"])]


def render_html(data: dict[str, Any]) -> str:
    """The viewer page with `data` embedded. Every `<`, `>` and `&` of the JSON is written as a
    \\u escape (as are U+2028 and U+2029): no file name or rule text can end the script tag,
    open a comment (`<!--`) or put the parser in a script-in-script state."""
    payload = json.dumps(data, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        payload = payload.replace(ch, esc)
    template = TEMPLATE.read_text(encoding="utf-8")
    head, marker, tail = template.partition("/*TRACE_JSON*/")
    return head + payload + tail


# ---------------------------------------------------------------------- programs to record
def _example(name: str) -> Callable[[], Any]:
    from rulegrad.tools.demo import demo_blocks

    blocks = {b.name.split()[0]: b for b in demo_blocks()}  # "mlp", "attention"
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
