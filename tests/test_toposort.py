"""toposort (runtime/uop.py) against its definition: a depth-first walk that takes each node's
sources left to right and emits a node after its sources (written here recursively, on small
random DAGs with shared nodes, with and without a `stop` that prunes)."""

from __future__ import annotations

import random

import pytest
from walk_oracles import post_order as definition

from rulegrad import Ops, UOp, dtypes
from rulegrad.runtime.uop import toposort


@pytest.mark.parametrize("seed", range(40))
def test_toposort_is_the_depth_first_post_order(seed):
    rng = random.Random(seed)
    pool = [UOp.const(dtypes.int32, 7000 + 100 * seed + i) for i in range(rng.randint(1, 5))]
    for _ in range(rng.randint(1, 60)):
        srcs = tuple(rng.choice(pool) for _ in range(rng.randint(1, 4)))
        # (a binary op of two sources, a SINK of another count: UOp refuses an ALU node whose
        # source count is not its arity)
        pool.append(UOp(rng.choice([Ops.ADD, Ops.MUL, Ops.MAX]), dtypes.int32, srcs)
                    if len(srcs) == 2 else UOp.sink(*srcs))
    root = UOp.sink(*rng.sample(pool, rng.randint(1, min(5, len(pool)))))
    assert toposort(root) == definition(root)
    pruned = set(rng.sample(pool, min(3, len(pool))))
    assert toposort(root, pruned.__contains__) == definition(root, pruned.__contains__)
    assert toposort(root, lambda n: n is root) == []
