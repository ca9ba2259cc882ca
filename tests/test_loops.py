"""runtime/loops.py: the one home of a kernel's loop facts (issue 35, "keep one of each").

Each fact is checked against a definition of its own, computed here another way: an index's
terms against the index's value at random points, a stride against the index moved one step
anywhere, free ranges against the paths from a node to its ranges in real kernels."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import numpy as np
import pytest
from walk_oracles import reaches

from rulegrad import Tensor
from rulegrad.backends.c.ctext import RenderError, loop_count
from rulegrad.backends.c.lower import lower_only
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.loops import (
    free_ranges,
    fresh_id,
    linear_terms,
    local_read,
    range_size,
    row_major,
    stride,
    trips,
)
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort

ROOT = Path(__file__).resolve().parent.parent
SIZES = (3, 5, 7)


def _ranges() -> list[UOp]:
    return [UOp.range(n, i) for i, n in enumerate(SIZES)]


def _value(x: UOp, at: dict[UOp, int]) -> int:
    """x's value with each RANGE at `at` (C's truncating division), one node at a time."""
    env: dict[UOp, int] = {}
    for n in toposort(x):
        s = [env[v] for v in n.src]
        if n.op is Ops.RANGE:
            env[n] = at[n]
        elif n.op is Ops.CONST:
            env[n] = n.arg
        elif n.op is Ops.ADD:
            env[n] = s[0] + s[1]
        elif n.op is Ops.MUL:
            env[n] = s[0] * s[1]
        elif n.op is Ops.IDIV:
            env[n] = abs(s[0]) // s[1] * (1 if s[0] >= 0 else -1)
        elif n.op is Ops.MOD:
            env[n] = s[0] - (abs(s[0]) // s[1] * (1 if s[0] >= 0 else -1)) * s[1]
        else:
            raise AssertionError(n.op)
    return env[x]


def _index(rng: random.Random, rs: list[UOp], affine: bool) -> UOp:
    """A random index over `rs`: sums and products by constants (either side), shared
    subexpressions, and (not `affine`) divisions and remainders of them."""
    pool: list[UOp] = [*rs, UOp.const(dtypes.index, rng.randint(0, 9))]
    for _ in range(rng.randint(3, 12)):
        a, b = rng.choice(pool), rng.choice(pool)
        c = UOp.const(dtypes.index, rng.randint(-4, 6))
        kind = rng.randrange(5 if affine else 7)
        node = (UOp(Ops.ADD, dtypes.index, (a, b)) if kind < 2 else
                UOp(Ops.MUL, dtypes.index, (a, c)) if kind == 2 else
                UOp(Ops.MUL, dtypes.index, (c, a)) if kind == 3 else
                UOp(Ops.ADD, dtypes.index, (a, c)) if kind == 4 else
                UOp(Ops.IDIV if kind == 5 else Ops.MOD, dtypes.index,
                    (a, UOp.const(dtypes.index, rng.randint(1, 4)))))
        pool.append(node)
    return pool[-1]


@pytest.mark.parametrize("seed", range(60))
def test_an_index_is_the_sum_of_its_linear_terms(seed):
    """sum(k * term) equals the index at every point tried, and no term is a sum or a product
    by a constant (those are walked through) unless it was asked to be kept whole."""
    rng = random.Random(seed)
    rs = _ranges()
    x = _index(rng, rs, affine=False)
    kept = rng.choice(toposort(x))
    for opaque in (None, lambda n: n is kept):
        terms = linear_terms(x, opaque)
        for n, _ in terms:
            walked = n.op is Ops.ADD or (n.op is Ops.MUL and any(s.op is Ops.CONST
                                                                 for s in n.src))
            assert not walked or (opaque is not None and n is kept)
        for _ in range(5):
            at = {r: rng.randrange(n) for r, n in zip(rs, SIZES)}
            assert sum(k * _value(n, at) for n, k in terms) == _value(x, at)


def test_linear_terms_come_left_to_right():
    """The terms in the order they appear in the index (symbolic_helpers' divmod folding
    rebuilds the index from them, gemm.py sums the rest from them)."""
    r0, r1, r2 = _ranges()
    x = (r0 * 4 + r1) + (r2 + 7) * 2
    assert linear_terms(x) == [(r0, 4), (r1, 1), (r2, 2), (x.src[1].src[0].src[1], 2)]


@pytest.mark.parametrize("seed", range(40))
def test_the_stride_of_an_affine_index_is_its_step_anywhere(seed):
    """stride(x, r): how far x moves when r steps by one, from any point (x affine)."""
    rng = random.Random(seed)
    rs = _ranges()
    x = _index(rng, rs, affine=True)
    for r, n in zip(rs, SIZES):
        at = {q: rng.randrange(m) for q, m in zip(rs, SIZES)}
        at[r] = rng.randrange(n - 1)
        step = dict(at)
        step[r] += 1
        assert stride(x, r) == _value(x, step) - _value(x, at)


def test_the_stride_of_a_window_read_every_other_element():
    """A division of a range has a step too: (2 * r) // 1 moves 2, r // 2 moves 0 from 0."""
    r0, _, _ = _ranges()
    assert stride(UOp(Ops.IDIV, dtypes.index, (r0 * 2, UOp.const(dtypes.index, 1))), r0) == 2
    assert stride(UOp(Ops.IDIV, dtypes.index, (r0, UOp.const(dtypes.index, 2))), r0) == 0


