"""Generated matchers against the interpreted ones, and the rules against direct evaluation.

- For EVERY rule set of every `rules/*.rules` file: on graphs recorded from the real pipeline
  (the input of every pass, for the fuzzer's programs, with the pass's real context),
  `graph_rewrite` with the generated matcher gives the very same node and context as with the
  interpreted matcher (the oracle), and the set rewrites something there.
- The symbolic rules preserve meaning: an index expression evaluated at random RANGE values
  (by a small evaluator here, with C's integer semantics) has the same value before and after.
- The movement rules preserve meaning: a movement chain evaluated with numpy gives the same
  array before and after.
- `input => expected` tables, where the expected graph is written by hand.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import itertools
import math
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulegrad import Ops, UOp, dtypes, graph_rewrite
from rulegrad.dsl import load
from rulegrad.generator.cli import package_rules_files
from rulegrad.generator.interp import interpret_file
from rulegrad.generator.passdiff import passdiff, record
from rulegrad.rules import matchers
from rulegrad.runtime.buffer import Buffer
from rulegrad.runtime.dtype import DType

RULE_SETS = [(path.stem, name) for path in package_rules_files()
             for name in matchers(path.stem)]
_interp_cache: dict[str, dict] = {}


def interpreted(stem: str, name: str):
    if stem not in _interp_cache:
        _interp_cache[stem] = interpret_file(load(str(package_rules_files()[0].parent /
                                                      f"{stem}.rules")))
    return _interp_cache[stem][name]


# ---------------------------------------------------------------------- an independent evaluator
def _wrap(dtype: DType, v: int) -> int:
    # two's complement at the dtype's width (index is unbounded: it never overflows)
    if dtype is dtypes.index:
        return v
    bits = 8 * dtype.itemsize
    if dtype.kind == "u":
        return v % (1 << bits)
    half = 1 << (bits - 1)
    return (v + half) % (1 << bits) - half


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)  # C: truncate toward zero
    return q if (a >= 0) == (b >= 0) else -q


def evaluate(root: UOp, env: dict[UOp, int]) -> int | bool:
    """The value of an integer/bool expression; ZeroDivisionError where C is undefined."""
    vals: dict[UOp, int | bool] = {}
    for n in root.toposort():
        s = [vals[x] for x in n.src]
        op = n.op
        if op is Ops.CONST:
            v = n.arg
        elif op in (Ops.RANGE, Ops.DEFINE_VAR):
            v = env[n]
        elif op is Ops.ADD:
            v = s[0] + s[1]
        elif op is Ops.SUB:
            v = s[0] - s[1]
        elif op is Ops.MUL:
            v = s[0] * s[1]
        elif op is Ops.NEG:
            v = -s[0]
        elif op in (Ops.IDIV, Ops.MOD):
            if s[1] == 0:
                raise ZeroDivisionError
            q = _tdiv(s[0], s[1])
            v = q if op is Ops.IDIV else s[0] - q * s[1]
        elif op is Ops.MAX:
            v = max(s)
        elif op is Ops.MIN:
            v = min(s)
        elif op is Ops.CMPLT:
            v = s[0] < s[1]
        elif op is Ops.CMPNE:
            v = s[0] != s[1]
        elif op is Ops.CMPEQ:
            v = s[0] == s[1]
        elif op is Ops.WHERE:
            v = s[1] if s[0] else s[2]
        elif op is Ops.CAST:
            v = bool(s[0]) if n.dtype is dtypes.bool else int(s[0])
        else:
            raise NotImplementedError(op)
        vals[n] = bool(v) if n.dtype is dtypes.bool else _wrap(n.dtype, int(v))
    return vals[root]


def np_eval(root: UOp) -> np.ndarray:
    """The array a movement chain over a BUFFER denotes (the buffer holds 1, 2, 3, ...)."""
    vals: dict[UOp, np.ndarray] = {}
    for n in root.toposort():
        a = vals[n.src[0]] if n.src else None
        if n.op is Ops.BUFFER:
            v = np.arange(1, n.arg.size + 1)
        elif n.op is Ops.RESHAPE:
            v = a.reshape(n.arg)
        elif n.op is Ops.PERMUTE:
            v = a.transpose(n.arg)
        elif n.op is Ops.EXPAND:
            v = np.broadcast_to(a, n.arg)
        elif n.op is Ops.PAD:
            v = np.pad(a, n.arg)
        elif n.op is Ops.SHRINK:
            v = a[tuple(slice(b, e) for b, e in n.arg)]
        elif n.op is Ops.FLIP:
            v = np.flip(a, tuple(i for i, f in enumerate(n.arg) if f)) if any(n.arg) else a
        else:
            raise NotImplementedError(n.op)
        vals[n] = v
    return vals[root]


# ---------------------------------------------------------------------- random graphs
RANGES = [UOp.range(4, 0), UOp.range(3, 1), UOp.range(6, 2)]


@st.composite
def index_graphs(draw) -> UOp:
    """Index math over three RANGEs, with the shapes the symbolic rules look for, some int8 and
    int32 arithmetic (wraparound), comparisons and WHERE; built iteratively."""
    idx = [*RANGES] + [UOp.const(dtypes.index, c) for c in (0, 1, 2, 4)]
    small = [UOp.const(dt, draw(st.sampled_from([0, 1, -1, 3, 100, 127, -128])))
             for dt in (dtypes.int8, dtypes.int32) for _ in range(2)]
    bools: list[UOp] = [UOp.const(dtypes.bool, True), UOp.const(dtypes.bool, False)]
    pick = lambda pool: pool[draw(st.integers(0, len(pool) - 1))]  # noqa: E731
    const = lambda: UOp.const(dtypes.index, draw(st.integers(-3, 6)))  # noqa: E731
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["add", "sub", "mul", "div", "mod", "neg", "max", "min",
                                     "cmp", "where", "divmod", "split", "small", "cast"]))
        a, b = pick(idx), pick(idx)
        if kind in ("add", "sub", "mul", "max", "min"):
            idx.append(a.alu({"add": Ops.ADD, "sub": Ops.SUB, "mul": Ops.MUL, "max": Ops.MAX,
                              "min": Ops.MIN}[kind], draw(st.sampled_from([b, const()]))))
        elif kind in ("div", "mod"):
            c = draw(st.sampled_from([const(), b]))
            op = Ops.IDIV if kind == "div" else Ops.MOD
            idx.append(UOp(op, dtypes.index, (draw(st.sampled_from([a, a * c])), c)))
        elif kind == "neg":
            idx.append(-a)
        elif kind == "cmp":
            op = draw(st.sampled_from([Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ]))
            bools.append(UOp(op, dtypes.bool, (a, draw(st.sampled_from([b, const()])))))
        elif kind == "where":
            idx.append(UOp(Ops.WHERE, dtypes.index, (pick(bools), a, b)))
        elif kind == "divmod":  # (a // c) * c + a % c
            c = UOp.const(dtypes.index, draw(st.integers(1, 5)))
            idx.append((a // c) * c + a % c)
        elif kind == "split":  # (a * c + d) // c or % c
            c = UOp.const(dtypes.index, draw(st.integers(1, 6)))
            e = a * c + b
            idx.append(e // c if draw(st.booleans()) else e % c)
        elif kind == "small":
            x, y = pick(small), pick(small)
            if x.dtype is y.dtype:
                op = draw(st.sampled_from([Ops.ADD, Ops.MUL, Ops.SUB, Ops.IDIV, Ops.MOD]))
                small.append(UOp(op, x.dtype, (x, y)))
        else:
            small.append(UOp(Ops.CAST, draw(st.sampled_from([dtypes.int8, dtypes.int32])),
                             (pick(small),)))
    return UOp.sink(idx[-1], small[-1], bools[-1])


@st.composite
def movement_graphs(draw) -> UOp:
    """A chain of movement ops over a BUFFER, including ones that do nothing."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    size = math.prod(shape)
    x = UOp(Ops.RESHAPE, dtypes.float32,
            (UOp(Ops.BUFFER, dtypes.float32, (), Buffer(size, dtypes.float32)),), shape)
    for _ in range(draw(st.integers(1, 6))):
        shape = x.shape
        kind = draw(st.sampled_from(["reshape", "permute", "expand", "pad", "shrink", "flip"]))
        if kind == "reshape":
            new = draw(st.sampled_from([(math.prod(shape),), shape + (1,), (1,) + shape,
                                        shape]))
            x = UOp(Ops.RESHAPE, x.dtype, (x,), new)
        elif kind == "permute":
            order = tuple(draw(st.permutations(range(len(shape)))))
            x = UOp(Ops.PERMUTE, x.dtype, (x,), order)
        elif kind == "expand":
            new = tuple(draw(st.integers(1, 3)) if s == 1 else s for s in shape)
            x = UOp(Ops.EXPAND, x.dtype, (x,), new)
        elif kind == "pad":
            pads = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in shape)
            x = UOp(Ops.PAD, x.dtype, (x,), pads)
        elif kind == "shrink":
            bounds = []
            for s in shape:
                b = draw(st.integers(0, s - 1))
                bounds.append((b, draw(st.integers(b + 1, s))))
            x = UOp(Ops.SHRINK, x.dtype, (x,), tuple(bounds))
        else:
            x = UOp(Ops.FLIP, x.dtype, (x,), tuple(draw(st.booleans()) for _ in shape))
    return x


