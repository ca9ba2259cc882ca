"""adv46's hunt (issue 31): what it found in last round's code and its bad inputs.

A slice by a bound Variable (`t[:, :v]`, tinygrad's way to take the first v rows) reached
Python's `slice.indices` and was a bare TypeError ("slice indices must be integers"). It is
shrink's symbolic size (0, v); every other slice a Variable is in is refused by name, and so is
a write through one (it would pad by a symbolic amount). The oracle: numpy's slice at the bound
value, over a source whose elements past it are NaN, so a read past the bound would show.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.runtime.errors import InvalidArgument

SRC = np.arange(40, dtype=np.float32).reshape(4, 10)


def _past_nan(v: int) -> np.ndarray:
    a = SRC.copy()
    a[:, v:] = np.nan  # read only by a kernel that reads past the bound
    return a


@pytest.mark.parametrize("v", [1, 3, 10])
@pytest.mark.parametrize("form", ["[:v]", "[0:v]", "[:v:1]"])
def test_a_slice_to_a_bound_variable_is_its_first_rows(v, form):
    a = _past_nan(v)
    n = Variable("n", 1, 10).bind(v)
    sl = {"[:v]": slice(None, n), "[0:v]": slice(0, n), "[:v:1]": slice(None, n, 1)}[form]
    t = Tensor(a)[:, sl]
    np.testing.assert_array_equal(t.sum(1).numpy(), a[:, :v].sum(1))
    np.testing.assert_array_equal((t * 2).max(1).numpy(), (a[:, :v] * 2).max(1))
    # before an int index and after None: the Variable's axis is found by position
    np.testing.assert_array_equal(Tensor(a)[None, 2, :n].sum(-1).numpy(), a[None, 2, :v].sum(-1))


@pytest.mark.parametrize("index, words", [
    (lambda n: (slice(None), slice(n.bind(2), None)), "only [:v]"),
    (lambda n: (slice(None), slice(None, n.bind(3), 2)), "only [:v]"),
    (lambda n: (slice(None), slice(None, n)), "must be bound"),
    (lambda n: (slice(None, n.bind(3)),), "max 10 is past the axis's size 4"),
    (lambda n: (n.bind(2),), "unsupported index n=2"),
])
def test_other_slices_by_a_variable_are_refused_by_name(index, words):
    n = Variable("n", 1, 10)
    with pytest.raises(IndexError, match=re.escape(words)):
        Tensor(SRC)[index(n)]


def test_a_slice_by_a_variable_over_a_symbolic_axis_is_refused_by_name():
    t = Tensor(SRC).shrink((None, (0, Variable("n", 1, 10).bind(4))))
    with pytest.raises(IndexError, match="the axis is symbolic"):
        t[:, :Variable("k", 1, 3).bind(2)]


def test_a_write_through_a_slice_by_a_variable_is_refused_by_name():
    t = Tensor(SRC.copy())
    with pytest.raises(InvalidArgument, match="symbolic span"):
        t[:, :Variable("n", 1, 10).bind(3)] = 5.0
    np.testing.assert_array_equal(t.numpy(), SRC)  # (nothing written)
