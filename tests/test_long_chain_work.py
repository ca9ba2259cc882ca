"""The work a long elementwise chain makes the compiler do, counted (never timed).

The issue's load test (1.25M ops through the C backend: bench/chain.py times its phases;
test_reliability.py runs 125,000) spent most of its time in a few places that grew with the
kernel: a regex scan of the whole source per prelude helper that tried every position, an
inline broadcast call per vector statement for gcc to expand, and whole-graph walks no
elementwise kernel needs.
Each is checked here by what is done (calls, patterns, emitted text), on kernels of seconds.
(The prelude no longer reads the source at all: it is made from the names the kernels'
printers recorded, test_prelude_uses.py.)
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.backends.c.lower import lower_only
from rulegrad.backends.c.opt import optimize_kernel
from rulegrad.backends.c.render import render_kernel
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp


def _kernel(t: Tensor) -> UOp:
    items = t.schedule()
    assert len(items) == 1
    return items[0].ast


# ---------------------------------------------------------------------- vector statements
def test_a_vector_op_reads_a_scalar_operand_without_a_broadcast_call():
    """A float32 loop printed as 8-lane vectors writes `v * 0.5`, `1.0 - v`, `2.0 / v` as
    they are (C broadcasts the scalar), not through an inline rg_vset_f32 call per statement
    that gcc expanded at 3x the build time; only ops with no infix form (max) broadcast."""
    rng = np.random.default_rng(3)
    a = (rng.random(200) + 0.5).astype(np.float32)
    x, ref = Tensor(a), a.copy()
    for _ in range(20):
        x, ref = (1.0 - x * 0.5) + 3.0, (np.float32(1.0) - ref * np.float32(0.5)) + np.float32(3)
        x, ref = 2.0 / x, np.float32(2.0) / ref
    x, ref = x.maximum(0.75), np.maximum(ref, np.float32(0.75))
    source = render_kernel(optimize_kernel(lower_only(_kernel(x))), "k").source
    statements = [line for line in source.splitlines() if line.lstrip().startswith("const ")]
    vectors = [s for s in statements if "rg_vf32 t" in s]
    assert len(vectors) >= 80  # the loop is vectorized
    broadcasts = [s for s in vectors if "rg_vset_f32(" in s]
    assert len(broadcasts) == 1 and "rg_vmax_f32" in broadcasts[0], broadcasts
    np.testing.assert_array_equal(x.numpy(), ref)


# ---------------------------------------------------------------------- the optimizer's walks
def test_an_elementwise_store_plans_no_interchange_without_a_dependency_walk(monkeypatch):
    from rulegrad.rules import interchange_helpers

    calls: list[UOp] = []
    for name in ("free_ranges", "toposort"):
        walk = getattr(interchange_helpers, name)
        monkeypatch.setattr(interchange_helpers, name,
                            lambda root, *a, walk=walk: calls.append(root) or walk(root, *a))
    rng = np.random.default_rng(4)
    a = rng.random((8, 64)).astype(np.float32)
    optimize_kernel(lower_only(_kernel((Tensor(a) * 0.5 + 1.0).exp())))
    assert calls == []  # no REDUCE (seen in the node's op summary): no plan, and no walk
    big = rng.random((256, 64)).astype(np.float32)
    optimize_kernel(lower_only(_kernel(Tensor(big).sum(axis=0))))
    assert len(calls) >= 1  # a reduce still gets its plan from them


def test_substitute_does_not_revisit_its_replacements():
    x = UOp(Ops.CONST, dtypes.float32, (), 1.0)
    y = UOp(Ops.CONST, dtypes.float32, (), 2.0)
    expr = (x + y) * x
    twice = x + x  # holds x: a revisit would replace the x inside it again
    out = expr.substitute({x: twice})
    assert out is (twice + y) * twice
    assert out.src[1].src[0] is x
    tagged = expr.replace(tag=7)  # a rebuilt node keeps its arg and tag
    assert tagged.substitute({y: x}) is ((x + x) * x).replace(tag=7)


def test_upcast_walks_the_kernel_once_along_its_loop(monkeypatch):
    # upcast's test (is the loop worth it) and vectorizable (which vectors) ask for the same
    # nodes along the innermost loop: the kernel is walked once
    from rulegrad.rules import opt_helpers

    walked: list[UOp] = []
    walk = opt_helpers.along
    monkeypatch.setattr(opt_helpers, "along", lambda v, j: walked.append(v) or walk(v, j))
    rng = np.random.default_rng(5)
    a = rng.random(256).astype(np.float32)
    x = Tensor(a)
    for _ in range(10):
        x = x * 0.5 + 1.0
    low = lower_only(_kernel(x))
    opt = optimize_kernel(low)
    (store,) = low.src
    assert walked.count(store.src[1]) == 1
    assert any(n.op is Ops.RANGE and n.arg[1] == "vector" for n in opt.toposort())


# ---------------------------------------------------------------------- building the graph
@pytest.mark.parametrize("dt", [np.float32, np.int32, np.uint8, np.float64])
def test_an_op_with_a_python_number_skips_the_general_lift(dt, monkeypatch):
    # `x + 1.0`, `2 - x`, ...: one probe and the lifted constant, not the operand lifting of two
    # tensors (most of a long chain's graph building); numpy's promotion and values still hold
    from rulegrad.runtime import tensor

    lifted: list[object] = []
    lift = tensor._lift
    monkeypatch.setattr(tensor, "_lift", lambda items, d: lifted.append(items) or lift(items, d))
    a = (np.arange(12).reshape(3, 4) % 7 + 1).astype(dt)
    x = Tensor(a)
    pairs = [(x + 1.0, a + 1.0), (2 - x, 2 - a), (x * 3, a * 3), (x / 2.0, a / 2.0),
             (x - 0.5, a - 0.5), (7.0 * x, 7.0 * a)]
    assert lifted == []
    for got, want in pairs:
        assert got.dtype.np == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got.numpy(), want)
    # two realized tensors, one broadcast (not lazy records: tensor.py's _broadcast_binary): the
    # general path
    _ = Tensor(a).realize() + Tensor(a[:1]).realize()
    assert len(lifted) == 1


# ---------------------------------------------------------------------- the kernel's segments
def _segment_chain(n: int, a: np.ndarray, periodic: bool) -> tuple[Tensor, np.ndarray]:
    # every segment reads the loaded x and the previous segment's y; the divisors (whole
    # numbers: literals in the C, not kernel arguments) make every segment different
    x, ref_x = Tensor(a), a.copy()
    y, ref = x, a.copy()
    for i in range(n):
        if periodic:
            y, ref = y * 0.5 + x, ref * np.float32(0.5) + ref_x
        else:
            y, ref = (y + x) / float(i + 2), (ref + ref_x) / np.float32(i + 2)
    return y, ref


@pytest.mark.parametrize("periodic", [True, False])
def test_segments_that_compute_alike_are_one_function(monkeypatch, periodic):
    """A run of statements longer than SEGMENT is split into functions; runs that compute
    alike from different names are one function called again (gcc -O1 folds no identical
    functions: a 1.25M-op chain's 1,250 copies were most of its build), others stay apart."""
    from rulegrad.backends.c import render

    monkeypatch.setattr(render, "SEGMENT", 40)
    a = (np.random.default_rng(6).random(64) + 0.5).astype(np.float32)
    y, ref = _segment_chain(300, a, periodic)
    source = render_kernel(optimize_kernel(lower_only(_kernel(y))), "k").source
    defined = re.findall(r"void (k_s[0-9]+)\(", source)
    called = re.findall(r"^\s+(k_s[0-9]+)\(", source, re.M)
    assert len(called) == 16  # 601 statements (a load, 300 products and sums) in runs of 40
    assert set(called) == set(defined) and len(defined) == len(set(defined))
    if periodic:
        assert len(defined) <= 4  # the first (its load), the last, and the ones between
    else:
        assert len(defined) == 16
    np.testing.assert_array_equal(y.numpy(), ref)