FAST = settings(max_examples=120, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------- generated == interpreted
RECORDED_PROGRAMS = 30  # fuzzer seeds 0..29: every rule set rewrites on some pass input there


def _extra_programs() -> list:
    """What the fuzzer's first programs do not make: float16 (lower_half), power-of-two index
    division (lower_alu), a pad read only in its padding and only outside it, a reduce of a
    constant (lower_const), the exp of a masked value (opt's mask_actions), int reduces over
    padding only (sym keeps their update), gelu (its select inside a select on the same
    condition: opt's select_actions)."""
    from rulegrad import Tensor

    half = np.linspace(-2, 2, 12, dtype=np.float16).reshape(3, 4)
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    y = np.arange(16, dtype=np.float32).reshape(2, 8)  # read transposed: x // 8, x % 8
    return [lambda: (Tensor(half).sum(axis=1) * 2).realize(),
            lambda: Tensor(x).pad(((0, 0), (2, 2))).shrink(((0, 2), (0, 2))).realize(),
            lambda: (Tensor(x).pad(((1, 1), (1, 1))) + 1).shrink(((1, 3), (1, 4))).realize(),
            lambda: Tensor(y).permute((1, 0)).reshape((4, 4)).permute((1, 0)).realize(),
            lambda: Tensor.zeros(3, 5, dtype="int32").sum(axis=1).realize(),
            # an int sum and product over padding only (sym keeps their update)
            lambda: Tensor.realize(*[getattr(Tensor(x.astype(np.int32)).pad(((1, 1), (1, 1)))
                                     .shrink(((0, 1), (0, 5))), op)(1) for op in ("sum", "prod")]),
            lambda: ((Tensor(x) > 2).where(Tensor(x), -math.inf) - Tensor(x).max(axis=1,
                     keepdim=True)).exp().realize(),
            lambda: Tensor(x).gelu().realize()]


def _unrecorded_nodes(stem: str, name: str) -> list[UOp]:
    """Nodes for the sets no recorded pass input reaches any more: lower.rules' decided valid
    masks (the scheduler folds a decided mask before lowering; the one fuzzer program that
    left one, a realized zero-size view, now stays a view), built as the lowering pass meets
    them, so the generated set is still compared with the interpreted one on its rules."""
    if (stem, name) != ("lower", "lower_valid"):
        return []
    buf = UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), 0)
    off = UOp.const(dtypes.index, 3)
    index = UOp(Ops.INDEX, dtypes.float32, (buf, off, UOp.const(dtypes.bool, True)))
    never = UOp(Ops.INDEX, dtypes.float32, (buf, off, UOp.const(dtypes.bool, False)))
    return [index, UOp(Ops.LOAD, dtypes.float32, (never,))]