def test_a_range_size_is_a_constant_or_none():
    """A constant trip count (a numpy integer one too) or None while symbolic; the C renderer
    refuses a symbolic loop with a RenderError."""
    assert range_size(UOp.range(12, 0)) == 12
    assert range_size(UOp.range(UOp.const(dtypes.index, np.int64(5)), 0)) == 5
    sym = UOp.range(UOp(Ops.DEFINE_VAR, dtypes.index, (), ("n", 1, 10)), 0)
    assert range_size(sym) is None
    with pytest.raises(RenderError, match="symbolic"):
        loop_count(sym)
    assert loop_count(UOp.range(12, 0)) == 12


def _programs() -> list[Tensor]:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((8, 33)).astype(np.float32))
    w = Tensor(rng.standard_normal((33, 17)).astype(np.float32))
    img = Tensor(rng.standard_normal((1, 3, 9, 9)).astype(np.float32))
    k = Tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    return [x.softmax(-1), (x @ w).relu(), img.conv2d(k), x.sum(axis=0), x.layernorm(axis=1)]


@pytest.mark.parametrize("which", range(5))
def test_free_ranges_are_the_ranges_a_node_reaches_unbound(which):
    """For every node of real lowered kernels (a softmax, a matmul, a convolution, column
    sums, a layernorm), its free ranges are the RANGEs it reaches on a path that crosses no
    binder of them; a STORE binds all of its own."""
    for item in _programs()[which].schedule():
        low = lower_only(item.ast)
        nodes = toposort(low)
        deps = free_ranges(low)
        assert deps == free_ranges(low, nodes)
        rs = [n for n in nodes if n.op is Ops.RANGE]
        for n in nodes:
            want = frozenset(r for r in rs if n.op is not Ops.STORE and reaches(n, r))
            assert deps[n] == want, (n.op, item.ast)


def test_a_nest_in_row_major_order_is_numpys_flat_index():
    """row_major's offset at every point of a nest is numpy's C-order flat index of the point,
    and trips is the nest's size: the arrays the optimizer's actions stage are laid out so."""
    rs = _ranges()
    for cut in range(1, len(rs) + 1):
        flat, shape = row_major(rs[:cut]), SIZES[:cut]
        assert trips(rs[:cut]) == int(np.prod(shape))
        for point in np.ndindex(*shape):
            at = dict(zip(rs, point))
            assert _value(flat, at) == np.ravel_multi_index(point, shape), (cut, point)


def test_a_fresh_id_is_past_every_range_and_a_local_read_reads_its_array():
    """fresh_id is one past the largest RANGE id under the root (0 with none), whatever the
    order of the ids; local_read is LOAD(INDEX(array, at)) in the array's dtype."""
    rs = [UOp.range(4, 9), UOp.range(3, 2), UOp.range(5, 0)]
    x = (rs[0] * 15 + rs[1] * 5 + rs[2]).alu(Ops.MOD, 7)
    assert fresh_id(x) == 1 + max(r.arg[0] for r in rs) == 10
    assert fresh_id(UOp.const(dtypes.index, 3)) == 0
    array = UOp(Ops.DEFINE_LOCAL, dtypes.float32, (UOp.const(dtypes.float32, 1.0), rs[2]))
    read = local_read(array, rs[2])
    assert (read.op, read.dtype, read.src[0].op) == (Ops.LOAD, dtypes.float32, Ops.INDEX)
    assert read.src[0].src == (array, rs[2]) and read.src[0].dtype is dtypes.float32


def test_each_loop_fact_is_written_once():
    """No other module of the package defines range_size, free_ranges, linear_terms, stride or
    the nest's facts (trips, fresh_id, row_major, local_read) again (the copies issue 35
    counted: three range sizes, two free-range walks, three stride/affine analyses; issue 32:
    a new loop's id worked out in thirteen places, a staged array's read in four)."""
    names = {"range_size", "free_ranges", "linear_terms", "stride", "_range_size",
             "_free_ranges", "_affine", "_linear_terms", "trips", "fresh_id", "row_major",
             "local_read"}
    home = ROOT / "runtime" / "loops.py"
    found = []
    for folder in ("api", "dsl", "generator", "rules", "runtime", "backends", "tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == home or "generated" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef) and node.name in names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert found == []
