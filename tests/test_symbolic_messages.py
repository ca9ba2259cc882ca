"""An error about a tensor of symbolic shape names each bound size as name=value, as
runtime/variable.py's `show` prints it, never as the UOp graph of a BIND (which printed a
multi-line DEFINE_VAR dump into messages of matmul, conv2d, expand, assign, item, ...)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor, Variable
from rulegrad.runtime.errors import InvalidArgument


def _rows(v: int) -> Tensor:
    n = Variable("n", 1, 12).bind(v)
    return Tensor(np.zeros((12, 4), np.float32)).shrink(((0, n), None))


CALLS = {
    "matmul": lambda t: t @ t,
    "conv2d": lambda t: t.conv2d(Tensor(np.zeros((1, 1, 1), np.float32))),
    "expand": lambda t: t.expand(3, 2, 4),
    "item": lambda t: t.item(),
    "cross_entropy": lambda t: t.cross_entropy(Tensor(np.zeros((3, 2), np.int32))),
    "gather": lambda t: t.gather(1, Tensor(np.zeros((13, 1), np.int32))),
    "axis": lambda t: t.sum(5),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_messages_show_symbolic_sizes_by_name(call):
    with pytest.raises((InvalidArgument, ValueError, IndexError)) as info:
        CALLS[call](_rows(5))
    text = str(info.value)
    assert "n=5" in text, text
    assert "DEFINE_VAR" not in text and "BIND" not in text, text


def test_an_assign_into_a_symbolic_strided_slice_says_why_it_is_refused():
    """`s[:n, ::2]` of 5 columns holds a PAD that its SHRINK drops; at concrete sizes it is a view
    (tests/test_adversarial_60.py), at a symbolic size it is proven one case by case, n's values
    up to view_chains.MAX_BINDINGS (tests/test_adversarial_61.py); past them it is not, and the
    refusal says so, not that the view repeats or invents elements, and s is left as it was. A
    PAD whose places are read is refused for that reason."""
    a = np.arange(5 * 5000, dtype=np.float32).reshape(5000, 5)
    s = Tensor(a.copy()).realize()
    v = s[:Variable("n", 1, 5000).bind(3), ::2]
    with pytest.raises(InvalidArgument, match=r"n=3|symbolic") as err:
        v.assign(v * 0 + 1)
    assert "proven a view at concrete sizes only" in str(err.value), err.value
    np.testing.assert_array_equal(s.numpy(), a)
    padded = Tensor(a[:4].copy()).realize().pad(((1, 0), (0, 0)))
    with pytest.raises(InvalidArgument, match="repeats or invents elements"):
        padded.assign(padded * 0 + 1)
