"""Fast paths of the matcher's hot code, each checked against the plain way it replaces.

- `Ops.X` is read without Enum's metaclass `__getattr__` hook (runtime/ops.py), and Ops still
  behaves as the Enum Python builds from the same members.
- symbolic.rules' divmod_fold (`symbolic_helpers.fold_divmod`) takes its one-term and constant
  inputs without a walk and checks its terms in one pass: what it folds keeps its value at every
  drawn point of its ranges (C's integer arithmetic, evaluated here), it folds what the
  bounds allow (worked by hand), and it walks a dividend's sum once, however often it is asked
  (the terms are cached on the node: a count of the walks, never a time).
- Small integer and bool constants outlive their users (runtime/uop.py's SMALL_CONST), so a
  rule that makes one again (x < 10 -> True) finds it instead of building it; any other node
  still dies with its last user.
- The C build splits the compiler driver's plan into words without shlex's tokenizer
  (backends/c/stages.py's `split_words`): the same words as shlex.split, or the same error.
"""

from __future__ import annotations

import enum
import gc
import pickle
import shlex
import weakref

import pytest
from call_counts import python_calls
from hypothesis import given, settings
from hypothesis import strategies as st

from rulegrad import Ops, UOp, dtypes
from rulegrad.backends.c.stages import split_words
from rulegrad.rules.symbolic_helpers import fold_divmod


# ---------------------------------------------------------------------- Ops
def test_ops_is_read_without_a_getattr_hook_and_behaves_as_its_enum():
    assert "__getattr__" not in {k for t in type(Ops).__mro__ for k in vars(t)}
    ref = enum.Enum("Ops", [(m.name, m.value) for m in Ops])  # the oracle: a plain Enum
    assert [m.name for m in Ops] == [m.name for m in ref] and len(Ops) == len(ref)
    for name in ("ADD", "CONST", "WHERE"):
        assert getattr(Ops, name) is Ops[name] is Ops(Ops[name].value)
        assert getattr(Ops, name).name == getattr(ref, name).name
        assert pickle.loads(pickle.dumps(Ops[name])) is Ops[name]
        assert Ops[name] in Ops
    for bad in ("NOPE", "__nope__"):
        assert not hasattr(Ops, bad) and not hasattr(ref, bad)
    with pytest.raises(AttributeError):
        Ops.ADD = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        Ops(10_000)
    assert repr(Ops).replace("Ops", "") == repr(ref).replace("Ops", "")


# ---------------------------------------------------------------------- fold_divmod
_ARITHMETIC = {Ops.ADD: sum, Ops.MAX: max, Ops.NEG: lambda a: -a[0],
               Ops.MUL: lambda a: a[0] * a[1]}


def _value(e: UOp, at: dict[UOp, int]) -> int:
    """e's value with each RANGE at its value in `at`, in C's integer arithmetic (division
    truncates toward zero): the oracle, independent of the rewrite under test."""
    vals: dict[UOp, int] = {}
    for n in e.toposort():
        a = [vals[s] for s in n.src]
        if n.op is Ops.RANGE:
            vals[n] = at[n]
        elif n.op is Ops.CONST:
            vals[n] = n.arg
        elif n.op is Ops.IDIV or n.op is Ops.MOD:
            q = abs(a[0]) // abs(a[1]) * (1 if (a[0] < 0) == (a[1] < 0) else -1) if a[1] else 0
            vals[n] = q if n.op is Ops.IDIV else a[0] - q * a[1]
        else:
            vals[n] = _ARITHMETIC[n.op](a)
    return vals[e]


