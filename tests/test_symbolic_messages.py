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