@pytest.fixture(scope="module")
def recorded():
    """The input of every pass (with a copy of the context it got) and every firing, for the
    fuzzer's programs and a few more, recorded from the real pipeline by generator/passdiff.py
    (run by the kernel interpreter: the kernels are lowered by passdiff, not by C)."""
    progs = list(passdiff(0, RECORDED_PROGRAMS).programs)
    os.environ["RULEGRAD_BACKEND"], saved = "interp", os.environ.get("RULEGRAD_BACKEND")
    try:
        progs += [record(build) for build in _extra_programs()]
    finally:
        os.environ.pop("RULEGRAD_BACKEND") if saved is None else os.environ.update(
            RULEGRAD_BACKEND=saved)
    for prog in progs:
        assert not prog.failures, (prog.seed, prog.failures)
    return progs


@pytest.fixture(scope="module")
def gradient_calls():
    """pm_gradient is not a pass: autograd asks it for each node's source gradients. Record
    what it is asked (node, the node's gradient as ctx) while real programs differentiate."""
    from rulegrad import Tensor
    from rulegrad.runtime import autograd

    calls, real = [], autograd.matcher

    class Recording:
        def __init__(self, m):
            self.m = m

        def rewrite(self, n, ctx=None):
            calls.append((n, ctx))
            return self.m.rewrite(n, ctx)

    autograd.matcher = lambda stem, name: Recording(real(stem, name))
    try:
        rng = np.random.default_rng(0)
        x = Tensor(rng.standard_normal((4, 6)).astype(np.float32))
        w = Tensor(rng.standard_normal((6, 5)).astype(np.float32), requires_grad=True)
        h = (x @ w).relu() * 2 - 1
        loss = (h.sigmoid() + h.tanh().exp() / (h.abs() + 1).sqrt()).log_softmax().sum()
        loss = loss + h.max(axis=1).sum() + h.pad(((1, 0), (0, 2))).flip(0)[1:3].mean()
        loss.backward()
        assert w.grad is not None
    finally:
        autograd.matcher = real
    return calls