def _index(draw, ranges: list[UOp]) -> UOp:
    """An index expression over `ranges`: sums, products by constants (negative too), shared
    subexpressions, and atoms of other ops (NEG, MAX, IDIV, a product of two ranges)."""
    pool = list(ranges) + [UOp.const(dtypes.index, draw(st.integers(-3, 40)))]
    for _ in range(draw(st.integers(0, 6))):
        a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        kind = draw(st.integers(0, 6))
        if kind <= 2:
            e = a + b
        elif kind == 3:
            e = a * UOp.const(dtypes.index, draw(st.integers(-2, 70)))
        elif kind == 4:
            e = UOp(Ops.MAX, dtypes.index, (a, b)) if draw(st.booleans()) else -a
        elif kind == 5:
            e = a // UOp.const(dtypes.index, draw(st.integers(1, 9)))
        else:
            e = a * b
        pool.append(e)
    return draw(st.sampled_from(pool))


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_fold_divmod_keeps_the_value_at_every_drawn_point(data):
    ranges = [UOp.range(data.draw(st.integers(1, 40)), i) for i in range(3)]
    x = _index(data.draw, ranges)
    c = UOp.const(dtypes.index, data.draw(st.integers(1, 70)))
    for op in (Ops.IDIV, Ops.MOD):
        e = UOp(op, dtypes.index, (x, c))
        folded = fold_divmod(e)
        if folded is None:
            continue
        for _ in range(8):
            at = {r: data.draw(st.integers(0, r.src[0].arg - 1)) for r in ranges}
            assert _value(folded, at) == _value(e, at), (e, folded, at)


def test_fold_divmod_folds_what_the_bounds_allow():
    # worked by hand: r1 < 8, so (8 r0 + r1) // 8 is r0 and (8 r0 + r1) % 8 is r1; r1 < 9 is not
    r0, r1 = UOp.range(5, 0), UOp.range(8, 1)
    eight = UOp.const(dtypes.index, 8)
    x = r0 * eight + r1
    assert fold_divmod(UOp(Ops.IDIV, dtypes.index, (x, eight))) is r0
    assert fold_divmod(UOp(Ops.MOD, dtypes.index, (x, eight))) is r1
    wide = r0 * eight + UOp.range(9, 2)
    assert fold_divmod(UOp(Ops.IDIV, dtypes.index, (wide, eight))) is None


def test_fold_divmod_walks_a_dividend_once():
    r0, r1, r2 = UOp.range(5, 0), UOp.range(8, 1), UOp.range(3, 2)
    x = (r0 * UOp.const(dtypes.index, 24) + r1 * UOp.const(dtypes.index, 3)) + r2
    consts = [UOp.const(dtypes.index, c) for c in (3, 24, 5)]

    def ask() -> list:
        return [fold_divmod(UOp(op, dtypes.index, (x, c))) for op in (Ops.IDIV, Ops.MOD)
                for c in consts]

    calls = python_calls(ask)
    # coordinates worked by hand: x is ((r0, r1) * 3 + r2), (r0 * 8 + r1) * 3 + r2
    assert ask()[:2] == [r0 * UOp.const(dtypes.index, 8) + r1, r0]
    assert ask()[3:5] == [r2, r1 * UOp.const(dtypes.index, 3) + r2]
    assert ask()[2] is None and ask()[5] is None  # 24 r0 + 3 r1 + r2 mod 5: no split
    assert calls["loops.py:linear_terms"] == 1, calls
    assert python_calls(ask)["loops.py:linear_terms"] == 0


def test_fold_divmod_answers_a_node_seen_again_without_work():
    # the answer is kept on the IDIV/MOD node (`UOp.memo`): a pass that meets the node again
    # (every symbolic pass tries divmod_fold on every IDIV and MOD of index math) builds nothing
    r0, r1 = UOp.range(5, 0), UOp.range(8, 1)
    eight = UOp.const(dtypes.index, 8)
    x = r0 * eight + r1
    folds = UOp(Ops.IDIV, dtypes.index, (x, eight))
    stays = UOp(Ops.MOD, dtypes.index, (r0 * eight + UOp.range(9, 2), eight))
    first = [fold_divmod(folds), fold_divmod(stays)]
    assert first == [r0, None]
    again = python_calls(lambda: [fold_divmod(folds), fold_divmod(stays)])
    work = {k for k in again if not k.startswith(("test_hot_paths.py", "C:setprofile"))}
    assert work == {"symbolic_helpers.py:fold_divmod"}, again
    assert [fold_divmod(folds), fold_divmod(stays)] == first


def test_fold_divmod_reads_only_its_own_answers_from_the_memo():
    # `UOp.memo` holds one (owner, answer) pair: another helper's pair on the node is not an
    # answer of fold_divmod's, and fold_divmod's answer replaces it
    r0, r1 = UOp.range(5, 0), UOp.range(8, 1)
    eight = UOp.const(dtypes.index, 8)
    e = UOp(Ops.MOD, dtypes.index, (r0 * eight + r1, eight))
    other = object()
    e.memo = (other, None)
    assert fold_divmod(e) is r1
    assert e.memo[0] is not other


