"""The answers kept while a kernel is optimized (runtime/uop.py's `keeping_answers`): the walks,
substitutions and free ranges asked inside a block are those of their definitions (written here
recursively or by reachability), whatever was asked before them; a caller's change to an answer
does not reach the next one; the table goes with the block; and the optimizer walks each root
once (a count of walks, no clock)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from walk_oracles import post_order, reaches

from rulegrad import Ops, Tensor, UOp, dtypes
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.runtime import uop
from rulegrad.runtime.loops import free_ranges
from rulegrad.runtime.uop import keeping_answers, kept_answers, substitute, toposort


def substituted(root: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """root with the nodes of `mapping` replaced, rebuilt bottom up (recursively)."""
    memo: dict[UOp, UOp] = {}

    def go(n: UOp) -> UOp:
        if n in mapping:
            return mapping[n]
        if n not in memo:
            memo[n] = n.replace(src=tuple(go(s) for s in n.src))
        return memo[n]

    return go(root)


def random_dag(seed: int) -> list[UOp]:
    rng = random.Random(seed)
    pool = [UOp.const(dtypes.int32, 9000 + 100 * seed + i) for i in range(rng.randint(1, 5))]
    for _ in range(rng.randint(1, 60)):
        srcs = tuple(rng.choice(pool) for _ in range(rng.randint(1, 4)))
        pool.append(UOp(rng.choice([Ops.ADD, Ops.MUL, Ops.MAX]), dtypes.int32, srcs)
                    if len(srcs) == 2 else UOp.sink(*srcs))
    return pool


@pytest.mark.parametrize("seed", range(30))
def test_kept_walks_are_the_post_order_whatever_was_walked_before(seed):
    """Nodes walked in a random order inside a block (later walks splice the kept ones in):
    each walk is the definition's, and a caller emptying its list changes no later answer."""
    pool = random_dag(seed)
    rng = random.Random(seed)
    with keeping_answers():
        for n in rng.sample(pool, len(pool)) + rng.sample(pool, min(10, len(pool))):
            got = toposort(n)
            assert got == post_order(n)
            got.clear()
        root = UOp.sink(*rng.sample(pool, min(4, len(pool))))
        assert toposort(root) == post_order(root)


@pytest.mark.parametrize("seed", range(30))
def test_kept_substitutions_are_the_definition(seed):
    """substitute inside a block (which reuses root's kept walk, replaced nodes and all) and
    outside one gives the node the recursive rebuild gives, a mapping's targets never
    revisited."""
    pool = random_dag(seed)
    rng = random.Random(seed)
    with keeping_answers():
        for _ in range(8):
            root = rng.choice(pool)
            toposort(root)  # (kept: substitute then reads this walk)
            under = post_order(root)
            mapping = {n: UOp.const(dtypes.int32, -1 - i)
                       for i, n in enumerate(rng.sample(under, min(3, len(under))))}
            assert substitute(root, mapping) is substituted(root, mapping)
    assert kept_answers() is None  # (and with nothing kept: the pruned walk)
    for _ in range(8):
        root = rng.choice(pool)
        under = post_order(root)
        mapping = {n: UOp.const(dtypes.int32, -1 - i)
                   for i, n in enumerate(rng.sample(under, min(3, len(under))))}
        assert substitute(root, mapping) is substituted(root, mapping)


def _programs() -> list[Tensor]:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((7, 13)).astype(np.float32))
    w = Tensor(rng.standard_normal((13, 5)).astype(np.float32))
    return [x.softmax(-1), (x @ w).relu(), x.sum(axis=0), x.layernorm(axis=1)]


@pytest.mark.parametrize("which", range(4))
def test_kept_free_ranges_are_the_reachable_ranges(which):
    """Inside a block one table answers every root, asked in a random order (a node's ranges
    filled once): each node's entry is the ranges it reaches unbound, and the table is
    read-only (a caller cannot change what the next one reads)."""
    rng = random.Random(which)
    for item in _programs()[which].schedule():
        low = lower_only(item.ast)
        nodes = post_order(low)
        ranges = [n for n in nodes if n.op is Ops.RANGE]
        with keeping_answers():
            for root in rng.sample(nodes, len(nodes)):
                deps = free_ranges(root)
                for n in post_order(root):
                    want = frozenset(r for r in ranges if n.op is not Ops.STORE and reaches(n, r))
                    assert deps[n] == want, (n.op, item.ast)
            with pytest.raises(TypeError):
                deps[low] = frozenset()  # type: ignore[index]


def test_the_table_goes_with_the_block():
    """No table outside a block; an inner block keeps the outer one's; optimize_kernel keeps
    one only while it runs."""
    assert kept_answers() is None
    with keeping_answers():
        outer = kept_answers()
        assert outer is not None
        with keeping_answers():
            assert kept_answers() is outer
        assert kept_answers() is outer
    assert kept_answers() is None
    item = _programs()[0].schedule()[-1]
    optimize_kernel(lower_only(item.ast))
    assert kept_answers() is None


@pytest.mark.parametrize("which", range(4))
def test_the_optimizer_walks_each_node_once(which, monkeypatch):
    """While a kernel is optimized no node is walked whole twice (the helpers ask again and
    again: 63,682 walks of bench/opt_cpu.py's 605 kernels were 17,855 roots)."""
    walked: list[UOp] = []
    walk = uop._toposort

    def counted(root, stop=None, kept=None):
        if stop is None:
            walked.append(root)
        return walk(root, stop, kept)

    monkeypatch.setattr(uop, "_toposort", counted)
    for item in _programs()[which].schedule():
        walked.clear()
        optimize_kernel(lower_only(item.ast))
        assert walked and len(walked) == len(set(walked))