def _same_ctx(a, b) -> bool:
    if dataclasses.is_dataclass(a) or a is None:
        return a == b
    # a counter (a context's source of fresh numbers) compares by identity: its state is the
    # next number it gives, which its repr shows
    def state(ctx) -> dict:
        return {k: repr(v) if isinstance(v, itertools.count) else v for k, v in vars(ctx).items()}
    return state(a) == state(b)


def _shape_of_graph(root: UOp) -> list:
    """The graph with what split_kernels makes fresh each run named by first appearance: a new
    `Buffer` for each kernel's output, a `Kernel` arg (compared by identity) per KERNEL."""
    nodes = root.toposort()
    pos = {n: i for i, n in enumerate(nodes)}
    bufs: dict[int, int] = {}

    def canon(v):
        if isinstance(v, Buffer):
            return ("buffer", bufs.setdefault(id(v), len(bufs)), v.size, v.dtype)
        if isinstance(v, UOp):
            return ("node", pos[v]) if v in pos else v
        if isinstance(v, tuple):
            return tuple(canon(x) for x in v)
        if hasattr(v, "ast") and hasattr(v, "bufs"):  # a Kernel
            return ("kernel", v.name, v.ast, canon(tuple(v.bufs)))
        return v

    return [(n.op, n.dtype, n.tag, canon(n.arg), [pos[x] for x in n.src]) for n in nodes]


def _same_graph(a: UOp, b: UOp) -> bool:
    return a is b or _shape_of_graph(a) == _shape_of_graph(b)


def _uses_ctx(m) -> bool:
    return any(re.search(r"\bctx\b", r.text) for r in m.rules)


@pytest.mark.parametrize("stem,name", RULE_SETS)
def test_generated_matches_interpreted(stem, name, recorded, gradient_calls):
    """Each rule set, generated and interpreted, on what the real pipeline gave it:
    - the recorded input of every pass that runs the set (alone or inside a larger set), each
      matcher with its own copy of the pass's real context: the same output node, the same
      context after;
    - a set without context, also node by node on every node one of its rules rewrote in some
      pass (a part like pm_mops only meets its nodes in the middle of a pass): the same result.
    Neither may raise, and the set must change a graph or a context somewhere. pm_gradient,
    which autograd asks node by node, is compared on the nodes a real backward pass asks about."""
    gen, interp = matchers(stem)[name], interpreted(stem, name)
    if (stem, name) == ("gradient", "pm_gradient"):
        changed = 0
        for node, grad in gradient_calls:
            got, want = gen.rewrite(node, grad), interp.rewrite(node, grad)
            assert got == want, node  # a tuple of hash-consed gradients (or None) per source
            changed += got is not None
        assert changed, "pm_gradient gave no gradient on a real backward pass"
        return
    mine = {r.location for r in gen.rules}
    runs = [(prog, r) for prog in recorded for r in prog.passes
            if mine <= {x.location for x in r.matcher.rules}]
    nodes = {f.before for prog in recorded for f in prog.firings
             if f.rule is not None and f.rule.location in mine}
    nodes.update(_unrecorded_nodes(stem, name))
    assert runs or nodes, f"no pass of the pipeline runs a rule of {stem}.{name}"
    changed = 0
    for prog, run in runs:
        ctx_g, ctx_i = copy.deepcopy(run.ctx_before), copy.deepcopy(run.ctx_before)
        out_g = graph_rewrite(run.before, gen, ctx=ctx_g, bottom_up=run.bottom_up)
        out_i = graph_rewrite(run.before, interp, ctx=ctx_i, bottom_up=run.bottom_up)
        assert _same_graph(out_g, out_i), (prog.seed, run.name, run.before)
        assert _same_ctx(ctx_g, ctx_i), (prog.seed, run.name)
        changed += out_g is not run.before or not _same_ctx(ctx_g, run.ctx_before)
    if not _uses_ctx(gen):
        for node in nodes:
            got, want = gen.rewrite(node, None), interp.rewrite(node, None)
            assert got is want or (got is not None and want is not None and
                                   _same_graph(got, want)), node
            changed += got is not None and got is not node
    assert changed, f"{stem}.{name} changed nothing on {len(runs)} recorded pass inputs"


