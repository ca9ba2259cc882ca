"""Cliffs bench/sweep.py's fourth held-out set (`--held-out-4`) found, each checked against numpy
at shapes around the one it was found at and by the work its kernel does (the actions taken,
the loops of its reduces), never by time."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import schedule_actions

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_kernel, lower_only
from rulegrad.runtime.ops import Ops

# a reduction over the first and last of 4 axes: at a prime first axis (1021, 2039, 997) the
# scheduler splits it into partials and fuses them back into one kernel, a reduce of a reduce
SHAPES = [(1021, 5, 3, 64), (2039, 2, 7, 33), (4096, 1, 3, 17), (997, 3, 1, 128), (2, 3, 4, 5)]
PRIME = {1021, 2039, 997}


def _nested(ast) -> int:
    """How many loop-form reduces update from another reduce by the same op."""
    return sum(1 for n in ast.toposort() if n.op is Ops.REDUCE and len(n.src[0].src) == 2
               and n.src[0].src[1].op is Ops.REDUCE and n.src[0].src[1].arg is n.arg)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", ["max", "min", "sum"])
def test_a_reduce_over_first_and_last_axes_is_one_reduce_with_the_contiguous_axis_inside(
        op: str, shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    t = getattr(Tensor(x), op)(axis=(0, 3))
    want = getattr(np.float64(x) if op == "sum" else x, op)(axis=(0, 3))
    items = t.schedule()
    if shape[0] in PRIME:  # a nest before the optimizer, one reduce after it
        assert sum(_nested(lower_only(item.ast)) for item in items) == 1
        assert sum(_nested(lower_kernel(item.ast)) for item in items) == 0
        assert any(a.startswith("UNNEST") for a in schedule_actions(t))
    # a float sum within the reduction contract's bound (any order), max and min exactly
    bound = 1e-5 * np.abs(np.float64(x)).sum(axis=(0, 3)) if op == "sum" else 0
    got = t.numpy()
    assert got.shape == want.shape and np.all(np.abs(got - want) <= bound), (got, want)


def test_an_int_sum_of_a_split_reduce_is_exact() -> None:
    x = np.random.default_rng(2).integers(-1000, 1000, (2039, 2, 7, 33)).astype(np.int32)
    np.testing.assert_array_equal(Tensor(x).sum(axis=(0, 3)).numpy(), x.sum(axis=(0, 3)))
