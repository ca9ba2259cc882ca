"""The rewrite engine against hand-written matchers: order, memoisation, depth, budget, defer."""

import sys

import pytest

from rulegrad import Ops, UOp, dtypes, graph_rewrite, graph_rewrite_map
from rulegrad.runtime.rewrite import RewriteBudgetError, RewriteNotReady, RuleInfo


class Fn:
    """A matcher from a function, for tests."""

    def __init__(self, fn):
        self.fn = fn

    def rewrite(self, u, ctx=None):
        return self.fn(u, ctx)


class TableFn(Fn):
    """The same through an op table, as generated matchers have: graph_rewrite's top-down walk
    calls the table in place (the general walk, through `rewrite`, is the one above)."""

    def __init__(self, fn):
        super().__init__(fn)

        def call(u, ctx):
            new = fn(u, ctx)
            return None if new is None else (new, None)

        self.table = dict.fromkeys(Ops, call)


WALKS = pytest.mark.parametrize("walk", [Fn, TableFn], ids=["general", "top_down"])


def neg_chain(n):
    node = UOp.const(dtypes.int32, 7)
    for _ in range(n):
        node = UOp(Ops.NEG, dtypes.int32, (node,))
    return node


def double_neg(u, ctx):
    if u.op is Ops.NEG and u.src[0].op is Ops.NEG:
        return u.src[0].src[0]
    return None


def test_hash_consing_and_replace():
    a = UOp.const(dtypes.int32, 1)
    assert UOp.const(dtypes.int32, 1) is a
    assert a.replace() is a
    assert a.replace(arg=2) is UOp.const(dtypes.int32, 2)
    assert UOp.const(dtypes.float32, 0.0) is not UOp.const(dtypes.float32, -0.0)
    nan = float("nan")
    assert UOp.const(dtypes.float32, nan) is UOp.const(dtypes.float32, float("nan"))


@pytest.mark.parametrize("walk,bottom_up", [(Fn, False), (TableFn, False), (TableFn, True)],
                         ids=["general", "top_down", "bottom_up"])
def test_a_chain_far_past_the_recursion_limit_is_walked(walk, bottom_up):
    # 100,000 nodes, ten times the most recursion the test allows, on the walks every pass
    # without tracing takes and the general one, for traced passes: a recursive walk fails here
    # as it does at a million (seen: one recursive depth count in _top_down and _bottom_up), and
    # the million cost ~5 CPU-s a walk to settle the same question
    assert sys.getrecursionlimit() <= 10_000
    chain = neg_chain(100_000)
    out = graph_rewrite(chain, walk(double_neg), bottom_up=bottom_up)
    assert out is UOp.const(dtypes.int32, 7)  # an even number of negations cancels


@WALKS
def test_top_down_rewrites_sources_first(walk):
    seen = []

    def log(u, ctx):
        seen.append(u.op)
        return None

    x = UOp.const(dtypes.int32, 1)
    graph_rewrite(UOp(Ops.EXP2, dtypes.int32, (UOp(Ops.NEG, dtypes.int32, (x,)),)), walk(log))
    assert seen == [Ops.CONST, Ops.NEG, Ops.EXP2]
    seen.clear()
    graph_rewrite(UOp(Ops.EXP2, dtypes.int32, (UOp(Ops.NEG, dtypes.int32, (x,)),)), walk(log),
                  bottom_up=True)
    assert seen == [Ops.EXP2, Ops.NEG, Ops.CONST]


@WALKS
def test_bottom_up_matches_a_node_before_its_sources_and_again_when_rebuilt(walk):
    seen = []

    def fn(u, ctx):  # NEG(x) -> EXP2(x) and CONST 1 -> CONST 2: EXP2 is rebuilt over CONST 2
        seen.append(u.op)
        if u.op is Ops.NEG:
            return u.replace(op=Ops.EXP2)
        if u.op is Ops.CONST and u.arg == 1:
            return u.replace(arg=2)
        return None

    x = UOp.const(dtypes.int32, 1)
    out = graph_rewrite(UOp(Ops.NEG, dtypes.int32, (x,)), walk(fn), bottom_up=True)
    assert out is UOp(Ops.EXP2, dtypes.int32, (UOp.const(dtypes.int32, 2),))
    # CONST 2, a rule's result, is not memoised as a node of the graph: met again as the
    # rebuilt EXP2's source, it is tried once more
    assert seen == [Ops.NEG, Ops.EXP2, Ops.CONST, Ops.CONST, Ops.EXP2, Ops.CONST]