class _Logged:
    """A matcher's op table, each call logged; with `fast=False` it has no `table`, so
    graph_rewrite takes its general walk (the one tracing uses) instead of the top-down one."""

    def __init__(self, m, log: list, fast: bool):
        def logged(f):
            def call(n, ctx):
                log.append(n)
                return f(n, ctx)
            return call
        self.name, self.rules = m.name, m.rules
        self._table = {op: logged(f) for op, f in m.table.items()}
        if fast:
            self.table = self._table

    def rewrite(self, n, ctx=None):
        f = self._table.get(n.op)
        hit = None if f is None else f(n, ctx)
        return None if hit is None else hit[0]


def test_fast_walks_are_the_general_walk(recorded):
    """graph_rewrite's top-down and bottom-up walks (the matcher's table called in place, a
    rewritten node matched again without going through the stack) against its general walk, on
    the input of every recorded pass: the same nodes tried in the same order, the same output,
    the same context after, the same map from old nodes to new."""
    from rulegrad.runtime.rewrite import graph_rewrite_map

    compared = collections.Counter()
    for prog in recorded:
        for run in prog.passes:
            if getattr(run.matcher, "table", None) is None:
                continue
            logs, outs, ctxs, maps = [], [], [], []
            for fast in (True, False):
                log: list = []
                ctx = copy.deepcopy(run.ctx_before)
                m = graph_rewrite_map(run.before, _Logged(run.matcher, log, fast), ctx=ctx,
                                      bottom_up=run.bottom_up)
                logs.append(log)
                outs.append(m[run.before])
                ctxs.append(ctx)
                maps.append(m)
            assert _same_graph(outs[0], outs[1]), (prog.seed, run.name)
            assert _same_ctx(ctxs[0], ctxs[1]), (prog.seed, run.name)
            if outs[0] is outs[1]:  # no fresh Buffers: the nodes themselves are the same
                assert logs[0] == logs[1] and maps[0] == maps[1], (prog.seed, run.name)
            else:
                assert [n.op for n in logs[0]] == [n.op for n in logs[1]], (prog.seed, run.name)
            compared[run.bottom_up] += 1
    assert compared[False] > 100 and compared[True] > 100, compared


def test_every_rules_file_has_rule_sets():
    stems = {p.stem for p in package_rules_files()}
    assert {"symbolic", "movement"} <= stems
    assert {s for s, _ in RULE_SETS} == stems


# ---------------------------------------------------------------------- meaning is preserved
@FAST
@given(graph=index_graphs(), data=st.data())
def test_symbolic_preserves_value(graph, data):
    after = graph_rewrite(graph, matchers("symbolic")["sym"])
    for _ in range(4):
        env = {r: data.draw(st.integers(0, r.src[0].arg - 1)) for r in RANGES}
        for b, a in zip(graph.src, after.src):
            try:
                expected = evaluate(b, env)
            except ZeroDivisionError:
                continue  # undefined in C: any result will do
            assert evaluate(a, env) == expected, (b.render(), a.render(), env)


@FAST
@given(graph=movement_graphs())
def test_movement_preserves_array(graph):
    after = graph_rewrite(graph, matchers("movement")["mop_cleanup"])
    assert after.shape == graph.shape
    np.testing.assert_array_equal(np_eval(after), np_eval(graph))


