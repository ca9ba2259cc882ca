"""The kernel-level instances `rulegrad check` draws, and the rules over any tagged node.

A kernel instance is a REDUCE over a kernel's loads: up to 2 loops around it, 1 or 2 reduce
ranges (now and then empty), each LOAD a parameter read row-major at the open ranges; it is
evaluated by storing it over the loops and running that kernel in the kernel interpreter.
The instances must be valid kernels whose value numpy computes alike from the parameters. A
rule that matches any node and reads its tag is drawn as a tagged tensor node. Then the check
must fail where it should: each planted wrong rule of tests/soundness/kernel_lowering.rules (an
accumulator started at 0, a dropped reduce range, a half sum never rounded back, a gated load
reading 1 where its gate is off, an untag that drops an op, a buffer recomputed at the wrong
indices) is refuted, its sound original
passes, and so do the package's own rules of these families, with no structural mark left.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from planted_verdicts import assert_passes, assert_refuted

from rulegrad.dsl import load
from rulegrad.generator.draws import RandomData, Reject
from rulegrad.generator.examples import IndexedEval, kernel_values
from rulegrad.generator.instances import draw_instance, mode_of
from rulegrad.generator.soundness import check_paths
from rulegrad.runtime.ops import Ops

FIXTURES = Path(__file__).resolve().parent / "soundness"
PLANTED = FIXTURES / "kernel_lowering.rules"
RULES = Path(__file__).resolve().parent.parent / "rules"
UFUNC = {Ops.ADD: np.add, Ops.MUL: np.multiply, Ops.MAX: np.maximum, Ops.MIN: np.minimum}


@pytest.fixture(scope="module")
def planted_rules():
    cf = load(str(PLANTED))
    return {r.name: r for rs in cf.rulesets for r in rs.rules}


def instances(rule, n: int, seed: int = 0) -> list:
    rng, out, mode = random.Random(seed), [], mode_of(rule)
    while len(out) < n:
        try:
            out.append(draw_instance(RandomData(rng), rule.pattern, mode))
        except Reject:
            continue
    return out


def test_a_reduce_is_drawn_as_a_kernel_value(planted_rules):
    assert mode_of(planted_rules["reduce_to_loop_ok"]) == "kernel"
    assert mode_of(planted_rules["untag_ok"]) == "tensor"


def test_kernel_instances_compute_what_numpy_computes_from_their_parameters(planted_rules):
    """REDUCE(LOAD(param), *ranges): the kernel interpreter's value against numpy's reduction
    of the parameter laid out over (loops, reduce ranges)."""
    seen_ops, empty, checked = set(), 0, 0
    for inst in instances(planted_rules["reduce_to_loop_ok"], 300):
        red = inst.root
        assert red.op is Ops.REDUCE and all(r.op is Ops.RANGE for r in red.src[1:])
        if red.src[0].op is not Ops.LOAD or red.dtype.is_bool:
            continue
        loops = tuple(int(r.src[0].arg) for r in inst.loops)
        rsizes = tuple(int(r.src[0].arg) for r in red.src[1:])
        (param,) = inst.params
        assert param.size == int(np.prod(loops + rsizes))
        data = param.reshape(loops + rsizes)
        axes = tuple(range(len(loops), len(loops) + len(rsizes)))
        if 0 in rsizes:  # over nothing: the op's identity
            empty += 1
        with np.errstate(all="ignore"):
            want = UFUNC[red.arg].reduce(data.astype(np.float64) if red.dtype.is_float else data,
                                         axis=axes, initial=_identity(red.arg, param.dtype))
        got = kernel_values(inst, red)
        assert got.shape == loops and got.dtype == param.dtype
        if red.dtype.is_float:
            np.testing.assert_allclose(got, want.astype(param.dtype), rtol=2e-2, equal_nan=True)
        else:
            assert np.array_equal(got, want.astype(param.dtype))
        seen_ops.add(red.arg)
        checked += 1
    assert checked >= 100 and seen_ops == set(UFUNC) and empty > 0


def _identity(op: Ops, dt: np.dtype) -> object:
    if op is Ops.ADD:
        return 0
    if op is Ops.MUL:
        return 1
    info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
    big = np.inf if dt.kind == "f" else info.max
    small = -np.inf if dt.kind == "f" else info.min
    return small if op is Ops.MAX else big


def test_a_rule_over_any_node_is_drawn_tagged(planted_rules):
    tags = {inst.root.tag for inst in instances(planted_rules["untag_ok"], 100)}
    assert None in tags and len(tags) >= 4


def test_a_buffer_read_is_its_value_at_the_indices(planted_rules):
    """INDEX(BUFFERIZE(INDEX(t, *ranges), *ranges), *at) is t[at], read with numpy from the
    drawn tensor's data at the drawn values of the reader's ranges."""
    checked = 0
    for inst in instances(planted_rules["remove_buffer_ok"], 200):
        idx = inst.root
        buf = idx.src[0]
        assert idx.op is Ops.INDEX and buf.op is Ops.BUFFERIZE
        assert len(idx.src) - 1 == len(buf.src) - 1 == len(buf.shape)
        value = buf.src[0]
        if value.op is not Ops.INDEX or value.src[1:] != buf.src[1:]:
            continue
        t = value.src[0]
        data = t.base.arg.ensure().reshape(t.shape)
        at = tuple(inst.range_vals[i] if i.op is Ops.RANGE else i.arg for i in idx.src[1:])
        got = IndexedEval(inst).value(idx)
        assert got.tobytes() == data[at].tobytes()
        checked += 1
    assert checked >= 50


# ---------------------------------------------------------------------- the check fails
@pytest.fixture(scope="module")
def planted():
    return {r.rule.name: r for r in check_paths([str(PLANTED)], examples=100, seed=0).rules}


@pytest.mark.parametrize("name", ["reduce_to_loop_zero", "reduce_drops_range",
                                  "half_sum_unrounded", "guarded_load_one", "untag_drops_op",
                                  "remove_buffer_swapped", "remove_buffer_first"])
def test_a_planted_wrong_rule_is_refuted(planted, name):
    assert_refuted(planted[name])


@pytest.mark.parametrize("name", ["reduce_to_loop_ok", "half_sum_ok", "guarded_load_ok",
                                  "untag_ok", "remove_buffer_ok", "const_buffer_ok"])
def test_its_sound_original_passes(planted, name):
    assert_passes(planted[name])


@pytest.mark.parametrize("path,name", [("lower.rules", "half_sum"),
                                       ("lower.rules", "guarded_load"),
                                       ("lower.rules", "reduce_to_loop"),
                                       ("kernelize.rules", "remove_tags"),
                                       ("rangeify.rules", "unmark"),
                                       ("rangeify.rules", "remove_buffer"),
                                       ("rangeify.rules", "const_buffer")])
def test_the_packages_rules_pass_on_instances(path, name):
    (r,) = check_paths([str(RULES / path)], examples=60, seed=0, rule=name).rules
    assert r.method == "examples" and r.verdict == "passed", r.line()
