"""The generated matchers' fast forms mean what the rules say (generator/emit.py, pyexpr.py).

- A root function unpacks its sources without testing their count first: a node with another
  count than the pattern's is still no match (None), never a ValueError.
- A guard's `x.vmin` / `x.vmax` reads the node's cached bounds in place: right whether the bounds
  were derived before (cached) or not yet (UNSET), and vmin is not vmax.

Each case is checked against the interpreted matcher (the oracle of tests/test_matchers.py) and
against the values the expression takes at every value of its ranges.
"""

from __future__ import annotations

import itertools
import re

import pytest

from rulegrad import Ops, UOp, dtypes
from rulegrad.dsl import load
from rulegrad.generator.interp import interpret_file
from rulegrad.generator.paths import PACKAGE_RULES_DIR
from rulegrad.rules import matcher
from rulegrad.runtime.uop import UNSET, toposort

SYM = matcher("symbolic", "sym")
INTERP = interpret_file(load(str(PACKAGE_RULES_DIR / "symbolic.rules")))["sym"]


def c(v: int) -> UOp:
    return UOp.const(dtypes.index, v)


def values(e: UOp) -> list[int]:
    """e at every value of its ranges (C's truncating // and %)."""
    rngs = [n for n in toposort(e) if n.op is Ops.RANGE]
    out = []
    for point in itertools.product(*(range(r.src[0].arg) for r in rngs)):
        env = dict(zip(rngs, point))
        for n in toposort(e):
            if n.op is Ops.RANGE:
                continue
            s = [env[x] for x in n.src]
            if n.op is Ops.CONST:
                env[n] = n.arg
            elif n.op is Ops.ADD:
                env[n] = s[0] + s[1]
            elif n.op is Ops.SUB:
                env[n] = s[0] - s[1]
            elif n.op in (Ops.IDIV, Ops.MOD):
                q = abs(s[0]) // abs(s[1]) * (1 if (s[0] >= 0) == (s[1] > 0) else -1)
                env[n] = q if n.op is Ops.IDIV else s[0] - q * s[1]
            else:
                raise AssertionError(n.op)
        out.append(env[e])
    return out


@pytest.mark.parametrize("srcs", [0, 2])
def test_a_node_with_another_source_count_is_no_match(srcs):
    # (an ALU node of another count cannot be made: tests/test_review_65a.py; a CAST, not ALU,
    # can, and is a root whose unpack is guarded)
    node = UOp(Ops.CAST, dtypes.float32, (c(3),) * srcs)  # fold_cast needs 1 source
    assert INTERP.rewrite(node) is None
    assert SYM.rewrite(node) is None
    assert SYM.table[Ops.ADD](node, None) is None


@pytest.mark.parametrize("derived", [False, True])
@pytest.mark.parametrize("top, fires", [(10, True), (13, False)])
def test_bounds_in_guards(derived, top, fires):
    # mod_in_range: MOD(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> x
    # x = r + 3 - 3 + ... built fresh (a new range axis), so its bounds are not derived yet
    r = UOp.range(top - 2, 91 + top + 10 * derived)
    x = UOp(Ops.ADD, dtypes.index, (r, c(2)))  # [2, top - 1]
    assert x._bounds is UNSET
    if derived:
        assert (x.vmin, x.vmax) == (2, top - 1)
    node = UOp(Ops.MOD, dtypes.index, (x, c(11)))
    got = SYM.rewrite(node)
    assert (got is not None) == fires == (INTERP.rewrite(node) is not None)
    if got is not None:
        assert got is INTERP.rewrite(node)
        assert values(got) == values(node)  # the rewrite keeps the value at every point
    else:
        assert values(node) != values(x)  # x % 11 is not x here: firing would be wrong


@pytest.mark.parametrize("dtype, fires", [(dtypes.index, True), (dtypes.int32, True),
                                          (dtypes.float32, False)])
def test_dtype_class_tests_still_decide_after_cheaper_ones(dtype, fires):
    # add_zero: ADD[x:ints, 0] -> x; the generated test reads `n1.op is CONST and n1.arg == 0`
    # before `n0.dtype in ints`: a float x + 0.0 (0.0 == 0) must still not fire
    x = UOp(Ops.DEFINE_VAR, dtype, (), ("hot", 0, 5))
    for node in (UOp(Ops.ADD, dtype, (x, UOp.const(dtype, 0))),
                 UOp(Ops.ADD, dtype, (UOp.const(dtype, 0), x))):
        assert (SYM.rewrite(node) is x) == fires
        assert (INTERP.rewrite(node) is x) == fires


