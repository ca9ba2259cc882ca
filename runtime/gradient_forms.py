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

The key is numbered from backward's walk of the loss (no second walk), with its floats lifted
as the schedule cache lifts them (their values are part of this key). That walk, gone on with
the gradient's nodes in the template's order, is handed to the schedule cache: the optimizer
step realized next keys its schedule by walking only what its update adds
(`schedule_cache.note_step`).

A gradient that holds a BUFFER of its own or a variable's mark (which the key numbers by the
walk's order, not by identity) is not recorded: that form is derived every time. The rule set
(the matcher object) is part of the entry. Off with the schedule cache (RULEGRAD_SCHEDULE_CACHE=0,
tracing, RULEGRAD_SPEC, match statistics, the interpreted matcher): the rules run every time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from . import float_params
from .matcher import RuleMatcher
from .ops import Ops
from .schedule_cache import KeyWalk, enabled, go_on, note_step
from .uop import VARIABLE_MARK, UOp, build_recorded, toposort

MAX_FORMS = 64

# A template: (entries, outs). entries: (op, dtype, arg, tag, source refs, shape) per node the
# gradients add, sources before users; a ref below the graph's node count n is the graph's node
# of that position, else the template's node ref - n. outs: (target position, ref) per target
# reached.
_Template = tuple[tuple[tuple, ...], tuple[tuple[int, int], ...]]
# A form's entry: (key, rules, template or None, the key entries and lifted floats the
# template's nodes add to the walk and whether that walk lifted floats, or None when one was a
# node of the graph)
_forms: OrderedDict[int, tuple[tuple, RuleMatcher, _Template | None, tuple | None]] = \
    OrderedDict()
_lock = threading.Lock()
stats = {"rebuilt": 0, "derived": 0}

Derive = Callable[[UOp, UOp, list[UOp], "list[UOp] | None", RuleMatcher], dict[UOp, UOp]]


def key_walk(root: UOp) -> KeyWalk | None:
    """The key's walk of root's graph, whose nodes (`walk.index`, sources before users) are
    backward's order too: one walk of the loss where a toposort and then the key's walk over it
    were two (`gradient_by_form` goes on with it). None with the schedule cache off."""
    if not enabled():
        return None
    # (floats lifted as the schedule's key lifts them, their values kept in the gradient's key:
    # a gradient's template holds the values it was derived with)
    walk = KeyWalk(float_params.enabled())
    go_on(walk, [root])
    return walk


def gradient_by_form(root: UOp, root_grad: UOp, targets: list[UOp], order: list[UOp] | None,
                     rules: RuleMatcher, derive: Derive, walk: KeyWalk | None = None
                     ) -> dict[UOp, UOp]:
    """`derive(root, root_grad, targets, order, rules)`, or its template for the form of the
    graph of root, root_grad and targets rebuilt over this graph's nodes. `order`: root's graph
    in `toposort` order when the caller walked it, for `derive`. `walk`: `key_walk(root)`, gone
    on with here (no second pass); without one, root's graph is walked as `key_walk` walks it
    (one form, one key, whichever way the graph came). The key's walk, gone on with the
    gradient's nodes, is handed to the schedule cache for the optimizer step that follows
    (`note_step`): that step's key walks only what the update adds."""
    if walk is None and not enabled():  # (a walk is made only while enabled)
        return derive(root, root_grad, targets, order, rules)
    roots = [root, root_grad, *targets]
    if walk is None or root not in walk.index:
        # root's graph walked as `key_walk` walks it, not numbered in `order`: a toposort
        # numbers a graph otherwise (its sources first to last, the walk's last to first), and
        # `gradient()` or a loss realized before backward would key one form twice, each
        # derived by the rules and kept as a template of its own
        walk = KeyWalk(float_params.enabled())
        go_on(walk, [root])
    go_on(walk, roots)  # (root_grad, a new constant, and any target outside root's graph)
    # the targets in the walk's order (backward finds them in a weak set, in no fixed order):
    # one form, one key and one template, whose nodes the step's key goes on with in one order
    targets = sorted(targets, key=walk.index.__getitem__)
    roots = [root, root_grad, *targets]
    key = (walk.key(roots), tuple([v.hex() for _, v in walk.floats]))
    nodes = list(walk.index)
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
        n = len(nodes)
        grads = _rebuild(template, nodes, targets)
        added = nodes[n:]
        keyed = got[3]
        index = walk.index
        if keyed is not None and keyed[2] is walk.lift and index.keys().isdisjoint(added):
            # the key's entries of the template's nodes, as the first graph's walk made them:
            # entries, slots and lifted floats are numbered by the key alone, the same in every
            # graph of it (no walk, no entry made per node), if the walk lifts floats as that
            # one did (RULEGRAD_FLOAT_PARAMS switched between steps: a float the template adds,
            # exp2's ln 2, is ("float", slot) in one walk and its value in the other)
            index.update(zip(added, range(n, n + len(added))))
            walk.entries.extend(keyed[0])
            walk.floats.extend(keyed[1])
        else:  # (a template node that is a node of the graph: numbered by the walk)
            go_on(walk, [], added)  # (the template's nodes, in its order: no walk)
        _note(walk)
        return grads
    stats["derived"] += 1
    grads = derive(root, root_grad, targets, order, rules)
    recorded = _record(grads, list(nodes), targets) if got is None else None
    keyed = None
    if recorded is not None:  # the gradient's nodes in the template's order, as a rebuild
        built = list(nodes)  # gives them: the step's key is the same from the next step on
        build_recorded(recorded[0], built)
        n, n_floats = len(walk.entries), len(walk.floats)
        go_on(walk, [], built[len(nodes):])
        if len(walk.entries) == len(built):  # (each a new node: their entries are the form's)
            keyed = (tuple(walk.entries[n:]), tuple(walk.floats[n_floats:]), walk.lift)
    else:
        go_on(walk, [g for t in targets if (g := grads.get(t)) is not None])
    if got is None:  # (a form known not to record is not tried again)
        with _lock:
            _forms[h] = (key, rules, recorded, keyed)
            _forms.move_to_end(h)
            if len(_forms) > MAX_FORMS:
                _forms.popitem(last=False)
    _note(walk)
    return grads


def _note(walk: KeyWalk) -> None:
    """Hand the walk to the step that follows (`note_step`) when every buffer in it holds data
    (a slot's key says whether it is allocated, which an unallocated one may be by the step);
    else none, not an older one."""
    for b in walk.buffers:
        if b.data is None:
            note_step(None)
            return
    note_step(walk)


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
