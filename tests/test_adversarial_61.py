"""adv61: issue 31's open wrong answers, and held-out programs for its classes, against numpy
and torch.

Fixed, each where it was made:
1. cross_entropy over 0 classes: probability targets divided label_smoothing by 0 classes on
   the host (ZeroDivisionError, even at smoothing 0); torch gives NaN for a mean over no
   logits (even with rows left: N x 0) and -0.0 per row. Class index targets over 0 classes
   are all out of bounds (torch refuses them), and an empty batch's smoothed sum is NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rulegrad import Tensor
from rulegrad.runtime.errors import InvalidArgument


# ---------------------------------------------------------- 1. cross_entropy over 0 classes
@pytest.mark.parametrize("shape", [(3, 0), (0, 0), (0, 3), (0,), (2, 0, 4)])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_empty_probabilities_as_torch(shape, smoothing, reduction) -> None:
    want = torch.nn.functional.cross_entropy(torch.zeros(shape), torch.zeros(shape),
                                             reduction=reduction, label_smoothing=smoothing)
    got = Tensor(np.zeros(shape, np.float32)).cross_entropy(
        Tensor(np.zeros(shape, np.float32)), reduction=reduction,
        label_smoothing=smoothing).numpy()
    assert got.shape == tuple(want.shape)
    # (a sum's zero sign is not pinned: the reduction contract's sum of -0.0s is +0.0)
    np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.parametrize("shape", [(0, 0), (0, 3)])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_empty_batch_of_indices_as_torch(shape, smoothing, reduction) -> None:
    want = torch.nn.functional.cross_entropy(torch.zeros(shape), torch.zeros(0, dtype=torch.long),
                                             reduction=reduction, label_smoothing=smoothing)
    got = Tensor(np.zeros(shape, np.float32)).cross_entropy(
        Tensor(np.zeros(0, np.int32)), reduction=reduction, label_smoothing=smoothing).numpy()
    assert got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got, want.numpy())


def test_cross_entropy_indices_over_zero_classes_refused() -> None:
    with pytest.raises(InvalidArgument, match="0 classes: every index is out of bounds"):
        Tensor(np.zeros((3, 0), np.float32)).cross_entropy(Tensor([0, 0, 0]))


def test_cross_entropy_empty_gradient_is_empty() -> None:
    x = Tensor(np.zeros((3, 0), np.float32), requires_grad=True)
    loss = x.cross_entropy(Tensor(np.zeros((3, 0), np.float32)))
    assert math.isnan(loss.item())
    loss.backward()
    assert x.grad.shape == (3, 0)