def _screen_pool() -> list[UOp]:
    """Sources for binary nodes: constants the rules look for (0, 1, 3), ranges, and a node of
    every op a screen lets through, shaped so that rules fire on some pairs (x // 3 * 3 and
    x % 3 for divmod_recombine, r * 3 + r2 for split_idiv, ...)."""
    r, r2 = UOp.range(6, 95), UOp.range(3, 96)
    three = c(3)
    d = UOp(Ops.IDIV, dtypes.index, (r, three))
    m = UOp(Ops.MUL, dtypes.index, (r, three))
    return [c(0), c(1), three, r, r2, d, m, UOp(Ops.MUL, dtypes.index, (d, three)),
            UOp(Ops.MOD, dtypes.index, (r, three)), UOp(Ops.ADD, dtypes.index, (m, r2)),
            UOp(Ops.ADD, dtypes.index, (r, c(1))), UOp(Ops.NEG, dtypes.index, (r,))]


@pytest.mark.parametrize("op", [Ops.ADD, Ops.SUB, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.MAX,
                                Ops.CMPLT, Ops.CMPNE])
def test_a_screen_turns_away_only_nodes_no_rule_matches(op):
    # a per-op function opens with a quick rejection (`screen` in generator/match_ir.py): no
    # rule matches unless a source has one of a few ops; then its trie is split on the op of a
    # source that many rules need (`split`: a rule that does not look at it in both branches).
    # Every pair of sources from a pool that holds each such op, and nodes on which the rules
    # fire, matches as the interpreter says
    import inspect

    fn = SYM.table[op]
    screened = "quick rejection" in inspect.getsource(fn)
    assert screened == (op in (Ops.ADD, Ops.MUL, Ops.IDIV, Ops.MOD)), op
    pool = _screen_pool()
    dtype = dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE) else dtypes.index
    fired = 0
    for a, b in itertools.product(pool, pool):
        node = UOp(op, dtype, (a, b))
        want = INTERP.rewrite(node)
        assert SYM.rewrite(node) is want, (node, want)
        fired += want is not None
    assert fired  # the pool reaches the rules, not only the screen