@WALKS
def test_shared_nodes_rewritten_once(walk):
    calls = []

    def count(u, ctx):
        calls.append(u)
        return None

    x = UOp(Ops.NEG, dtypes.int32, (UOp.const(dtypes.int32, 1),))
    graph_rewrite(UOp.sink(UOp(Ops.ADD, dtypes.int32, (x, x)), UOp(Ops.MUL, dtypes.int32, (x, x))),
                  walk(count))
    assert calls.count(x) == 1


def test_ctx_is_passed_and_map_covers_every_node():
    x = neg_chain(4)
    m = graph_rewrite_map(x, Fn(lambda u, ctx: ctx.setdefault(u.op, None)), ctx={})
    assert len(m) == 5 and all(k is v for k, v in m.items())


@WALKS
def test_defer_waits_for_siblings(walk):
    order = []

    def fn(u, ctx):
        if u.op is Ops.EXP2 and "log2" not in order:
            raise RewriteNotReady
        if u.op in (Ops.EXP2, Ops.LOG2) and u.op.name.lower() not in order:
            order.append(u.op.name.lower())
        return None

    x = UOp.const(dtypes.float32, 1.0)
    sink = UOp.sink(UOp(Ops.EXP2, dtypes.float32, (x,)), UOp(Ops.LOG2, dtypes.float32, (x,)))
    graph_rewrite(sink, walk(fn))
    assert order == ["log2", "exp2"]


@WALKS
def test_defer_forever_is_an_error(walk):
    def fn(u, ctx):
        if u.op is Ops.EXP2:
            raise RewriteNotReady
        return None

    with pytest.raises(RuntimeError, match="deferred"):
        graph_rewrite(UOp(Ops.EXP2, dtypes.float32, (UOp.const(dtypes.float32, 1.0),)),
                      walk(fn))


class Cycle:
    rules = (RuleInfo("exp_to_log", "cycle.rules", 3), RuleInfo("log_to_exp", "cycle.rules", 4))

    def rewrite_with_rule(self, u, ctx=None):
        if u.op is Ops.EXP2:
            return u.replace(op=Ops.LOG2), self.rules[0]
        if u.op is Ops.LOG2:
            return u.replace(op=Ops.EXP2), self.rules[1]
        return None, None

    def rewrite(self, u, ctx=None):
        return self.rewrite_with_rule(u, ctx)[0]


class TableCycle(Cycle):
    def __init__(self):
        def call(u, ctx):
            hit = self.rewrite_with_rule(u, ctx)
            return None if hit[0] is None else hit

        self.table = dict.fromkeys(Ops, call)


@pytest.mark.parametrize("cycle,bottom_up", [(Cycle, False), (TableCycle, False),
                                              (TableCycle, True)],
                         ids=["general", "top_down", "bottom_up"])
def test_two_rule_cycle_names_both_rules(cycle, bottom_up):
    x = UOp(Ops.EXP2, dtypes.float32, (UOp.const(dtypes.float32, 1.0),))
    with pytest.raises(RewriteBudgetError) as err:
        graph_rewrite(x, cycle(), budget=500, bottom_up=bottom_up)
    msg = str(err.value)
    assert "exp_to_log at cycle.rules:3" in msg and "log_to_exp at cycle.rules:4" in msg


def test_substitute_replaces_inside_and_at_root():
    r = UOp.range(4, 0)
    x = UOp.const(dtypes.index, 3)
    expr = (r * 2) + x
    y = UOp.const(dtypes.index, 5)
    assert expr.substitute({x: y}) is (r * 2) + y
    assert expr.substitute({expr: y}) is y
    assert expr.substitute({}) is expr


def test_bounds_of_a_wrapping_int_cover_the_whole_type():
    x = UOp.variable("x", 0, 32766, dtypes.int16)
    doubled = x * 2  # 32766 * 2 wraps below zero in int16
    assert (doubled.vmin, doubled.vmax) == (dtypes.int16.min, dtypes.int16.max)
    r = UOp.range(10, 0)
    assert ((r * 3 + 1).vmin, (r * 3 + 1).vmax) == (1, 28)


