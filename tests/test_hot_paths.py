"""Fast paths of the matcher's hot code, each checked against the plain way it replaces.

- `Ops.X` is read without Enum's metaclass `__getattr__` hook (runtime/ops.py), and Ops still
  behaves as the Enum Python builds from the same members.
- symbolic.rules' divmod_fold (`symbolic_helpers.fold_divmod`) takes its one-term and constant
  inputs without a walk and checks its terms in one pass: it answers as the plain computation
  (sum `linear_terms`, then test), written out here, on drawn index expressions.
- The C build splits the compiler driver's plan into words without shlex's tokenizer
  (backends/c/stages.py's `split_words`): the same words as shlex.split, or the same error.
"""

from __future__ import annotations

import enum
import pickle
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulegrad import Ops, UOp, dtypes
from rulegrad.backends.c.stages import split_words
from rulegrad.rules.symbolic_helpers import fold_divmod
from rulegrad.runtime.loops import linear_terms


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
def _plain_fold(e: UOp) -> UOp | None:
    """fold_divmod as written before its fast paths: every x walked, the tests one by one."""
    x, c = e.src[0], e.src[1].arg
    terms: dict[UOp, int] = {}
    b = 0
    for n, k in linear_terms(x):
        if n.op is Ops.CONST and type(n.arg) is int:
            b += k * n.arg
        else:
            terms[n] = terms.get(n, 0) + k
    if b < 0 or any(k < 0 for k in terms.values()) or type(c) is not int or c <= 0:
        return None
    if any(a.vmin < 0 for a in terms):
        return None
    if sum((k % c) * a.vmax for a, k in terms.items()) + b % c >= c:
        return None
    if e.op is Ops.IDIV:
        parts, rest = [(a, k // c) for a, k in terms.items() if k >= c], b // c
    else:
        parts, rest = [(a, k % c) for a, k in terms.items() if k % c], b % c
    out: UOp | None = None
    for a, k in parts:
        term = a if k == 1 else a * a.const_like(k)
        out = term if out is None else out + term
    if rest or out is None:
        const = x.const_like(rest)
        out = const if out is None else out + const
    return out


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
def test_fold_divmod_answers_as_the_plain_walk(data):
    ranges = [UOp.range(data.draw(st.integers(1, 40)), i) for i in range(3)]
    x = _index(data.draw, ranges)
    c = UOp.const(dtypes.index, data.draw(st.integers(-2, 70)))
    for op in (Ops.IDIV, Ops.MOD):
        e = UOp(op, dtypes.index, (x, c))
        assert fold_divmod(e) is _plain_fold(e), (e, fold_divmod(e), _plain_fold(e))


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