# ---------------------------------------------------------------------- input => expected
r0, r1, r2 = RANGES
i = lambda v: UOp.const(dtypes.index, v)  # noqa: E731
i8 = lambda v: UOp.const(dtypes.int8, v)  # noqa: E731
SYMBOLIC = [
    (r0 + 0, r0),
    (0 + r0, r0),
    (r0 * 1, r0),
    (r0 * 0, i(0)),
    (r0 // 1, r0),
    (r0 % 1, i(0)),
    (r0 - 0, r0),
    (r0 - r0, i(0)),
    (i(7) // i(-2), i(-3)),        # C truncates toward zero
    (i(-7) % i(2), i(-1)),         # the remainder takes the dividend's sign
    (i8(100) + i8(100), i8(-56)),  # int8 wraps around
    (i8(-128) // i8(-1), i8(-128)),  # wraps (runtime/semantics.py; numpy's value too)
    (i(3) // i(0), i(0)),            # x // 0 is 0 (numpy's value)
    (i(3) % i(0), i(0)),
    ((r0 * 4) // 4, r0),
    ((r0 // 4) * 4 + r0 % 4, r0),
    (r0 % 4 + (r0 // 4) * 4, r0),
    (r0 % 5, r0),                  # r0 < 4
    (r0 // 5, i(0)),
    ((r1 * 4 + r0) // 4, r1),      # the index split
    ((r1 * 4 + r0) % 4, r0),
    (r0.lt(4), UOp.const(dtypes.bool, True)),
    (r0.lt(3), r0.lt(3)),          # not decided by the bounds
    (r2.eq(-1), UOp.const(dtypes.bool, False)),
    (UOp.const(dtypes.bool, True).where(r0, r1), r0),
    (UOp.const(dtypes.bool, False).where(r0, r1), r1),
    (r2.lt(1).where(r0, r0), r0),
    ((r0 + 3) + 5, r0 + 8),
    ((r0 * 3) * 2, r0 * 6),
    ((r0 - 3) + 5, r0 + 2),
    ((-r0).alu(Ops.NEG), r0),
]


@pytest.mark.parametrize("before,expected", SYMBOLIC, ids=lambda u: u.render())
def test_symbolic_examples(before, expected):
    after = graph_rewrite(before, matchers("symbolic")["sym"])
    assert after is expected, (before.render(), after.render(), expected.render())
    for env_r0 in range(4):  # and the expectation itself is right
        env = {r0: env_r0, r1: 2, r2: 5}
        try:
            value = evaluate(before, env)
        except ZeroDivisionError:
            continue
        assert evaluate(expected, env) == value


_buf = UOp(Ops.BUFFER, dtypes.float32, (), Buffer(24, dtypes.float32))
MOVEMENT = [
    (_buf.reshape((4, 6)).reshape((2, 12)), _buf.reshape((2, 12))),
    (_buf.reshape((4, 6)).reshape((24,)), _buf),
    (UOp(Ops.RESHAPE, dtypes.float32, (_buf,), (24,)), _buf),
    (_buf.reshape((2, 3, 4)).permute((2, 0, 1)).permute((1, 2, 0)), _buf.reshape((2, 3, 4))),
    (_buf.reshape((2, 3, 4)).permute((1, 0, 2)).permute((0, 2, 1)),
     _buf.reshape((2, 3, 4)).permute((1, 2, 0))),
    (_buf.reshape((24, 1)).expand((24, 2)).reshape((24, 2, 1)).expand((24, 2, 3)),
     _buf.reshape((24, 1)).expand((24, 2)).reshape((24, 2, 1)).expand((24, 2, 3))),
    (_buf.reshape((1, 24, 1)).expand((2, 24, 1)).expand((2, 24, 3)),
     _buf.reshape((1, 24, 1)).expand((2, 24, 3))),
    (_buf.shrink(((2, 20),)).shrink(((1, 5),)), _buf.shrink(((3, 7),))),
    (_buf.pad(((1, 2),)).pad(((3, 0),)), _buf.pad(((4, 2),))),
    (_buf.reshape((4, 6)).flip((True, False)).flip((True, True)),
     _buf.reshape((4, 6)).flip((False, True))),
    (UOp(Ops.FLIP, dtypes.float32, (_buf,), (False,)), _buf),
    (UOp(Ops.PAD, dtypes.float32, (_buf,), ((0, 0),)), _buf),
]


@pytest.mark.parametrize("before,expected", MOVEMENT, ids=lambda u: repr(u))
def test_movement_examples(before, expected):
    after = graph_rewrite(before, matchers("movement")["mop_cleanup"])
    assert after is expected, (before, after, expected)
    np.testing.assert_array_equal(np_eval(expected), np_eval(before))