def test_ops_summary_covers_every_op_of_the_graph():
    # UOp._ops, set when a node is built, must hold the bit of every op under it: a walk skips
    # the sources of a node whose summary misses its pass's ops
    from rulegrad.runtime.uop import OP_BIT, toposort

    r = UOp.range(8, 0)
    idx = UOp(Ops.INDEX, dtypes.float32, (UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), 0), r))
    deep = UOp(Ops.INVALID, dtypes.index)
    x = UOp(Ops.WHERE, dtypes.index, (r.lt(4), r, deep)) * 2 + 1
    root = UOp.sink(UOp(Ops.ADD, dtypes.float32, (idx, UOp.const(dtypes.float32, 1.0))), x)
    for n in toposort(root):
        want = 0
        for m in toposort(n):
            want |= OP_BIT[m.op]
        assert n._ops == want, n


@pytest.mark.parametrize("bottom_up", [False, True], ids=["top_down", "bottom_up"])
def test_a_rule_deep_under_other_ops_still_fires(bottom_up):
    # a table rooted on INDEX only: the walk skips subgraphs without an INDEX, not one with an
    # INDEX three levels under ops that have no rule
    g = UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), 0)
    idx = UOp(Ops.INDEX, dtypes.float32, (g, UOp.const(dtypes.index, 3)))
    two = UOp.const(dtypes.float32, 2.0)
    expr = UOp.sink((idx.f(Ops.EXP2) + 1.0).f(Ops.SQRT))
    matcher = TableFn(lambda u, ctx: two if u is idx else None)
    matcher.table = {Ops.INDEX: matcher.table[Ops.INDEX]}
    out = graph_rewrite(expr, matcher, bottom_up=bottom_up)
    assert out is UOp.sink((two.f(Ops.EXP2) + 1.0).f(Ops.SQRT))


@pytest.mark.parametrize("bottom_up", [False, True], ids=["top_down", "bottom_up"])
def test_a_pass_visits_no_subgraph_where_none_of_its_ops_is(bottom_up):
    # work counted, not timed: a pass rooted on SINK over a 2,000-node graph memoises the SINK
    # and its sources only, not the 2,000 nodes under them (none is a SINK)
    from rulegrad.runtime.rewrite import _Rewriter

    calls = []
    matcher = TableFn(lambda u, ctx: calls.append(u))
    matcher.table = {Ops.SINK: matcher.table[Ops.SINK]}
    chain = neg_chain(2_000)
    sink = UOp.sink(chain, chain.src[0])
    rw = _Rewriter(matcher, None, bottom_up, "sink_only", None)
    assert rw.run(sink) is sink
    assert calls == [sink] and len(rw.replace) == 3


@WALKS
def test_top_down_rewrites_the_new_sources_a_rule_makes(walk):
    # EXP2(x) -> SIN(NEG(x)) and NEG(x) -> LOG2(x): the NEG a rule made is a source never seen
    # before, rewritten before the SIN over it is tried; a node rebuilt over rewritten sources
    # (the SQRT above) is tried too
    seen = []

    def fn(u, ctx):
        seen.append(u.op)
        if u.op is Ops.EXP2:
            return UOp(Ops.SIN, u.dtype, (UOp(Ops.NEG, u.dtype, u.src),))
        if u.op is Ops.NEG:
            return UOp(Ops.LOG2, u.dtype, u.src)
        return None

    x = UOp.const(dtypes.float32, 1.0)
    out = graph_rewrite(UOp(Ops.SQRT, dtypes.float32, (UOp(Ops.EXP2, dtypes.float32, (x,)),)),
                        walk(fn))
    want = UOp(Ops.SQRT, dtypes.float32,
               (UOp(Ops.SIN, dtypes.float32, (UOp(Ops.LOG2, dtypes.float32, (x,)),)),))
    assert out is want
    assert seen == [Ops.CONST, Ops.EXP2, Ops.NEG, Ops.LOG2, Ops.SIN, Ops.SQRT]