def test_a_helper_result_that_is_a_node_or_none_is_used_as_it_is():
    # the generated sym matcher on IDIV/MOD nodes whose dividend splits (a node), does not
    # (None) or whose bounds decide a comparison (a bool: made a constant): as_uop is called
    # for the bool only, and every answer is the interpreted matcher's (the oracle)
    from rulegrad.dsl import load
    from rulegrad.generator.interp import interpret_file
    from rulegrad.generator.paths import PACKAGE_RULES_DIR
    from rulegrad.rules import matcher

    gen = matcher("symbolic", "sym")
    interp = interpret_file(load(str(PACKAGE_RULES_DIR / "symbolic.rules")))["sym"]
    r0, r1, r2 = UOp.range(5, 0), UOp.range(8, 1), UOp.range(3, 2)
    # three terms: only divmod_fold splits it (split_idiv's pattern is two)
    x = (r0 * UOp.const(dtypes.index, 24) + r1 * UOp.const(dtypes.index, 3)) + r2
    neg = UOp(Ops.MAX, dtypes.index, (r0, r1)) - UOp.const(dtypes.index, 9)  # vmin < 0
    nodes = [UOp(op, dtypes.index, (v, UOp.const(dtypes.index, 3)))
             for op in (Ops.IDIV, Ops.MOD) for v in (x, neg)]
    nodes.append(UOp(Ops.CMPLT, dtypes.bool, (r1, UOp.const(dtypes.index, 8))))  # r1 < 8
    want = [interp.rewrite(n) for n in nodes]
    assert want[:4] == [r0 * UOp.const(dtypes.index, 8) + r1, None, r2, None]
    assert want[-1] is UOp.const(dtypes.bool, True)
    calls = python_calls(lambda: [gen.rewrite(n) for n in nodes])
    assert [gen.rewrite(n) for n in nodes] == want
    assert calls["matcher.py:as_uop"] == 1, calls


# ---------------------------------------------------------------------- small constants
def test_small_constants_outlive_their_users_and_other_nodes_do_not():
    from rulegrad.rules import matcher
    from rulegrad.runtime.uop import SMALL_CONST

    def dies(make) -> bool:
        ref = weakref.ref(make())
        gc.collect()
        return ref() is None

    # a constant of a value no other test makes, folded by a rule and dropped
    a, b = UOp.const(dtypes.index, SMALL_CONST - 100), UOp.const(dtypes.index, 45)
    folded = matcher("symbolic", "sym").rewrite(a + b)
    assert folded is not None and folded.arg == SMALL_CONST - 55
    del folded
    assert not dies(lambda: matcher("symbolic", "sym").rewrite(a + b))
    for v in (SMALL_CONST - 3, -SMALL_CONST + 3, True):
        assert not dies(lambda v=v: UOp.const(dtypes.bool if v is True else dtypes.int32, v))
    # values no other test builds: a node another test left in a cache would stay alive here
    for make in (lambda: UOp.const(dtypes.index, SMALL_CONST + 12345),
                 lambda: UOp.const(dtypes.float32, -7.0009765625),
                 lambda: UOp.const(dtypes.index, 3).replace(tag="t"),
                 lambda: UOp.range(7, 12345)):
        assert dies(make)
    # a kept constant is the node hash-consing gives: the same object, built once
    assert UOp.const(dtypes.int32, SMALL_CONST - 3) is UOp.const(dtypes.int32, SMALL_CONST - 3)


# ---------------------------------------------------------------------- split_words
def _words(line: str) -> list[str] | str:
    try:
        return shlex.split(line)
    except ValueError as e:
        return f"ValueError: {e}"


def _split(line: str) -> list[str] | str:
    try:
        return split_words(line)
    except ValueError as e:
        return f"ValueError: {e}"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=' \t\n\r\x0b\x0c"\'\\#=-a/. |', max_size=30))
def test_split_words_is_shlex_split(line):
    assert _split(line) == _words(line), line


def test_split_words_reads_a_gcc_plan_line():
    line = (' /usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet -D RG_MVEC k.c "-march=znver3" '
            '--param "l1-cache-size=32" "-ffp-contract=off" -o - |')
    assert split_words(line) == shlex.split(line)
    assert split_words(line)[5] == "-march=znver3" and split_words(line)[-1] == "|"
