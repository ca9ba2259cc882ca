"""Gradients by graph form: a gradient derived once per form, rebuilt over another graph's nodes.

In: a root, the gradient flowing into it, the targets, the gradient rules, and the function that
derives a gradient by them (runtime/autograd.py). Out: {target: gradient}, as that function
would give it.

A training loop that feeds a fresh batch each step builds a graph of other nodes each step (its
batch is another BUFFER), but of one form: the schedule cache's key (`schedule_cache.graph_key`:
every buffer a numbered slot; constants, args, dtypes and tags as they are). The rules see
nothing but that form (ops, dtypes, args, shapes, devices, which node is read where), so the
gradient of one graph of a form is the gradient of any other with its nodes put in place of the
first one's. The first graph of a form is derived by the rules, and the nodes its gradients add
are recorded as a template: per node its op, dtype, arg, tag and sources, each source a node of
the graph (by its position in the key's walk, the same in every graph of the form) or an earlier
template node. Another graph of the form builds the template's nodes over its own; hash-consing
makes them the very nodes the rules would have built. A template holds no node of the graph
and no buffer, so it keeps no batch alive.

A gradient that holds a BUFFER of its own or a variable's mark (which the key numbers by the
walk's order, not by identity) is not recorded: that form is derived every time. The rule set
(the matcher object) is part of the entry. Off with the schedule cache (RULEGRAD_SCHEDULE_CACHE=0,
tracing, RULEGRAD_SPEC, match statistics, the interpreted matcher): the rules run every time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from .matcher import RuleMatcher
from .ops import Ops
from .schedule_cache import enabled, graph_key
from .uop import VARIABLE_MARK, UOp, build_recorded, toposort

MAX_FORMS = 64

# A template: (entries, outs). entries: (op, dtype, arg, tag, source refs, shape) per node the
# gradients add, sources before users; a ref below the graph's node count n is the graph's node
# of that position, else the template's node ref - n. outs: (target position, ref) per target
# reached.
_Template = tuple[tuple[tuple, ...], tuple[tuple[int, int], ...]]
_forms: OrderedDict[int, tuple[tuple, RuleMatcher, _Template | None]] = OrderedDict()
_lock = threading.Lock()
stats = {"rebuilt": 0, "derived": 0}

Derive = Callable[[UOp, UOp, list[UOp], "list[UOp] | None", RuleMatcher], dict[UOp, UOp]]


def gradient_by_form(root: UOp, root_grad: UOp, targets: list[UOp], order: list[UOp] | None,
                     rules: RuleMatcher, derive: Derive) -> dict[UOp, UOp]:
    """`derive(root, root_grad, targets, order, rules)`, or its template for the form of the
    graph of root, root_grad and targets rebuilt over this graph's nodes."""
    if not enabled():
        return derive(root, root_grad, targets, order, rules)
    nodes: list[UOp] = []
    key, _, _ = graph_key([root, root_grad, *targets], nodes=nodes)
    h = hash(key)
    with _lock:
        got = _forms.get(h)
        if got is not None and got[0] == key and got[1] is rules:
            _forms.move_to_end(h)
            template = got[2]
        else:
            got = None
    if got is not None and template is not None:
        stats["rebuilt"] += 1
        return _rebuild(template, nodes, targets)
    stats["derived"] += 1
    grads = derive(root, root_grad, targets, order, rules)
    if got is None:  # (a form known not to record is not tried again)
        with _lock:
            _forms[h] = (key, rules, _record(grads, nodes, targets))
            _forms.move_to_end(h)
            if len(_forms) > MAX_FORMS:
                _forms.popitem(last=False)
    return grads


def _record(grads: dict[UOp, UOp], nodes: list[UOp], targets: list[UOp]) -> _Template | None:
    """The template of `grads` over the graph whose nodes, in the key's order, are `nodes`;
    None when a node it adds is a BUFFER or carries a variable's mark."""
    ref = {n: i for i, n in enumerate(nodes)}
    entries: list[tuple] = []
    known = ref.__contains__
    outs = []
    for i, t in enumerate(targets):
        g = grads.get(t)
        if g is None:
            continue
        for n in toposort(g, stop=known):
            tag = n.tag
            if n.op is Ops.BUFFER or type(tag) is tuple and tag and tag[0] == VARIABLE_MARK:
                return None
            entries.append((n.op, n.dtype, n.arg, tag, tuple([ref[s] for s in n.src]), n.shape))
            ref[n] = len(ref)
        outs.append((i, ref[g]))
    return tuple(entries), tuple(outs)


def _rebuild(template: _Template, nodes: list[UOp], targets: list[UOp]) -> dict[UOp, UOp]:
    """The template's gradients over `nodes` (this graph's, in the key's order)."""
    entries, outs = template
    built = nodes  # (the caller's list, grown by the template's nodes: refs index it)
    build_recorded(entries, built)
    return {targets[i]: built[r] for i, r in outs}
