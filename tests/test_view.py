"""Views as data (runtime/view.py) against numpy: a ShapeTracker built by a chain of movement
ops reads exactly the elements numpy's reshape/transpose/broadcast/pad/slice/flip give, and a
merged tracker reads the same elements as the views it replaced."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulegrad.runtime.view import ShapeTracker, flatten, reshape_index


def read(tracker: ShapeTracker, memory: np.ndarray) -> np.ndarray:
    """The array a tracker reads from flat `memory` (masked-off elements are 0)."""
    out = np.zeros(tracker.shape, dtype=memory.dtype)
    for idx in itertools.product(*(range(s) for s in tracker.shape)):
        off, valid = tracker.index(list(idx))
        if valid is None or valid:
            assert 0 <= off < memory.size, (tracker, idx, off)
            out[idx] = memory[off]
    return out


def _factor(n: int, draw) -> tuple[int, ...]:
    dims: list[int] = []
    while n > 1:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        d = draw(st.sampled_from(divs))
        dims.append(d)
        n //= d
    ones = draw(st.integers(0, 2))
    for _ in range(ones):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(dims) or (1,)


def _draw_op(draw, sh: tuple[int, ...], size: int) -> tuple[str, tuple]:
    kind = draw(st.sampled_from(["RESHAPE", "PERMUTE", "EXPAND", "PAD", "SHRINK", "FLIP"]))
    if kind == "RESHAPE":
        return kind, _factor(size, draw)
    if kind == "PERMUTE":
        return kind, tuple(draw(st.permutations(range(len(sh)))))
    if kind == "EXPAND":
        return kind, tuple(draw(st.integers(1, 3)) if s == 1 else s for s in sh)
    if kind == "PAD":
        return kind, tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in sh)
    if kind == "SHRINK":
        arg = []
        for s in sh:
            b = draw(st.integers(0, s - 1))
            arg.append((b, draw(st.integers(b + 1, s))))
        return kind, tuple(arg)
    return kind, tuple(draw(st.booleans()) for _ in sh)


def numpy_op(arr: np.ndarray, kind: str, arg: tuple) -> np.ndarray:
    if kind == "RESHAPE":
        return arr.reshape(arg)
    if kind == "PERMUTE":
        return arr.transpose(arg)
    if kind == "EXPAND":
        return np.broadcast_to(arr, arg)
    if kind == "PAD":
        return np.pad(arr, arg)
    if kind == "SHRINK":
        return arr[tuple(slice(b, e) for b, e in arg)]
    return np.flip(arr, [i for i, f in enumerate(arg) if f])


def _chain(draw, arr: np.ndarray, tr: ShapeTracker) -> tuple[np.ndarray, ShapeTracker]:
    for _ in range(draw(st.integers(1, 6))):
        kind, arg = _draw_op(draw, arr.shape, arr.size)
        arr, tr = numpy_op(arr, kind, arg), tr.apply(kind, arg)
    return arr, tr


@st.composite
def chains(draw):
    """Memory, the array numpy's movement ops make of it, and the tracker the same ops make."""
    base = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    mem = np.arange(1, math.prod(base) + 1, dtype=np.int64)
    arr, tr = _chain(draw, mem.reshape(base), ShapeTracker.from_shape(base))
    return mem, arr, tr


@st.composite
def two_chains(draw):
    """A chain, then a second chain on top of its result, kept as its own tracker."""
    mem, arr, tr_a = draw(chains())
    arr_b, tr_b = _chain(draw, np.ascontiguousarray(arr), ShapeTracker.from_shape(arr.shape))
    return mem, arr_b, tr_a, tr_b


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_tracker_reads_what_numpy_reads(case):
    mem, arr, tr = case
    assert tr.shape == arr.shape
    np.testing.assert_array_equal(read(tr, mem), arr)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_chains())
def test_merge_reads_the_same_elements(case):
    """Stacking two trackers with `+` (which merges views where it can) reads what the
    unmerged stack reads, and what numpy reads."""
    mem, arr, tr_a, tr_b = case
    stacked = ShapeTracker(tr_a.views + tr_b.views)
    merged = tr_a + tr_b
    assert len(merged.views) <= len(stacked.views)
    np.testing.assert_array_equal(read(stacked, mem), arr)
    np.testing.assert_array_equal(read(merged, mem), arr)


def test_merge_folds_a_reshape_of_a_permute():
    """permute then a reshape that only splits an axis stays one view (no stack)."""
    tr = ShapeTracker.from_shape((4, 6)).apply("PERMUTE", (1, 0)).apply("RESHAPE", (2, 3, 4))
    assert len(tr.views) == 1
    tr2 = ShapeTracker.from_shape((4, 6)).apply("PERMUTE", (1, 0)).apply("RESHAPE", (24,))
    assert len(tr2.views) == 2  # the transposed layout is not one run of memory
    mem = np.arange(24)
    np.testing.assert_array_equal(read(tr2, mem), mem.reshape(4, 6).T.reshape(24))


@st.composite
def reshapes(draw):
    """Two shapes of the same size (with axes of size 1 anywhere)."""
    size = draw(st.sampled_from([1, 2, 6, 12, 24, 30, 36]))
    return _factor(size, draw), _factor(size, draw)


@settings(max_examples=200, deadline=None)
@given(reshapes())
def test_reshape_index_reads_what_numpy_reshape_reads(case):
    """reshape_index (rangeify's INDEX through a RESHAPE, with ints here) gives the element numpy
    gives, at every index; flatten is numpy's row-major offset."""
    old, new = case
    arr = np.arange(math.prod(old)).reshape(old)
    for idx in itertools.product(*(range(s) for s in new)):
        at = reshape_index(idx, new, old)
        assert arr[tuple(at)] == arr.reshape(new)[idx], (old, new, idx, at)
        assert flatten(idx, new) == np.ravel_multi_index(idx, new)


def test_a_flipped_empty_mask_stays_empty_when_expanded():
    """pad, a shrink to the padding only (an empty mask), a flip, then an expand: the flip made
    the empty range (0, 0) into (1, 1), which expand took for a valid one and read memory where
    numpy reads the padding's 0 (found by test_tracker_reads_what_numpy_reads in CI)."""
    steps = [("PAD", ((2, 0),)), ("SHRINK", ((0, 1),)), ("FLIP", (True,)), ("EXPAND", (3,))]
    mem = np.array([1], dtype=np.int64)
    arr, tr = mem.reshape(1), ShapeTracker.from_shape((1,))
    for kind, arg in steps:
        arr, tr = numpy_op(arr, kind, arg), tr.apply(kind, arg)
    np.testing.assert_array_equal(read(tr, mem), arr)
