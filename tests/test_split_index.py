"""symbolic.rules' divmod_scaled rules (issue 32): a split index (y // b) * (b * k) + (y % b) * k,
with an offset at either nesting, recombined to y * k. A sum over axes (1, 2) of an int
16x127x127x3 tensor reads through the cast to its int64 accumulator among the views, which left
((q // 3) // 127) * 381 + ((q // 3) % 127) * 3 + q % 3 per element: now every dtype's partials
kernel reads q. Counted from the rendered C (never timed); the values against numpy at every
point (the rewrites) and over a sweep of dtypes, reductions, axes and shapes."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from index_math import index_value as _value

from rulegrad import Ops, Tensor, UOp, graph_rewrite
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.rules import matcher

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "bool", "float16", "float32"]
AXES = [(1, 2), (0, 2), (0, 1, 2), (1,), (3,)]
RNG = np.random.default_rng(32)


def _ops(root: UOp) -> set[Ops]:
    return {n.op for n in root.toposort()}


def _divisors(root: UOp) -> set[int]:
    return {n.src[1].arg for n in root.toposort() if n.op in (Ops.IDIV, Ops.MOD)}


def _forms(q: UOp, p: UOp, z: UOp) -> dict[str, UOp]:
    """The split index of q over (127, 3) and of q over 5 (k == 1), in the orders and nestings
    the views build. Without q % 3 the forms over (127, 3) leave (q // 3) * 3 (+ z)."""
    y = q // 3
    hi, lo = (y // 127) * 381, (y % 127) * 3
    return {
        "two levels": hi + (lo + q % 3),
        "two levels, mod first": (lo + q % 3) + hi,
        "scaled": hi + lo,
        "scaled, mod first": lo + hi,
        "offset inside": hi + (lo + z),
        "offset inside, idiv nested": lo + (hi + z),
        "offset inside, mod first": (z + lo) + hi,
        # one range: of a sum, divmod_fold leaves q % 5 as a congruent sum's remainder first
        "k == 1 with an offset": (p // 5) * 5 + (p % 5 + z),
        "k == 1 with an offset, idiv nested": p % 5 + ((p // 5) * 5 + z),
    }


@pytest.mark.parametrize("form", list(_forms(UOp.range(2, 0), UOp.range(2, 1), UOp.range(2, 2))))
def test_a_split_index_recombines_and_equals_the_original_everywhere(form):
    r0, r1, w, p = UOp.range(9, 0), UOp.range(48, 1), UOp.range(4, 2), UOp.range(23, 3)
    q = r0 * 48 + r1  # 0 .. 431, past 381 so the top level (q // 3) // 127 is not 0 everywhere
    before = _forms(q, p, w * 7 + 2)[form]
    after = graph_rewrite(before, matcher("symbolic", "sym"))
    assert _divisors(after) == ({3} if "two levels" not in form and "k == 1" not in form
                                else set()), (form, after)
    for point in itertools.product(range(9), range(48), range(4), range(0, 23, 4)):
        env = dict(zip((r0, r1, w, p), point))
        assert _value(before, env) == _value(after, env), (form, point)


def test_a_mismatched_scale_keeps_its_divisions():
    # (y // 3) * 10 + (y % 3) * 3 is not y * 3: the rules' guard m == b * k refuses it
    q = UOp.range(50, 0)
    before = (q // 3) * 10 + (q % 3) * 3
    after = graph_rewrite(before, matcher("symbolic", "sym"))
    assert {Ops.IDIV, Ops.MOD} <= _ops(after)
    want = [(i // 3) * 10 + (i % 3) * 3 for i in range(50)]
    assert [_value(after, {q: i}) for i in range(50)] == want


def _c_text(t: Tensor) -> str:
    """The kernels' functions (past the vector helpers' header) as rendered."""
    out = []
    for i, item in enumerate(t.schedule()):
        k = render_kernel(optimize_kernel(lower_only(item.ast)), f"k{i}")
        out.append(k.source[k.source.index(f"void {k.cname}("):])
    return "\n".join(out)


def _sample(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.startswith("float"):
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(0 if dtype == "uint8" else -100, 100, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_sum_over_the_middle_axes_reads_without_dividing(dtype):
    x = _sample(dtype, (16, 127, 127, 3))
    t = Tensor(x).sum(axis=(1, 2))
    c = _c_text(t)
    assert not re.search(r"rg_idiv|rg_mod|[/%]", c), c
    _check("sum", x, (1, 2), t.numpy())


def _check(op: str, x: np.ndarray, axis: tuple[int, ...], got: np.ndarray) -> None:
    ref = getattr(x, op)(axis=axis)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    if x.dtype.kind != "f":
        if op == "mean":  # a float mean of exact ints: one rounding of the division
            assert np.allclose(got, ref, rtol=4 * np.finfo(got.dtype).eps, atol=0)
        else:
            assert np.array_equal(got, ref)
        return
    # floats against float64: the reduction contract's bound, (n + 1) eps sum |x| (a mean: / n)
    x64 = x.astype(np.float64)
    exact = getattr(x64, op)(axis=axis)
    n = int(np.prod([x.shape[a] for a in axis]))
    scale = np.abs(x64).sum(axis=axis) * {"sum": n + 1, "mean": (n + 1) / n, "max": 0}[op]
    eps = np.finfo(x.dtype).eps
    assert np.all(np.abs(got.astype(np.float64) - exact) <= eps * (scale + np.abs(exact)))


@pytest.mark.parametrize("shape", [(16, 127, 127, 3), (2, 3, 5, 7), (1, 1, 1, 1),
                                   (7, 13, 17, 19)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sums_means_and_maxes_over_any_axes_match_numpy(dtype, shape):
    x = _sample(dtype, shape)
    for axis, op in itertools.product(AXES, ["sum", "mean", "max"]):
        _check(op, x, axis, getattr(Tensor(x), op)(axis=axis).numpy())
