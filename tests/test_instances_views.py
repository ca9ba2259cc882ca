"""The instance families `rulegrad check` draws for views and sharded tensors.

VIEW instances (a drawn chain of movement ops folded into a ShapeTracker over a drawn buffer)
and sharded ones (MULTI of per-device buffers on 2-3 devices, sharded along an axis or
replicated; MSTACK and MSELECT) must be valid programs the oracle evaluates to their declared
shape, and the oracle's reading of them must be numpy's. Then the check must fail where it
should: each planted wrong rule of tests/soundness/sharded_views.rules (a permute that forgets
to move the sharded axis, a reduction without its all-reduce, a gather in the wrong order, a
part from the wrong device, a view with swapped strides, views composed in the wrong order,
a view read without its mask) is refuted with a counterexample, its sound original passes, and
so do the package's own rules of these families, with no structural mark left on them.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from planted_verdicts import assert_passes, assert_refuted

from rulegrad.backends.oracle import evaluate
from rulegrad.dsl import load
from rulegrad.generator.draws import RandomData, Reject
from rulegrad.generator.instances import draw_instance
from rulegrad.generator.soundness import check_paths
from rulegrad.runtime.buffer import Buffer
from rulegrad.runtime.device import device_of
from rulegrad.runtime.dtype import dtypes
from rulegrad.runtime.ops import Ops
from rulegrad.runtime.uop import UOp, toposort
from rulegrad.runtime.view import ShapeTracker

FIXTURES = Path(__file__).resolve().parent / "soundness"
PLANTED = FIXTURES / "sharded_views.rules"
RULES = Path(__file__).resolve().parent.parent / "rules"
PATTERNS = """
rules t = {
  a_view:   VIEW(x) as v -> x
  a_multi:  MULTI as m -> m
  a_select: MSELECT(x) as m -> x
}
"""


@pytest.fixture(scope="module")
def patterns(tmp_path_factory):
    path = tmp_path_factory.mktemp("patterns") / "patterns.rules"
    path.write_text(PATTERNS)
    cf = load(str(path))
    return {r.name: r.pattern for rs in cf.rulesets for r in rs.rules}


def instances(pattern, mode: str, n: int, seed: int = 0) -> list:
    rng, out = random.Random(seed), []
    while len(out) < n:
        try:
            out.append(draw_instance(RandomData(rng), pattern, mode))
        except Reject:
            continue
    return out


# ---------------------------------------------------------------------- the oracle's reading
def _numpy_moves(x: np.ndarray, moves: list) -> np.ndarray:
    for op, arg in moves:
        if op == "RESHAPE":
            x = x.reshape(arg)
        elif op == "EXPAND":
            x = np.broadcast_to(x, arg)
        elif op == "PERMUTE":
            x = x.transpose(arg)
        elif op == "PAD":
            x = np.pad(x, arg)
        elif op == "SHRINK":
            x = x[tuple(slice(b, e) for b, e in arg)]
        else:
            x = x[tuple(slice(None, None, -1) if f else slice(None) for f in arg)]
    return x


def test_a_view_reads_what_numpy_movement_ops_read():
    """The oracle's VIEW (offsets, strides, masks, stacked views) against numpy's own
    movement ops on random chains, every op and every stacking ShapeTracker makes."""
    rng = random.Random(1)
    for _ in range(300):
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 3)))
        data = np.arange(1, np.prod(shape) + 1, dtype=np.float32).reshape(shape)
        moves, cur = [], shape
        for _ in range(4):
            op = rng.choice(["PERMUTE", "PAD", "SHRINK", "FLIP", "RESHAPE", "EXPAND"])
            if op == "PERMUTE":
                arg = tuple(rng.sample(range(len(cur)), len(cur)))
            elif op == "PAD":
                arg = tuple((rng.randint(0, 2), rng.randint(0, 2)) for _ in cur)
            elif op == "SHRINK":
                arg = tuple((b, rng.randint(b, d)) for d in cur for b in [rng.randint(0, d)])
            elif op == "FLIP":
                arg = tuple(rng.random() < 0.5 for _ in cur)
            elif op == "RESHAPE":
                size = int(np.prod(cur))
                arg = rng.choice([(size,), (1, size), (size, 1)])
            else:
                if 1 not in cur:
                    continue
                arg = tuple(d if d != 1 else rng.randint(1, 3) for d in cur)
            moves.append((op, arg))
            cur = _numpy_moves(np.zeros(cur), [(op, arg)]).shape
        tracker = ShapeTracker.from_shape(shape)
        for op, arg in moves:
            tracker = tracker.apply(op, arg)
        buf = UOp(Ops.BUFFER, dtypes.float32, (), Buffer(data.size, dtypes.float32, data))
        view = UOp(Ops.VIEW, dtypes.float32, (buf.reshape(shape),), tracker)
        got = evaluate([view])[0]
        want = _numpy_moves(data, moves)
        assert got.shape == want.shape and np.array_equal(got, want), (moves, tracker)


def test_an_op_of_parts_is_computed_on_each_device():
    """MSTACK is one value per device: an op of parts runs per part, MSELECT picks one,
    MULTI joins them along its axis (numpy on the parts' data as the oracle of the oracle)."""
    devs = ("CPU:1", "CPU", "CPU:2")
    rng = np.random.default_rng(0)
    datas = [rng.normal(size=(2, 3)).astype(np.float32) for _ in devs]
    parts = [UOp(Ops.BUFFER, dtypes.float32, (), Buffer(6, dtypes.float32, d, device=dev))
             .reshape((2, 3)) for d, dev in zip(datas, devs)]
    stack = UOp(Ops.MSTACK, dtypes.float32, tuple(parts), devs)
    summed = UOp(Ops.REDUCE_AXIS, dtypes.float32, (stack.permute((1, 0)),), (Ops.ADD, (1,)))
    whole = UOp(Ops.MULTI, dtypes.float32, (summed,), (0, devs))
    one = UOp(Ops.MSELECT, dtypes.float32, (summed,), 2)
    got_whole, got_one = evaluate([whole, one])
    want = [d.T.sum(axis=1, keepdims=True) for d in datas]
    assert np.array_equal(got_whole, np.concatenate(want, 0))
    assert np.array_equal(got_one, want[2])


# ---------------------------------------------------------------------- the instances
def test_view_instances_are_valid_views_of_drawn_buffers(patterns):
    kinds = set()
    for inst in instances(patterns["a_view"], "tensor", 200):
        v = inst.root
        assert v.op is Ops.VIEW and isinstance(v.arg, ShapeTracker)
        value = evaluate([v])[0]
        assert value.shape == v.shape and value.dtype == v.dtype.np
        kinds.add((v.arg.is_contiguous, v.arg.masked, len(v.arg.views) > 1,
                   any(s < 0 for w in v.arg.views for s in w.strides)))
    # contiguous and not, masked (a pad), stacked views, negative strides (a flip): all drawn
    assert {k[0] for k in kinds} == {True, False}
    assert any(k[1] for k in kinds) and any(k[2] for k in kinds) and any(k[3] for k in kinds)


def test_sharded_instances_are_parts_on_two_or_three_devices(patterns):
    axes, counts = set(), set()
    for inst in instances(patterns["a_multi"], "sharded", 200):
        m = inst.root
        axis, devs = m.arg
        stack = m.src[0]
        assert stack.op is Ops.MSTACK and len(devs) == len(set(devs)) in (2, 3)
        assert tuple(device_of(p) for p in stack.src) == devs == device_of(m)
        datas = [p.base.arg.ensure().reshape(p.shape) for p in stack.src]
        if axis is None:  # replicas hold one value
            assert all(np.array_equal(d, datas[0], equal_nan=True) for d in datas)
            want = datas[0]
        else:
            want = np.concatenate(datas, axis)
        got = evaluate([m])[0]
        assert got.shape == m.shape == want.shape
        assert got.tobytes() == np.ascontiguousarray(want).tobytes()  # bit for bit
        axes.add(axis)
        counts.add(len(devs))
    assert None in axes and len(axes) >= 3 and counts == {2, 3}


def test_a_selected_part_is_of_a_per_device_value(patterns):
    ops = set()
    for inst in instances(patterns["a_select"], "sharded", 100):
        sel = inst.root
        assert sel.op is Ops.MSELECT and 0 <= sel.arg < len(device_of(sel.src[0]))
        ops.add(sel.src[0].op)
        assert all(n.op is not Ops.MULTI for n in toposort(sel))
        assert evaluate([sel])[0].shape == sel.shape
    assert Ops.MSTACK in ops and len(ops) >= 3  # parts, and ops over parts


# ---------------------------------------------------------------------- the check fails
@pytest.fixture(scope="module")
def planted():
    return {r.rule.name: r for r in check_paths([str(PLANTED)], examples=100, seed=0).rules}


UNSOUND = ["mop_multi_unshifted", "reduce_multi_local", "copy_multi_reversed",
           "mselect_push_next", "mop_to_view_swapped", "view_view_flipped", "ast_view_unmasked",
           "ast_view_const_unmasked"]


@pytest.mark.parametrize("name", UNSOUND)
def test_a_planted_wrong_rule_is_refuted(planted, name):
    assert_refuted(planted[name])


@pytest.mark.parametrize("name", ["mop_multi_ok", "reduce_multi_ok", "copy_multi_ok",
                                  "mselect_push_ok", "mop_to_view_ok", "view_view_ok"])
def test_its_sound_original_passes(planted, name):
    assert_passes(planted[name])


MULTI_RULES = ["alu_multi", "reduce_multi", "mop_multi", "marker_multi", "copy_multi",
               "assign_multi", "mselect_mstack", "mselect_push"]
VIEW_RULES = ["mop_on_view", "mop_to_view", "view_noop", "view_view", "ast_view_const",
              "ast_view_mem", "ast_view", "fuse_reduce", "fuse_push"]


def test_the_packages_sharded_rules_pass_on_instances():
    report = check_paths([str(RULES / "multi.rules")], examples=60, seed=0)
    got = {r.rule.name: r for r in report.rules}
    for name in MULTI_RULES:
        r = got[name]
        assert r.method == "examples" and r.verdict == "passed", r.line()


@pytest.mark.parametrize("name", VIEW_RULES)
def test_the_packages_view_rules_pass_on_instances(name):
    (r,) = check_paths([str(RULES / "kernelize.rules")], examples=60, seed=0, rule=name).rules
    assert r.method == "examples" and r.verdict == "passed", r.line()


def test_a_large_reduction_of_parts_is_computed_on_each_device():
    """A reduction of a product of parts larger than the oracle's block size (which it would
    otherwise evaluate a block at a time) is still computed part by part."""
    devs = ("CPU", "CPU:1")
    rng = np.random.default_rng(1)
    shape = (1100, 1000)
    datas = [rng.integers(-3, 4, shape).astype(np.int32) for _ in devs]
    parts = [UOp(Ops.BUFFER, dtypes.int32, (), Buffer(d.size, dtypes.int32, d, device=dev))
             .reshape(shape) for d, dev in zip(datas, devs)]
    stack = UOp(Ops.MSTACK, dtypes.int32, tuple(parts), devs)
    prod = UOp(Ops.MUL, dtypes.int32, (stack, stack))
    summed = UOp(Ops.REDUCE_AXIS, dtypes.int32, (prod,), (Ops.ADD, (1,)))
    got = evaluate([UOp(Ops.MULTI, dtypes.int32, (summed,), (0, devs))])[0]
    want = np.concatenate([(d * d).sum(axis=1, keepdims=True, dtype=np.int32) for d in datas])
    assert np.array_equal(got, want)