def test_bounds_read_into_a_local_only_where_the_guard_reads_them(tmp_path):
    # a node whose vmin/vmax a rule reads twice has its bounds read into a local once, just
    # before the first guard term that reads them: a term before it that fails still spares the
    # derivation (bounds are a walk of the graph the first time)
    import importlib.util

    from rulegrad.generator.cli import run_gen

    (tmp_path / "lazy.rules").write_text(
        "rules lazy = {\n"
        "  pinned: MUL(x, c:CONST) if c.arg == 7 and x.vmin == x.vmax -> x\n"
        "}\n")
    assert run_gen([str(tmp_path / "lazy.rules")], out=str(tmp_path), check=False) == 0
    text = (tmp_path / "lazy.py").read_text()
    assert "_b_n0 = " in text  # the form under test (x is read where its path put it: n0)
    spec = importlib.util.spec_from_file_location("lazy_generated", tmp_path / "lazy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    interp = interpret_file(load(str(tmp_path / "lazy.rules")))["lazy"]
    for k, (top, mul) in enumerate([(4, 3), (4, 7), (1, 7)]):
        x = UOp(Ops.ADD, dtypes.index, (UOp.range(top, 97 + k), c(2)))  # bounds not derived
        node = UOp(Ops.MUL, dtypes.index, (x, c(mul)))
        got = mod.lazy.rewrite(node)
        assert (x._bounds is UNSET) == (mul != 7)
        assert got is interp.rewrite(node)
        assert (got is x) == (mul == 7 and top == 1)


def test_captures_are_read_where_their_paths_put_them(tmp_path):
    # a leaf reads its captures from the locals its structural tests loaded them into (no copy
    # per capture per attempt); a capture repeated across sources, one under a commutative
    # pattern (two alternatives bind x and c to different paths) and the root's own name must
    # still mean what the rule says
    import importlib.util

    from rulegrad.generator.cli import run_gen

    (tmp_path / "inplace.rules").write_text(
        "rules inplace = {\n"
        "  twice: ADD[MUL[x, c:CONST], c] as e if c.arg > 1 and e.dtype == x.dtype"
        " -> x * (c.arg + 1)\n"
        "  keep:  SUB(x, y) if x.vmax < y.vmin -> y - x\n"
        "}\n")
    assert run_gen([str(tmp_path / "inplace.rules")], out=str(tmp_path), check=False) == 0
    text = (tmp_path / "inplace.py").read_text()
    assert "        x = n" not in text and "        c = n" not in text  # the form under test
    spec = importlib.util.spec_from_file_location("inplace_generated", tmp_path / "inplace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    interp = interpret_file(load(str(tmp_path / "inplace.rules")))["inplace"]
    r = UOp.range(5, 0)
    pool = [r, c(0), c(2), c(3), r * c(2), c(2) * r, r * c(3), r - c(9)]
    fired = 0
    for a, b in itertools.product(pool, pool):
        for op in (Ops.ADD, Ops.SUB):
            node = UOp(op, dtypes.index, (a, b))
            want = interp.rewrite(node)
            assert mod.inplace.rewrite(node) is want, (node, want)
            fired += want is not None
    assert fired >= 4


def test_a_repeated_capture_tests_both_places_and_a_known_test_runs_once(tmp_path):
    # `c` of MOD(MUL[x, c:CONST], c) is one node at n1 and inside the MUL: n1.op is CONST is
    # tested at the root's source (generator/match_ir.py's `implied`), so every rule of the
    # composed set's MOD function needs it and the screen is that one test; the code after the
    # screen (both parts') does not test it again (emit.py's `known`). The matches are still
    # the interpreter's, on sources that are and are not constants, ints and floats
    import importlib.util
    import inspect

    from rulegrad.generator.cli import run_gen

    (tmp_path / "twice.rules").write_text(
        "rules base = {\n"
        "  mod_one: MOD(x:ints, 1) -> 0\n"
        "}\n"
        "rules more = base + {\n"
        "  mul_mod: MOD(MUL[x, c:CONST], c) if c.arg != 0 -> 0\n"
        "  mod_mod: MOD(MOD(x, c:CONST) as m, c) if c.arg != 0 -> m\n"
        "}\n")
    assert run_gen([str(tmp_path / "twice.rules")], out=str(tmp_path), check=False) == 0
    spec = importlib.util.spec_from_file_location("twice_generated", tmp_path / "twice.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    body = inspect.getsource(mod.more.table[Ops.MOD])
    assert "if n1.op is not _CONST: return None" in body  # the form under test
    assert body.count("n1.op is") == 1, body
    interp = interpret_file(load(str(tmp_path / "twice.rules")))["more"]
    r = UOp.range(5, 0)
    fired = 0
    for dt in (dtypes.index, dtypes.float32):
        k, k2, one, x = (UOp.const(dt, 3), UOp.const(dt, 2), UOp.const(dt, 1),
                         UOp(Ops.CAST, dt, (r,)) if dt is not dtypes.index else r)
        pool = [x, k, k2, one, UOp(Ops.MUL, dt, (x, k)), UOp(Ops.MUL, dt, (k, x)),
                UOp(Ops.MUL, dt, (x, x)), UOp(Ops.MOD, dt, (x, k)), UOp(Ops.MOD, dt, (x, x))]
        for a, b in itertools.product(pool, pool):
            node = UOp(Ops.MOD, dt, (a, b))
            want = interp.rewrite(node)
            assert mod.more.rewrite(node) is want, (node, want)
            fired += want is not None
    assert fired >= 6


def test_a_rewrite_bound_before_its_first_call_makes_its_dispatch_table_once(monkeypatch):
    """`rw = m.rewrite` taken before m's first call is the method, not the fast function the
    first call installs: each call through it must find that function, not make a table of
    every op again (~0.1 ms a node). Its answers are still the interpreted rules'."""
    from rulegrad.runtime import matcher as rm
    made, fast = [], rm._fast_rewrite
    monkeypatch.setattr(rm, "_fast_rewrite", lambda t: (made.append(t), fast(t))[1])
    fresh = rm.compose("sym", SYM)
    if fresh.counting:
        pytest.skip("match statistics on: rewrite counts, no fast table")
    rw = fresh.rewrite
    r, c = UOp.range(7, 0), UOp.const
    nodes = [r + c(dtypes.index, 0), r * c(dtypes.index, 1), r + c(dtypes.index, 1),
             (r // c(dtypes.index, 3)) * c(dtypes.index, 3) + r % c(dtypes.index, 3)]
    for n in nodes:
        assert rw(n) is INTERP.rewrite(n), n
        assert fresh.rewrite(n) is INTERP.rewrite(n), n
    assert sum(t is fresh._table for t in made) == 1  # (INTERP may make its own)


def _generated(tmp_path, name: str, rules: str):
    """The module `rulegrad gen` writes for `rules` (rule set `name`), and its text."""
    import importlib.util

    from rulegrad.generator.cli import run_gen

    (tmp_path / f"{name}.rules").write_text(rules)
    assert run_gen([str(tmp_path / f"{name}.rules")], out=str(tmp_path), check=False) == 0
    spec = importlib.util.spec_from_file_location(f"{name}_generated", tmp_path / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, (tmp_path / f"{name}.py").read_text()


def test_a_node_tested_the_same_as_another_is_tested_once_after_the_is_tests(tmp_path):
    # in ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] c is one node at three places and x at two:
    # the if that joins them tests `a is b` first (two locals), then each node's op once (a
    # CONST test of one place is that of all three), not once per place; the matches are still
    # the interpreter's, also where the places hold equal-valued but distinct nodes
    mod, text = _generated(tmp_path, "joined", (
        "rules joined = {\n"
        "  recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x\n"
        "}\n"))
    joins = [line.strip() for line in text.splitlines()
             if line.strip().startswith("if ") and " is n" in line]
    assert joins, text  # the form under test
    for line in joins:
        tests = line[3:-1].split(" and ")
        same = [k for k, t in enumerate(tests) if re.fullmatch(r"n[\d_]* is n[\d_]*", t)]
        assert same == list(range(len(same))), line  # the `is` tests first
        assert sum(".op is _CONST" in t for t in tests) <= 1, line
    interp = interpret_file(load(str(tmp_path / "joined.rules")))["joined"]
    r, s = UOp.range(6, 0), UOp.range(6, 1)
    fired = 0
    for k, k2, y, y2 in itertools.product([c(2), c(3), UOp.range(3, 2)], [c(2), c(3)], [r, s],
                                          [r, s]):
        for node in ((y // k) * k2 + y2 % k, y2 % k + k2 * (y // k), (y // k) * k + y2 % k2):
            want = interp.rewrite(node)
            assert mod.joined.rewrite(node) is want, (node, want)
            fired += want is not None
    assert fired >= 4


def test_an_inner_alu_node_is_unpacked_without_counting_its_sources(tmp_path):
    import inspect

    # an inner ADD's sources are unpacked with no len() (ARITY fixes an ALU op's count); an
    # inner INDEX (not ALU: a stage gives it one or two offsets) keeps its count test, so an
    # INDEX of another count is no match, never a ValueError
    mod, text = _generated(tmp_path, "inner", (
        "rules inner = {\n"
        "  add_in:   MUL(ADD(x, y), c:CONST) if c.arg == 2 -> x * c + y * c\n"
        "  index_in: LOAD(INDEX(b, off)) if off.op is Ops.CONST -> b\n"
        "}\n"))
    assert "len(n0.src) == 2" in text  # the INDEX's test
    mul = inspect.getsource(mod.inner.table[Ops.MUL])
    assert "n0_0, n0_1 = n0.src" in mul and "len(" not in mul, mul
    interp = interpret_file(load(str(tmp_path / "inner.rules")))["inner"]
    r, s = UOp.range(4, 0), UOp.range(5, 1)
    buf = UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), 0)
    nodes = [(r + s) * c(2), (r + s) * c(3), r * c(2), (r - s) * c(2)]
    nodes += [UOp(Ops.LOAD, dtypes.float32, (UOp(Ops.INDEX, dtypes.float32, (buf,) + offs),))
              for offs in [(c(1),), (r,), (c(1), c(0)), ()]]
    fired = 0
    for node in nodes:
        want = interp.rewrite(node)
        assert mod.inner.rewrite(node) is want, (node, want)
        fired += want is not None
    assert fired == 2
